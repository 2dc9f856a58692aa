"""Thin wrappers return what the libraries return."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from evallab.metrics import intervals as stats


def test_wilson_matches_statsmodels_and_handles_zero():
    assert stats.wilson(7, 20, 0.9) == pytest.approx(proportion_confint(7, 20, alpha=0.1, method="wilson"))
    assert all(math.isnan(x) for x in stats.wilson(0, 0))


def test_mcnemar_exact_and_chi2():
    assert stats.mcnemar(3, 9)["pvalue"] == pytest.approx(sm_mcnemar([[0, 3], [9, 0]], exact=True).pvalue)
    big = stats.mcnemar(30, 12)
    assert not big["exact"]
    assert big["pvalue"] == pytest.approx(sm_mcnemar([[0, 30], [12, 0]], exact=False, correction=True).pvalue)
    assert stats.mcnemar(0, 0)["pvalue"] == 1.0


def test_bootstrap_items_matches_scipy():
    x = np.array([0.1, 0.5, 0.2, 0.9, 0.4, 0.3, 0.8])
    lo, hi = stats.bootstrap_items(lambda idx: float(np.median(x[idx])), len(x), n_resamples=300, seed=3)
    ref = sps.bootstrap((np.arange(len(x)),), lambda i: float(np.median(x[np.asarray(i, int)])), vectorized=False,
                        n_resamples=300, method="percentile", random_state=np.random.default_rng(3))
    assert (lo, hi) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))


def test_degenerate_bootstrap_falls_back_to_wilson():
    # every item fully correct: a bootstrap would claim [1, 1]; Wilson of 10 of 10 does not
    lo, hi = stats.bootstrap_ratio(np.full(5, 2.0), np.full(5, 2.0), n_resamples=100)
    assert (lo, hi) == pytest.approx(proportion_confint(10, 10, method="wilson"))
    assert lo < 1.0
