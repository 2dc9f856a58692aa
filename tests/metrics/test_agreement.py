"""Agreement estimators against the LLMBar authors' published statistics, hand counts from the raw CSV and
library reference calls (sklearn, statsmodels, krippendorff) made in the test."""

from __future__ import annotations

import csv

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

from evallab import verdicts as V
from evallab.datasets import load_llmbar
from evallab.errors import EvallabError
from evallab.metrics import _agreement as A
from evallab.metrics._design import DesignError
from evallab.paths import data_dir

with open(data_dir("llmbar") / "statistics.csv", newline="", encoding="utf-8") as _fh:
    PUBLISHED = list(csv.DictReader(_fh))
with open(data_dir("llmbar") / "verdicts.csv", newline="", encoding="utf-8") as _fh:
    RAW = list(csv.DictReader(_fh))


def _published_frame() -> pd.DataFrame:
    t = pd.DataFrame(PUBLISHED)
    for c in ("n", "correct_order_12", "correct_order_21", "correct_both", "positional_agreement_equal"):
        t[c] = t[c].astype(int)
    t["correct_average_pct"] = t["correct_average_pct"].astype(float)
    return t


@pytest.fixture(scope="module")
def check():
    return A.published_check(load_llmbar().verdicts, _published_frame())


def test_published_table_has_499_rows():
    assert len(PUBLISHED) == 499


def test_recomputes_all_499_published_rows_exactly(check):
    assert len(check) == 499
    bad = check.loc[~check["match"], ["subset", "judge", "strategy"]]
    assert bad.empty, bad.head().to_string()
    # the match flag is not the only thing checked: the columns themselves are equal
    for c in ("n", "correct_order_12", "correct_order_21", "correct_both", "positional_agreement_equal"):
        assert (check[c] == check[f"{c}_ours"]).all(), c
    assert np.allclose(check["correct_average_pct"], check["correct_average_pct_ours"], rtol=0, atol=1e-9)


def test_published_check_detects_a_wrong_row():
    t = _published_frame()
    t.loc[0, "correct_order_12"] += 1
    m = A.published_check(load_llmbar(subsets=[t.loc[0, "subset"]], judges=[t.loc[0, "judge"]],
                                      strategies=[t.loc[0, "strategy"]]).verdicts, t)
    assert list(m["match"]) == [False]


def test_paper_example_natural_vanilla_gpt4(check):
    got = check.set_index(["subset", "judge", "strategy"]).loc[("LLMBar/Natural", "GPT-4", "Vanilla")]
    assert got["correct_average_pct_ours"] == 95.5 and got["positional_agreement_equal_ours"] == 95
    assert got["n_ours"] == 100


def test_readme_chatgpt_natural_vanilla_order_ab():
    rows = [r for r in RAW if r["subset"] == "LLMBar/Natural" and r["judge"] == "ChatGPT"
            and r["strategy"] == "Vanilla"]
    parsed = [r for r in rows if r["winner_order_12"] != ""]
    right = sum(r["winner_order_12"] == r["label"] for r in parsed)
    assert (right, len(parsed)) == (80, 100)
    s = A.pairwise_statistics(load_llmbar(subsets=["LLMBar/Natural"]).verdicts, ["judge", "strategy"])
    r = s[(s["judge"] == "ChatGPT") & (s["strategy"] == "Vanilla")].iloc[0]
    assert r["acc_ab"] == pytest.approx(right / len(parsed)) == 0.800
    assert r["correct_ab"] == right


