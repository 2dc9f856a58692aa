"""Positive-bias inflation across anchor sets: the estimators (the experiment is :func:`evallab.experiments.run_experiment`).

The MeowKit rubric rules (spec "Rubric Library", rules 1, 4, 5; ``calibration-guide.md``) claim that PASS-only
anchors inflate an evaluator's pass rate by 40–60% and that FAIL-last anchors prime FAIL. This module measures
both for a user's own judge.

Estimators (all take the tidy verdict table; unparsed replies are excluded and counted, never scored)
--------------------------------------------------------------------------------------------------
- :func:`pass_rate` — share of parsed replies that are ``pass`` per anchor set.
- :func:`inflation_table` — per anchor set against a baseline (default ``balanced``), on the items both share:
  pass rate, inflation = pass rate(variant) / pass rate(baseline) − 1, false-pass rate on gold-FAIL items,
  agreement with gold, each with a percentile bootstrap interval over items (``scipy.stats.bootstrap``, paired:
  the same resampled items for variant and baseline), and McNemar's test on one verdict pair per item (the
  majority verdict of the item's parsed samples; even splits dropped and counted) (:func:`evallab.metrics._intervals.mcnemar`),
  both of the pass/fail flips and of the right/wrong changes against gold (two tests, each labelled for what it tests).
- :func:`position_priming` — verdict shift between ``fail-last`` (grouped, FAIL last) and ``balanced``
  (alternating): pass-rate difference with a paired bootstrap interval, flip rate and McNemar.

Each returns a :class:`evallab.Results`: its ``measures`` give every estimate column's label, unit, interval
columns, n column and what n counts; an interval's method is named per row in ``<column>_method`` — the method
that computed it (:func:`evallab.metrics._intervals.ratio_interval_method`: Wilson when every item holds one reply,
an item bootstrap otherwise, a Wilson fallback named as such; :func:`~evallab.metrics._intervals.
ratio_difference_interval_method` for the paired differences: a paired item bootstrap, or, when no item changed,
the bound from the Wilson interval of 0 of n items changed).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab._results import WILSON, Measure, Results, bootstrap_method, results
from evallab.errors import DataError
from evallab.metrics import _intervals as stats
from evallab.metrics._design import groups, needs_verdicts

NAN = float("nan")


def _count(column: str, label: str) -> Measure:
    return Measure(column, label, "count")


def _interval(column: str, label: str, unit: str, n: str, n_unit: str = "items", **kw) -> Measure:
    """A measure whose interval is ``<column>_low``/``_high`` and whose method is named per row in
    ``<column>_method``."""
    return Measure(column, label, unit, f"{column}_low", f"{column}_high", method_column=f"{column}_method", n=n,
                   n_unit=n_unit, **kw)


#: the measures of :func:`pass_rate`, :func:`inflation_table` and :func:`position_priming`
COUNTS = [_count("items", "Items"), _count("replies", "Replies"), _count("unparsed", "Unparsed replies")]
PASS_RATE_MEASURES = [*COUNTS, _count("passes", "Passes"),
                      _interval("pass_rate", "Pass rate", "proportion", "items")]
INFLATION_MEASURES = [
    *COUNTS, _count("gold_fail_items", "Gold-FAIL items"), _count("gold_pass_items", "Gold-PASS items"),
    _count("gold_items", "Items with gold"),
    _interval("delta_false_pass", "Δ false-pass rate on gold FAIL", "pp", "gold_fail_items"),
    _interval("delta_true_pass", "Δ pass rate on gold PASS", "pp", "gold_pass_items"),
    _interval("false_pass_rate", "False-pass rate on gold FAIL", "proportion", "gold_fail_items"),
    _interval("true_pass_rate", "Pass rate on gold PASS", "proportion", "gold_pass_items"),
    _interval("pass_rate", "Pass rate", "proportion", "items"),
    _interval("inflation", "Inflation (pass-rate ratio − 1)", "proportion", "items"),
    _interval("agreement", "Agreement with gold", "proportion", "gold_items"),
    _interval("delta_agreement", "Δ agreement with gold", "pp", "gold_items"),
    _count("mcnemar_b", "Items to pass (McNemar b)"), _count("mcnemar_c", "Items to fail (McNemar c)"),
    Measure("mcnemar_p", "Pass/fail flips, McNemar p", "p-value"),
    _count("mcnemar_ties", "Items tied (McNemar)"),
    _count("agreement_mcnemar_b", "Items turned right (McNemar b)"),
    _count("agreement_mcnemar_c", "Items turned wrong (McNemar c)"),
    Measure("agreement_mcnemar_p", "Right/wrong changes against gold, McNemar p", "p-value"),
    _count("agreement_mcnemar_ties", "Items tied (agreement McNemar)"),
]
PRIMING_MEASURES = [
    _count("items", "Items"), _count("pairs", "Items paired"), _count("ties", "Items tied"),
    Measure("pass_rate_primed", "Pass rate (primed)", "proportion", n="items", n_unit="items"),
    Measure("pass_rate_baseline", "Pass rate (baseline)", "proportion", n="items", n_unit="items"),
    _interval("shift", "Pass-rate shift (primed − baseline)", "pp", "items"),
    Measure("flip_rate", "Flip rate", "proportion", "flip_rate_low", "flip_rate_high", method=WILSON, n="pairs",
            n_unit="items"),
    _count("to_fail", "Items to fail"), _count("to_pass", "Items to pass"),
    Measure("mcnemar_p", "Pass/fail flips, McNemar p", "p-value"),
]


# --------------------------------------------------------------------------------------------- estimators
def _prep(df: pd.DataFrame) -> pd.DataFrame:
    need = {"item_id", "anchor_set", "verdict"}
    missing = sorted(need - set(df.columns))
    if missing:
        raise DataError(f"verdict table lacks column(s) {missing}", column=missing[0])
    d = df.copy()
    if "sample" not in d.columns:
        d["sample"] = 0
    if "gold" not in d.columns:
        d["gold"] = pd.NA
    v = d["verdict"].astype("string").str.lower()
    g = d["gold"].astype("string").str.lower()
    parsed = v.notna()
    d["_parsed"] = parsed.astype(int)
    d["_pass"] = (parsed & (v == "pass")).astype(int)
    gp = parsed & g.notna()
    d["_gold_n"] = gp.astype(int)
    d["_correct"] = (gp & (v == g)).fillna(False).astype(int)
    gf = parsed & (g == "fail")
    d["_gf_n"] = gf.fillna(False).astype(int)
    d["_gf_pass"] = (gf & (v == "pass")).fillna(False).astype(int)
    gp = parsed & (g == "pass")
    d["_gp_n"] = gp.fillna(False).astype(int)
    d["_gp_pass"] = (gp & (v == "pass")).fillna(False).astype(int)
    d["_gold_any"] = g.notna().astype(int)
    d["_gf_any"] = (g == "fail").fillna(False).astype(int)
    d["_gp_any"] = (g == "pass").fillna(False).astype(int)
    d["_v"] = v
    return d


_CNT = ["_parsed", "_pass", "_gold_n", "_correct", "_gf_n", "_gf_pass", "_gp_n", "_gp_pass", "_gold_any",
        "_gf_any", "_gp_any"]


def _per_item(g: pd.DataFrame) -> pd.DataFrame:
    return g.groupby("item_id", observed=True)[_CNT].sum()


def _r(num: np.ndarray, den: np.ndarray) -> float:
    s = den.sum()
    return float(num.sum() / s) if s else NAN


def _boot(arrays: Sequence[np.ndarray], fn, *, n_resamples: int, confidence: float, seed: int
          ) -> tuple[float, float, str]:
    """Interval over items of ``fn`` of the per-item count columns ``arrays`` (resampled jointly) and the name of
    the method that computed it: a ratio of two columns by :func:`~evallab.metrics._intervals.ratio_interval_method`,
    a paired difference of two ratios by :func:`~evallab.metrics._intervals.ratio_difference_interval_method`, any
    other statistic by a paired percentile bootstrap (:func:`evallab.metrics._intervals.bootstrap_sums`).
    ``(nan, nan, "")`` when the statistic itself is undefined on the data or there is no interval."""
    sums = np.column_stack([np.asarray(a, dtype=float) for a in arrays])
    with np.errstate(invalid="ignore", divide="ignore"):
        point = fn(sums.sum(0))
    if not np.isfinite(point):
        return NAN, NAN, ""
    if len(arrays) == 2:
        return stats.ratio_interval_method(sums[:, 0], sums[:, 1], n_resamples=n_resamples, confidence=confidence,
                                           seed=seed)
    if len(arrays) == 4 and fn is _diff_fn:
        return stats.ratio_difference_interval_method(*sums.T, n_resamples=n_resamples, confidence=confidence,
                                                      seed=seed)
    lo, hi = stats.bootstrap_sums(sums, fn, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return lo, hi, bootstrap_method(n_resamples, "item", paired=True) if np.isfinite(lo) else ""


def _ratio_fn(t):
    n, d = t[..., 0], t[..., 1]
    return np.where(d > 0, n / np.where(d > 0, d, 1), np.nan)


def _inflation_fn(t):
    rv, rb = _ratio_fn(t[..., :2]), _ratio_fn(t[..., 2:])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(rb > 0, rv / np.where(rb > 0, rb, 1) - 1, np.nan)


def _diff_fn(t):
    return _ratio_fn(t[..., :2]) - _ratio_fn(t[..., 2:])


def _majority(g: pd.DataFrame, num: str = "_pass", den: str = "_parsed") -> pd.Series:
    """Per item: share ``num / den`` of its replies — by default of its parsed replies that are ``pass`` (NaN when
    ``den`` is 0)."""
    it = _per_item(g)
    return (it[num] / it[den].where(it[den] > 0)).astype(float)


def _paired_verdicts(a: pd.DataFrame, b: pd.DataFrame, num: str = "_pass", den: str = "_parsed"
                     ) -> tuple[pd.DataFrame, int]:
    """One verdict pair per item for McNemar: each item's majority verdict (pass / not pass) across its parsed
    samples in anchor set ``a`` and in ``b`` (with ``num="_correct", den="_gold_n"``: right / not right against
    gold, "pass" meaning right).

    McNemar's test assumes independent pairs; the samples of one item are not, so they are reduced to the
    item's majority before pairing. Items parsed in both sets whose samples split evenly (a tie: pass share
    exactly 0.5) in either set are dropped and counted.

    Returns
    -------
    (DataFrame with columns item_id, _v_a, _v_b in {"pass", "fail"}, one row per item; number of tied items
    dropped).
    """
    sa, sb = _majority(a, num, den), _majority(b, num, den)
    both = sa.index.intersection(sb.index)
    sa, sb = sa.loc[both], sb.loc[both]
    parsed = sa.notna() & sb.notna()
    sa, sb = sa[parsed], sb[parsed]
    tie = (sa == 0.5) | (sb == 0.5)
    sa, sb = sa[~tie], sb[~tie]
    pv = pd.DataFrame({"item_id": sa.index, "_v_a": np.where(sa > 0.5, "pass", "fail"),
                       "_v_b": np.where(sb > 0.5, "pass", "fail")})
    return pv, int(tie.sum())


def _paired_flips(x: pd.DataFrame, b: pd.DataFrame, num: str = "_pass", den: str = "_parsed"
                  ) -> tuple[tuple[int, int], int]:
    """The McNemar counts of :func:`_paired_verdicts` from the per-item sums (:func:`_per_item`) of ``a`` and ``b``
    on the same items, in the same order: ((items pass in ``a`` and not in ``b``, the reverse), tied items
    dropped) — the same majorities, without grouping the replies again."""
    # numpy for _majority's num / den.where(den > 0) (the same float division) and _paired_verdicts' filters
    na, da, nb, db = (t[c].to_numpy() for t, c in ((x, num), (x, den), (b, num), (b, den)))
    with np.errstate(invalid="ignore", divide="ignore"):
        sa = np.where(da > 0, na / np.where(da > 0, da, 1).astype(float), np.nan)
        sb = np.where(db > 0, nb / np.where(db > 0, db, 1).astype(float), np.nan)
    parsed = ~np.isnan(sa) & ~np.isnan(sb)
    tie = parsed & ((sa == 0.5) | (sb == 0.5))
    keep = parsed & ~tie
    pa, pb = keep & (sa > 0.5), keep & (sb > 0.5)
    return (int((pa & ~pb).sum()), int((~pa & pb & keep).sum())), int(tie.sum())


def _groups(d: pd.DataFrame, by: Sequence[str]):
    """:func:`evallab.metrics._design.groups` over the ``by`` columns the table has."""
    return groups(d, [c for c in by if c in d.columns])


@needs_verdicts("pass rate")
def pass_rate(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, confidence: float = 0.95,
              n_resamples: int = 1000, seed: int = 0) -> Results:
    """Pass rate per group × anchor set.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table with ``item_id``, ``anchor_set``, ``verdict`` (pass/fail; NA = unparsed), optionally
        ``sample`` and ``gold``.
    by : sequence of str, default ("judge",)
        Grouping columns (those the table has).
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap; a Wilson interval needs none).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per group × anchor set: ``by`` + ``anchor_set``; ``items``, ``replies``, ``unparsed``,
        ``passes`` (counts); ``pass_rate`` (proportion: share of parsed replies that are ``pass``) with
        ``pass_rate_low``/``_high`` and ``pass_rate_method`` — Wilson when every item holds one reply, else a
        percentile bootstrap over items of the ratio of sums
        (:func:`evallab.metrics._intervals.ratio_interval_method`). Measures: :data:`PASS_RATE_MEASURES` (n: items).

    Raises
    ------
    DataError
        When the table lacks ``item_id``, ``anchor_set`` or ``verdict``.

    References
    ----------
    MeowKit spec 001, "Rubric Library" rules 1, 4, 5 (``calibration-guide.md``): the pass rate per anchor set whose
    inflation it claims; Wilson (1927) for one reply per item.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3"] * 2, "judge": "A",
    ...                                    "anchor_set": ["balanced"] * 3 + ["pass-only"] * 3,
    ...                                    "verdict": ["pass", "fail", "fail", "pass", "pass", "fail"]}))
    >>> print(pass_rate(df)[["anchor_set", "items", "passes", "pass_rate", "pass_rate_method"]].round(3)
    ...       .to_string(index=False))
    anchor_set  items  passes  pass_rate pass_rate_method
      balanced      3       1      0.333     Wilson score
     pass-only      3       2      0.667     Wilson score
    """
    d = _prep(df)
    rows = []
    for key, g in _groups(d, by):
        for v, gv in g.groupby("anchor_set", sort=False, observed=True):
            it = _per_item(gv)
            r = dict(key, anchor_set=v, items=len(it), replies=len(gv), unparsed=int(len(gv) - gv["_parsed"].sum()),
                     passes=int(it["_pass"].sum()), pass_rate=_r(it["_pass"].to_numpy(), it["_parsed"].to_numpy()))
            r["pass_rate_low"], r["pass_rate_high"], r["pass_rate_method"] = stats.ratio_interval_method(
                it["_pass"].to_numpy(), it["_parsed"].to_numpy(), n_resamples=n_resamples, confidence=confidence,
                seed=seed)
            rows.append(r)
    keys = [c for c in by if c in d.columns]
    return results(pd.DataFrame(rows), PASS_RATE_MEASURES, level=confidence, keys=[*keys, "anchor_set"])


#: the estimates of :func:`inflation_table` with an interval, in column order
_INFLATION_ESTIMATES = ("delta_false_pass", "delta_true_pass", "false_pass_rate", "true_pass_rate", "pass_rate",
                        "inflation", "agreement", "delta_agreement")


@needs_verdicts("positive-bias inflation")
def inflation_table(df: pd.DataFrame, *, baseline: str = "balanced", variants: Sequence[str] | None = None,
                    by: Sequence[str] = ("judge",), confidence: float = 0.95, n_resamples: int = 1000,
                    seed: int = 0) -> Results:
    """Positive-bias inflation per anchor set against ``baseline``: the change in the false-pass rate on gold-FAIL
    items and in the pass rate on gold-PASS items, in percentage points with paired intervals (the headline), then
    the pass-rate ratio (secondary: undefined at a zero baseline and dependent on it).

    MeowKit (spec 001, "PASS / WARN / FAIL Anchors") reports "40–60% positive bias inflation when evaluators saw
    only PASS examples"; a pass-rate ratio mixes items that should pass with items that should fail, so evallab
    splits it by gold.

    Each variant is compared with the baseline on the items both were judged on (within each ``by`` group).

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table with ``anchor_set``, ``verdict`` (pass/fail, NA = unparsed), ``gold`` (pass/fail or
        NA), ``item_id``, ``sample``.
    baseline : str, default "balanced"
        The anchor set the others are compared with (``balanced``: alternating, PASS first).
    variants : sequence of str, optional
        Anchor sets to report (default every one present, baseline first).
    by : sequence of str, default ("judge",)
        Grouping columns (those the table has).
    confidence : float, default 0.95
        Level of every interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per group × anchor set (baseline row first, with NaN comparisons and the note "baseline ..."):
        ``items``, ``replies``, ``unparsed``, ``gold_fail_items``, ``gold_pass_items``, ``gold_items`` (counts
        of the items compared: all, gold FAIL, gold PASS, with gold); ``delta_false_pass`` = false-pass rate −
        baseline's (pp, gold-FAIL items), ``delta_true_pass`` = pass rate on gold-PASS items − baseline's (pp);
        ``false_pass_rate`` = share of parsed replies on gold-FAIL items that are ``pass`` (proportion);
        ``true_pass_rate`` = the same on gold-PASS items; ``pass_rate`` (all items); ``inflation`` =
        pass_rate / baseline pass_rate − 1 (proportion, −1 .. +inf, NaN at a zero baseline); ``agreement`` =
        share of parsed replies equal to gold; ``delta_agreement`` (pp). Each estimate ``x`` has ``x_low``/
        ``x_high`` and ``x_method``, the method that computed that row's interval: for a rate, Wilson when every
        item holds one reply, else a percentile item bootstrap (:func:`evallab.metrics._intervals.
        ratio_interval_method`); for a difference, a paired item bootstrap (variant and baseline resampled
        together), or — when no item changed — the bound from the Wilson interval of 0 of n items changed
        (:func:`evallab.metrics._intervals.ratio_difference_interval_method`); for the ratio, a paired item
        bootstrap. ``mcnemar_b`` (items: variant pass, baseline not pass), ``mcnemar_c`` (variant not pass,
        baseline pass), ``mcnemar_p`` (p-value), ``mcnemar_ties`` — McNemar's exact test of the pass/fail flips
        (not of agreement with gold) on ONE pair per item (its samples are not independent): each item's majority
        verdict across its parsed samples in the variant and in the baseline; an item whose samples split evenly
        (pass share 0.5) in either set is dropped and counted in ``mcnemar_ties``. ``agreement_mcnemar_b`` (items
        right against gold under the variant, not under the baseline), ``agreement_mcnemar_c`` (the reverse),
        ``agreement_mcnemar_p``, ``agreement_mcnemar_ties`` — the same exact test of the changes in agreement with
        gold, on each item's majority of right replies among its parsed replies with gold (the test beside
        ``agreement``; it differs from the pass/fail one when an item turns from a right FAIL to a wrong PASS and
        another from a wrong FAIL to a right PASS). ``note``: why the ratio has no interval. Measures: :data:`INFLATION_MEASURES` (n: the items of the estimate's gold class).

    Raises
    ------
    DataError
        When the table lacks a needed column or the baseline anchor set is absent.

    References
    ----------
    MeowKit spec 001, "PASS / WARN / FAIL Anchors" (the 40–60% claim); McNemar (1947) for the flips
    (:func:`evallab.metrics._intervals.mcnemar`); Efron and Tibshirani (1993), ch. 13, for the paired percentile
    bootstrap over items.

    Examples
    --------
    PASS-only anchors turn q2 (gold FAIL) into a pass: the pass rate doubles (inflation +100%), the false-pass rate
    on the two gold-FAIL items rises by 50 pp; one flip to pass, none to fail (McNemar p = 1):

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3"] * 2, "judge": "A",
    ...                                    "anchor_set": ["balanced"] * 3 + ["pass-only"] * 3,
    ...                                    "verdict": ["pass", "fail", "fail", "pass", "pass", "fail"],
    ...                                    "gold": ["pass", "fail", "fail"] * 2}))
    >>> t = inflation_table(df, n_resamples=50)
    >>> print(t[["anchor_set", "pass_rate", "inflation", "delta_false_pass", "mcnemar_b", "mcnemar_c", "mcnemar_p"]]
    ...       .round(3).to_string(index=False))
    anchor_set  pass_rate  inflation  delta_false_pass  mcnemar_b  mcnemar_c  mcnemar_p
      balanced      0.333        NaN               NaN          0          0        NaN
     pass-only      0.667        1.0               0.5          1          0        1.0
    """
    d = _prep(df)
    if not (d["anchor_set"] == baseline).any():
        raise DataError(f"baseline anchor set {baseline!r} is absent; present: "
                        f"{sorted(d['anchor_set'].dropna().unique())}", column="anchor_set")
    present = list(dict.fromkeys(d["anchor_set"].dropna()))
    wanted = [baseline] + [v for v in (variants or present) if v != baseline and v in present]
    kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    rows = []
    for key, g in _groups(d, by):
        gb = g[g["anchor_set"] == baseline]
        if gb.empty:
            continue
        base_items = _per_item(gb)
        for v in wanted:
            gv = g[g["anchor_set"] == v]
            if gv.empty:
                continue
            it = _per_item(gv)
            common = it.index.intersection(base_items.index)
            x, b = it.loc[common], base_items.loc[common]
            gv = gv[gv["item_id"].isin(common)]
            r = dict(key, anchor_set=v, baseline=baseline, items=len(common), replies=len(gv),
                     unparsed=int(len(gv) - gv["_parsed"].sum()),
                     gold_fail_items=int(((x["_gf_any"] + b["_gf_any"]) > 0).sum()),
                     gold_pass_items=int(((x["_gp_any"] + b["_gp_any"]) > 0).sum()),
                     gold_items=int(((x["_gold_any"] + b["_gold_any"]) > 0).sum()), note="")
            for name, num, den in (("pass_rate", "_pass", "_parsed"), ("false_pass_rate", "_gf_pass", "_gf_n"),
                                   ("true_pass_rate", "_gp_pass", "_gp_n"), ("agreement", "_correct", "_gold_n")):
                r[name] = _r(x[num].to_numpy(), x[den].to_numpy())
                r[f"{name}_low"], r[f"{name}_high"], r[f"{name}_method"] = _boot([x[num], x[den]], _ratio_fn, **kw)
            arrays = [x["_pass"], x["_parsed"], b["_pass"], b["_parsed"]]
            if v == baseline:
                for c in ("inflation", "delta_false_pass", "delta_true_pass", "delta_agreement"):
                    r[c] = r[f"{c}_low"] = r[f"{c}_high"] = NAN
                    r[f"{c}_method"] = ""
                r["mcnemar_b"] = r["mcnemar_c"] = r["mcnemar_ties"] = 0
                r["agreement_mcnemar_b"] = r["agreement_mcnemar_c"] = r["agreement_mcnemar_ties"] = 0
                r["mcnemar_p"] = r["agreement_mcnemar_p"] = NAN
                r["note"] = f"baseline: the anchor set the others are compared with ({baseline})"
            else:
                r["inflation"] = float(_inflation_fn(np.array([np.sum(a) for a in arrays], dtype=float)))
                r["inflation_low"], r["inflation_high"], r["inflation_method"] = _boot(arrays, _inflation_fn, **kw)
                why = stats.no_interval_note(r["inflation"], r["inflation_low"], r["inflation_high"],
                                             units=len(common), n_resamples=n_resamples)
                r["note"] = f"pass-rate ratio: {why}" if why else ""
                for c, num, den in (("delta_false_pass", "_gf_pass", "_gf_n"), ("delta_true_pass", "_gp_pass", "_gp_n"),
                                    ("delta_agreement", "_correct", "_gold_n")):
                    arr = [x[num], x[den], b[num], b[den]]
                    r[c] = float(_diff_fn(np.array([np.sum(a) for a in arr], dtype=float)))
                    r[f"{c}_low"], r[f"{c}_high"], r[f"{c}_method"] = _boot(arr, _diff_fn, **kw)
                for pre, num, den in (("", "_pass", "_parsed"), ("agreement_", "_correct", "_gold_n")):
                    flips, ties = _paired_flips(x, b, num, den)
                    m = stats.mcnemar(*flips)
                    r[f"{pre}mcnemar_b"], r[f"{pre}mcnemar_c"], r[f"{pre}mcnemar_p"] = m["b"], m["c"], m["pvalue"]
                    r[f"{pre}mcnemar_ties"] = ties
            rows.append(r)
    keys = [c for c in by if c in d.columns]
    cols = [*keys, "anchor_set", "baseline", "items", "replies", "unparsed", "gold_fail_items", "gold_pass_items",
            "gold_items"]
    for c in _INFLATION_ESTIMATES:
        cols += [c, f"{c}_low", f"{c}_high", f"{c}_method"]
    cols += ["mcnemar_b", "mcnemar_c", "mcnemar_p", "mcnemar_ties", "agreement_mcnemar_b", "agreement_mcnemar_c",
             "agreement_mcnemar_p", "agreement_mcnemar_ties", "note"]
    return results(pd.DataFrame(rows, columns=cols), INFLATION_MEASURES, level=confidence,
                   keys=[*keys, "anchor_set"])


@needs_verdicts("position priming")
def position_priming(df: pd.DataFrame, *, primed: str = "fail-last", baseline: str = "balanced",
                     by: Sequence[str] = ("judge",), confidence: float = 0.95, n_resamples: int = 1000,
                     seed: int = 0) -> Results:
    """Verdict shift between grouped FAIL-last anchors and alternating anchors (spec "Position bias", rule 5).

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table as for :func:`inflation_table`.
    primed : str, default "fail-last"
        The anchor set that may prime FAIL.
    baseline : str, default "balanced"
        The anchor set it is compared with.
    by : sequence of str, default ("judge",)
        Grouping columns (those the table has).
    confidence, n_resamples, seed
        As for :func:`inflation_table`.

    Returns
    -------
    Results
        One row per group: ``primed``, ``baseline``; ``items`` (compared), ``pairs`` (items paired on their
        majority verdict across parsed samples, as in :func:`inflation_table`), ``ties`` (items dropped because
        their samples split evenly in either set) — counts; ``pass_rate_primed``, ``pass_rate_baseline``
        (proportions); ``shift`` = pass_rate_primed − pass_rate_baseline (pp, in [−1, 1]; negative = FAIL primed)
        with ``shift_low``/``shift_high`` and ``shift_method`` (paired percentile bootstrap over items on all
        replies, or the Wilson bound when no item changed: :func:`evallab.metrics._intervals.
        ratio_difference_interval_method`); ``flip_rate`` = share of paired items whose majority verdict differs
        (proportion) with ``flip_rate_low``/``_high`` (Wilson: one pair per item); ``to_fail`` (items: baseline
        pass → primed not pass), ``to_pass`` (baseline not pass → primed pass); ``mcnemar_p`` (exact McNemar on
        those item pairs, a p-value); ``note`` (why the shift has no interval). Measures:
        :data:`PRIMING_MEASURES`.

    Raises
    ------
    DataError
        When either anchor set is absent.

    References
    ----------
    MeowKit spec 001, "Position bias" (rule 5: FAIL-last anchors prime FAIL); McNemar (1947).

    Examples
    --------
    FAIL-last anchors turn q1 from pass to fail: shift −1/3, one of three items flipped, to fail.

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3"] * 2, "judge": "A",
    ...                                    "anchor_set": ["balanced"] * 3 + ["fail-last"] * 3,
    ...                                    "verdict": ["pass", "fail", "fail", "fail", "fail", "fail"]}))
    >>> p = position_priming(df, n_resamples=50)
    >>> print(p[["items", "pass_rate_primed", "pass_rate_baseline", "shift", "flip_rate", "to_fail"]].round(3)
    ...       .to_string(index=False))
    items  pass_rate_primed  pass_rate_baseline  shift  flip_rate  to_fail
        3               0.0               0.333 -0.333      0.333        1
    """
    d = _prep(df)
    for v in (primed, baseline):
        if not (d["anchor_set"] == v).any():
            raise DataError(f"anchor set {v!r} is absent; present: {sorted(d['anchor_set'].dropna().unique())}",
                            column="anchor_set")
    rows = []
    for key, g in _groups(d, by):
        gp, gb = g[g["anchor_set"] == primed], g[g["anchor_set"] == baseline]
        if gp.empty or gb.empty:
            continue
        ip, ib = _per_item(gp), _per_item(gb)
        common = ip.index.intersection(ib.index)
        x, b = ip.loc[common], ib.loc[common]
        arrays = [x["_pass"], x["_parsed"], b["_pass"], b["_parsed"]]
        r = dict(key, primed=primed, baseline=baseline, items=len(common))
        pv, ties = _paired_verdicts(gp[gp["item_id"].isin(common)], gb[gb["item_id"].isin(common)])
        r["pairs"], r["ties"] = len(pv), ties
        r["pass_rate_primed"] = _r(x["_pass"].to_numpy(), x["_parsed"].to_numpy())
        r["pass_rate_baseline"] = _r(b["_pass"].to_numpy(), b["_parsed"].to_numpy())
        r["shift"] = r["pass_rate_primed"] - r["pass_rate_baseline"]
        r["shift_low"], r["shift_high"], r["shift_method"] = _boot(arrays, _diff_fn, n_resamples=n_resamples,
                                                                   confidence=confidence, seed=seed)
        to_fail = int(((pv["_v_a"] != "pass") & (pv["_v_b"] == "pass")).sum())
        to_pass = int(((pv["_v_a"] == "pass") & (pv["_v_b"] != "pass")).sum())
        flips = int((pv["_v_a"] != pv["_v_b"]).sum())
        r["flip_rate"] = flips / len(pv) if len(pv) else NAN
        r["flip_rate_low"], r["flip_rate_high"] = stats.wilson(flips, len(pv), confidence)
        r["to_fail"], r["to_pass"] = to_fail, to_pass
        r["mcnemar_p"] = stats.mcnemar(to_pass, to_fail)["pvalue"]
        why = stats.no_interval_note(r["shift"], r["shift_low"], r["shift_high"], units=len(common),
                                     n_resamples=n_resamples)
        r["note"] = f"shift: {why}" if why else ""
        rows.append(r)
    keys = [c for c in by if c in d.columns]
    return results(pd.DataFrame(rows), PRIMING_MEASURES, level=confidence, keys=keys)


@needs_verdicts("positive-bias inflation")
def inflation_tables(df: pd.DataFrame, *, baseline: str = "balanced", primed: str = "fail-last"
                     ) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The anchor-set study's tables (``evallab inflation run|table``): inflation per anchor set, and the position
    priming when the table holds both ``primed`` and ``baseline`` anchor sets.

    Parameters
    ----------
    df : DataFrame
        A tidy verdict table with ``anchor_set`` (e.g. from :func:`evallab.experiments.run_experiment`).
    baseline : str, default "balanced"
        The anchor set compared against.
    primed : str, default "fail-last"
        The anchor set of the position-priming comparison.

    Returns
    -------
    (DataFrame, DataFrame or None)
        :func:`inflation_table` against ``baseline``, and :func:`position_priming` of ``primed`` against
        ``baseline`` (``None`` when either set is absent), each with their default intervals.

    Raises
    ------
    DataError
        See :func:`inflation_table`.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2"] * 2, "judge": "A",
    ...                                    "anchor_set": ["balanced"] * 2 + ["pass-only"] * 2,
    ...                                    "verdict": ["pass", "fail", "pass", "pass"]}))
    >>> table, priming = inflation_tables(df)
    >>> table["anchor_set"].tolist(), priming is None
    (['balanced', 'pass-only'], True)
    """
    table = inflation_table(df, baseline=baseline)
    priming = position_priming(df, primed=primed, baseline=baseline) if {primed, baseline} <= set(df["anchor_set"]) \
        else None
    return table, priming
