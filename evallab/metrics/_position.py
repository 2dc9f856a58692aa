"""Position bias of pairwise judges: does the verdict depend on which output is shown first?

All functions take the tidy verdict table with pairwise replies in orders ``ab`` (output 1 shown first) and ``ba``;
``verdict`` is the ORIGINAL output index. Unparsed replies are excluded and counted. A table with one presentation
order (or an empty ``order``: not recorded) cannot support these figures: they are NaN with the reason in ``note``.
Grouping follows :func:`evallab.metrics._design.check_design`; the item (:func:`~evallab.metrics._design.item_key`)
is the resampling unit. The estimators that pair replies across orders work on a
:class:`~evallab.metrics._design.PairedDesign`: built from the table and ``by``, or prepared once by the caller
(:func:`~evallab.metrics._design.paired_design`) and passed in place of the table. A *pair* is an (item, sample)
asked in both orders; ``pairs`` columns count those.

Every estimator returns a :class:`evallab.Results`: the frame described under Returns, whose ``measures`` name each
estimate's label, unit (``"proportion"``, ``"pp"``, ``"coefficient"``, ``"p-value"``, ``"count"``), interval columns
(``<column>_low``/``_high``), level, n column and what n counts (pairs, decisive replies, items), and the ``note``
column. An interval's method is named per row in ``<column>_method`` — the method that computed it
(:func:`evallab.metrics._intervals.ratio_interval_method`: the Wilson score interval when every item holds one
binary unit, e.g. one pair per item for position consistency; an item bootstrap (percentile) when an item holds
several, e.g. both orders' replies for first-slot preference; a Wilson fallback named as such when every item has
the same share; ``""`` without an interval, e.g. with ``n_resamples=0`` where a bootstrap was needed; for the
paired differences of :func:`anchor_effect`, :func:`~evallab.metrics._intervals.ratio_difference_interval_method`: a
paired item bootstrap, or when no item changed the bound from the Wilson interval of 0 of n items changed).
McNemar's p-value is exact binomial when fewer than 25 items are discordant, else chi-square with continuity
correction (:func:`evallab.metrics._intervals.mcnemar`).

Methods and their sources
-------------------------
The sources' names of the figures are quoted; their definitions are paraphrased (not the sources' words).

- position consistency — share of pairs (both replies parsed) whose verdict is the same in both orders: LLMBar's
  "Agr." (Zeng et al. 2024, §4: agreement of the evaluator's verdicts across the two orders), Shi et al. (2024,
  "Judging the Judges", §3.1) "position consistency" ("positional consistency" in their first version: the share
  of cases where the judge prefers the same solution after the positions are swapped), MT-Bench's "Consistency"
  (Zheng et al. 2023, Table 2: the share of cases where the judge gives a consistent result when the order of the
  two assistants is swapped).
- MT-Bench's breakdown of every pair asked in both orders (Zheng et al. 2023, Table 2, whose caption defines it:
  "Consistency is the percentage of cases where a judge gives consistent results when swapping the order of two
  assistants. 'Biased toward first' is the percentage of cases when a judge favors the first answer. 'Error'
  indicates wrong output format."): "Consistency"; "Biased toward first" (an inconsistent pair that moved toward
  the output shown first: it won in both orders, or in one order with a tie in the other); "Biased toward second";
  "Error" — a pair with an unparsed reply (the wrong output format; also an inconsistent pair with no direction,
  which 1/2/tie verdicts never give). The denominator is every pair asked in both orders (``pairs``), so the four
  shares partition the pairs and sum to 1; position consistency's denominator is the pairs with both replies
  parsed (``both_parsed``).
- preference fairness — Shi et al. (2024, §3.1) "preference fairness" ("positional fairness" in their first
  version): the direction of the inconsistent pairs (recency-preferred vs primacy-preferred counts); evallab
  reports the unnormalised form (recency-preferred − primacy-preferred pairs, as MT-Bench's breakdown classifies
  them) / pairs with both parsed, in [−1, 1]:
  0 = fair, negative = the first-shown output is favoured. (Shi et al. additionally min-max normalise it by bounds
  that depend on the inconsistency rate; the unnormalised share is comparable across judges with different
  consistency.) Their third measure, "repetition stability" (the share of a request's samples giving its most
  frequent verdict), is :func:`evallab.metrics._agreement.repetition_stability`.
- first-slot preference — share of decisive (non-tie) parsed replies that pick the output shown first (``ab`` →
  ``1``, ``ba`` → ``2``); 0.5 = none. Item-cluster interval (several replies per item). Pooled over both orders
  each output sits in each slot, so content cancels; replies shown in one order only give NaN with the reason
  (:func:`one_order_note`): there it would be the share choosing output 1, position mixed with quality.
- McNemar's test for an order effect, one pair per item: b = items where the first-shown output won in both
  orders, c = items where the second-shown did (with several samples, an item's majority).
- balanced position calibration — FairEval's "Balanced Position Calibration" (Wang et al. 2023, "Large Language
  Models are not Fair Evaluators", §3.2): judge both orders and average the verdicts, an inconsistent pair
  becoming a tie worth ``tie_credit``. On binary verdicts with ``tie_credit=0.5`` its accuracy EQUALS the mean of
  the two order accuracies (LLMBar's Acc.) on the same pairs: it removes the order from the verdict, it does not
  raise the expected accuracy.
  ``strict_accuracy`` (tie_credit 0: right in both orders) and ``abstention`` (share of inconsistent pairs) show
  what accepting only consistent verdicts costs. LLMBar's "Acc." (Zeng et al. 2024, §4) is the mean of the
  accuracies of the two orders: here ``(acc_ab + acc_ba) / 2`` on the scored pairs.
- anchor effect — how in-context examples (LLMBar ``Vanilla_1shot``/``Vanilla_2shot``) move first-slot preference
  and accuracy against 0-shot, paired over items.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab._results import Measure, Results, results
from evallab.errors import EvallabError
from evallab.metrics import _intervals as intervals
from evallab.metrics._design import (
    DEFAULT_BY,
    ORDERS,
    POINTWISE_REASON,
    PairedDesign,
    check_design,
    design_of,
    group_rows,
    groups,
    item_key,
    join_notes,
    needs_verdicts,
    not_computable,
    pairwise,
)

NAN = float("nan")


def _count(column: str, label: str) -> Measure:
    return Measure(column, label, "count")


def _rate(column: str, label: str, n: str, n_unit: str, unit: str = "proportion", **kw) -> Measure:
    """A measure without an interval (a share of ``n``)."""
    return Measure(column, label, unit, n=n, n_unit=n_unit, **kw)


def _interval(column: str, label: str, n: str, n_unit: str, unit: str = "proportion") -> Measure:
    """A measure whose interval is ``<column>_low``/``_high``, its method named per row in ``<column>_method``."""
    return Measure(column, label, unit, f"{column}_low", f"{column}_high", method_column=f"{column}_method", n=n,
                   n_unit=n_unit)


_PAIRS = [_count("pairs", "Pairs asked in both orders"), _count("both_parsed", "Pairs (both parsed)")]
#: the measures of :func:`position_consistency` (n of consistency: pairs with both replies parsed)
CONSISTENCY_MEASURES = [*_PAIRS, _count("consistent_pairs", "Consistent pairs"),
                        _interval("position_consistency", "Position consistency", "both_parsed", "pairs")]
#: the measures of :func:`position_bias`
POSITION_BIAS_MEASURES = [
    *_PAIRS, _count("pairs_unparsed", "Pairs with an unparsed reply"),
    _interval("position_consistency", "Position consistency", "both_parsed", "pairs"),
    *[_count(c, lab) for c, lab in (("consistent", "Consistent pairs"), ("biased_first", "Pairs biased to first"),
                                     ("biased_second", "Pairs biased to second"), ("error", "Error pairs"))],
    _rate("consistent_rate", "Consistent", "pairs", "pairs"),
    _rate("biased_first_rate", "Biased toward first", "pairs", "pairs"),
    _rate("biased_second_rate", "Biased toward second", "pairs", "pairs"),
    _rate("error_rate", "Error", "pairs", "pairs"),
    _rate("preference_fairness", "Preference fairness", "both_parsed", "pairs", unit="coefficient", digits=3),
    _count("decisive", "Decisive replies"), _count("first_slot", "Replies picking the first shown"),
    _interval("first_slot_preference", "First-slot preference", "decisive", "decisive replies"),
    _count("mcnemar_items_first", "Items: first shown won"), _count("mcnemar_items_second", "Items: second shown won"),
    _count("mcnemar_items", "Items (both parsed)"),
    _rate("mcnemar_p", "McNemar p", "mcnemar_items", "items", unit="p-value"),
    _count("unparsed", "Unparsed replies"),
]
#: the measures of :func:`balanced_position_accuracy` (n: the scored pairs)
BPC_MEASURES = [
    _count("pairs_with_gold", "Pairs with gold"), _count("excluded", "Not scored"),
    _rate("acc_ab", "Acc. output 1 first", "pairs_with_gold", "pairs"),
    _rate("acc_ba", "Acc. output 2 first", "pairs_with_gold", "pairs"),
    _interval("bpc_accuracy", "Balanced calibration accuracy", "pairs_with_gold", "pairs"),
    _rate("strict_accuracy", "Right in both orders", "pairs_with_gold", "pairs"),
    _rate("abstention", "Abstention", "pairs_with_gold", "pairs"),
]
#: the measures of :func:`anchor_effect` (each figure's n: the items it rests on)
ANCHOR_MEASURES = [
    _count("items", "Items"),
    _count("first_slot_items", "Items with a decisive reply"),
    _count("accuracy_items", "Items with a parsed reply and gold"),
    _count("delta_first_slot_items", "Items with a decisive reply (either strategy)"),
    _count("delta_accuracy_items", "Items with a parsed reply and gold (either strategy)"),
    _interval("first_slot_preference", "First-slot preference", "first_slot_items", "items"),
    _interval("accuracy", "Accuracy", "accuracy_items", "items"),
    _interval("delta_first_slot", "Δ first-slot preference", "delta_first_slot_items", "items", unit="pp"),
    _interval("delta_accuracy", "Δ accuracy", "delta_accuracy_items", "items", unit="pp"),
]


def _pair_flags(design: PairedDesign, unparsed: str = "exclude") -> dict[str, np.ndarray]:
    """Per pair of the design: asked in both orders, both parsed, consistent, MT-Bench's first/second/error, and the
    denominator of consistency under ``unparsed``."""
    p = design.pairs
    a, b = p["verdict_ab"], p["verdict_ba"]
    asked = p["has_ab"] & p["has_ba"]
    both = asked & (a >= 0) & (b >= 0)
    cons = both & (a == b)
    one, two = design.code("1"), design.code("2")
    first = (a == one) & (b == two)
    second = (a == two) & (b == one)
    # MT-Bench's breakdown partitions every pair asked in both orders: the direction an inconsistent pair moved
    # (+1 per order the first-shown output won, -1 per order the second-shown won, 0 for a tie) — a tie in one
    # order and a win for the first-shown output in the other is biased toward first; an unparsed reply (MT-Bench's
    # "Error": a wrong output format) is an error, as is an inconsistent pair with no direction
    net = ((a == one).astype(int) - (a == two)) + ((b == two).astype(int) - (b == one))
    mt_first, mt_second = both & ~cons & (net > 0), both & ~cons & (net < 0)
    f = {"asked": asked, "both": both, "cons": cons, "first": first, "second": second, "mt_first": mt_first,
         "mt_second": mt_second, "error": asked & ~cons & ~mt_first & ~mt_second, "den": both}
    if unparsed == "published":  # LLMBar: two unparsed replies agree; every pair asked in both orders counts
        f["cons"] = cons | (asked & (a < 0) & (b < 0))
        f["den"] = asked
    return f


def _one_order_text(orders: Sequence[str]) -> str:
    """The note of first-slot preference on decisive replies shown in ``orders`` ("" when both)."""
    if not orders or set(orders) == set(ORDERS):
        return ""
    return not_computable(f"first-slot preference needs both presentation orders: with only {orders[0]} it is the "
                          "share choosing the output shown first (always the same one), which mixes position with "
                          "which output is better")


@needs_verdicts("position consistency")
def position_consistency(df: pd.DataFrame | PairedDesign, by: Sequence[str] | None = None, *,
                         unparsed: str = "exclude", confidence: float = 0.95, n_resamples: int = 1000,
                         seed: int = 0) -> Results:
    """Position consistency per group: the share of pairs with the same verdict in both presentation orders.

    Parameters
    ----------
    df : DataFrame or PairedDesign
        Tidy verdict table (:mod:`evallab.verdicts`) of pairwise replies in orders ``ab`` and ``ba``, or a
        :class:`~evallab.metrics._design.PairedDesign` prepared once for several estimators
        (:func:`~evallab.metrics._design.paired_design`).
    by : sequence of str, optional
        The design cell (default ``("subset", "judge", "strategy")``; a prepared design's own ``by``).
    unparsed : {"exclude", "published"}, default "exclude"
        ``"exclude"``: the share of pairs with both replies parsed; ``"published"``: LLMBar's Agr. — every pair
        asked in both orders counts, two unparsed replies agree.
    confidence : float, default 0.95
        Level of the interval, in (0, 1).
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap; the Wilson interval of one pair per item needs none).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per group: ``by`` + ``pairs`` ((item, sample) asked in both orders; count), ``both_parsed`` (pairs
        with both replies parsed; count), ``consistent_pairs`` (LLMBar's Agr. count), ``position_consistency``
        (proportion in [0, 1]) with ``position_consistency_low``/``_high`` and ``position_consistency_method`` —
        the Wilson score interval with one pair per item, else a percentile item bootstrap (``""`` without an
        interval); ``note`` ("not computable: needs both presentation orders ..." on a one-order table).
        Measures :data:`CONSISTENCY_MEASURES`; n: pairs (``both_parsed``, or ``pairs`` under
        ``unparsed="published"``).

    Raises
    ------
    DesignError
        When ``by`` leaves several replies per (item, order, sample), or a column it needs is missing.

    References
    ----------
    Zheng et al. (2023), "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena", Table 2, "Consistency";
    Shi et al. (2024), "Judging the Judges", §3.1, "position consistency"; Zeng et al. (2024), LLMBar, §4, "Agr.".

    Examples
    --------
    Four items in both orders; q1 and q3 keep their verdict, q2 and q4 follow the slot (2 of 4, Wilson
    [0.150, 0.850]):

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import position_consistency
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"],
    ...     "judge": "A", "order": ["ab", "ba"] * 4, "verdict": ["1", "1", "1", "2", "2", "2", "1", "2"]}))
    >>> r = position_consistency(df, ["judge"])
    >>> print(r[["both_parsed", "consistent_pairs", "position_consistency", "position_consistency_low",
    ...          "position_consistency_high", "position_consistency_method"]].round(3).to_string(index=False))
     both_parsed  consistent_pairs  position_consistency  position_consistency_low  position_consistency_high position_consistency_method
               4                 2                   0.5                      0.15                       0.85                Wilson score
    """
    des = design_of(df, by)
    f = _pair_flags(des, unparsed)
    per_item = des.item_sums("pairs", f["den"], [f["cons"], np.ones(len(f["den"]))])
    asked, both = des.count("pairs", f["asked"]), des.count("pairs", f["both"])
    rows = []
    with intervals.shared_resamples(des.draws):
        for g in range(des.n_groups):
            per = per_item(g)
            r = dict(des.key(g), pairs=int(asked[g]), both_parsed=int(both[g]),
                     consistent_pairs=int(per[:, 0].sum()) if len(per) else 0, position_consistency=NAN,
                     position_consistency_low=NAN, position_consistency_high=NAN, position_consistency_method="",
                     note="")
            if len(per) == 0:
                r["note"] = not_computable(des.no_pairs_reason(g) if asked[g] == 0
                                           else "needs both presentation orders, and no pair has both replies parsed")
            else:
                r["position_consistency"] = float(per[:, 0].sum() / per[:, 1].sum())
                (r["position_consistency_low"], r["position_consistency_high"],
                 r["position_consistency_method"]) = intervals.ratio_interval_method(
                    per[:, 0], per[:, 1], n_resamples=n_resamples, confidence=confidence, seed=seed)
            rows.append(r)
    n = "both_parsed" if unparsed == "exclude" else "pairs"
    ms = [m if m.column != "position_consistency" else _interval(m.column, m.label, n, "pairs")
          for m in CONSISTENCY_MEASURES]
    return results(pd.DataFrame(rows), ms, level=confidence, keys=des.by)


def one_order_note(df: pd.DataFrame) -> str:
    """"" when the decisive replies of ``df`` were shown in both orders; else why first-slot preference is not
    computable on them: shown in one order only, the output in the first slot is always the same one, so the share
    picking it mixes position with which output is better (the swap of MT-Bench, Zheng et al. 2023 §3.4, is what
    separates them).

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table with ``order`` and ``verdict``.

    Returns
    -------
    str
        ``""``, or the ``note`` "not computable: first-slot preference needs both presentation orders; ...".

    References
    ----------
    Zheng et al. (2023), MT-Bench, §3.4 (swapping positions).

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1"], "judge": "A", "order": ["ab", "ba"],
    ...                                    "verdict": ["1", "1"]}))
    >>> one_order_note(df), one_order_note(df[df["order"] == "ab"])
    ('', 'not computable: first-slot preference needs both presentation orders: with only ab ...')
    """
    fs = first_slot(df)
    return _one_order_text(sorted(set(df.loc[fs.notna(), "order"].astype(str))))


def first_slot(df: pd.DataFrame) -> pd.Series:
    """Per reply: 1.0 when a parsed, decisive reply picked the output shown first, 0.0 when the second, NaN
    otherwise (a tie, unparsed, or an order not recorded).

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table with ``order`` (``ab``: output 1 shown first; ``ba``) and ``verdict`` (the ORIGINAL
        output index ``1``/``2``, or ``tie``).

    Returns
    -------
    Series of float
        Aligned with ``df``: 1.0 (``ab`` → ``1``, ``ba`` → ``2``), 0.0, or NaN.

    References
    ----------
    Zheng et al. (2023), MT-Bench, Table 2 ("Biased toward first"): the slot a verdict picked.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2"], "judge": "A",
    ...                                    "order": ["ab", "ba", "ab", "ba"], "verdict": ["1", "1", "tie", "2"]}))
    >>> first_slot(df).tolist()
    [1.0, 0.0, nan, 1.0]
    """
    first = ((df["order"] == "ab") & (df["verdict"] == "1")) | ((df["order"] == "ba") & (df["verdict"] == "2"))
    decisive = df["verdict"].isin(["1", "2"]) & df["order"].isin(ORDERS)
    return first.fillna(False).astype(float).where(decisive.fillna(False))


@needs_verdicts("position bias")
def position_bias(df: pd.DataFrame | PairedDesign, by: Sequence[str] | None = None, *, confidence: float = 0.95,
                  n_resamples: int = 1000, seed: int = 0) -> Results:
    """Position consistency, MT-Bench's breakdown, preference fairness, first-slot preference and McNemar's
    order-effect test per group (definitions and sources in the module docstring).

    Parameters
    ----------
    df : DataFrame or PairedDesign
        Tidy verdict table of pairwise replies in orders ``ab`` and ``ba`` (or a prepared
        :class:`~evallab.metrics._design.PairedDesign`), as in :func:`position_consistency`.
    by : sequence of str, optional
        The design cell (default ``("subset", "judge", "strategy")``; a prepared design's own ``by``).
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap; first-slot preference, several replies per item,
        then has no interval).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per group (measures :data:`POSITION_BIAS_MEASURES`): ``by`` + ``pairs`` ((item, sample) asked in
        both orders), ``both_parsed``, ``pairs_unparsed`` (a reply unparsed) — counts of pairs;
        ``position_consistency`` (proportion; + ``_low``/``_high``/``_method`` as in :func:`position_consistency`;
        n: pairs); ``consistent``, ``biased_first``, ``biased_second``, ``error`` (pair counts; MT-Bench),
        ``consistent_rate``, ``biased_first_rate``, ``biased_second_rate``, ``error_rate`` (proportions of
        ``pairs``, summing to 1: MT-Bench's partition, module docstring), ``preference_fairness`` (coefficient in [−1, 1]: (biased_second −
        biased_first) / both_parsed; 0 fair, negative favours the first shown); ``decisive`` (parsed non-tie
        replies with a known order), ``first_slot`` (of them, picked the first shown), ``first_slot_preference``
        (proportion in [0, 1], 0.5 = none) with ``_low``/``_high`` and ``first_slot_preference_method`` (an item
        bootstrap when an item holds several replies, Wilson with one; ``""`` without an interval; n: decisive
        replies); ``mcnemar_items_first``, ``mcnemar_items_second``, ``mcnemar_items`` (items with a pair both
        parsed: McNemar's b, c and n), ``mcnemar_p`` (p-value); ``unparsed`` (replies); ``note``.

    Raises
    ------
    DesignError
        When ``by`` leaves several replies per (item, order, sample), or a column it needs is missing.

    References
    ----------
    Zheng et al. (2023), MT-Bench, Table 2: "Consistency", "Biased toward first", "Biased toward second", "Error"
    ("'Error' indicates wrong output format": here a pair with an unparsed reply; denominator: every pair); Shi et al. (2024), "Judging the Judges", §3.1: "position
    consistency" and "preference fairness" (here unnormalised, see the module docstring); McNemar (1947).

    Examples
    --------
    Five items: q1 consistent, q2 and q3 won by the slot shown first, q4 by the second, q5 a tie then a win for
    the output shown second (biased toward second; no reply unparsed, so no "Error"); 5 of the 9 decisive replies
    pick the first slot; McNemar b = 2, c = 1, exact p = 1:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import position_bias
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": [f"q{i}" for i in range(1, 6) for _ in "ab"], "judge": "A",
    ...     "order": ["ab", "ba"] * 5, "verdict": ["1", "1", "1", "2", "1", "2", "2", "1", "tie", "1"]}))
    >>> r = position_bias(df, ["judge"], n_resamples=0)
    >>> print(r[["consistent_rate", "biased_first_rate", "biased_second_rate", "error_rate", "preference_fairness",
    ...          "first_slot_preference", "mcnemar_p"]].round(3).to_string(index=False))
     consistent_rate  biased_first_rate  biased_second_rate  error_rate  preference_fairness  first_slot_preference  mcnemar_p
                 0.2                0.4                 0.4         0.0                  0.0                  0.556        1.0
    """
    des = design_of(df, by)
    f = _pair_flags(des)
    rep = des.replies
    fs = rep["first_slot"]
    decisive = fs >= 0
    order = rep["order"]
    per_fs = des.item_sums("replies", decisive, [fs == 1, np.ones(len(fs))])
    shown = [des.count("replies", decisive & (order == o)) > 0 for o in (0, 1)]  # decisive replies per order
    per_mc = des.item_sums("pairs", f["both"], [f["first"], f["second"]])
    counts = {k: des.count("pairs", f[k]) for k in ("asked", "both", "cons", "mt_first", "mt_second", "error")}
    unparsed = des.count("replies", rep["verdict"] < 0)
    kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    rows = []
    with intervals.shared_resamples(des.draws):
        cons = position_consistency(des, confidence=confidence, n_resamples=n_resamples, seed=seed)
        for g in range(des.n_groups):
            c = cons.iloc[g]
            nb = int(counts["both"][g])
            r = dict(des.key(g), pairs=int(c["pairs"]), both_parsed=nb,
                     pairs_unparsed=int(counts["asked"][g] - nb),
                     **{k: c[k] for k in ("position_consistency", "position_consistency_low",
                                          "position_consistency_high", "position_consistency_method")})
            na = int(counts["asked"][g])
            for name, col in (("consistent", "cons"), ("biased_first", "mt_first"), ("biased_second", "mt_second"),
                              ("error", "error")):
                r[name] = int(counts[col][g]) if na else 0
                r[f"{name}_rate"] = r[name] / na if na else NAN
            r["preference_fairness"] = (r["biased_second"] - r["biased_first"]) / nb if nb else NAN
            per = per_fs(g)
            r["decisive"], r["first_slot"] = int(per[:, 1].sum()), int(per[:, 0].sum())
            one_order = _one_order_text([o for o, s in zip(ORDERS, shown, strict=True) if s[g]])
            ok = r["decisive"] and not one_order
            r["first_slot_preference"] = r["first_slot"] / r["decisive"] if ok else NAN
            (r["first_slot_preference_low"], r["first_slot_preference_high"],
             r["first_slot_preference_method"]) = intervals.ratio_interval_method(per[:, 0], per[:, 1], **kw) \
                if ok else (NAN, NAN, "")
            if nb:
                it = per_mc(g)
                b, cc = int((it[:, 0] > it[:, 1]).sum()), int((it[:, 1] > it[:, 0]).sum())
                m = intervals.mcnemar(b, cc)
                r.update(mcnemar_items_first=b, mcnemar_items_second=cc, mcnemar_items=len(it), mcnemar_p=m["pvalue"])
            else:
                r.update(mcnemar_items_first=0, mcnemar_items_second=0, mcnemar_items=0, mcnemar_p=NAN)
            r["unparsed"] = int(unparsed[g])
            notes = [c["note"]] if c["note"] else []
            if not r["decisive"]:
                notes.append(not_computable(des.no_pairs_reason(g) if not counts["asked"][g] else
                                            "first-slot preference needs decisive replies with a recorded order"))
            elif one_order:
                notes.append(one_order)
            r["note"] = join_notes(*notes)
            rows.append(r)
    return results(pd.DataFrame(rows), POSITION_BIAS_MEASURES, level=confidence, keys=des.by)


@needs_verdicts("swap-averaged accuracy")
def balanced_position_accuracy(df: pd.DataFrame | PairedDesign, by: Sequence[str] | None = None, *,
                               tie_credit: float = 0.5, confidence: float = 0.95, n_resamples: int = 1000,
                               seed: int = 0) -> Results:
    """FairEval's balanced position calibration on pairs judged in both orders (module docstring).

    Parameters
    ----------
    df : DataFrame or PairedDesign
        Tidy verdict table of pairwise replies in orders ``ab`` and ``ba`` with ``gold`` (or a prepared
        :class:`~evallab.metrics._design.PairedDesign`), as in :func:`position_consistency`.
    by : sequence of str, optional
        The design cell (default ``("subset", "judge", "strategy")``; a prepared design's own ``by``).
    tie_credit : float, default 0.5
        Credit in [0, 1] of an inconsistent pair (0.5: a tie is half right; 0: right only when right in both
        orders).
    confidence : float, default 0.95
        Level of the interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per group (measures :data:`BPC_MEASURES`; n: the scored pairs): ``by`` + ``pairs_with_gold``
        (pairs with both replies parsed and gold: the pairs scored; count), ``excluded`` ((item, sample) judged in
        an order but not scored: an order not asked, an unparsed reply or no gold; count), ``acc_ab``, ``acc_ba``
        (proportions: accuracy with output 1 / output 2 shown first, on the same pairs), ``bpc_accuracy``
        (proportion in [0, 1]) with ``bpc_accuracy_low``/``bpc_accuracy_high`` and ``bpc_accuracy_method`` (Wilson
        score when every item holds one pair scored 0 or 1, else a percentile item bootstrap; ``""`` without an
        interval), ``strict_accuracy`` (proportion right in both orders), ``abstention`` (proportion of
        inconsistent pairs), ``note``. With binary verdicts and ``tie_credit=0.5``, ``bpc_accuracy == (acc_ab +
        acc_ba) / 2`` exactly — LLMBar's *Acc.* on the same pairs.

    Raises
    ------
    EvallabError
        ``tie_credit`` outside [0, 1].
    DesignError
        When ``by`` leaves several replies per (item, order, sample).

    References
    ----------
    Wang et al. (2023), "Large Language Models are not Fair Evaluators", §3.2, "Balanced Position Calibration";
    Zeng et al. (2024), LLMBar, §4, "Acc." (the mean of the two orders' accuracies).

    Examples
    --------
    q1 and q3 are right in both orders (score 1), q2 and q4 inconsistent (a tie, 0.5): 3 / 4, the mean of the two
    order accuracies 3/4 and 3/4; right in both orders 2 of 4:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import balanced_position_accuracy
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"],
    ...     "judge": "A", "order": ["ab", "ba"] * 4, "verdict": ["1", "1", "1", "2", "2", "2", "1", "2"],
    ...     "gold": ["1", "1", "2", "2", "2", "2", "1", "1"]}))
    >>> print(balanced_position_accuracy(df, ["judge"], n_resamples=0)[["pairs_with_gold", "acc_ab", "acc_ba",
    ...       "bpc_accuracy", "strict_accuracy", "abstention"]].to_string(index=False))
     pairs_with_gold  acc_ab  acc_ba  bpc_accuracy  strict_accuracy  abstention
                   4    0.75    0.75          0.75              0.5         0.5
    """
    if not 0 <= tie_credit <= 1:
        raise EvallabError(f"tie_credit={tie_credit}; expected a value in [0, 1]")
    des = design_of(df, by)
    p = des.pairs
    a, b, gold = p["verdict_ab"], p["verdict_ba"], p["gold"]
    ok = (a >= 0) & (b >= 0) & (gold >= 0)
    ca, cb = (ok & (a == gold)).astype(float), (ok & (b == gold)).astype(float)
    cons = ok & (a == b)
    score = np.where(cons, ca, tie_credit)
    per_item = des.item_sums("pairs", ok, [score, np.ones(len(ok))])
    rows = []
    with intervals.shared_resamples(des.draws):
        for g in range(des.n_groups):
            sl = des.pair_rows(g)  # the group's pairs, in key order
            h = ok[sl]
            n = int(h.sum())
            r = dict(des.key(g), pairs_with_gold=n, excluded=len(h) - n)
            if n == 0:
                both = p["has_ab"][sl] & p["has_ba"][sl]
                why = (des.no_pairs_reason(g) if not both.any()
                       else "no gold labels (it scores pairs against gold)" if not (gold[sl][both] >= 0).any()
                       else "needs pairs with both orders parsed and gold")
                r.update(acc_ab=NAN, acc_ba=NAN, bpc_accuracy=NAN, bpc_accuracy_low=NAN, bpc_accuracy_high=NAN,
                         bpc_accuracy_method="", strict_accuracy=NAN, abstention=NAN, note=not_computable(why))
                rows.append(r)
                continue
            per = per_item(g)
            lo, hi, method = intervals.ratio_interval_method(per[:, 0], per[:, 1], n_resamples=n_resamples,
                                                             confidence=confidence, seed=seed)
            xa, xb = ca[sl][h], cb[sl][h]
            r.update(acc_ab=float(xa.mean()), acc_ba=float(xb.mean()), bpc_accuracy=float(score[sl][h].mean()),
                     bpc_accuracy_low=lo, bpc_accuracy_high=hi, bpc_accuracy_method=method,
                     strict_accuracy=float((xa * xb).mean()), abstention=float((~cons[sl][h]).mean()), note="")
            rows.append(r)
    return results(pd.DataFrame(rows), BPC_MEASURES, level=confidence, keys=des.by)


def _item_stats(d: pd.DataFrame) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Per reply of ``d``: its item (:func:`~evallab.metrics._design.item_key`, one numbering for the whole table),
    the 0/1 flags summed per item (``fs``: picked the first slot, ``dec``: decisive, ``c``: correct, ``p``: parsed
    with gold) and whether it is a decisive reply shown in order ``ab`` (the other decisive replies were shown
    ``ba``)."""
    fs = first_slot(d).to_numpy(dtype=float)
    decisive = ~np.isnan(fs)
    flags = {"fs": decisive & (fs == 1.0), "dec": decisive,
             "c": (d["verdict"] == d["gold"]).fillna(False).to_numpy(dtype=bool),
             "p": (d["verdict"].notna() & d["gold"].notna()).to_numpy(dtype=bool)}
    ab = decisive & (d["order"] == "ab").fillna(False).to_numpy(dtype=bool)
    return item_key(d), flags, ab


