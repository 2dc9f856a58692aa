"""Gold labels from several annotators, and attaching gold to a verdict table.

Only counting happens here (majority / unanimity and the share of unanimous items); chance-corrected agreement
(kappa, alpha) is left to the estimators.
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from evallab import verdicts as V
from evallab._fileio import quote
from evallab.importers._common import ImportDataError

RULES = ("majority", "unanimous")


class Gold(NamedTuple):
    """Result of :func:`gold_from_annotators`.

    table : DataFrame, one row per item: the ``by`` columns, ``gold`` (NA when the rule gives none),
        ``n_labels`` (non-NA labels), ``n_annotators`` (annotators seen, labelled or not), ``top_label``,
        ``top_count``, ``unanimous`` (bool; all ≥ 2 labels equal), ``no_gold_reason`` (why ``gold`` is NA).
    summary : dict with ``items``, ``with_gold``, ``no_majority`` (items whose labels have no majority / are not
        unanimous under the rule), ``unlabelled`` (items with no label at all), ``single_label`` (items with one
        label: they can carry gold but not agreement), ``multi_label`` (items with ≥ 2 labels), ``unanimous``
        and ``unanimous_pct`` (percent of multi-label items whose labels all agree; NaN when there are none),
        ``rule``.
    """

    table: pd.DataFrame
    summary: dict


def gold_from_annotators(labels: pd.DataFrame, *, rule: str = "majority", by: str | list[str] = "item_id",
                         annotator: str = "annotator", label: str = "label") -> Gold:
    """One gold label per item from several annotators' labels.

    Parameters
    ----------
    labels : DataFrame
        Long format: one row per (item, annotator) with columns ``by``, ``annotator`` and ``label`` (values in the
        verdict vocabulary ``1``/``2``/``tie`` or ``pass``/``warn``/``fail``; NA = the annotator gave none).
        Wide format is accepted too: pass ``annotator=None`` and ``label=[col, col, ...]`` (one column per
        annotator).
    rule : ``majority`` (a label given by strictly more than half of the item's non-NA labels) or ``unanimous``
        (every non-NA label equal, at least one).
    by : the item column(s).

    Returns
    -------
    Gold
        ``(table, summary)``; items without gold under the rule are kept with ``gold`` NA and counted.

    Raises
    ------
    ImportDataError
        Unknown rule, missing columns, or a label outside the verdict vocabulary (naming the row and value).
    """
    if rule not in RULES:
        raise ImportDataError(f"unknown rule {rule!r}; expected one of {list(RULES)}", field="rule")
    by = [by] if isinstance(by, str) else list(by)
    if annotator is None:
        cols = [label] if isinstance(label, str) else list(label)
        missing = [c for c in by + cols if c not in labels.columns]
        if missing:
            raise ImportDataError(f"missing column(s) {missing}; expected {by + cols}", field=missing[0])
        labels = labels.melt(id_vars=by, value_vars=cols, var_name="annotator", value_name="label")
        annotator, label = "annotator", "label"
    missing = [c for c in by + [annotator, label] if c not in labels.columns]
    if missing:
        raise ImportDataError(f"missing column(s) {missing}; expected {by + [annotator, label]}",
                              field=missing[0])
    lab = V._norm_verdict(labels[label].reset_index(drop=True))
    bad = lab.notna() & ~lab.isin(V.VERDICTS)
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise ImportDataError(f"unknown label {quote(labels[label].iloc[i])}; expected one of {list(V.VERDICTS)} or "
                              "empty", where=f"row {i + 1}", field=label)
    df = labels[by].reset_index(drop=True).assign(_label=lab)
    g = df.groupby(by, sort=True, dropna=False)
    n_ann = g.size().rename("n_annotators")
    n_lab = g["_label"].count().rename("n_labels")
    counts = df.dropna(subset=["_label"]).groupby(by + ["_label"], dropna=False).size().rename("n").reset_index()
    counts = counts.sort_values(by + ["n", "_label"], ascending=[True] * len(by) + [False, True])
    top = counts.drop_duplicates(by).set_index(by)
    distinct = counts.groupby(by, dropna=False).size().rename("n_distinct")
    t = pd.concat([n_ann, n_lab], axis=1)
    t = t.join(top[["_label", "n"]].rename(columns={"_label": "top_label", "n": "top_count"}))
    t = t.join(distinct)
    t["top_count"] = t["top_count"].fillna(0).astype(int)
    t["n_distinct"] = t["n_distinct"].fillna(0).astype(int)
    t["unanimous"] = (t["n_labels"] >= 2) & (t["n_distinct"] == 1)
    if rule == "majority":
        has = t["top_count"] * 2 > t["n_labels"]
        why = "no label given by more than half of the annotators"
    else:
        has = (t["n_labels"] >= 1) & (t["n_distinct"] == 1)
        why = "the annotators disagree"
    t["gold"] = t["top_label"].where(has).astype("string")
    t["no_gold_reason"] = pd.Series(pd.NA, index=t.index, dtype="string")
    t.loc[~has & (t["n_labels"] > 0), "no_gold_reason"] = why
    t.loc[t["n_labels"] == 0, "no_gold_reason"] = "no annotator gave a label"
    t = t.drop(columns=["n_distinct"]).reset_index()
    t["top_label"] = t["top_label"].astype("string")
    multi = int((t["n_labels"] >= 2).sum())
    unan = int(t["unanimous"].sum())
    summary = {"rule": rule, "items": len(t), "with_gold": int(t["gold"].notna().sum()),
               "no_majority": int((t["gold"].isna() & (t["n_labels"] > 0)).sum()),
               "unlabelled": int((t["n_labels"] == 0).sum()), "single_label": int((t["n_labels"] == 1).sum()),
               "multi_label": multi, "unanimous": unan,
               "unanimous_pct": 100.0 * unan / multi if multi else float("nan")}
    return Gold(t[by + ["gold", "n_labels", "n_annotators", "top_label", "top_count", "unanimous",
                        "no_gold_reason"]], summary)


def attach_gold(verdicts: pd.DataFrame, gold: pd.DataFrame, *, on: str | list[str] = "item_id",
                overwrite: bool = False) -> pd.DataFrame:
    """Return ``verdicts`` with ``gold`` filled from a gold table (columns ``on`` + ``gold``), re-validated.

    Existing non-NA gold is kept unless ``overwrite``. Items of the gold table absent from ``verdicts`` are ignored;
    a gold table with one item twice is refused.
    """
    on = [on] if isinstance(on, str) else list(on)
    missing = [c for c in on + ["gold"] if c not in gold.columns]
    if missing:
        raise ImportDataError(f"gold table lacks column(s) {missing}; expected {on + ['gold']}", field=missing[0])
    dup = gold.duplicated(on)
    if dup.any():
        i = int(dup.to_numpy().nonzero()[0][0])
        raise ImportDataError(f"item {gold.iloc[i][on].tolist()} appears twice in the gold table; expected one "
                              "gold label per item", where=f"row {i + 1}", field=on[0])
    g = gold[on + ["gold"]].rename(columns={"gold": "_gold"})
    g = g.astype({c: "string" for c in on})
    out = V.coerce(verdicts).astype({c: "string" for c in on}).merge(g, on=on, how="left")
    new = V._norm_verdict(out["_gold"])
    out["gold"] = new if overwrite else out["gold"].fillna(new)
    return V.coerce(out.drop(columns="_gold"))
