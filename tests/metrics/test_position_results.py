"""The position estimators' Results: each estimate names its unit, n and what n counts, its interval columns and
the method that computed the interval (Wilson where Wilson computed it, an item bootstrap where the item holds
several replies, a paired item bootstrap for deltas, none at n_resamples=0); values against hand counts of a small
table and statsmodels' Wilson interval."""

from __future__ import annotations

import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from evallab import Results
from evallab import verdicts as V
from evallab.metrics import _position as P

B = 200


def _table(pairs, judge="J", strategy="S"):
    rows = []
    for item, gold, ab, ba in pairs:
        rows += [dict(item_id=item, judge=judge, strategy=strategy, order="ab", verdict=ab, gold=gold),
                 dict(item_id=item, judge=judge, strategy=strategy, order="ba", verdict=ba, gold=gold)]
    return V.coerce(pd.DataFrame(rows))


# 8 items, both orders, one sample: counted by hand in the comments
HAND = _table([
    ("p1", "1", "1", "1"),  # consistent, right in both
    ("p2", "1", "1", "2"),  # biased to first (first shown won twice)
    ("p3", "2", "1", "2"),  # biased to first
    ("p4", "2", "2", "1"),  # biased to second
    ("p5", "2", "2", "2"),  # consistent, right
    ("p6", "1", None, "1"),  # a reply unparsed
    ("p7", "1", "tie", "1"),  # tie, then output 1 won shown second: biased to second
    ("p8", "2", "1", "1"),  # consistent, wrong in both
])


def test_position_bias_measures_name_units_n_and_methods():
    res = P.position_bias(HAND, ["judge"], n_resamples=B)
    assert isinstance(res, Results) and res.level == 0.95 and res.keys == ["judge"]
    m = res.measures
    pc, fs, mc = m["position_consistency"], m["first_slot_preference"], m["mcnemar_p"]
    assert (pc.unit, pc.low, pc.high, pc.n, pc.n_unit) == ("proportion", "position_consistency_low",
                                                          "position_consistency_high", "both_parsed", "pairs")
    assert (fs.unit, fs.n, fs.n_unit) == ("proportion", "decisive", "decisive replies")
    assert (mc.unit, mc.n, mc.n_unit, mc.has_interval) == ("p-value", "mcnemar_items", "items", False)
    assert m["preference_fairness"].unit == "coefficient" and m["biased_first_rate"].n_unit == "pairs"
    assert all(m[c].note == "note" for c in m)
    r = res.iloc[0]
    # hand counts: 7 pairs both parsed (p6 not), consistent p1 p5 p8; first p2 p3; second p4 p7; error p6
    assert (r["pairs"], r["both_parsed"], r["consistent"], r["biased_first"], r["biased_second"], r["error"]) == \
        (8, 7, 3, 2, 2, 1)
    assert res.estimate("error_rate").value == pytest.approx(1 / 8) and res.estimate("error_rate").n == 8
    e = res.estimate("position_consistency")
    assert (e.value, e.n, e.n_unit) == (pytest.approx(3 / 7), 7, "pairs")
    # one pair per item: independent units, so Wilson computed it — and the page says so
    assert e.method == "Wilson score" and r["position_consistency_method"] == "Wilson score"
    assert (e.low, e.high) == pytest.approx(proportion_confint(3, 7, alpha=0.05, method="wilson"))
    # first-slot: 14 decisive replies (p6/ab unparsed, p7/ab a tie); first shown picked: ab->1 p1 p2 p3 p8, ba->2
    # p2 p3 p5 → 7; an item holds two replies, so an item bootstrap
    f = res.estimate("first_slot_preference")
    assert (f.value, f.n, f.n_unit) == (pytest.approx(7 / 14), 14, "decisive replies")
    assert f.method == f"item bootstrap (percentile, {B} resamples)" and f.has_interval
    # McNemar on the 7 items with a pair both parsed: 2 first vs 1 second
    assert (r["mcnemar_items"], r["mcnemar_items_first"], r["mcnemar_items_second"]) == (7, 2, 1)
    p = res.estimate("mcnemar_p")
    assert p.value == pytest.approx(mcnemar([[0, 2], [1, 0]], exact=True).pvalue) and p.n == 7 and p.n_unit == "items"
    assert res.estimate("preference_fairness").value == pytest.approx((2 - 2) / 7)


def test_no_bootstrap_interval_at_n_resamples_0_but_wilson_stays():
    res = P.position_bias(HAND, ["judge"], n_resamples=0)
    f = res.estimate("first_slot_preference")
    assert f.value == pytest.approx(0.5) and not f.has_interval and f.method is None
    assert res["first_slot_preference_method"].iloc[0] == "" and "[" not in str(f)
    # consistency's Wilson interval needs no resamples
    assert res.estimate("position_consistency").method == "Wilson score"
    bpc = P.balanced_position_accuracy(HAND, ["judge"], n_resamples=0)
    assert not bpc.estimate("bpc_accuracy").has_interval and bpc["bpc_accuracy_method"].iloc[0] == ""


