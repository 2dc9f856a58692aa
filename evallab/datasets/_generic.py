"""A user's own verdict table: CSV, JSONL or Parquet in the tidy schema (:mod:`evallab.verdicts`)."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from evallab import _fileio as F
from evallab import verdicts as V
from evallab._fileio import iter_jsonl
from evallab.errors import DataError, VerdictTableError

TABLE_EXPECTED = "a table (.csv, .tsv, .jsonl, .ndjson or .parquet)"
#: the file types :func:`write_table` writes
WRITE_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".parquet")


def _check_text(path: Path, expected: str = "a header line and at least one row") -> str:
    """The UTF-8 text of a regular file (byte-order mark removed); refuses a non-regular or empty file."""
    raw = F.read_bytes(path, expected)
    if not raw.strip() or raw.strip() == b"\xef\xbb\xbf":
        raise DataError(f"the file is empty; expected {expected}", path=str(path))
    for lineno, line in enumerate(raw.splitlines(), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(
                f"line {lineno} is not valid UTF-8 (byte {line[exc.start]:#04x} at column {exc.start + 1}); "
                "expected UTF-8 text",
                path=str(path), row=lineno) from None
    return raw.decode("utf-8").lstrip("\ufeff")


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV, JSONL/NDJSON or Parquet file into a DataFrame of strings/numbers, without validation.

    Text files (CSV, TSV, JSONL) may start with a UTF-8 byte-order mark.

    Raises
    ------
    DataError
        Missing file or a path that is not a regular file (directory, FIFO, device: refused before opening),
        empty file, a non-UTF-8 line (named), a JSONL line that is not a JSON object or repeats a key (named), a
        malformed CSV or Parquet file, or an unknown extension.
    """
    path = F.check_file(path, TABLE_EXPECTED, missing=f"no such file; expected {TABLE_EXPECTED}")
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
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise DataError(f"not a well-formed CSV table ({' '.join(str(exc).split())})", path=str(path)) from None
    if suffix in (".jsonl", ".ndjson", ".json"):
        _check_text(path, "one JSON object per line")
        return pd.DataFrame([obj for _, obj in iter_jsonl(path)])
    raise DataError(f"unknown file type {suffix!r}; expected .csv, .tsv, .jsonl, .ndjson or .parquet",
                    path=str(path))


def check_output_path(path: str | Path) -> Path:
    """``path`` as a :class:`Path` when :func:`write_table` can write it (by its extension), checked before any
    work whose result it will hold.

    Parameters
    ----------
    path : str or Path
        The table to write.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    DataError
        An extension other than ``.csv``, ``.jsonl``, ``.ndjson`` or ``.parquet`` (case-insensitive).
    """
    path = Path(path)
    if path.suffix.lower() not in WRITE_SUFFIXES:
        raise DataError(f"unknown output type {path.suffix.lower()!r}; expected .csv, .jsonl or .parquet",
                        path=str(path))
    return path


def write_table(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a table by its extension, creating the folder: CSV (header row, no index), JSON lines (one object
    per row, UTF-8 text as is) or Parquet. :func:`read_table` reads every one of them back.

    Parameters
    ----------
    df : DataFrame
        The table (e.g. a tidy verdict table, a drift report's groups).
    path : str or Path
        ``.csv``, ``.jsonl``/``.ndjson`` or ``.parquet``.

    Returns
    -------
    Path
        The path written.

    Raises
    ------
    DataError
        An unknown extension (:func:`check_output_path`), before anything is written.
    """
    path = check_output_path(path)
    suffix = path.suffix.lower()
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".parquet":
        df.to_parquet(path, index=False)
    elif suffix in (".jsonl", ".ndjson"):
        df.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        df.to_csv(path, index=False)
    return path


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
        out = V.coerce(df, path=str(path))
    except VerdictTableError as exc:
        if exc.row is not None and path.suffix.lower() in (".csv", ".tsv"):
            exc.message += f" (file line {exc.row + 1})"
        raise
    V.warn_snapshots(out, source=str(path))  # one judge label, several model snapshots: said, never pooled silently
    return out
