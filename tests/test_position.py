"""Position-bias estimators against hand counts and statsmodels/scipy reference calls."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from evallab import verdicts as V
from evallab.datasets import load_llmbar
from evallab.metrics import position as P


def table(pairs, judge="J", strategy="S"):
    rows = []
    for item, gold, ab, ba in pairs:
        rows += [dict(item_id=item, judge=judge, strategy=strategy, order="ab", verdict=ab, gold=gold),
                 dict(item_id=item, judge=judge, strategy=strategy, order="ba", verdict=ba, gold=gold)]
    return rows


HAND = table([
    ("p1", "1", "1", "1"),  # consistent, correct
    ("p2", "1", "1", "2"),  # first slot won both times (ab->1 shown first, ba->2 shown first)
    ("p3", "2", "1", "2"),  # first slot both times
    ("p4", "2", "2", "1"),  # second slot both times
    ("p5", "2", "2", "2"),  # consistent, correct
    ("p6", "1", None, "1"),  # one reply unparsed
])


def test_position_bias_by_hand():
    df = V.coerce(pd.DataFrame(HAND))
    r = P.position_bias(df, ["judge"]).iloc[0]
    assert (r["pairs"], r["both_parsed"], r["consistent"]) == (6, 5, 2)
    assert r["consistency"] == pytest.approx(2 / 5)
    # decisive replies: 11 parsed; first-shown picks: ab->1: p1,p2,p3 (3); ba->2: p2,p3,p5 (3) -> 6 of 11
    assert (r["decisive"], r["first_slot"]) == (11, 6)
    lo, hi = proportion_confint(6, 11, method="wilson")
    assert (r["first_slot_low"], r["first_slot_high"]) == pytest.approx((lo, hi))
    assert (r["first_both"], r["second_both"]) == (2, 1)
    assert r["mcnemar_p"] == pytest.approx(mcnemar([[0, 2], [1, 0]], exact=True).pvalue)
    assert r["unparsed"] == 1


def test_swap_averaged_accuracy_by_hand():
    df = V.coerce(pd.DataFrame(HAND))
    r = P.swap_averaged_accuracy(df, ["judge"], n_resamples=0).iloc[0]
    # p1 1, p2 tie, p3 tie, p4 tie, p5 1 -> (1 + .5 + .5 + .5 + 1)/5; p6 excluded
    assert (r["pairs"], r["excluded"], r["inconsistent"]) == (5, 1, 3)
    assert r["swap_averaged_accuracy"] == pytest.approx(3.5 / 5)
    # single order (ab) correct: p1, p2, p4, p5 -> 4/5
    assert r["single_order_accuracy"] == pytest.approx(4 / 5)
    strict = P.swap_averaged_accuracy(df, ["judge"], tie_credit=0.0, n_resamples=0).iloc[0]
    assert strict["swap_averaged_accuracy"] == pytest.approx(2 / 5)
    with pytest.raises(ValueError):
        P.swap_averaged_accuracy(df, tie_credit=2)


def test_anchor_effect_by_hand():
    base = table([("a", "1", "1", "2"), ("b", "2", "2", "1"), ("c", "1", "1", "1")], strategy="Vanilla")
    shot = table([("a", "1", "1", "2"), ("b", "2", "1", "2"), ("c", "1", "1", "2")], strategy="Vanilla_1shot")
    df = V.coerce(pd.DataFrame(base + shot))
    out = P.anchor_effect(df, variants=["Vanilla_1shot"], n_resamples=200).set_index("strategy")
    # baseline first-slot: a(ab1 yes, ba2 yes), b(ab2 no, ba1 no), c(ab1 yes, ba1 no) -> 3/6
    # 1-shot: every reply picks the first-shown output -> 6/6
    assert out.loc["Vanilla", "first_slot_rate"] == 0.5 and out.loc["Vanilla_1shot", "first_slot_rate"] == 1.0
    assert out.loc["Vanilla_1shot", "delta_first_slot"] == pytest.approx(0.5)
    # accuracy: baseline a:1/2 b:1/2 c:2/2 -> 4/6; 1-shot a:1/2 b:1/2 c:1/2 -> 3/6
    assert out.loc["Vanilla", "accuracy"] == pytest.approx(4 / 6)
    assert out.loc["Vanilla_1shot", "delta_accuracy"] == pytest.approx(-1 / 6)
    assert out.loc["Vanilla_1shot", "delta_first_slot_low"] <= 0.5 <= out.loc["Vanilla_1shot", "delta_first_slot_high"]
    assert np.isnan(out.loc["Vanilla", "delta_accuracy"])


def test_llmbar_gpt4_natural_consistency_matches_paper_agr():
    v = load_llmbar(subsets=["LLMBar/Natural"], judges=["GPT-4"], strategies=["Vanilla"]).verdicts
    r = P.position_bias(v, ["judge"]).iloc[0]
    assert (r["pairs"], r["consistent"]) == (100, 95)  # the paper's Agr. 95 of 100 (no unparsed replies here)
