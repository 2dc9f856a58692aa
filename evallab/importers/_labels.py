"""The labels file written by ``evallab label`` (:mod:`evallab.judges._labelling`), and reading it as the tidy
verdict table with the annotator as the rater (the ``labels`` format of :func:`evallab.importers.import_file`).

The file is append-only CSV with the columns :data:`LABEL_COLUMNS`, one row per action: ``label`` (``label`` holds
``1``/``2``/``tie`` by ORIGINAL output for a pairwise item, ``pass``/``warn``/``fail`` for a pointwise one, ``1``..``k``
for a scale one, or ``not_sure``; ``order`` the pairwise order shown, ``ab`` = output 1 on the left), ``skip``, or
``undo`` (cancels the annotator's latest label or skip still standing). ``labelled_at`` (UTC, ISO 8601) is the last
column, so a row cut short by a kill has none and is dropped.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from evallab.errors import DataError

LABEL_COLUMNS = ("item_id", "annotator", "kind", "action", "label", "order", "note", "labelled_at")
#: the annotator's "I cannot tell" — its own value, never counted as a verdict
NOT_SURE = "not_sure"


#: the labels each kind of item takes (a scale item: its rating, 1..k with k at most 9)
KIND_LABELS = {"pointwise": "pass|warn|fail", "pairwise": "1|2|tie", "scale": "a rating 1..9"}


def _numbered_rows(path: Path) -> list[tuple[int, dict]]:
    """``(data row, row)`` of the complete rows of a labels file (1-based, the header not counted; a row cut short by
    a kill — no ``labelled_at`` — is dropped)."""
    if not path.exists() or path.stat().st_size == 0:
        return []
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != LABEL_COLUMNS:
            raise DataError(f"header {reader.fieldnames}; expected a labels file with {list(LABEL_COLUMNS)}", path=str(path))
        return [(i, r) for i, r in enumerate(reader, 1) if r.get("labelled_at")]


def _read_rows(path: Path) -> list[dict]:
    """Complete rows of a labels file (a row cut short by a kill — no ``labelled_at`` — is dropped)."""
    return [r for _, r in _numbered_rows(path)]


def _fits(label: str) -> list[str]:
    """The kinds whose labels include ``label``."""
    v = label.strip().lower()
    out = [k for k, vocab in (("pointwise", ("pass", "warn", "fail")), ("pairwise", ("1", "2", "tie"))) if v in vocab]
    try:
        if float(v) == float(v) and float(v) >= 1:
            out.append("scale")
    except ValueError:
        pass
    return out


def _check_label(r: dict, row: int, path: Path) -> None:
    """A label row's ``kind`` and ``label`` agree; else one line naming the file, the row, the column and the values
    the row's kind takes (an unknown kind: the kinds, and which of them the label fits)."""
    kind, label = r["kind"], r["label"]
    fits = _fits(label)
    hint = f" (label {label!r} fits kind {' or '.join(fits)})" if fits else ""
    if kind not in KIND_LABELS:
        raise DataError(f"unknown kind {kind!r} for label {label!r}; expected {'|'.join(KIND_LABELS)}{hint}",
                        path=str(path), row=row, column="kind")
    if label != NOT_SURE and kind not in fits:
        raise DataError(f"label {label!r} is not a {kind} label; expected {KIND_LABELS[kind]} (or {NOT_SURE}) for "
                        f"kind {kind}{hint}", path=str(path), row=row, column="label")


def standing(rows: list[dict], annotator: str) -> list[dict]:
    """The annotator's labels and skips still standing, in the order given (each ``undo`` cancels the latest)."""
    stack: list[dict] = []
    for r in rows:
        if r["annotator"] != annotator:
            continue
        if r["action"] == "undo":
            if stack:
                stack.pop()
        elif r["action"] in ("label", "skip"):
            stack.append(r)
    return stack


def read_labels(path: str | Path, *, dataset: str = "") -> pd.DataFrame:
    """The labels of a labels file as a tidy verdict table, the annotator as the rater.

    Returns
    -------
    DataFrame
        One row per (item, annotator) label standing (undone labels and skips dropped, ``not_sure`` kept as NA with
        ``error="not_sure"``), coerced by :func:`evallab.verdicts.coerce`: ``item_id``, ``dataset``, ``judge`` (the
        annotator), ``order`` ``""`` (one label per item and annotator,
        whatever the order shown, so that the annotators' labels of an item are one unit for kappa / alpha /
        :func:`~evallab.importers.gold_from_annotators`), ``shown_order`` (pairwise: the order shown, ``ab`` = output
        1 on the left; ``""`` otherwise), ``sample`` 0,
        ``verdict`` (pairwise ``1``/``2``/``tie`` by ORIGINAL output, pointwise ``pass``/``warn``/``fail``; NA for a
        scale item), ``score`` (a scale item's rating), ``note``, ``strategy`` ``"human"``.

    Raises
    ------
    DataError
        A file that is not a labels file; a label row whose ``kind`` is not one of :data:`KIND_LABELS`
        (``pointwise|pairwise|scale``) or whose ``label`` is not one of its kind's labels (one line naming the file,
        the data row, the column and the labels expected).
    """
    from evallab import verdicts as V

    path = Path(path)
    numbered = _numbered_rows(path)
    rows = [r for _, r in numbered]
    row_of = {id(r): i for i, r in numbered}
    out = []
    for a in dict.fromkeys(r["annotator"] for r in rows):
        for r in standing(rows, a):
            if r["action"] != "label":
                continue
            _check_label(r, row_of[id(r)], path)
            sure = r["label"] != NOT_SURE
            scale = r["kind"] == "scale"
            out.append({"item_id": r["item_id"], "dataset": dataset, "judge": a, "strategy": "human",
                        "order": "", "shown_order": r["order"], "sample": 0,
                        "verdict": r["label"] if sure and not scale else None,
                        "score": float(r["label"]) if sure and scale else None,
                        "error": None if sure else NOT_SURE, "note": r["note"]})
    cols = ["item_id", "dataset", "judge", "strategy", "order", "shown_order", "sample", "verdict", "score", "error",
            "note"]
    return V.coerce(pd.DataFrame(out, columns=cols), path=str(path))


__all__ = ["LABEL_COLUMNS", "NOT_SURE", "read_labels", "standing"]
