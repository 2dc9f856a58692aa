"""Issue 28 item 4, the score-study section of ``make coverage``, reduced: the simulated population values make sense
(the prompt's latent leniency shows as a positive shift, judge B's negative bias as a negative drift, the samples'
ICC(1) equals the ratio of between-item to total variance computed here) and 20 draws of the intervals cover them in
a wide band (the full check: 1,000 draws, [0.93, 0.97])."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import coverage_score_studies as S


@pytest.fixture(scope="module")
def truth():
    return S.truth(n=20_000)


def test_the_population_values(truth):
    assert 0.2 < truth["shift:shift"] < 0.4 and truth["shift:d_spearman"] < 0  # lenient and noisier prompt
    assert -0.4 < truth["drift:shift"] < -0.15
    assert truth["cut:cut"] == 3.0 and 0.5 < truth["cut:auc"] < 1
    d = S.simulate(7, 20_000)["samples"]
    between = np.var(d.mean(1)) - np.mean(np.var(d, axis=1, ddof=1)) / d.shape[1]
    assert truth["stability:icc1"] == pytest.approx(between / (between + np.mean(np.var(d, axis=1, ddof=1))),
                                                    abs=0.02)


def test_reduced_coverage_of_the_score_study_intervals(truth):
    _, arr = S._chunk((0, 20, 100, 10))
    keys = list(S.STUDY_LABELS)
    for k in ("shift:shift", "shift:d_spearman", "drift:kappa_quadratic", "cut:auc", "stability:within_sd"):
        j = keys.index(k)
        cover = np.mean((arr[:, j, 1] <= truth[k]) & (truth[k] <= arr[:, j, 2]))
        assert 0.75 <= cover <= 1.0, (k, cover)
