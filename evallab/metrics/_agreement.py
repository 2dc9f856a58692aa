"""Agreement of judges with gold labels, with each other and with themselves.

Every function takes the tidy verdict table (:mod:`evallab.verdicts`) and the grouping ``by`` that defines a design
cell; a grouping that leaves several replies per (item, order, sample) raises :class:`~evallab.metrics._design.
DesignError` naming the columns that vary (:func:`evallab.metrics._design.check_design`). Rows without gold are
left out of gold-based figures and counted (``no_gold``); a figure the table cannot support is NaN with its reason
in ``note``. Unparsed replies (NA verdicts) are excluded and counted by default (``unparsed="exclude"``);
``unparsed="published"`` reproduces LLMBar's conventions (Zeng et al., ICLR 2024, §4 and Tables 2–4: Acc. counts
an unparsed reply as wrong, Agr. counts a pair whose two replies were both unparsed as agreeing).

The item is the resampling unit of every interval (:mod:`evallab.metrics._intervals`): Wilson when an item holds one
reply, a percentile cluster bootstrap over items otherwise.

Every estimator returns :class:`evallab.Results`: its measures name each estimate's label, unit, interval columns
(``<column>_low``/``_high``), level, the method that computed the interval — in ``<column>_method`` row by row,
since a row can fall back to another method (Wilson where an item holds one reply or every item has the same
share; the asymptotic standard error of Cohen's kappa on independent units) — its n column and unit, and the note
column. ``n_resamples=0`` switches the bootstrap off: a bootstrap interval is then absent and its method ``""``.

Methods and their sources
-------------------------
- :func:`pairwise_statistics` — LLMBar's per-group table: accuracy in each presentation order, Acc. = the MEAN of
  the two order accuracies (LLMBar §4: "we report the average accuracy over the two orders"), the pooled accuracy
  under its own name, both-correct, and position consistency (LLMBar's Agr.).
- :func:`accuracy` — accuracy vs gold over all parsed replies of a group (pairwise or pointwise).
- :func:`cohen_kappa` / :func:`cohen_kappa_vs_gold` — Cohen's kappa (Cohen 1960; ``sklearn.metrics.
  cohen_kappa_score``), asymptotic interval of ``statsmodels.stats.inter_rater.cohens_kappa`` for independent
  units, item-cluster bootstrap otherwise; bounds clipped to [−1, 1].
- :func:`judge_agreement` — judge × judge raw agreement and Cohen's kappa on the units both parsed.
- :func:`fleiss_kappa` — Fleiss' kappa (Fleiss 1971; ``statsmodels.stats.inter_rater.fleiss_kappa``) on units
  every rater parsed; :func:`krippendorff_alpha` — Krippendorff's alpha, nominal (Krippendorff 2011;
  ``krippendorff.alpha``), missing allowed. Item-cluster bootstrap intervals from the per-item sufficient
  statistics of each coefficient.
- :func:`repetition_stability` — agreement of a judge with itself across samples of the same request: Shi et al.
  (2024) repetition stability (mean share of the modal verdict), unanimity and the pairwise flip rate.
- :func:`majority_vote` — the majority verdict over a request's samples: its accuracy beside the per-reply
  accuracy, the requests one sample away from another majority, and the flip probability per request.
- :func:`published_check` — LLMBar's published statistics recomputed and set beside the authors' table.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as _sm_fleiss

from evallab._results import Measure, Results, bootstrap_method, relabel, results
from evallab.errors import DesignError, EvallabError
from evallab.metrics import _intervals as intervals
from evallab.metrics._design import (
    PairedDesign,
    _groups,
    _per_group,
    check_design,
    design_of,
    group_rows,
    groups,
    item_key,
    join_notes,
    needs_verdicts,
    not_computable,
    pairwise,
    thin_note,
    too_thin,
)
from evallab.metrics._position import position_consistency

UNPARSED_MODES = ("exclude", "published")
NAN = float("nan")
#: the method of Cohen's kappa's interval when every item holds one paired unit (:func:`cohen_kappa_method`)
KAPPA_ASYMPTOTIC = "asymptotic standard error (statsmodels cohens_kappa)"

#: where a verdict estimator of agreement between raters sends a score table
_RELIABILITY = ("evallab.metrics.rater_reliability (Krippendorff's alpha at the ordinal and interval levels, ICC, "
                "pairwise weighted kappa) or report 08")


def _count(column: str, label: str, **kw) -> Measure:
    return Measure(column, label, "count", note=None, **kw)


def _interval(column: str, label: str, unit: str, n: str, n_unit: str, **kw) -> Measure:
    """A measure whose interval is ``<column>_low``/``_high``, its method named per row in ``<column>_method``."""
    return Measure(column, label, unit, f"{column}_low", f"{column}_high", method_column=f"{column}_method", n=n,
                   n_unit=n_unit, **kw)


#: the measures of :func:`pairwise_statistics`
PAIRWISE_MEASURES = [
    _count("n", "Items"), _count("no_gold", "(Item, sample) without gold"),
    _count("unparsed_ab", "Unparsed (output 1 first)"), _count("unparsed_ba", "Unparsed (output 2 first)"),
    _count("correct_ab", "Correct (output 1 first)"), _count("correct_ba", "Correct (output 2 first)"),
    _count("parsed_ab", "Parsed with gold (output 1 first)"), _count("parsed_ba", "Parsed with gold (output 2 first)"),
    _interval("acc_ab", "Acc. output 1 first", "proportion", "parsed_ab", "parsed replies"),
    _interval("acc_ba", "Acc. output 2 first", "proportion", "parsed_ba", "parsed replies"),
    _interval("acc", "Acc. (mean of the two orders)", "proportion", "n", "items"),
    _count("parsed", "Parsed replies with gold"),
    Measure("accuracy_pooled", "Pooled accuracy", "proportion", n="parsed", n_unit="replies"),
    _count("correct_both", "Pairs right in both orders"), _count("consistent_pairs", "Consistent pairs (Agr.)"),
    _count("both_parsed", "Pairs with both parsed"),
    _interval("position_consistency", "Position consistency", "proportion", "both_parsed", "pairs"),
]
#: the measures of :func:`accuracy`
ACCURACY_MEASURES = [
    _count("replies", "Replies"), _count("no_gold", "Replies without gold"), _count("unparsed", "Unparsed"),
    _count("parsed", "Parsed replies"), _count("correct", "Correct"), _count("items", "Items"),
    _interval("accuracy", "Accuracy", "proportion", "parsed", "replies"),
]
#: the measures of :func:`cohen_kappa_vs_gold`
KAPPA_GOLD_MEASURES = [
    _count("n", "Replies"), _count("items", "Items"), _count("no_gold", "No gold"), _count("unparsed", "Unparsed"),
    _interval("kappa", "Cohen's kappa", "coefficient", "n", "replies", digits=2),
]
#: the measures of :func:`judge_agreement`
JUDGE_AGREEMENT_MEASURES = [
    _count("n", "Units both parsed"), _count("items", "Items"),
    _interval("agreement", "Raw agreement", "proportion", "n", "units (item, order, sample) both judges parsed"),
    _interval("kappa", "Cohen's kappa", "coefficient", "n", "units (item, order, sample) both judges parsed",
              digits=2),
]
#: the measures of :func:`repetition_stability`
REPETITION_MEASURES = [
    _count("units", "Requests"), _count("items", "Items"), _count("unparsed", "Unparsed"),
    _interval("repetition_stability", "Repetition stability", "proportion", "units", "requests"),
    _count("unanimous", "Unanimous requests", n="units", n_unit="requests"),
    _interval("unanimity", "Unanimity", "proportion", "units", "requests"),
    _interval("flip_rate", "Pairwise flip rate", "proportion", "units", "requests"),
]


def _rater_measures(column: str, label: str, unit_name: str) -> list[Measure]:
    """The measures of :func:`fleiss_kappa` / :func:`krippendorff_alpha`: the coefficient (n = units, named
    ``unit_name``), units, items, raters."""
    return [_interval(column, label, "coefficient", "units", unit_name, digits=2),
            _count("units", unit_name.capitalize()), _count("units_dropped", f"{unit_name.capitalize()} dropped"),
            _count("items", "Items"), _count("raters", "Raters")]


def _unit_name(raters: str) -> str:
    """What one unit of a multi-rater table is: a request (item, order, design cell) when the samples are the raters,
    else a unit (item, order, sample)."""
    return "requests" if raters == "sample" else "units"


def _check_mode(unparsed: str) -> None:
    if unparsed not in UNPARSED_MODES:
        raise EvallabError(f"unparsed={unparsed!r}; expected one of {UNPARSED_MODES}")


# ------------------------------------------------------------------------------------------ accuracy vs gold
def _mean_of_orders(t: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return 0.5 * (t[..., 0] / t[..., 1] + t[..., 2] / t[..., 3])


def _all_same(per: np.ndarray) -> bool:
    """Every item has the same per-order ratios (a bootstrap would collapse to a point)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.column_stack([per[:, 0] / per[:, 1], per[:, 2] / per[:, 3]])
    return bool(np.allclose(r, r[0], equal_nan=True))


