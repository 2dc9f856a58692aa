"""Judge drift: a baseline and a candidate judge on the same requests, per group, with MeowKit's gate.

When a judge model is upgraded (or its prompt or parser changes), which verdicts moved, and by how much?
MeowKit rule 6 (spec 001, "Calibration Set and Drift Check"; ``data/meowkit/rules/rubric-rules.md``): "when a new
model tier ships ..., replay the calibration set with the new model. Re-evaluator agreement with stored gold
verdicts must stay within 5% per rubric. If drift exceeds 5%, recalibrate". What the gate here TESTS is the share of
the calibration verdicts that changed between the old and the new judge (the flip rate) against the 5% tolerance —
not each judge's agreement with gold. The two are related: the change in agreement with gold is at most the flip
rate (a verdict that did not change cannot change its agreement), so a flip rate within 5% keeps the agreement with
gold within 5%, while a larger flip rate need not move it (a judge can change half its verdicts and keep its
accuracy). The change in accuracy against gold is shown beside the flip rate, with its own interval.

Estimators (all take tidy verdict tables, :mod:`evallab.verdicts`)
------------------------------------------------------------------
- :func:`compare` — baseline vs candidate replies paired on the same request (dataset, item, strategy, anchor set,
  order, sample by default), per group and over all pairs: the flip rate (changed / both parsed) and raw agreement
  with exact intervals on items (Clopper–Pearson, each item counted once), Cohen's kappa (:func:`evallab.metrics._agreement.cohen_kappa`), the flip table,
  accuracy vs gold of each with the paired difference (item-cluster bootstrap), McNemar's test pairing ITEMS (an
  item counts for the baseline when more of its replies are right under the baseline), and the gate.
- :func:`gate` — per group and overall: one-sided exact test of H0 "flip rate ≤ tolerance" with the item as the
  unit (:func:`evallab.metrics._intervals.item_exact_test_greater`), p-values adjusted across the groups (Holm by
  default, or Benjamini–Hochberg; statsmodels; the overall row is tested alone, unadjusted). The stated rule: a
  group DRIFTS when its adjusted p < α (its flip rate exceeds the tolerance beyond chance); it is WITHIN tolerance
  when the upper bound of its flip-rate interval (the same exact method, per group, at the report's level) ≤
  tolerance; otherwise INCONCLUSIVE (too few items to tell). Test and interval are one method at every count
  (Clopper–Pearson on items, :func:`evallab.metrics._intervals.item_exact_interval`): adding a changed verdict at a
  fixed number of items never improves a status. The gate fails when any group or the overall row drifts;
  inconclusive groups are listed.
- :func:`compare_judges` — the same on one table holding both judges (e.g. LLMBar's ChatGPT-0301 and ChatGPT).

The tables of a :class:`DriftReport` are :class:`evallab.Results`: each estimate column's label, unit, interval
columns, n and interval method (per row: ``flip_rate_method``, ``kappa_method``, ``delta_method``) are in
:data:`MEASURES`, so a report shows the method that computed each interval.

Conventions: unparsed replies (NA verdicts) are counted (``unparsed_baseline``/``unparsed_candidate``) and excluded;
they are never scored as wrong and never counted as a flip (the flip table shows them as ``unparsed``). Accuracy of
a judge = correct / parsed replies with gold, over the paired replies only, so the difference is paired.

The calibration-set format is :func:`evallab.datasets.load_gold_set`'s; replaying it through a judge is
:func:`evallab.experiments.calibration_drift`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evallab import verdicts as V
from evallab._results import Measure, Results, results
from evallab.errors import DataError, EvallabError
from evallab.metrics import _intervals as stats
from evallab.metrics._agreement import cohen_kappa_method
from evallab.metrics._design import _per_group, item_key, needs_verdicts

#: how replies of the two tables are paired by default: the same request (judge label aside)
MATCH_ON = ("dataset", "item_id", "strategy", "anchor_set", "order", "sample")
DEFAULT_BY = ("subset", "strategy")
#: columns naming the two outputs a pairwise verdict compares (AlpacaEval's baseline and evaluated model): when both
#: tables carry one, paired replies must agree on it, else they judged different pairs
OUTPUT_COLUMNS = ("generator_1", "generator_2")
DEFAULT_TOLERANCE = 0.05
NAN = float("nan")
UNPARSED = "unparsed"
#: float guard: a move of exactly the tolerance (up to rounding) is not "more than" it
_EPS = 1e-9


def _count(column: str, label: str) -> Measure:
    return Measure(column, label, "count")


#: what each estimate column of :func:`summarize_pairs` (``DriftReport.groups`` / ``.overall``) means
MEASURES = (
    _count("items", "Items"),
    _count("replies", "Paired replies"),
    _count("unparsed_baseline", "Unparsed (baseline)"),
    _count("unparsed_candidate", "Unparsed (candidate)"),
    _count("both_parsed", "Both parsed"),
    _count("same", "Same verdict"),
    _count("changed", "Changed"),
    # the share is over replies; its exact interval and test count each item once, so their n is items
    Measure("flip_rate", "Verdicts changed", "proportion", "flip_rate_low", "flip_rate_high",
            method_column="flip_rate_method", n="items_compared", n_unit="items"),
    Measure("agreement", "Raw agreement", "proportion", "agreement_low", "agreement_high",
            method_column="flip_rate_method", n="items_compared", n_unit="items"),
    Measure("flip_p", "One-sided p", "p-value", n="items_compared", n_unit="items"),
    Measure("flip_p_adjusted", "Adjusted p", "p-value", n="items_compared", n_unit="items"),
    Measure("kappa", "Cohen's kappa", "coefficient", "kappa_low", "kappa_high", method_column="kappa_method",
            n="both_parsed", n_unit="replies", digits=2),
    _count("both_parsed_ab", "Both parsed (order ab)"),
    _count("same_ab", "Same verdict (order ab)"),
    _count("both_parsed_ba", "Both parsed (order ba)"),
    _count("same_ba", "Same verdict (order ba)"),
    _count("items_all_parsed", "Items with every reply parsed"),
    _count("items_compared", "Items compared (a reply of both parsed)"),
    _count("items_unchanged", "Items with every reply parsed and none changed"),
    _count("gold_replies", "Paired replies with gold"),
    _count("baseline_parsed", "Baseline parsed"),
    _count("baseline_correct", "Baseline correct"),
    _count("candidate_parsed", "Candidate parsed"),
    _count("candidate_correct", "Candidate correct"),
    Measure("baseline_accuracy", "Baseline accuracy", "proportion", n="baseline_parsed", n_unit="replies"),
    Measure("candidate_accuracy", "Candidate accuracy", "proportion", n="candidate_parsed", n_unit="replies"),
    Measure("delta_accuracy", "Δ accuracy", "pp", "delta_low", "delta_high", method_column="delta_method",
            n="gold_replies", n_unit="replies"),
    _count("mcnemar_b", "Items more often right under the baseline"),
    _count("mcnemar_c", "Items more often right under the candidate"),
    Measure("mcnemar_p", "McNemar p", "p-value", n="items", n_unit="items"),
)


# ----------------------------------------------------------------------------------------------------- pairing
def check_table(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """``df`` as a tidy verdict table: returned as is when its columns already lead with :data:`evallab.verdicts.
    COLUMNS`, else coerced (:func:`evallab.verdicts.coerce`).

    Parameters
    ----------
    df : DataFrame
        A verdict table (at least ``item_id``, ``judge``, ``verdict``).
    name : str
        What the table is (``"baseline"``, ``"candidate"``), named in errors.

    Returns
    -------
    DataFrame
        The tidy table.

    Raises
    ------
    EvallabError
        When ``df`` is not a DataFrame; :class:`~evallab.errors.VerdictTableError` from
        :func:`~evallab.verdicts.coerce` (a missing column, an unknown verdict).

    Examples
    --------
    >>> import pandas as pd
    >>> t = check_table(pd.DataFrame({"item_id": ["q1"], "judge": "old", "verdict": "Pass"}), "baseline")
    >>> list(t.columns[:4]), t["verdict"].tolist()
    (['item_id', 'dataset', 'subset', 'judge'], ['pass'])
    """
    if not isinstance(df, pd.DataFrame):
        raise EvallabError(f"{name}: expected a tidy verdict DataFrame, got {type(df).__name__}")
    if list(df.columns[: len(V.COLUMNS)]) != list(V.COLUMNS):
        df = V.coerce(df, path=name)
    return df


def pair_verdicts(baseline: pd.DataFrame, candidate: pd.DataFrame, *, match_on: Sequence[str] = MATCH_ON,
                  by: Sequence[str] = DEFAULT_BY) -> pd.DataFrame:
    """Pair the replies of two judges on the same requests.

    Parameters
    ----------
    baseline, candidate : DataFrame
        Tidy verdict tables, each one judge's replies (one reply per ``match_on`` key).
    match_on : sequence of str, default :data:`MATCH_ON`
        Columns identifying the same request in both tables (dataset, item_id, strategy, anchor_set, order,
        sample: everything in the table key but ``judge``). Drop ``strategy`` to compare two prompts (prompt
        drift).
    by : sequence of str, default ("subset", "strategy")
        Grouping columns carried along (taken from the baseline when not in ``match_on``).

    Returns
    -------
    DataFrame, one row per paired reply: ``match_on`` + ``by`` columns, ``verdict_baseline``,
    ``verdict_candidate``, ``gold`` (baseline's, else candidate's), ``both_parsed`` (bool), ``changed`` (both
    parsed and different). ``attrs`` holds ``baseline_only`` / ``candidate_only`` (replies without a partner)
    and the judge labels.

    Raises
    ------
    DataError
        A missing column, a ``match_on`` key repeated within one table (e.g. two judges in one table), gold that
        differs between the tables for the same reply, paired replies comparing different outputs
        (:data:`OUTPUT_COLUMNS`, e.g. AlpacaEval files against different baselines), or no reply in common.

    Examples
    --------
    Six calibration items; the new judge changes q2 and q4 and leaves q6 unparsed: 2 of 5 verdicts changed.

    >>> import pandas as pd
    >>> base = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5", "q6"], "judge": "old", "gold": ["pass", "pass",
    ...     "fail", "pass", "pass", "fail"], "verdict": ["pass", "pass", "fail", "fail", "pass", "fail"]})
    >>> cand = base.assign(judge="new", verdict=["pass", "fail", "fail", "pass", "pass", None])
    >>> p = pair_verdicts(base, cand, by=())
    >>> print(p[["item_id", "verdict_baseline", "verdict_candidate", "both_parsed", "changed"]].to_string(index=False))
    item_id verdict_baseline verdict_candidate  both_parsed  changed
         q1             pass              pass         True    False
         q2             pass              fail         True     True
         q3             fail              fail         True    False
         q4             fail              pass         True     True
         q5             pass              pass         True    False
         q6             fail              <NA>        False    False
    """
    baseline = check_table(baseline, "baseline")
    candidate = check_table(candidate, "candidate")
    match_on, by = list(match_on), list(by)
    bad = [c for c in match_on + by if c in ("judge", "verdict", "gold", "error")]
    if bad:
        raise DataError(f"cannot pair or group by {bad[0]!r}: it is what is compared; expected other columns "
                        f"(e.g. {list(DEFAULT_BY)})", path="candidate", column=bad[0])
    carry = [c for c in by if c not in match_on]
    for name, t in (("baseline", baseline), ("candidate", candidate)):
        missing = [c for c in match_on + (carry if name == "baseline" else []) if c not in t.columns]
        if missing:
            raise DataError(f"missing column(s) {missing} needed to pair and group replies", path=name,
                            column=missing[0])
        dup = t.duplicated(match_on)
        if dup.any():
            first = t[dup].iloc[0]
            judges = sorted(t["judge"].dropna().unique())
            raise DataError(
                f"more than one reply for {({c: first[c] for c in match_on})}; the table must hold one reply per "
                f"{match_on} (judges in it: {judges[:5]}); pass one judge per table (compare_judges splits a "
                "table) or add columns to match_on", path=name, row=int(np.flatnonzero(dup)[0]) + 1,
                column=match_on[0])
    outs = [c for c in OUTPUT_COLUMNS if c in baseline.columns and c not in match_on + carry]
    left = baseline[match_on + carry + outs + ["verdict", "gold", "judge"]]
    right = candidate[match_on + ["verdict", "gold", "judge"]]
    p = left.merge(right, on=match_on, how="inner", suffixes=("_baseline", "_candidate"))
    if p.empty:
        sample = {c: sorted(baseline[c].dropna().astype(str).unique())[:3] for c in match_on if c != "item_id"}
        sample_c = {c: sorted(candidate[c].dropna().astype(str).unique())[:3] for c in match_on if c != "item_id"}
        raise DataError(f"no reply in common on {match_on}; baseline has {sample}, candidate has {sample_c} "
                        "(drop the differing columns from match_on — report 05's match_on parameter —, e.g. "
                        "strategy when the two judges are two prompts or annotator configurations)",
                        path="candidate", column="item_id")
    for c in (c for c in OUTPUT_COLUMNS if c not in match_on and c in left.columns and c in candidate.columns):
        other = p[match_on].merge(candidate[match_on + [c]], on=match_on, how="left")[c]
        differ = (p[c].astype("string") != other.astype("string").to_numpy()).fillna(False).to_numpy(bool)
        if differ.any():
            r = p[differ].iloc[0]
            raise DataError(f"the paired replies judge different pairs: {c} is {r[c]!r} in the baseline and "
                            f"{other[differ].iloc[0]!r} in the candidate for item {r['item_id']!r} ({int(differ.sum())}"
                            f" of {len(p)} paired replies); expected the same outputs compared (e.g. AlpacaEval "
                            "annotations against the same baseline generator_1)", path="candidate", column=c)
    gb, gc = p["gold_baseline"], p["gold_candidate"]
    clash = gb.notna() & gc.notna() & (gb != gc)
    if clash.any():
        r = p[clash].iloc[0]
        raise DataError(f"gold differs between the tables for item {r['item_id']!r}: baseline {r['gold_baseline']!r}"
                        f", candidate {r['gold_candidate']!r}; expected the same gold labels", path="candidate",
                        column="gold")
    p["gold"] = gb.fillna(gc)
    p = p.drop(columns=["gold_baseline", "gold_candidate"])
    a, b = p["verdict_baseline"], p["verdict_candidate"]
    p["both_parsed"] = (a.notna() & b.notna()).astype(bool)
    p["changed"] = ((a != b).fillna(False) & p["both_parsed"]).astype(bool)
    p.attrs.update(baseline_only=len(baseline) - len(p), candidate_only=len(candidate) - len(p),
                   baseline_judge=", ".join(sorted(baseline["judge"].dropna().unique())),
                   candidate_judge=", ".join(sorted(candidate["judge"].dropna().unique())))
    return p


# ------------------------------------------------------------------------------------------------- estimators
def _group_name(by: Sequence[str], key: tuple) -> str:
    return ", ".join(f"{c}={v}" for c, v in zip(by, key, strict=True)) if by else "all"


def summarize_pairs(p: pd.DataFrame, by: Sequence[str], *, confidence: float = 0.95, n_resamples: int = 1000,
                    seed: int = 0) -> Results:
    """Per group (``by``; one row "all" when empty): the drift figures of :func:`compare` from paired replies
    (:func:`pair_verdicts`). Intervals resample items.

    Parameters
    ----------
    p : DataFrame
        Paired replies (:func:`pair_verdicts`).
    by : sequence of str
        Grouping columns (``[]``: one row, "all").
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 1000
        Bootstrap resamples over items for kappa and Δ accuracy (``0``: no bootstrap; the flip rate's exact
        interval needs none).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per group with the columns listed in :class:`DriftReport` (their meanings: :data:`MEASURES`),
        each interval's method in ``flip_rate_method`` (also that of ``agreement``), ``kappa_method`` and
        ``delta_method`` (:func:`evallab.metrics._intervals.item_exact_interval` — one method at every count,
        the one the gate reads —,
        :func:`~evallab.metrics._intervals.ratio_difference_interval_method`, :func:`evallab.metrics._agreement.cohen_kappa_method`;
        ``""`` without an interval), ``note`` (why a figure is missing), and the per-item counts ``_num``/``_den``
        the gate tests. ``flip_p``, ``flip_p_adjusted`` are NaN until :func:`gate` fills them.

    References
    ----------
    MeowKit spec 001, "Calibration Set and Drift Check", rule 6 (``data/meowkit/rules/rubric-rules.md``):
    "re-evaluator agreement with stored gold verdicts must stay within 5% per rubric"; tested here as the share of
    verdicts changed between the two judges (which bounds the change in agreement with gold); Cohen (1960) for kappa; Wilson (1927).

    Examples
    --------
    Six calibration items; the new judge changes q2 and q4 and leaves q6 unparsed: 2 of the 5 verdicts both parsed
    changed (Clopper–Pearson [0.053, 0.853]); kappa = (3/5 − 0.52) / (1 − 0.52) on them:

    >>> import pandas as pd
    >>> base = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5", "q6"], "judge": "old", "gold": ["pass", "pass",
    ...     "fail", "pass", "pass", "fail"], "verdict": ["pass", "pass", "fail", "fail", "pass", "fail"]})
    >>> cand = base.assign(judge="new", verdict=["pass", "fail", "fail", "pass", "pass", None])
    >>> s = summarize_pairs(pair_verdicts(base, cand, by=()), [], n_resamples=0)
    >>> print(s[["group", "both_parsed", "changed", "flip_rate", "flip_rate_low", "flip_rate_high", "kappa"]]
    ...       .round(3).to_string(index=False))
    group  both_parsed  changed  flip_rate  flip_rate_low  flip_rate_high  kappa
      all            5        2        0.4          0.053           0.853  0.167
    >>> s["flip_rate_method"].iloc[0]
    'Clopper–Pearson (exact binomial) on items'
    """
    by = list(by)
    a, b, g = p["verdict_baseline"], p["verdict_candidate"], p["gold"]
    has_gold = g.notna().to_numpy(bool)
    both = p["both_parsed"].to_numpy(bool)
    chg = p["changed"].to_numpy(bool)
    same = both & ~chg
    a_ok, b_ok = a.notna().to_numpy(bool), b.notna().to_numpy(bool)
    a_c = (a == g).fillna(False).to_numpy(bool) & has_gold
    b_c = (b == g).fillna(False).to_numpy(bool) & has_gold
    order = p["order"].astype(str).to_numpy() if "order" in p.columns else np.full(len(p), "")
    cols = {"_one": np.ones(len(p), int), "_bothp": both, "_same": same, "_chg": chg, "_ua": ~a_ok, "_ub": ~b_ok,
            "_bp": a_ok & has_gold, "_cp": b_ok & has_gold, "_bc": a_c, "_cc": b_c, "_gold": has_gold,
            "_ab": both & (order == "ab"), "_sab": same & (order == "ab"), "_ba": both & (order == "ba"),
            "_sba": same & (order == "ba")}
    keys = by if by else ["_all"]
    item = item_key(p)
    row_groups = pd.DataFrame({k: p[k] if k in p.columns else "all" for k in keys}, index=p.index).groupby(
        keys, dropna=False, observed=True, sort=True).indices
    vb = a.astype(object).to_numpy()
    vc = b.astype(object).to_numpy()
    kw = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    # per (group, item), in item order: the sums of ``cols`` over its replies — what a groupby(keys + [item]).sum()
    # gives, without a pandas operation per figure
    group = np.empty(len(p), dtype=np.int64)
    for g, idx in enumerate(row_groups.values()):
        group[idx] = g
    per_item = _per_group(group, len(row_groups), item, int(item.max()) + 1 if len(item) else 1,
                          [np.asarray(v, dtype=float) for v in cols.values()])
    rows = []
    for g, (key, idx) in enumerate(row_groups.items()):  # the groups in sorted order, as iterating the groupby
        key_t = key if isinstance(key, tuple) else (key,)
        per = per_item(g)  # one row per item of the group
        pi = dict(zip(cols, per.T, strict=True))
        s = {c: int(v.sum()) for c, v in pi.items()}
        r = dict(zip(by, key_t, strict=True)) if by else {}
        r["group"] = _group_name(by, key_t) if by else "all"
        n_both, n_chg = s["_bothp"], s["_chg"]
        full = pi["_bothp"] == pi["_one"]
        r.update(items=len(per), items_compared=int((pi["_bothp"] > 0).sum()), replies=s["_one"],
                 unparsed_baseline=s["_ua"],
                 unparsed_candidate=s["_ub"], both_parsed=n_both, same=n_both - n_chg, changed=n_chg,
                 flip_rate=n_chg / n_both if n_both else NAN)
        r["flip_rate_low"], r["flip_rate_high"], r["flip_rate_method"] = stats.item_exact_interval(
            pi["_chg"], pi["_bothp"], confidence=confidence) if n_both else (NAN, NAN, "")
        r["agreement"] = 1 - r["flip_rate"] if n_both else NAN
        r["agreement_low"], r["agreement_high"] = 1 - r["flip_rate_high"], 1 - r["flip_rate_low"]
        r["flip_p"] = NAN  # set by gate()
        ok = idx[both[idx]]
        ok_items = len(np.unique(item[ok]))
        r["kappa"], r["kappa_low"], r["kappa_high"], r["kappa_method"] = cohen_kappa_method(
            vb[ok].astype(str), vc[ok].astype(str), clusters=item[ok], **kw)
        r.update(both_parsed_ab=s["_ab"], same_ab=s["_sab"], both_parsed_ba=s["_ba"],
                 same_ba=s["_sba"], items_all_parsed=int(full.sum()),
                 items_unchanged=int((full & (pi["_same"] == pi["_one"])).sum()), gold_replies=s["_gold"])
        bp, cp, bc, cc = (s[c] for c in ("_bp", "_cp", "_bc", "_cc"))
        r.update(baseline_parsed=bp, baseline_correct=bc, candidate_parsed=cp, candidate_correct=cc)
        r["baseline_accuracy"] = bc / bp if bp else NAN
        r["candidate_accuracy"] = cc / cp if cp else NAN
        r["delta_accuracy"] = r["candidate_accuracy"] - r["baseline_accuracy"]
        gi = {c: v[pi["_gold"] > 0] for c, v in pi.items()}  # the items with a paired reply with gold
        r["delta_low"], r["delta_high"], r["delta_method"] = stats.ratio_difference_interval_method(
            gi["_cc"], gi["_cp"], gi["_bc"], gi["_bp"], **kw) if bp and cp else (NAN, NAN, "")
        # McNemar on items: which judge got more of the item's replies (both parsed, with gold) right
        mb = int((gi["_bc"] > gi["_cc"]).sum())
        mc = int((gi["_cc"] > gi["_bc"]).sum())
        m = stats.mcnemar(mb, mc)
        r["mcnemar_b"], r["mcnemar_c"], r["mcnemar_p"] = m["b"], m["c"], m["pvalue"] if r["gold_replies"] else NAN
        kn = stats.no_interval_note(r["kappa"], r["kappa_low"], r["kappa_high"], units=ok_items,
                                    n_resamples=n_resamples)
        notes = [] if n_both else ["not computable: no reply both judges parsed"]
        if not r["gold_replies"]:
            notes.append("accuracy not computable: no paired reply has a gold label")
        if kn:
            notes.append(f"Cohen's kappa: {kn}")
        r["note"] = "; ".join(notes)
        r["_num"], r["_den"] = pi["_chg"].astype(float), pi["_bothp"].astype(float)
        rows.append(r)
    return results(pd.DataFrame(rows), MEASURES, level=confidence, keys=[*by, "group"])


STATUSES = ("drift", "within", "inconclusive", "untested")


@dataclass
class GateResult:
    """Outcome of the drift gate (see :func:`gate`).

    Attributes
    ----------
    passed : bool — no group and not the overall row drifts, and at least one group could be tested.
    tolerance : float in [0, 1] — the largest acceptable flip rate (0.05: 5% of verdicts changed).
    alpha, adjust : the test level and the multiplicity adjustment across groups (``"holm"``, ``"bh"``).
    flagged : DataFrame — the groups that drift: ``group``, the ``by`` columns, ``value`` (flip rate),
        ``low``, ``high``, ``p_adjusted``.
    inconclusive, untested : lists of group names (interval straddles the tolerance; nothing parsed).
    overall : dict — the overall row's ``value``, ``low``, ``high``, ``p`` and ``status``.
    groups : int — groups tested.

    References
    ----------
    MeowKit spec 001, "Calibration Set and Drift Check", rule 6 (``data/meowkit/rules/rubric-rules.md``):
    "re-evaluator agreement with stored gold verdicts must stay within 5% per rubric"; tested here as the share of
    verdicts changed between the two judges (which bounds the change in agreement with gold).

    Examples
    --------
    The gate of :func:`compare` (``drift_summary``) on six calibration items, 2 of 5 verdicts changed:

    >>> import pandas as pd
    >>> base = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5", "q6"], "judge": "old", "gold": ["pass", "pass",
    ...     "fail", "pass", "pass", "fail"], "verdict": ["pass", "pass", "fail", "fail", "pass", "fail"]})
    >>> cand = base.assign(judge="new", verdict=["pass", "fail", "fail", "pass", "pass", None])
    >>> from evallab.metrics import drift_summary
    >>> g = drift_summary(base, cand, by=(), n_resamples=0).gate
    >>> g.passed, g.names, g.groups
    (False, ['all'], 1)
    """

    passed: bool
    tolerance: float
    alpha: float
    adjust: str
    flagged: pd.DataFrame
    inconclusive: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    overall: dict = field(default_factory=dict)
    groups: int = 0

    @property
    def names(self) -> list[str]:
        """Names of the drifting groups, e.g. ``subset=LLMBar/Natural, strategy=Vanilla``."""
        return list(self.flagged["group"])

    def summary(self) -> str:
        """One line per finding, for a terminal or a report."""
        o = self.overall
        lines = [f"gate {'PASS' if self.passed else 'FAIL'}: {len(self.flagged)} of {self.groups} group(s) change "
                 f"more than {self.tolerance:.0%} of their verdicts ({self.adjust}-adjusted one-sided p < "
                 f"{self.alpha:g}); overall flip rate {o.get('value', NAN):.1%} "
                 f"[{o.get('low', NAN):.1%}, {o.get('high', NAN):.1%}]: {o.get('status', 'untested')}"]
        for r in self.flagged.itertuples():
            lines.append(f"  DRIFT {r.group}: {r.value:.1%} of verdicts changed [{r.low:.1%}, {r.high:.1%}], "
                         f"adjusted p = {r.p_adjusted:.2g}")
        if self.inconclusive:
            lines.append(f"  inconclusive (interval straddles {self.tolerance:.0%}): " + "; ".join(self.inconclusive[:10])
                         + (" ..." if len(self.inconclusive) > 10 else ""))
        if self.untested:
            lines.append("  untested (no reply both judges parsed): " + "; ".join(self.untested[:10]))
        return "\n".join(lines)


def _status(p_adj: float, high: float, tolerance: float, alpha: float) -> str:
    if not np.isfinite(p_adj):
        return "untested"
    if p_adj < alpha:
        return "drift"
    if np.isfinite(high) and high <= tolerance + _EPS:
        return "within"
    return "inconclusive"


def gate(groups: pd.DataFrame, overall: pd.DataFrame | None = None, *, tolerance: float = DEFAULT_TOLERANCE,
         alpha: float = 0.05, adjust: str = "holm", by: Sequence[str] | None = None) -> GateResult:
    """MeowKit rule 6 with intervals: which groups change more than ``tolerance`` of their verdicts.

    Parameters
    ----------
    groups : Results
        The per-group table of :func:`summarize_pairs` (with its per-item counts ``_num``/``_den``); its
        ``flip_p``, ``flip_p_adjusted``, ``status`` and ``flagged`` columns are filled in place.
    overall : Results, optional
        The overall table of :func:`summarize_pairs` (``by=[]``), gated on its own; filled in place.
    tolerance : float, default 0.05
        The largest acceptable flip rate, a proportion in [0, 1]; MeowKit's 5% is 0.05.
    alpha : float, default 0.05
        Level of the one-sided test of H0 "flip rate ≤ tolerance", in (0, 1).
    adjust : {"holm", "bh", "none"}, default "holm"
        Multiplicity adjustment across the groups (statsmodels); the overall row is tested alone.
    by : sequence of str, optional
        The grouping columns to show in ``flagged`` (default: those before ``group``).

    Returns
    -------
    GateResult
        ``passed``, the drifting groups (``flagged``: flip rate ``value``, ``low``, ``high`` — proportions — and
        ``p_adjusted``), the inconclusive and untested group names and the overall row's status. The p-value is
        that of :func:`evallab.metrics._intervals.item_exact_test_greater` (exact binomial on items, each item
        counted once; with one reply per item the exact binomial test of the replies), dual to the flip-rate
        interval ``flip_rate_low``/``flip_rate_high`` of :func:`summarize_pairs` whose upper bound decides
        "within": both move one way as verdicts change, so adding a changed verdict never improves a status.

    Raises
    ------
    EvallabError
        A tolerance outside [0, 1], an alpha outside (0, 1) or an unknown adjustment.

    References
    ----------
    MeowKit spec 001, "Calibration Set and Drift Check", rule 6 (``data/meowkit/rules/rubric-rules.md``):
    "re-evaluator agreement with stored gold verdicts must stay within 5% per rubric"; tested here as the share of
    verdicts changed between the two judges (which bounds the change in agreement with gold); S. Holm (1979), "A simple sequentially rejective multiple test procedure";
    Y. Benjamini and Y. Hochberg (1995), "Controlling the false discovery rate".

    Examples
    --------
    2 of 5 verdicts changed, one reply per item: P(X ≥ 2) for X ~ Bin(5, 0.05) is 0.023, so the group drifts at
    5%; at a tolerance of 0.5 the p-value is 26/32 and the interval's upper bound 0.853 > 0.5: inconclusive.

    >>> import pandas as pd
    >>> base = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5", "q6"], "judge": "old", "gold": ["pass", "pass",
    ...     "fail", "pass", "pass", "fail"], "verdict": ["pass", "pass", "fail", "fail", "pass", "fail"]})
    >>> cand = base.assign(judge="new", verdict=["pass", "fail", "fail", "pass", "pass", None])
    >>> from evallab.metrics import drift_gate
    >>> groups = summarize_pairs(pair_verdicts(base, cand, by=()), [], n_resamples=0)
    >>> g = drift_gate(groups, tolerance=0.05)
    >>> g.passed, g.names, round(float(g.flagged["p_adjusted"].iloc[0]), 3)
    (False, ['all'], 0.023)
    >>> drift_gate(groups, tolerance=0.5).inconclusive, round(float(groups["flip_p"].iloc[0]), 4)
    (['all'], 0.8125)
    """
    if not 0 <= tolerance <= 1:
        raise EvallabError(f"tolerance={tolerance}; expected a proportion in [0, 1] (0.05 = 5% of verdicts changed)")
    if not 0 < alpha < 1:
        raise EvallabError(f"alpha={alpha}; expected a level in (0, 1)")
    by = list(by) if by is not None else list(groups.columns[: list(groups.columns).index("group")])

    def test(t: pd.DataFrame) -> np.ndarray:
        return np.array([stats.item_exact_test_greater(n, d, tolerance) if np.sum(d) else NAN
                         for n, d in zip(t["_num"], t["_den"], strict=True)], dtype=float)

    groups["flip_p"] = test(groups)
    groups["flip_p_adjusted"] = stats.adjust_pvalues(groups["flip_p"], adjust)
    groups["status"] = [_status(p, h, tolerance, alpha) for p, h in zip(groups["flip_p_adjusted"],
                                                                        groups["flip_rate_high"], strict=True)]
    groups["flagged"] = groups["status"] == "drift"
    ov = {"status": "untested"}
    if overall is not None and len(overall):
        overall["flip_p"] = test(overall)
        overall["flip_p_adjusted"] = overall["flip_p"]
        overall["status"] = [_status(p, h, tolerance, alpha) for p, h in zip(overall["flip_p"],
                                                                             overall["flip_rate_high"], strict=True)]
        overall["flagged"] = overall["status"] == "drift"
        o = overall.iloc[0]
        ov = {"value": float(o["flip_rate"]), "low": float(o["flip_rate_low"]), "high": float(o["flip_rate_high"]),
              "p": float(o["flip_p"]), "status": o["status"]}
    f = groups[groups["flagged"]]
    flagged = pd.DataFrame({**{c: f[c] for c in by}, "group": f["group"], "value": f["flip_rate"],
                            "low": f["flip_rate_low"], "high": f["flip_rate_high"],
                            "p_adjusted": f["flip_p_adjusted"]}).reset_index(drop=True)
    tested = int((groups["status"] != "untested").sum())
    passed = bool(tested > 0 and flagged.empty and ov["status"] != "drift")
    return GateResult(passed=passed, tolerance=float(tolerance), alpha=float(alpha), adjust=adjust, flagged=flagged,
                      inconclusive=list(groups.loc[groups["status"] == "inconclusive", "group"]),
                      untested=list(groups.loc[groups["status"] == "untested", "group"]), overall=ov,
                      groups=tested)


@dataclass
class DriftReport:
    """Baseline vs candidate judge on the same requests.

    Attributes
    ----------
    groups : Results
        One row per group (``by`` columns, ``group`` name) with counts (unit "count"): ``items``, ``replies``
        (paired), ``unparsed_baseline``, ``unparsed_candidate``, ``both_parsed``, ``same``, ``changed``,
        ``both_parsed_ab``/``same_ab`` and ``_ba`` (per order), ``items_compared``, ``items_all_parsed`` and ``items_unchanged``
        (every paired reply of the item kept its verdict), ``gold_replies``, ``baseline_parsed``/``_correct``,
        ``candidate_parsed``/``_correct``, ``mcnemar_b`` (items the baseline got more right), ``mcnemar_c``;
        proportions: ``flip_rate`` in [0, 1] (+ ``_low``/``_high``, Clopper–Pearson on items, the bound the gate
        reads; method in ``flip_rate_method``;
        n = ``items_compared``, the items with a reply both judges parsed: the interval's unit), ``agreement`` = 1 − flip rate (+ interval, same method),
        ``baseline_accuracy``, ``candidate_accuracy`` (no interval; n = parsed replies); ``delta_accuracy``
        (candidate − baseline, unit "pp") with ``delta_low``/``delta_high`` (paired item bootstrap; method in
        ``delta_method``); ``kappa`` (Cohen, unit "coefficient", + ``_low``/``_high``, method in
        ``kappa_method``); p-values ``flip_p`` / ``flip_p_adjusted`` (one-sided test of flip rate ≤ tolerance)
        and ``mcnemar_p``; ``status`` (drift / within / inconclusive / untested), ``flagged`` (status == drift),
        ``note``. Its measures: :data:`MEASURES`; its level: the ``confidence`` of :func:`compare`.
    overall : Results
        One row: the same over every paired reply, gated on its own.
    flips : Results
        Long: ``by`` + ``verdict_baseline`` + ``verdict_candidate`` (NA shown as ``unparsed``) + ``count``
        (replies, unit "count").
    pairs : DataFrame
        One row per paired reply (see :func:`pair_verdicts`).
    gate : GateResult

    References
    ----------
    MeowKit spec 001, "Calibration Set and Drift Check", rule 6 (``data/meowkit/rules/rubric-rules.md``):
    "re-evaluator agreement with stored gold verdicts must stay within 5% per rubric"; tested here as the share of
    verdicts changed between the two judges (which bounds the change in agreement with gold).

    Examples
    --------
    q2 moved pass → fail, q4 fail → pass, q6 is unparsed under the candidate:

    >>> import pandas as pd
    >>> base = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5", "q6"], "judge": "old", "gold": ["pass", "pass",
    ...     "fail", "pass", "pass", "fail"], "verdict": ["pass", "pass", "fail", "fail", "pass", "fail"]})
    >>> cand = base.assign(judge="new", verdict=["pass", "fail", "fail", "pass", "pass", None])
    >>> from evallab.metrics import drift_summary
    >>> report = drift_summary(base, cand, by=(), n_resamples=0)
    >>> print(report.flip_table())
    candidate verdict  pass  fail  unparsed
    baseline verdict
    pass                  2     1         0
    fail                  1     1         1
    unparsed              0     0         0
    """

    groups: Results
    overall: Results
    flips: Results
    pairs: pd.DataFrame
    gate: GateResult
    by: list[str]
    baseline_judge: str = ""
    candidate_judge: str = ""
    baseline_only: int = 0
    candidate_only: int = 0

    @property
    def passed(self) -> bool:
        return self.gate.passed

    def with_overall(self) -> Results:
        """The overall row ("all") followed by the per-group rows, with the same measures."""
        both = pd.concat([self.overall, self.groups], ignore_index=True)
        return results(both, self.groups.measures, level=self.groups.level, keys=self.groups.keys)

    def moved(self) -> pd.DataFrame:
        """The paired replies whose parsed verdict changed (which verdicts moved)."""
        return self.pairs[self.pairs["changed"]].reset_index(drop=True)

    def flip_table(self, group: dict | None = None) -> Results:
        """Square flip table baseline × candidate, over all groups or the one matching ``group``.

        Returns
        -------
        Results
            Indexed by ``baseline verdict``; one column per candidate verdict (``unparsed`` for NA), each a
            count of replies (unit "count", labelled by the verdict).
        """
        f = self.flips
        for c, v in (group or {}).items():
            f = f[f[c] == v]
        t = f.pivot_table(index="verdict_baseline", columns="verdict_candidate", values="count", aggfunc="sum",
                          fill_value=0)
        labels = sorted(set(t.index) | set(t.columns), key=_label_order)
        t = t.reindex(index=labels, columns=labels, fill_value=0).astype(int)
        t.index.name, t.columns.name = "baseline verdict", "candidate verdict"
        return results(t, [Measure(c, str(c), "count") for c in t.columns])

    def summary(self) -> str:
        o = self.overall.iloc[0]
        lines = [f"baseline {self.baseline_judge} vs candidate {self.candidate_judge}: {o['replies']} paired "
                 f"replies on {o['items']} items ({self.baseline_only} baseline-only, {self.candidate_only} "
                 f"candidate-only replies not compared)",
                 f"changed {o['changed']} of {o['both_parsed']} verdicts (flip rate {o['flip_rate']:.1%}), kappa "
                 f"{o['kappa']:.3f}; " + (f"accuracy {o['baseline_accuracy']:.1%} -> {o['candidate_accuracy']:.1%}"
                                          if o["gold_replies"] else "no gold labels"),
                 self.gate.summary()]
        return "\n".join(lines)


def _label_order(x: str) -> tuple[int, str]:
    order = list(V.VERDICTS) + [UNPARSED]
    return (order.index(x) if x in order else len(order), x)


@needs_verdicts("the drift gate (flip rate between two judges)", tables=("baseline", "candidate"))
@stats.shared_resamples()  # the groups' and the overall intervals over the same items draw their resamples once
def compare(baseline: pd.DataFrame, candidate: pd.DataFrame, *, by: Sequence[str] | None = DEFAULT_BY,
            match_on: Sequence[str] = MATCH_ON, tolerance: float = DEFAULT_TOLERANCE, alpha: float = 0.05,
            adjust: str = "holm", confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> DriftReport:
    """Drift of a candidate judge against a baseline judge on the same requests, per group, with the gate.

    Parameters
    ----------
    baseline, candidate : DataFrame
        Tidy verdict tables, one judge each.
    by : sequence of str or None, default ("subset", "strategy")
        Grouping columns (add ``"rubric"`` when the tables carry it; ``()`` or None = one group).
    match_on : sequence of str, default :data:`MATCH_ON`
        Columns pairing the replies (see :func:`pair_verdicts`).
    tolerance : float, default 0.05
        The gate's largest acceptable flip rate (:func:`gate`; MeowKit's 5% of verdicts changed).
    alpha : float, default 0.05
        Level of the gate's one-sided test.
    adjust : {"holm", "bh", "none"}, default "holm"
        The gate's adjustment across groups.
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 1000
        Bootstrap resamples over items for kappa and Δ accuracy (``0`` skips them; the flip rate's exact
        interval remains).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    DriftReport
        Its ``groups``, ``overall`` and ``flips`` are :class:`~evallab.Results` (columns, units and interval
        methods in :class:`DriftReport`: ``flip_rate`` and ``agreement`` proportions with ``flip_rate_method``,
        ``kappa`` a coefficient with ``kappa_method``, ``delta_accuracy`` in pp with ``delta_method``, p-values,
        counts); intervals at level ``confidence``; ``gate`` the :class:`GateResult`.

    Raises
    ------
    DataError
        See :func:`pair_verdicts`.
    EvallabError
        A bad tolerance, alpha or adjustment (:func:`gate`).

    References
    ----------
    MeowKit spec 001, "Calibration Set and Drift Check", rule 6 (``data/meowkit/rules/rubric-rules.md``):
    "re-evaluator agreement with stored gold verdicts must stay within 5% per rubric"; tested here as the share of
    verdicts changed between the two judges (which bounds the change in agreement with gold); McNemar (1947) for the paired accuracy test; Cohen (1960).

    Examples
    --------
    The baseline is right on 5 of 6 items, the candidate on 4 of its 5 parsed: Δ accuracy = 0.8 − 0.833:

    >>> import pandas as pd
    >>> base = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5", "q6"], "judge": "old", "gold": ["pass", "pass",
    ...     "fail", "pass", "pass", "fail"], "verdict": ["pass", "pass", "fail", "fail", "pass", "fail"]})
    >>> cand = base.assign(judge="new", verdict=["pass", "fail", "fail", "pass", "pass", None])
    >>> from evallab.metrics import drift_summary
    >>> report = drift_summary(base, cand, by=(), n_resamples=0)
    >>> print(report.overall[["changed", "flip_rate", "baseline_accuracy", "candidate_accuracy", "delta_accuracy",
    ...                       "status"]].round(3).to_string(index=False))
     changed  flip_rate  baseline_accuracy  candidate_accuracy  delta_accuracy status
           2        0.4              0.833                 0.8          -0.033  drift
    """
    by = list(by or [])
    pairs = pair_verdicts(baseline, candidate, match_on=match_on, by=by)
    kw = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    groups = summarize_pairs(pairs, by, **kw)
    overall = summarize_pairs(pairs, [], **kw)
    g = gate(groups, overall, tolerance=tolerance, alpha=alpha, adjust=adjust, by=by)
    # the gate added its p-values and statuses: wrap again so their measures are kept
    groups = results(groups.drop(columns=["_num", "_den"]), MEASURES, level=confidence, keys=[*by, "group"])
    overall = results(overall.drop(columns=["_num", "_den"]), MEASURES, level=confidence, keys=["group"])
    fl = pairs.assign(verdict_baseline=pairs["verdict_baseline"].fillna(UNPARSED),
                      verdict_candidate=pairs["verdict_candidate"].fillna(UNPARSED))
    flips = results(fl.groupby(by + ["verdict_baseline", "verdict_candidate"], dropna=False, observed=True).size()
                    .rename("count").reset_index(), [Measure("count", "Replies", "count")],
                    keys=[*by, "verdict_baseline", "verdict_candidate"])
    return DriftReport(groups=groups, overall=overall, flips=flips, pairs=pairs, gate=g, by=by,
                       baseline_judge=pairs.attrs.get("baseline_judge", ""),
                       candidate_judge=pairs.attrs.get("candidate_judge", ""),
                       baseline_only=int(pairs.attrs.get("baseline_only", 0)),
                       candidate_only=int(pairs.attrs.get("candidate_only", 0)))


@needs_verdicts("the drift gate (flip rate between two judges)")
def compare_judges(df: pd.DataFrame, baseline: str, candidate: str, **kwargs) -> DriftReport:
    """:func:`compare` on one table holding both judges (rows selected by the ``judge`` column).

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table holding both judges' replies.
    baseline, candidate : str
        The two ``judge`` labels.
    **kwargs
        Passed to :func:`compare` (``by``, ``match_on``, ``tolerance``, ``alpha``, ``adjust``, ``confidence``,
        ``n_resamples``, ``seed``).

    Returns
    -------
    DriftReport
        As :func:`compare`.

    Raises
    ------
    DataError
        A judge label not in the table (naming those available); see also :func:`compare`.

    References
    ----------
    MeowKit spec 001, "Calibration Set and Drift Check", rule 6 (``data/meowkit/rules/rubric-rules.md``):
    "re-evaluator agreement with stored gold verdicts must stay within 5% per rubric"; tested here as the share of
    verdicts changed between the two judges (which bounds the change in agreement with gold).

    Examples
    --------
    >>> import pandas as pd
    >>> base = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5", "q6"], "judge": "old", "gold": ["pass", "pass",
    ...     "fail", "pass", "pass", "fail"], "verdict": ["pass", "pass", "fail", "fail", "pass", "fail"]})
    >>> cand = base.assign(judge="new", verdict=["pass", "fail", "fail", "pass", "pass", None])
    >>> from evallab.metrics import compare_judges
    >>> report = compare_judges(pd.concat([base, cand]), "old", "new", by=(), n_resamples=0)
    >>> print(report.overall[["both_parsed", "changed", "flip_rate"]].to_string(index=False))
     both_parsed  changed  flip_rate
               5        2        0.4
    """
    df = check_table(df, "verdicts")
    have = sorted(df["judge"].dropna().unique())
    for j in (baseline, candidate):
        if j not in have:
            raise DataError(f"judge {j!r} not in the table; available: {have}", column="judge")
    return compare(df[df["judge"] == baseline], df[df["judge"] == candidate], **kwargs)


def subset_level(df: pd.DataFrame, depth: int = 2) -> pd.DataFrame:
    """A copy with ``subset`` cut to its first ``depth`` '/'-parts (``LLMBar/Adversarial/GPTInst`` →
    ``LLMBar/Adversarial`` at depth 2) — to gate on coarser groups with more items each.

    Parameters
    ----------
    df : DataFrame
        A table with a ``subset`` column (``df`` is not modified).
    depth : int, default 2
        Number of '/'-parts to keep, at least 1.

    Returns
    -------
    DataFrame
        A copy of ``df`` with ``subset`` cut.

    Raises
    ------
    EvallabError
        ``depth`` below 1.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab.metrics import subset_level
    >>> subset_level(pd.DataFrame({"subset": ["LLMBar/Adversarial/GPTInst", "LLMBar/Natural"]}))["subset"].tolist()
    ['LLMBar/Adversarial', 'LLMBar/Natural']
    """
    if depth < 1:
        raise EvallabError(f"depth={depth}; expected >= 1")
    out = df.copy()
    # cut the distinct values (a few dozen), then spread them to the rows: a verdict table is long
    sub = out["subset"].astype("string")
    code, uniq = pd.factorize(sub)
    cut = pd.Series(uniq, dtype="string").str.split("/").str[:depth].str.join("/").astype("string")
    out["subset"] = pd.Series(cut.array.take(code, allow_fill=True), index=out.index, dtype="string")
    return out


