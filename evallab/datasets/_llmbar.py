"""LLMBar (Zeng et al., "Evaluating Large Language Models at Evaluating Instruction Following", ICLR 2024).

Bundled in ``data/llmbar`` (see its SOURCE.md): 1,200 gold-labelled pairs and 40,413 verdicts of six judges ×
up to 15 strategies, each judged in both orders.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from evallab import _fileio as F
from evallab import verdicts as V
from evallab._fileio import iter_jsonl
from evallab.errors import DataError
from evallab.paths import data_dir

UNPARSED_ERROR = "unparsed reply: LLMBar's result.json has no winner for this order"
VERDICT_COLUMNS = ["subset", "idx", "judge", "strategy", "label", "winner_order_12", "winner_order_21",
                   "score_1", "score_2"]


class LLMBar(NamedTuple):
    """Items and verdicts of LLMBar.

    items : DataFrame, one row per pair: item_id, dataset, subset, idx, gold ('1' or '2') and, when loaded with
        ``with_text=True``, input, output_1, output_2.
    verdicts : DataFrame, the tidy verdict table: one row per judge reply, ``order`` 'ab' (output 1 shown first)
        and 'ba'; ``verdict`` is the ORIGINAL output index; NA with ``error`` set when the reply was unparsed.
    """

    items: pd.DataFrame
    verdicts: pd.DataFrame


def _match(values: pd.Series, wanted: Sequence[str] | None) -> pd.Series:
    """Exact match, or prefix match on a '/' boundary (``LLMBar/Adversarial`` selects its five parts)."""
    if not wanted:
        return pd.Series(True, index=values.index)
    m = pd.Series(False, index=values.index)
    for w in wanted:
        m |= (values == w) | values.str.startswith(w.rstrip("/") + "/")
    return m


def item_id(subset: pd.Series, idx: pd.Series) -> pd.Series:
    """LLMBar item ids: ``<subset>#<idx>``, e.g. ``LLMBar/Natural#0``."""
    return subset.astype("string") + "#" + idx.astype("string")


