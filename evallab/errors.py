"""Errors raised by evallab.

Every error about bad input names *where* (file, row or line, column or field) and *what was expected*, so a
user can fix the input without reading a traceback.

``__all__`` lists the classes a caller catches. Three more live here because every exception class does, but are
internal signals that never reach a caller: ``DuplicateKey`` (a JSON key given twice, turned into a
:class:`DataError` naming the file), ``ScopedDataError`` (the base that adds a file and line to its subclasses'
messages) and ``TransientError`` (a failed judge attempt that is retried, or becomes a counted failure).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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


class SnapshotWarning(UserWarning):
    """One judge label whose replies carry several model snapshots (e.g. a server that reported two versions
    under one alias): its figures pool the snapshots unless ``model`` is in the grouping (a warning, not an error:
    issued by :func:`evallab.verdicts.warn_snapshots`)."""


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


class ArgumentError(EvallabError, ValueError):
    """An argument outside the values a function accepts (the message names the argument and what it accepts)."""


class StateError(EvallabError, RuntimeError):
    """An object asked for what its state cannot give yet (a server used before it started, or that did not start)."""


# ----------------------------------------------------------------------------------------- input files and tables
class DuplicateKey(ValueError):
    """A JSON object that gives one key twice (raised by :func:`evallab._fileio.unique_pairs`; ``key`` names it)."""

    def __init__(self, key: object) -> None:
        super().__init__(key)
        self.key = key


class ImportDataError(DataError):
    """Bad input in a judge-verdict file: ``<file>, <where>, field '<field>': <what was expected>``.

    ``where`` is the place in the file's own terms: ``line 7`` (JSON lines), ``entry 12`` (a JSON array, 1-based),
    ``row 3`` (a table's data row, 1-based), ``sample 5 epoch 1`` (inspect), ``result 2 component 4`` (promptfoo).
    """

    def __init__(self, message: str, path: str | Path | None = None, where: str | None = None,
                 field: str | None = None) -> None:
        self.where = where
        super().__init__(message, path=None if path is None else str(path), column=field)

    def __str__(self) -> str:
        parts = [str(self.path) if self.path else "<in-memory data>"]
        if self.where:
            parts.append(self.where)
        if self.column:
            parts.append(f"field '{self.column}'")
        return f"{', '.join(parts)}: {self.message}"


class RecordingError(DataError):
    """A recording file that cannot be read or does not follow the format."""


class DesignError(DataError):
    """A grouping that leaves several replies per (item, order, sample): pooling them would mix design cells."""


# ----------------------------------------------------------------------------------------------- skill packs
class RubricError(DataError):
    """A rubric or preset file that cannot be used (see its findings)."""


class EvalReportError(DataError):
    """A malformed eval report (``governance/eval.json``)."""


class ManifestError(ScopedDataError):
    """A malformed manifest or state file: names the file, the skill (``row``-less) and the field."""

    UNIT = "skill"
    NOWHERE = "<in-memory manifest>"

    def __init__(self, message: str, path: str | None = None, skill: str | None = None,
                 field: str | None = None) -> None:
        super().__init__(message, path=path, scope=skill, field=field)

    @property
    def skill(self) -> str | None:
        return self.scope


class EvalSpecError(ScopedDataError):
    """A malformed ``evals.json``: names the file (``path``), the scenario id and the field (``column``)."""

    UNIT = "scenario"
    NOWHERE = "<in-memory evals>"

    def __init__(self, message: str, path: str | None = None, scenario: str | None = None,
                 field: str | None = None) -> None:
        super().__init__(message, path=path, scope=scenario, field=field)

    @property
    def scenario(self) -> str | None:
        return self.scope


# ------------------------------------------------------------------------------------------------------ judges
class JudgeFatalError(EvallabError):
    """A reply that retrying cannot fix (400/401/403/404 ...): the run stops at once.

    Attributes: ``status`` (HTTP status or ``None``), ``url``.
    """

    def __init__(self, message: str, *, status: int | None = None, url: str = "") -> None:
        super().__init__(message)
        self.status, self.url = status, url


class UnsupportedParameterError(JudgeFatalError):
    """An HTTP 400 by which the model refuses one request parameter (OpenAI's ``unsupported_parameter`` /
    ``unsupported_value`` codes, "Unsupported parameter: 'max_tokens' ..."). The judge adapts the body and asks
    again (:class:`evallab.judges.OpenAICompatibleJudge`, ``param_adapt``); it stops the run only when the
    parameter cannot be adapted.

    Attributes: ``param`` (the parameter named), ``use`` (the name to send it under instead, e.g.
    ``max_completion_tokens``; ``None`` = leave it out and take the model's default)."""

    def __init__(self, message: str, *, param: str, use: str | None = None, status: int | None = 400,
                 url: str = "") -> None:
        super().__init__(message, status=status, url=url)
        self.param, self.use = param, use


class QuotaError(JudgeFatalError):
    """The account is out of credit or over its billing limit (``insufficient_quota``,
    ``billing_hard_limit_reached`` ... in the error body's ``code`` or ``type``, often under HTTP 429): the run
    stops at once, as on 401 — waiting does not bring credit back."""


class TransientError(Exception):
    """A failed attempt that is retried (429/5xx/timeout/connection/malformed or empty body).

    ``immediate``: retried without backoff (the server answered normally; nothing to wait for). ``final``: not
    retried at all (asking again would get the same reply)."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None,
                 value: dict | None = None, immediate: bool = False, final: bool = False,
                 unreachable: bool = False) -> None:
        super().__init__(message)
        self.status, self.retry_after, self.value = status, retry_after, value
        self.immediate, self.final, self.unreachable = immediate, final, unreachable


class ReplayMissError(EvallabError):
    """A request that the recordings do not answer (stale or missing recording)."""


class OutputBusyError(EvallabError):
    """Another run holds the output's lock (see :func:`evallab.judges.run_jobs`)."""


class LockTimeout(EvallabError):
    """An output's lock was not acquired within its timeout (internal: the runner raises :class:`OutputBusyError`
    naming the output)."""


class LocalServerError(EvallabError):
    """The local llama.cpp server could not be started (missing package, bad model path, bad option, no answer)."""


# --------------------------------------------------------------------------------------------------- reporting
class ParameterError(EvallabError, ValueError):
    """A report run's parameters or report name do not fit the notebook (raised before execution)."""


#: the bases of the errors that mean bad user input — a file, table, row or field (:class:`DataError` and its
#: subclasses: a malformed table, a design the table cannot support), a report's parameter (:class:`ParameterError`):
#: a report run failing with one exits 2 with the error's one line, as a command refusing its input does
#: (:func:`evallab.reporting._batch_run.run_one`, ``evallab run`` / ``evallab report``)
INPUT_ERRORS = (DataError, ParameterError)


class ClusterError(EvallabError):
    """The Dask cluster cannot be reached or started, or Dask distributed is not installed."""


__all__ = ["ArgumentError", "ClusterError", "DataError", "DesignError", "EvalReportError", "EvalSpecError", "EvallabError", "ImportDataError", "JudgeFatalError", "LocalServerError", "ManifestError", "OutputBusyError", "ParameterError", "RecordingError", "ReplayMissError", "RubricError", "SnapshotWarning", "StateError", "VerdictTableError"]
