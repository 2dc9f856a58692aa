"""Intervals and tests, on the unit that is independent: thin wrappers over statsmodels and scipy.

Every figure evallab reports from several replies per item (both presentation orders, several samples, several
criteria) is a ratio of sums over items; its interval resamples the ITEM (the cluster), never the reply.

- :func:`wilson` — Wilson score interval for k of n independent units (Wilson 1927; statsmodels'
  ``proportion_confint`` formula).
- :func:`ratio_interval` — a proportion built from per-cluster counts: Wilson when every cluster holds at most one
  reply, else a percentile cluster bootstrap of ``sum(num) / sum(den)`` (``scipy.stats.bootstrap``, clusters
  resampled with replacement).
- :func:`bootstrap_sums` — the engine behind it: any statistic of the column totals of per-cluster sums,
  percentile bootstrap over clusters (paired: every column resampled together), vectorised.
- :func:`ratio_difference_interval` — paired difference of two ratios on the same clusters.
- :func:`ratio_interval_method` / :func:`ratio_difference_interval_method` — the same, with the name of the
  method that computed each interval (a Wilson fallback is named as such), for the estimate type
  (:class:`evallab.Results`).
- :func:`no_interval_note` — why an estimate carries no interval (switched off, one unit, or degenerate: an
  interval is never shown as the single point [x, x]).
- :func:`ratio_test_greater` — one-sided test of H0: ratio ≤ threshold with a cluster-robust (sandwich) standard
  error of the ratio estimator (Cochran 1977, §6.4; exact binomial when every cluster holds one reply).
- :func:`item_exact_interval` / :func:`item_exact_test_greater` — a proportion of replies bounded and tested with
  the ITEM as the unit, one method at every count: Clopper–Pearson (beta quantiles) and its dual exact binomial
  test on ``n`` items with ``n · sum(num)/sum(den)`` successes (exact with one reply per item; with several, an item
  counts once — the worst case, where all its replies move together). Monotone in the count, consistent at 0.
- :func:`mcnemar` — McNemar's test on the discordant counts of a paired 2×2 table (statsmodels; exact binomial
  when b + c < 25, chi-square with continuity correction otherwise).
- :func:`adjust_pvalues` — Holm or Benjamini–Hochberg across groups (statsmodels ``multipletests``).

Coverage of each interval at its nominal level is checked by simulation (``make coverage``,
``benchmarks/coverage.py``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as _sm_mcnemar
from statsmodels.stats.multitest import multipletests

from evallab.errors import EvallabError

NAN = float("nan")
#: p-value adjustments accepted by :func:`adjust_pvalues`
ADJUSTMENTS = {"holm": "holm", "bh": "fdr_bh", "none": None}
#: the method of :func:`item_exact_interval` (``evallab._results.CLOPPER_PEARSON`` + the unit)
ITEM_EXACT = "Clopper–Pearson (exact binomial) on items"


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise EvallabError(f"confidence={confidence}; expected a level strictly between 0 and 1 (e.g. 0.95)")


def wilson(k: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes of ``n`` independent units.

    Parameters
    ----------
    k : float
        Successes (rounded to an integer count).
    n : float
        Independent units (rounded to an integer count).
    confidence : float, default 0.95
        Level of the interval, strictly between 0 and 1.

    Returns
    -------
    (low, high) : tuple of float
        Bounds in [0, 1] (proportions); ``(nan, nan)`` when ``n == 0``.

    Raises
    ------
    EvallabError
        ``confidence`` outside (0, 1).

    Notes
    -----
    The same formula as statsmodels ``proportion_confint(method="wilson")`` (checked against it in the tests), with
    the normal quantile computed once per level — estimators call it for every group.

    References
    ----------
    E. B. Wilson (1927), "Probable inference, the law of succession, and statistical inference", JASA 22(158).

    Examples
    --------
    >>> low, high = wilson(8, 10)
    >>> round(low, 3), round(high, 3)
    (0.49, 0.943)
    """
    if n <= 0:
        return NAN, NAN
    k, n = float(round(k)), float(round(n))
    z = z_value(confidence)
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, center - half), min(1.0, center + half)