def test_two_strategies_need_strategy_in_by_and_row_order_is_irrelevant():
    df = load_llmbar(subsets=["LLMBar/Natural"], judges=["ChatGPT"], strategies=["Vanilla", "CoT"]).verdicts
    assert set(df["strategy"]) == {"Vanilla", "CoT"}
    with pytest.raises(DesignError, match="strategy") as e:
        A.pairwise_statistics(df, ["judge"])
    assert e.value.column == "strategy"
    a = A.pairwise_statistics(df, ["judge", "strategy"], n_resamples=200)
    b = A.pairwise_statistics(df.sample(frac=1, random_state=1), ["judge", "strategy"], n_resamples=200)
    pd.testing.assert_frame_equal(a, b)
    # and the figures are the hand counts of each strategy
    for strategy, row in a.set_index("strategy").iterrows():
        rows = [r for r in RAW if r["subset"] == "LLMBar/Natural" and r["judge"] == "ChatGPT"
                and r["strategy"] == strategy]
        assert row["correct_ba"] == sum(r["winner_order_21"] == r["label"] for r in rows)


def _hand_table(pairs=None):
    # 4 pairs judged in both orders; gold 1,1,2,2. Replies: p1 (1,1) p2 (1,NA) p3 (NA,NA) p4 (1,2)
    rows = []
    for item, gold, ab, ba in pairs or (("p1", "1", "1", "1"), ("p2", "1", "1", None), ("p3", "2", None, None),
                                        ("p4", "2", "1", "2")):
        rows += [dict(item_id=item, judge="J", order="ab", verdict=ab, gold=gold),
                 dict(item_id=item, judge="J", order="ba", verdict=ba, gold=gold)]
    return V.coerce(pd.DataFrame(rows))


def test_unparsed_conventions_by_hand():
    df = _hand_table()
    pub = A.pairwise_statistics(df, ["judge"], unparsed="published", n_resamples=0).iloc[0]
    # published: n=4; correct ab: p1,p2 = 2; correct ba: p1,p4 = 2; Acc = (2/4 + 2/4)/2; both: p1 = 1;
    # Agr: p1 (equal) + p3 (both unparsed counts as agreeing) = 2
    assert (pub["n"], pub["correct_ab"], pub["correct_ba"], pub["correct_both"],
            pub["consistent_pairs"]) == (4, 2, 2, 1, 2)
    assert pub["acc"] == 0.5
    exc = A.pairwise_statistics(df, ["judge"], n_resamples=0).iloc[0]
    # exclude: parsed ab = 3 (2 correct), parsed ba = 2 (2 correct) -> Acc = (2/3 + 2/2)/2, pooled 4/5;
    # both-parsed pairs = p1, p4; consistency = p1 only = 1 of 2
    assert (exc["unparsed_ab"], exc["unparsed_ba"], exc["both_parsed"]) == (1, 2, 2)
    assert exc["acc_ab"] == pytest.approx(2 / 3) and exc["acc_ba"] == 1.0
    assert exc["acc"] == pytest.approx((2 / 3 + 1) / 2)
    assert exc["accuracy_pooled"] == pytest.approx(4 / 5)
    assert exc["consistent_pairs"] == 1 and exc["position_consistency"] == 0.5
    lo, hi = proportion_confint(2, 3, alpha=0.05, method="wilson")
    assert (exc["acc_ab_low"], exc["acc_ab_high"]) == pytest.approx((lo, hi))


def test_unknown_unparsed_mode():
    with pytest.raises(EvallabError, match="unparsed"):
        A.pairwise_statistics(_hand_table(), unparsed="drop")


def test_goldless_pairs_leave_accuracy_at_100_percent():
    df = _hand_table((("r1", "1", "1", "1"), ("r2", "2", "2", "2"), ("g1", None, "1", "2"), ("g2", None, "2", "2")))
    r = A.pairwise_statistics(df, ["judge"], n_resamples=0).iloc[0]
    assert (r["acc"], r["n"], r["no_gold"]) == (1.0, 2, 2)
    assert r["acc_ab"] == 1.0 and r["acc_ba"] == 1.0
    acc = A.accuracy(df, n_resamples=0).iloc[0]
    assert (acc["accuracy"], acc["parsed"], acc["no_gold"]) == (1.0, 4, 4)


