"""Coverage by simulation, reduced (the full check is ``make coverage``): the simulator's tables are tidy, its true
values are what the estimators converge to, and a few key intervals cover the truth at about their nominal 95%."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks import coverage as C
from evallab import simulation as S
from evallab import verdicts as V
from evallab.metrics import _agreement as A
from evallab.metrics import _drift as D
from evallab.metrics import _inflation as I
from evallab.metrics import _position as P

REDUCED_BAND = (0.88, 0.99)


def test_simulated_tables_follow_the_tidy_schema():
    d = S.PairwiseDesign(n_items=20, samples=2)
    df = S.simulate_pairwise(d, [S.PairwiseJudge(tie_rate=0.1, unparsed_rate=0.2)], 0)
    pd.testing.assert_frame_equal(V.coerce(df), df)
    assert len(df) == 20 * 2 * 2 and df["verdict"].isna().any()
    b, c = S.simulate_drift(d, S.PairwiseJudge(name="b"), S.Drift(), 1)
    pd.testing.assert_frame_equal(V.coerce(b), b)
    pd.testing.assert_frame_equal(V.coerce(c), c)
    pw = S.simulate_pointwise(S.PointwiseDesign(n_items=10), S.PointwiseJudge(unparsed_rate=0.1), 2)
    pd.testing.assert_frame_equal(V.coerce(pw), pw)
    assert set(pw["verdict"].dropna()) <= {"pass", "fail"} and set(pw["anchor_set"]) == {"balanced", "pass-only"}


def test_same_seed_same_table():
    d = S.PairwiseDesign(n_items=30)
    j = S.PairwiseJudge(unparsed_rate=0.1)
    pd.testing.assert_frame_equal(S.simulate_pairwise(d, [j], 7), S.simulate_pairwise(d, [j], 7))


def test_truth_is_the_limit_of_the_estimators():
    """On one very large dataset every point estimate lies within Monte-Carlo error of the computed truth."""
    d = S.PairwiseDesign(n_items=8000, samples=1, p_gold_1=0.6)
    j = S.PairwiseJudge(skill=1.2, position_bias=0.5, tie_rate=0.05, unparsed_rate=0.03)
    df = S.simulate_pairwise(d, [j], 11)
    kw = dict(n_resamples=0)
    ps = A.pairwise_statistics(df, ["judge"], **kw).iloc[0]
    pb = P.position_bias(df, ["judge"], **kw).iloc[0]
    tol = 0.025  # about 4 standard errors at 8,000 items
    assert ps.acc_ab == pytest.approx(S.true_accuracy(d, j, "ab"), abs=tol)
    assert ps.acc == pytest.approx(S.true_acc_mean_of_orders(d, j), abs=tol)
    assert ps.position_consistency == pytest.approx(S.true_position_consistency(d, j), abs=tol)
    assert pb.first_slot_preference == pytest.approx(S.true_first_slot_preference(d, j), abs=tol)
    assert A.cohen_kappa_vs_gold(df, ["judge"], **kw).kappa[0] == pytest.approx(S.true_kappa_vs_gold(d, j), abs=0.04)
    js = [S.PairwiseJudge(name="A", skill=1.5, position_bias=0.3),
          S.PairwiseJudge(name="B", skill=0.8, position_bias=0.8, tie_rate=0.1)]
    dj = S.simulate_pairwise(S.PairwiseDesign(n_items=5000, samples=1), js, 12)
    assert A.fleiss_kappa(dj, **kw).kappa[0] == pytest.approx(S.true_fleiss_kappa(d, js), abs=0.04)
    ja = A.judge_agreement(dj, judges=["A", "B"], **kw)
    assert ja.loc[ja["judge_a"] != ja["judge_b"], "kappa"].iloc[0] == pytest.approx(
        S.true_judge_kappa(d, js[0], js[1]), abs=0.04)
    dr = S.Drift(unparsed_rate=0.02)
    o = D.compare(*S.simulate_drift(d, j, dr, 13), by=(), **kw).overall.iloc[0]
    t = S.true_drift(d, j, dr)
    assert o.flip_rate == pytest.approx(t["flip_rate"], abs=tol)
    assert o.delta_accuracy == pytest.approx(t["delta_accuracy"], abs=tol)
    pdz = S.PointwiseDesign(n_items=6000, samples=1)
    pj = S.PointwiseJudge()
    it = I.inflation_table(S.simulate_pointwise(pdz, pj, 14), **kw).set_index("anchor_set").loc["pass-only"]
    ti = S.true_inflation_deltas(pdz, pj, "pass-only")
    assert it.delta_false_pass == pytest.approx(ti["delta_false_pass"], abs=tol)
    assert it.delta_true_pass == pytest.approx(ti["delta_true_pass"], abs=tol)


def test_alpha_and_fleiss_share_their_limit_without_missing_values():
    d = S.PairwiseDesign()
    js = [S.PairwiseJudge(name="A"), S.PairwiseJudge(name="B", skill=0.3, tie_rate=0.2)]
    assert S.true_krippendorff_alpha(d, js) == pytest.approx(S.true_fleiss_kappa(d, js), abs=1e-12)


def test_skill_for_accuracy_inverts_the_marginal_accuracy():
    s = S.skill_for_accuracy(0.8, item_sd=1.0)
    d = S.PairwiseDesign(p_gold_1=0.5)
    assert S.true_accuracy(d, S.PairwiseJudge(skill=s)) == pytest.approx(0.8, abs=1e-9)


@pytest.fixture(scope="module")
def reduced():
    rows = C.run(["one-reply", "judges", "repetition"], reps=150, n_resamples=300, jobs=2, chunk=25)
    return {(r["scenario"], r["key"]): r for r in rows}


@pytest.mark.parametrize("key", [("one-reply", "accuracy"), ("one-reply", "kappa_gold"),
                                 ("judges", "judge_kappa"), ("judges", "fleiss"), ("judges", "alpha"),
                                 ("repetition", "repetition_stability"), ("repetition", "unanimity")],
                         ids=lambda k: "-".join(k))
def test_reduced_coverage(reduced, key):
    r = reduced[key]
    assert r["nan"] == 0
    assert REDUCED_BAND[0] <= r["coverage"] <= REDUCED_BAND[1], r
    assert np.isfinite(r["mean_width"]) and r["mean_width"] > 0


@pytest.fixture(scope="module")
def reduced_corrected():
    rows = C.run(["corrected", "corrected-difference"], reps=150, n_resamples=100, jobs=2, chunk=25)
    return {(r["scenario"], r["key"]): r for r in rows}


@pytest.mark.parametrize("key", [("corrected", "ppi"), ("corrected", "rg"), ("corrected-difference", "ppi")],
                         ids=lambda k: "-".join(k))
def test_reduced_coverage_of_corrected_rates(reduced_corrected, key):
    r = reduced_corrected[key]
    assert r["nan"] == 0 and not r["reference"]
    assert REDUCED_BAND[0] <= r["coverage"] <= REDUCED_BAND[1], r


def test_the_judge_only_interval_misses_the_gold_rate(reduced_corrected):
    """Shown beside the corrected ones, not gated: a lenient judge's own interval covers its own rate, not the truth."""
    r = reduced_corrected[("corrected", "judge_only")]
    assert r["reference"] and r["coverage"] < 0.2
    assert "reference, not gated" in C.line(r)


def test_a_line_that_is_never_computable_warns_nothing():
    """An estimator that gives no figure in any replicate (every value NaN): its line says why, with NaN means —
    not numpy's empty-slice RuntimeWarning (issue 26 leftovers: coverage.py's nanmean)."""
    import warnings

    s = C.Scenario("never", simulate=lambda seed: None, estimate=lambda d, seed, b: {}, truth={"k": 0.5, "j": 0.5},
                   labels={"k": "never computable", "j": "computable"}, notes={"k": "no gold labels"})
    arr = np.full((4, 2, 3), np.nan)
    arr[:, 1] = [0.5, 0.4, 0.6]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k, j = C._summarise(s, [(0, arr)])
    assert np.isnan(k["mean_estimate"]) and np.isnan(k["mean_width"]) and k["not_computable"] == "no gold labels"
    assert k["nan"] == 4 and k["coverage"] == 0.0
    assert j["mean_estimate"] == pytest.approx(0.5) and j["mean_width"] == pytest.approx(0.2) and j["coverage"] == 1
