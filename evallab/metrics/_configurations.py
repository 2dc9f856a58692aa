"""Configurations of a judge study compared on the same items (issue 29, item 3): which judge × prompt × anchor set
to use, and whether the data can tell.

A configuration is one value of the design columns ``by`` (default ``judge``, ``strategy`` — the prompt's identity
— and ``anchor_set``). Every figure counts per item and resamples the item (the unit of every interval here), so
the figures of two configurations are paired when they answered the same items:

- **parse rate** — parsed replies / replies. An unparsed reply is counted here and nowhere else: it is never
  scored as wrong (the figures below are over parsed replies).
- **agreement with gold** — accuracy (parsed replies with gold that equal it / parsed replies with gold; LLMBar's
  Acc., Zeng et al. 2024, §4) and Cohen's kappa against gold (Cohen 1960;
  :func:`evallab.metrics._agreement.cohen_kappa_vs_gold`).
- **position consistency** (pairwise, both orders) — the share of (item, sample) pairs with both replies parsed
  whose verdict (in the original numbering) is the same in both presentation orders (Zheng et al. 2023, MT-Bench,
  Table 2 "Consistency"; Shi et al. 2024, §3.1).
- **first-slot preference** (pairwise) — the share of decisive replies (``1``/``2``) picking the output shown
  first; 0.5 = no position preference (the pairwise judge's leniency toward a slot).
- **pass rate** (pointwise) — ``pass`` verdicts / parsed replies: the pointwise judge's leniency.
- **leniency shift** — the configuration's pass rate (or first-slot preference) minus that of the same judge and
  prompt under the REFERENCE anchor set (``balanced`` when the table has it, else the first anchor set in table
  order), paired on items (percentile paired item bootstrap).
- **repetition stability** (``sample`` > 1) — Shi et al. (2024, §3.1): the mean over requests (item, order) of the
  share of parsed samples giving the request's most frequent verdict.
- **cost per verdict** — the sum of ``cost_usd`` over the parsed verdicts it bought / those verdicts (USD;
  percentile item bootstrap); and the mean ``input_tokens + output_tokens`` per parsed verdict where recorded.

Intervals of shares: :func:`~evallab.metrics._intervals.ratio_interval_method` (Wilson score with one binary reply
per item, else a percentile item bootstrap; Wilson 1927; Efron and Tibshirani 1993, ch. 13).

**Pairwise comparisons** on the chosen criterion, for every two configurations, on the items both answered:

- the paired difference (first − second) with a paired percentile item bootstrap interval
  (:func:`~evallab.metrics._intervals.ratio_difference_interval_method`: the four per-item sums resampled together);
- McNemar's test on items (McNemar 1947; statsmodels ``mcnemar``, exact binomial when the discordant items are
  fewer than 25): an item is a success under a configuration when every one of its counted units succeeds — for
  accuracy, every parsed reply right (with both orders: right in both orders, the strict accuracy of Wang et al.
  2023, §3.2, and LLMBar's per-order pair); for position consistency, consistent in every sample; for the parse
  rate, every reply parsed; for stability, every request unanimous. With one reply per item this is the reply;
- Holm's step-down adjustment of the McNemar p-values across all pairs (Holm 1979; statsmodels ``multipletests``).

**The recommendation**: the configuration with the best value on the criterion is named the best only when it is
SEPARATED from every other configuration — its interval does not overlap theirs AND every paired difference's
interval excludes 0. Otherwise the sentence says which configurations are not distinguishable from it and that the
choice among them is one of cost: the cheapest of them by cost per verdict (or by tokens per verdict when no cost
was recorded) — never a winner when intervals overlap.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab._results import Measure, Results, results
from evallab.errors import DataError
from evallab.metrics import _intervals as intervals
from evallab.metrics._design import item_key, needs_verdicts, not_computable

NAN = float("nan")
#: the criteria a recommendation can be made on → (column, label)
CRITERIA = {"accuracy": ("accuracy", "accuracy against gold"),
            "position_consistency": ("position_consistency", "position consistency"),
            "stability": ("stability", "repetition stability"),
            "parse_rate": ("parse_rate", "parse rate")}
#: what ``criterion="agreement"`` means
ALIASES = {"agreement": "accuracy"}
DEFAULT_BY = ("judge", "strategy", "anchor_set")
_SHARES = ("parse", "acc", "pc", "fs", "pass", "st")


def _iv(column: str, label: str, n: str, n_unit: str, unit: str = "proportion", digits: int | None = None
        ) -> Measure:
    return Measure(column, label, unit, f"{column}_low", f"{column}_high", method_column=f"{column}_method", n=n,
                   n_unit=n_unit, digits=digits)


#: the measures of :func:`compare_configurations`
CONFIGURATION_MEASURES = [
    Measure("replies", "Replies", "count"), Measure("parsed", "Parsed", "count"),
    _iv("parse_rate", "Parse rate", "replies", "replies"),
    _iv("accuracy", "Accuracy vs gold", "gold_parsed", "replies"), Measure("gold_parsed", "Parsed with gold", "count"),
    _iv("kappa", "Cohen's kappa vs gold", "gold_parsed", "replies", unit="coefficient", digits=3),
    _iv("position_consistency", "Position consistency", "both_parsed", "pairs"),
    Measure("both_parsed", "Pairs (both parsed)", "count"),
    _iv("first_slot_preference", "First-slot preference", "decisive", "decisive replies"),
    Measure("decisive", "Decisive replies", "count"),
    _iv("pass_rate", "Pass rate", "parsed", "replies"),
    _iv("leniency_shift", "Leniency shift vs reference anchor set", "items", "items", unit="pp"),
    _iv("stability", "Repetition stability", "requests", "requests"),
    Measure("requests", "Requests with ≥ 2 parsed samples", "count"),
    _iv("cost_per_verdict", "Cost per verdict", "costed", "verdicts", unit="USD", digits=6),
    Measure("costed", "Verdicts with a cost", "count"),
    Measure("tokens_per_verdict", "Tokens per verdict", "tokens", digits=0),
    Measure("items", "Items", "count"),
]
#: the measures of the pairwise comparisons (``attrs["pairs"]``)
PAIR_MEASURES = [
    Measure("items", "Items (both)", "count"),
    Measure("difference", "Difference (first − second)", "pp", "difference_low", "difference_high",
            method_column="difference_method", n="items", n_unit="items"),
    Measure("first_only", "Items: first only", "count"), Measure("second_only", "Items: second only", "count"),
    Measure("mcnemar_p", "McNemar p", "p-value", n="discordant", n_unit="items"),
    Measure("discordant", "Discordant items", "count"),
    Measure("p_holm", "Holm-adjusted p", "p-value", n="discordant", n_unit="items"),
]


def _criterion(criterion: str) -> str:
    c = ALIASES.get(criterion, criterion)
    if c not in CRITERIA:
        raise DataError(f"criterion {criterion!r}; expected one of {sorted([*CRITERIA, *ALIASES])}",
                        column="criterion")
    return c


def _per_item(g: pd.DataFrame) -> pd.DataFrame:
    """Per item of one configuration: numerator and denominator of every share (module docstring)."""
    v = g["verdict"]
    parsed = v.notna()
    gold = g["gold"] if "gold" in g else pd.Series(pd.NA, index=g.index, dtype="string")
    order = g["order"].fillna("") if "order" in g else pd.Series("", index=g.index)
    sample = g["sample"].fillna(0) if "sample" in g else pd.Series(0, index=g.index)
    key = pd.Series(item_key(g), index=g.index, name="_item")
    with_gold = parsed & gold.notna()
    decisive = v.isin(["1", "2"]).fillna(False).astype(bool)
    first = decisive & (((order == "ab") & (v == "1")) | ((order == "ba") & (v == "2"))).fillna(False).astype(bool)
    cost = pd.to_numeric(g["cost_usd"], errors="coerce") if "cost_usd" in g else pd.Series(np.nan, index=g.index)
    tok = sum(pd.to_numeric(g[c], errors="coerce") for c in ("input_tokens", "output_tokens") if c in g) \
        if {"input_tokens", "output_tokens"} & set(g.columns) else pd.Series(np.nan, index=g.index)
    costed, toked = parsed & cost.notna(), parsed & pd.Series(tok, index=g.index).notna()
    frame = pd.DataFrame({
        "_item": key, "parse_n": parsed.astype(float), "parse_d": 1.0,
        "acc_n": (with_gold & (v == gold).fillna(False)).astype(float), "acc_d": with_gold.astype(float),
        "fs_n": first.astype(float), "fs_d": decisive.astype(float),
        "pass_n": (parsed & (v == "pass").fillna(False)).astype(float), "pass_d": parsed.astype(float),
        "cost_n": cost.where(costed, 0.0).astype(float), "cost_d": costed.astype(float),
        "tok_n": pd.Series(tok, index=g.index).where(toked, 0.0).astype(float), "tok_d": toked.astype(float)})
    out = frame.groupby("_item").sum()
    # position consistency: one pair per (item, sample) asked in both orders, both parsed
    both = g.assign(_item=key.to_numpy(), _order=order.to_numpy(), _sample=sample.to_numpy())[parsed.to_numpy()]
    wide = both.pivot_table(index=["_item", "_sample"], columns="_order", values="verdict", aggfunc="first")
    if {"ab", "ba"} <= set(wide.columns):
        pairs = wide[["ab", "ba"]].dropna()
        pc = pd.DataFrame({"pc_n": (pairs["ab"] == pairs["ba"]).astype(float), "pc_d": 1.0}).groupby(level=0).sum()
    else:
        pc = pd.DataFrame({"pc_n": [], "pc_d": []})
    # repetition stability (Shi et al. 2024): per request, the share of its parsed samples giving its modal verdict
    counts = both.groupby(["_item", "_order", "verdict"], observed=True).size()
    sizes = counts.groupby(level=[0, 1]).sum()
    modal = counts.groupby(level=[0, 1]).max()
    keep = sizes >= 2
    st = pd.DataFrame({"st_n": (modal[keep] / sizes[keep]).astype(float), "st_d": 1.0,
                       "un_n": (modal[keep] == sizes[keep]).astype(float)}).groupby(level=0).sum()
    out = out.join(pc, how="left").join(st, how="left")
    return out.fillna(0.0)


def _share(s: pd.DataFrame, name: str, ci: dict) -> tuple[float, float, float, str]:
    num, den = s[f"{name}_n"].to_numpy(float), s[f"{name}_d"].to_numpy(float)
    if den.sum() == 0:
        return NAN, NAN, NAN, ""
    lo, hi, method = intervals.ratio_interval_method(num, den, **ci)
    return float(num.sum() / den.sum()), lo, hi, method


def _cost(s: pd.DataFrame, ci: dict) -> tuple[float, float, float, str]:
    use = s[s["cost_d"] > 0]
    if use.empty:
        return NAN, NAN, NAN, ""
    sums = use[["cost_n", "cost_d"]].to_numpy(float)
    lo, hi = intervals.bootstrap_sums(sums, lambda t: t[..., 0] / t[..., 1], **ci)
    method = f"item bootstrap (percentile, {ci['n_resamples']:,} resamples)" if np.isfinite(lo) else ""
    return float(sums[:, 0].sum() / sums[:, 1].sum()), lo, hi, method


def _label(key: tuple, by: Sequence[str]) -> str:
    return " | ".join(str(k) for k in key) if len(by) > 1 else str(key[0])


def _disjoint(a: pd.Series, b: pd.Series, col: str) -> bool:
    lo_a, hi_a, lo_b, hi_b = (float(x) for x in (a[f"{col}_low"], a[f"{col}_high"], b[f"{col}_low"],
                                                   b[f"{col}_high"]))
    if not all(np.isfinite([lo_a, hi_a, lo_b, hi_b])):
        return False  # no interval: not shown to be apart
    return hi_a < lo_b or hi_b < lo_a


@needs_verdicts("the comparison of judge configurations")
def compare_configurations(df: pd.DataFrame, by: Sequence[str] = DEFAULT_BY, *, criterion: str = "accuracy",
                           reference_anchor_set: str | None = None, confidence: float = 0.95,
                           n_resamples: int = 1000, seed: int = 0) -> Results:
    """Each configuration of a judge study measured, every two compared on the same items, and the recommended one
    (module docstring: definitions, methods and sources).

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table (:mod:`evallab.verdicts`) of a study: every configuration on the same items
        (``evallab study run``), pairwise (both orders for position consistency) or pointwise; ``gold`` for
        agreement, several ``sample`` values for stability, ``cost_usd``/``input_tokens``/``output_tokens`` for
        cost.
    by : sequence of str, default ("judge", "strategy", "anchor_set")
        The design columns naming a configuration (those absent from ``df`` are dropped).
    criterion : {"accuracy" (alias "agreement"), "position_consistency", "stability", "parse_rate"}
        What the recommendation and the pairwise comparisons rank on (higher is better).
    reference_anchor_set : str, optional
        The anchor set leniency shifts are measured against (default ``balanced`` when present, else the first
        anchor set of the table).
    confidence : float, default 0.95
        Level of every interval, in (0, 1).
    n_resamples : int, default 1000
        Bootstrap resamples over items.
    seed : int, default 0
        Seed of every bootstrap.

    Returns
    -------
    Results
        One row per configuration (measures :data:`CONFIGURATION_MEASURES`): ``configuration`` (the ``by``
        values joined by `` | ``), ``by``, ``kind`` (pairwise/pointwise), ``items``, ``replies``, ``parsed``,
        ``parse_rate``, ``accuracy`` with ``gold_parsed``, ``kappa``, ``position_consistency`` with
        ``both_parsed``, ``first_slot_preference`` with ``decisive``, ``pass_rate``, ``leniency_shift`` (a
        difference of proportions), ``stability`` with ``requests``, ``cost_per_verdict`` (USD) with ``costed``,
        ``tokens_per_verdict`` — each share with ``_low``/``_high``/``_method`` — and ``note`` (why a figure is
        missing). ``attrs``: ``"pairs"`` (a :class:`Results`, measures :data:`PAIR_MEASURES`: ``first``,
        ``second``, ``items``, ``difference`` with its paired interval, ``first_only``/``second_only``
        (McNemar's discordant items), ``discordant``, ``mcnemar_p``, ``mcnemar_exact``, ``p_holm``),
        ``"recommendation"`` (the sentence), ``"best"``, ``"indistinguishable"`` (the configurations not
        separated from the best), ``"criterion"``, ``"reference_anchor_set"``.

    Raises
    ------
    DataError
        An unknown criterion, a table without ``item_id``/``verdict``, or ``by`` naming no column.

    References
    ----------
    McNemar (1947), Psychometrika 12(2); Holm (1979), Scand. J. Statist. 6(2); Cohen (1960), Educ. Psychol. Meas.
    20(1); Zheng et al. (2023), MT-Bench, Table 2; Shi et al. (2024), "Judging the Judges", §3.1; Zeng et al.
    (2024), LLMBar, §4; Efron and Tibshirani (1993), ch. 13.

    Examples
    --------
    Two prompts on four pointwise items with gold: 4 of 4 against 2 of 4 right — with four items the intervals
    overlap, so no winner is named:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4"] * 2, "judge": "J",
    ...     "strategy": ["p1"] * 4 + ["p2"] * 4, "gold": ["pass", "fail"] * 4,
    ...     "verdict": ["pass", "fail", "pass", "fail", "pass", "pass", "pass", "pass"]}))
    >>> res = compare_configurations(df, by=["strategy"], n_resamples=200)
    >>> res[["configuration", "accuracy"]].to_string(index=False)
    'configuration  accuracy\\n           p1       1.0\\n           p2       0.5'
    >>> "not distinguishable" in res.attrs["recommendation"]
    True
    """
    from evallab.metrics._agreement import cohen_kappa_vs_gold

    crit = _criterion(criterion)
    for c in ("item_id", "verdict"):
        if c not in df.columns:
            raise DataError(f"missing column {c!r}; expected a tidy verdict table", column=c)
    by = [c for c in by if c in df.columns]
    if not by:
        raise DataError("none of the design columns is in the table; expected some of judge, strategy, anchor_set",
                        column="by")
    ci = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    d = pd.DataFrame(df).copy()
    d.attrs = {}  # a run's attrs (its plan, its stats) would be deep-copied by every pandas step below
    for c in by:
        d[c] = d[c].astype("string").fillna("")
    kind = "pairwise" if d["verdict"].isin(["1", "2", "tie"]).any() or d.get("order", pd.Series(dtype=str)).isin(
        ["ab", "ba"]).any() else "pointwise"
    groups = {k if isinstance(k, tuple) else (k,): g for k, g in d.groupby(by, sort=False)}
    per = {k: _per_item(g) for k, g in groups.items()}
    has_gold = "gold" in d and d["gold"].notna().any()
    kappa = (cohen_kappa_vs_gold(d, by, **ci).to_frame().set_index(by) if has_gold else None)
    ref = None
    if "anchor_set" in by:
        sets = list(dict.fromkeys(d["anchor_set"]))
        ref = reference_anchor_set or ("balanced" if "balanced" in sets else sets[0])
    len_col = "fs" if kind == "pairwise" else "pass"
    rows = []
    for k, s in per.items():
        notes = []
        r = dict(zip(by, k, strict=True), configuration=_label(k, by), kind=kind, items=len(s),
                 replies=int(s["parse_d"].sum()), parsed=int(s["parse_n"].sum()))
        for name, col in (("parse", "parse_rate"), ("acc", "accuracy"), ("pc", "position_consistency"),
                          ("fs", "first_slot_preference"), ("pass", "pass_rate"), ("st", "stability")):
            v, lo, hi, m = _share(s, name, ci)
            r.update({col: v, f"{col}_low": lo, f"{col}_high": hi, f"{col}_method": m})
        r.update(gold_parsed=int(s["acc_d"].sum()), both_parsed=int(s["pc_d"].sum()), decisive=int(s["fs_d"].sum()),
                 requests=int(s["st_d"].sum()))
        if kind == "pointwise":
            r.update(first_slot_preference=NAN, first_slot_preference_low=NAN, first_slot_preference_high=NAN,
                     first_slot_preference_method="")
        else:
            r.update(pass_rate=NAN, pass_rate_low=NAN, pass_rate_high=NAN, pass_rate_method="")
        g = groups[k]
        nothing = not r["parsed"]
        if nothing:  # the true reason of every missing figure: listed first, the others not blamed on the design
            notes.append(not_computable(f"nothing parsed: 0 of {r['replies']} replies parsed"))
        if not has_gold:
            notes.append(not_computable("agreement needs gold"))
        if kind == "pairwise" and not r["both_parsed"] and not nothing:
            asked = set(g["order"].dropna()) if "order" in g else set()
            notes.append(not_computable("position consistency: no item parsed in both presentation orders"
                                        if {"ab", "ba"} <= asked else
                                        "position consistency needs both presentation orders"))
        if not r["requests"] and not nothing:
            notes.append(not_computable("stability needs several samples per request"))
        if kappa is not None and k in kappa.index:
            kr = kappa.loc[k] if len(by) > 1 else kappa.loc[k[0]]
            r.update(kappa=float(kr["kappa"]), kappa_low=float(kr["kappa_low"]), kappa_high=float(kr["kappa_high"]),
                     kappa_method=str(kr["kappa_method"]))
        else:
            r.update(kappa=NAN, kappa_low=NAN, kappa_high=NAN, kappa_method="")
        # leniency against the reference anchor set of the same other design values
        r.update(leniency_shift=NAN, leniency_shift_low=NAN, leniency_shift_high=NAN, leniency_shift_method="")
        if ref is not None:
            i = by.index("anchor_set")
            rk = (*k[:i], ref, *k[i + 1:])
            if rk == k:
                notes.append(not_computable(f"leniency shift: '{ref}' is the reference anchor set"))
            elif rk in per:
                a, b = s.align(per[rk], join="inner", axis=0)
                if len(a) and a[f"{len_col}_d"].sum() and b[f"{len_col}_d"].sum():
                    diff = a[f"{len_col}_n"].sum() / a[f"{len_col}_d"].sum() - b[f"{len_col}_n"].sum() / b[
                        f"{len_col}_d"].sum()
                    lo, hi, m = intervals.ratio_difference_interval_method(
                        a[f"{len_col}_n"], a[f"{len_col}_d"], b[f"{len_col}_n"], b[f"{len_col}_d"], **ci)
                    r.update(leniency_shift=float(diff), leniency_shift_low=lo, leniency_shift_high=hi,
                             leniency_shift_method=m)
        v, lo, hi, m = _cost(s, ci)
        r.update(cost_per_verdict=v, cost_per_verdict_low=lo, cost_per_verdict_high=hi, cost_per_verdict_method=m,
                 costed=int(s["cost_d"].sum()),
                 tokens_per_verdict=float(s["tok_n"].sum() / s["tok_d"].sum()) if s["tok_d"].sum() else NAN,
                 tokens=int(s["tok_d"].sum()))
        if not r["costed"] and not nothing:
            recorded = "cost_usd" in g and pd.to_numeric(g["cost_usd"], errors="coerce").notna().any()
            notes.append(not_computable("no cost_usd recorded on a parsed reply" if recorded else
                                        "no cost_usd recorded"))
        r["note"] = "; ".join(notes)
        rows.append(r)
    out = results(pd.DataFrame(rows), CONFIGURATION_MEASURES, level=confidence, keys=["configuration", *by])
    pairs = _pairs(per, by, crit, ci)
    out.attrs.update(pairs=pairs, criterion=crit, reference_anchor_set=ref or "")
    out.attrs.update(_recommend(out, pairs, crit))
    return out


def _pairs(per: dict, by: Sequence[str], crit: str, ci: dict) -> Results:
    name = {"accuracy": "acc", "position_consistency": "pc", "stability": "st", "parse_rate": "parse"}[crit]
    rows = []
    for (k1, s1), (k2, s2) in itertools.combinations(per.items(), 2):
        a, b = s1.align(s2, join="inner", axis=0)
        use = (a[f"{name}_d"] > 0) & (b[f"{name}_d"] > 0)
        a, b = a[use], b[use]
        r = {"first": _label(k1, by), "second": _label(k2, by), "items": int(len(a))}
        if len(a):
            r["difference"] = float(a[f"{name}_n"].sum() / a[f"{name}_d"].sum()
                                    - b[f"{name}_n"].sum() / b[f"{name}_d"].sum())
            lo, hi, m = intervals.ratio_difference_interval_method(a[f"{name}_n"], a[f"{name}_d"], b[f"{name}_n"],
                                                                   b[f"{name}_d"], **ci)
            if name == "st":  # an item succeeds when every one of its requests was unanimous
                sa, sb = a["un_n"] == a["st_d"], b["un_n"] == b["st_d"]
            else:  # ... when every one of its counted units succeeds (pairwise accuracy: right in both orders)
                sa, sb = a[f"{name}_n"] == a[f"{name}_d"], b[f"{name}_n"] == b[f"{name}_d"]
            t = intervals.mcnemar(int((sa & ~sb).sum()), int((~sa & sb).sum()))
            r.update(difference_low=lo, difference_high=hi, difference_method=m, first_only=t["b"],
                     second_only=t["c"], discordant=t["b"] + t["c"], mcnemar_p=t["pvalue"],
                     mcnemar_exact=t["exact"], note="")
        else:
            empty = [_label(k, by) for k, s in ((k1, s1), (k2, s2)) if not s["parse_n"].sum()]
            why = (f"nothing parsed for {' and '.join(empty)}" if empty else
                   "no item answered by both")
            r.update(difference=NAN, difference_low=NAN, difference_high=NAN, difference_method="", first_only=0,
                     second_only=0, discordant=0, mcnemar_p=NAN, mcnemar_exact=False, note=not_computable(why))
        rows.append(r)
    cols = ["first", "second", "items", "difference", "difference_low", "difference_high", "difference_method",
            "first_only", "second_only", "discordant", "mcnemar_p", "mcnemar_exact", "note"]
    frame = pd.DataFrame(rows, columns=cols)
    frame["p_holm"] = intervals.adjust_pvalues(frame["mcnemar_p"].to_numpy(float), "holm") if len(frame) else []
    return results(frame, PAIR_MEASURES, level=ci["confidence"], keys=["first", "second"])


def _fmt(v: float, col: str) -> str:
    return f"${v:.6f}" if col == "cost_per_verdict" else (f"{v:.0f}" if col == "tokens_per_verdict" else
                                                          f"{100 * v:.1f}%")


def _recommend(out: pd.DataFrame, pairs: pd.DataFrame, crit: str) -> dict:
    col, label = CRITERIA[crit]
    ok = out[out[col].notna()]
    if ok.empty:
        return {"recommendation": f"No configuration can be ranked on {label}: "
                                  f"{out['note'].iloc[0] or 'no value'}.", "best": "", "indistinguishable": []}
    ok = ok.sort_values(col, ascending=False, kind="stable")
    best = ok.iloc[0]
    level = out.attrs.get("level") or getattr(out, "level", None) or 0.95
    tied = []
    for _, o in ok.iloc[1:].iterrows():
        p = pairs[((pairs["first"] == best["configuration"]) & (pairs["second"] == o["configuration"]))
                  | ((pairs["second"] == best["configuration"]) & (pairs["first"] == o["configuration"]))]
        lo, hi = (float(p["difference_low"].iloc[0]), float(p["difference_high"].iloc[0])) if len(p) else (NAN, NAN)
        paired_apart = np.isfinite(lo) and np.isfinite(hi) and (lo > 0 or hi < 0)
        if not (paired_apart and _disjoint(best, o, col)):
            tied.append(o["configuration"])
    head = (f"{best['configuration']} has the highest {label}, {_fmt(best[col], col)} "
            f"[{_fmt(best[f'{col}_low'], col).rstrip('%')}, {_fmt(best[f'{col}_high'], col).rstrip('%')}]"
            if np.isfinite(best[f"{col}_low"]) else
            f"{best['configuration']} has the highest {label}, {_fmt(best[col], col)} (no interval)")
    if len(ok) == 1:
        return {"recommendation": f"{head}; it is the only configuration with a value, so there is nothing to "
                                  "compare it with.", "best": best["configuration"], "indistinguishable": []}
    if not tied:
        return {"recommendation": f"Recommended: {best['configuration']}. {head} ({level:.0%} intervals); its "
                                  f"interval overlaps no other configuration's and every paired difference's interval "
                                  f"excludes 0.", "best": best["configuration"], "indistinguishable": []}
    group = out[out["configuration"].isin([best["configuration"], *tied])]
    for cc in ("cost_per_verdict", "tokens_per_verdict"):
        priced = group[group[cc].notna()]
        if not priced.empty:
            cheap = priced.sort_values(cc, kind="stable").iloc[0]
            what = "cost per verdict" if cc == "cost_per_verdict" else "tokens per verdict (no cost recorded)"
            pick = f"pick on cost: the cheapest of them by {what} is {cheap['configuration']} ({_fmt(cheap[cc], cc)})"
            break
    else:
        pick = "pick on cost: no cost or tokens were recorded, so cost cannot decide either"
    return {"recommendation": f"No configuration is distinguishable from {best['configuration']} on {label}: "
                              f"{head}, and {', '.join(tied)} {'is' if len(tied) == 1 else 'are'} not distinguishable "
                              f"from it (the intervals overlap or the paired difference's interval holds 0); {pick}.",
            "best": best["configuration"], "indistinguishable": tied}