def test_no_gold_table_reports_gold_figures_not_computable():
    df = _hand_table((("a", None, "1", "1"), ("b", None, "2", "1")))
    r = A.pairwise_statistics(df, ["judge"], n_resamples=0).iloc[0]
    for c in ("acc", "acc_ab", "acc_ba", "accuracy_pooled"):
        assert np.isnan(r[c]), c
    assert r["note"].startswith("not computable") and "gold" in r["note"]
    assert r["position_consistency"] == 0.5  # not gold-based: still computed
    acc = A.accuracy(df).iloc[0]
    assert np.isnan(acc["accuracy"]) and acc["note"].startswith("not computable")
    k = A.cohen_kappa_vs_gold(df, ["judge"]).iloc[0]
    assert np.isnan(k["kappa"]) and k["note"].startswith("not computable")


def test_one_order_table_gives_per_order_accuracy_and_says_consistency_needs_both():
    base = _hand_table((("a", "1", "1", "1"), ("b", "2", "1", "2"), ("c", "1", "1", "2")))
    ab = base[base["order"] == "ab"]  # a, b, c in order ab: right a, c -> 2/3
    r = A.pairwise_statistics(ab, ["judge"], n_resamples=0).iloc[0]
    assert r["acc_ab"] == pytest.approx(2 / 3) and np.isnan(r["acc_ba"]) and np.isnan(r["acc"])
    assert np.isnan(r["position_consistency"])
    assert "not computable" in r["note"] and "both" in r["note"]
    unrecorded = ab.assign(order="")
    u = A.pairwise_statistics(unrecorded, ["judge"], n_resamples=0).iloc[0]  # orders not recorded: says so
    assert np.isnan(u["acc"]) and np.isnan(u["acc_ab"]) and "an unrecorded order" in u["note"]
    assert u["note"].count("not computable") == 1  # Acc. and consistency share the reason: said once
    whole = A.pairwise_statistics(unrecorded, [], n_resamples=0).iloc[0]  # the whole table: the same reason
    assert whole["note"] == u["note"] and "no gold labels" not in whole["note"]  # gold is there: 3 items
    acc = A.accuracy(unrecorded, n_resamples=0).iloc[0]
    assert acc["accuracy"] == pytest.approx(2 / 3) and acc["parsed"] == 3
    assert (acc["accuracy_low"], acc["accuracy_high"]) == pytest.approx(proportion_confint(2, 3, method="wilson"))
    from evallab.metrics._position import position_consistency
    pc = position_consistency(unrecorded, ["judge"]).iloc[0]
    assert np.isnan(pc["position_consistency"]) and "needs both presentation orders" in pc["note"]


def test_accuracy_pointwise_excludes_unparsed():
    df = V.coerce(pd.DataFrame({"item_id": ["a", "a", "b", "c"], "judge": "J", "sample": [0, 1, 0, 0],
                                "verdict": ["pass", "fail", None, "fail"], "gold": ["pass", "pass", "fail", "fail"]}))
    r = A.accuracy(df, n_resamples=0).iloc[0]
    assert (r["replies"], r["unparsed"], r["parsed"], r["correct"], r["items"]) == (4, 1, 3, 2, 3)
    assert r["accuracy"] == pytest.approx(2 / 3)


# ------------------------------------------------------------------------------------------------ Cohen's kappa
@pytest.fixture(scope="module")
def natural():
    return load_llmbar(subsets=["LLMBar/Natural"], strategies=["Vanilla"]).verdicts


def test_cohen_kappa_matches_sklearn_and_statsmodels_ase():
    rng = np.random.default_rng(5)
    y1 = rng.choice(["1", "2", "tie"], 60)
    y2 = np.where(rng.random(60) < 0.7, y1, rng.choice(["1", "2", "tie"], 60))
    k, lo, hi = A.cohen_kappa(y1, y2, confidence=0.9)
    assert k == pytest.approx(cohen_kappa_score(y1, y2))
    ref = cohens_kappa(pd.crosstab(y1, y2).to_numpy())
    z = norm.ppf(0.95)
    assert (lo, hi) == pytest.approx((ref["kappa"] - z * ref["std_kappa"], ref["kappa"] + z * ref["std_kappa"]))


