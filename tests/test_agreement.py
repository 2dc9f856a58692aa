"""Agreement estimators against the LLMBar authors' published statistics, hand counts and library reference calls."""

from __future__ import annotations

import csv

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from scipy.stats import norm
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

from evallab import verdicts as V
from evallab.datasets import load_llmbar
from evallab.metrics import agreement as A
from evallab.paths import data_dir

with open(data_dir("llmbar") / "statistics.csv", newline="", encoding="utf-8") as _fh:
    PUBLISHED = list(csv.DictReader(_fh))


@pytest.fixture(scope="module")
def ours():
    v = load_llmbar().verdicts
    s = A.pairwise_statistics(v, unparsed="published", n_resamples=0)
    return s.set_index(["subset", "judge", "strategy"])


def test_published_table_has_499_rows():
    assert len(PUBLISHED) == 499


@pytest.mark.parametrize("row", PUBLISHED, ids=lambda r: f"{r['subset']}|{r['judge']}|{r['strategy']}")
def test_recomputes_published_statistics_exactly(ours, row):
    got = ours.loc[(row["subset"], row["judge"], row["strategy"])]
    for col in ("n", "correct_order_12", "correct_order_21", "correct_both", "positional_agreement_equal"):
        assert int(got[col]) == int(row[col]), col
    assert got["correct_average_pct"] == pytest.approx(float(row["correct_average_pct"]), abs=1e-9)


def test_paper_example_natural_vanilla_gpt4(ours):
    got = ours.loc[("LLMBar/Natural", "GPT-4", "Vanilla")]
    assert got["correct_average_pct"] == 95.5 and got["positional_agreement_equal"] == 95 and got["n"] == 100


def _hand_table():
    # 4 pairs judged in both orders; gold 1,1,2,2. Replies: p1 (1,1) p2 (1,NA) p3 (NA,NA) p4 (1,2)
    rows = []
    for item, gold, ab, ba in (("p1", "1", "1", "1"), ("p2", "1", "1", None), ("p3", "2", None, None),
                               ("p4", "2", "1", "2")):
        rows += [dict(item_id=item, judge="J", order="ab", verdict=ab, gold=gold),
                 dict(item_id=item, judge="J", order="ba", verdict=ba, gold=gold)]
    return V.coerce(pd.DataFrame(rows))


def test_unparsed_conventions_by_hand():
    df = _hand_table()
    pub = A.pairwise_statistics(df, ["judge"], unparsed="published", n_resamples=0).iloc[0]
    # published: n=4; correct ab: p1,p2 = 2; correct ba: p1,p4 = 2; Acc = 4/8; both: p1 = 1;
    # Agr: p1 (equal) + p3 (both unparsed counts as agreeing) = 2
    assert (pub["n"], pub["correct_order_12"], pub["correct_order_21"], pub["correct_both"],
            pub["positional_agreement_equal"]) == (4, 2, 2, 1, 2)
    assert pub["correct_average_pct"] == 50.0
    exc = A.pairwise_statistics(df, ["judge"], n_resamples=0).iloc[0]
    # principled: parsed ab = 3 (2 correct), parsed ba = 2 (2 correct) -> Acc = 4/5; both-parsed pairs = p1, p4;
    # Agr = p1 only = 1 of 2
    assert (exc["unparsed_ab"], exc["unparsed_ba"], exc["n_both_parsed"]) == (1, 2, 2)
    assert exc["acc_order_12"] == pytest.approx(2 / 3) and exc["acc_order_21"] == 1.0
    assert exc["correct_average_pct"] == pytest.approx(80.0)
    assert exc["positional_agreement_equal"] == 1 and exc["agr_rate"] == 0.5
    lo, hi = proportion_confint(2, 3, alpha=0.05, method="wilson")
    assert (exc["acc_order_12_low"], exc["acc_order_12_high"]) == pytest.approx((lo, hi))


def test_accuracy_bootstrap_matches_scipy_reference():
    num = np.array([2, 1, 0, 2, 2, 1, 1, 0, 2, 2], float)
    den = np.array([2, 2, 1, 2, 2, 2, 1, 2, 2, 2], float)
    lo, hi = A.stats.bootstrap_ratio(num, den, n_resamples=500, confidence=0.9, seed=7)
    ref = sps.bootstrap((num, den), lambda x, y, axis: x.sum(axis) / y.sum(axis), paired=True, vectorized=True,
                        n_resamples=500, confidence_level=0.9, method="percentile",
                        random_state=np.random.default_rng(7))
    assert (lo, hi) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    assert lo <= num.sum() / den.sum() <= hi


@pytest.fixture(scope="module")
def natural():
    return load_llmbar(subsets=["LLMBar/Natural"], strategies=["Vanilla"]).verdicts


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
    assert row["kappa"] == pytest.approx(ref["kappa"])
    assert (row["kappa_low"], row["kappa_high"]) == pytest.approx(
        (ref["kappa"] - z * ref["std_kappa"], ref["kappa"] + z * ref["std_kappa"]))


