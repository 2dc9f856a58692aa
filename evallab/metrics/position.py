"""Position bias of pairwise judges: does the verdict depend on which output is shown first?

All functions take the tidy verdict table with pairwise replies in orders ``ab`` (output 1 shown first) and ``ba``;
``verdict`` is the ORIGINAL output index. Unparsed replies are excluded and counted. A table with one presentation
order (or an empty ``order``: not recorded) cannot support these figures: they are NaN with the reason in ``note``.
Grouping follows :func:`evallab.metrics.design.check_design`; the item is the resampling unit.

Methods and their sources
-------------------------
- position consistency — share of pairs (both replies parsed) whose verdict is the same in both orders: LLMBar's
  *Agr.* (Zeng et al. 2024, §4), Shi et al. (2024) *position consistency*, MT-Bench's *consistency* (Zheng et al.
  2023, Table 2).
- MT-Bench's breakdown of the same pairs (Zheng et al. 2023, Table 2): *consistent*; *biased toward first* (the
  output shown first won in both orders); *biased toward second*; *error* (inconsistent otherwise: a tie in one order
  and a win in the other). The four shares sum to 1 over pairs with both replies parsed; pairs with an unparsed
  reply are counted apart (``pairs_unparsed``).
- preference fairness — Shi et al. (2024) measure the direction of the inconsistent pairs; evallab reports the
  unnormalised form (recency-preferred − primacy-preferred pairs) / pairs with both parsed, in [−1, 1]: 0 = fair,
  negative = the first-shown output is favoured. (Shi et al. additionally min-max normalise it by bounds that depend
  on the inconsistency rate; the unnormalised share is comparable across judges with different consistency.)
- first-slot preference — share of decisive (non-tie) parsed replies that pick the output shown first (``ab`` →
  ``1``, ``ba`` → ``2``); 0.5 = none. Item-cluster interval (several replies per item). Pooled over both orders
  each output sits in each slot, so content cancels; replies shown in one order only give NaN with the reason
  (:func:`one_order_note`): there it would be the share choosing output 1, position mixed with quality.
- McNemar's test for an order effect, one pair per item: b = items where the first-shown output won in both
  orders, c = items where the second-shown did (with several samples, an item's majority).
- balanced position calibration — FairEval (Wang et al. 2023, "Large Language Models are not Fair Evaluators",
  §3.2): judge both orders and average the verdicts, an inconsistent pair becoming a tie worth ``tie_credit``.
  On binary verdicts with ``tie_credit=0.5`` its accuracy EQUALS the mean of the two order accuracies (LLMBar's
  Acc.) on the same pairs: it removes the order from the verdict, it does not raise the expected accuracy.
  ``strict_accuracy`` (tie_credit 0: right in both orders) and ``abstention`` (share of inconsistent pairs) show
  what accepting only consistent verdicts costs.
- anchor effect — how in-context examples (LLMBar ``Vanilla_1shot``/``Vanilla_2shot``) move first-slot preference
  and accuracy against 0-shot, paired over items.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab.errors import EvallabError
from evallab.metrics import intervals
from evallab.metrics.design import ORDERS, check_design, groups, item_sums, not_computable, order_pairs

NAN = float("nan")
DEFAULT_BY = ("subset", "judge", "strategy")


def _pair_flags(p: pd.DataFrame, unparsed: str = "exclude") -> pd.DataFrame:
    a, b = p["verdict_ab"], p["verdict_ba"]
    both = a.notna() & b.notna() & p["has_ab"] & p["has_ba"]
    asked = p["has_ab"] & p["has_ba"]
    cons = (a == b).fillna(False) & both
    first = ((a == "1") & (b == "2")).fillna(False)
    second = ((a == "2") & (b == "1")).fillna(False)
    out = p.assign(_asked=asked, _both=both, _cons=cons, _first=first, _second=second,
                   _error=both & ~cons & ~first & ~second)
    if unparsed == "published":  # LLMBar: two unparsed replies agree; every pair asked in both orders counts
        out["_cons"] = cons | (asked & a.isna() & b.isna())
        out["_den"] = asked
    else:
        out["_den"] = both
    return out


def _item_key(d: pd.DataFrame) -> pd.Series:
    return d["dataset"].astype(str) + "\x1f" + d["item_id"].astype(str)


def _subsets(p: pd.DataFrame, by: list[str]):
    """``key dict -> rows of p`` for the groups of ``by`` (the whole frame when ``by`` is empty)."""
    if not by:
        return lambda key: p
    idx = p.groupby(by, dropna=False, observed=True, sort=False).indices if len(p) else {}

    def get(key: dict) -> pd.DataFrame:
        k = tuple(key[c] for c in by)
        rows = idx.get(k if len(by) > 1 else k[0])
        return p.iloc[rows] if rows is not None else p.iloc[:0]
    return get


def position_consistency(df: pd.DataFrame, by: Sequence[str] = DEFAULT_BY, *, unparsed: str = "exclude",
                         confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Position consistency per group: the share of pairs with the same verdict in both presentation orders.

    Parameters
    ----------
    unparsed : ``"exclude"`` (pairs with both replies parsed) or ``"published"`` (LLMBar's Agr.: every pair asked
        in both orders; two unparsed replies agree).

    Returns
    -------
    DataFrame: ``by`` + ``pairs`` (asked in both orders), ``both_parsed``, ``consistent_pairs`` (LLMBar's Agr. count),
    ``position_consistency`` in [0, 1] with ``_low``/``_high`` (Wilson with one sample per item, else item-cluster
    bootstrap), ``note`` ("not computable: needs both orders" on a one-order table).
    """
    by = list(by)
    p = _pair_flags(order_pairs(df, by), unparsed)
    d = p[p["_den"]].assign(_c=lambda x: x["_cons"].astype(float), _n=1.0)
    get = item_sums(d, by, ["_c", "_n"])
    cnt = p.groupby(by, dropna=False, observed=True, sort=True)[["_asked", "_both"]].sum() if by else \
        p[["_asked", "_both"]].sum().to_frame().T
    cnt_idx = {(k if isinstance(k, tuple) else (k,)): i for i, k in enumerate(cnt.index)} if by else {(): 0}
    orders = df.groupby(by, dropna=False, observed=True, sort=True)["order"].unique() if by else \
        pd.Series([df["order"].unique()])
    rows = []
    for j, (key, _) in enumerate(groups(df[by].drop_duplicates() if by else df.iloc[:0], by)):
        i = cnt_idx.get(tuple(key[c] for c in by))
        per = get(key)
        asked = int(cnt["_asked"].iloc[i]) if i is not None and len(cnt) else 0
        r = dict(key, pairs=asked, both_parsed=int(cnt["_both"].iloc[i]) if i is not None and len(cnt) else 0,
                 consistent_pairs=int(per[:, 0].sum()) if len(per) else 0, position_consistency=NAN,
                 position_consistency_low=NAN, position_consistency_high=NAN, note="")
        if len(per) == 0:
            present = sorted(map(str, orders.iloc[j]))
            r["note"] = not_computable("needs both presentation orders; the table has "
                                       + (" and ".join(o or "an unrecorded order" for o in present)
                                          if asked == 0 else "no pair with both replies parsed"))
        else:
            r["position_consistency"] = float(per[:, 0].sum() / per[:, 1].sum())
            r["position_consistency_low"], r["position_consistency_high"] = intervals.ratio_interval(
                per[:, 0], per[:, 1], n_resamples=n_resamples, confidence=confidence, seed=seed)
        rows.append(r)
    return pd.DataFrame(rows)