def test_cohen_kappa_is_sklearns_float_exactly():
    # cohen_kappa_method computes kappa from the contingency table by sklearn's operations: the same float, not
    # merely a close one (reports print these digits)
    rng = np.random.default_rng(11)
    for n, labels in [(7, ["pass", "fail"]), (60, ["1", "2", "tie"]), (1000, ["a", "b", "c", "d"]), (33, ["x", "y"])]:
        for _ in range(20):
            y1 = rng.choice(labels, n)
            y2 = np.where(rng.random(n) < rng.random(), y1, rng.choice(labels, n))
            if len(set(y1)) < 2 or len(set(y2)) < 2:
                continue
            assert A.cohen_kappa_method(y1, y2, n_resamples=0)[0] == float(cohen_kappa_score(y1, y2))


def test_cohen_kappa_vs_gold_matches_sklearn_and_statsmodels(natural):
    k = A.cohen_kappa_vs_gold(natural, ["judge", "order"], confidence=0.9)
    row = k[(k["judge"] == "PaLM2") & (k["order"] == "ab")].iloc[0]
    d = natural[(natural["judge"] == "PaLM2") & (natural["order"] == "ab") & natural["verdict"].notna()]
    gold, pred = d["gold"].astype(str), d["verdict"].astype(str)
    assert row["n"] == len(d) == 98 and row["unparsed"] == 2
    assert row["kappa"] == pytest.approx(cohen_kappa_score(gold, pred))
    table = pd.crosstab(gold, pred).reindex(index=["1", "2"], columns=["1", "2"], fill_value=0).to_numpy()
    ref = cohens_kappa(table)
    z = norm.ppf(0.95)
    assert (row["kappa_low"], row["kappa_high"]) == pytest.approx(
        (ref["kappa"] - z * ref["std_kappa"], ref["kappa"] + z * ref["std_kappa"]))
    # both orders pooled: two replies per item, the interval resamples items and holds the point
    both = A.cohen_kappa_vs_gold(natural, ["judge"], n_resamples=300).set_index("judge").loc["PaLM2"]
    d2 = natural[(natural["judge"] == "PaLM2") & natural["verdict"].notna()]
    assert both["kappa"] == pytest.approx(cohen_kappa_score(d2["gold"].astype(str), d2["verdict"].astype(str)))
    assert both["items"] == d2["item_id"].nunique() == 98  # PaLM2 parsed neither order of 2 items
    assert both["kappa_low"] <= both["kappa"] <= both["kappa_high"]


def test_kappa_interval_of_111112_vs_111122_stays_in_range():
    y1, y2 = list("111112"), list("111122")
    ref = cohens_kappa(pd.crosstab(pd.Series(y1), pd.Series(y2)).to_numpy())
    z = norm.ppf(0.975)
    assert ref["kappa"] + z * ref["std_kappa"] > 1  # the raw asymptotic interval overshoots ...
    k, lo, hi = A.cohen_kappa(y1, y2)
    assert k == pytest.approx(cohen_kappa_score(y1, y2)) == pytest.approx(8 / 14)
    assert -1 <= lo <= k <= hi <= 1 and hi == 1.0  # ... clipped
    assert lo == pytest.approx(ref["kappa"] - z * ref["std_kappa"])
    df = V.coerce(pd.DataFrame({"item_id": list("abcdef"), "judge": "J", "gold": y1, "verdict": y2}))
    r = A.cohen_kappa_vs_gold(df, ["judge"]).iloc[0]
    assert r["kappa"] == pytest.approx(8 / 14) and -1 <= r["kappa_low"] <= r["kappa_high"] <= 1
    # both orders of each item (clustered bootstrap): still inside [-1, 1]
    two = pd.concat([df.assign(order="ab"), df.assign(order="ba")], ignore_index=True)
    r = A.cohen_kappa_vs_gold(two, ["judge"], n_resamples=300).iloc[0]
    assert -1 <= r["kappa_low"] <= r["kappa"] <= r["kappa_high"] <= 1


