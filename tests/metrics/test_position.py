"""Position-bias estimators against hand counts (hand-made tables and the raw LLMBar CSV), statsmodels and an item
bootstrap written in the test."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from evallab import verdicts as V
from evallab.datasets import load_llmbar
from evallab.errors import EvallabError
from evallab.metrics import _position as P
from evallab.paths import data_dir

SUBSETS = ["LLMBar/Natural", "LLMBar/Adversarial"]


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
    ("p7", "1", "tie", "1"),  # a tie, then output 1 won shown second: moved toward the second slot
])


def test_position_bias_by_hand():
    df = V.coerce(pd.DataFrame(HAND))
    r = P.position_bias(df, ["judge"], n_resamples=300).iloc[0]
    assert (r["pairs"], r["both_parsed"], r["pairs_unparsed"]) == (7, 6, 1)
    # MT-Bench's four categories partition the 7 pairs: consistent p1 p5; first p2 p3; second p4 p7; error
    # (unparsed: a wrong output format) p6
    assert (r["consistent"], r["biased_first"], r["biased_second"], r["error"]) == (2, 2, 2, 1)
    assert r["position_consistency"] == pytest.approx(2 / 6)
    assert (r["consistent_rate"], r["biased_first_rate"], r["biased_second_rate"], r["error_rate"]) == \
        pytest.approx((2 / 7, 2 / 7, 2 / 7, 1 / 7))
    assert r["preference_fairness"] == pytest.approx((2 - 2) / 6)
    # decisive replies: 12 (p6/ab unparsed, p7/ab a tie); first-shown picks: ab->1: p1,p2,p3; ba->2: p2,p3,p5
    assert (r["decisive"], r["first_slot"]) == (12, 6)
    assert r["first_slot_preference"] == 0.5
    assert r["first_slot_preference_low"] <= 0.5 <= r["first_slot_preference_high"]
    assert (r["mcnemar_items_first"], r["mcnemar_items_second"]) == (2, 1)
    assert r["mcnemar_p"] == pytest.approx(mcnemar([[0, 2], [1, 0]], exact=True).pvalue)
    assert r["unparsed"] == 1 and r["note"] == ""


def test_first_slot_per_reply():
    df = V.coerce(pd.DataFrame({"item_id": list("abcde"), "judge": "J", "order": ["ab", "ba", "ab", "ba", ""],
                                "verdict": ["1", "1", "tie", None, "1"]}))
    got = P.first_slot(df)
    assert got.iloc[0] == 1.0 and got.iloc[1] == 0.0 and got.iloc[2:].isna().all()


def test_position_consistency_unparsed_modes_by_hand():
    df = V.coerce(pd.DataFrame(table([("a", "1", "1", "1"), ("b", "1", None, None), ("c", "1", "1", "2")])))
    exc = P.position_consistency(df, ["judge"]).iloc[0]
    assert (exc["pairs"], exc["both_parsed"], exc["consistent_pairs"]) == (3, 2, 1)
    pub = P.position_consistency(df, ["judge"], unparsed="published").iloc[0]
    assert pub["consistent_pairs"] == 2 and pub["position_consistency"] == pytest.approx(2 / 3)


def test_balanced_position_accuracy_by_hand():
    df = V.coerce(pd.DataFrame(HAND))
    r = P.balanced_position_accuracy(df, ["judge"], n_resamples=0).iloc[0]
    # p1 1, p2 tie, p3 tie, p4 tie, p5 1, p7 tie -> (1 + .5 + .5 + .5 + 1 + .5)/6; p6 excluded
    assert (r["pairs_with_gold"], r["excluded"]) == (6, 1)
    assert r["bpc_accuracy"] == pytest.approx(4 / 6)
    # order ab right: p1, p2, p4, p5 -> 4/6; order ba right: p1, p3, p5, p7 -> 4/6; FairEval = their mean
    assert r["acc_ab"] == pytest.approx(4 / 6) and r["acc_ba"] == pytest.approx(4 / 6)
    assert r["strict_accuracy"] == pytest.approx(2 / 6) and r["abstention"] == pytest.approx(4 / 6)
    strict = P.balanced_position_accuracy(df, ["judge"], tie_credit=0.0, n_resamples=0).iloc[0]
    assert strict["bpc_accuracy"] == pytest.approx(2 / 6)
    with pytest.raises(EvallabError, match="tie_credit"):
        P.balanced_position_accuracy(df, tie_credit=2)


def test_anchor_effect_by_hand():
    base = table([("a", "1", "1", "2"), ("b", "2", "2", "1"), ("c", "1", "1", "1")], strategy="Vanilla")
    shot = table([("a", "1", "1", "2"), ("b", "2", "1", "2"), ("c", "1", "1", "2")], strategy="Vanilla_1shot")
    df = V.coerce(pd.DataFrame(base + shot))
    out = P.anchor_effect(df, variants=["Vanilla_1shot"], n_resamples=200).set_index("strategy")
    # baseline first-slot: a(ab1 yes, ba2 yes), b(ab2 no, ba1 no), c(ab1 yes, ba1 no) -> 3/6
    # 1-shot: every reply picks the first-shown output -> 6/6
    assert out.loc["Vanilla", "first_slot_preference"] == 0.5
    assert out.loc["Vanilla_1shot", "first_slot_preference"] == 1.0
    assert out.loc["Vanilla_1shot", "delta_first_slot"] == pytest.approx(0.5)
    # accuracy: baseline a:1/2 b:1/2 c:2/2 -> 4/6; 1-shot a:1/2 b:1/2 c:1/2 -> 3/6
    assert out.loc["Vanilla", "accuracy"] == pytest.approx(4 / 6)
    assert out.loc["Vanilla_1shot", "delta_accuracy"] == pytest.approx(-1 / 6)
    assert out.loc["Vanilla_1shot", "delta_first_slot_low"] <= 0.5 <= out.loc["Vanilla_1shot",
                                                                              "delta_first_slot_high"]
    assert np.isnan(out.loc["Vanilla", "delta_accuracy"]) and out.loc["Vanilla", "note"] == "baseline"
    with pytest.raises(EvallabError, match="strategy"):
        P.anchor_effect(df, by=["strategy"])


def test_anchor_effect_n_counts_the_items_each_figure_rests_on():
    # gold on items a and b only; item d has no decisive reply under the baseline (both its replies are ties)
    base = table([("a", "1", "1", "2"), ("b", "2", "2", "1"), ("c", None, "1", "1"), ("d", None, "tie", "tie")],
                 strategy="Vanilla")
    shot = table([("a", "1", "1", "2"), ("b", "2", "1", "2"), ("c", None, "1", "2"), ("d", None, "1", "2")],
                 strategy="Vanilla_1shot")
    out = P.anchor_effect(V.coerce(pd.DataFrame(base + shot)), variants=["Vanilla_1shot"], n_resamples=50)
    by = out.set_index("strategy")
    # by hand: 4 common items; accuracy rests on the 2 gold items; first-slot on the items with a decisive reply
    assert by.loc["Vanilla", "items"] == 4 and by.loc["Vanilla", "accuracy_items"] == 2
    assert by.loc["Vanilla", "first_slot_items"] == 3 and by.loc["Vanilla_1shot", "first_slot_items"] == 4
    assert by.loc["Vanilla_1shot", "delta_accuracy_items"] == 2
    assert by.loc["Vanilla_1shot", "delta_first_slot_items"] == 4
    i = int(np.flatnonzero(out["strategy"] == "Vanilla_1shot")[0])
    assert out.estimate("delta_accuracy", i).n == 2 and out.estimate("accuracy", i).n == 2


def test_llmbar_gpt4_natural_consistency_matches_paper_agr():
    v = load_llmbar(subsets=["LLMBar/Natural"], judges=["GPT-4"], strategies=["Vanilla"]).verdicts
    r = P.position_bias(v, ["judge"], n_resamples=0).iloc[0]
    assert (r["pairs"], r["consistent"]) == (100, 95)  # the paper's Agr. 95 of 100 (no unparsed replies here)


@pytest.fixture(scope="module")
def nat_adv():
    return load_llmbar(subsets=SUBSETS, judges=["ChatGPT", "GPT-4"], strategies=["Vanilla"]).verdicts


def test_mtbench_biased_first_matches_csv_hand_count(nat_adv):
    # verdicts.csv: both winners are ORIGINAL output indices (data/llmbar/SOURCE.md). Output 1 is shown first in
    # order 12 and output 2 in order 21, so "the first-shown output won both times" = winner_12 1 and winner_21 2.
    hand = {"ChatGPT": {}, "GPT-4": {}}
    with open(data_dir("llmbar") / "verdicts.csv", newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if (r["strategy"] == "Vanilla" and r["judge"] in hand
                    and (r["subset"] == "LLMBar/Natural" or r["subset"].startswith("LLMBar/Adversarial/"))):
                c = hand[r["judge"]]
                w12, w21 = r["winner_order_12"], r["winner_order_21"]
                c["pairs"] = c.get("pairs", 0) + 1
                c["first"] = c.get("first", 0) + (w12 == "1" and w21 == "2")
                c["second"] = c.get("second", 0) + (w12 == "2" and w21 == "1")
                c["consistent"] = c.get("consistent", 0) + (w12 != "" and w12 == w21)
    pb = P.position_bias(nat_adv, ["judge"], n_resamples=0).set_index("judge")
    for judge, c in hand.items():
        assert pb.loc[judge, "pairs"] == c["pairs"] == 419
        assert pb.loc[judge, "biased_first"] == c["first"], judge
        assert pb.loc[judge, "biased_second"] == c["second"], judge
        assert pb.loc[judge, "consistent"] == c["consistent"], judge
    assert hand["ChatGPT"]["first"] > 0


def test_gpt4_first_slot_interval_width_matches_item_bootstrap(nat_adv):
    g = nat_adv[nat_adv["judge"] == "GPT-4"]
    r = P.position_bias(g, ["judge"], n_resamples=2000).iloc[0]
    # per item: decisive replies and those that picked the output shown first, from the verdicts themselves
    dec = g[g["verdict"].isin(["1", "2"])]
    first = ((dec["order"] == "ab") & (dec["verdict"] == "1")) | ((dec["order"] == "ba") & (dec["verdict"] == "2"))
    per = pd.DataFrame({"item": dec["item_id"].to_numpy(), "f": first.to_numpy(float), "n": 1.0}) \
        .groupby("item")[["f", "n"]].sum().to_numpy()
    assert (r["decisive"], r["first_slot"]) == (per[:, 1].sum(), per[:, 0].sum())
    rng = np.random.default_rng(12345)
    idx = rng.integers(0, len(per), size=(2000, len(per)))
    stat = per[idx, 0].sum(1) / per[idx, 1].sum(1)
    lo, hi = np.percentile(stat, [2.5, 97.5])
    width = r["first_slot_preference_high"] - r["first_slot_preference_low"]
    assert abs(width - (hi - lo)) <= 0.2 * (hi - lo)
    assert r["first_slot_preference_low"] <= r["first_slot_preference"] <= r["first_slot_preference_high"]


def test_one_order_tables_say_why_instead_of_returning_nothing():
    df = V.coerce(pd.DataFrame(HAND)).query("order == 'ab'").assign(order="")
    for out in (P.balanced_position_accuracy(df, ["judge"]), P.position_consistency(df, ["judge"])):
        assert list(out["judge"]) == ["J"]
        assert out["note"].iloc[0].startswith("not computable") and "both" in out["note"].iloc[0]
    assert np.isnan(P.balanced_position_accuracy(df, ["judge"])["bpc_accuracy"].iloc[0])


def test_first_slot_preference_needs_both_orders():
    """With one order the first slot always holds output 1, so 'the share picking the first-shown output' would be
    the share picking output 1: position mixed with quality. NaN with the reason; both orders: the hand count."""
    df = V.coerce(pd.DataFrame(HAND))
    ab = df[df["order"] == "ab"]
    one = P.position_bias(ab, ["judge"], n_resamples=0).iloc[0]
    assert one["decisive"] == 5 and one["first_slot"] == 3  # the counts stay: p1 p2 p3 pick "1" (= first) of 5
    assert np.isnan(one["first_slot_preference"]) and np.isnan(one["first_slot_preference_low"])
    assert "needs both presentation orders" in one["note"] and "only ab" in one["note"]
    both = P.position_bias(df, ["judge"], n_resamples=0).iloc[0]
    # decisive replies: ab 1,1,1,2,2 (p7's tie out, p6 ab unparsed) and ba 1,2,2,1,2,1,1; first-shown picks:
    # ab->"1": 3, ba->"2": 3 (p2 p3 p5) => 6 of 12
    assert both["decisive"] == 12 and both["first_slot_preference"] == pytest.approx(6 / 12)
    # anchor effect: a strategy shown in one order gets no first-slot preference and no delta, accuracy stays
    two = pd.concat([df.assign(strategy="Vanilla"), ab.assign(strategy="Vanilla_1shot")], ignore_index=True)
    ae = P.anchor_effect(two, variants=["Vanilla_1shot"], n_resamples=0).set_index("strategy")
    assert np.isfinite(ae.loc["Vanilla", "first_slot_preference"])
    assert np.isnan(ae.loc["Vanilla_1shot", "first_slot_preference"]) and np.isnan(ae.loc["Vanilla_1shot", "delta_first_slot"])
    assert np.isfinite(ae.loc["Vanilla_1shot", "accuracy"]) and "both presentation orders" in ae.loc["Vanilla_1shot", "note"]


def test_first_slot_lean_by_hand_against_scipy_and_wilson():
    from scipy.stats import fisher_exact
    from statsmodels.stats.proportion import proportion_confint

    # one order (ab): gold 1 = first shown on q1-q4, gold 2 = second shown on q5-q10; errors toward the first slot
    # (gold 2, picked 1): q5 q6 q7; toward the second (gold 1, picked 2): q1; q11 a tie, q12 unparsed (not scored)
    gold = ["1"] * 4 + ["2"] * 6 + ["1", "2"]
    verdict = ["2", "1", "1", "1", "1", "1", "1", "2", "2", "2", "tie", None]
    df = V.coerce(pd.DataFrame({"item_id": [f"q{i}" for i in range(1, 13)], "judge": "J", "order": "ab",
                                "gold": gold, "verdict": verdict}))
    r = P.first_slot_lean(df, ["judge"], n_resamples=0).iloc[0]
    assert (r["scored"], r["gold_first"], r["gold_second"], r["errors_first"], r["errors_second"]) == (10, 4, 6, 3, 1)
    assert r["p_first_given_gold_second"] == pytest.approx(3 / 6) and r["p_second_given_gold_first"] == 0.25
    assert r["lean"] == pytest.approx(0.5 - 0.25) and r["error_first_share"] == pytest.approx(3 / 4)
    assert r["error_first_share_null"] == pytest.approx(6 / 10)
    assert r["fisher_p"] == pytest.approx(fisher_exact([[3, 3], [1, 3]])[1])
    # one reply per item: the Wilson interval of 3 errors of 4
    assert r["error_first_share_method"] == "Wilson score"
    assert (r["error_first_share_low"], r["error_first_share_high"]) == \
        pytest.approx(proportion_confint(3, 4, method="wilson"))
    # order ba: the first-shown output is output 2, so the same verdicts count the other way round
    ba = P.first_slot_lean(df.assign(order="ba"), ["judge"], n_resamples=0).iloc[0]
    assert (ba["errors_first"], ba["errors_second"], ba["gold_first"]) == (1, 3, 6)


def test_first_slot_lean_notes_when_gold_sits_in_one_slot():
    df = V.coerce(pd.DataFrame({"item_id": ["q1", "q2"], "judge": "J", "order": "ab", "gold": "1",
                                "verdict": ["1", "2"]}))
    r = P.first_slot_lean(df, ["judge"], n_resamples=0).iloc[0]
    assert np.isnan(r["lean"]) and "one slot" in r["note"]


def test_preference_fairness_mean_over_subsets_by_hand():
    # s1: 2 pairs, both biased to first (-1); s2: 2 pairs, one biased to second (+0.5): mean -0.25, pooled -1/4
    # s3 adds 4 consistent pairs: mean (-1 + 0.5 + 0) / 3, pooled (1 - 2) / 8
    rows = table([("a", "1", "1", "2"), ("b", "1", "1", "2")], strategy="S")
    rows = [dict(r, subset="s1") for r in rows]
    rows += [dict(r, subset="s2") for r in table([("c", "1", "2", "1"), ("d", "1", "1", "1")])]
    rows += [dict(r, subset="s3") for r in table([(f"e{i}", "1", "1", "1") for i in range(4)])]
    res = P.preference_fairness(V.coerce(pd.DataFrame(rows)), ["judge", "strategy"])
    r = res.iloc[0]
    assert r["units"] == 3 and r["both_parsed"] == 8
    assert r["preference_fairness_mean"] == pytest.approx((-1 + 0.5 + 0) / 3)
    assert r["preference_fairness"] == pytest.approx((1 - 2) / 8)


def test_preference_fairness_with_a_judge_asked_in_one_order_only():
    """A judge asked only in order ab beside one asked in both (a user's table, the new-user trial of stop 37):
    the two-order judge keeps Shi et al.'s per-unit mean and the pooled figure (hand count: subset s1 one pair
    biased toward the first slot, −1; s2 three consistent pairs, 0 → mean −0.5, pooled −1/4); the one-order judge
    gets no figure and the note, and report 02's per-judge section runs."""
    a = pd.DataFrame({"item_id": list("aabbccdd"), "judge": "A", "subset": ["s1"] * 2 + ["s2"] * 6,
                      "order": ["ab", "ba"] * 4, "verdict": ["1", "2", "1", "1", "2", "2", "1", "1"]})
    b = pd.DataFrame({"item_id": list("abcd"), "judge": "B", "subset": ["s1", "s2", "s2", "s2"], "order": "ab",
                      "verdict": ["1", "1", "2", "1"]})
    df = V.coerce(pd.concat([a, b], ignore_index=True))
    out = P.preference_fairness(df, ["judge"]).set_index("judge")
    assert out.at["A", "units"] == 2 and out.at["A", "both_parsed"] == 4
    assert out.at["A", "preference_fairness_mean"] == pytest.approx(-0.5)
    assert out.at["A", "preference_fairness"] == pytest.approx(-0.25)
    assert out.at["B", "units"] == 0 and np.isnan(out.at["B", "preference_fairness_mean"])
    assert "both orders" in out.at["B", "note"]
    from evallab.reporting import sections

    sections.position.by_judge(df, n_resamples=0)
