"""Errors raised by evallab.

Every error about bad input names *where* (file, row or line, column or field) and *what was expected*, so a
user can fix the input without reading a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


class EvallabError(Exception):
    """Base class of every error evallab raises on purpose."""


@dataclass
class DataError(EvallabError, ValueError):
    """Bad input data.

    Parameters
    ----------
    message : str
        What is wrong and what was expected.
    path : str or None
        The file the data came from (``None`` for an in-memory table).
    row : int or None
        1-based data row (CSV: the header is line 1, so data row *r* is line *r + 1*) or JSONL line.
    column : str or None
        The column or field at fault.
    """

    message: str
    path: str | None = None
    row: int | None = None
    column: str | None = None

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.path:
            where.append(str(self.path))
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column:
            where.append(f"column '{self.column}'")
        prefix = ", ".join(where) or "<in-memory table>"
        return f"{prefix}: {self.message}"


class VerdictTableError(DataError):
    """A verdict table that does not follow the tidy schema (see :mod:`evallab.verdicts`)."""