def load_llmbar(
    path: str | Path | None = None,
    *,
    subsets: Sequence[str] | None = None,
    judges: Sequence[str] | None = None,
    strategies: Sequence[str] | None = None,
    with_text: bool = False,
) -> LLMBar:
    """Load LLMBar as an items table and a tidy verdict table.

    Each row of ``verdicts.csv`` gives two replies: ``order='ab'`` from ``winner_order_12`` and ``order='ba'``
    from ``winner_order_21``. An empty winner (348 replies in all) becomes an NA verdict with ``error`` set — it
    is kept, never dropped.

    Parameters
    ----------
    path : folder holding ``verdicts.csv`` (and ``instances.jsonl``, ``judges.csv``); default the bundled copy.
    subsets : keep these subsets; a prefix such as ``LLMBar/Adversarial`` selects all its parts. None = all.
    judges, strategies : keep these judge labels / strategy ids (exact). None = all.
    with_text : also read ``instances.jsonl`` (input and outputs) into ``items``.

    Returns
    -------
    LLMBar
        ``(items, verdicts)``; ``verdicts`` has ``dataset='llmbar'``, ``model`` from ``judges.csv`` and, for
        Rating* strategies, ``score = score_1 - score_2`` (same in both orders).

    Raises
    ------
    DataError
        A missing folder or file, a path that is not a folder / regular file (refused before opening), a file
        that is not UTF-8 CSV (a byte-order mark is accepted), a missing column, or a filter that selects nothing
        (naming the values available).
    """
    folder = F.check_folder(Path(path) if path else data_dir("llmbar"),
                            "LLMBar's folder with verdicts.csv (see data/llmbar/SOURCE.md)")
    vpath = folder / "verdicts.csv"
    raw = F.read_csv(vpath, "LLMBar's verdicts.csv (see data/llmbar/SOURCE.md)", dtype={"label": "string", "winner_order_12": "string", "winner_order_21": "string",
                                    "subset": "string", "judge": "string", "strategy": "string"})
    missing = [c for c in VERDICT_COLUMNS if c not in raw.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}; expected {VERDICT_COLUMNS}", path=str(vpath),
                        column=missing[0])
    for col in ("label", "winner_order_12", "winner_order_21"):
        v = raw[col].str.strip()
        bad = v.notna() & ~v.isin(V.PAIRWISE_VERDICTS)
        if bad.any():
            r = int(np.flatnonzero(bad)[0]) + 1
            raise DataError(f"unknown {col} {raw[col][bad].iloc[0]!r}; expected one of {list(V.PAIRWISE_VERDICTS)}"
                            f"{'' if col == 'label' else ' or empty (unparsed)'} (file line {r + 1})",
                            path=str(vpath), row=r, column=col)
    for name, col, wanted in (("subsets", "subset", V.as_list(subsets)), ("judges", "judge", V.as_list(judges)),
                              ("strategies", "strategy", V.as_list(strategies))):
        m = _match(raw[col], wanted)
        if wanted and not m.any():
            raise DataError(f"{name}={list(wanted)} selects no rows; available: {sorted(raw[col].unique())}",
                            path=str(vpath), column=col)
        raw = raw[m]
    raw = raw.reset_index(drop=True)
    models = _models(folder / "judges.csv")
    ids = item_id(raw["subset"], raw["idx"])
    score = (raw["score_1"] - raw["score_2"]).astype("Float64")
    model = pd.Series(raw[["judge", "strategy"]].merge(models.rename("_model").reset_index(), how="left",
                                                       on=["judge", "strategy"])["_model"].to_numpy(), dtype="string")
    parts = []
    for order, col in (("ab", "winner_order_12"), ("ba", "winner_order_21")):
        verdict = raw[col]
        parts.append(pd.DataFrame({
            "item_id": ids,
            "dataset": "llmbar",
            "subset": raw["subset"],
            "judge": raw["judge"],
            "model": model,
            "strategy": raw["strategy"],
            "anchor_set": "none",
            "order": order,
            "sample": 0,
            "verdict": verdict,
            "gold": raw["label"],
            "score": score,
            "error": pd.Series(np.where(verdict.isna(), UNPARSED_ERROR, None), dtype="string"),
        }))
    tidy = pd.concat(parts, ignore_index=True)
    tidy = tidy.sort_values(["subset", "judge", "strategy", "item_id", "order"], kind="stable")
    verdicts = V.coerce(tidy.reset_index(drop=True), path=str(vpath))
    V.warn_snapshots(verdicts, source=str(vpath))
    items = (raw[["subset", "idx", "label"]].drop_duplicates(["subset", "idx"])
             .assign(item_id=lambda d: item_id(d["subset"], d["idx"]), dataset="llmbar")
             .rename(columns={"label": "gold"})[["item_id", "dataset", "subset", "idx", "gold"]]
             .sort_values(["subset", "idx"]).reset_index(drop=True))
    if with_text:
        text = _instances(folder / "instances.jsonl")
        items = items.merge(text, on=["subset", "idx"], how="left")
    return LLMBar(items, verdicts)


def _models(path: Path) -> pd.Series:
    """(judge, strategy) → engine/model of the strategy's last step, from judges.csv (empty when absent)."""
    if not os.path.lexists(path):
        return pd.Series(dtype="string", index=pd.MultiIndex.from_tuples([], names=["judge", "strategy"]))
    j = F.read_csv(path, "LLMBar's judges.csv (judge, strategy, step, engine_or_model)", dtype=str)
    missing = [c for c in ("judge", "strategy", "step", "engine_or_model") if c not in j.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}; expected judge, strategy, step, engine_or_model",
                        path=str(path), column=missing[0])
    j = j.sort_values("step").groupby(["judge", "strategy"]).tail(1)
    return j.set_index(["judge", "strategy"])["engine_or_model"]


def _instances(path: Path) -> pd.DataFrame:
    F.check_file(path, "LLMBar's instances.jsonl", missing="no such file; expected LLMBar's instances.jsonl")
    rows = [{k: o.get(k) for k in ("subset", "idx", "input", "output_1", "output_2")} for _, o in iter_jsonl(path)]
    df = pd.DataFrame(rows)
    df["subset"] = df["subset"].astype("string")
    return df


def load_llmbar_statistics(path: str | Path | None = None) -> pd.DataFrame:
    """The authors' published per-(subset, judge, strategy) statistics (``statistics.csv``, 499 rows).

    Columns: subset, judge, strategy, n, correct_order_12, correct_order_21, correct_average_pct (the paper's
    "Acc.", percent), correct_both, positional_agreement_equal (the paper's "Agr.", a count), kappa_*.
    """
    p = (Path(path) if path else data_dir("llmbar")) / "statistics.csv"
    return F.read_csv(p, "LLMBar's statistics.csv")