@needs_verdicts("LLMBar's pairwise statistics (accuracy per order, position consistency)")
def pairwise_statistics(df: pd.DataFrame | PairedDesign, by: Sequence[str] | None = None, *,
                        unparsed: str = "exclude", confidence: float = 0.95, n_resamples: int = 1000,
                        seed: int = 0) -> Results:
    """LLMBar's per-group statistics: accuracy per presentation order, Acc., both-correct, position consistency.

    Parameters
    ----------
    df : DataFrame or PairedDesign
        Tidy verdict table (:mod:`evallab.verdicts`) of pairwise replies with ``gold``; orders ``ab`` (output 1
        shown first) and ``ba``. Or a :class:`~evallab.metrics._design.PairedDesign` prepared once for several
        estimators (:func:`~evallab.metrics._design.paired_design`).
    by : sequence of str, optional
        The design cell (default ``("subset", "judge", "strategy")``; a prepared design's own ``by``).
    unparsed : {"exclude", "published"}, default "exclude"
        ``"exclude"``: unparsed replies leave every denominator; ``"published"``: LLMBar's conventions (an
        unparsed reply is wrong; two unparsed replies agree).
    confidence : float, default 0.95
        Level of the intervals, in (0, 1).
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap; Wilson only where it applies).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per group (measures :data:`PAIRWISE_MEASURES`, n: items; ``level`` = ``confidence``): ``by`` +
        ``n`` (items with gold judged in at least one order), ``no_gold`` (pairs left out: no gold),
        ``unparsed_ab``, ``unparsed_ba`` (replies), ``correct_ab``, ``correct_ba`` (replies right with output 1 /
        output 2 shown first), ``parsed_ab``, ``parsed_ba`` (replies parsed with gold in that order: the n of
        ``acc_ab``/``acc_ba``), ``acc_ab``, ``acc_ba`` in [0, 1] with ``_low``/``_high``; ``acc`` = (acc_ab +
        acc_ba) / 2 — LLMBar's Acc. — with ``acc_low``/``acc_high``; ``accuracy_pooled`` = correct / parsed over
        both orders (equal to ``acc`` only when both orders parsed the same number); ``correct_both`` (pairs right
        in both orders); ``consistent_pairs`` (LLMBar's Agr., a count), ``both_parsed``, ``position_consistency``
        in [0, 1] with ``_low``/``_high`` (see :func:`evallab.metrics._position.position_consistency`); ``note``
        (why a figure is NaN). Under ``"published"`` every denominator is the number of pairs asked in that order.
        A pair is an (item, sample) of the group; samples: an item's replies in one order are pooled over its
        samples (ratio of sums, item-cluster interval). Each interval's method is in ``<column>_method``
        (``acc_ab``, ``acc_ba``, ``acc``, ``position_consistency``): Acc.'s is an item bootstrap of the mean of the
        two order accuracies when every item was parsed in both orders, else the interval of the pooled accuracy,
        named as such.

    Raises
    ------
    EvallabError
        An unknown ``unparsed`` mode.
    DesignError
        When ``by`` leaves several replies per (item, order, sample) (naming the columns that vary), or a column it
        needs is missing.

    References
    ----------
    Zeng et al. (2024), "Evaluating Large Language Models at Evaluating Instruction Following" (LLMBar), ICLR,
    §4 and Tables 2–4: Acc. (the average accuracy over the two orders) and Agr. (positional agreement).

    Examples
    --------
    q3's reply in order ``ba`` is unparsed: Acc. output 1 first 3/4, output 2 first 2/3 (of the 3 parsed), Acc.
    = (3/4 + 2/3) / 2 = 0.708; pooled 5/7; consistent 1 of the 3 pairs both parsed:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import pairwise_statistics
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"],
    ...     "judge": "A", "order": ["ab", "ba"] * 4, "verdict": ["1", "1", "1", "2", "2", None, "1", "2"],
    ...     "gold": ["1", "1", "2", "2", "2", "2", "1", "1"]}))
    >>> print(pairwise_statistics(df, ["judge"], n_resamples=0)[["n", "acc_ab", "acc_ba", "acc", "accuracy_pooled",
    ...       "correct_both", "consistent_pairs", "position_consistency"]].round(3).to_string(index=False))
     n  acc_ab  acc_ba   acc  accuracy_pooled  correct_both  consistent_pairs  position_consistency
     4    0.75   0.667 0.708            0.714             1                 1                 0.333
    """
    _check_mode(unparsed)
    des = design_of(df, by)
    p = des.pairs
    a, b, g = p["verdict_ab"], p["verdict_ba"], p["gold"]
    has_ab, has_ba = p["has_ab"], p["has_ba"]
    published = unparsed == "published"
    gold = g >= 0
    ca, cb = gold & (a == g), gold & (b == g)
    pa, pb = (a >= 0) | (published & has_ab), (b >= 0) | (published & has_ba)
    per_item = des.item_sums("pairs", gold, [ca, pa, cb, pb])
    n_pairs = des.count("pairs")
    no_gold, unp_ab, unp_ba = (des.count("pairs", x) for x in (~gold, has_ab & (a < 0), has_ba & (b < 0)))
    correct_both = des.count("pairs", ca & cb)
    asked_ab, asked_ba = des.count("pairs", has_ab), des.count("pairs", has_ba)
    any_gold = des.count("replies", des.replies["gold"] >= 0) > 0
    rows = []
    with intervals.shared_resamples(des.draws):
        cons = position_consistency(des, unparsed=unparsed, confidence=confidence, n_resamples=n_resamples,
                                    seed=seed)
        for i in range(des.n_groups):
            per = per_item(i)
            sa, spa, sb, spb = per.sum(0) if len(per) else (0.0, 0.0, 0.0, 0.0)
            r = dict(des.key(i), n=len(per), no_gold=int(no_gold[i]), unparsed_ab=int(unp_ab[i]),
                     unparsed_ba=int(unp_ba[i]), correct_ab=int(sa), correct_ba=int(sb), parsed_ab=int(spa),
                     parsed_ba=int(spb))
            notes = []
            if n_pairs[i] == 0:
                if not any_gold[i]:
                    notes.append(not_computable("no gold labels"))
                notes.append(not_computable(des.no_pairs_reason(i)))
            elif len(per) == 0:
                notes.append(not_computable("no gold labels"))
            for name, cc, d, col in (("acc_ab", sa, spa, 1), ("acc_ba", sb, spb, 3)):
                r[name] = cc / d if d else NAN
                r[f"{name}_low"], r[f"{name}_high"], r[f"{name}_method"] = intervals.ratio_interval_method(
                    per[:, col - 1], per[:, col], n_resamples=n_resamples, confidence=confidence, seed=seed) \
                    if d else (NAN, NAN, "")
            if spa and spb:
                r["acc"] = 0.5 * (sa / spa + sb / spb)
                both = (per[:, 1] > 0) & (per[:, 3] > 0)
                if both.all() and n_resamples > 0 and len(per) >= 2 and not _all_same(per):
                    r["acc_low"], r["acc_high"] = intervals.bootstrap_sums(
                        per, _mean_of_orders, n_resamples=n_resamples, confidence=confidence, seed=seed)
                    r["acc_method"] = bootstrap_method(n_resamples) if np.isfinite(r["acc_low"]) else ""
                else:
                    r["acc_low"], r["acc_high"], m = intervals.ratio_interval_method(
                        per[:, 0] + per[:, 2], per[:, 1] + per[:, 3], n_resamples=n_resamples,
                        confidence=confidence, seed=seed)
                    r["acc_method"] = f"{m} of the pooled accuracy (correct / parsed over both orders)" if m else ""
            else:
                r["acc"] = r["acc_low"] = r["acc_high"] = NAN
                r["acc_method"] = ""
                if len(per):
                    one = "only one was parsed" if asked_ab[i] and asked_ba[i] else \
                        f"the table records only order {'ab' if asked_ab[i] else 'ba'}"
                    notes.append(not_computable(f"Acc. averages the two presentation orders, and {one}"))
            r["parsed"] = int(spa + spb)
            r["accuracy_pooled"] = (sa + sb) / (spa + spb) if spa + spb else NAN
            r["correct_both"] = int(correct_both[i])
            c = cons.iloc[i]
            r.update(consistent_pairs=c["consistent_pairs"], both_parsed=c["both_parsed"],
                     position_consistency=c["position_consistency"],
                     position_consistency_low=c["position_consistency_low"],
                     position_consistency_high=c["position_consistency_high"],
                     position_consistency_method=c["position_consistency_method"])
            r["note"] = join_notes(*notes, c["note"])
            rows.append(r)
    return results(pd.DataFrame(rows), PAIRWISE_MEASURES, level=confidence, keys=list(des.by))


@needs_verdicts("accuracy",
                "evallab.metrics.score_agreement (exact and within-one agreement, MAE, mean bias) or report 08")
