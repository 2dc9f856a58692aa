"""Selective judging (fixed-sequence testing) recomputed by hand; contextual calibration against Zhao et al.'s
formula and a judge whose injected leniency is known; the content-free probe experiment."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evallab import simulation as S
from evallab.errors import DataError
from evallab.experiments import _calibrate as X
from evallab.metrics import _contextual as CC
from evallab.metrics import _selective as L
from evallab.skills import load_calibration_items
from evallab.testing import InProcessJudge, SimulatedJudge


def test_fixed_sequence_by_hand():
    # 10 items at confidence 1.0 (0 wrong), 10 at 0.8 (1 wrong), 10 at 0.6 (5 wrong)
    c = np.r_[np.full(10, 1.0), np.full(10, 0.8), np.full(10, 0.6)]
    a = np.r_[np.ones(10), np.r_[np.zeros(1), np.ones(9)], np.r_[np.zeros(5), np.ones(5)]]
    r = L.fixed_sequence_threshold(c, a, alpha=0.3, delta=0.1)
    p1, p2, p3 = sps.binom.cdf(0, 10, 0.3), sps.binom.cdf(1, 20, 0.3), sps.binom.cdf(6, 30, 0.3)
    assert p1 <= 0.1 and p2 <= 0.1 and p3 > 0.1
    assert r["sequence"]["pvalue"].tolist() == pytest.approx([p1, p2, p3])
    assert r["threshold"] == 0.8 and r["kept"] == 20 and r["errors"] == 1 and r["coverage"] == pytest.approx(2 / 3)
    # Clopper-Pearson one-sided upper bound of 1 error in 20 at level 0.9, via statsmodels' beta interval
    from statsmodels.stats.proportion import proportion_confint

    assert r["upper_risk"] == pytest.approx(proportion_confint(1, 20, alpha=0.2, method="beta")[1])
    assert r["upper_risk"] < 0.3


def test_no_threshold_passes_means_abstain_on_all():
    r = L.fixed_sequence_threshold([1, 1, 1], [1, 0, 1], alpha=0.1, delta=0.1)
    assert r["threshold"] == float("inf") and r["coverage"] == 0 and len(r["sequence"]) == 1


def test_item_confidence_majority_and_ties():
    rows = []
    for s, v in enumerate(["pass", "pass", "fail"]):
        rows.append(dict(item_id="a", judge="j", sample=s, verdict=v, gold="pass"))
    for s, v in enumerate(["pass", "fail"]):
        rows.append(dict(item_id="b", judge="j", sample=s, verdict=v, gold="fail"))
    from evallab import verdicts as V

    df = V.coerce(pd.DataFrame(rows))
    ic = L.item_confidence(df).set_index("item_id")
    assert ic.loc["a", "verdict"] == "pass" and ic.loc["a", "confidence"] == pytest.approx(2 / 3)
    assert ic.loc["a", "agrees"] == 1.0
    assert pd.isna(ic.loc["b", "verdict"]) and np.isnan(ic.loc["b", "agrees"])  # tie: escalated, never scored
    with pytest.raises(DataError, match="verdict_logprob"):
        L.item_confidence(df, source="logprob")


def test_logprob_confidence():
    from evallab import verdicts as V

    df = V.coerce(pd.DataFrame([dict(item_id=f"i{k}", judge="j", verdict="pass", gold="pass") for k in range(3)]))
    df["verdict_logprob"] = np.log([0.9, 0.6, 0.99])
    ic = L.item_confidence(df, source="logprob")
    assert ic["confidence"].to_numpy() == pytest.approx([0.9, 0.6, 0.99])


def test_selective_judging_guarantee_on_held_out_simulated_splits():
    df = S.simulate_repeated(S.RepeatedJudgeDesign(n_items=1000, samples=5), 4)
    r = L.selective_judging(df, alpha=0.1, delta=0.1, splits=40).iloc[0]
    assert r["items"] == 1000 and np.isfinite(r["threshold"])
    assert 0 < r["mean_coverage"] < 1 and r["held_out_guarantee_rate"] >= 0.8
    assert r["overall_agreement"] < 0.9 < r["mean_agreement"]  # abstaining buys the agreement


def test_calibrate_is_zhao_et_al_formula():
    p, cf = np.array([0.2, 0.6, 0.9]), np.array([0.7, 0.7, 0.7])
    # W = diag(p_cf)^-1 on the two-class vector (p, 1-p), then softmax-normalised (sum to one)
    w = np.stack([p / cf, (1 - p) / (1 - cf)])
    assert CC.calibrate(p, cf) == pytest.approx(w[0] / w.sum(0))
    assert (CC.calibrate(p, cf) > 0.5).tolist() == (p > cf).tolist()
    assert np.isnan(CC.calibrate(0.5, 1.0))


@pytest.fixture(scope="module")
def probe_run():
    items = load_calibration_items()
    truth = dict(zip(items["answer"], items["gold"], strict=True)).get
    sim = SimulatedJudge(seed=3, accuracy=0.7, pass_rate=0.5, pass_only_inflation=0.8, truth=truth)
    return X.run_probe(InProcessJudge(sim), items, scenarios=12, samples=8), items


def test_probe_recovers_the_injected_leniency(probe_run):
    df, _ = probe_run
    pr = CC.content_free_probe(df).set_index("anchor_set")
    # injected: P(pass) = pass_rate on content-free answers, times 1 + 0.8 under PASS-only anchors
    for a, true in (("balanced", 0.5), ("pass-only", 0.9)):
        assert pr.loc[a, "p_cf_low"] <= true <= pr.loc[a, "p_cf_high"]
        assert pr.loc[a, "probes"] == 12 * 3 and pr.loc[a, "replies"] == 12 * 3 * 8


def test_calibrated_rates_count_by_hand(probe_run):
    df, items = probe_run
    r = CC.calibrated_rates(df, n_resamples=0).set_index("anchor_set").loc["pass-only"]
    probe = df[df["item_id"].str.startswith("content-free") & (df["anchor_set"] == "pass-only")]
    p_cf = probe.groupby("item_id")["verdict"].apply(lambda v: (v == "pass").mean()).mean()
    it = df[~df["item_id"].str.startswith("content-free") & (df["anchor_set"] == "pass-only")]
    p = it.groupby("item_id")["verdict"].apply(lambda v: (v == "pass").mean())
    gold = it.groupby("item_id")["gold"].first()
    fails = gold[gold == "fail"].index
    assert r["p_cf"] == pytest.approx(p_cf)
    assert r["false_pass_rate"] == pytest.approx(((p[fails] > 0.5) + 0.5 * (p[fails] == 0.5)).mean())
    assert r["calibrated_false_pass_rate"] == pytest.approx(((p[fails] > p_cf) + 0.5 * (p[fails] == p_cf)).mean())
    # the lenient anchors pass many gold-FAIL answers; calibrating against the probe removes most of it
    assert r["calibrated_false_pass_rate"] < r["false_pass_rate"] - 0.2


def test_a_probe_that_always_passes_gives_no_calibrated_rate(probe_run):
    """p_cf = 1: calibrate() is undefined, so the calibrated rates are NaN with the reason — not the ½ every item
    would tie at (the live SmolLM2 verdict-first run had exactly this probe)."""
    df, _ = probe_run
    d = df.copy()
    probe = d["item_id"].str.startswith("content-free") & (d["anchor_set"] == "pass-only")
    d.loc[probe, "verdict"] = "pass"
    r = CC.calibrated_rates(d, n_resamples=0).set_index("anchor_set")
    po = r.loc["pass-only"]
    assert po["p_cf"] == 1.0 and np.isnan(po["calibrated_pass_rate"]) and np.isnan(po["calibrated_false_pass_rate"])
    assert "passes in every reply" in po["note"] and not np.isnan(po["pass_rate"])
    assert np.isfinite(r.loc["balanced", "calibrated_pass_rate"])  # the other anchor set is untouched


def test_one_verdict_per_answer_cannot_be_calibrated_and_says_so(probe_run):
    """With one reply per graded answer P(PASS) is 0 or 1; for 0 < p_cf < 1 the calibrated verdict (P(PASS) > p_cf)
    is then the raw one on every answer: the rates are equal by construction and the note says why."""
    df, _ = probe_run
    probe = df["item_id"].str.startswith("content-free")
    one = pd.concat([df[probe], df[~probe & (df["sample"] == 0)]], ignore_index=True)
    r = CC.calibrated_rates(one, n_resamples=0).set_index("anchor_set")
    for a in ("balanced", "pass-only"):
        assert 0 < r.loc[a, "p_cf"] < 1
        assert r.loc[a, "calibrated_pass_rate"] == r.loc[a, "pass_rate"]
        assert r.loc[a, "calibrated_false_pass_rate"] == r.loc[a, "false_pass_rate"]
        assert "moves none of them" in r.loc[a, "note"]
    # with 8 samples per answer the note is absent and calibration moves verdicts (the test above)
    assert not CC.calibrated_rates(df, n_resamples=0)["note"].str.contains("moves none").any()


def test_probe_prompts_show_the_items_anchors(probe_run):
    items = load_calibration_items()
    reqs = X.probe_requests(items, ("pass-only",), samples=1)
    from evallab.experiments._inflation import build_requests
    from evallab.judges._prompts import answer_text

    item_req = next(r for r in build_requests(items, ("pass-only",)) if r.metadata["scenario_id"] ==
                    reqs[0].metadata["scenario_id"])
    pr = reqs[0]
    assert answer_text(pr.user) == "N/A"
    head = item_req.user.split("## Answer to grade")[0]
    assert pr.user.split("## Answer to grade")[0] == head  # same rubric, same anchors


def test_selective_judging_measures():
    from evallab._results import Results

    df = S.simulate_repeated(S.RepeatedJudgeDesign(n_items=400, samples=5), 0)
    r = L.selective_judging(df, alpha=0.1, delta=0.1, splits=5)
    assert isinstance(r, Results)
    m = r.measures
    assert (m["threshold"].unit, m["mean_coverage"].unit, m["items"].unit) == ("coefficient", "proportion", "count")
    assert (m["held_out_guarantee_rate"].n, m["held_out_guarantee_rate"].n_unit) == ("kept_splits", "splits")
    assert (m["certify_rate"].n, m["certify_rate"].unit, m["threshold_median"].unit) == ("splits", "proportion",
                                                                                         "coefficient")
    assert r.estimate("overall_agreement", 0).n == r["items"].iloc[0]


def test_probe_and_calibrated_rates_name_wilson_and_the_bootstrap_per_row():
    from statsmodels.stats.proportion import proportion_confint

    from evallab._results import WILSON, bootstrap_method

    # anchor set "a": one reply per answer (P(PASS) 0 or 1, binary rates: Wilson); "b": two samples, one answer
    # split 1-1 (a tie counted ½: the item bootstrap); probe: 3 of 8 replies pass under "a", 6 of 8 under "b"
    rows = []
    for a, samples in (("a", 1), ("b", 2)):
        for p in range(8):
            rows.append(dict(dataset="d", item_id=f"content-free/{p}", judge="j", anchor_set=a, sample=0, order="",
                             verdict="pass" if p < (3 if a == "a" else 6) else "fail", gold=None))
        for i in range(30):
            for s in range(samples):
                v = "pass" if (i % 3 == 0) != (s == 1 and i % 5 == 0) else "fail"
                rows.append(dict(dataset="d", item_id=f"x{i}", judge="j", anchor_set=a, sample=s, order="",
                                 verdict=v, gold="fail" if i % 2 else "pass"))
    df = pd.DataFrame(rows)
    probe = CC.content_free_probe(df).set_index("anchor_set")
    e = probe.estimate("p_cf", "a")
    assert e.method == WILSON and e.n == 8 and e.n_unit == "replies"
    assert (e.low, e.high) == pytest.approx(proportion_confint(3, 8, 0.05, "wilson"))
    cal = CC.calibrated_rates(df, n_resamples=100).set_index("anchor_set")
    e = cal.estimate("pass_rate", "a")
    assert e.method == WILSON and (e.low, e.high) == pytest.approx(proportion_confint(10, 30, 0.05, "wilson"))
    assert cal.estimate("pass_rate", "b").method == bootstrap_method(100, "item")
    assert cal.estimate("false_pass_rate", "a").n == 15 and cal.measures["agreement"].n == "gold_items"


def _confident_table(n: int, wrong: int) -> pd.DataFrame:
    """``n`` items, each with 4 unanimous replies (confidence 1); the first ``wrong`` disagree with gold."""
    from evallab import verdicts as V

    rows = [dict(item_id=f"i{k}", judge="j", sample=s, verdict="fail" if k < wrong else "pass", gold="pass")
            for k in range(n) for s in range(4)]
    return V.coerce(pd.DataFrame(rows))


def test_every_split_certifies_when_every_item_agrees():
    # 60 items, 30 to calibrate, all agreeing at confidence 1: p = 0.9^30 = 0.042 <= delta, so each split certifies 1.0
    r = L.selective_judging(_confident_table(60, 0), alpha=0.1, delta=0.1, splits=7).iloc[0]
    assert 0.9**30 <= 0.1
    assert (r["certified_splits"], r["certify_rate"], r["kept_splits"]) == (7, 1.0, 7)
    assert (r["threshold_median"], r["threshold_min"], r["threshold_max"]) == (1.0, 1.0, 1.0)
    assert r["certified_coverage"] == r["mean_coverage"] == 1.0 and r["mean_agreement"] == 1.0
    assert r["held_out_guarantee_rate"] == 1.0 and r["note"] == ""


def test_no_split_certifies_and_the_mean_over_splits_is_never_stated_as_coverage():
    # 60 items at confidence 1, 12 wrong: in any calibration half the errors e give P(Bin(30, 0.1) <= e), and
    # the test rejects only for e = 0 (0.042); e >= 1 gives 0.18 > delta. With 12 wrong among 60 a calibration
    # half of 30 holds no wrong item with probability C(48,30)/C(60,30), about 1e-5
    from scipy import stats

    assert stats.binom.cdf(1, 30, 0.1) > 0.1
    r = L.selective_judging(_confident_table(60, 12), alpha=0.1, delta=0.1, splits=20).iloc[0]
    assert r["certified_splits"] == 0 and r["certify_rate"] == 0 and r["kept_splits"] == 0
    assert np.isnan(r["certified_coverage"]) and np.isnan(r["threshold_median"]) and r["mean_coverage"] == 0
    assert r["note"] == "not computable: no threshold passes the test in any of 20 calibration splits: every item " \
                        "is escalated (coverage 0)"


def test_coverage_among_certifying_splits_is_the_mean_over_all_divided_by_their_share():
    df = S.simulate_repeated(S.RepeatedJudgeDesign(n_items=300, samples=5), 2)
    r = L.selective_judging(df, alpha=0.1, delta=0.1, splits=30).iloc[0]
    k = r["certified_splits"]
    assert 0 < k <= 30 and r["certify_rate"] == k / 30
    assert r["certified_coverage"] == pytest.approx(r["mean_coverage"] * 30 / k)  # uncertified splits keep 0
    assert r["threshold_min"] <= r["threshold_median"] <= r["threshold_max"]
    ic = L.item_confidence(df)
    assert {r["threshold_min"], r["threshold_max"]} <= set(ic["confidence"].round(12))