@needs_verdicts("the few-shot anchor effect")
@intervals.shared_resamples()  # the intervals over the same items draw their resamples once
def anchor_effect(df: pd.DataFrame, *, baseline: str = "Vanilla",
                  variants: Sequence[str] = ("Vanilla_1shot", "Vanilla_2shot"), by: Sequence[str] = ("judge",),
                  confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Results:
    """How in-context examples move first-slot preference and accuracy against the 0-shot baseline strategy.

    Compares strategies on the same items (those every compared strategy judged, within each group); ``strategy``
    is the compared column, so ``by`` must not hold it.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table of pairwise replies (orders ``ab``/``ba``, ``gold``) with a ``strategy`` column.
    baseline : str, default "Vanilla"
        The 0-shot strategy the others are compared with.
    variants : sequence of str, default ("Vanilla_1shot", "Vanilla_2shot")
        The strategies compared with it (those present).
    by : sequence of str, default ("judge",)
        Grouping columns; must not hold ``strategy``.
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 1000
        Bootstrap resamples over items (``0``: no bootstrap).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per group × strategy (baseline first; measures :data:`ANCHOR_MEASURES`, n: items): ``by`` +
        ``strategy``, ``items`` (count of the items every compared strategy judged), the n of each figure —
        ``first_slot_items`` (items with a decisive reply), ``accuracy_items`` (items with a parsed reply and gold),
        ``delta_first_slot_items`` and ``delta_accuracy_items`` (the same, in the variant or the baseline) —,
        ``first_slot_preference`` (+ ``_low``/``_high``), ``accuracy`` (+
        ``_low``/``_high``) — proportions; ``delta_first_slot`` and ``delta_accuracy`` (variant − baseline, in
        [−1, 1], unit pp) each with ``_low``/``_high``; each interval's method in ``<column>_method``: for a rate,
        Wilson score when every item holds one reply, else an item bootstrap; for a delta, a paired item bootstrap
        (variant and baseline resampled on the same items), or the bound from the Wilson interval of 0 of n items
        changed when no item changed. NaN deltas and a ``note`` on the baseline row. A group without the baseline
        strategy is left out and named in ``attrs["missing_baseline"]``.

    Raises
    ------
    EvallabError
        When ``by`` holds ``strategy``.
    DesignError
        When ``by`` + ``strategy`` leaves several replies per (item, order, sample).

    References
    ----------
    Zeng et al. (2024), LLMBar, §4 and Table 3: the strategies ``Vanilla``, ``Vanilla_1shot``, ``Vanilla_2shot``;
    first-slot preference as in :func:`position_bias`.

    Examples
    --------
    With one example, first-slot preference falls from 3 of 4 decisive replies to 1 of 4 (−0.5); accuracy stays 3
    of 4 and no item's count of right replies changed, so Δ accuracy's interval is the bound from Wilson's 0 of 2:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import anchor_effect
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2"] * 2, "judge": "A", "gold": "1",
    ...     "strategy": ["Vanilla"] * 4 + ["Vanilla_1shot"] * 4, "order": ["ab", "ba"] * 4,
    ...     "verdict": ["1", "1", "1", "2", "1", "1", "2", "1"]}))
    >>> r = anchor_effect(df, variants=("Vanilla_1shot",), n_resamples=0)
    >>> print(r[["strategy", "first_slot_preference", "accuracy", "delta_first_slot", "delta_accuracy",
    ...          "delta_accuracy_method"]].to_string(index=False))
         strategy  first_slot_preference  accuracy  delta_first_slot  delta_accuracy                                        delta_accuracy_method
          Vanilla                   0.75      0.75               NaN             NaN
    Vanilla_1shot                   0.25      0.75              -0.5             0.0 bound from the Wilson score interval of 0 of 2 items changed
    """
    by = list(by)
    if "strategy" in by:
        raise EvallabError("by must not hold 'strategy': it is the compared column")
    strategies = [baseline, *variants]
    d = df[df["strategy"].isin(strategies)]
    check_design(d, [*by, "strategy"])
    # every per-reply figure computed once on the whole table (one item numbering for every strategy compared),
    # then counted per (group, strategy, item) with numpy: the counts of grouping each strategy's rows of each group
    item, flags, ab = _item_stats(d)
    n_items = int(item.max()) + 1 if len(item) else 0
    is_strategy = {s: (d["strategy"] == s).fillna(False).to_numpy(dtype=bool) for s in strategies}
    rows, missing = [], []
    kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    for key, pos in group_rows(d, by):
        sel = {s: pos[is_strategy[s][pos]] for s in strategies}
        have = [s for s in strategies if len(sel[s])]
        if baseline not in have:
            missing.append(key)
            continue
        # the items every compared strategy judged (sorted), and each strategy's per-item counts on them
        common = functools.reduce(np.intersect1d, [np.unique(item[sel[s]]) for s in have])
        per = {s: {k: np.bincount(item[sel[s]], weights=v[sel[s]], minlength=n_items).astype(np.int64)[common]
                   for k, v in flags.items()} for s in have}
        # first-slot preference needs decisive replies shown in both orders (:func:`one_order_note`)
        one_order = {s: _one_order_text([o for o, shown in zip(ORDERS, (ab[sel[s]], flags["dec"][sel[s]] & ~ab[sel[s]]),
                                                                strict=True) if shown.any()])
                     for s in have}
        base = per[baseline]
        for s in have:
            x = per[s]
            # each figure's n: the items it rests on (an item without a decisive reply, or without a parsed reply
            # with gold, adds nothing to the figure nor to its resamples)
            r = dict(key, strategy=s, items=len(common), first_slot_items=int((x["dec"] > 0).sum()),
                     accuracy_items=int((x["p"] > 0).sum()),
                     delta_first_slot_items=int(((x["dec"] > 0) | (base["dec"] > 0)).sum()),
                     delta_accuracy_items=int(((x["p"] > 0) | (base["p"] > 0)).sum()))
            for name, num, den in (("first_slot_preference", "fs", "dec"), ("accuracy", "c", "p")):
                tot = x[den].sum()
                r[name] = x[num].sum() / tot if tot and not (name == "first_slot_preference" and one_order[s]) \
                    else NAN
                r[f"{name}_low"], r[f"{name}_high"], r[f"{name}_method"] = intervals.ratio_interval_method(
                    x[num], x[den], **kw) if np.isfinite(r[name]) else (NAN, NAN, "")
            for name, num, den in (("first_slot", "fs", "dec"), ("accuracy", "c", "p")):
                if s == baseline or (name == "first_slot" and (one_order[s] or one_order[baseline])):
                    r[f"delta_{name}"] = r[f"delta_{name}_low"] = r[f"delta_{name}_high"] = NAN
                    r[f"delta_{name}_method"] = ""
                    continue
                arrays = [x[num].astype(float), x[den].astype(float), base[num].astype(float),
                          base[den].astype(float)]
                r[f"delta_{name}"] = (arrays[0].sum() / arrays[1].sum() - arrays[2].sum() / arrays[3].sum()
                                      if arrays[1].sum() and arrays[3].sum() else NAN)
                if np.isfinite(r[f"delta_{name}"]):
                    r[f"delta_{name}_low"], r[f"delta_{name}_high"], r[f"delta_{name}_method"] = \
                        intervals.ratio_difference_interval_method(*arrays, **kw)
                else:
                    r[f"delta_{name}_low"] = r[f"delta_{name}_high"] = NAN
                    r[f"delta_{name}_method"] = ""
            undefined = [n for n in ("first_slot_preference", "accuracy") if not np.isfinite(r[n])]
            r["note"] = join_notes(*(["baseline"] if s == baseline else []),
                                   *[(one_order[s] or not_computable(f"{n} has no decisive reply"))
                                     if n == "first_slot_preference"
                                     else not_computable("accuracy has no parsed reply with gold")
                                     for n in undefined])
            rows.append(r)
    out = results(pd.DataFrame(rows), ANCHOR_MEASURES, level=confidence, keys=[*by, "strategy"])
    out.attrs["missing_baseline"] = missing
    return out


#: the measures of :func:`preference_fairness`
FAIRNESS_MEASURES = [
    _count("units", "Subsets"), _count("both_parsed", "Pairs (both parsed)"),
    _rate("preference_fairness_mean", "Preference fairness (Shi et al.: mean over subsets)", "units", "subsets",
          unit="coefficient", digits=3),
    _rate("preference_fairness", "Preference fairness (pooled over subsets)", "both_parsed", "pairs",
          unit="coefficient", digits=3),
]


def preference_fairness(df: pd.DataFrame, by: Sequence[str] = ("judge", "strategy"), *, unit: str = "subset"
                        ) -> Results:
    """Preference fairness per group as Shi et al. (2024) aggregate it — computed within each ``unit`` (their
    task; here the subset) and averaged over the units — beside the same figure pooled over the units' pairs.

    Each unit's figure is :func:`position_bias`'s ``preference_fairness`` ((biased toward second − biased toward
    first) / pairs with both replies parsed; unnormalised, module docstring). The mean weighs every unit alike; the
    pooled figure weighs every pair alike: they differ when units differ in size and in fairness.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table of pairwise replies in orders ``ab`` and ``ba``.
    by : sequence of str, default ("judge", "strategy")
        Grouping columns (must not hold ``unit``).
    unit : str, default "subset"
        The column whose values are averaged over (a missing column: one unit).

    Returns
    -------
    Results
        One row per group (measures :data:`FAIRNESS_MEASURES`): ``by`` + ``units`` (units with a pair both parsed;
        count), ``both_parsed`` (count), ``preference_fairness_mean`` (coefficient in [−1, 1]; n: units),
        ``preference_fairness`` (pooled; n: pairs), ``note``.

    References
    ----------
    Shi et al. (2024), "Judging the Judges", §3 ("preference fairness"; figures per task, averaged).

    Examples
    --------
    Subset s1: 1 pair, biased toward first (−1); s2: 3 pairs, consistent (0). Mean over subsets −0.5, pooled −0.25:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics._position import preference_fairness
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["a", "a", "b", "b", "c", "c", "d", "d"], "judge": "A",
    ...     "subset": ["s1"] * 2 + ["s2"] * 6, "order": ["ab", "ba"] * 4,
    ...     "verdict": ["1", "2", "1", "1", "2", "2", "1", "1"]}))
    >>> print(preference_fairness(df, ["judge"])[["units", "preference_fairness_mean",
    ...       "preference_fairness"]].to_string(index=False))
     units  preference_fairness_mean  preference_fairness
         2                      -0.5                -0.25
    """
    by = [c for c in by if c in df.columns]
    d = df if unit in df.columns else df.assign(**{unit: ""})
    kw = dict(n_resamples=0)
    pooled = position_bias(d, by, **kw)
    per = position_bias(d, [unit, *by], **kw)
    per = per[per["both_parsed"] > 0]
    # each group's mean over its units, aligned to the pooled rows by key (a left merge: a group none of whose units
    # has a pair both parsed — a judge asked in one order only — has no mean and gets the note)
    if by:
        mean = pooled[by].merge(per.groupby(by, observed=True, dropna=False)["preference_fairness"]
                                .agg(["mean", "size"]).reset_index(), on=by, how="left")
    else:
        mean = pd.DataFrame({"mean": [per["preference_fairness"].mean()], "size": [len(per)]})
    sizes = mean["size"].fillna(0).astype(int).to_numpy()
    rows = []
    for j, i in enumerate(pooled.index):
        ok = sizes[j] > 0 and pooled.at[i, "both_parsed"] > 0
        rows.append(dict({c: pooled.at[i, c] for c in by}, units=int(sizes[j]) if ok else 0,
                         both_parsed=int(pooled.at[i, "both_parsed"]),
                         preference_fairness_mean=float(mean["mean"].iloc[j]) if ok else NAN,
                         preference_fairness=float(pooled.at[i, "preference_fairness"]) if ok else NAN,
                         note="" if ok else not_computable("needs pairs with both orders parsed")))
    return results(pd.DataFrame(rows), FAIRNESS_MEASURES, keys=by)


#: the measures of :func:`first_slot_lean`
LEAN_MEASURES = [
    _count("scored", "Decisive replies with gold"), _count("gold_first", "Gold: the output shown first"),
    _count("gold_second", "Gold: the output shown second"),
    _count("errors_first", "Errors picking the first shown"), _count("errors_second", "Errors picking the second shown"),
    _rate("p_first_given_gold_second", "P(picks first shown | gold second shown)", "gold_second", "replies"),
    _rate("p_second_given_gold_first", "P(picks second shown | gold first shown)", "gold_first", "replies"),
    _rate("lean", "Lean to the first slot (difference)", "scored", "replies", unit="pp"),
    _count("errors", "Errors"),
    _interval("error_first_share", "Share of errors picking the first shown", "errors", "errors"),
    _rate("error_first_share_null", "Share expected without a lean", "scored", "replies"),
    _rate("fisher_p", "Fisher's exact p", "scored", "replies", unit="p-value"),
]

#: the assumption the first-slot lean rests on, in words (shown beside it)
LEAN_ASSUMPTION = ("it assumes the outputs were not placed by quality: which slot holds the better output (the gold "
                   "position) is independent of how hard the pair is")


@needs_verdicts("first-slot lean")
def first_slot_lean(df: pd.DataFrame, by: Sequence[str] | None = None, *, confidence: float = 0.95,
                    n_resamples: int = 1000, seed: int = 0) -> Results:
    """Whether a judge leans to the first slot, from its errors against gold — the figure a table with one
    presentation order supports (first-slot preference and consistency need both orders).

    On decisive (1/2) parsed replies with gold 1/2 and a recorded order, the slot of the gold output and of the
    verdict are compared: ``p_first_given_gold_second`` = P(verdict is the first-shown output | gold is the
    second-shown), ``p_second_given_gold_first`` = P(verdict is the second-shown | gold is the first-shown);
    their difference ``lean`` is 0 for a judge without a lean and positive when errors fall on the first slot.
    Equivalently, the share of errors that pick the first-shown output (``error_first_share``) against the share
    expected without a lean (``error_first_share_null``: the share of replies whose gold is the second-shown output,
    0.5 when gold positions are balanced). The test is Fisher's exact test of the two conditional error rates (the
    2×2 table gold slot × error; with balanced gold positions it tests what McNemar's test of errors toward
    first vs toward second tests). The figure assumes the outputs were not placed by quality (:data:`LEAN_ASSUMPTION`):
    if the better output were put first more often on hard pairs, position and difficulty would mix.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table of pairwise replies with ``order`` and ``gold``.
    by : sequence of str, optional
        Grouping columns (default ``("subset", "judge", "strategy")``); :func:`~evallab.metrics._design.check_design`
        applies.
    confidence : float, default 0.95
        Level of the interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items (one reply per item: the Wilson score interval, no bootstrap needed).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per group (measures :data:`LEAN_MEASURES`): ``by`` + counts ``scored``, ``gold_first``,
        ``gold_second``, ``errors_first``, ``errors_second``, ``errors``; proportions ``p_first_given_gold_second``,
        ``p_second_given_gold_first``; ``lean`` (pp, their difference); ``error_first_share`` (proportion) with
        ``_low``/``_high`` and ``error_first_share_method`` (:func:`~evallab.metrics._intervals.ratio_interval_method`:
        Wilson with one reply per item, else an item bootstrap); ``error_first_share_null``; ``fisher_p``
        (p-value, two-sided); ``note`` (why a figure is NaN: no gold, no error, gold all in one slot).

    References
    ----------
    Zheng et al. (2023), MT-Bench, §3.4 (position bias); Fisher (1935), exact test of a 2×2 table.

    Examples
    --------
    Six items shown in one order (``ab``): gold 1 (first shown) on q1–q3, gold 2 on q4–q6. The judge errs on q3
    (picks output 2, second shown) and on q5 and q6 (picks output 1, first shown): P(first | gold second) = 2/3,
    P(second | gold first) = 1/3, lean +1/3; 2 of 3 errors pick the first shown against 0.5 expected:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics import first_slot_lean
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": [f"q{i}" for i in range(1, 7)], "judge": "A", "order": "ab",
    ...     "gold": ["1", "1", "1", "2", "2", "2"], "verdict": ["1", "1", "2", "2", "1", "1"]}))
    >>> r = first_slot_lean(df, ["judge"])
    >>> print(r[["errors_first", "errors_second", "lean", "error_first_share", "error_first_share_null",
    ...          "fisher_p"]].round(3).to_string(index=False))
     errors_first  errors_second  lean  error_first_share  error_first_share_null  fisher_p
                2              1 0.333              0.667                     0.5       1.0
    """
    from scipy.stats import fisher_exact

    by = list(DEFAULT_BY if by is None else by)
    by = [c for c in by if c in df.columns]
    check_design(df, by)
    d = df.assign(_item=item_key(df), _v=first_slot(df), _g=first_slot(df.assign(verdict=df["gold"])))
    d = d[d["_v"].notna() & d["_g"].notna()]
    kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    rows = []
    for key, grp in groups(df, by):
        s = d
        for c, v in key.items():
            s = s[s[c].astype(object) == v]
        gf, gs = int((s["_g"] == 1).sum()), int((s["_g"] == 0).sum())
        e1 = int(((s["_g"] == 0) & (s["_v"] == 1)).sum())  # gold second shown, picked the first shown
        e2 = int(((s["_g"] == 1) & (s["_v"] == 0)).sum())
        r = dict(key, scored=gf + gs, gold_first=gf, gold_second=gs, errors_first=e1, errors_second=e2,
                 errors=e1 + e2, p_first_given_gold_second=e1 / gs if gs else NAN,
                 p_second_given_gold_first=e2 / gf if gf else NAN, error_first_share=NAN,
                 error_first_share_low=NAN, error_first_share_high=NAN, error_first_share_method="",
                 error_first_share_null=gs / (gf + gs) if gf + gs else NAN, fisher_p=NAN, note="")
        r["lean"] = r["p_first_given_gold_second"] - r["p_second_given_gold_first"] if gf and gs else NAN
        if gf + gs == 0:
            r["note"] = not_computable("needs decisive replies with gold and a recorded order" if pairwise(grp).any()
                                       else POINTWISE_REASON)
        elif not (gf and gs):
            r["note"] = not_computable("gold is always the output in one slot, so position and quality cannot be "
                                       "told apart")
        else:
            r["fisher_p"] = float(fisher_exact([[e1, gs - e1], [e2, gf - e2]])[1])
            if e1 + e2 == 0:
                r["note"] = not_computable("the share of errors needs an error; the judge made none")
            else:
                err = s.assign(_e1=((s["_g"] == 0) & (s["_v"] == 1)).astype(float), _e=(s["_g"] != s["_v"]))
                per = err.groupby("_item")[["_e1", "_e"]].sum()
                r["error_first_share"] = e1 / (e1 + e2)
                (r["error_first_share_low"], r["error_first_share_high"],
                 r["error_first_share_method"]) = intervals.ratio_interval_method(
                    per["_e1"].to_numpy(float), per["_e"].to_numpy(float), **kw)
        rows.append(r)
    return results(pd.DataFrame(rows), LEAN_MEASURES, level=confidence, keys=by)