@intervals.shared_resamples()  # the intervals over the same items draw their resamples once
def accuracy(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, unparsed: str = "exclude",
             confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Results:
    """Accuracy vs gold over the parsed replies of each group (every order and sample of an item pooled).

    Works for pairwise and pointwise tables, one order or both. Rows without gold are left out and counted.
    ``unparsed="published"`` counts an unparsed reply as wrong (LLMBar's convention for Acc.) instead of leaving it
    out.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table with ``gold`` (pairwise or pointwise verdicts).
    by : sequence of str, default ("judge",)
        The design cell.
    unparsed : {"exclude", "published"}, default "exclude"
        ``"published"`` counts an unparsed reply with gold as wrong.
    confidence : float, default 0.95
        Level of the interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap; Wilson with one reply per item needs none).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per group (measures :data:`ACCURACY_MEASURES`; n: replies): ``by`` + counts ``replies``,
        ``no_gold`` (replies without gold, left out), ``unparsed`` (of those with gold), ``parsed`` (the
        denominator: parsed replies with gold, or every reply with gold under ``"published"``), ``correct``,
        ``items``; ``accuracy`` (proportion in [0, 1]), ``accuracy_low``, ``accuracy_high`` (Wilson with one reply
        per item, else an item-cluster bootstrap of correct/parsed, or the Wilson fallback when every item has the
        same share), ``accuracy_method`` (which of them; ``""`` without an interval), ``note``.

    Raises
    ------
    EvallabError
        An unknown ``unparsed`` mode.
    DesignError
        When ``by`` leaves several replies per (item, order, sample).

    References
    ----------
    Zeng et al. (2024), LLMBar, §4 (an unparsed reply counted as wrong under ``"published"``); Wilson (1927).

    Examples
    --------
    q4 is unparsed and left out: 3 of 4 parsed replies right, Wilson [0.301, 0.954]:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import accuracy
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5"], "judge": "A",
    ...     "verdict": ["pass", "fail", "pass", None, "pass"], "gold": ["pass", "fail", "fail", "pass", "pass"]}))
    >>> print(accuracy(df)[["unparsed", "parsed", "correct", "accuracy", "accuracy_low", "accuracy_high",
    ...                     "accuracy_method"]].round(3).to_string(index=False))
     unparsed  parsed  correct  accuracy  accuracy_low  accuracy_high accuracy_method
            1       4        3      0.75         0.301          0.954    Wilson score
    """
    _check_mode(unparsed)
    by = list(by)
    check_design(df, by)
    # on integer codes of the groups and items (item_key order: the per-item sums come out in the order the
    # item bootstrap draws from) instead of a row selection and a text groupby per group
    gold = df["gold"].notna().to_numpy(bool)
    ok = (df["verdict"].notna().to_numpy(bool) | (unparsed == "published")) & gold
    hit = (df["verdict"] == df["gold"]).fillna(False).to_numpy(bool)
    group, keys = _groups(df, tuple(by))
    n_groups = len(keys)
    replies = np.bincount(group, minlength=n_groups)
    with_gold = np.bincount(group, weights=gold, minlength=n_groups)
    unparsed_ = np.bincount(group, weights=gold & df["verdict"].isna().to_numpy(bool), minlength=n_groups)
    item = item_key(df)
    per_item = _per_group(group[gold], n_groups, item[gold], int(item.max()) + 1 if len(item) else 1,
                          [hit[gold], ok[gold]])
    rows = []
    for g in range(n_groups):
        per = per_item(g)
        parsed, correct = (int(per[:, 1].sum()), int(per[:, 0].sum())) if len(per) else (0, 0)
        lo, hi, method = intervals.ratio_interval_method(per[:, 0], per[:, 1], n_resamples=n_resamples,
                                                         confidence=confidence, seed=seed) if parsed else (NAN, NAN, "")
        note = "" if parsed else not_computable("no gold labels" if not with_gold[g] else "no parsed reply with gold")
        rows.append(dict({c: keys[c].iloc[g] for c in by}, replies=int(replies[g]),
                         no_gold=int(replies[g] - with_gold[g]), unparsed=int(unparsed_[g]), parsed=parsed,
                         correct=correct, items=len(per), accuracy=correct / parsed if parsed else NAN,
                         accuracy_low=lo, accuracy_high=hi, accuracy_method=method, note=note))
    return results(pd.DataFrame(rows), ACCURACY_MEASURES, level=confidence, keys=by)


# ---------------------------------------------------------------------------------------------- Cohen's kappa
def _kappa_totals(t: np.ndarray, n_labels: int) -> np.ndarray:
    """Cohen's kappa of flattened L×L contingency totals, vectorised over leading axes."""
    m = t.reshape(*t.shape[:-1], n_labels, n_labels)
    n = m.sum(axis=(-1, -2))
    with np.errstate(invalid="ignore", divide="ignore"):
        po = np.trace(m, axis1=-2, axis2=-1) / n
        pe = (m.sum(axis=-1) * m.sum(axis=-2)).sum(axis=-1) / n ** 2
        return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)


def _kappa_table(table: np.ndarray) -> float:
    """Cohen's kappa of an L×L contingency table (float counts, both margins over two categories or more), by the
    operations of ``sklearn.metrics.cohen_kappa_score`` in their order — the same float, without its per-call input
    validation (a millisecond or more a call on string labels, and the drift report makes dozens)."""
    sum0, sum1 = table.sum(axis=0), table.sum(axis=1)
    expected = np.outer(sum0, sum1) / np.sum(sum0)
    w = np.ones(table.shape)
    np.fill_diagonal(w, 0)
    return float(1 - np.sum(w * table) / np.sum(w * expected))


