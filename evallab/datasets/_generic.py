"""A user's own verdict table: CSV, JSONL or Parquet in the tidy schema (:mod:`evallab.verdicts`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evallab import _fileio as F
from evallab import verdicts as V
from evallab.errors import DataError, VerdictTableError

TABLE_EXPECTED = "a table (.csv, .tsv, .jsonl, .ndjson or .parquet)"
#: the file types :func:`write_table` writes
WRITE_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".parquet")


def _check_empty(path: Path, expected: str = "a header line and at least one row") -> None:
    """Refuse a file that holds nothing but white space (and a byte-order mark), reading at most its first 64 KiB."""
    with path.open("rb") as fh:
        head = fh.read(1 << 16)
        more = bool(fh.read(1))
    if not more and (not head.strip() or head.strip() in (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        raise DataError(f"the file is empty; expected {expected}", path=str(path))


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV, TSV, JSONL/NDJSON or Parquet file into a DataFrame of strings/numbers, without validation
    (:func:`evallab._fileio.read_table`, the reader the importers use too).

    Text files (CSV, TSV, JSONL) may start with a UTF-8 byte-order mark; a CSV/TSV with a UTF-16 byte-order mark
    is decoded.

    Raises
    ------
    DataError
        Missing file or a path that is not a regular file (directory, FIFO, device: refused before opening),
        empty file, a file that is not UTF-8 (the byte offset named: save it as UTF-8), a JSONL line that is not a
        JSON object or repeats a key (named), a malformed CSV (the line named) or Parquet file, a column name given
        twice, a nested Parquet column, a non-finite number, or an unknown extension.
    """
    path = F.check_file(path, TABLE_EXPECTED, missing=f"no such file; expected {TABLE_EXPECTED}")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet"):
        raise DataError(f"unknown file type {suffix!r}; expected .csv, .tsv, .jsonl, .ndjson or .parquet",
                        path=str(path))
    if suffix == ".parquet":
        if path.stat().st_size == 0:
            raise DataError("the file is empty; expected a Parquet table", path=str(path))
    elif suffix in (".csv", ".tsv"):
        _check_empty(path)
    else:
        _check_empty(path, "one JSON object per line")
    return F.read_table(path, TABLE_EXPECTED)[0]


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
