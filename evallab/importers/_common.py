"""Shared plumbing of the importers: safe file opening, JSON / JSON-lines reading, errors, the final tidy table.

Nothing here imports an estimator: importers only produce tidy verdict tables (:mod:`evallab.verdicts`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from evallab import _fileio as fileio
from evallab import verdicts as V
from evallab.errors import ImportDataError

BOM = b"\xef\xbb\xbf"
ZIP_MAGIC = b"PK\x03\x04"


def check_file(path: str | Path, expected: str) -> Path:
    """Refuse at once anything that is not an existing, non-empty regular file (a directory, a FIFO, a socket
    or a device is never opened, so nothing can block; :func:`evallab._fileio.check_file`). Returns ``Path(path)``."""
    p = fileio.check_file(path, expected, ImportDataError)
    if p.stat().st_size == 0:
        raise ImportDataError(f"the file is empty; expected {expected}", p)
    return p


def read_text(path: Path, expected: str) -> str:
    """The file as UTF-8 text without a leading byte-order mark (:func:`evallab._fileio.decode`: a non-UTF-8 byte is
    named by line)."""
    text = fileio.decode(path.read_bytes(), path, ImportDataError)
    if not text.strip():
        raise ImportDataError(f"the file holds only whitespace; expected {expected}", path)
    return text


class Document:
    """A parsed JSON or JSON-lines file.

    ``kind`` is ``"json"`` (``value`` is the top-level value) or ``"jsonl"`` (``records`` is a list of
    ``(line_number, object)``).
    """

    def __init__(self, path: Path, kind: str, value: Any = None, records: list | None = None) -> None:
        self.path, self.kind, self.value, self.records = path, kind, value, records

    def first_object(self) -> dict | None:
        """The first record (JSON lines), first array element, or the top-level object — for format detection."""
        if self.kind == "jsonl":
            return self.records[0][1] if self.records else None
        if isinstance(self.value, list):
            return self.value[0] if self.value and isinstance(self.value[0], dict) else None
        return self.value if isinstance(self.value, dict) else None

    def objects(self, expected: str) -> Iterator[tuple[str, dict]]:
        """``(where, object)`` for each JSON-lines record or JSON-array element (``line N`` / ``entry N``)."""
        if self.kind == "jsonl":
            for lineno, obj in self.records:
                yield f"line {lineno}", obj
            return
        if isinstance(self.value, dict):
            yield "entry 1", self.value
            return
        if not isinstance(self.value, list):
            raise ImportDataError(f"the top-level JSON value is a {_jtype(self.value)}; expected {expected}",
                                  self.path)
        for i, obj in enumerate(self.value, start=1):
            if not isinstance(obj, dict):
                raise ImportDataError(f"is a JSON {_jtype(obj)}; expected an object ({expected})", self.path,
                                      f"entry {i}")
            yield f"entry {i}", obj


def _jtype(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), "number")


def read_json(path: str | Path, expected: str) -> Document:
    """Parse a JSON document or a JSON-lines file (told apart by content, whatever the extension).

    A UTF-8 byte-order mark is skipped. A JSON-lines line that is not valid JSON or not an object is named.
    """
    p = check_file(path, expected)
    text = read_text(p, expected)
    if p.suffix.lower() not in (".jsonl", ".ndjson"):
        try:
            return Document(p, "json", value=json.loads(text))
        except json.JSONDecodeError as exc:
            if not (exc.msg == "Extra data" and text.lstrip().startswith("{")):
                raise ImportDataError(f"not valid JSON ({exc.msg}: column {exc.colno}); expected {expected}", p,
                                      f"line {exc.lineno}") from None
    records = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportDataError(f"not valid JSON ({exc.msg}: column {exc.colno}); expected one JSON object "
                                  f"per line ({expected})", p, f"line {lineno}") from None
        if not isinstance(obj, dict):
            raise ImportDataError(f"is a JSON {_jtype(obj)}; expected one JSON object per line ({expected})", p,
                                  f"line {lineno}")
        records.append((lineno, obj))
    return Document(p, "jsonl", records=records)


def need(obj: dict, field: str, path: Path, where: str, expected: str) -> Any:
    """``obj[field]``, or an :class:`ImportDataError` naming the missing field."""
    if field not in obj:
        raise ImportDataError(f"missing; expected {expected}", path, where, field)
    return obj[field]


def text_field(obj: dict, field: str, path: Path, where: str, expected: str = "a non-empty string") -> str:
    """A required string (numbers are accepted and turned into strings, e.g. ids)."""
    v = need(obj, field, path, where, expected)
    if isinstance(v, bool) or not isinstance(v, (str, int, float)) or (isinstance(v, str) and not v.strip()):
        raise ImportDataError(f"{fileio.quote(v)} is not usable; expected {expected}", path, where, field)
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v)


def finish(rows: Iterable[dict] | pd.DataFrame, path: Path | str | None) -> pd.DataFrame:
    """Build the tidy table from row dicts; a repeated key is refused naming both places in the file.

    Every row dict carries ``source_ref`` (where in the file it came from), kept as an extra column.
    """
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    if len(df) == 0:
        raise ImportDataError("no judge replies found; expected at least one", path)
    if "raw_verdict" in df:  # as written in the file (numbers, strings, booleans) -> one string column
        df["raw_verdict"] = pd.Series([None if v is None else v if isinstance(v, str) else json.dumps(v)
                                       for v in df["raw_verdict"]], index=df.index, dtype="string")
    key = df.reindex(columns=list(V.KEY)).astype(object)
    for c, d in V.DEFAULTS.items():
        if c in key:
            key[c] = key[c].where(key[c].notna(), d)
    skey = key.astype("string").fillna("<NA>")
    dup = skey.duplicated(keep="first")
    if dup.any():
        second = int(dup.to_numpy().nonzero()[0][0])
        same = skey.iloc[second]
        first = int((skey == same).all(axis=1).to_numpy().nonzero()[0][0])
        refs = df["source_ref"].astype(str).tolist() if "source_ref" in df else [f"row {i + 1}" for i in
                                                                              range(len(df))]
        k = {c: (v.item() if hasattr(v, "item") else v) for c, v in key.iloc[second].items()}
        raise ImportDataError(
            f"repeats the judge reply of {refs[first]} (same key {k}); expected one reply per (dataset, item_id, "
            "judge, strategy, anchor_set, order, sample)", path, refs[second])
    return V.coerce(df, path=None if path is None else str(path))