def cohen_kappa(y1: Sequence, y2: Sequence, *, clusters: Sequence | None = None, confidence: float = 0.95,
                n_resamples: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """``(kappa, low, high)`` of :func:`cohen_kappa_method` (which also names the interval's method).

    Parameters
    ----------
    y1, y2 : sequence
        Labels of equal length (the units both raters labelled).
    clusters : sequence, optional
        The item of each unit (see :func:`cohen_kappa_method`).
    confidence : float, default 0.95
        Level of the interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items when an item holds several units.
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    tuple of float
        ``(kappa, low, high)``: coefficients in [−1, 1]; see :func:`cohen_kappa_method`.

    References
    ----------
    J. Cohen (1960), "A coefficient of agreement for nominal scales", *Educational and Psychological
    Measurement* 20(1); ``sklearn.metrics.cohen_kappa_score``; ``statsmodels.stats.inter_rater.cohens_kappa``.

    Examples
    --------
    4 of 6 agree, each rater says pass 3 times: kappa = (4/6 − 1/2) / (1 − 1/2) = 1/3:

    >>> y1, y2 = ["pass", "pass", "fail", "fail", "pass", "fail"], ["pass", "fail", "fail", "fail", "pass", "pass"]
    >>> [round(x, 3) for x in cohen_kappa(y1, y2)]
    [0.333, -0.421, 1.0]
    """
    return cohen_kappa_method(y1, y2, clusters=clusters, confidence=confidence, n_resamples=n_resamples,
                              seed=seed)[:3]


def cohen_kappa_method(y1: Sequence, y2: Sequence, *, clusters: Sequence | None = None, confidence: float = 0.95,
                       n_resamples: int = 1000, seed: int = 0) -> tuple[float, float, float, str]:
    """Cohen's kappa of two label sequences with an interval on the independent unit, and that interval's method.

    Parameters
    ----------
    y1, y2 : sequence
        Label sequences of equal length (the units both raters labelled).
    clusters : sequence, optional
        The item of each unit; when some item holds several units (two orders, several samples) the interval is a
        percentile item-cluster bootstrap of the per-item contingency counts, otherwise (default: every unit its
        own item) the asymptotic interval kappa ± z·ASE of ``statsmodels.stats.inter_rater.cohens_kappa``.
    confidence : float, default 0.95
        Level of the interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no clustered interval).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    (kappa, low, high, method) : tuple of (float, float, float, str)
        kappa (a coefficient) as ``sklearn.metrics.cohen_kappa_score`` computes it, in [−1, 1]; bounds clipped to
        [−1, 1].
        NaN when there are no units or a single category (kappa undefined); exactly 0 with NaN bounds when one
        rater gives one category to every unit (observed agreement = chance agreement by construction, whatever
        the other rater says: no interval, :func:`one_category_note`); the bounds alone are NaN when the
        interval is degenerate (every unit agrees: the ASE is 0, every resample gives the same kappa) — see
        :func:`evallab.metrics._intervals.no_interval_note` — or the bootstrap is switched off. ``method`` is
        "item bootstrap (percentile, 1,000 resamples)" or :data:`KAPPA_ASYMPTOTIC`; ``""`` without an interval.

    References
    ----------
    J. Cohen (1960), "A coefficient of agreement for nominal scales", *Educational and Psychological
    Measurement* 20(1); the ASE of ``statsmodels.stats.inter_rater.cohens_kappa``.

    Examples
    --------
    Kappa 1/3 on six independent units (asymptotic interval), and with the units paired in three items (an item
    bootstrap):

    >>> y1, y2 = ["pass", "pass", "fail", "fail", "pass", "fail"], ["pass", "fail", "fail", "fail", "pass", "pass"]
    >>> k, low, high, method = cohen_kappa_method(y1, y2)
    >>> round(k, 3), round(low, 3), round(high, 3), method
    (0.333, -0.421, 1.0, 'asymptotic standard error (statsmodels cohens_kappa)')
    >>> cohen_kappa_method(y1, y2, clusters=[1, 1, 2, 2, 3, 3], n_resamples=50)[3]
    'item bootstrap (percentile, 50 resamples)'
    """
    y1 = np.asarray(y1, dtype=object).astype(str)
    y2 = np.asarray(y2, dtype=object).astype(str)
    if len(y1) == 0:
        return NAN, NAN, NAN, ""
    labels, codes = np.unique(np.concatenate([y1, y2]), return_inverse=True)
    if len(labels) < 2:
        return NAN, NAN, NAN, ""
    if len(np.unique(y1)) < 2 or len(np.unique(y2)) < 2:
        # one rater gave one category to every unit: the observed agreement equals the chance agreement whatever the
        # other says, so kappa is 0 by construction and its standard error is 0 by construction, not certainty —
        # no interval (:func:`one_category_note` says why)
        return 0.0, NAN, NAN, ""
    L = len(labels)
    cell = codes[: len(y1)] * L + codes[len(y1):]
    table = np.bincount(cell, minlength=L * L).reshape(L, L).astype(float)
    k = _kappa_table(table)  # = sklearn's cohen_kappa_score(y1, y2, labels=labels)
    if clusters is not None:
        cl = np.asarray(clusters)
        cl, inv = np.unique(cl if cl.dtype.kind in "iu" else cl.astype(object).astype(str), return_inverse=True)
        clustered = len(cl) < len(y1)
    else:
        clustered = False
    if clustered:
        if n_resamples <= 0:
            return k, NAN, NAN, ""
        per = np.zeros((len(cl), L * L))
        np.add.at(per, (inv, cell), 1)
        lo, hi = intervals.bootstrap_sums(per, lambda t: _kappa_totals(t, L), n_resamples=n_resamples,
                                          confidence=confidence, seed=seed)
        method = bootstrap_method(n_resamples)
    else:
        with np.errstate(all="ignore"):
            res = cohens_kappa(table, return_results=True)
        z = intervals.z_value(confidence)
        se = float(res["std_kappa"])
        lo, hi = (k - z * se, k + z * se) if se > 0 else (NAN, NAN)  # se 0: every unit agrees, not certainty
        method = KAPPA_ASYMPTOTIC
    return (k, max(-1.0, lo) if np.isfinite(lo) else lo, min(1.0, hi) if np.isfinite(hi) else hi,
            method if np.isfinite(lo) and np.isfinite(hi) else "")


def one_category_note(y1: Sequence, y2: Sequence, names: tuple[str, str] = ("gold", "the judge")) -> str:
    """Why Cohen's kappa of ``y1`` and ``y2`` is 0 by construction and has no interval: the rater (of ``names``)
    that gave one category to every unit, in a sentence; ``""`` when each rater uses two categories or more.

    Examples
    --------
    >>> note = one_category_note(["pass", "fail", "pass"], ["pass", "pass", "pass"])
    >>> note.split(", so")[0]
    "not informative: the judge says 'pass' on every unit"
    >>> one_category_note(["pass", "fail"], ["fail", "pass"])
    ''
    """
    for y, who in zip((y1, y2), names, strict=True):
        u = pd.unique(np.asarray(y, dtype=object).astype(str))
        if len(u) == 1 and len(pd.unique(np.asarray(y1 if y is y2 else y2, dtype=object).astype(str))) > 1:
            return (f"not informative: {who} says '{u[0]}' on every unit, so its agreement equals chance agreement "
                    "and kappa is 0 by construction (no interval)")
    return ""


@needs_verdicts("Cohen's kappa", "evallab.metrics.score_agreement (linear and quadratic weighted kappa) or report 08")
@intervals.shared_resamples()  # the intervals over the same items draw their resamples once
def cohen_kappa_vs_gold(df: pd.DataFrame, by: Sequence[str] = ("subset", "judge", "strategy"), *,
                        confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Results:
    """Cohen's kappa of verdicts against gold on parsed replies with gold, per group (orders and samples pooled;
    an item bootstrap when an item holds several replies, else the asymptotic standard error — see
    :func:`cohen_kappa_method`).

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table with ``gold``.
    by : sequence of str, default ("subset", "judge", "strategy")
        The design cell.
    confidence : float, default 0.95
        Level of the interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items (used when an item holds several replies).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per group (measures :data:`KAPPA_GOLD_MEASURES`; n: replies): ``by`` + counts ``n`` (parsed
        replies with gold), ``items``, ``no_gold``, ``unparsed``; ``kappa`` (coefficient in [−1, 1]),
        ``kappa_low``, ``kappa_high``, ``kappa_method`` (item bootstrap when an item holds several replies, else
        :data:`KAPPA_ASYMPTOTIC`; ``""`` without an interval), ``note`` (no gold; a single category; why no
        interval).

    Raises
    ------
    DesignError
        When ``by`` leaves several replies per (item, order, sample).

    References
    ----------
    J. Cohen (1960), "A coefficient of agreement for nominal scales"; ``sklearn.metrics.cohen_kappa_score``.

    Examples
    --------
    3 of the 4 parsed replies match gold; gold says pass 2 times, the judge 3: kappa = (3/4 − 1/2) / (1 − 1/2):

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import cohen_kappa_vs_gold
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5"], "judge": "A",
    ...     "verdict": ["pass", "fail", "pass", None, "pass"], "gold": ["pass", "fail", "fail", "pass", "pass"]}))
    >>> print(cohen_kappa_vs_gold(df, ["judge"])[["n", "unparsed", "kappa", "kappa_low", "kappa_high"]].round(3)
    ...       .to_string(index=False))
     n  unparsed  kappa  kappa_low  kappa_high
     4         1    0.5     -0.235         1.0
    """
    by = list(by)
    check_design(df, by)
    # on integer codes of the groups and items (the item bootstrap's clusters in item_key order, as a per-group
    # item_key would number them) instead of row selections per group
    has_gold = df["gold"].notna().to_numpy(bool)
    parsed = has_gold & df["verdict"].notna().to_numpy(bool)
    gold, verdict = df["gold"].to_numpy(object), df["verdict"].to_numpy(object)
    item = item_key(df)
    rows = []
    for key, r in group_rows(df, by):
        ok = r[parsed[r]]
        with_gold = int(has_gold[r].sum())
        k, lo, hi, method = cohen_kappa_method(gold[ok], verdict[ok], clusters=item[ok],
                                               confidence=confidence, n_resamples=n_resamples, seed=seed)
        items = len(np.unique(item[ok]))
        note = (one_category_note(gold[ok], verdict[ok]) or
                intervals.no_interval_note(k, lo, hi, units=items, n_resamples=n_resamples)) if np.isfinite(k) else \
            not_computable("no gold labels" if not with_gold else "no parsed reply with gold" if not len(ok) else
                           "a single category among verdicts and gold (kappa undefined)")
        rows.append(dict(key, n=len(ok), items=items, no_gold=len(r) - with_gold,
                         unparsed=with_gold - len(ok), kappa=k, kappa_low=lo, kappa_high=hi, kappa_method=method,
                         note=note))
    return results(pd.DataFrame(rows), KAPPA_GOLD_MEASURES, level=confidence, keys=by)


# ------------------------------------------------------------------------------------- raters side by side
def _wide(df: pd.DataFrame, raters: str, by: Sequence[str]) -> pd.DataFrame:
    """Units (rows: by + dataset, item, order, sample) × raters (columns) of verdicts, NA where a rater has none."""
    unit = [c for c in dict.fromkeys([*by, "dataset", "item_id", "order", "sample"]) if c != raters]
    check_design(df, [raters, *by], unit=[c for c in unit if c not in by])
    w = df.set_index(unit + [raters])["verdict"].unstack(raters)
    w.columns = [str(c) for c in w.columns]
    return w.sort_index()


#: the note of a rater's agreement with itself (the diagonal of the judge × judge table): 1 by definition
SELF_AGREEMENT_NOTE = "a rater against itself: 1 by definition, no interval"


def _rater_by(df: pd.DataFrame, by: Sequence[str], raters: str, name: str) -> list[str]:
    """``by`` as a list of columns; rater names passed there (the old second argument, ``judges``) are refused with
    a :class:`~evallab.errors.DesignError` naming the keyword to use."""
    by = [by] if isinstance(by, str) else list(by)
    missing = [c for c in by if c not in df.columns]
    if missing and raters in df.columns and set(missing) <= set(map(str, df[raters].dropna().unique())):
        raise DesignError(f"{name}: by={missing} names values of {raters!r}, not columns; the second argument is the "
                          f"grouping by (as in every estimator) — pass the raters to compare as judges={missing}")
    return by


@needs_verdicts("agreement between judges (Cohen's kappa)", _RELIABILITY)
@intervals.shared_resamples()  # the intervals over the same items draw their resamples once
def judge_agreement(df: pd.DataFrame, by: Sequence[str] = (), *, judges: Sequence[str] | None = None,
                    raters: str = "judge", confidence: float = 0.95, n_resamples: int = 1000,
                    seed: int = 0) -> Results:
    """Agreement of every two raters (judges) on the same units (dataset, item, order, sample within ``by``).

    Each rater must hold one reply per unit (strategy, model, anchor set constant within a rater and group, or in
    ``by``); raters are told apart by ``raters``. Units a rater did not parse are left out of that pair.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table holding every rater's replies.
    by : sequence of str, default ()
        Grouping columns (``()``: the whole table is one group) — the second argument, as in every estimator.
    judges : sequence of str, optional, keyword-only
        The raters to compare (values of the ``raters`` column; default all). Rater names passed as ``by`` (the
        second argument before it was ``by``) are refused with a :class:`~evallab.errors.DesignError` saying so.
    raters : str, default "judge"
        The column that tells raters apart (``"sample"``: a judge's repeated samples as raters).
    confidence : float, default 0.95
        Level of the interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no interval).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        Long (measures :data:`JUDGE_AGREEMENT_MEASURES`; n: replies both parsed): ``by`` + ``judge_a``,
        ``judge_b``, counts ``n`` (units both parsed), ``items``; ``agreement`` (proportion in [0, 1]) with
        ``agreement_low``/``_high`` (item-cluster interval: Wilson when every item holds one unit, the Wilson
        fallback when every item has the same share, else an item bootstrap) and ``agreement_method``, ``kappa``
        (Cohen; coefficient) with ``kappa_low``/``_high`` and ``kappa_method`` (:func:`cohen_kappa_method`),
        ``note``. Both orders of each pair and the diagonal (agreement 1 on the rater's own parsed units, by
        definition: no interval, :data:`SELF_AGREEMENT_NOTE`) are included, so ``pivot(index="judge_a",
        columns="judge_b", values="kappa")`` gives the square matrix. A pair whose interval is degenerate (every
        unit agrees) has NaN bounds and says so in ``note``.

    Raises
    ------
    EvallabError
        A rater in ``judges`` not in the ``raters`` column.
    DesignError
        When a rater holds several replies per unit.

    References
    ----------
    J. Cohen (1960), "A coefficient of agreement for nominal scales"; ``sklearn.metrics.cohen_kappa_score``.

    Examples
    --------
    A and B agree on 4 of 5 items (kappa 0.615); C left q4 unparsed, so its pairs count 4 units:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import judge_agreement
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5"] * 3,
    ...     "judge": ["A"] * 5 + ["B"] * 5 + ["C"] * 5, "verdict": ["pass", "pass", "fail", "fail", "pass",
    ...     "pass", "fail", "fail", "fail", "pass", "pass", "pass", "fail", None, "fail"]}))
    >>> print(judge_agreement(df, n_resamples=0).query("judge_a < judge_b")[["judge_a", "judge_b", "n", "agreement",
    ...       "kappa"]].round(3).to_string(index=False))
    judge_a judge_b  n  agreement  kappa
          A       B  5       0.80  0.615
          A       C  4       0.75  0.500
          B       C  4       0.50  0.000
    """
    by = _rater_by(df, by, raters, "judge_agreement")
    rows = []
    for key, g in groups(df, by):
        w = _wide(g, raters, [])
        names = list(judges) if judges else sorted(w.columns)
        missing = [j for j in names if j not in w.columns]
        if missing:
            raise EvallabError(f"rater(s) {missing} not in column {raters!r}; present: {sorted(w.columns)}")
        item = item_key(w.index)
        for a, b in combinations(names, 2):
            m = w[a].notna().to_numpy() & w[b].notna().to_numpy()
            va, vb, cl = w[a].to_numpy()[m], w[b].to_numpy()[m], np.asarray(item)[m]
            eq = pd.Series(va == vb).groupby(cl).agg(["sum", "size"])
            lo, hi, am = intervals.ratio_interval_method(eq["sum"], eq["size"], n_resamples=n_resamples,
                                                         confidence=confidence, seed=seed) \
                if m.any() else (NAN, NAN, "")
            k, klo, khi, km = cohen_kappa_method(va, vb, clusters=cl, confidence=confidence,
                                                 n_resamples=n_resamples, seed=seed)
            note = (not_computable("no unit parsed by both") if not m.any() else
                    not_computable("a single category (kappa undefined)") if not np.isfinite(k) else
                    one_category_note(va, vb, (a, b)) or
                    intervals.no_interval_note(k, klo, khi, units=len(eq), n_resamples=n_resamples))
            for x, y in ((a, b), (b, a)):
                rows.append(dict(key, judge_a=x, judge_b=y, n=int(m.sum()), items=len(eq),
                                 agreement=float((va == vb).mean()) if m.any() else NAN, agreement_low=lo,
                                 agreement_high=hi, agreement_method=am, kappa=k, kappa_low=klo, kappa_high=khi,
                                 kappa_method=km, note=note))
        for j in names:
            n = int(w[j].notna().sum())
            rows.append(dict(key, judge_a=j, judge_b=j, n=n, items=int(pd.Series(np.asarray(item)[
                w[j].notna().to_numpy()]).nunique()), agreement=1.0, agreement_low=NAN, agreement_high=NAN,
                agreement_method="", kappa=1.0, kappa_low=NAN, kappa_high=NAN, kappa_method="",
                note=SELF_AGREEMENT_NOTE))
    out = pd.DataFrame(rows).sort_values([*by, "judge_a", "judge_b"]).reset_index(drop=True)
    measures = JUDGE_AGREEMENT_MEASURES
    if {"order", "verdict", "gold"} <= set(df.columns) and not pairwise(df).any():  # pointwise: (item, sample)
        measures = [relabel(m, n_unit="units (item, sample) both judges parsed") if m.n_unit else m
                    for m in measures]
    return results(out, measures, level=confidence, keys=[*by, "judge_a", "judge_b"])


def _rater_tables(df: pd.DataFrame, by: Sequence[str], raters: str, judges: Sequence[str] | None):
    """``(key, units × raters table)`` per group of ``by``, restricted to ``judges`` when given."""
    for key, g in groups(df, list(by)):
        w = _wide(g, raters, [])
        yield key, (w[[j for j in judges if j in w.columns]] if judges else w)


def _codes(w: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    vals = w.to_numpy(dtype=object)
    isna = pd.isna(vals)
    cats = sorted({str(v) for v in vals[~isna]})
    lut = {c: i for i, c in enumerate(cats)}
    arr = np.full(vals.shape, np.nan)
    arr[~isna] = [lut[str(v)] for v in vals[~isna]]
    return arr, cats


def _item_index(w: pd.DataFrame) -> np.ndarray:
    """The item of each unit of ``w`` as 0, 1, ... in order of first appearance."""
    return pd.factorize(item_key(w.index))[0]


def _fleiss_totals(t: np.ndarray, m: int) -> np.ndarray:
    """Fleiss' kappa from totals [Σ_i P_i·m(m−1) (agreeing rater pairs), N units, category counts...]."""
    agree, n_units, counts = t[..., 0], t[..., 1], t[..., 2:]
    with np.errstate(invalid="ignore", divide="ignore"):
        p_bar = agree / (n_units * m * (m - 1))
        p_j = counts / (n_units * m)[..., None]
        p_e = (p_j ** 2).sum(axis=-1)
        return np.where(p_e < 1, (p_bar - p_e) / (1 - p_e), np.nan)


def _unanimous_note(value: float, low: float, high: float, counts: np.ndarray, items: np.ndarray, m: int | None,
                    n_resamples: int, confidence: float, name: str) -> str:
    """The note of a chance-corrected coefficient without an interval. When every unit is unanimous the
    coefficient is 1 in every resample (a degenerate interval, never shown as [1, 1]); the Wilson bound of the share
    of unanimous items is the bound that exists, and is given instead."""
    n_items = int(items.max()) + 1 if len(items) else 0
    note = intervals.no_interval_note(value, low, high, units=n_items, n_resamples=n_resamples)
    if not note or n_resamples <= 0 or n_items < 2:
        return note
    per_unit = counts.sum(1) if m is None else np.full(len(counts), m)
    unan = counts.max(1) == per_unit
    item_unan = np.ones(n_items, dtype=bool)
    np.logical_and.at(item_unan, items, unan)
    k = int(item_unan.sum())
    if k < n_items:
        return note
    lo, _ = intervals.wilson(k, n_items, confidence)
    return (f"no interval: every one of the {len(counts)} units is unanimous, so {name} is 1 in every resample, "
            f"a degenerate interval; the share of unanimous items is {k} of {n_items}, at least {lo:.1%} by the "
            f"Wilson lower {confidence:.0%} bound")


@needs_verdicts("Fleiss' kappa", _RELIABILITY)
def fleiss_kappa(df: pd.DataFrame, by: Sequence[str] = (), *, judges: Sequence[str] | None = None,
                 raters: str = "judge", confidence: float = 0.95, n_resamples: int = 1000,
                 seed: int = 0, min_items: int = 0) -> Results:
    """Fleiss' kappa across raters (judges; or samples with ``raters="sample"``) on units every rater parsed.

    Kappa compares the agreement within units with the agreement the verdicts' overall shares would give by
    chance; from a single unit that chance agreement comes from the unit's own verdicts, and the figure (e.g. −0.5
    for a 2–1 split of three raters) says nothing: it is not computable from fewer than two units.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table holding every rater's replies.
    by : sequence of str, default ()
        Grouping columns (``()``: the whole table is one group) — the second argument, as in every estimator.
    judges : sequence of str, optional, keyword-only
        The raters to compare (values of the ``raters`` column; default all). Rater names passed as ``by`` (the
        second argument before it was ``by``) are refused with a :class:`~evallab.errors.DesignError` saying so.
    raters : str, default "judge"
        The column that tells raters apart (``"sample"``: a judge's repeated samples as raters).
    confidence : float, default 0.95
        Level of the interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no interval).
    seed : int, default 0
        Seed of the bootstrap.
    min_items : int, default 0
        Fewest items a group needs for an interval (report 01 passes
        :data:`~evallab.metrics._design.MIN_ITEMS`): below it the coefficient is given without one and ``note``
        says so (:func:`~evallab.metrics._design.thin_note`) — a bootstrap over a handful of items is no interval.

    Returns
    -------
    Results
        One row per group (one row for the whole table when ``by`` is empty; measures from
        :func:`_rater_measures`, n: units — "requests" when the samples are the raters): ``by`` + ``kappa``
        (coefficient) in [−1, 1] (``statsmodels`` ``fleiss_kappa``), ``kappa_low``, ``kappa_high`` (percentile
        bootstrap over items of the per-item agreeing-pair and category counts), ``kappa_method`` (that bootstrap;
        ``""`` without an interval), ``units``, ``units_dropped`` (a rater missing or unparsed), ``items``,
        ``raters``, ``note`` (also why the bounds are NaN: when every unit is unanimous the interval is degenerate
        and the note gives the Wilson bound of the share of unanimous items instead).

    Raises
    ------
    DesignError
        When a rater holds several replies per unit.

    References
    ----------
    J. L. Fleiss (1971), "Measuring nominal scale agreement among many raters", *Psychological Bulletin* 76(5);
    ``statsmodels.stats.inter_rater.fleiss_kappa``.

    Examples
    --------
    C left q4 unparsed, so q4 is dropped; on the 4 units the three raters parsed, P̄ = 2/3 and P_e = 0.514:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import fleiss_kappa
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5"] * 3,
    ...     "judge": ["A"] * 5 + ["B"] * 5 + ["C"] * 5, "verdict": ["pass", "pass", "fail", "fail", "pass",
    ...     "pass", "fail", "fail", "fail", "pass", "pass", "pass", "fail", None, "fail"]}))
    >>> print(fleiss_kappa(df, n_resamples=0)[["kappa", "units", "units_dropped", "raters"]].round(3)
    ...       .to_string(index=False))
     kappa  units  units_dropped  raters
     0.314      4              1       3
    """
    by, unit_name = _rater_by(df, by, raters, "fleiss_kappa"), _unit_name(raters)
    rows = []
    for key, w in _rater_tables(df, by, raters, judges):
        full = w.dropna()
        r = dict(key, kappa=NAN, kappa_low=NAN, kappa_high=NAN, kappa_method="", units=len(full),
                 units_dropped=len(w) - len(full), items=0, raters=int(w.shape[1]), note="")
        if w.shape[1] < 2:
            r["note"] = not_computable(f"needs two or more raters ({raters}); the table has {w.shape[1]}")
        elif full.empty:
            r["note"] = not_computable("no unit parsed by every rater")
        elif len(full) < 2:
            r["note"] = not_computable(
                f"1 {unit_name[:-1]} with every {raters} parsed; kappa's chance agreement would come from that "
                f"{unit_name[:-1]}'s own verdicts, and a figure from one unit says nothing")
        else:
            codes, cats = _codes(full)
            table, _ = aggregate_raters(codes.astype(int), n_cat=len(cats))
            m = int(w.shape[1])
            if len(cats) < 2:
                r["note"] = not_computable("a single category (kappa undefined)")
            else:
                r["kappa"] = float(_sm_fleiss(table, method="fleiss"))
                items = _item_index(full)
                per_unit = np.column_stack([(table * (table - 1)).sum(1), np.ones(len(table)), table])
                per = np.zeros((items.max() + 1, per_unit.shape[1]))
                np.add.at(per, items, per_unit)
                r["items"] = len(per)
                if too_thin(len(per), min_items):
                    r["note"] = thin_note(len(per), min_items)
                else:
                    r["kappa_low"], r["kappa_high"] = intervals.bootstrap_sums(
                        per, lambda t, m=m: _fleiss_totals(t, m), n_resamples=n_resamples, confidence=confidence,
                        seed=seed)
                    r["kappa_method"] = bootstrap_method(n_resamples) if np.isfinite(r["kappa_low"]) else ""
                    r["note"] = _unanimous_note(r["kappa"], r["kappa_low"], r["kappa_high"], table, items, m,
                                                n_resamples, confidence, "kappa")
        rows.append(r)
    return results(pd.DataFrame(rows), _rater_measures("kappa", "Fleiss' kappa", unit_name), level=confidence,
                   keys=by)


def _alpha_totals(t: np.ndarray, L: int) -> np.ndarray:
    """Krippendorff's nominal alpha from the totals of the coincidence matrix (flattened L×L)."""
    o = t.reshape(*t.shape[:-1], L, L)
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    diag = np.eye(L, dtype=bool)
    do = o[..., ~diag].sum(axis=-1)
    de = (n_c[..., :, None] * n_c[..., None, :])[..., ~diag].sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(de > 0, 1 - (n - 1) * do / de, np.nan)


@needs_verdicts("Krippendorff's alpha (nominal)", _RELIABILITY)
def krippendorff_alpha(df: pd.DataFrame, by: Sequence[str] = (), *, judges: Sequence[str] | None = None,
                       raters: str = "judge", confidence: float = 0.95, n_resamples: int = 1000,
                       seed: int = 0, min_items: int = 0) -> Results:
    """Krippendorff's alpha (nominal) across raters; units with missing replies are kept (alpha allows them),
    units with fewer than two parsed replies carry no pairable value and are dropped.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table holding every rater's replies.
    by : sequence of str, default ()
        Grouping columns (``()``: the whole table is one group) — the second argument, as in every estimator.
    judges : sequence of str, optional, keyword-only
        The raters to compare (values of the ``raters`` column; default all). Rater names passed as ``by`` (the
        second argument before it was ``by``) are refused with a :class:`~evallab.errors.DesignError` saying so.
    raters : str, default "judge"
        The column that tells raters apart (``"sample"``: a judge's repeated samples as raters).
    confidence : float, default 0.95
        Level of the interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no interval).
    seed : int, default 0
        Seed of the bootstrap.
    min_items : int, default 0
        Fewest items a group needs for an interval (report 01 passes
        :data:`~evallab.metrics._design.MIN_ITEMS`): below it the coefficient is given without one and ``note``
        says so (:func:`~evallab.metrics._design.thin_note`) — a bootstrap over a handful of items is no interval.

    Returns
    -------
    Results
        One row per group (measures from :func:`_rater_measures`, n: units): ``by`` + ``alpha`` (coefficient in
        [−1, 1], ``krippendorff.alpha``), ``alpha_low``, ``alpha_high`` (percentile bootstrap over items of each
        item's coincidence counts), ``alpha_method`` (that bootstrap; ``""`` without an interval), counts
        ``units`` (units with two or more parsed replies), ``items``, ``raters``; ``note``.

    Raises
    ------
    DesignError
        When a rater holds several replies per unit.

    References
    ----------
    K. Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", Annenberg School for Communication
    Departmental Papers 43 (nominal data, missing values); ``krippendorff.alpha``.

    Examples
    --------
    The same three raters; unlike Fleiss' kappa, alpha keeps q4 with its two parsed replies:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import krippendorff_alpha
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5"] * 3,
    ...     "judge": ["A"] * 5 + ["B"] * 5 + ["C"] * 5, "verdict": ["pass", "pass", "fail", "fail", "pass",
    ...     "pass", "fail", "fail", "fail", "pass", "pass", "pass", "fail", None, "fail"]}))
    >>> r = krippendorff_alpha(df, n_resamples=50)
    >>> print(r[["alpha", "units", "raters", "alpha_method"]].round(3).to_string(index=False))
     alpha  units  raters                              alpha_method
     0.469      5       3 item bootstrap (percentile, 50 resamples)
    """
    by = _rater_by(df, by, raters, "krippendorff_alpha")
    rows = []
    for key, w in _rater_tables(df, by, raters, judges):
        w = w[w.notna().sum(axis=1) >= 2]
        codes, cats = _codes(w)
        r = dict(key, alpha=NAN, alpha_low=NAN, alpha_high=NAN, alpha_method="", units=len(w), items=0,
                 raters=int(w.shape[1]), note="")
        if w.shape[1] < 2:
            r["note"] = not_computable(f"needs two or more raters ({raters})")
        elif len(w) == 0:
            r["note"] = not_computable("no unit with two parsed replies")
        elif len(cats) < 2:
            r["note"] = not_computable("a single category (alpha undefined)")
        else:
            L = len(cats)
            r["alpha"] = float(krippendorff.alpha(reliability_data=codes.T, level_of_measurement="nominal",
                                                  value_domain=list(range(L))))
            cnt = np.stack([(codes == c).sum(axis=1) for c in range(L)], axis=1).astype(float)  # units × L
            mu = cnt.sum(1)
            co = cnt[:, :, None] * cnt[:, None, :]
            co[:, np.arange(L), np.arange(L)] -= cnt
            co = co / (mu - 1)[:, None, None]
            items = _item_index(w)
            per = np.zeros((items.max() + 1, L * L))
            np.add.at(per, items, co.reshape(len(co), -1))
            r["items"] = len(per)
            if too_thin(len(per), min_items):
                r["note"] = thin_note(len(per), min_items)
            else:
                r["alpha_low"], r["alpha_high"] = intervals.bootstrap_sums(
                    per, lambda t, L=L: _alpha_totals(t, L), n_resamples=n_resamples, confidence=confidence,
                    seed=seed)
                r["alpha_method"] = bootstrap_method(n_resamples) if np.isfinite(r["alpha_low"]) else ""
                r["note"] = _unanimous_note(r["alpha"], r["alpha_low"], r["alpha_high"], cnt, items, None,
                                            n_resamples, confidence, "alpha")
        rows.append(r)
    return results(pd.DataFrame(rows), _rater_measures("alpha", "Krippendorff's alpha", _unit_name(raters)),
                   level=confidence, keys=by)


# -------------------------------------------------------------------------------------- repetition stability
@needs_verdicts("repetition stability")
@intervals.shared_resamples()  # the intervals over the same items draw their resamples once
def repetition_stability(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, confidence: float = 0.95,
                         n_resamples: int = 1000, seed: int = 0) -> Results:
    """Agreement of a judge with itself across repeated samples of the same request.

    A unit is one request — (dataset, item, order) within the group and its design columns — with at least two
    parsed samples. Shi et al. (2024, §3.1) define repetition stability as the mean, over requests, of the share of
    samples that gave the request's most frequent verdict.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table with several ``sample`` values per request.
    by : sequence of str, default ("judge",)
        Grouping columns.
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap; Wilson where every item holds one 0/1 request).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        Measures :data:`REPETITION_MEASURES`; n: requests. ``by`` + counts ``units``, ``items``;
        ``repetition_stability`` (proportion) in [1/k, 1] (+ ``_low``/``_high``/``_method``), ``unanimous`` (units
        whose samples all agree), ``unanimity`` in [0, 1] (+ ``_low``/``_high``/``_method``), ``flip_rate``
        in [0, 1] = share of sample pairs within a unit whose verdicts differ (+ ``_low``/``_high``/``_method``),
        ``unparsed`` (replies), ``note``. Intervals resample items
        (:func:`~evallab.metrics._intervals.ratio_interval_method`: the Wilson score interval when every item
        holds one request with a 0/1 value, the Wilson fallback named as such when every item has the same share,
        else an item bootstrap). Every group of ``df`` appears; a group without repeated samples has 0 units and a
        note.

    Raises
    ------
    DesignError
        When the request's columns leave several replies per (item, order, sample).

    References
    ----------
    Shi et al. (2024), "Judging the Judges: A Systematic Investigation of Position Bias in Pairwise Comparative
    Assessments by LLMs", §3.1, "repetition stability".

    Examples
    --------
    Three samples per request: q1 unanimous, q2 and q3 split 2–1; stability (1 + 2/3 + 2/3) / 3 = 7/9, flips 4 of
    the 9 sample pairs:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import repetition_stability
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1"] * 3 + ["q2"] * 3 + ["q3"] * 3, "judge": "A",
    ...     "sample": [0, 1, 2] * 3,
    ...     "verdict": ["pass", "pass", "pass", "pass", "fail", "pass", "fail", "fail", "pass"]}))
    >>> print(repetition_stability(df, n_resamples=0)[["units", "repetition_stability", "unanimity", "unanimity_method",
    ...       "flip_rate"]].round(3).to_string(index=False))
     units  repetition_stability  unanimity unanimity_method  flip_rate
         3                 0.778      0.333     Wilson score      0.444
    """
    by = list(by)
    unit = list(dict.fromkeys([*by, "dataset", "item_id", "order",
                               *[c for c in ("judge", "model", "strategy", "anchor_set") if c not in by]]))
    check_design(df, by)  # several strategies (models, anchor sets) inside one group are refused, never pooled
    ok = df[df["verdict"].notna()]
    counts = ok.groupby(unit + ["verdict"], observed=True, dropna=False).size().unstack("verdict", fill_value=0)
    n = counts.sum(axis=1)
    counts = counts[n >= 2]
    rows = []
    for key, g in groups(df, by):
        c = counts
        for col, v in key.items():
            c = c[c.index.get_level_values(col).astype(object) == v] if len(c) else c
        r = dict(key, units=len(c), items=0, unparsed=int(g["verdict"].isna().sum()), note="")
        if len(c) == 0:
            r.update(repetition_stability=NAN, repetition_stability_low=NAN, repetition_stability_high=NAN,
                     repetition_stability_method="", unanimous=0, unanimity=NAN, unanimity_low=NAN,
                     unanimity_high=NAN, unanimity_method="", flip_rate=NAN, flip_rate_low=NAN, flip_rate_high=NAN,
                     flip_rate_method="", note=not_computable("no request with two or more parsed samples"))
            rows.append(r)
            continue
        arr = c.to_numpy(float)
        nn = arr.sum(1)
        modal = arr.max(1) / nn
        unan = (arr.max(1) == nn).astype(float)
        same_pairs = (arr * (arr - 1) / 2).sum(1)
        pairs = nn * (nn - 1) / 2
        items = pd.factorize(item_key(c.index))[0]
        per = np.zeros((items.max() + 1, 5))
        np.add.at(per, items, np.column_stack([modal, unan, np.ones(len(c)), pairs - same_pairs, pairs]))
        r["items"] = len(per)
        kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
        points = {"repetition_stability": (float(modal.mean()), 0, 2), "unanimity": (float(unan.mean()), 1, 2),
                  "flip_rate": (float((pairs - same_pairs).sum() / pairs.sum()), 3, 4)}
        for name, (value, num, den) in points.items():
            if name == "unanimity":
                r["unanimous"] = int(unan.sum())
            r[name] = value
            r[f"{name}_low"], r[f"{name}_high"], r[f"{name}_method"] = intervals.ratio_interval_method(
                per[:, num], per[:, den], **kw)
        rows.append(r)
    return results(pd.DataFrame(rows), REPETITION_MEASURES, level=confidence, keys=by)


# -------------------------------------------------------------------------------------- majority vote over samples
#: the measures of :func:`majority_vote` (one row per group)
MAJORITY_MEASURES = [
    _count("requests", "Requests"), _count("items", "Items"), _count("replies", "Parsed replies"),
    _count("unparsed", "Unparsed"), _count("gold_requests", "Requests with gold"),
    _count("gold_replies", "Parsed replies with gold"),
    _interval("reply_accuracy", "Accuracy per reply", "proportion", "gold_replies", "replies"),
    _interval("majority_accuracy", "Accuracy of the majority verdict", "proportion", "gold_requests", "requests"),
    _interval("majority_gain", "Majority minus per-reply accuracy", "pp", "items", "items"),
    _count("tied", "Requests without a majority (tied)", n="requests", n_unit="requests"),
    _count("straddling", "Requests one sample away from another majority", n="requests", n_unit="requests"),
    _interval("straddle_rate", "Share of requests one sample away from another majority", "proportion", "requests",
              "requests"),
    _interval("flip_probability", "Flip probability (a sample against its request's majority)", "proportion",
              "requests", "requests"),
]
#: the measures of :func:`majority_vote` with ``per="request"`` (one row per request; no intervals)
MAJORITY_REQUEST_MEASURES = [
    _count("samples", "Parsed samples"), _count("margin", "Margin (samples)"),
    Measure("majority_share", "Share of the majority verdict", "proportion", n="samples", n_unit="replies",
            note=None),
    Measure("flip_probability", "Flip probability", "proportion", n="samples", n_unit="replies", note=None),
    Measure("majority_correct", "Majority correct (ties: share of tied verdicts that are gold)", "proportion",
            note=None),
]


def _request_table(df: pd.DataFrame, by: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """One row per request (by + dataset, item, order and the design columns not in ``by``) with two or more
    parsed samples: the verdict counts, majority, margin, tie, flip probability, gold and the majority's
    correctness; and the request's columns."""
    unit = list(dict.fromkeys([*by, "dataset", "item_id", "order",
                               *[c for c in ("judge", "model", "strategy", "anchor_set") if c not in by]]))
    unit = [c for c in unit if c in df.columns]
    ok = df[df["verdict"].notna()].assign(_v=lambda d: d["verdict"].astype(str))
    counts = ok.groupby(unit + ["_v"], observed=True, dropna=False).size().unstack("_v", fill_value=0)
    counts = counts[counts.sum(axis=1) >= 2]
    gold = df[df["gold"].notna()].groupby(unit, observed=True, dropna=False)["gold"].first().astype(str)
    arr = counts.to_numpy(int)
    cats = np.asarray(counts.columns, dtype=object)
    n = arr.sum(1)
    top = np.sort(arr, axis=1)[:, ::-1]
    c1, c2 = top[:, 0], top[:, 1] if arr.shape[1] > 1 else np.zeros(len(arr), int)
    modes = arr == c1[:, None]
    n_modes = modes.sum(1)
    g = gold.reindex(counts.index).to_numpy(dtype=object)
    has_gold = pd.notna(g)
    is_gold = np.array([[has_gold[i] and cats[j] == g[i] for j in range(len(cats))] for i in range(len(arr))],
                       dtype=bool).reshape(arr.shape)
    req = counts.index.to_frame(index=False)
    req["samples"] = n
    req["majority"] = [str(cats[m.argmax()]) if k == 1 else "" for m, k in zip(modes, n_modes, strict=True)]
    req["majority_share"] = c1 / n
    req["margin"] = c1 - c2
    req["tied"] = n_modes > 1
    req["straddles"] = (c1 - c2) <= 1
    req["flip_probability"] = 1 - c1 / n
    req["gold"] = np.where(has_gold, g, None)
    req["correct_replies"] = (arr * is_gold).sum(1)
    req["majority_correct"] = np.where(has_gold, (modes & is_gold).sum(1) / n_modes, np.nan)
    return req, unit


@needs_verdicts("the majority verdict")
def majority_vote(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, per: str = "group", confidence: float = 0.95,
                  n_resamples: int = 1000, seed: int = 0) -> Results:
    """The majority verdict over a request's repeated samples: its accuracy beside the accuracy per reply, and how
    close each request is to another majority.

    A request is one (dataset, item, order) within the group and its design columns, with two or more parsed
    samples (a judge asked the same thing several times, e.g. at temperature 0.7). Its majority verdict is the most
    frequent parsed verdict; when several verdicts tie for most frequent there is no majority (``tied``) and the
    majority's correctness is the share of the tied verdicts that are gold — the expected accuracy of breaking the
    tie at random. A request *straddles* the verdict when one changed sample would give another majority or a tie
    with it: the margin between the two most frequent verdicts is at most one sample (every 2–1 split of three
    samples). Its flip probability is the share of its samples that disagree with its majority (1 − the modal
    share): the chance that one more sample, drawn like these, says something else.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table with several ``sample`` values per (item, order).
    by : sequence of str, default ("judge",)
        Grouping columns (several strategies inside one group are refused, never pooled).
    per : {"group", "request"}, default "group"
        ``"group"``: one row per group with the figures and their intervals; ``"request"``: one row per request
        (the list to read the straddling requests from).
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap; Wilson where every item holds one 0/1 value).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        ``per="group"`` (measures :data:`MAJORITY_MEASURES`): ``by`` + counts ``requests``, ``items``, ``replies``
        (parsed samples of those requests), ``unparsed`` (replies of the group), ``gold_requests``, ``gold_replies``;
        ``reply_accuracy`` (correct / parsed replies with gold, n: replies), ``majority_accuracy`` (mean majority
        correctness over requests with gold, n: requests), ``majority_gain`` (their difference, pp, paired item
        bootstrap), ``tied``, ``straddling`` (counts of requests), ``straddle_rate``, ``flip_probability`` (mean
        over requests; proportions, n: requests); each interval with ``_low``/``_high``/``_method`` (item-cluster:
        Wilson when every item holds one 0/1 value, else an item bootstrap — see
        :func:`~evallab.metrics._intervals.ratio_interval_method`); ``note``. ``per="request"`` (measures
        :data:`MAJORITY_REQUEST_MEASURES`): the request's columns + ``samples``, ``majority`` (``""`` when tied),
        ``majority_share``, ``margin``, ``tied``, ``straddles``, ``flip_probability``, ``gold``,
        ``correct_replies``, ``majority_correct`` (NaN without gold).

    Raises
    ------
    EvallabError
        An unknown ``per``.
    DesignError
        When ``by`` leaves several replies per (item, order, sample).

    References
    ----------
    Wang et al. (2023), "Self-Consistency Improves Chain of Thought Reasoning in Language Models", ICLR (the
    majority over sampled answers); deepeval#3110 and trulens#2741 (a stochastic judge whose re-runs straddle the
    verdict).

    Examples
    --------
    Three samples per item, gold "1": q1 2–1 for "1" (majority right, straddles), q2 3–0 for "2" (wrong), q3 2–1
    for "1": per reply 4 of 9 right, majority 2 of 3, two requests straddle, flip probability (1/3 + 0 + 1/3) / 3:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import majority_vote
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1"] * 3 + ["q2"] * 3 + ["q3"] * 3, "judge": "A",
    ...     "sample": [0, 1, 2] * 3, "verdict": ["1", "1", "2", "2", "2", "2", "1", "2", "1"], "gold": "1"}))
    >>> print(majority_vote(df, n_resamples=0)[["requests", "reply_accuracy", "majority_accuracy", "straddling",
    ...       "flip_probability"]].round(3).to_string(index=False))
     requests  reply_accuracy  majority_accuracy  straddling  flip_probability
            3           0.444              0.667           2             0.222
    """
    if per not in ("group", "request"):
        raise EvallabError(f"per={per!r}; expected 'group' or 'request'")
    by = list(by)
    check_design(df, by)
    req, unit = _request_table(df, by)
    if per == "request":
        return results(req, MAJORITY_REQUEST_MEASURES, keys=unit)
    kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    rows = []
    for key, g in groups(df, by):
        r_ = req
        for col, v in key.items():
            r_ = r_[r_[col].astype(object) == v] if len(r_) else r_
        r = dict(key, requests=len(r_), items=0, replies=int(r_["samples"].sum()) if len(r_) else 0,
                 unparsed=int(g["verdict"].isna().sum()), note="")
        gold = r_["gold"].notna().to_numpy() if len(r_) else np.zeros(0, bool)
        r["gold_requests"] = int(gold.sum())
        r["gold_replies"] = int(r_["samples"].to_numpy()[gold].sum()) if len(r_) else 0
        r["tied"] = int(r_["tied"].sum()) if len(r_) else 0
        r["straddling"] = int(r_["straddles"].sum()) if len(r_) else 0
        names = ("reply_accuracy", "majority_accuracy", "majority_gain", "straddle_rate", "flip_probability")
        for name in names:
            r.update({name: NAN, f"{name}_low": NAN, f"{name}_high": NAN, f"{name}_method": ""})
        if len(r_) == 0:
            r["note"] = not_computable("no request with two or more parsed samples")
            rows.append(r)
            continue
        items = pd.factorize(item_key(r_.set_index(["dataset", "item_id"]).index))[0]
        r["items"] = int(items.max()) + 1
        cols = np.column_stack([np.where(gold, r_["majority_correct"].fillna(0), 0), gold,
                                np.where(gold, r_["correct_replies"], 0), np.where(gold, r_["samples"], 0),
                                r_["straddles"], r_["flip_probability"], np.ones(len(r_))]).astype(float)
        s = np.zeros((r["items"], cols.shape[1]))
        np.add.at(s, items, cols)
        for name, num, den in (("straddle_rate", 4, 6), ("flip_probability", 5, 6)):
            r[name] = s[:, num].sum() / s[:, den].sum()
            r[f"{name}_low"], r[f"{name}_high"], r[f"{name}_method"] = intervals.ratio_interval_method(
                s[:, num], s[:, den], **kw)
        if gold.any():
            for name, num, den in (("majority_accuracy", 0, 1), ("reply_accuracy", 2, 3)):
                r[name] = s[:, num].sum() / s[:, den].sum()
                r[f"{name}_low"], r[f"{name}_high"], r[f"{name}_method"] = intervals.ratio_interval_method(
                    s[:, num], s[:, den], **kw)
            gain = r["majority_accuracy"] - r["reply_accuracy"]
            r["majority_gain"] = 0.0 if abs(gain) < 1e-12 else gain  # equal accuracies: 0, never "-0.0"
            if n_resamples > 0:
                r["majority_gain_low"], r["majority_gain_high"], r["majority_gain_method"] = \
                    intervals.ratio_difference_interval_method(s[:, 0], s[:, 1], s[:, 2], s[:, 3], **kw)
        else:
            r["note"] = not_computable("no gold labels: the accuracies need gold")
        rows.append(r)
    return results(pd.DataFrame(rows), MAJORITY_MEASURES, level=confidence, keys=by)



def coin_flip_chance(samples: int, categories: int = 2) -> dict[str, float]:
    """What :func:`repetition_stability` gives for a judge that picks each of ``categories`` verdicts with equal
    chance, independently in each of ``samples`` samples of a request: the chance levels of its three figures.

    - repetition stability: E[largest verdict count] / k, with P(largest count < m) = k! / c^k · [x^k]
      (Σ_{j<m} x^j / j!)^c (the truncated exponential generating function of c counts each below m);
    - unanimity: c · (1/c)^k = c^(1−k), the chance that all k samples agree;
    - flip rate: 1 − 1/c, the chance that two samples differ.

    Parameters
    ----------
    samples : int
        Parsed samples per request, k ≥ 2.
    categories : int, default 2
        Verdict categories the judge can give, c ≥ 1 (2 for 1/2; 3 with ties).

    Returns
    -------
    dict
        ``{"repetition_stability", "unanimity", "flip_rate"}``, proportions.

    Raises
    ------
    EvallabError
        ``samples < 2`` or ``categories < 1``.

    References
    ----------
    Shi et al. (2024), "Judging the Judges", §3.1 (repetition stability: the mean share of a request's samples
    giving its most frequent verdict).

    Examples
    --------
    Three samples of a binary verdict: stability (¼·3 + ¾·2) / 3 = 0.75, unanimity ¼, flip rate ½:

    >>> coin_flip_chance(3, 2)
    {'repetition_stability': 0.75, 'unanimity': 0.25, 'flip_rate': 0.5}
    """
    from math import factorial

    from numpy.polynomial import polynomial as P

    from evallab.errors import EvallabError

    k, c = int(samples), int(categories)
    if k < 2 or c < 1:
        raise EvallabError(f"samples={samples}, categories={categories}; expected samples >= 2, categories >= 1")
    expected_max = 0.0
    for m in range(1, k + 1):  # E[max] = Σ_m P(max >= m)
        below = P.polypow([1 / factorial(j) for j in range(m)], c)
        p_below = factorial(k) / c ** k * (below[k] if len(below) > k else 0.0)
        expected_max += 1 - p_below
    return {"repetition_stability": round(float(expected_max) / k, 12), "unanimity": round(c ** (1 - k), 12),
            "flip_rate": round(1 - 1 / c, 12)}

# ------------------------------------------------------------------------------------------- LLMBar's table
PUBLISHED_COLUMNS = {"n": "n", "correct_order_12": "correct_ab", "correct_order_21": "correct_ba",
                     "correct_average_pct": "acc_pct", "correct_both": "correct_both",
                     "positional_agreement_equal": "consistent_pairs"}
#: what LLMBar's published columns are (Zeng et al. 2024, ``statistics.csv``): label, unit
_PUBLISHED_MEANING = {"n": ("Pairs", "count"), "correct_order_12": ("Correct, output 1 first", "count"),
                      "correct_order_21": ("Correct, output 2 first", "count"),
                      "correct_average_pct": ("Acc.", "percent"), "correct_both": ("Correct in both orders", "count"),
                      "positional_agreement_equal": ("Agr. (consistent pairs)", "count")}
#: the measures of :func:`published_check`: each published column (point values, no interval) and ours beside it
PUBLISHED_MEASURES = [Measure(f"{c}{suffix}", f"{label}{who}", unit, note=None, digits=1 if unit == "percent" else None)
                      for c, (label, unit) in _PUBLISHED_MEANING.items()
                      for suffix, who in (("", " (published)"), ("_ours", " (recomputed)"))]


@needs_verdicts("LLMBar's published check", tables=("verdicts",))
def published_check(verdicts: pd.DataFrame, published: pd.DataFrame) -> Results:
    """Recompute LLMBar's published statistics from ``verdicts`` and set them beside the authors' table.

    Parameters
    ----------
    verdicts : DataFrame
        LLMBar's tidy verdicts (:func:`evallab.datasets.load_llmbar`), or any table of pairwise replies in both
        orders with ``subset``, ``judge``, ``strategy`` and ``gold``.
    published : DataFrame
        The authors' ``statistics.csv`` (:func:`evallab.datasets.load_llmbar_statistics`): per (subset, judge,
        strategy) n, correct_order_12, correct_order_21, correct_average_pct (Acc., percent), correct_both,
        positional_agreement_equal (Agr., a count).

    Returns
    -------
    Results
        One row per published (subset, judge, strategy) present in ``verdicts`` (measures
        :data:`PUBLISHED_MEASURES`: counts of pairs, Acc. in percent; no intervals and so no method — the
        published table has none): each published column and ours beside it (``<col>_ours``, computed with
        :func:`pairwise_statistics` under ``unparsed="published"``), and ``match`` (all equal; Acc. within 1e-9).

    Raises
    ------
    DesignError
        When (subset, judge, strategy) leaves several replies per (item, order, sample).

    References
    ----------
    Zeng et al. (2024), LLMBar, ICLR, Tables 2–4 and the authors' ``statistics.csv``.

    Examples
    --------
    Under LLMBar's conventions q3's unparsed reply in order ``ba`` counts as wrong: output 2 first 2 of 4, Acc.
    (3/4 + 2/4) / 2 = 62.5%:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import published_check
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"],
    ...     "judge": "A", "subset": "Natural", "strategy": "Vanilla", "order": ["ab", "ba"] * 4,
    ...     "verdict": ["1", "1", "1", "2", "2", None, "1", "2"], "gold": ["1", "1", "2", "2", "2", "2", "1", "1"]}))
    >>> pub = pd.DataFrame({"subset": ["Natural"], "judge": "A", "strategy": "Vanilla", "n": 4, "correct_order_12": 3,
    ...     "correct_order_21": 2, "correct_average_pct": 62.5, "correct_both": 1, "positional_agreement_equal": 1})
    >>> print(published_check(df, pub)[["correct_order_21_ours", "correct_average_pct_ours", "match"]]
    ...       .to_string(index=False))
     correct_order_21_ours  correct_average_pct_ours  match
                         2                      62.5   True
    """
    key = ["subset", "judge", "strategy"]
    ours = pairwise_statistics(verdicts, key, unparsed="published", n_resamples=0)
    ours["acc_pct"] = 100 * ours["acc"]
    ours = ours[key + list(PUBLISHED_COLUMNS.values())].rename(
        columns={v: f"{k}_ours" for k, v in PUBLISHED_COLUMNS.items()})
    m = published[key + list(PUBLISHED_COLUMNS)].merge(ours, on=key, how="inner")
    ok = np.ones(len(m), dtype=bool)
    for c in PUBLISHED_COLUMNS:
        ok &= np.isclose(m[c].astype(float), m[f"{c}_ours"].astype(float), rtol=0, atol=1e-9)
    m["match"] = ok
    return results(m, PUBLISHED_MEASURES, keys=key)
