"""The design of a verdict table: which columns define a cell, what shape the table has, and replies paired across
presentation orders. Every estimator of :mod:`evallab.metrics` goes through here, so none pools or drops replies
silently and row order never changes a figure.

- :func:`check_design` — after grouping by ``by``, one reply per (dataset, item, order, sample) or a
  :class:`DesignError` naming the design columns that vary inside a group (e.g. ``strategy``).
- :func:`describe` — the table's shape in words: orders present, gold coverage, samples, design columns.
- :func:`order_pairs` — one row per (group, item, sample) with the verdicts of both presentation orders.
- :func:`not_computable` — the reason a figure cannot be computed on this table (a ``note`` cell), never 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab import verdicts as V
from evallab.errors import DataError

#: columns that define a design cell (a judge configuration and a slice of the data)
DESIGN_COLUMNS = ("dataset", "subset", "judge", "model", "strategy", "anchor_set")
#: one reply per unit within a design cell
UNIT = ("dataset", "item_id", "order", "sample")
#: the presentation orders of a pairwise reply
ORDERS = ("ab", "ba")


class DesignError(DataError):
    """A grouping that leaves several replies per (item, order, sample): pooling them would mix design cells."""


def check_design(df: pd.DataFrame, by: Sequence[str], *, unit: Sequence[str] = UNIT) -> None:
    """Raise unless grouping ``df`` by ``by`` leaves at most one reply per ``unit``.

    Parameters
    ----------
    df : tidy verdict table (:mod:`evallab.verdicts`).
    by : the grouping columns of the estimator (the design cell).
    unit : what identifies one reply inside a cell (default dataset, item_id, order, sample).

    Raises
    ------
    DesignError
        Naming the columns that vary inside a group (e.g. ``['strategy']``) and the first offending unit, with the
        fix: add them to ``by`` or select one value. A missing ``by`` column is named too.
    """
    missing = [c for c in [*by, *unit] if c not in df.columns]
    if missing:
        raise DesignError(f"missing column(s) {missing} needed to group replies", column=missing[0])
    key = list(dict.fromkeys([*by, *unit]))
    dup = df.duplicated(key, keep=False)
    if not dup.any():
        return
    d = df.loc[dup]
    vary = [c for c in DESIGN_COLUMNS
            if c in d.columns and c not in key
            and (d.groupby(key, dropna=False, observed=True)[c].nunique(dropna=False) > 1).any()]
    first = d.iloc[0]
    where = ", ".join(f"{c}={first[c]!r}" for c in key)
    if vary:
        raise DesignError(f"grouping by {list(by)} leaves several replies per (item, order, sample), e.g. {where}: "
                          f"{vary} vary inside a group; add {vary} to by= or select one value of each",
                          column=vary[0])
    raise DesignError(f"grouping by {list(by)} leaves several replies per (item, order, sample), e.g. {where}, and "
                      "no design column tells them apart; expected one reply per key (add a sample index)",
                      column="sample")


def pairwise(df: pd.DataFrame) -> pd.Series:
    """Boolean mask of pairwise replies: an order ``ab``/``ba``, or a pairwise verdict or gold (``1``/``2``/``tie``)."""
    pw = df["order"].isin(ORDERS)
    for c in ("verdict", "gold"):
        pw |= df[c].isin(["1", "2", "tie"]).fillna(False)
    return pw.astype(bool)


def describe(df: pd.DataFrame) -> dict:
    """The shape of a verdict table, for the line a report prints before its figures.

    Returns
    -------
    dict with ``replies``, ``items``, ``kind`` ("pairwise", "pointwise" or "mixed"), ``orders`` (the presentation
    orders present among pairwise replies: a subset of ab/ba, "" for unknown), ``both_orders`` (items judged in
    both), ``gold`` (replies with gold), ``gold_items``, ``samples`` (max replies per item and order),
    ``unparsed``, ``design`` (design columns with more than one value, → their values), ``snapshots``
    (:func:`evallab.verdicts.snapshots`: judge labels whose replies carry several model snapshots, which every
    estimator pools unless ``model`` — a design column — is in its ``by``) and ``text`` (one sentence saying all of
    it, including what is missing, and a warning naming each judge label with several snapshots).
    """
    pw = pairwise(df)
    # a reply with no verdict, no gold and no order says nothing about its kind: it does not make a table "mixed"
    silent = df["verdict"].isna() & df["gold"].isna() & ~df["order"].isin(ORDERS)
    kind = "pairwise" if pw[~silent].all() else ("pointwise" if not pw.any() else "mixed")
    orders = sorted(set(df.loc[pw, "order"].astype(str)))
    both = 0
    if pw.any():
        o = df.loc[pw & df["order"].isin(ORDERS)].groupby(["dataset", "item_id"], observed=True)["order"].nunique()
        both = int((o == 2).sum())
    samples = int(df.groupby(["dataset", "item_id", "order", *[c for c in DESIGN_COLUMNS if c in df.columns]],
                             observed=True, dropna=False).size().max()) if len(df) else 0
    design = {c: sorted(map(str, df[c].dropna().unique()))[:20] for c in DESIGN_COLUMNS
              if c in df.columns and df[c].nunique(dropna=True) > 1}
    gold = int(df["gold"].notna().sum())
    items = int(df[["dataset", "item_id"]].drop_duplicates().shape[0])
    gold_items = int(df.loc[df["gold"].notna(), ["dataset", "item_id"]].drop_duplicates().shape[0])
    unparsed = int(df["verdict"].isna().sum())
    parts = [f"{len(df):,} {kind} replies to {items:,} items"]
    if kind != "pointwise":
        if orders == [""]:
            parts.append("one presentation order (not recorded): consistency and first-slot preference need both")
        elif set(orders) >= set(ORDERS):
            parts.append(f"{both:,} items in both orders")
        else:
            parts.append(f"one presentation order ({', '.join(o or 'unknown' for o in orders)}): consistency "
                         "needs both")
    parts.append("no gold labels: gold-based figures are not computable" if gold == 0 else
                 f"gold on {gold_items:,} of {items:,} items" if gold_items < items else "gold on every item")
    parts.append(f"up to {samples} sample(s) per item and order" if samples > 1 else "one sample per item and order")
    parts.append(f"{unparsed:,} unparsed replies (counted, never scored)")
    if design:
        plural = {"dataset": "datasets", "subset": "subsets", "judge": "judges", "model": "models",
                  "strategy": "strategies", "anchor_set": "anchor sets"}
        parts.append("several " + ", ".join(f"{plural[c]} ({len(v)})" for c, v in design.items()))
    parts += list(df.attrs.get("left_out", []))  # what the report's filters removed (verdicts.select)
    snap = V.snapshot_note(df)
    if snap:
        parts.append(f"WARNING: {snap}")
    return {"replies": len(df), "items": items, "kind": kind, "orders": orders, "both_orders": both, "gold": gold,
            "gold_items": gold_items, "samples": samples, "unparsed": unparsed, "design": design,
            "snapshots": V.snapshots(df), "text": "; ".join(parts) + "."}


def order_pairs(df: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """The replies of each (group, item, sample) side by side across presentation orders.

    Parameters
    ----------
    df : tidy verdict table with pairwise replies (order ``ab``/``ba``; other orders are ignored).
    by : grouping columns; checked with :func:`check_design` (several replies per unit raise).

    Returns
    -------
    DataFrame, one row per (by, dataset, item_id, sample) judged in at least one order: ``by`` columns,
    ``dataset``, ``item_id``, ``sample``, ``verdict_ab``, ``verdict_ba`` (NA when unparsed or not asked),
    ``has_ab``, ``has_ba`` (the order was asked), ``gold`` (the item's gold; the two orders' gold must agree).
    Row order of ``df`` never changes the result (sorted by key).

    Raises
    ------
    DesignError
        See :func:`check_design`; or gold that differs between the two orders of one item.
    """
    by = list(by)
    check_design(df, by)
    d = df.loc[df["order"].isin(ORDERS)]
    key = list(dict.fromkeys([*by, "dataset", "item_id", "sample"]))
    cols = key + ["order", "verdict", "gold"]
    d = d[cols]
    ab = d[d["order"] == "ab"].drop(columns="order")
    ba = d[d["order"] == "ba"].drop(columns="order")
    out = ab.merge(ba, on=key, how="outer", suffixes=("_ab", "_ba"), indicator=True)
    out["has_ab"] = out["_merge"].isin(["both", "left_only"]).to_numpy(bool)
    out["has_ba"] = out["_merge"].isin(["both", "right_only"]).to_numpy(bool)
    clash = out["gold_ab"].notna() & out["gold_ba"].notna() & (out["gold_ab"] != out["gold_ba"])
    if clash.any():
        r = out[clash].iloc[0]
        raise DesignError(f"item {r['item_id']!r} has gold {r['gold_ab']!r} in order ab and {r['gold_ba']!r} in ba; "
                          "expected one gold label per item", column="gold")
    out["gold"] = out["gold_ab"].fillna(out["gold_ba"])
    out = out.drop(columns=["gold_ab", "gold_ba", "_merge"])
    return out.sort_values(key, kind="stable").reset_index(drop=True)


def groups(df: pd.DataFrame, by: Sequence[str]):
    """Iterate ``(key dict, sub-frame)`` over the groups of ``by`` in sorted order; one group ``{}`` when ``by`` is
    empty (the whole table)."""
    by = list(by)
    if not by:
        yield {}, df
        return
    for key, g in df.groupby(by, dropna=False, observed=True, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        yield dict(zip(by, key, strict=True)), g


def not_computable(reason: str) -> str:
    """The ``note`` of a figure the table cannot support, e.g. ``"not computable: no gold labels"``."""
    return f"not computable: {reason}"


def join_notes(*notes: str) -> str:
    """Several notes as one cell (empty strings dropped)."""
    return "; ".join(n for n in notes if n)


def item_sums(d: pd.DataFrame, by: Sequence[str], columns: Sequence[str], *,
              cluster: Sequence[str] = ("dataset", "item_id")):
    """Per-cluster (item) sums of numeric ``columns`` within each group of ``by``, in one pass — the input of
    every cluster interval.

    Returns a function ``key dict -> ndarray of shape (n_items_in_group, len(columns))`` (empty when the group has
    no row in ``d``).
    """
    by, columns = list(by), list(columns)
    if d.empty:
        return lambda key: np.zeros((0, len(columns)))
    s = d.groupby([*by, *cluster], observed=True, sort=True, dropna=False)[columns].sum()
    if not by:
        arr = s.to_numpy(float)
        return lambda key: arr
    gidx = s.index.droplevel(list(cluster))
    codes, uniq = pd.factorize(gidx, sort=False)
    order = np.argsort(codes, kind="stable")
    arr = s.to_numpy(float)[order]
    bounds = np.searchsorted(codes[order], np.arange(len(uniq) + 1))
    lut = {(u if isinstance(u, tuple) else (u,)): i for i, u in enumerate(uniq)}

    def get(key: dict) -> np.ndarray:
        i = lut.get(tuple(key[c] for c in by))
        return arr[bounds[i]:bounds[i + 1]] if i is not None else np.zeros((0, len(columns)))
    return get


__all__ = ["DESIGN_COLUMNS", "DesignError", "ORDERS", "UNIT", "check_design", "describe", "groups", "item_sums",
           "join_notes", "not_computable", "order_pairs", "pairwise"]
