"""Intervals and tests: thin wrappers over statsmodels and scipy.

- :func:`wilson` — Wilson score interval for a proportion (statsmodels ``proportion_confint``; Wilson 1927).
- :func:`bootstrap_ratio` — percentile bootstrap over items of sum(x)/sum(y) (``scipy.stats.bootstrap``,
  paired, vectorised): accuracy over a varying number of parsed replies per item.
- :func:`bootstrap_paired` — percentile bootstrap over items of a vectorised statistic of several per-item arrays
  resampled jointly (``scipy.stats.bootstrap``, paired); :func:`bootstrap_ratio_difference` — its use for the
  paired difference of two ratios (e.g. accuracy of a candidate minus a baseline on the same items).
- :func:`bootstrap_items` — percentile bootstrap over items of any statistic of resampled item indices.
- :func:`mcnemar` — McNemar's test on the discordant counts of a paired 2×2 table (statsmodels; exact binomial
  when b + c < 25, chi-square with continuity correction otherwise).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as _sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

NAN = float("nan")


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes of ``n``; ``(nan, nan)`` when ``n == 0``. Bounds in [0, 1]."""
    if n <= 0:
        return NAN, NAN
    lo, hi = proportion_confint(int(k), int(n), alpha=1 - confidence, method="wilson")
    return float(lo), float(hi)


def _ci(res) -> tuple[float, float]:
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def bootstrap_ratio(num: np.ndarray, den: np.ndarray, *, n_resamples: int = 1000, confidence: float = 0.95,
                    seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``sum(num) / sum(den)``, resampling items (rows) with replacement.

    Parameters
    ----------
    num, den : arrays of shape (n_items,)
        Per-item numerator (e.g. correct replies, 0..2) and denominator (e.g. parsed replies, 0..2).

    Returns
    -------
    (low, high) : floats; ``(nan, nan)`` with fewer than 2 items or a zero denominator. When every item has the
    same ratio (e.g. all replies correct) the bootstrap distribution is a single point, which would claim false
    certainty; the Wilson interval of the pooled counts is returned instead.
    """
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    if len(num) < 2 or den.sum() == 0 or n_resamples <= 0:
        return NAN, NAN
    if np.all(num * den.sum() == den * num.sum()):  # degenerate bootstrap: fall back to Wilson
        return wilson(int(round(num.sum())), int(round(den.sum())), confidence)

    def stat(x, y, axis=-1):
        s = y.sum(axis=axis)
        return np.where(s > 0, x.sum(axis=axis) / np.where(s > 0, s, 1), np.nan)

    return bootstrap_paired((num, den), stat, n_resamples=n_resamples, confidence=confidence, seed=seed)


def bootstrap_paired(arrays, statistic: Callable, *, n_resamples: int = 1000, confidence: float = 0.95,
                     seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(*arrays, axis=-1)``, resampling items (rows of every array
    jointly) with replacement — ``scipy.stats.bootstrap(paired=True, vectorized=True)``.

    Parameters
    ----------
    arrays : sequence of arrays of shape (n_items,)
    statistic : vectorised function of the arrays and ``axis``; may return NaN for some resamples.

    Returns
    -------
    (low, high) : floats; percentiles of the finite resampled values when some are undefined; ``(nan, nan)``
    with fewer than 2 items, ``n_resamples <= 0`` or no finite resample.
    """
    arrays = tuple(np.asarray(a, dtype=float) for a in arrays)
    if len(arrays[0]) < 2 or n_resamples <= 0:
        return NAN, NAN
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", sps.DegenerateDataWarning)
        res = sps.bootstrap(arrays, statistic, paired=True, vectorized=True, n_resamples=n_resamples,
                            confidence_level=confidence, method="percentile",
                            random_state=np.random.default_rng(seed))
    lo, hi = _ci(res)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        dist = np.asarray(res.bootstrap_distribution, dtype=float)
        dist = dist[np.isfinite(dist)]
        if len(dist) == 0:
            return NAN, NAN
        a = (1 - confidence) / 2
        lo, hi = (float(x) for x in np.quantile(dist, [a, 1 - a]))
    return lo, hi


def _ratio_difference(n1, d1, n0, d0, axis=-1):
    return n1.sum(axis) / d1.sum(axis) - n0.sum(axis) / d0.sum(axis)


def bootstrap_ratio_difference(num1, den1, num0, den0, *, n_resamples: int = 1000, confidence: float = 0.95,
                               seed: int = 0) -> tuple[float, float]:
    """Paired percentile bootstrap over items of ``sum(num1)/sum(den1) − sum(num0)/sum(den0)``.

    All four arrays have shape (n_items,) and hold the same items in the same order (e.g. correct and parsed
    replies of a candidate judge, then of a baseline). See :func:`bootstrap_paired`.
    """
    return bootstrap_paired((num1, den1, num0, den0), _ratio_difference, n_resamples=n_resamples,
                            confidence=confidence, seed=seed)


def bootstrap_items(statistic: Callable[[np.ndarray], float], n_items: int, *, n_resamples: int = 1000,
                    confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(idx)`` over resampled item indices.

    ``statistic`` receives an int array of shape (n_items,) — item indices drawn with replacement — and returns a
    float (NaN allowed: such resamples are ignored by taking percentiles of the finite values).
    Uses ``scipy.stats.bootstrap`` (percentile method) on the index vector.
    """
    if n_items < 2 or n_resamples <= 0:
        return NAN, NAN
    idx = np.arange(n_items)

    def stat(i):
        return statistic(np.asarray(i, dtype=int))

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", sps.DegenerateDataWarning)
        res = sps.bootstrap((idx,), stat, vectorized=False, n_resamples=n_resamples, confidence_level=confidence,
                            method="percentile", random_state=np.random.default_rng(seed))
    lo, hi = _ci(res)
    if np.isnan(lo) or np.isnan(hi):  # some resamples undefined: percentiles of the defined ones
        dist = np.asarray(res.bootstrap_distribution, dtype=float)
        dist = dist[np.isfinite(dist)]
        if len(dist) == 0:
            return NAN, NAN
        a = (1 - confidence) / 2
        lo, hi = np.quantile(dist, [a, 1 - a])
    return float(lo), float(hi)


def mcnemar(b: int, c: int) -> dict:
    """McNemar's test of ``b`` vs ``c``, the discordant cells of a paired 2×2 table.

    Returns ``{"b", "c", "statistic", "pvalue", "exact"}``; the exact binomial test when ``b + c < 25``
    (statsmodels ``mcnemar(exact=True)``), else chi-square with continuity correction. ``pvalue`` is 1.0 when
    ``b + c == 0``.
    """
    b, c = int(b), int(c)
    if b + c == 0:
        return {"b": b, "c": c, "statistic": 0.0, "pvalue": 1.0, "exact": True}
    exact = b + c < 25
    r = _sm_mcnemar([[0, b], [c, 0]], exact=exact, correction=True)
    return {"b": b, "c": c, "statistic": float(r.statistic), "pvalue": float(r.pvalue), "exact": exact}
