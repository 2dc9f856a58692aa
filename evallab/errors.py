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


class ScopedDataError(DataError):
    """Bad input inside a named unit of a file — a scenario of an ``evals.json``, a skill of a manifest.

    ``str()`` reads ``<file>, <unit> '<name>', field '<field>': <message>``; subclasses set :attr:`UNIT` (the unit's
    kind) and :attr:`NOWHERE` (what to print for an in-memory document).
    """

    UNIT = "unit"
    NOWHERE = "<in-memory document>"

    def __init__(self, message: str, path: str | None = None, scope: str | None = None,
                 field: str | None = None) -> None:
        self.scope = scope
        super().__init__(message, path=path, column=field)

    def __str__(self) -> str:
        where = [str(self.path) if self.path else self.NOWHERE]
        if self.scope is not None:
            where.append(f"{self.UNIT} '{self.scope}'")
        if self.column:
            where.append(f"field '{self.column}'")
        return f"{', '.join(where)}: {self.message}"
