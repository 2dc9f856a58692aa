"""A user's own verdict table: CSV, JSONL or Parquet in the tidy schema (:mod:`evallab.verdicts`)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd

from evallab import verdicts as V
from evallab.errors import DataError, VerdictTableError


def _check_text(path: Path) -> str:
    raw = path.read_bytes()
    if not raw.strip():
        raise DataError("the file is empty; expected a header line and at least one row", path=str(path))
    for lineno, line in enumerate(raw.splitlines(), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(
                f"line {lineno} is not valid UTF-8 (byte {line[exc.start]:#04x} at column {exc.start + 1}); "
                "expected UTF-8 text",
                path=str(path), row=lineno) from None
    return raw.decode("utf-8").lstrip("\ufeff")


def iter_jsonl(path: str | Path, *, expected: str = "one JSON object per line"):
    """Yield ``(line_number, object)`` for each non-blank line of a JSON-lines file (1-based line numbers).

    Raises
    ------
    DataError
        Missing file; a line that is not UTF-8, not valid JSON, or not a JSON object — naming the file and line and
        saying what was ``expected``.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"no such file; expected JSON lines ({expected})", path=str(path))
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(f"line {lineno} is not valid UTF-8 (byte {raw[exc.start]:#04x}); expected UTF-8 text",
                                path=str(path), row=lineno) from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"line {lineno} is not valid JSON ({exc.msg} at column {exc.colno}); expected "
                                f"{expected}", path=str(path), row=lineno) from None
            if not isinstance(obj, dict):
                raise DataError(f"line {lineno} is a JSON {type(obj).__name__}; expected {expected}",
                                path=str(path), row=lineno)
            yield lineno, obj


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV, JSONL/NDJSON or Parquet file into a DataFrame of strings/numbers, without validation.

    Raises
    ------
    DataError
        Missing file, empty file, a non-UTF-8 line (named), a JSONL line that is not a JSON object (named),
        or an unknown extension.
    """
    path = Path(path)
    if not path.exists():
        raise DataError("no such file", path=str(path))
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        if path.stat().st_size == 0:
            raise DataError("the file is empty; expected a Parquet table", path=str(path))
        try:
            return pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises several types
            raise DataError(f"not a readable Parquet file ({exc})", path=str(path)) from None
    if suffix in (".csv", ".tsv"):
        text = _check_text(path)
        try:
            return pd.read_csv(io.StringIO(text), sep="\t" if suffix == ".tsv" else ",", dtype=str,
                               keep_default_na=False, na_values=[""])
        except pd.errors.ParserError as exc:
            raise DataError(f"not a well-formed CSV table ({exc})", path=str(path)) from None
    if suffix in (".jsonl", ".ndjson", ".json"):
        _check_text(path)
        return pd.DataFrame([obj for _, obj in iter_jsonl(path)])
    raise DataError(f"unknown file type {suffix!r}; expected .csv, .tsv, .jsonl, .ndjson or .parquet",
                    path=str(path))


def load_verdicts(path: str | Path) -> pd.DataFrame:
    """Load a verdict table in the tidy schema and validate it.

    Parameters
    ----------
    path : str or Path
        ``.csv``/``.tsv`` (header row), ``.jsonl`` (one object per line) or ``.parquet``. Required columns:
        ``item_id``, ``judge``, ``verdict``; the other tidy columns are optional (see :mod:`evallab.verdicts`).

    Returns
    -------
    DataFrame
        The tidy verdict table.

    Raises
    ------
    DataError, VerdictTableError
        Naming the file, the row (for CSV: data row *r* is file line *r + 1*; for JSONL the row is the line)
        or column, and what was expected.
    """
    path = Path(path)
    df = read_table(path)
    try:
        return V.coerce(df, path=str(path))
    except VerdictTableError as exc:
        if exc.row is not None and path.suffix.lower() in (".csv", ".tsv"):
            exc.message += f" (file line {exc.row + 1})"
        raise