def test_judge_agreement_matches_direct_computation(natural):
    m = A.judge_agreement(natural, n_resamples=200)
    r = m[(m["judge_a"] == "GPT-4") & (m["judge_b"] == "PaLM2")].iloc[0]
    a = natural[natural["judge"] == "GPT-4"].set_index(["item_id", "order"])["verdict"]
    b = natural[natural["judge"] == "PaLM2"].set_index(["item_id", "order"])["verdict"]
    j = pd.concat([a.rename("a"), b.rename("b")], axis=1).dropna()
    assert r["n"] == len(j) == 196  # 200 replies, PaLM2 left 4 unparsed, GPT-4 none
    assert r["agreement"] == pytest.approx((j["a"] == j["b"]).mean())
    assert r["kappa"] == pytest.approx(cohen_kappa_score(j["a"].astype(str), j["b"].astype(str)))
    assert r["agreement_low"] <= r["agreement"] <= r["agreement_high"]
    sym = m[(m["judge_a"] == "PaLM2") & (m["judge_b"] == "GPT-4")].iloc[0]
    assert sym["kappa"] == r["kappa"]
    sq = m.pivot(index="judge_a", columns="judge_b", values="kappa")
    assert sq.shape == (natural["judge"].nunique(),) * 2 and (np.diag(sq) == 1).all()
    with pytest.raises(EvallabError, match="not in column"):
        A.judge_agreement(natural, judges=["GPT-4", "GPT-5"])


# ------------------------------------------------------------------------------------ Fleiss and Krippendorff
def _wide(natural):
    return natural.pivot_table(index=["item_id", "order"], columns="judge", values="verdict", aggfunc="first")


def test_fleiss_kappa_matches_statsmodels(natural):
    f = A.fleiss_kappa(natural, n_resamples=200, seed=1).iloc[0]
    wide = _wide(natural)
    full = wide.dropna()
    codes = np.array([[{"1": 0, "2": 1}[x] for x in row] for row in full.to_numpy()])
    table = aggregate_raters(codes)[0]
    assert f["units"] == len(full) and f["units_dropped"] == len(wide) - len(full)
    assert f["kappa"] == pytest.approx(fleiss_kappa(table, method="fleiss"))
    assert np.isfinite(f["kappa_low"]) and np.isfinite(f["kappa_high"]) and f["kappa_low"] <= f["kappa"] <= f["kappa_high"]
    assert f["items"] == full.index.get_level_values("item_id").nunique()
    # the vectorised statistic of the bootstrap, on the totals of the whole table, is Fleiss' kappa
    m = table.sum(1)[0]
    totals = np.concatenate([[(table * (table - 1)).sum(), len(table)], table.sum(0)]).astype(float)
    assert float(A._fleiss_totals(totals, m)) == pytest.approx(fleiss_kappa(table, method="fleiss"))


def test_krippendorff_alpha_matches_library(natural):
    a = A.krippendorff_alpha(natural, n_resamples=200, seed=1).iloc[0]
    wide = _wide(natural)
    rel = np.array([[{"1": 0.0, "2": 1.0}.get(x, np.nan) if isinstance(x, str) else np.nan for x in col]
                    for col in wide.T.to_numpy()])
    ref = krippendorff.alpha(reliability_data=rel, level_of_measurement="nominal")
    assert a["alpha"] == pytest.approx(ref)
    assert np.isfinite(a["alpha_low"]) and np.isfinite(a["alpha_high"]) and a["alpha_low"] <= a["alpha"] <= a["alpha_high"]
    # the vectorised statistic on the coincidence matrix built by hand (Krippendorff 2011, eq. for o_ck)
    o = np.zeros((2, 2))
    for unit in rel.T:
        vals = unit[~np.isnan(unit)].astype(int)
        if len(vals) < 2:
            continue
        for i in range(len(vals)):
            for j in range(len(vals)):
                if i != j:
                    o[vals[i], vals[j]] += 1 / (len(vals) - 1)
    assert float(A._alpha_totals(o.ravel(), 2)) == pytest.approx(ref)


