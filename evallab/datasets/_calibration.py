"""Calibration (gold) sets: the items a judge is replayed on to check drift (MeowKit rule 6, spec 001 "Calibration
Set and Drift Check").

The format is :func:`load_gold_set`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from evallab import verdicts as V
from evallab._fileio import iter_jsonl
from evallab.errors import DataError

GOLD_REQUIRED = ("item_id", "gold")


def load_gold_set(path: str | Path) -> pd.DataFrame:
    """Read a calibration (gold) set: a JSONL file, one JSON object per line.

    =============== ========== ==========================================================================
    field           required   meaning
    =============== ========== ==========================================================================
    item_id         yes        unique id of the calibration item
    gold            yes        gold verdict: pairwise ``1``/``2``/``tie``; pointwise ``pass``/``warn``/``fail``
    kind            no         ``pairwise`` or ``pointwise``; default from the gold vocabulary
    subset, rubric  no         grouping labels (e.g. ``LLMBar/Natural``; a MeowKit rubric name)
    dataset         no         default ``calibration``
    instruction     pairwise   the instruction; with ``output_1`` and ``output_2`` (ORIGINAL numbering)
    answer          pointwise  the text graded; with ``rubric_text`` (1–4 sentences), ``pass_criteria``
                               (list of str) and optional ``fail_criteria`` (list of str)
    messages        no         the exact chat messages (list of ``{"role", "content"}``) to replay instead of a
                               built prompt; pairwise then needs ``order`` (``ab``/``ba``) saying what they show
    =============== ========== ==========================================================================

    Other fields are kept as extra columns of the items table.

    Returns
    -------
    DataFrame, one row per item: ``item_id``, ``gold``, ``kind``, ``dataset``, ``subset``, ``rubric`` and the text
    fields present (``instruction``, ``output_1``, ``output_2``, ``answer``, ``rubric_text``, ``pass_criteria``,
    ``fail_criteria``, ``messages``, ``order``), plus any other field.

    Raises
    ------
    DataError
        Naming the file, the line and the field: a missing path or one that is not a regular file (directory,
        FIFO, device — refused before opening), invalid JSON or UTF-8, a missing required field, an unknown gold
        or kind, a duplicated item_id (naming both lines), missing text fields for the kind, or malformed
        messages. A UTF-8 byte-order mark is accepted.
    """
    path = Path(path)
    rows, first = [], {}
    for lineno, o in iter_jsonl(path, expected="one calibration item per line, a JSON object"):
        item = _check_gold_item(o, str(path), lineno)
        if item["item_id"] in first:
            raise DataError(f"duplicated item_id {item['item_id']!r} (first on line {first[item['item_id']]}); "
                            "expected unique ids", path=str(path), row=lineno, column="item_id")
        first[item["item_id"]] = lineno
        rows.append(item)
    if not rows:
        raise DataError("the file holds no item; expected one JSON object per line", path=str(path))
    return gold_set_frame(rows, path=str(path))


def _check_gold_item(o: dict, path: str | None, lineno: int | None) -> dict:
    for f in GOLD_REQUIRED:
        if o.get(f) in (None, ""):
            raise DataError(f"missing '{f}'; every calibration item needs {list(GOLD_REQUIRED)}", path=path,
                            row=lineno, column=f)
    o = dict(o)
    o["item_id"] = str(o["item_id"])
    gold = str(o["gold"]).strip().lower()
    if gold not in V.VERDICTS:
        raise DataError(f"unknown gold {o['gold']!r}; expected one of {list(V.VERDICTS)}", path=path, row=lineno,
                        column="gold")
    o["gold"] = gold
    kind = o.get("kind") or ("pairwise" if gold in V.PAIRWISE_VERDICTS else "pointwise")
    if kind not in ("pairwise", "pointwise"):
        raise DataError(f"unknown kind {kind!r}; expected 'pairwise' or 'pointwise'", path=path, row=lineno,
                        column="kind")
    vocab = V.PAIRWISE_VERDICTS if kind == "pairwise" else V.POINTWISE_VERDICTS
    if gold not in vocab:
        raise DataError(f"gold {gold!r} is not a {kind} verdict; expected one of {list(vocab)}", path=path,
                        row=lineno, column="gold")
    o["kind"] = kind
    if o.get("messages") is not None:
        msgs = o["messages"]
        if not isinstance(msgs, list) or not msgs or not all(
                isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                for m in msgs):
            raise DataError("messages must be a non-empty list of {\"role\": str, \"content\": str}", path=path,
                            row=lineno, column="messages")
        if kind == "pairwise" and o.get("order") not in ("ab", "ba"):
            raise DataError("pairwise messages need 'order' ('ab' = output 1 shown first, or 'ba')", path=path,
                            row=lineno, column="order")
    else:
        need = ("instruction", "output_1", "output_2") if kind == "pairwise" else ("answer", "rubric_text",
                                                                                   "pass_criteria")
        missing = [f for f in need if o.get(f) in (None, "", [])]
        if missing:
            raise DataError(f"missing '{missing[0]}'; a {kind} item needs {list(need)} (or 'messages')",
                            path=path, row=lineno, column=missing[0])
    return o


def gold_set_frame(items: Sequence[dict] | pd.DataFrame, *, path: str | None = None) -> pd.DataFrame:
    """Validate calibration items (dicts or a DataFrame, fields as in the JSONL format) into the items table.

    Raises
    ------
    DataError
        As :func:`load_gold_set` (rows counted from 1).
    """
    if isinstance(items, pd.DataFrame):
        items = [{k: v for k, v in r.items() if not (np.isscalar(v) and pd.isna(v))}
                 for r in items.to_dict("records")]
    items = [_check_gold_item(o, path, i) for i, o in enumerate(items, start=1)]
    df = pd.DataFrame(list(items))
    for c, default in (("dataset", "calibration"), ("subset", ""), ("rubric", "")):
        df[c] = df[c].fillna(default).astype("string") if c in df.columns else default
    dup = df["item_id"].duplicated()
    if dup.any():
        at = int(np.flatnonzero(dup)[0])
        key = df["item_id"].iloc[at]
        first = int(np.flatnonzero(df["item_id"] == key)[0]) + 1
        raise DataError(f"duplicated item_id {key!r} (first at row {first}); expected unique ids", path=path,
                        row=at + 1, column="item_id")
    return df.reset_index(drop=True)


