"""evallab.metrics._intervals: the thin wrappers return what statsmodels and scipy return, computed in the test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from evallab.errors import EvallabError
from evallab.metrics import _intervals as I


def test_wilson_matches_statsmodels_and_handles_zero():
    assert I.wilson(7, 20, 0.9) == pytest.approx(proportion_confint(7, 20, alpha=0.1, method="wilson"))
    assert I.wilson(0, 12) == pytest.approx(proportion_confint(0, 12, alpha=0.05, method="wilson"))
    assert all(math.isnan(x) for x in I.wilson(0, 0))
    with pytest.raises(EvallabError, match="confidence"):
        I.wilson(1, 2, confidence=95)


def test_mcnemar_exact_and_chi2():
    small = I.mcnemar(3, 9)
    assert small["exact"] and small["pvalue"] == pytest.approx(sm_mcnemar([[0, 3], [9, 0]], exact=True).pvalue)
    # exact binomial by hand: two-sided P(X <= 3 | n = 12, p = 1/2) * 2
    assert small["pvalue"] == pytest.approx(min(1.0, 2 * sps.binom.cdf(3, 12, 0.5)))
    big = I.mcnemar(30, 12)
    assert not big["exact"]
    assert big["pvalue"] == pytest.approx(sm_mcnemar([[0, 30], [12, 0]], exact=False, correction=True).pvalue)
    # chi-square with continuity correction by hand: (|b - c| - 1)^2 / (b + c)
    assert big["statistic"] == pytest.approx((abs(30 - 12) - 1) ** 2 / 42)
    assert I.mcnemar(0, 0)["pvalue"] == 1.0


def test_adjust_pvalues_matches_multipletests():
    p = np.array([0.01, 0.04, 0.03, np.nan, 0.20, 0.005])
    ok = np.isfinite(p)
    for method, sm in (("holm", "holm"), ("bh", "fdr_bh")):
        got = I.adjust_pvalues(p, method)
        assert np.isnan(got[3])
        assert got[ok] == pytest.approx(multipletests(p[ok], method=sm)[1])
    # Holm by hand for the smallest p: 5 tests -> 5 * 0.005
    assert I.adjust_pvalues(p, "holm")[5] == pytest.approx(0.025)
    assert np.array_equal(I.adjust_pvalues(p, "none"), p, equal_nan=True)
    with pytest.raises(EvallabError, match="adjust"):
        I.adjust_pvalues(p, "bonferroni-ish")


def test_adjust_pvalues_skips_statsmodels_forced_collection_and_restores_it(monkeypatch):
    import gc

    calls = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: calls.append(generation) or 0)
    patched = gc.collect
    I.adjust_pvalues([0.01, 0.04], "holm")
    assert calls == []  # statsmodels' Holm branch calls gc.collect() itself: suppressed for the call
    assert gc.collect is patched  # and put back afterwards
    gc.collect()
    assert calls == [2]


def test_ratio_test_greater_exact_path_is_scipy_binomtest():
    num = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0])
    den = np.ones(12)
    ref = sps.binomtest(9, 12, 0.5, alternative="greater").pvalue
    assert I.ratio_test_greater(num, den, 0.5) == pytest.approx(ref)
    # binomial tail by hand: P(X >= 9), X ~ Bin(12, 0.5)
    assert ref == pytest.approx(sum(math.comb(12, k) for k in range(9, 13)) / 2 ** 12)
    assert math.isnan(I.ratio_test_greater([0, 0], [0, 0], 0.5))


def test_ratio_test_greater_clustered_uses_the_ratio_sandwich_se():
    num = np.array([2, 1, 0, 2, 1, 2, 0, 1], float)
    den = np.array([2, 2, 2, 2, 1, 2, 2, 2], float)
    r = num.sum() / den.sum()
    n = len(num)
    se = math.sqrt(n / (n - 1) * sum((x - r * d) ** 2 for x, d in zip(num, den, strict=True))) / den.sum()
    assert I.ratio_test_greater(num, den, 0.3) == pytest.approx(sps.norm.sf((r - 0.3) / se))


def test_bootstrap_sums_matches_scipy_reference():
    num = np.array([2, 1, 0, 2, 2, 1, 1, 0, 2, 2], float)
    den = np.array([2, 2, 1, 2, 2, 2, 1, 2, 2, 2], float)
    lo, hi = I.ratio_interval(num, den, n_resamples=500, confidence=0.9, seed=7)
    ref = sps.bootstrap((num, den), lambda x, y, axis: x.sum(axis) / y.sum(axis), paired=True, vectorized=True,
                        n_resamples=500, confidence_level=0.9, method="percentile",
                        random_state=np.random.default_rng(7))
    assert (lo, hi) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    assert lo <= num.sum() / den.sum() <= hi
    assert all(math.isnan(x) for x in I.bootstrap_sums(np.ones((1, 2)), lambda t: t[..., 0], n_resamples=10))
    with pytest.raises(EvallabError, match="shape"):
        I.bootstrap_sums(np.ones(3), lambda t: t, n_resamples=10)


@pytest.mark.parametrize("counts", [True, False])
def test_bootstrap_sums_is_scipys_bootstrap_exactly_with_or_without_shared_draws(counts):
    rng = np.random.default_rng(11)
    sums = rng.integers(0, 4, (300, 3)).astype(float) if counts else rng.random((300, 3)) * 3

    def stat(t):
        return t[..., 0] / t[..., 1] - t[..., 2] / (t[..., 1] + t[..., 2])
    ref = sps.bootstrap(tuple(sums.T), lambda a, b, c, axis: stat(np.stack([x.sum(axis) for x in (a, b, c)], -1)),
                        paired=True, vectorized=True, n_resamples=250, confidence_level=0.9, method="percentile",
                        random_state=np.random.default_rng(5)).confidence_interval
    alone = I.bootstrap_sums(sums, stat, n_resamples=250, confidence=0.9, seed=5)
    cache = {}
    with I.shared_resamples(cache):
        shared = [I.bootstrap_sums(sums, stat, n_resamples=250, confidence=0.9, seed=5) for _ in range(2)]
    assert alone == shared[0] == shared[1] == (ref.low, ref.high)  # the same draws: equal, not approximately
    assert list(cache) == ([(300, 250, 5)] if counts else [])  # counts draw once and keep how often each is drawn


def test_ratio_interval_one_binary_reply_per_cluster_is_wilson():
    num = [1, 0, 1, 1, 0, 1, 1]
    assert I.ratio_interval(num, [1] * 7) == pytest.approx(proportion_confint(5, 7, method="wilson"))
    assert all(math.isnan(x) for x in I.ratio_interval([0, 0], [0, 0]))


def test_degenerate_bootstrap_falls_back_to_wilson_on_clusters():
    # every item fully correct: a bootstrap would claim [1, 1]; Wilson of 5 of 5 ITEMS (the independent unit) does not
    lo, hi = I.ratio_interval(np.full(5, 2.0), np.full(5, 2.0), n_resamples=100)
    assert (lo, hi) == pytest.approx(proportion_confint(5, 5, method="wilson"))
    assert lo < 1.0


def test_ratio_difference_interval_identical_sides_and_scipy_reference():
    a = np.array([2, 1, 0, 2, 1, 2], float)
    d = np.full(6, 2.0)
    # identical sides: never the point [0, 0]; the bound implied by 0 of 6 clusters differing (Wilson upper bound,
    # statsmodels), each cluster moving the difference by at most 2 of the 12 replies
    u = proportion_confint(0, 6, method="wilson")[1]
    assert I.ratio_difference_interval(a, d, a, d) == pytest.approx((-u * 6 * 2 / 12, u * 6 * 2 / 12))
    # unequal denominators: the largest cluster weight bounds the move (3 of 7 replies here)
    d2 = np.array([1, 3, 1, 1, 1], float)
    a2 = np.array([1, 2, 0, 1, 0], float)
    u5 = proportion_confint(0, 5, method="wilson")[1]
    assert I.ratio_difference_interval(a2, d2, a2, d2) == pytest.approx((-u5 * 5 * 3 / 7, u5 * 5 * 3 / 7))
    b = np.array([1, 1, 0, 2, 0, 1], float)
    lo, hi = I.ratio_difference_interval(a, d, b, d, n_resamples=400, seed=3)
    ref = sps.bootstrap((a, d, b, d), lambda w, x, y, z, axis: w.sum(axis) / x.sum(axis) - y.sum(axis) / z.sum(axis),
                        paired=True, vectorized=True, n_resamples=400, method="percentile",
                        random_state=np.random.default_rng(3))
    assert (lo, hi) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    assert lo <= (a.sum() - b.sum()) / d.sum() <= hi


def test_z_value():
    assert I.z_value(0.95) == pytest.approx(sps.norm.ppf(0.975))


def test_ratio_test_greater_equal_cluster_ratios_do_not_claim_certainty():
    # two items, each with 1 of 2 replies changed: the sandwich standard error is 0. Two items cannot make a
    # 50% flip rate certain against a 5% tolerance: the exact test on the 2 items (1 of 2) is the honest answer.
    p = I.ratio_test_greater([1, 1], [2, 2], 0.05)
    assert p == pytest.approx(sps.binomtest(1, 2, 0.05, alternative="greater").pvalue) == pytest.approx(1 - 0.95 ** 2)
    assert p > 0.05
    assert I.ratio_test_greater([0, 0, 0], [2, 2, 2], 0.05) == 1.0
    many = I.ratio_test_greater(np.ones(40), np.full(40, 2.0), 0.05)  # 40 items, each half changed: clear drift
    assert many == pytest.approx(sps.binomtest(20, 40, 0.05, alternative="greater").pvalue) and many < 1e-6


def test_degenerate_bootstrap_is_nan_and_explained():
    # every cluster has the same ratio of a non-ratio statistic (here: a constant function of the totals), so every
    # resample gives one value: the percentile interval would be [v, v]; bootstrap_sums returns NaN instead
    sums = np.column_stack([np.ones(8), np.full(8, 2.0)])
    assert all(math.isnan(x) for x in I.bootstrap_sums(sums, lambda t: t[..., 0] / t[..., 1], n_resamples=200))
    # a varying statistic keeps its interval (scipy's percentile bootstrap, same seed)
    v = np.column_stack([np.array([0, 1, 1, 2, 0, 2, 1, 1], float), np.full(8, 2.0)])
    lo, hi = I.bootstrap_sums(v, lambda t: t[..., 0] / t[..., 1], n_resamples=200, seed=1)
    ref = sps.bootstrap((v[:, 0], v[:, 1]), lambda a, b, axis: a.sum(axis) / b.sum(axis), paired=True,
                        vectorized=True, n_resamples=200, method="percentile", random_state=np.random.default_rng(1))
    assert (lo, hi) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    note = I.no_interval_note(0.5, float("nan"), float("nan"), units=8)
    assert "every item gives the same value (0.5 in every resample of the 8 items)" in note and "[" not in note
    assert I.no_interval_note(0.5, float("nan"), float("nan"), units=1) == "no interval: a single item"
    assert "n_resamples = 0" in I.no_interval_note(0.5, float("nan"), float("nan"), units=8, n_resamples=0)
    assert I.no_interval_note(0.5, 0.4, 0.6, units=8) == "" and I.no_interval_note(float("nan"), 0, 1, units=8) == ""


def test_gathered_totals_are_scipys_per_resample_sums_bit_for_bit_in_any_block_size():
    """Each column gathered and added along a contiguous row is numpy's pairwise sum over the same values in the
    same order as scipy.stats.bootstrap's vectorised statistic: the same floats, however the resamples are blocked."""
    rng = np.random.default_rng(3)
    for n, k in ((7, 1), (129, 3), (1000, 2)):  # below and above numpy's pairwise-summation block of 128
        sums = rng.normal(size=(n, k)) * 10.0 ** rng.uniform(-3, 3, size=k)
        idx = I._draws(n, 97, seed=n)
        reference = np.stack([sums[i].T.copy().sum(axis=-1) for i in idx])  # one resample at a time
        for block in (1, n * 5 + 1, 2**18):
            assert np.array_equal(I._gathered_totals(sums, idx, block_elements=block), reference)