def bootstrap_sums(sums: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], *, n_resamples: int = 1000,
                   confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(totals)`` over clusters.

    Parameters
    ----------
    sums : array of shape (n_clusters, k)
        Per-cluster sums (e.g. per item: correct replies, parsed replies).
    statistic : callable
        Maps totals of shape (..., k) — the column sums of a resample of clusters — to values of shape (...);
        must be vectorised over the leading axes and may return NaN (such resamples are left out).
    n_resamples : int, default 1000
        Bootstrap resamples (``<= 0``: no interval).
    confidence : float, default 0.95
        Level of the interval, in (0, 1).
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    (low, high) : tuple of float
        In the unit of ``statistic``; ``(nan, nan)`` with fewer than 2 clusters, no resamples or no finite resampled
        value — and when the interval is DEGENERATE: its two bounds are equal (every resample, or more than the
        interval's tails, give one value, e.g. kappa 1 when every unit agrees), so it would read [x, x] and claim a
        certainty the data do not hold. :func:`no_interval_note` words the reason for a table.

    Raises
    ------
    EvallabError
        ``sums`` not two-dimensional, or ``confidence`` outside (0, 1).

    References
    ----------
    B. Efron and R. Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (percentile interval); the
    resamples and interval are those of ``scipy.stats.bootstrap(paired=True, vectorized=True,
    method="percentile")`` with ``random_state=numpy.random.default_rng(seed)``.

    Examples
    --------
    Correct and parsed replies of five items, two replies each; the interval of the accuracy over items (the same
    bounds as ``scipy.stats.bootstrap`` on the two columns):

    >>> import numpy as np
    >>> sums = np.array([[2, 2], [1, 2], [2, 2], [0, 2], [2, 2]])
    >>> bootstrap_sums(sums, lambda t: t[..., 0] / t[..., 1], n_resamples=50)
    (0.3, 1.0)
    """
    _check_confidence(confidence)
    sums = np.asarray(sums, dtype=float)
    if sums.ndim != 2:
        raise EvallabError(f"sums has shape {sums.shape}; expected (n_clusters, k)")
    if len(sums) < 2 or n_resamples <= 0:
        return NAN, NAN
    theta = np.asarray(statistic(_resampled_totals(sums, n_resamples, seed)), dtype=float)
    # the percentile interval of that distribution, as scipy.stats.bootstrap computes it from the same resamples
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", sps.DegenerateDataWarning)
        res = sps.bootstrap((np.arange(len(sums)),), np.mean, n_resamples=0, confidence_level=confidence,
                            method="percentile", bootstrap_result=_Distribution(theta))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(lo) and np.isfinite(hi)):  # some resamples undefined: percentiles of the defined ones
        dist = theta[np.isfinite(theta)]
        if len(dist) == 0:
            return NAN, NAN
        a = (1 - confidence) / 2
        lo, hi = (float(x) for x in np.quantile(dist, [a, 1 - a]))
    if lo == hi:  # degenerate: a point is not an interval
        return NAN, NAN
    return lo, hi


class _Distribution:
    """A bootstrap distribution handed to ``scipy.stats.bootstrap`` (``bootstrap_result``) for its interval."""

    def __init__(self, theta: np.ndarray):
        self.bootstrap_distribution = theta


#: resample draws shared by the intervals of one estimator call or one prepared design (:func:`shared_resamples`)
_DRAWS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("evallab_draws", default=None)
#: the most bytes of cluster indices kept for reuse at once
_DRAWS_LIMIT = 2**28


@contextlib.contextmanager
def shared_resamples(cache: dict | None = None):
    """Within the block, bootstrap intervals over the same number of clusters with the same seed and resamples
    reuse one draw of cluster indices.

    Each draw is the one ``scipy.stats.bootstrap`` would make, so the figures are unchanged: they are only drawn
    once. Estimators wrap their loop over groups in it, with the ``draws`` of their
    :class:`~evallab.metrics._design.PairedDesign` as ``cache`` (kept as long as the design, up to 256 MiB); an
    inner block uses the outer one's draws.

    Parameters
    ----------
    cache : dict, optional
        Where the draws are kept (default: a new dict for the block).

    Examples
    --------
    >>> import numpy as np
    >>> sums = np.array([[2, 2], [1, 2], [2, 2], [0, 2], [2, 2]])
    >>> with shared_resamples():
    ...     a = bootstrap_sums(sums, lambda t: t[..., 0] / t[..., 1], n_resamples=50)
    ...     b = bootstrap_sums(sums, lambda t: t[..., 0], n_resamples=50)
    >>> a == bootstrap_sums(sums, lambda t: t[..., 0] / t[..., 1], n_resamples=50)
    True
    """
    if _DRAWS.get() is not None:
        yield
        return
    token = _DRAWS.set({} if cache is None else cache)
    try:
        yield
    finally:
        _DRAWS.reset(token)


def _draws(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """The cluster indices of ``n_resamples`` resamples of ``n`` clusters: those ``scipy.stats.bootstrap(paired=True,
    random_state=numpy.random.default_rng(seed))`` draws (one ``integers(0, n, (n_resamples, n))`` call)."""
    return np.random.default_rng(seed).integers(0, n, (n_resamples, n))


def _count_blocks(idx: np.ndarray, n: int, block_elements: int = 2**22):
    """How often each of ``n`` clusters is drawn in each row of ``idx`` (shape (n_resamples, n)), yielded as
    ``(first_row, counts)`` blocks of float64 counts of at most ``block_elements`` cells — one ``np.bincount`` per
    block instead of one per resample."""
    rows = max(1, block_elements // max(n, 1))
    for r0 in range(0, len(idx), rows):
        part = idx[r0:r0 + rows]
        flat = (part + (np.arange(len(part)) * n)[:, None]).ravel()
        yield r0, np.bincount(flat, minlength=len(part) * n).reshape(len(part), n).astype(float)


def _draw_counts(n: int, n_resamples: int, seed: int) -> np.ndarray | None:
    """How often each of ``n`` clusters is drawn in each resample of :func:`_draws`, shape (n_resamples, n), as
    float32 (exact: counts are small integers), shared within :func:`shared_resamples`; None outside it or when too
    large to keep."""
    cache = _DRAWS.get()
    if cache is None or 4 * n * n_resamples > _DRAWS_LIMIT:
        return None
    key = (n, n_resamples, seed)
    if key not in cache:
        idx = _draws(n, n_resamples, seed)
        counts = np.empty((n_resamples, n), dtype=np.float32)
        for r0, block in _count_blocks(idx, n):
            counts[r0:r0 + len(block)] = block
        del idx
        while cache and sum(v.nbytes for v in cache.values()) + counts.nbytes > _DRAWS_LIMIT:
            cache.pop(next(iter(cache)))  # oldest first
        cache[key] = counts
    return cache[key]


def _resampled_totals(sums: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Column totals of ``sums`` over each resample of its rows, shape (n_resamples, k). Integer-valued sums
    (counts) are totalled from how often each cluster is drawn when the draw counts are shared — exact, in any
    order (in float32 when every total stays below 2**24, where float32 holds every integer); otherwise every sum
    adds each column's drawn values in the order ``scipy.stats.bootstrap`` adds them (:func:`_gathered_totals`)."""
    n, k = sums.shape
    whole = np.abs(sums).sum(0).max() if n and k else 0.0
    if bool(np.all(sums == np.round(sums))) and whole < 2**52:
        counts = _draw_counts(n, n_resamples, seed)
        if counts is not None:
            if whole * counts.max() < 2**24:  # every partial sum an integer below 2**24: exact in float32
                return (counts @ sums.astype(np.float32)).astype(float)
            return counts.astype(float) @ sums
    return _gathered_totals(sums, _draws(n, n_resamples, seed))


def _gathered_totals(sums: np.ndarray, idx: np.ndarray, block_elements: int = 2**18) -> np.ndarray:
    """Column totals of ``sums`` (n, k) over the rows each resample draws (``idx``, shape (n_resamples, n)), shape
    (n_resamples, k): each column's drawn values gathered into a contiguous row and added along it — numpy's
    pairwise sum over the same values in the same order as ``scipy.stats.bootstrap``'s vectorised statistic
    (``sums[i].T.sum(axis=-1)`` per resample ``i``), so the same floats (a test compares them bit for bit), in
    blocks of at most ``block_elements`` drawn values per column."""
    R, n = idx.shape
    out = np.empty((R, sums.shape[1]))
    columns = [np.ascontiguousarray(sums[:, j]) for j in range(sums.shape[1])]
    rows = max(1, block_elements // max(n, 1))
    for r0 in range(0, R, rows):
        part = idx[r0:r0 + rows]
        for j, col in enumerate(columns):
            out[r0:r0 + len(part), j] = col[part].sum(axis=1)
    return out


def no_interval_note(value: float, low: float, high: float, *, units: int, n_resamples: int = 1000,
                     unit_name: str = "item") -> str:
    """Why an estimate has no interval, as a table ``note`` ("" when it has one or the estimate itself is NaN).

    The reasons, in order: no resamples asked (``n_resamples <= 0``); fewer than two independent ``units``; else
    the interval is degenerate — every resampled ``unit_name`` gives the same value, so a bootstrap (or an
    asymptotic standard error, which is 0 then) cannot bound it, and [x, x] is never shown.

    Parameters
    ----------
    value, low, high : float
        The estimate and its bounds (NaN: none).
    units : int
        Independent units the interval would resample.
    n_resamples : int, default 1000
        Resamples that were asked for.
    unit_name : str, default "item"
        What a unit is, in the sentence.

    Returns
    -------
    str

    Examples
    --------
    >>> nan = float("nan")
    >>> no_interval_note(0.5, nan, nan, units=1)
    'no interval: a single item'
    >>> no_interval_note(0.5, nan, nan, units=40, n_resamples=0)
    'no interval: the bootstrap was switched off (n_resamples = 0)'
    >>> no_interval_note(0.5, 0.3, 0.7, units=40)
    ''
    """
    if not np.isfinite(value) or (np.isfinite(low) and np.isfinite(high)):
        return ""
    if n_resamples <= 0:
        return "no interval: the bootstrap was switched off (n_resamples = 0)"
    if units < 2:
        return f"no interval: a single {unit_name}"
    return (f"no interval: every {unit_name} gives the same value ({value:.3g} in every resample of the {units} "
            f"{unit_name}s), so an interval would collapse to that single value")


def _ratio(t: np.ndarray) -> np.ndarray:
    num, den = t[..., 0], t[..., 1]
    return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def ratio_interval(num: Sequence[float], den: Sequence[float], *, n_resamples: int = 1000,
                   confidence: float = 0.95, seed: int = 0, unit: str = "item") -> tuple[float, float]:
    """``(low, high)`` of :func:`ratio_interval_method` (which also names the method used).

    Parameters
    ----------
    num, den, n_resamples, confidence, seed, unit
        As for :func:`ratio_interval_method`.

    Returns
    -------
    (low, high) : tuple of float
        Bounds of the proportion ``sum(num) / sum(den)``, in [0, 1].

    Examples
    --------
    One reply per item: the Wilson interval of 3 of 4.

    >>> low, high = ratio_interval([1, 0, 1, 1], [1, 1, 1, 1])
    >>> round(low, 3), round(high, 3)
    (0.301, 0.954)
    """
    lo, hi, _ = ratio_interval_method(num, den, n_resamples=n_resamples, confidence=confidence, seed=seed,
                                      unit=unit)
    return lo, hi


def ratio_interval_method(num: Sequence[float], den: Sequence[float], *, n_resamples: int = 1000,
                          confidence: float = 0.95, seed: int = 0, unit: str = "item") -> tuple[float, float, str]:
    """Interval of ``sum(num) / sum(den)`` where each position is one cluster (item, or skill).

    Parameters
    ----------
    num, den : arrays of shape (n_clusters,)
        Per-cluster counts, e.g. correct and parsed replies of one item (both orders, every sample). Clusters with
        ``den == 0`` are left out.
    n_resamples : int, default 1000
        Bootstrap resamples over clusters (``<= 0``: no bootstrap; a Wilson interval needs none).
    confidence : float, default 0.95
        Level of the interval.
    seed : int, default 0
        Seed of the bootstrap.
    unit : str, default "item"
        What a cluster is, for the method's name ("item", "skill").

    Returns
    -------
    (low, high, method) : tuple of (float, float, str)
        Bounds in [0, 1] for a proportion, and the interval's method as a report shows it. When every cluster holds
        at most one binary reply (``den <= 1`` and ``num`` in {0, 1}) the units are independent and the Wilson
        interval of the totals is returned (``"Wilson score"``); otherwise a percentile cluster bootstrap
        (:func:`bootstrap_sums`; ``"item bootstrap (percentile, 1,000 resamples)"``). When every cluster has the same
        ratio the bootstrap would collapse to a point and claim false certainty: the Wilson interval with the
        cluster count as n is returned instead (``"Wilson score on 40 items (every item has the same share)"``).
        ``(nan, nan, "")`` when ``sum(den) == 0`` or the bootstrap is switched off.

    References
    ----------
    Wilson (1927) for independent units (:func:`wilson`); a percentile bootstrap of clusters (Efron and Tibshirani
    1993, ch. 13; Field and Welsh 2007, "Bootstrapping clustered data", JRSS B 69(3)) otherwise.

    Examples
    --------
    >>> ratio_interval_method([2, 1, 2, 0, 2], [2, 2, 2, 2, 2], n_resamples=50)
    (0.3, 1.0, 'item bootstrap (percentile, 50 resamples)')
    >>> low, high, method = ratio_interval_method([1, 0, 1, 1], [1, 1, 1, 1])
    >>> round(low, 3), round(high, 3), method
    (0.301, 0.954, 'Wilson score')
    """
    from evallab._results import WILSON, bootstrap_method

    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    use = den > 0
    num, den = num[use], den[use]
    if den.sum() == 0:
        return NAN, NAN, ""
    if den.max() <= 1 and np.isin(num, (0.0, 1.0)).all():
        return (*wilson(num.sum(), den.sum(), confidence), WILSON)
    if n_resamples <= 0:
        return NAN, NAN, ""
    r = num / den
    if np.allclose(r, r[0]):
        return (*wilson(r[0] * len(r), len(r), confidence),
                f"{WILSON} on {len(r):,} {unit}s (every {unit} has the same share)")
    lo, hi = bootstrap_sums(np.column_stack([num, den]), _ratio, n_resamples=n_resamples, confidence=confidence,
                            seed=seed)
    return lo, hi, bootstrap_method(n_resamples, unit) if np.isfinite(lo) else ""


def _ratio_difference(t: np.ndarray) -> np.ndarray:
    return _ratio(t[..., :2]) - _ratio(t[..., 2:])


def ratio_difference_interval(num1, den1, num0, den0, *, n_resamples: int = 1000, confidence: float = 0.95,
                              seed: int = 0) -> tuple[float, float]:
    """``(low, high)`` of :func:`ratio_difference_interval_method`.

    Parameters
    ----------
    num1, den1, num0, den0, n_resamples, confidence, seed
        As for :func:`ratio_difference_interval_method`.

    Returns
    -------
    (low, high) : tuple of float
        Bounds of the difference of proportions (pp as a fraction, in [−1, 1]).

    Examples
    --------
    >>> low, high = ratio_difference_interval([2, 2, 1], [2, 2, 2], [1, 0, 1], [2, 2, 2], n_resamples=50)
    >>> round(low, 4), round(high, 4)
    (0.0375, 0.8333)
    """
    lo, hi, _ = ratio_difference_interval_method(num1, den1, num0, den0, n_resamples=n_resamples,
                                                 confidence=confidence, seed=seed)
    return lo, hi


def ratio_difference_interval_method(num1, den1, num0, den0, *, n_resamples: int = 1000,
                                     confidence: float = 0.95, seed: int = 0,
                                     unit: str = "item") -> tuple[float, float, str]:
    """Paired interval of ``sum(num1)/sum(den1) − sum(num0)/sum(den0)`` over the same clusters.

    Percentile cluster bootstrap (:func:`bootstrap_sums`, the four columns resampled together).

    When the two sides are identical in every cluster the bootstrap difference is 0 in every resample; instead of
    the point [0, 0], the bound implied by the Wilson interval of the share of clusters that differ (0 of n) is
    returned: a cluster that differs moves the difference by at most ``max(den) / sum(den)``, so
    ``|Δ| ≤ u · n · max(den) / sum(den)`` with ``u`` the Wilson upper bound of 0 of n (the larger of the two sides'
    denominators is used).

    Parameters
    ----------
    num1, den1, num0, den0 : arrays of shape (n_clusters,)
        The same clusters in the same order (e.g. per item: correct and parsed replies of a candidate judge, then
        of a baseline).
    n_resamples : int, default 1000
        Bootstrap resamples over clusters.
    confidence : float, default 0.95
        Level of the interval.
    seed : int, default 0
        Seed of the bootstrap.
    unit : str, default "item"
        What a cluster is, for the method's name.

    Returns
    -------
    (low, high, method) : tuple of (float, float, str)
        Bounds of the difference (a difference of proportions, in [−1, 1]) and the method as a report shows it
        ("paired item bootstrap (percentile, 1,000 resamples)", or for identical sides "bound from the Wilson score
        interval of 0 of 34 items changed"); ``(nan, nan, "")`` when a side has a zero denominator or the bootstrap
        interval is degenerate.

    Examples
    --------
    >>> low, high, method = ratio_difference_interval_method([2, 2, 1], [2, 2, 2], [1, 0, 1], [2, 2, 2],
    ...                                                      n_resamples=50)
    >>> round(low, 4), round(high, 4), method
    (0.0375, 0.8333, 'paired item bootstrap (percentile, 50 resamples)')

    Identical sides on two items: ±(Wilson upper bound of 0 of 2) × 2 × 2 / 4.

    >>> low, high, method = ratio_difference_interval_method([1, 2], [2, 2], [1, 2], [2, 2])
    >>> round(high, 3), method
    (0.658, 'bound from the Wilson score interval of 0 of 2 items changed')
    """
    from evallab._results import WILSON, bootstrap_method

    a = np.column_stack([np.asarray(x, dtype=float) for x in (num1, den1, num0, den0)])
    if a[:, 1].sum() == 0 or a[:, 3].sum() == 0:
        return NAN, NAN, ""
    if np.array_equal(a[:, :2], a[:, 2:]):
        n = int((a[:, 1] > 0).sum())
        if n == 0:
            return NAN, NAN, ""
        u = wilson(0, n, confidence)[1]
        half = min(1.0, u * n * float(a[:, 1].max()) / float(a[:, 1].sum()))
        return -half, half, f"bound from the {WILSON} interval of 0 of {n:,} {unit}s changed"
    lo, hi = bootstrap_sums(a, _ratio_difference, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return lo, hi, bootstrap_method(n_resamples, unit, paired=True) if np.isfinite(lo) else ""


def ratio_test_greater(num: Sequence[float], den: Sequence[float], threshold: float) -> float:
    """One-sided p-value of H0: ``sum(num)/sum(den) <= threshold`` against ``> threshold``.

    With at most one reply per cluster: the exact binomial test (``scipy.stats.binomtest``, alternative
    "greater"). Otherwise a z-test with the cluster-robust standard error of the ratio estimator,
    ``se² = n/(n−1) · Σ (num_i − r·den_i)² / (Σ den_i)²`` over the n clusters. When every cluster has the same ratio
    that standard error is 0 and would claim certainty: the exact binomial test of the ratio on the n clusters is
    used instead (as :func:`ratio_interval` falls back to Wilson).

    Parameters
    ----------
    num, den : arrays of shape (n_clusters,)
        Per-cluster counts as in :func:`ratio_interval`.
    threshold : float
        The proportion of the null hypothesis, in [0, 1].

    Returns
    -------
    float
        The p-value; NaN when nothing was observed.

    References
    ----------
    W. G. Cochran (1977), *Sampling Techniques*, 3rd ed., §6.4 (variance of the ratio estimator).

    Examples
    --------
    8 of 10 independent replies against 0.5 (exact binomial); then 7 of 10 in five items of two replies, where
    r = 0.7, se = 0.2 and z = 1:

    >>> round(ratio_test_greater([1] * 8 + [0] * 2, [1] * 10, 0.5), 4)
    0.0547
    >>> round(ratio_test_greater([2, 1, 2, 0, 2], [2, 2, 2, 2, 2], 0.5), 4)
    0.1587
    """
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    use = den > 0
    num, den = num[use], den[use]
    total = den.sum()
    if total == 0:
        return NAN
    if den.max() <= 1:
        return float(sps.binomtest(int(round(num.sum())), int(round(total)), threshold,
                                   alternative="greater").pvalue)
    r = num.sum() / total
    n = len(den)
    se = float(np.sqrt(n / (n - 1) * np.sum((num - r * den) ** 2)) / total) if n > 1 else 0.0
    if se == 0:  # every cluster has the same ratio: no certainty from n clusters, as in ratio_interval
        if r <= threshold:
            return 1.0
        return float(sps.binomtest(int(round(r * n)), n, threshold, alternative="greater").pvalue)
    return float(sps.norm.sf((r - threshold) / se))



def _item_counts(num: Sequence[float], den: Sequence[float]) -> tuple[float, int]:
    """``(k, n)``: ``n`` items with ``den > 0`` and ``k = n · sum(num) / sum(den)`` (``(nan, 0)`` when none)."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    use = den > 0
    n = int(use.sum())
    if n == 0:
        return NAN, 0
    return float(n * num[use].sum() / den[use].sum()), n


def item_exact_interval(num: Sequence[float], den: Sequence[float], *,
                        confidence: float = 0.95) -> tuple[float, float, str]:
    """Clopper–Pearson interval of ``sum(num) / sum(den)`` with the item (cluster) as the unit, at every count.

    ``n`` = clusters with ``den > 0``, ``k = n · sum(num) / sum(den)`` "successes" (fractional when a cluster holds
    several replies); the bounds are the beta quantiles of Clopper and Pearson (1934): ``low = B(α/2; k, n − k + 1)``
    (0 when k = 0), ``high = B(1 − α/2; k + 1, n − k)`` (1 when k = n), α = 1 − confidence. With one reply per
    cluster this is the exact binomial interval; with several, each cluster counts once, as if all its replies
    moved together (the least information its replies can carry, so never narrower than the truth allows). One
    method whatever the count: the upper bound grows with every reply counted as a success (no switch between
    methods at 0), so a status read from it is monotone in the count.

    Parameters
    ----------
    num, den : arrays of shape (n_clusters,)
        Per-cluster counts (e.g. changed and both-parsed replies of one item).
    confidence : float, default 0.95
        Level of the two-sided interval.

    Returns
    -------
    (low, high, method) : tuple of (float, float, str)
        Bounds in [0, 1] and :data:`ITEM_EXACT`; ``(nan, nan, "")`` when ``sum(den) == 0``.

    References
    ----------
    C. J. Clopper and E. S. Pearson (1934), "The use of confidence or fiducial limits illustrated in the case of the
    binomial", Biometrika 26(4), 404–413.

    Examples
    --------
    1 of 108 independent replies; then 1 changed reply among 54 items of two replies (k = 0.5 of 54 items):

    >>> [round(x, 4) for x in item_exact_interval([1] + [0] * 107, [1] * 108)[:2]]
    [0.0002, 0.0505]
    >>> low, high, method = item_exact_interval([1] + [0] * 53, [2] * 54)
    >>> round(low, 4), round(high, 4), method
    (0.0, 0.0833, 'Clopper–Pearson (exact binomial) on items')
    """
    _check_confidence(confidence)
    k, n = _item_counts(num, den)
    if n == 0:
        return NAN, NAN, ""
    a = (1 - confidence) / 2
    low = 0.0 if k <= 0 else float(sps.beta.ppf(a, k, n - k + 1))
    high = 1.0 if k >= n else float(sps.beta.ppf(1 - a, k + 1, n - k))
    return low, high, ITEM_EXACT


def item_exact_test_greater(num: Sequence[float], den: Sequence[float], threshold: float) -> float:
    """One-sided p-value of H0 ``sum(num)/sum(den) <= threshold``, dual to :func:`item_exact_interval`.

    ``P(X ≥ k)`` for ``X ~ Binomial(n, threshold)`` with ``k``, ``n`` as in :func:`item_exact_interval`, written as
    the regularised incomplete beta ``I_threshold(k, n − k + 1)`` so a fractional ``k`` is allowed; 1 when k = 0.
    With one reply per item it equals ``scipy.stats.binomtest(k, n, threshold, alternative="greater")``. It falls
    as ``k`` grows, so a status read from it never improves when a success is added.

    Parameters
    ----------
    num, den : arrays of shape (n_clusters,)
        Per-cluster counts.
    threshold : float
        The proportion of the null hypothesis, in [0, 1].

    Returns
    -------
    float
        The p-value; NaN when nothing was observed.

    Examples
    --------
    >>> round(item_exact_test_greater([1] * 8 + [0] * 2, [1] * 10, 0.5), 4)
    0.0547
    >>> item_exact_test_greater([0] * 54, [2] * 54, 0.05)
    1.0
    """
    k, n = _item_counts(num, den)
    if n == 0:
        return NAN
    if k <= 0:
        return 1.0
    return float(sps.beta.cdf(threshold, k, n - k + 1))


def mcnemar(b: int, c: int) -> dict:
    """McNemar's test of ``b`` vs ``c``, the discordant cells of a paired 2×2 table (one pair per independent unit).

    Parameters
    ----------
    b, c : int
        The discordant counts (units that changed one way, and the other).

    Returns
    -------
    dict
        ``{"b", "c", "statistic", "pvalue", "exact"}``: the exact binomial test when ``b + c < 25`` (statsmodels
        ``mcnemar(exact=True)``; ``statistic`` is min(b, c)), else chi-square with continuity correction.
        ``pvalue`` (a p-value) is 1.0 when ``b + c == 0``.

    References
    ----------
    Q. McNemar (1947), "Note on the sampling error of the difference between correlated proportions or
    percentages", Psychometrika 12(2).

    Examples
    --------
    2 of 11 discordant pairs one way: the two-sided binomial p-value of 2 of 11 at 0.5.

    >>> r = mcnemar(9, 2)
    >>> r["statistic"], round(r["pvalue"], 4), r["exact"]
    (2.0, 0.0654, True)
    """
    b, c = int(b), int(c)
    if b + c == 0:
        return {"b": b, "c": c, "statistic": 0.0, "pvalue": 1.0, "exact": True}
    exact = b + c < 25
    r = _sm_mcnemar([[0, b], [c, 0]], exact=exact, correction=True)
    return {"b": b, "c": c, "statistic": float(r.statistic), "pvalue": float(r.pvalue), "exact": exact}


def adjust_pvalues(pvalues: Sequence[float], method: str = "holm") -> np.ndarray:
    """p-values adjusted for multiplicity across groups (statsmodels ``multipletests``).

    Parameters
    ----------
    pvalues : sequence of float
        One p-value per group; NaN entries stay NaN and are not counted as tests.
    method : {"holm", "bh", "none"}, default "holm"
        ``"holm"`` (family-wise error), ``"bh"`` (Benjamini–Hochberg, false discovery rate) or ``"none"``.

    Returns
    -------
    ndarray of float
        Adjusted p-values, in the order given.

    Raises
    ------
    EvallabError
        An unknown ``method``.

    References
    ----------
    S. Holm (1979), "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6(2);
    Y. Benjamini and Y. Hochberg (1995), "Controlling the false discovery rate", JRSS B 57(1).

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "bh").round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    if method not in ADJUSTMENTS:
        raise EvallabError(f"adjust={method!r}; expected one of {sorted(ADJUSTMENTS)}")
    p = np.asarray(pvalues, dtype=float)
    out = p.copy()
    ok = np.isfinite(p)
    if ADJUSTMENTS[method] is None or not ok.any():
        return out
    with _no_forced_collection():
        out[ok] = multipletests(p[ok], method=ADJUSTMENTS[method])[1]
    return out


@contextlib.contextmanager
def _no_forced_collection():
    """statsmodels' Holm branch of ``multipletests`` ends with ``gc.collect()`` (statsmodels/stats/multitest.py): a
    full collection of the whole heap, 0.2–0.4 s of CPU in a report kernel holding DataFrames and figures, paid on
    every call (six calls in report 05). The result does not depend on it, so the call runs with ``gc.collect`` a
    no-op; the collector itself stays on (automatic collections run as usual)."""
    import gc

    collect = gc.collect
    gc.collect = lambda generation=2: 0
    try:
        yield
    finally:
        gc.collect = collect


@functools.lru_cache(maxsize=32)
def z_value(confidence: float) -> float:
    """The two-sided normal quantile of ``confidence``.

    Parameters
    ----------
    confidence : float
        Level, strictly between 0 and 1.

    Returns
    -------
    float
        ``scipy.stats.norm.ppf(0.5 + confidence / 2)``.

    Raises
    ------
    EvallabError
        ``confidence`` outside (0, 1).

    Examples
    --------
    >>> round(z_value(0.95), 2)
    1.96
    """
    _check_confidence(confidence)
    return float(sps.norm.ppf(0.5 + confidence / 2))