def test_fleiss_and_alpha_small_resamples_keep_the_point(natural):
    f = A.fleiss_kappa(natural, n_resamples=20, seed=0).iloc[0]
    a = A.krippendorff_alpha(natural, n_resamples=20, seed=0).iloc[0]
    assert f["kappa"] == pytest.approx(A.fleiss_kappa(natural, n_resamples=0).iloc[0]["kappa"])
    assert a["alpha"] == pytest.approx(A.krippendorff_alpha(natural, n_resamples=0).iloc[0]["alpha"])
    assert np.isnan(A.fleiss_kappa(natural, n_resamples=0).iloc[0]["kappa_low"])


def test_fleiss_one_rater_not_computable(natural):
    one = natural[natural["judge"] == "GPT-4"]
    f = A.fleiss_kappa(one).iloc[0]
    a = A.krippendorff_alpha(one).iloc[0]
    assert np.isnan(f["kappa"]) and f["note"].startswith("not computable")
    assert np.isnan(a["alpha"]) and a["note"].startswith("not computable")


# -------------------------------------------------------------------------------------- repetition stability
def test_repetition_stability_by_hand():
    # unit a: pass,pass,pass (unanimous); unit b: pass,fail,fail (1 of 3 pairs agree); unit c: one parsed sample
    rows = [("a", s, "pass") for s in range(3)] + [("b", 0, "pass"), ("b", 1, "fail"), ("b", 2, "fail")] + \
        [("c", 0, "fail"), ("c", 1, None)]
    df = V.coerce(pd.DataFrame(rows, columns=["item_id", "sample", "verdict"]).assign(judge="J"))
    r = A.repetition_stability(df, n_resamples=0).iloc[0]
    assert (r["units"], r["unanimous"], r["unparsed"]) == (2, 1, 1)
    assert r["unanimity"] == 0.5
    assert r["flip_rate"] == pytest.approx(2 / 6)  # 0 of 3 pairs differ in a, 2 of 3 in b
    assert r["repetition_stability"] == pytest.approx((1 + 2 / 3) / 2)  # modal share: a 3/3, b 2/3
    table = aggregate_raters(np.array([[0, 0, 0], [0, 1, 1]]))[0]
    f = A.fleiss_kappa(df[df["item_id"] != "c"], raters="sample", n_resamples=0).iloc[0]
    assert f["kappa"] == pytest.approx(fleiss_kappa(table))


# ------------------------------------------------------------------------------ degenerate intervals, by hand
def _unanimous_samples(n_items=20):
    # n_items pointwise requests, 3 samples each, every request unanimous (half pass, half fail)
    rows = [{"item_id": f"i{i}", "judge": "j", "verdict": "pass" if i % 2 else "fail", "sample": s}
            for i in range(n_items) for s in range(3)]
    return V.coerce(pd.DataFrame(rows))


def test_fleiss_and_alpha_on_unanimous_units_are_never_shown_as_one_one():
    df = _unanimous_samples(20)
    fk = A.fleiss_kappa(df, raters="sample", n_resamples=200).iloc[0]
    # statsmodels' kappa is 1; every resample is 1 too, so no interval — the Wilson bound of 20 of 20 unanimous
    # items (statsmodels proportion_confint) is given in the note instead
    codes = df.pivot(index="item_id", columns="sample", values="verdict").eq("pass").astype(int).to_numpy()
    assert fk["kappa"] == pytest.approx(fleiss_kappa(aggregate_raters(codes)[0])) == pytest.approx(1.0)
    assert np.isnan(fk["kappa_low"]) and np.isnan(fk["kappa_high"])
    lo = proportion_confint(20, 20, method="wilson")[0]
    assert "20 of 20" in fk["note"] and f"{lo:.1%}" in fk["note"] and "degenerate" in fk["note"]
    ka = A.krippendorff_alpha(df, raters="sample", n_resamples=200).iloc[0]
    assert ka["alpha"] == pytest.approx(1.0) and np.isnan(ka["alpha_low"]) and "20 of 20" in ka["note"]