def one_order_note(df: pd.DataFrame) -> str:
    """"" when the decisive replies of ``df`` were shown in both orders; else why first-slot preference is not
    computable on them: shown in one order only, the output in the first slot is always the same one, so the share
    picking it mixes position with which output is better (the swap of MT-Bench, Zheng et al. 2023 §3.4, is what
    separates them)."""
    fs = first_slot(df)
    orders = sorted(set(df.loc[fs.notna(), "order"].astype(str)))
    if not orders or set(orders) == set(ORDERS):
        return ""
    return not_computable(f"first-slot preference needs both presentation orders; with only {orders[0]} it is the "
                          "share choosing the output shown first (always the same one), which mixes position with "
                          "which output is better")


def first_slot(df: pd.DataFrame) -> pd.Series:
    """Per reply: 1.0 when a parsed, decisive reply picked the output shown first, 0.0 when the second, NaN
    otherwise (a tie, unparsed, or an order not recorded)."""
    first = ((df["order"] == "ab") & (df["verdict"] == "1")) | ((df["order"] == "ba") & (df["verdict"] == "2"))
    decisive = df["verdict"].isin(["1", "2"]) & df["order"].isin(ORDERS)
    return first.fillna(False).astype(float).where(decisive.fillna(False))


def position_bias(df: pd.DataFrame, by: Sequence[str] = DEFAULT_BY, *, confidence: float = 0.95,
                  n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Position consistency, MT-Bench's breakdown, preference fairness, first-slot preference and McNemar's
    order-effect test per group (definitions and sources in the module docstring).

    Returns
    -------
    DataFrame, one row per group:
        ``pairs`` (asked in both orders), ``both_parsed``, ``pairs_unparsed`` (a reply unparsed),
        ``position_consistency`` (+ ``_low``/``_high``), ``consistent``, ``biased_first``, ``biased_second``,
        ``error`` (pair counts; MT-Bench), ``consistent_rate``, ``biased_first_rate``, ``biased_second_rate``,
        ``error_rate`` (shares of ``both_parsed``, summing to 1), ``preference_fairness`` in [−1, 1];
        ``decisive`` (parsed non-tie replies with a known order), ``first_slot`` (of them, picked the first shown),
        ``first_slot_preference`` in [0, 1] (+ ``_low``/``_high``); ``mcnemar_items_first``,
        ``mcnemar_items_second``, ``mcnemar_p`` (items); ``unparsed`` (replies); ``note``.
    """
    by = list(by)
    check_design(df, by)
    p = _pair_flags(order_pairs(df, by))
    d = df.assign(_fs=first_slot(df))
    rows = []
    kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    cons = position_consistency(df, by, confidence=confidence, n_resamples=n_resamples, seed=seed)
    get = _subsets(p, by)
    for (key, g), (_, c) in zip(groups(d, by), cons.iterrows(), strict=True):
        sub = get(key)
        bp = sub[sub["_both"]] if len(sub) else sub
        nb = len(bp)
        r = dict(key, pairs=int(c["pairs"]), both_parsed=nb,
                 pairs_unparsed=int((sub["_asked"] & ~sub["_both"]).sum()) if len(sub) else 0,
                 position_consistency=c["position_consistency"],
                 position_consistency_low=c["position_consistency_low"],
                 position_consistency_high=c["position_consistency_high"])
        for name, col in (("consistent", "_cons"), ("biased_first", "_first"), ("biased_second", "_second"),
                          ("error", "_error")):
            r[name] = int(bp[col].sum()) if nb else 0
            r[f"{name}_rate"] = r[name] / nb if nb else NAN
        r["preference_fairness"] = (r["biased_second"] - r["biased_first"]) / nb if nb else NAN
        fs = g[g["_fs"].notna()]
        per = fs.assign(_n=1.0).groupby(_item_key(fs))[["_fs", "_n"]].sum()
        r["decisive"], r["first_slot"] = int(per["_n"].sum()), int(per["_fs"].sum())
        one_order = one_order_note(g)
        ok = r["decisive"] and not one_order
        r["first_slot_preference"] = r["first_slot"] / r["decisive"] if ok else NAN
        r["first_slot_preference_low"], r["first_slot_preference_high"] = intervals.ratio_interval(
            per["_fs"], per["_n"], **kw) if ok else (NAN, NAN)
        if nb:
            it = bp.assign(_f=bp["_first"].astype(int), _s=bp["_second"].astype(int)).groupby(_item_key(bp))[
                ["_f", "_s"]].sum()
            b, cc = int((it["_f"] > it["_s"]).sum()), int((it["_s"] > it["_f"]).sum())
            m = intervals.mcnemar(b, cc)
            r.update(mcnemar_items_first=b, mcnemar_items_second=cc, mcnemar_p=m["pvalue"])
        else:
            r.update(mcnemar_items_first=0, mcnemar_items_second=0, mcnemar_p=NAN)
        r["unparsed"] = int(g["verdict"].isna().sum())
        notes = [c["note"]] if c["note"] else []
        if not r["decisive"]:
            notes.append(not_computable("first-slot preference needs decisive replies with a recorded order"))
        elif one_order:
            notes.append(one_order)
        r["note"] = "; ".join(notes)
        rows.append(r)
    return pd.DataFrame(rows)


def balanced_position_accuracy(df: pd.DataFrame, by: Sequence[str] = DEFAULT_BY, *, tie_credit: float = 0.5,
                               confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """FairEval's balanced position calibration on pairs judged in both orders (module docstring).

    Parameters
    ----------
    tie_credit : credit in [0, 1] of an inconsistent pair (0.5: a tie is half right; 0: right only when right in
        both orders).

    Returns
    -------
    DataFrame: ``by`` + ``pairs`` (both orders parsed, with gold), ``excluded`` (pairs with an unparsed reply or no
    gold), ``acc_order_12``, ``acc_order_21`` (on the same pairs), ``bpc_accuracy`` in [0, 1] with ``low``/``high``
    (item-cluster interval), ``strict_accuracy`` (right in both orders), ``abstention`` (share of inconsistent
    pairs), ``note``. With binary verdicts and ``tie_credit=0.5``, ``bpc_accuracy == (acc_order_12 +
    acc_order_21) / 2`` exactly.

    Raises
    ------
    EvallabError
        ``tie_credit`` outside [0, 1].
    """
    if not 0 <= tie_credit <= 1:
        raise EvallabError(f"tie_credit={tie_credit}; expected a value in [0, 1]")
    by = list(by)
    p = order_pairs(df, by)
    p = p.assign(_ok=p["verdict_ab"].notna() & p["verdict_ba"].notna() & p["gold"].notna())
    get = _subsets(p, by)
    rows = []
    for key, _ in groups(df[by].drop_duplicates() if by else df.iloc[:0], by):
        g = get(key)
        h = g[g["_ok"]]
        r = dict(key, pairs=len(h), excluded=len(g) - len(h))
        if h.empty:
            r.update(acc_order_12=NAN, acc_order_21=NAN, bpc_accuracy=NAN, low=NAN, high=NAN, strict_accuracy=NAN,
                     abstention=NAN, note=not_computable("needs pairs with both orders parsed and gold"))
            rows.append(r)
            continue
        ca = (h["verdict_ab"] == h["gold"]).to_numpy(float)
        cb = (h["verdict_ba"] == h["gold"]).to_numpy(float)
        cons = (h["verdict_ab"] == h["verdict_ba"]).to_numpy(bool)
        score = np.where(cons, ca, tie_credit)
        per = pd.DataFrame({"s": score, "n": 1.0}).groupby(_item_key(h).to_numpy())[["s", "n"]].sum()
        lo, hi = intervals.ratio_interval(per["s"], per["n"], n_resamples=n_resamples, confidence=confidence,
                                          seed=seed)
        r.update(acc_order_12=float(ca.mean()), acc_order_21=float(cb.mean()), bpc_accuracy=float(score.mean()),
                 low=lo, high=hi, strict_accuracy=float((ca * cb).mean()), abstention=float((~cons).mean()),
                 note="")
        rows.append(r)
    return pd.DataFrame(rows)


def _item_stats(df: pd.DataFrame) -> pd.DataFrame:
    """Per item: first-slot picks, decisive replies, correct replies, parsed replies with gold."""
    d = df.assign(_fs=first_slot(df), _ok=df["verdict"].notna() & df["gold"].notna(),
                  _c=(df["verdict"] == df["gold"]).fillna(False))
    return d.groupby(_item_key(d)).agg(fs=("_fs", "sum"), dec=("_fs", "count"), c=("_c", "sum"), p=("_ok", "sum"))


def anchor_effect(df: pd.DataFrame, *, baseline: str = "Vanilla",
                  variants: Sequence[str] = ("Vanilla_1shot", "Vanilla_2shot"), by: Sequence[str] = ("judge",),
                  confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """How in-context examples move first-slot preference and accuracy against the 0-shot baseline strategy.

    Compares strategies on the same items (those every compared strategy judged, within each group); ``strategy``
    is the compared column, so ``by`` must not hold it.

    Returns
    -------
    DataFrame, one row per group × strategy (baseline first): ``strategy``, ``items``, ``first_slot_preference``
    (+ ``_low``/``_high``), ``accuracy`` (+ ``_low``/``_high``), ``delta_first_slot`` and ``delta_accuracy``
    (variant − baseline, in [−1, 1]) each with ``_low``/``_high`` from a paired item bootstrap; NaN deltas and a
    ``note`` on the baseline row. A group without the baseline strategy is left out and named in ``attrs
    ["missing_baseline"]``.
    """
    by = list(by)
    if "strategy" in by:
        raise EvallabError("by must not hold 'strategy': it is the compared column")
    strategies = [baseline, *variants]
    d = df[df["strategy"].isin(strategies)]
    check_design(d, [*by, "strategy"])
    rows, missing = [], []
    kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    for key, g in groups(d, by):
        have = [s for s in strategies if (g["strategy"] == s).any()]
        if baseline not in have:
            missing.append(key)
            continue
        per = {s: _item_stats(g[g["strategy"] == s]) for s in have}
        one_order = {s: one_order_note(g[g["strategy"] == s]) for s in have}
        common = sorted(set.intersection(*(set(x.index) for x in per.values())))
        per = {s: x.loc[common] for s, x in per.items()}
        base = per[baseline]
        for s in have:
            x = per[s]
            r = dict(key, strategy=s, items=len(common))
            for name, num, den in (("first_slot_preference", "fs", "dec"), ("accuracy", "c", "p")):
                tot = x[den].sum()
                r[name] = x[num].sum() / tot if tot and not (name == "first_slot_preference" and one_order[s]) \
                    else NAN
                r[f"{name}_low"], r[f"{name}_high"] = intervals.ratio_interval(x[num], x[den], **kw) \
                    if np.isfinite(r[name]) else (NAN, NAN)
            for name, num, den in (("first_slot", "fs", "dec"), ("accuracy", "c", "p")):
                if s == baseline or (name == "first_slot" and (one_order[s] or one_order[baseline])):
                    r[f"delta_{name}"] = r[f"delta_{name}_low"] = r[f"delta_{name}_high"] = NAN
                    continue
                arrays = [x[num].to_numpy(float), x[den].to_numpy(float), base[num].to_numpy(float),
                          base[den].to_numpy(float)]
                r[f"delta_{name}"] = (arrays[0].sum() / arrays[1].sum() - arrays[2].sum() / arrays[3].sum()
                                      if arrays[1].sum() and arrays[3].sum() else NAN)
                r[f"delta_{name}_low"], r[f"delta_{name}_high"] = intervals.ratio_difference_interval(*arrays, **kw)
            undefined = [n for n in ("first_slot_preference", "accuracy") if not np.isfinite(r[n])]
            r["note"] = "; ".join((["baseline"] if s == baseline else [])
                                  + [(one_order[s] or not_computable(f"{n} has no decisive reply"))
                                     if n == "first_slot_preference"
                                     else not_computable("accuracy has no parsed reply with gold")
                                     for n in undefined])
            rows.append(r)
    out = pd.DataFrame(rows)
    out.attrs["missing_baseline"] = missing
    return out