def test_judge_matrix_matches_direct_computation(natural):
    m = A.judge_agreement_matrix(natural)
    r = m[(m["judge_a"] == "GPT-4") & (m["judge_b"] == "PaLM2")].iloc[0]
    a = natural[natural["judge"] == "GPT-4"].set_index(["item_id", "order"])["verdict"]
    b = natural[natural["judge"] == "PaLM2"].set_index(["item_id", "order"])["verdict"]
    j = pd.concat([a.rename("a"), b.rename("b")], axis=1).dropna()
    assert r["n"] == len(j) == 196  # 200 replies, PaLM2 left 4 unparsed, GPT-4 none
    assert r["agreement"] == pytest.approx((j["a"] == j["b"]).mean())
    assert r["kappa"] == pytest.approx(cohen_kappa_score(j["a"].astype(str), j["b"].astype(str)))
    sym = m[(m["judge_a"] == "PaLM2") & (m["judge_b"] == "GPT-4")].iloc[0]
    assert sym["kappa"] == r["kappa"]


def test_fleiss_and_krippendorff_match_library_calls(natural):
    f = A.fleiss_kappa_judges(natural, n_resamples=200, seed=1)
    a = A.krippendorff_alpha_judges(natural, n_resamples=200, seed=1)
    wide = natural.pivot_table(index=["item_id", "order"], columns="judge", values="verdict", aggfunc="first")
    full = wide.dropna()
    codes = np.array([[{"1": 0, "2": 1}[x] for x in row] for row in full.to_numpy()])
    assert f["units"] == len(full) and f["units_dropped"] == len(wide) - len(full)
    assert f["kappa"] == pytest.approx(fleiss_kappa(aggregate_raters(codes)[0]))
    assert f["low"] <= f["kappa"] <= f["high"]
    rel = np.array([[{"1": 0.0, "2": 1.0}.get(x, np.nan) if isinstance(x, str) else np.nan for x in col]
                    for col in wide.T.to_numpy()])
    assert a["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=rel, level_of_measurement="nominal"))
    assert a["low"] <= a["alpha"] <= a["high"]


def test_accuracy_pointwise_excludes_unparsed():
    df = V.coerce(pd.DataFrame({"item_id": ["a", "a", "b", "c"], "judge": "J", "sample": [0, 1, 0, 0],
                                "verdict": ["pass", "fail", None, "fail"], "gold": ["pass", "pass", "fail", "fail"]}))
    r = A.accuracy(df, n_resamples=0).iloc[0]
    assert (r["replies"], r["unparsed"], r["parsed"], r["correct"]) == (4, 1, 3, 2)
    assert r["accuracy"] == pytest.approx(2 / 3)


def test_self_agreement_by_hand():
    # unit a: pass,pass,pass (unanimous); unit b: pass,fail,fail (1 of 3 pairs agree); unit c: one parsed sample
    rows = [("a", s, "pass") for s in range(3)] + [("b", 0, "pass"), ("b", 1, "fail"), ("b", 2, "fail")] + \
        [("c", 0, "fail"), ("c", 1, None)]
    df = V.coerce(pd.DataFrame(rows, columns=["item_id", "sample", "verdict"]).assign(judge="J"))
    r = A.self_agreement(df).iloc[0]
    assert (r["units"], r["unanimous"], r["unparsed"]) == (2, 1, 1)
    assert r["unanimity"] == 0.5
    assert r["flip_rate"] == pytest.approx(2 / 6)  # 0 of 3 pairs differ in a, 2 of 3 in b
    table = aggregate_raters(np.array([[0, 0, 0], [0, 1, 1]]))[0]
    assert r["fleiss_kappa"] == pytest.approx(fleiss_kappa(table))


def test_unknown_unparsed_mode():
    with pytest.raises(A.EvallabError, match="unparsed"):
        A.pairwise_statistics(_hand_table(), unparsed="drop")


def test_kappa_interval_is_clipped_to_its_range():
    # 5 items, 4 agree: the asymptotic interval kappa + 1.96 * ASE would pass 1
    gold = pd.Series(["1", "1", "2", "2", "2"])
    pred = pd.Series(["1", "1", "2", "2", "1"])
    k, lo, hi = A._kappa_with_ci(gold, pred, 0.95)
    ref = cohens_kappa(pd.crosstab(gold, pred).to_numpy())
    assert k == pytest.approx(ref["kappa"])
    assert ref["kappa"] + norm.ppf(0.975) * ref["std_kappa"] > 1  # the raw interval overshoots ...
    assert hi == 1.0 and lo == pytest.approx(ref["kappa"] - norm.ppf(0.975) * ref["std_kappa"])  # ... clipped