def test_judge_agreement_diagonal_and_identical_raters_have_no_point_interval():
    df = _unanimous_samples(30)
    two = pd.concat([df.assign(judge="a"), df.assign(judge="b")], ignore_index=True)
    t = A.judge_agreement(two[two["sample"] == 0], n_resamples=200).set_index(["judge_a", "judge_b"])
    diag = t.loc[("a", "a")]
    assert diag["kappa"] == 1 and np.isnan(diag["kappa_low"]) and np.isnan(diag["agreement_low"])
    assert diag["note"] == A.SELF_AGREEMENT_NOTE
    off = t.loc[("a", "b")]
    # identical raters, one unit per item: Wilson for the agreement (30 of 30), kappa 1 with a zero ASE -> none
    assert (off["agreement_low"], off["agreement_high"]) == pytest.approx(proportion_confint(30, 30, method="wilson"))
    assert off["kappa"] == pytest.approx(1.0) and np.isnan(off["kappa_low"]) and np.isnan(off["kappa_high"])
    assert "every item gives the same value" in off["note"]


# ------------------------------------------------- issue 26: what every n counts, on 12 items × 3 samples
def _twelve_by_three(seed=7):
    """One judge, both orders, 3 samples per (item, order), gold on every item; one reply unparsed."""
    rng = np.random.default_rng(seed)
    rows = [dict(item_id=f"q{i:02d}", judge="J", order=o, sample=s, gold="1" if i % 2 else "2",
                 verdict=rng.choice(["1", "2"])) for i in range(12) for o in ("ab", "ba") for s in range(3)]
    t = V.coerce(pd.DataFrame(rows))
    t.loc[t.index[0], "verdict"] = pd.NA
    return t


def test_every_n_unit_says_what_its_n_column_counts_on_12_items_by_3_samples():
    t = _twelve_by_three()
    ok = t[t["verdict"].notna()]
    ps = A.pairwise_statistics(t, ["judge"], n_resamples=0)
    assert ps.at[0, "n"] == 12 and ps.measures["acc"].n_unit == "items"
    assert ps.at[0, "parsed_ab"] == 35 and ps.at[0, "parsed_ba"] == 36
    assert ps.measures["acc_ab"].n_unit == "parsed replies"
    assert ps.at[0, "parsed"] == 71 and ps.estimate("accuracy_pooled").n_unit == "replies"
    assert ps.estimate("accuracy_pooled").n == 71
    assert ps.at[0, "accuracy_pooled"] == pytest.approx((ok["verdict"] == ok["gold"]).mean())
    # a pair is an (item, sample) asked in both orders: 36, of which 35 parsed in both
    assert ps.at[0, "both_parsed"] == 35 and ps.measures["position_consistency"].n_unit == "pairs"
    acc = A.accuracy(t, ["judge"], n_resamples=0)
    assert (acc.at[0, "parsed"], acc.at[0, "items"]) == (71, 12) and acc.measures["accuracy"].n_unit == "replies"
    kg = A.cohen_kappa_vs_gold(t, ["judge"], n_resamples=0)
    assert kg.at[0, "n"] == 71 and kg.measures["kappa"].n_unit == "replies"
    rep = A.repetition_stability(t, n_resamples=0)
    assert rep.at[0, "units"] == 24 and rep.measures["repetition_stability"].n_unit == "requests"
    fk = A.fleiss_kappa(t, raters="sample", n_resamples=0)
    assert fk.at[0, "units"] == 23 and fk.measures["kappa"].n_unit == "requests"  # q00 ab lost a sample
    mv = A.majority_vote(t, n_resamples=0)
    assert (mv.at[0, "requests"], mv.at[0, "replies"], mv.at[0, "items"]) == (24, 71, 12)
    assert mv.measures["majority_accuracy"].n_unit == "requests" and mv.measures["reply_accuracy"].n_unit == "replies"
    two = pd.concat([t, t.assign(judge="K")], ignore_index=True)
    ja = A.judge_agreement(two, n_resamples=0).query("judge_a == 'J' and judge_b == 'K'")
    assert ja["n"].iloc[0] == 71 and A.JUDGE_AGREEMENT_MEASURES[2].n_unit.startswith("units (item, order, sample)")