def test_position_consistency_published_mode_counts_every_pair_asked():
    res = P.position_consistency(HAND, ["judge"], unparsed="published", n_resamples=B)
    assert res.measures["position_consistency"].n == "pairs"
    e = res.estimate("position_consistency")
    assert e.n == 8 and e.value == pytest.approx(3 / 8)
    assert P.position_consistency(HAND, ["judge"], n_resamples=B).estimate("position_consistency").n == 7


def test_balanced_position_accuracy_by_hand_with_its_method():
    res = P.balanced_position_accuracy(HAND, ["judge"], n_resamples=B)
    m = res.measures["bpc_accuracy"]
    assert (m.unit, m.n, m.n_unit, m.low, m.high) == ("proportion", "pairs_with_gold", "pairs", "bpc_accuracy_low",
                                                     "bpc_accuracy_high")
    r = res.iloc[0]
    # 7 scored pairs (p6 unparsed); right with output 1 first: p1 p2 p4 p5 → 4 of 7; with output 2 first: p1 p3 p5
    # p7 → 4 of 7; consistent: p1 p5 (right) and p8 (wrong) → 1 + 1 + 0, the 4 inconsistent pairs 0.5 each
    assert (r["pairs_with_gold"], r["excluded"]) == (7, 1)
    assert (r["acc_ab"], r["acc_ba"]) == pytest.approx((4 / 7, 4 / 7))
    assert r["bpc_accuracy"] == pytest.approx((2 + 4 * 0.5) / 7) == pytest.approx((r["acc_ab"] + r["acc_ba"]) / 2)
    assert r["strict_accuracy"] == pytest.approx(2 / 7) and r["abstention"] == pytest.approx(4 / 7)
    # a half credit is not a 0/1 unit: the item bootstrap computed the interval
    assert res.estimate("bpc_accuracy").method == f"item bootstrap (percentile, {B} resamples)"


def test_balanced_position_accuracy_says_what_is_missing():
    no_gold = HAND.assign(gold=pd.NA)
    assert "no gold labels" in P.balanced_position_accuracy(no_gold, ["judge"])["note"].iloc[0]
    one = HAND[HAND["order"] == "ab"]
    assert "needs both presentation orders (the table has ab)" in \
        P.balanced_position_accuracy(one, ["judge"])["note"].iloc[0]


def test_anchor_effect_names_paired_bootstrap_for_deltas_and_wilson_for_one_reply_items():
    base = HAND.assign(strategy="Vanilla")
    # the 1-shot judge picks output 1 every time: first-slot preference moves, accuracy changes on some items
    shot = HAND.assign(strategy="Vanilla_1shot", verdict="1")
    res = P.anchor_effect(pd.concat([base, shot], ignore_index=True), variants=["Vanilla_1shot"], n_resamples=B)
    assert isinstance(res, Results) and res.keys == ["judge", "strategy"]
    m = res.measures
    assert (m["delta_first_slot"].unit, m["delta_first_slot"].n_unit, m["accuracy"].unit) == ("pp", "items",
                                                                                            "proportion")
    s = res.set_index("strategy")
    assert s.loc["Vanilla", "delta_first_slot_method"] == "" and s.loc["Vanilla", "note"] == "baseline"
    assert s.loc["Vanilla_1shot", "delta_first_slot_method"] == f"paired item bootstrap (percentile, {B} resamples)"
    assert s.loc["Vanilla_1shot", "accuracy_method"] == f"item bootstrap (percentile, {B} resamples)"
    # always "1": first shown in ab (8 replies), second in ba (8): 8 of 16; accuracy: gold 1 on p1 p2 p6 p7 → 8 of 16
    assert s.loc["Vanilla_1shot", "first_slot_preference"] == pytest.approx(0.5)
    assert s.loc["Vanilla_1shot", "delta_first_slot"] == pytest.approx(0.5 - 7 / 14)
    # one order only, one reply per item: Wilson computed the accuracy interval, first-slot is not computable
    one = pd.concat([base, shot], ignore_index=True).query("order == 'ab'")
    r1 = P.anchor_effect(one, variants=["Vanilla_1shot"], n_resamples=B).set_index("strategy")
    assert set(r1["accuracy_method"]) == {"Wilson score"}
    assert r1["first_slot_preference"].isna().all() and "both presentation orders" in r1.loc["Vanilla", "note"]
    assert set(r1["delta_first_slot_method"]) == {""}
