"""Issue 28, the rating-scale section of ``make coverage``, reduced: the simulated raters' population values make
sense (the judge's bias shows, the humans' ICC(2,1) equals their interval alpha and quadratic kappa asymptotically)
and 60 draws of the item-level intervals cover them in a wide band (the full check: 400 draws, [0.93, 0.97])."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import coverage as C


@pytest.fixture(scope="module")
def truth():
    return C.scale_truth(items_per_system=4000)


def test_the_population_values(truth):
    assert 0.25 < truth["judge:bias"] < 0.45  # latent bias 0.4, cut into 1–5 steps
    assert truth["humans:icc2_1"] == pytest.approx(truth["humans:alpha_interval"], abs=0.002)
    assert truth["humans:icc2_1"] == pytest.approx(truth["humans:kappa_quadratic"], abs=0.002)
    assert truth["judge:sys_spearman"] < 1  # the judge's own preference per system reorders them


def test_reduced_coverage_of_the_scale_intervals(truth):
    keys = list(C._scale_estimate(C.simulate_ratings(0), 0, 0))
    _, arr = C._scale_chunk((0, 60, 200, 10))
    for k in ("judge:spearman", "judge:bias", "judge:kappa_quadratic", "humans:alpha_ordinal", "humans:icc2_k"):
        j = keys.index(k)
        lo, hi = arr[:, j, 1], arr[:, j, 2]
        cover = np.mean((lo <= truth[k]) & (truth[k] <= hi))
        assert 0.85 <= cover <= 1.0, (k, cover)