def test_majority_vote_hand_counts_with_a_tie():
    # q1: 2-1 for "1" (gold 1: right, straddles); q2: 1-1 tie of "1" and "2" with an unparsed third (gold 2: 1/2);
    # q3: 3-0 for "2" (gold 1: wrong, does not straddle); q4: one parsed sample only (not a request with samples)
    t = V.coerce(pd.DataFrame({"item_id": ["q1"] * 3 + ["q2"] * 3 + ["q3"] * 3 + ["q4"] * 3, "judge": "A",
                               "sample": [0, 1, 2] * 4,
                               "verdict": ["1", "1", "2", "1", "2", None, "2", "2", "2", "1", None, None],
                               "gold": ["1"] * 3 + ["2"] * 3 + ["1"] * 3 + ["1"] * 3}))
    r = A.majority_vote(t, n_resamples=0)
    assert (r.at[0, "requests"], r.at[0, "replies"], r.at[0, "unparsed"], r.at[0, "tied"]) == (3, 8, 3, 1)
    assert r.at[0, "majority_accuracy"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert r.at[0, "reply_accuracy"] == pytest.approx((2 + 1 + 0) / 8)
    assert r.at[0, "straddling"] == 2  # q1 (margin 1) and q2 (tied, margin 0)
    assert r.at[0, "flip_probability"] == pytest.approx((1 / 3 + 1 / 2 + 0) / 3)
    req = A.majority_vote(t, per="request").set_index("item_id")
    assert req.loc["q2", "majority"] == "" and req.loc["q1", "majority"] == "1" and req.loc["q3", "margin"] == 3
    with pytest.raises(EvallabError):
        A.majority_vote(t, per="item")


def test_majority_vote_refuses_to_pool_strategies():
    t = _twelve_by_three()
    two = pd.concat([t, t.assign(strategy="other")], ignore_index=True)
    with pytest.raises(DesignError):
        A.majority_vote(two, ["judge"])
    assert len(A.majority_vote(two, ["judge", "strategy"], n_resamples=0)) == 2


def test_fleiss_and_alpha_give_no_interval_below_min_items():
    t = _twelve_by_three()
    three = pd.concat([t.assign(judge=j) for j in ("A", "B", "C")], ignore_index=True)
    three.loc[three["judge"] == "B", "verdict"] = three.loc[three["judge"] == "A", "verdict"].to_numpy()[::-1]
    for fn, col in ((A.fleiss_kappa, "kappa"), (A.krippendorff_alpha, "alpha")):
        thin = fn(three, n_resamples=50, min_items=20)
        assert np.isnan(thin.at[0, f"{col}_low"]) and thin.at[0, f"{col}_method"] == ""
        assert thin.at[0, "note"] == "no interval: 12 items, fewer than min_items=20"
        full = fn(three, n_resamples=50)
        assert thin.at[0, col] == pytest.approx(full.at[0, col]) and np.isfinite(full.at[0, f"{col}_low"])


def test_coin_flip_chance_matches_enumeration():
    import collections
    import itertools

    from evallab.metrics._agreement import coin_flip_chance

    for k in (2, 3, 4, 5):
        for c in (2, 3):
            outcomes = list(itertools.product(range(c), repeat=k))
            tops = [max(collections.Counter(o).values()) for o in outcomes]
            got = coin_flip_chance(k, c)
            assert got["repetition_stability"] == pytest.approx(sum(t / k for t in tops) / len(outcomes))
            assert got["unanimity"] == pytest.approx(sum(t == k for t in tops) / len(outcomes))
            pairs = [sum(a != b for a, b in itertools.combinations(o, 2)) / (k * (k - 1) / 2) for o in outcomes]
            assert got["flip_rate"] == pytest.approx(sum(pairs) / len(outcomes))
    assert coin_flip_chance(3, 2) == {"repetition_stability": 0.75, "unanimity": 0.25, "flip_rate": 0.5}

