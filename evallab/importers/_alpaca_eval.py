"""AlpacaEval ``annotations.json`` → tidy verdict table.

Source of the format: https://github.com/tatsu-lab/alpaca_eval — ``src/alpaca_eval/main.py`` (``evaluate`` writes
``annotations.json`` with ``DataFrame.to_json(orient="records", indent=2)``: a JSON array, one object per pair),
``src/alpaca_eval/annotators/pairwise_evaluator.py`` (``preference``: 1 = output_1 preferred, 2 = output_2, 1.5 =
identical outputs; the shown order is randomised per pair and switched back, not stored) and
``src/alpaca_eval/metrics/winrate.py`` ("0 or 1.5 for draw"). Field meanings: ``data/formats/alpaca_eval/SOURCE.md``.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pandas as pd

from evallab._fileio import quote
from evallab.importers._common import ImportDataError, finish, need, read_json, text_field

DATASET = "alpaca_eval"
FIELDS = "instruction, output_1, generator_1, output_2, generator_2, annotator, preference"
EXPECTED_PREF = "a number: 1 or 2 (preferred output), 0 or 1.5 (draw), in [1, 2] (weighted), or null (unparsed)"
NO_PREFERENCE = "no preference parsed: AlpacaEval stored null/NaN (the annotator's reply could not be parsed)"


def instruction_id(instruction: str) -> str:
    """The stable item id of an AlpacaEval instruction: the first 16 hex digits of SHA-256 of its UTF-8 text."""
    return hashlib.sha256(instruction.encode("utf-8")).hexdigest()[:16]


def preference_verdict(p) -> tuple[str | None, float | None]:
    """``(verdict, score)`` of one ``preference``; ``None`` verdict = unparsed. Raises
    :class:`~evallab.errors.ImportDataError` (field ``preference``) when invalid.

    v1 integers: 1 → ``1``, 2 → ``2``, 0 → ``tie`` (score 1.5, so every file shares one scale); v2 weighted floats
    in [1, 2]: < 1.5 → ``1``, > 1.5 → ``2``, = 1.5 → ``tie`` (score = the preference itself).
    """
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return None, None
    if p == 0 and not isinstance(p, bool):
        return "tie", 1.5
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 1 <= p <= 2:
        raise ImportDataError(f"unknown preference {quote(p)}; expected {EXPECTED_PREF}", field="preference")
    return ("1" if p < 1.5 else "2" if p > 1.5 else "tie"), float(p)


def import_alpaca_eval(path: str | Path, *, item_id: str = "instruction") -> pd.DataFrame:
    """An AlpacaEval ``annotations.json`` (v1 integer or v2 weighted preferences) → tidy table, one row per entry.

    Mapping: ``item_id`` = :func:`instruction_id` of ``instruction`` (``item_id="pair"``:
    ``<generator_2>#<instruction_id>``, for files mixing several evaluated models); ``dataset`` = ``alpaca_eval``;
    ``subset`` = ``dataset`` (helpful_base, koala, ...); ``judge`` = ``strategy`` = ``annotator``; ``verdict`` from
    ``preference`` (:func:`preference_verdict`; output_1 = the baseline ``generator_1``), NA with ``error`` when
    null/NaN; ``score`` = the preference (continuous for weighted annotators; v1's draw 0 written 1.5);
    ``order`` ``""`` (AlpacaEval randomises the shown order and does not store it); ``latency_s`` =
    ``time_per_example``, ``cost_usd`` = ``price_per_example``. Extra columns: ``generator_1``, ``generator_2``,
    ``instruction``, ``raw_verdict`` (the preference as written), ``source_ref`` (``entry N``, 1-based).

    Raises
    ------
    ImportDataError
        Not a JSON array of objects, a missing field, a preference outside the values above (naming the entry and
        value), two entries for the same item and annotator.
    """
    if item_id not in ("instruction", "pair"):
        raise ImportDataError(f"item_id={item_id!r}; expected 'instruction' or 'pair'", field="item_id")
    doc = read_json(path, f"AlpacaEval annotations.json: a JSON array of objects ({FIELDS})")
    if not isinstance(doc.value, list):
        raise ImportDataError("is not a JSON array; expected AlpacaEval annotations.json: a JSON array of "
                              f"objects ({FIELDS})", doc.path)
    rows = []
    for where, o in doc.objects(f"AlpacaEval annotations ({FIELDS})"):
        instr = text_field(o, "instruction", doc.path, where, "the instruction text")
        annot = text_field(o, "annotator", doc.path, where, "the annotator configuration name")
        g1 = text_field(o, "generator_1", doc.path, where, "the baseline model's name")
        g2 = text_field(o, "generator_2", doc.path, where, "the evaluated model's name")
        p = need(o, "preference", doc.path, where, EXPECTED_PREF)
        try:
            verdict, score = preference_verdict(p)
        except ImportDataError as exc:
            raise ImportDataError(exc.message, doc.path, where, exc.column) from None
        iid = instruction_id(instr)
        rows.append({"item_id": iid if item_id == "instruction" else f"{g2}#{iid}", "dataset": DATASET,
                     "subset": o.get("dataset") or "", "judge": annot, "strategy": annot, "order": "",
                     "verdict": verdict, "score": score, "error": NO_PREFERENCE if verdict is None else None,
                     "latency_s": _num(o.get("time_per_example")), "cost_usd": _num(o.get("price_per_example")),
                     "generator_1": g1, "generator_2": g2, "instruction": instr, "raw_verdict": p,
                     "source_ref": where})
    return finish(rows, doc.path)


def _num(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
