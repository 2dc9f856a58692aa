"""The power planner: how many gold labels, items or samples the next round needs. Pure: numbers in, dicts out.

- :func:`gold_for_half_width` — gold labels needed for a target half-width of the pass or win rate, with the gold
  labels alone and with the judge's verdicts on the other items (PPI++), given the judge's measured sensitivity
  and specificity (or its correlation with gold).
- :func:`items_for_flip_rate` — items needed for the drift gate's one-sided test to flag a judge whose flip rate is
  ``flip_rate`` when the tolerance is ``tolerance``, at a given power.
- :func:`items_for_accuracy_change` — items (judged by both judges) needed for McNemar's test to detect an accuracy
  change of ``delta`` given the share of items on which the two judges' correctness differs.
- :func:`samples_for_stable_majority` — samples per item needed for the majority verdict of the samples to come out
  the same when the whole round is repeated, given the measured repetition flip rate.

Every planned figure is checked by simulation in ``make coverage`` (benchmarks/coverage.py, "planner checks"):
the achieved power, half-width or stability at the planned size lies within ±3 points of the plan.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from evallab._results import Measure, Results, results
from evallab.errors import EvallabError
from evallab.metrics import _intervals as intervals
from evallab.metrics._design import not_computable


def _prob(name: str, x: float, *, open_: bool = True) -> float:
    x = float(x)
    ok = 0 < x < 1 if open_ else 0 <= x <= 1
    if not ok:
        raise EvallabError(f"{name}={x}; expected a probability {'strictly ' if open_ else ''}between 0 and 1")
    return x


def judge_correlation(rate: float, sensitivity: float, specificity: float) -> float:
    """Correlation between the gold label and a binary judge verdict with the given sensitivity and specificity.

    ``ρ = π(Se − q) / sqrt(π(1−π) q(1−q))`` with ``q = π·Se + (1−π)(1−Sp)`` the judge's pass rate (the covariance
    of two indicators, P(Y = 1, pass) − π·q).

    Parameters
    ----------
    rate : float
        π = P(Y = 1), the gold pass rate, in (0, 1).
    sensitivity : float
        Se = P(pass | Y = 1), in [0, 1].
    specificity : float
        Sp = P(fail | Y = 0), in [0, 1].

    Returns
    -------
    float
        ρ, a coefficient in [−1, 1]; 0 when the judge always gives one verdict.

    Raises
    ------
    EvallabError
        A probability out of range.

    Examples
    --------
    π = 0.5 and Se = Sp = 0.9 give q = 0.5 and ρ = 0.5 · 0.4 / 0.25:

    >>> round(judge_correlation(0.5, 0.9, 0.9), 3)
    0.8
    """
    pi, se, sp = _prob("rate", rate), _prob("sensitivity", sensitivity, open_=False), _prob(
        "specificity", specificity, open_=False)
    q = pi * se + (1 - pi) * (1 - sp)
    if q in (0.0, 1.0):
        return 0.0
    return float(pi * (se - q) / math.sqrt(pi * (1 - pi) * q * (1 - q)))


def ppi_variance_factor(n: int, n_unlabeled: float, rho: float) -> float:
    """Var(PPI++ at the optimal λ) / Var(gold-only mean) for ``n`` gold and ``n_unlabeled`` judged-only items.

    ``1 − ρ²/(1 + n/N)``: the variance ``λ²σ_f²/N + Var(Y − λf)/n`` minimised at ``λ* = Cov(Y, f)/((1 + n/N)σ_f²)``.

    Parameters
    ----------
    n : int
        Gold-labelled items.
    n_unlabeled : float
        Judged-only items N (``inf``: unlimited; ``<= 0``: none, factor 1).
    rho : float
        The judge's correlation with gold (:func:`judge_correlation`).

    Returns
    -------
    float
        A ratio of variances in (0, 1].

    References
    ----------
    A. N. Angelopoulos, J. C. Duchi and T. Zrnic (2023), "PPI++: Efficient Prediction-Powered Inference",
    arXiv:2311.01453, §2.

    Examples
    --------
    >>> round(ppi_variance_factor(100, 900, 0.8), 3)  # 1 - 0.64 / (1 + 1/9)
    0.424
    """
    if not np.isfinite(n_unlabeled):
        return 1.0 - rho**2
    if n_unlabeled <= 0:
        return 1.0
    return 1.0 - rho**2 / (1.0 + n / n_unlabeled)


def gold_for_half_width(half_width: float, *, rate: float, sensitivity: float | None = None,
                        specificity: float | None = None, correlation: float | None = None,
                        items: int | None = None, confidence: float = 0.95) -> dict:
    """Gold labels needed for a ``confidence`` interval of half-width ``half_width`` on a pass or win rate.

    Parameters
    ----------
    half_width : target half-width, a proportion in (0, 1) (0.03 = ±3 points).
    rate : the expected gold rate π (a pilot estimate; 0.5 is the worst case).
    sensitivity, specificity : the judge's measured Se and Sp on gold (both, or ``correlation``).
    correlation : the judge's correlation ρ with gold, instead of Se/Sp.
    items : the items the judge grades in all (gold ones included); ``None`` = unlimited judged-only items.
    confidence : level of the interval.

    Returns
    -------
    dict: ``gold_only`` — ``ceil(z²·π(1−π)/h²)`` (the normal-approximation interval of a proportion; Wald 1943);
    ``with_judge`` — the smallest ``n`` with ``z·sqrt(π(1−π)/n · (1 − ρ²/(1 + n/(items − n)))) ≤ h``
    (:func:`ppi_variance_factor`); NaN when no n ≤ ``items`` reaches the target (then more items or a better
    judge are needed); ``correlation`` ρ; ``saving`` = 1 − with_judge/gold_only; ``half_width_gold_only`` and
    ``half_width_with_judge`` at those sizes.

    Raises
    ------
    EvallabError
        A value out of range, or neither Se/Sp nor ``correlation``.

    References
    ----------
    A. N. Angelopoulos, J. C. Duchi and T. Zrnic (2023), "PPI++: Efficient Prediction-Powered Inference",
    arXiv:2311.01453; A. Wald (1943), Trans. AMS 54(3) (the normal-approximation interval).

    Examples
    --------
    ±5 points at π = 0.5: 1.96² · 0.25 / 0.05² = 384.1 → 385 gold labels alone; a judge with ρ = 0.8 and unlimited
    judged items cuts the variance to 1 − 0.64 = 0.36 of it, 139 gold labels:

    >>> plan = gold_for_half_width(0.05, rate=0.5, correlation=0.8)
    >>> plan["gold_only"], plan["with_judge"], round(plan["saving"], 3)
    (385, 139, 0.639)
    """
    h, pi = _prob("half_width", half_width), _prob("rate", rate)
    z = intervals.z_value(confidence)
    if correlation is None:
        if sensitivity is None or specificity is None:
            raise EvallabError("give the judge's sensitivity and specificity, or its correlation with gold")
        rho = judge_correlation(pi, sensitivity, specificity)
    else:
        rho = float(correlation)
        if not -1 <= rho <= 1:
            raise EvallabError(f"correlation={rho}; expected a value in [-1, 1]")
    var1 = pi * (1 - pi)
    n0 = math.ceil(z * z * var1 / (h * h))
    total = math.inf if items is None else int(items)
    if total != math.inf and total < 2:
        raise EvallabError(f"items={items}; expected at least 2")
    n_max = n0 if total == math.inf else min(n0, total)
    n = np.arange(1, n_max + 1, dtype=float)
    unl = np.full_like(n, np.inf) if total == math.inf else total - n
    fac = np.where(unl > 0, 1 - rho**2 / (1 + n / np.where(unl > 0, unl, 1)), 1.0)
    hw = z * np.sqrt(var1 / n * fac)
    ok = np.flatnonzero(hw <= h)
    nj = int(n[ok[0]]) if len(ok) else math.nan
    return {"gold_only": n0 if total == math.inf or n0 <= total else math.nan, "with_judge": nj,
            "correlation": rho, "saving": 1 - nj / n0 if len(ok) else math.nan,
            "half_width_gold_only": z * math.sqrt(var1 / n0),
            "half_width_with_judge": float(hw[ok[0]]) if len(ok) else math.nan,
            "confidence": confidence, "rate": pi, "items": items}


def _smallest_stable(ns: np.ndarray, power: np.ndarray, target: float) -> int | None:
    """The smallest n from which the power stays ≥ ``target`` for every larger n evaluated (exact power saw-tooths
    in n for discrete tests: the first n that reaches the target can be followed by one that does not)."""
    bad = np.flatnonzero(power < target)
    if len(bad) == 0:
        return int(ns[0])
    if bad[-1] == len(ns) - 1:
        return None
    return int(ns[bad[-1] + 1])


def binomial_power(n: int | Sequence[int], p0: float, p1: float, alpha: float) -> np.ndarray:
    """Exact power of the one-sided binomial test of H0: p ≤ ``p0`` at level ``alpha`` when the truth is ``p1``.

    The test is ``scipy.stats.binomtest(alternative="greater")``, the drift gate's test with one reply per item:
    rejection when ``k ≥ k*``, ``k*`` the smallest count with P(Bin(n, p0) ≥ k*) ≤ alpha; power P(Bin(n, p1) ≥ k*).

    Parameters
    ----------
    n : int or sequence of int
        Items (one reply each).
    p0 : float
        The null proportion.
    p1 : float
        The true proportion.
    alpha : float
        Level of the test.

    Returns
    -------
    ndarray of float
        The power (a proportion) at each ``n``.

    Examples
    --------
    n = 20, p0 = 0.5: k* = 15 (P(Bin(20, ½) ≥ 15) = 0.021), so the power at p1 = 0.8 is P(Bin(20, 0.8) ≥ 15):

    >>> binomial_power(20, 0.5, 0.8, 0.05).round(4).tolist()
    [0.8042]
    """
    n = np.atleast_1d(np.asarray(n, dtype=int))
    k = np.arange(0, n.max() + 2)
    # every n at once (the same elementwise binomial tails as one call per n): k = 0..n+1 for each n, flattened
    size = n + 2
    m_flat = np.repeat(n, size)
    k_flat = k[np.arange(size.sum()) - np.repeat(np.cumsum(size) - size, size)]
    tail0 = sps.binom.sf(k_flat - 1, m_flat, p0)  # P(X >= k)
    # k* per n: the first k whose tail is <= alpha (k = n + 1 always is: its tail is 0)
    hit = np.flatnonzero(tail0 <= alpha)
    starts = np.cumsum(size) - size
    kstar = k_flat[hit[np.searchsorted(hit, starts)]]
    return sps.binom.sf(kstar - 1, n, p1).astype(float)


def items_for_flip_rate(flip_rate: float, tolerance: float = 0.05, *, alpha: float = 0.05,
                        power: float = 0.8) -> dict:
    """Items (one verdict pair each) needed for the drift gate to flag a flip rate above ``tolerance``.

    The gate (:func:`evallab.metrics._drift.gate`) tests H0: flip rate ≤ tolerance one-sided; with one reply per item
    that test is the exact binomial test (:func:`~evallab.metrics._intervals.ratio_test_greater`). The normal
    approximation gives the start, ``n₀ = [(z_{1−α}·sqrt(t(1−t)) + z_{power}·sqrt(f(1−f))) / (f − t)]²`` (Fleiss,
    Levin & Paik 2003, *Statistical Methods for Rates and Proportions*, 3rd ed., §2.5, eq. 2.19 for one sample);
    the answer is the smallest n from which the EXACT power of the binomial test (:func:`binomial_power`) stays at
    or above ``power``. Several replies per item (both orders, samples) add information, so the plan is
    conservative for them; with a Holm adjustment across g groups use ``alpha / g`` (Holm's first step).

    Returns
    -------
    dict: ``items``, ``power`` (the exact power at ``items``), ``normal_approximation`` (n₀), ``flip_rate``,
    ``tolerance``, ``alpha``, ``target_power``.

    Raises
    ------
    EvallabError
        ``flip_rate ≤ tolerance`` (nothing to detect) or values out of range.

    Parameters
    ----------
    flip_rate : float
        The flip rate to detect, in (tolerance, 1).
    tolerance : float, default 0.05
        The gate's tolerance (H0: flip rate ≤ tolerance).
    alpha : float, default 0.05
        Level of the one-sided test.
    power : float, default 0.8
        Target power.

    Examples
    --------
    The exact power of the binomial test reaches 0.80 at 59 items (0.786 at 58) and stays above it:

    >>> plan = items_for_flip_rate(0.15, 0.05)
    >>> plan["items"], round(plan["power"], 3), plan["normal_approximation"]
    (59, 0.801, 44)
    """
    f, t = _prob("flip_rate", flip_rate), _prob("tolerance", tolerance)
    a, pw = _prob("alpha", alpha), _prob("power", power)
    if f <= t:
        raise EvallabError(f"flip_rate={f} is not above tolerance={t}; the gate can only detect a flip rate above it")
    za, zb = sps.norm.ppf(1 - a), sps.norm.ppf(pw)
    n0 = math.ceil(((za * math.sqrt(t * (1 - t)) + zb * math.sqrt(f * (1 - f))) / (f - t)) ** 2)
    ns = np.arange(max(1, n0 // 2), 2 * n0 + 60)
    pow_ = binomial_power(ns, t, f, a)
    n = _smallest_stable(ns, pow_, pw)
    if n is None:  # pragma: no cover - the range is wide enough for every valid input
        raise EvallabError("no sample size found in the searched range")
    return {"items": n, "power": float(pow_[ns == n][0]), "normal_approximation": n0, "flip_rate": f,
            "tolerance": t, "alpha": a, "target_power": pw}


def mcnemar_rejects(b: np.ndarray, c: np.ndarray, alpha: float) -> np.ndarray:
    """Vectorised decision of :func:`evallab.metrics._intervals.mcnemar` at level ``alpha``.

    Exact two-sided binomial p = min(1, 2·P(Bin(b + c, ½) ≤ min(b, c))) when b + c < 25, else chi-square with
    continuity correction ``(|b − c| − 1)²/(b + c)`` on 1 df (statsmodels' ``mcnemar``; b + c = 0 never rejects).

    Parameters
    ----------
    b, c : array of int
        Discordant counts.
    alpha : float
        Level of the test.

    Returns
    -------
    ndarray of bool

    Examples
    --------
    9 vs 2 gives p = 0.065; 10 vs 1 gives p = 24/2048 = 0.012:

    >>> mcnemar_rejects([9, 10, 0], [2, 1, 0], 0.05).tolist()
    [False, True, False]
    """
    b, c = np.asarray(b, float), np.asarray(c, float)
    b, c = np.broadcast_arrays(b, c)
    d = b + c
    out = np.array(d > 0)
    # each p-value only where it decides (b + c > 0; the exact one below 25, the chi-square one from 25): the same
    # elementwise values as evaluating both everywhere
    exact = out & (d < 25)
    chi = out & ~(d < 25)
    be, ce, de = b[exact], c[exact], d[exact]
    out[exact] = np.minimum(1.0, 2 * sps.binom.cdf(np.minimum(be, ce), de, 0.5)) < alpha
    bc, cc, dc = b[chi], c[chi], d[chi]
    out[chi] = sps.chi2.sf((np.abs(bc - cc) - 1) ** 2 / dc, 1) < alpha
    return out if out.ndim else out[()]


def _mcnemar_given_discordant(d_max: int, pb: float, alpha: float) -> np.ndarray:
    """g[D] = P(McNemar rejects | D discordant items) for D = 0..d_max, b | D ~ Bin(D, pb)."""
    D = np.arange(0, d_max + 1)[:, None]
    b = np.arange(0, d_max + 1)[None, :]
    valid = b <= D
    Dv, bv = np.broadcast_to(D, valid.shape)[valid], np.broadcast_to(b, valid.shape)[valid]
    rej = np.zeros(valid.shape, bool)
    rej[valid] = mcnemar_rejects(bv, Dv - bv, alpha)
    # the probabilities of the rejecting cells only; every other cell 0 (as np.where(rej, pmf, 0) over all)
    pr = np.zeros(valid.shape)
    pr[rej] = sps.binom.pmf(np.broadcast_to(b, valid.shape)[rej], np.broadcast_to(D, valid.shape)[rej], pb)
    return pr.sum(axis=1)


def mcnemar_power(n: int | Sequence[int], delta: float, discordance: float, alpha: float) -> np.ndarray:
    """Exact power of McNemar's test (:func:`mcnemar_rejects`) on ``n`` items.

    With ψ = ``discordance`` (the share of items where the two judges' correctness differs) and δ = ``delta`` (the
    accuracy change): the discordant count D ~ Bin(n, ψ), then b | D ~ Bin(D, (ψ − δ)/(2ψ));
    power = Σ_D P(D)·P(reject | D) (vectorised over ``n``).

    Parameters
    ----------
    n : int or sequence of int
        Items judged by both judges.
    delta : float
        Accuracy change (a difference of proportions).
    discordance : float
        ψ, a proportion in (|δ|, 1).
    alpha : float
        Level of the test.

    Returns
    -------
    ndarray of float
        The power (a proportion) at each ``n``.

    Examples
    --------
    The same figure as summing statsmodels' ``mcnemar`` decisions over every (D, b):

    >>> mcnemar_power(50, 0.1, 0.2, 0.05).round(4).tolist()
    [0.2412]
    """
    n = np.atleast_1d(np.asarray(n, dtype=int))
    psi = discordance
    m = int(n.max())
    # discordant counts beyond 10 standard deviations above the mean carry no probability worth summing
    d_max = min(m, int(math.ceil(m * psi + 10 * math.sqrt(m * psi * (1 - psi)) + 10)))
    g = _mcnemar_given_discordant(d_max, (psi - abs(delta)) / (2 * psi), alpha)
    D = np.arange(0, d_max + 1)
    return (sps.binom.pmf(D[None, :], n[:, None], psi) * g[None, :]).sum(axis=1)


def items_for_accuracy_change(delta: float, discordance: float, *, alpha: float = 0.05,
                              power: float = 0.8) -> dict:
    """Items judged by both judges (or before and after a change) needed to detect an accuracy change of
    ``delta`` with McNemar's test.

    Connor (1987), "Sample size for testing differences in proportions for the paired-sample design", Biometrics
    43:207, eq. 3 gives the start: ``n₀ = [z_{1−α/2}·sqrt(ψ) + z_{power}·sqrt(ψ − δ²)]² / δ²``, ψ = the share of
    discordant items (one judge right, the other wrong; measured, e.g. from a pilot's flip table); the answer is the
    smallest n from which the exact power of the test evallab runs (:func:`mcnemar_power`) stays ≥ ``power``.

    Returns
    -------
    dict: ``items``, ``power`` (exact, at ``items``), ``normal_approximation`` (n₀), ``delta``, ``discordance``,
    ``alpha``, ``target_power``.

    Raises
    ------
    EvallabError
        ``|delta| ≥ discordance`` (impossible: the change cannot exceed the discordant share) or values out of range.

    Parameters
    ----------
    delta : float
        The accuracy change to detect (a difference of proportions; its sign is ignored).
    discordance : float
        ψ, the share of discordant items, in (|δ|, 1).
    alpha : float, default 0.05
        Level of the two-sided test.
    power : float, default 0.8
        Target power.

    Examples
    --------
    >>> plan = items_for_accuracy_change(0.1, 0.2)
    >>> plan["items"], round(plan["power"], 4), plan["normal_approximation"]
    (168, 0.8, 155)
    """
    d = abs(float(delta))
    psi = _prob("discordance", discordance)
    a, pw = _prob("alpha", alpha), _prob("power", power)
    if not 0 < d < psi:
        raise EvallabError(f"delta={delta}, discordance={discordance}; expected 0 < |delta| < discordance (an accuracy "
                           "change needs at least that share of items on which the judges differ)")
    za, zb = sps.norm.ppf(1 - a / 2), sps.norm.ppf(pw)
    n0 = math.ceil((za * math.sqrt(psi) + zb * math.sqrt(psi - d * d)) ** 2 / (d * d))
    ns = np.arange(max(2, int(0.8 * n0)), int(1.5 * n0) + 60)
    pows = mcnemar_power(ns, d, psi, a)
    n = _smallest_stable(ns, pows, pw)
    if n is None:  # pragma: no cover - the range is wide enough for every valid input
        raise EvallabError("no sample size found in the searched range")
    return {"items": n, "power": float(pows[ns == n][0]), "normal_approximation": n0, "delta": float(delta),
            "discordance": psi, "alpha": a, "target_power": pw}


def reply_flip_probability(flip_rate: float) -> float:
    """The per-reply probability q of departing from an item's modal verdict that gives a pairwise flip rate.

    For binary verdicts the flip rate of :func:`evallab.metrics._agreement.repetition_stability` is f = 2q(1 − q),
    so ``q = (1 − sqrt(1 − 2f))/2``; f ≤ ½.

    Parameters
    ----------
    flip_rate : float
        f, a proportion in [0, 0.5].

    Returns
    -------
    float
        q, a proportion in [0, 0.5].

    Raises
    ------
    EvallabError
        ``flip_rate`` outside [0, 0.5].

    Examples
    --------
    >>> round(reply_flip_probability(0.18), 3)  # 2 · 0.1 · 0.9 = 0.18
    0.1
    """
    f = float(flip_rate)
    if not 0 <= f <= 0.5:
        raise EvallabError(f"flip_rate={f}; expected a share of differing sample pairs in [0, 0.5] (binary verdicts)")
    return (1 - math.sqrt(1 - 2 * f)) / 2


def majority_stability(k: int, q: float | np.ndarray) -> tuple[float, float]:
    """Agreement of the majority of ``k`` samples with the mode, and its reproducibility.

    ``m_k`` = P(the majority of k samples is the item's modal verdict) = P(Bin(k, q) < k/2) and ``r_k`` = P(two
    independent rounds of k samples give the same majority) = m_k² + (1 − m_k)², averaged over items.

    Parameters
    ----------
    k : int
        Samples per item (odd).
    q : float or array of float
        Per-reply departure probability (scalar, or one per item).

    Returns
    -------
    (m_k, r_k) : tuple of float
        Proportions.

    Examples
    --------
    k = 3, q = 0.1: m = 0.9³ + 3 · 0.9² · 0.1 = 0.972, r = 0.972² + 0.028²:

    >>> m, r = majority_stability(3, 0.1)
    >>> round(m, 3), round(r, 4)
    (0.972, 0.9456)
    """
    q = np.atleast_1d(np.asarray(q, float))
    m = sps.binom.cdf((k - 1) // 2, k, q)
    return float(m.mean()), float((m**2 + (1 - m) ** 2).mean())


def samples_for_stable_majority(flip_rate: float | None = None, *, target: float = 0.95,
                                item_flip_rates: Sequence[float] | None = None, max_samples: int = 99) -> dict:
    """Samples per item (odd) for the majority verdict to be reproducible with probability ≥ ``target``.

    The majority of several samples is the usual way to tame an unstable judge (self-consistency, Wang et al. 2023,
    "Self-Consistency Improves Chain of Thought Reasoning"); how many samples it takes follows from the binomial
    distribution of the minority count (Condorcet's jury theorem): with per-reply departure q, the majority of k is
    the modal verdict with probability m_k = P(Bin(k, q) < k/2); a repeat round gives the same majority with
    probability r_k = m_k² + (1 − m_k)² (:func:`majority_stability`). ``k`` is the smallest odd number with
    r_k ≥ ``target``.

    Parameters
    ----------
    flip_rate : the measured repetition flip rate (share of sample pairs of one request whose verdicts differ,
        :func:`evallab.metrics._agreement.repetition_stability`), taken as the same on every item.
    item_flip_rates : instead, one measured flip rate per item (heterogeneous items; an item with flip rate ½ never
        gets a stable majority and caps what any k reaches).
    target : the reproducibility wanted, in (0, 1).

    Returns
    -------
    dict: ``samples`` (NaN when no odd k ≤ ``max_samples`` reaches the target), ``stability`` (r_k at it),
    ``agreement_with_mode`` (m_k), ``single_sample_stability`` (r_1), ``q`` (mean per-reply departure), ``target``.

    Examples
    --------
    A flip rate of 0.18 (q = 0.1): one sample reproduces with r₁ = 0.82, three with 0.946, five with 0.983:

    >>> plan = samples_for_stable_majority(0.18)
    >>> plan["samples"], round(plan["stability"], 3), round(plan["single_sample_stability"], 2)
    (5, 0.983, 0.82)
    """
    t = _prob("target", target)
    if item_flip_rates is not None:
        q = np.array([reply_flip_probability(f) for f in item_flip_rates])
    elif flip_rate is not None:
        q = np.array([reply_flip_probability(flip_rate)])
    else:
        raise EvallabError("give the measured flip_rate or item_flip_rates")
    best = math.nan
    stab = mode = math.nan
    for k in range(1, max_samples + 1, 2):
        m, r = majority_stability(k, q)
        if r >= t:
            best, stab, mode = k, r, m
            break
    return {"samples": best, "stability": stab, "agreement_with_mode": mode,
            "single_sample_stability": majority_stability(1, q)[1], "q": float(q.mean()), "target": t}


def next_round(*, rate: float, sensitivity: float, specificity: float, items: int, half_width: float,
               flip_rate: float, tolerance: float, delta: float, discordance: float, repetition_flip_rate: float,
               stability: float = 0.95, power: float = 0.8, alpha: float = 0.05,
               confidence: float = 0.95, max_samples: int = 99) -> Results:
    """The planner's answers for one labelling round, as a table a report shows.

    Parameters
    ----------
    rate, sensitivity, specificity, items, half_width, confidence : see :func:`gold_for_half_width`.
    flip_rate, tolerance : see :func:`items_for_flip_rate`.
    delta, discordance : see :func:`items_for_accuracy_change`.
    repetition_flip_rate, stability, max_samples : see :func:`samples_for_stable_majority` (``stability`` is its
        ``target``).
    power, alpha : target power and level of the two tests, default 0.8 and 0.05.

    Returns
    -------
    Results, one row per question (key ``question``; no intervals: these are planned sizes, not estimates):
    ``answer`` (unit "count": gold labels, items or samples per item; NaN when not reachable, the reason in
    ``note``, "not computable: …"), ``achieves`` (unit "proportion": the planned half-width, power or stability at that size),
    ``unit`` (which of the three), ``assumes`` (the inputs in words), ``source`` (the method and its reference),
    ``note``.

    Examples
    --------
    The answers of :func:`gold_for_half_width`, :func:`items_for_flip_rate`, :func:`items_for_accuracy_change` and
    :func:`samples_for_stable_majority` on the same inputs (with 1,000 items, 184 gold labels reach ±5 points):

    >>> plan = next_round(rate=0.5, sensitivity=0.9, specificity=0.9, items=1000, half_width=0.05, flip_rate=0.15,
    ...                   tolerance=0.05, delta=0.1, discordance=0.2, repetition_flip_rate=0.18)
    >>> plan["answer"].tolist()
    [385, 184, 59, 168, 5]
    """
    g = gold_for_half_width(half_width, rate=rate, sensitivity=sensitivity, specificity=specificity, items=items,
                            confidence=confidence)
    f = items_for_flip_rate(flip_rate, tolerance, alpha=alpha, power=power)
    a = items_for_accuracy_change(delta, discordance, alpha=alpha, power=power)
    s = samples_for_stable_majority(repetition_flip_rate, target=stability, max_samples=max_samples)
    src_g = "PPI++ variance at the optimal λ (Angelopoulos, Duchi & Zrnic 2023)"
    out = pd.DataFrame([
        dict(question=f"gold labels for ±{half_width:.0%} without the judge", answer=g["gold_only"],
             achieves=g["half_width_gold_only"], unit="half-width",
             assumes=f"gold rate {rate:.2f}", source="normal-approximation interval of a proportion",
             note="" if np.isfinite(g["gold_only"]) else
             not_computable(f"more gold labels are needed than the {items:,} items hold")),
        dict(question=f"gold labels for ±{half_width:.0%} with the judge on {items:,} items", answer=g["with_judge"],
             achieves=g["half_width_with_judge"], unit="half-width",
             assumes=f"Se {sensitivity:.2f}, Sp {specificity:.2f} (ρ = {g['correlation']:.2f})", source=src_g,
             note="" if np.isfinite(g["with_judge"]) else
             not_computable(f"no number of gold labels up to {items:,} reaches ±{half_width:.0%} with this judge "
                            "(more items or a better judge are needed)")),
        dict(question=f"items for the drift gate to flag a {flip_rate:.0%} flip rate (tolerance {tolerance:.0%})",
             answer=f["items"], achieves=f["power"], unit="power", assumes=f"one-sided, alpha {alpha:g}",
             source="exact binomial power; start from Fleiss, Levin & Paik (2003) §2.5", note=""),
        dict(question=f"items to detect a {delta:.0%} accuracy change (McNemar)", answer=a["items"],
             achieves=a["power"], unit="power", assumes=f"{discordance:.0%} discordant items, alpha {alpha:g}",
             source="exact McNemar power; start from Connor (1987)", note=""),
        dict(question=f"samples per item for a reproducible majority (≥ {stability:.0%})", answer=s["samples"],
             achieves=s["stability"], unit="stability", assumes=f"repetition flip rate {repetition_flip_rate:.2f}",
             source="binomial majority (Condorcet); self-consistency, Wang et al. 2023",
             note="" if np.isfinite(s["samples"]) else
             not_computable(f"no odd number of samples up to {max_samples} reaches {stability:.0%}")),
    ])
    return results(out, [Measure("answer", "Answer", "count"),
                         Measure("achieves", "Achieves", "proportion")], keys=["question"])


__all__ = ["binomial_power", "gold_for_half_width", "items_for_accuracy_change", "items_for_flip_rate",
           "judge_correlation", "majority_stability", "mcnemar_power", "mcnemar_rejects", "ppi_variance_factor",
           "next_round", "reply_flip_probability", "samples_for_stable_majority"]
