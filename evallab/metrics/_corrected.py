"""Bias-corrected pass and win rates: a judge's verdicts on every item plus gold on a random subset of them.

What a judge says is not what is true: a lenient judge's pass rate overstates the true pass rate, and its interval
covers the judge's own rate, not the truth. With gold labels on a random subset of the items, two corrections turn
the judge's rate into an honest estimate of the GOLD rate with an interval:

- **PPI++** — prediction-powered inference with power tuning (Angelopoulos, Duchi & Zrnic 2023, "PPI++: Efficient
  Prediction-Powered Inference", arXiv:2311.01453, eq. (2) and Example 6.1 for the mean), computed by the authors'
  package ``ppi_py`` (``ppi_mean_pointestimate``, ``ppi_mean_ci``, ``ppi_mean_pval``):
  ``θ̂_λ = λ·mean_N(f) + mean_n(Y − λ·f)``, where ``Y`` are the gold values of the ``n`` labelled items, ``f`` the
  judge's values, ``mean_N`` over the ``N`` unlabelled items; ``λ`` minimises the variance, "λ̂ = Cov(Y, f) /
  ((1 + n/N)·Var(f))" clipped to [0, 1] (``λ = 0``: gold only; ``λ = 1``: plain PPI, Angelopoulos et al. 2023a).
  Normal interval with ``Var = λ²·Var(f)/N + Var(Y − λf)/n``.
- **Rogan–Gladen** — the misclassification correction (Rogan & Gladen 1978, "Estimating prevalence from the
  results of a screening test", Am J Epidemiol 107:71): "π̂ = (p̂ + Ŝp − 1) / (Ŝe + Ŝp − 1)", where ``p̂`` is the
  judge's rate on all items and the judge's sensitivity ``Ŝe = mean(f | Y = 1)`` and specificity
  ``Ŝp = 1 − mean(f | Y = 0)`` are estimated on the gold items. Its interval carries the uncertainty of Ŝe and Ŝp
  (delta method, Greenland 1988, "Variance estimation for epidemiologic effect estimates under misclassification",
  Stat Med 7:745, eq. 4), plus the covariance between ``p̂`` and Ŝe, Ŝp that arises because the gold items are among
  the items ``p̂`` counts::

      J² · Var(π̂) = s²_f/N_all + π²·s²_1/n_1 + (1−π)²·s²_0/n_0 − 2π·s²_1/N_all − 2(1−π)·s²_0/N_all

  (``J = Ŝe + Ŝp − 1``; ``s²_1``, ``s²_0`` the variances of ``f`` on gold-positive and gold-negative items); Wald
  interval clipped to [0, 1]. Needs a binary gold label and a judge better than chance (``J`` > ``min_youden``).

The value of an item: pointwise, 1 for ``pass`` and 0 for ``fail`` or ``warn`` (the pass rate); pairwise, the
preference for output 2 — 1 for ``2``, 0 for ``1``, ½ for ``tie`` (the win rate of output 2,
:func:`evallab.metrics._evaluators.preference_of_output_2`). The judge's value ``f`` of an item is the mean over its
parsed replies (both presentation orders, every sample), so a judge that changes its verdict with the order scores
½. Unparsed replies are left out and counted; an item with no parsed reply is left out and counted
(``no_verdict``), never scored.

The effective number of gold labels (``*_n_eff``) is what a corrected interval is worth: the number of gold labels
whose classical interval would be as narrow, ``Var(Y) / se²`` (PPI++ §7 reports the same ratio as "effective
sample size").

Functions
---------
- :func:`item_values` — per item: gold value ``y``, judge value ``f``, parsed replies.
- :func:`ppi_mean` — PPI++ on arrays (estimate, interval, λ, se, effective gold labels, p-value).
- :func:`rogan_gladen` — Rogan–Gladen on arrays, interval with Se/Sp uncertainty.
- :func:`corrected_rates` — per group of a tidy table: judge-only, gold-only, PPI++ and Rogan–Gladen side by side,
  p-values against ``null`` adjusted across groups (Holm or BH), a plain refusal where a group is too thin.
- :func:`corrected_difference` — two systems judged by the same judge on the same items: paired, corrected
  difference (PPI++ on per-item differences), Holm/BH across groups.
- :func:`hide_gold` — keep gold on a random subset of items (to test a correction where the truth is known).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import ppi_py

from evallab._results import WILSON, Measure, Results, results
from evallab.errors import DataError, EvallabError
from evallab.metrics import _intervals as intervals
from evallab.metrics._design import check_design, groups, join_notes, needs_verdicts, not_computable

NAN = float("nan")
#: the numeric value of a verdict or gold label: pass rate (pointwise), preference for output 2 (pairwise)
VALUE = {"pass": 1.0, "fail": 0.0, "warn": 0.0, "2": 1.0, "1": 0.0, "tie": 0.5}
#: fewest gold items a group needs before a correction is computed (else: a plain refusal)
MIN_GOLD = 30
#: smallest Youden index J = Se + Sp − 1 Rogan–Gladen accepts (below it the correction divides by ~0)
MIN_YOUDEN = 0.1
#: the interval methods, as a report names them
PPI_METHOD = "PPI++ normal interval (ppi_py, power-tuned λ)"
RG_METHOD = ("Wald, delta-method variance with the uncertainty of Se and Sp (Greenland 1988) and their covariance "
             "with the judge's rate (the gold items are among the items it counts)")
CLT_METHOD = "normal (CLT) interval of the mean (ppi_py.classical_mean_ci)"
#: names of the p-value adjustments in column labels
_ADJUSTED = {"holm": "Holm-adjusted", "bh": "BH-adjusted", "none": "unadjusted"}


def _alpha(confidence: float) -> float:
    intervals.z_value(confidence)  # checks the level
    return 1.0 - confidence


def item_values(df: pd.DataFrame, by: Sequence[str] = ("judge",)) -> pd.DataFrame:
    """One row per (group, item): the gold value and the judge's value.

    Parameters
    ----------
    df : tidy verdict table (:mod:`evallab.verdicts`); pointwise (pass/warn/fail) or pairwise (1/2/tie).
    by : grouping columns (a design cell); checked with :func:`~evallab.metrics._design.check_design`.

    Returns
    -------
    DataFrame: ``by``, ``dataset``, ``item_id``, ``y`` (gold value in [0, 1], NaN without gold), ``f`` (mean value of
    the item's parsed replies, NaN when none parsed), ``replies``, ``parsed``. Sorted by key.

    Raises
    ------
    DesignError
        Several replies per (item, order, sample) inside a group.
    DataError
        An item whose replies carry different gold labels.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3"], "judge": "A",
    ...                                    "verdict": ["pass", "fail", "pass"], "gold": ["pass", "pass", None]}))
    >>> print(item_values(df)[["item_id", "y", "f", "parsed"]].to_string(index=False))
    item_id   y   f  parsed
         q1 1.0 1.0       1
         q2 1.0 0.0       1
         q3 NaN 1.0       1
    """
    by = list(by)
    check_design(df, by)
    key = list(dict.fromkeys([*by, "dataset", "item_id"]))
    v = df["verdict"].astype("string").str.lower().map(VALUE).astype(float)
    g = df["gold"].astype("string").str.lower().map(VALUE).astype(float)
    d = df[key].assign(_v=v.to_numpy(), _g=g.to_numpy(), _n=1.0, _p=v.notna().to_numpy(float))
    gg = d.groupby(key, observed=True, sort=True, dropna=False)
    out = gg.agg(f=("_v", "mean"), y=("_g", "first"), y_max=("_g", "max"), y_min=("_g", "min"), replies=("_n", "sum"),
                 parsed=("_p", "sum")).reset_index()
    clash = out["y_max"].notna() & (out["y_max"] != out["y_min"])
    if clash.any():
        r = out[clash].iloc[0]
        raise DataError(f"item {r['item_id']!r} carries different gold labels on its replies; expected one gold label "
                        "per item", column="gold")
    out["y"] = out["y_max"]
    out = out.drop(columns=["y_max", "y_min"])
    out[["replies", "parsed"]] = out[["replies", "parsed"]].astype(int)
    return out


def _check_values(y, f, f_unlabeled) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y, f, fu = (np.asarray(a, dtype=float).ravel() for a in (y, f, f_unlabeled))
    if len(y) != len(f):
        raise EvallabError(f"y has {len(y)} values and f has {len(f)}; expected one judge value per gold label")
    for name, a in (("y", y), ("f", f), ("f_unlabeled", fu)):
        if not np.isfinite(a).all():
            raise EvallabError(f"{name} holds NaN or infinite values; drop items without gold or verdict first")
    return y, f, fu


def power_tuning(y, f, f_unlabeled) -> float:
    """PPI++'s variance-minimising λ for a mean, clipped to [0, 1].

    ``λ̂ = Cov_n(Y, f) / ((1 + n/N)·Var(f over all n + N items))`` — the value ``ppi_py`` computes for a mean
    (``_calc_lam_glm`` with the identity Hessian, ``clip=True``).

    Parameters
    ----------
    y : array of shape (n,)
        Gold values of the labelled items, in [0, 1].
    f : array of shape (n,)
        The judge's values of the same items.
    f_unlabeled : array of shape (N,)
        The judge's values of the items without gold.

    Returns
    -------
    float
        λ, a coefficient in [0, 1]; 0 when ``f`` is constant or a side is empty.

    Raises
    ------
    EvallabError
        Mismatched lengths or NaN values.

    References
    ----------
    A. N. Angelopoulos, J. C. Duchi and T. Zrnic (2023), "PPI++: Efficient Prediction-Powered Inference",
    arXiv:2311.01453, Example 6.1.

    Examples
    --------
    Cov(Y, f) = 0.125 on the four gold items, Var(f) = 0.214 over all eight, n/N = 1: λ = 0.125 / (2 · 0.214).

    >>> round(power_tuning([1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 1, 1]), 4)
    0.2917
    """
    y, f, fu = _check_values(y, f, f_unlabeled)
    n, N = len(y), len(fu)
    var_f = float(np.var(np.concatenate([f, fu]), ddof=1)) if n + N > 1 else 0.0
    if var_f <= 0 or n == 0 or N == 0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    return float(np.clip(cov / ((1 + n / N) * var_f), 0.0, 1.0))


def judge_adds_nothing(lam: float, n_eff: float, gold_items: float) -> bool:
    """Whether PPI++'s power tuning gives the judge (next to) no weight, so the corrected figure is the gold-only
    estimate: λ̂ rounds to 0.00, or the interval is worth less than one gold label more than the gold labels alone.

    With λ = 0 the PPI++ estimate ``λ·mean(f_unlabeled) + mean(y − λ·f)`` is ``mean(y)`` and its interval the
    normal interval of the gold labels (Angelopoulos, Duchi & Zrnic 2023, eq. 2): worth exactly ``gold_items``
    labels (issue 26, defect 15).

    Parameters
    ----------
    lam : float
        The tuned λ (:func:`power_tuning`).
    n_eff : float
        Effective gold labels of the PPI++ interval (:func:`ppi_mean`).
    gold_items : float
        The gold labels it was computed from.

    Returns
    -------
    bool
        False when any value is missing.

    Examples
    --------
    >>> judge_adds_nothing(0.0, 150.0, 150), judge_adds_nothing(0.03, 150.2, 150), judge_adds_nothing(0.37, 182, 150)
    (True, True, False)
    """
    vals = [float(x) if x is not None else NAN for x in (lam, n_eff, gold_items)]
    if not all(np.isfinite(vals)):
        return False
    lam, n_eff, gold_items = vals
    return round(lam, 2) == 0 or n_eff - gold_items < 1


def ppi_mean(y, f, f_unlabeled, *, confidence: float = 0.95, null: float | None = None,
             alternative: str = "two-sided") -> dict:
    """PPI++ estimate of the mean gold value with its interval (``ppi_py``, power-tuned).

    Parameters
    ----------
    y : array (n,) — gold values of the labelled items, in [0, 1].
    f : array (n,) — the judge's values of the same items.
    f_unlabeled : array (N,) — the judge's values of the items without gold.
    confidence : level of the interval in (0, 1).
    null : optional value of the mean under H0 for ``pvalue`` (``ppi_py.ppi_mean_pval`` at the same λ).
    alternative : "two-sided", "larger" or "smaller" (for ``pvalue``).

    Returns
    -------
    dict: ``estimate``, ``low``, ``high`` (``ppi_mean_pointestimate`` / ``ppi_mean_ci`` at λ̂ of
    :func:`power_tuning` — the same numbers as ``lam=None``), ``lam``, ``se`` (half-width / z), ``n_eff`` (gold
    labels a classical interval would need for the same width, ``Var(Y)/se²``, ``Var`` with ddof 0 as
    ``ppi_py.classical_mean_ci``), ``pvalue`` (NaN without ``null``).

    Raises
    ------
    EvallabError
        Mismatched lengths, NaN values, fewer than 2 labelled or 1 unlabelled item, or a bad level.

    References
    ----------
    A. N. Angelopoulos, J. C. Duchi and T. Zrnic (2023), "PPI++: Efficient Prediction-Powered Inference",
    arXiv:2311.01453, eq. (2) and Example 6.1.

    Examples
    --------
    The same estimate and interval as ``ppi_py.ppi_mean_ci(y, f, f_unlabeled, alpha=0.05)``:

    >>> r = ppi_mean([1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 1, 1])
    >>> round(r["estimate"], 3), round(r["low"], 3), round(r["high"], 3), round(r["lam"], 4)
    (0.5, 0.052, 0.948, 0.2917)
    """
    alpha = _alpha(confidence)
    y, f, fu = _check_values(y, f, f_unlabeled)
    if len(y) < 2 or len(fu) < 1:
        raise EvallabError(f"PPI++ needs at least 2 gold items and 1 item without gold; got {len(y)} and {len(fu)}")
    lam = power_tuning(y, f, fu)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, f, fu, lam=lam))[0])
        lo, hi = (float(np.ravel(x)[0]) for x in ppi_py.ppi_mean_ci(y, f, fu, alpha=alpha, lam=lam))
        p = float(np.ravel(ppi_py.ppi_mean_pval(y, f, fu, null=null, alternative=alternative, lam=lam))[0]) \
            if null is not None else NAN
    se = (hi - lo) / (2 * intervals.z_value(confidence))
    var_y = float(np.var(y))
    return {"estimate": est, "low": lo, "high": hi, "lam": lam, "se": se,
            "n_eff": var_y / se**2 if se > 0 else NAN, "pvalue": p}


def rogan_gladen(y, f, f_all, *, confidence: float = 0.95, min_youden: float = MIN_YOUDEN,
                 null: float | None = None) -> dict:
    """Rogan–Gladen corrected rate with a delta-method interval that carries the uncertainty of Ŝe and Ŝp.

    Parameters
    ----------
    y : array (n,) — binary gold values (0/1) of the gold items.
    f : array (n,) — the judge's values of the gold items, in [0, 1] (a share of parsed replies).
    f_all : array (N_all,) — the judge's values of ALL items (the gold items included).
    confidence, min_youden : level; smallest accepted ``J = Ŝe + Ŝp − 1``.
    null : optional value under H0 for a two-sided Wald ``pvalue``.

    Returns
    -------
    dict: ``estimate`` (clipped to [0, 1]), ``low``, ``high``, ``se``, ``sensitivity``, ``specificity``,
    ``judge_rate`` (p̂), ``youden``, ``n_eff`` (``π̂(1−π̂)/se²``), ``pvalue``, ``note`` (why NaN, else "").
    Formula: module docstring (Rogan & Gladen 1978; Greenland 1988 for the variance).

    Raises
    ------
    EvallabError
        Gold values that are not 0/1, NaN values, or a bad level.

    References
    ----------
    W. J. Rogan and B. Gladen (1978), "Estimating prevalence from the results of a screening test", Am J Epidemiol
    107:71; S. Greenland (1988), "Variance estimation for epidemiologic effect estimates under misclassification",
    Stat Med 7:745, eq. 4.

    Examples
    --------
    Se = 2/3 and Sp = 2/3 on six gold items, judge rate 0.6 on all ten: π = (0.6 + 2/3 − 1) / (1/3) = 0.8.

    >>> r = rogan_gladen([1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 1], [1, 1, 0, 0, 0, 1, 1, 1, 0, 1])
    >>> round(r["estimate"], 3), round(r["sensitivity"], 3), round(r["specificity"], 3), r["judge_rate"]
    (0.8, 0.667, 0.667, 0.6)
    """
    z = intervals.z_value(confidence)
    y, f, fa = _check_values(y, f, f_all)
    out = {"estimate": NAN, "low": NAN, "high": NAN, "se": NAN, "sensitivity": NAN, "specificity": NAN,
           "judge_rate": float(fa.mean()) if len(fa) else NAN, "youden": NAN, "n_eff": NAN, "pvalue": NAN, "note": ""}
    if not np.isin(y, (0.0, 1.0)).all():
        out["note"] = not_computable("Rogan–Gladen needs a binary gold label (ties in gold)")
        return out
    pos, neg = f[y == 1], f[y == 0]
    if len(pos) < 2 or len(neg) < 2:
        out["note"] = not_computable(f"Rogan–Gladen needs at least 2 gold items of each class; got {len(pos)} "
                                     f"positive and {len(neg)} negative")
        return out
    se_, sp_ = float(pos.mean()), float(1 - neg.mean())
    J = se_ + sp_ - 1
    out.update(sensitivity=se_, specificity=sp_, youden=J)
    if J <= min_youden:
        out["note"] = not_computable(f"the judge is no better than chance on the gold items (Se + Sp − 1 = {J:.2f} "
                                     f"≤ {min_youden})")
        return out
    p = out["judge_rate"]
    pi = float(np.clip((p + sp_ - 1) / J, 0.0, 1.0))
    N, n1, n0 = len(fa), len(pos), len(neg)
    s2f, s21, s20 = float(np.var(fa, ddof=1)), float(np.var(pos, ddof=1)), float(np.var(neg, ddof=1))
    var = (s2f / N + pi**2 * s21 / n1 + (1 - pi) ** 2 * s20 / n0 - 2 * pi * s21 / N - 2 * (1 - pi) * s20 / N) / J**2
    se = float(np.sqrt(max(var, 0.0)))
    out.update(estimate=pi, low=max(0.0, pi - z * se), high=min(1.0, pi + z * se), se=se,
               n_eff=pi * (1 - pi) / se**2 if se > 0 else NAN)
    if null is not None and se > 0:
        from scipy.stats import norm

        out["pvalue"] = float(2 * norm.sf(abs(pi - null) / se))
    return out


def _classical(y: np.ndarray, confidence: float) -> tuple[float, float, str]:
    """The gold-only interval and its method: Wilson for binary values (:func:`~evallab.metrics._intervals.wilson`),
    else the CLT interval of ``ppi_py.classical_mean_ci`` (:data:`CLT_METHOD`); ``(nan, nan, "")`` without gold."""
    if len(y) == 0:
        return NAN, NAN, ""
    if np.isin(y, (0.0, 1.0)).all():
        return (*intervals.wilson(y.sum(), len(y), confidence), WILSON)
    return (*_clt(y, confidence), CLT_METHOD)


def _clt(y: np.ndarray, confidence: float) -> tuple[float, float]:
    lo, hi = ppi_py.classical_mean_ci(y, alpha=_alpha(confidence))
    return float(np.ravel(lo)[0]), float(np.ravel(hi)[0])


def rate_name(df: pd.DataFrame) -> str:
    """What the value of an item is a rate of (:data:`VALUE`).

    Parameters
    ----------
    df : DataFrame
        A tidy verdict table.

    Returns
    -------
    str
        ``"win rate of output 2"`` for a pairwise table (verdicts 1/2/tie), else ``"pass rate"``.

    Examples
    --------
    >>> import pandas as pd
    >>> rate_name(pd.DataFrame({"verdict": ["1", "2"]})), rate_name(pd.DataFrame({"verdict": ["pass"]}))
    ('win rate of output 2', 'pass rate')
    """
    v = df["verdict"].astype("string").str.lower()
    return "win rate of output 2" if v.isin(["1", "2", "tie"]).any() else "pass rate"


def _rate_measures(rate: str, unit: str, n: str, gold_n: str, n_unit: str, adjust: str,
                   gold_only_method: str | None = None, gold_only_method_column: str | None = None) -> list[Measure]:
    """The estimate measures shared by :func:`corrected_rates` (proportions) and :func:`corrected_difference`
    (``pp``): judge only (a per-row method), gold only, PPI++ with λ, effective gold labels and p-values."""
    R = rate[:1].upper() + rate[1:]
    return [
        Measure("judge_only", f"{R}, judge only", unit, "judge_only_low", "judge_only_high",
                method_column="judge_only_method", n=n, n_unit=n_unit),
        Measure("gold_only", f"{R}, gold labels only", unit, "gold_only_low", "gold_only_high",
                method=gold_only_method, method_column=gold_only_method_column, n=gold_n, n_unit=n_unit),
        Measure("ppi", f"{R}, PPI++", unit, "ppi_low", "ppi_high", method=PPI_METHOD, n=n, n_unit=n_unit),
        Measure("ppi_lam", "PPI++ λ (weight of the judge)", "coefficient", digits=2),
        Measure("ppi_n_eff", "Effective gold labels (PPI++)", "count", n=gold_n, n_unit=n_unit),
        Measure("ppi_p", "PPI++ p", "p-value"),
        Measure("ppi_p_adjusted", f"PPI++ {_ADJUSTED.get(adjust, adjust)} p", "p-value"),
    ]


_PPI_COLS = ["ppi", "ppi_low", "ppi_high", "ppi_lam", "ppi_n_eff", "ppi_p"]
_RG_COLS = ["rg", "rg_low", "rg_high", "rg_sensitivity", "rg_specificity", "rg_n_eff", "rg_p"]


def rate_keys(table: pd.DataFrame) -> list[str]:
    """The rows a report corrects: one per judge, and per value of every other design column (model, strategy,
    anchor set) that varies within a judge — never pooled. On the bundled LLMBar (one strategy): ``["judge"]``.

    Examples
    --------
    >>> import pandas as pd
    >>> rate_keys(pd.DataFrame({"judge": ["a", "a", "b"], "strategy": ["x", "y", "x"], "model": ["m", "m", "n"]}))
    ['judge', 'strategy']
    """
    by = ["judge"]
    for c in ("model", "strategy", "anchor_set"):
        if c in table.columns and len(table) and (table.groupby("judge", observed=True, dropna=False)[c]
                                                  .nunique(dropna=False) > 1).any():
            by.append(c)
    return by


@needs_verdicts("the corrected rates (PPI++, Rogan–Gladen)")
def corrected_rates(df: pd.DataFrame, by: Sequence[str] | None = None, *, confidence: float = 0.95,
                    min_gold: int = MIN_GOLD, min_youden: float = MIN_YOUDEN, null: float | None = None,
                    adjust: str = "holm", n_resamples: int = 1000, seed: int = 0) -> Results:
    """Judge-only, gold-only and corrected (PPI++, Rogan–Gladen) rates per group, side by side.

    Parameters
    ----------
    df : tidy verdict table with verdicts on every item and gold on a subset (a random subset: the corrections
        assume the gold items are a simple random sample of the items).
    by : grouping columns (e.g. ``["judge", "subset"]``); each group is corrected on its own. Default: the
        judge and every other design column that varies within a judge (:func:`rate_keys`), never pooled.
    confidence : level of every interval.
    min_gold : fewest gold items (with a parsed verdict) a group needs; fewer → the corrected figures are NaN with
        the reason in ``note`` (a plain refusal, never a number from too few labels).
    min_youden : Rogan–Gladen's smallest accepted Se + Sp − 1.
    null : optional value of the rate under H0 (e.g. 0.5 for "output 2 wins half the time"); the PPI++ and
        Rogan–Gladen p-values are adjusted across the groups with ``adjust``.
    adjust : ``"holm"`` (family-wise), ``"bh"`` (false discovery rate) or ``"none"``
        (:func:`~evallab.metrics._intervals.adjust_pvalues`).
    n_resamples, seed : the judge-only interval's item bootstrap (Wilson when every item has one reply).

    Returns
    -------
    Results, one row per group (keys ``by``, level ``confidence``), each estimate a measure:

    - counts (unit "count"): ``items`` (with a parsed verdict), ``no_verdict`` (items without one), ``gold_items``
      (gold and a parsed verdict), ``unparsed`` (replies);
    - proportions in [0, 1], labelled with the rate (:func:`rate_name`: "Pass rate, …" or "Win rate of output 2,
      …"), n = ``items`` (``gold_items`` for gold only, sensitivity and specificity), n unit "items":
      ``judge_only`` + ``_low``/``_high`` (the judge's mean value over all items: the judge's own rate, NOT an
      estimate of the gold rate; its interval method per row in ``judge_only_method``, from
      :func:`~evallab.metrics._intervals.ratio_interval_method`: Wilson with one reply per item, else the item
      bootstrap, or the Wilson fallback named as such); ``gold_only`` + ``_low``/``_high`` (mean gold value of
      the gold items; ``gold_only_method``: "Wilson score", or :data:`CLT_METHOD` with ties in gold); ``ppi`` +
      ``_low``/``_high`` (:data:`PPI_METHOD`); ``rg`` + ``_low``/``_high`` (:data:`RG_METHOD`);
      ``rg_sensitivity``, ``rg_specificity`` (no interval);
    - ``ppi_lam`` (coefficient), ``ppi_n_eff`` / ``rg_n_eff`` (effective gold labels, count);
    - ``ppi_p``, ``ppi_p_adjusted``, ``rg_p``, ``rg_p_adjusted`` (p-values; NaN without ``null``);
    - ``note``: why a figure is missing ("not computable: …").

    References
    ----------
    Angelopoulos, Duchi and Zrnic (2023), PPI++, arXiv:2311.01453; Rogan and Gladen (1978); Greenland (1988).

    Examples
    --------
    Eight items, gold on four: the judge passes 6 of 8, gold passes 2 of 4; PPI++ is :func:`ppi_mean` on these
    arrays; Rogan–Gladen with Se = 1, Sp = 0.5: (0.75 + 0.5 − 1) / 0.5 = 0.5.

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": [f"q{i}" for i in range(1, 9)], "judge": "A",
    ...     "verdict": ["pass", "pass", "pass", "fail", "pass", "fail", "pass", "pass"],
    ...     "gold": ["pass", "pass", "fail", "fail", None, None, None, None]}))
    >>> t = corrected_rates(df, min_gold=4)
    >>> print(t[["items", "gold_items", "judge_only", "gold_only", "ppi", "ppi_lam", "rg"]].round(4)
    ...       .to_string(index=False))
    items  gold_items  judge_only  gold_only  ppi  ppi_lam  rg
        8           4        0.75        0.5  0.5   0.2917 0.5
    """
    by = rate_keys(df) if by is None else list(by)
    iv = item_values(df, by)
    unparsed = df["verdict"].isna().to_numpy(int)
    # the group's rows of df: every key column equal to the group's value (one mask per column, then AND)
    key_cols = {c: df[c].astype(object) for c in by}
    rate = rate_name(df)
    rows = []
    for key, g in groups(iv, by):
        f_col, y_col, parsed = g["f"].to_numpy(float), g["y"].to_numpy(float), g["parsed"].to_numpy(float)
        has_f = ~np.isnan(f_col)
        f_all = f_col[has_f]
        lab = has_f & ~np.isnan(y_col)
        y, f = y_col[lab], f_col[lab]
        fu = f_col[has_f & ~lab]
        in_group = np.ones(len(df), bool)
        for c, val in key.items():
            in_group &= (key_cols[c] == val).to_numpy(bool)
        r = dict(key, items=int(has_f.sum()), no_verdict=int((~has_f).sum()), gold_items=int(lab.sum()),
                 unparsed=int(unparsed[in_group].sum()), judge_only=float(f_all.mean()) if len(f_all) else NAN)
        r["judge_only_low"], r["judge_only_high"], r["judge_only_method"] = intervals.ratio_interval_method(
            f_all * parsed[has_f], parsed[has_f], n_resamples=n_resamples,
            confidence=confidence, seed=seed) if has_f.any() else (NAN, NAN, "")
        r["gold_only"] = float(y.mean()) if len(y) else NAN
        r["gold_only_low"], r["gold_only_high"], r["gold_only_method"] = _classical(y, confidence)
        notes = []
        if len(y) < min_gold:
            notes.append(not_computable(f"{len(y)} gold items with a verdict, fewer than min_gold={min_gold}"))
            r.update({c: NAN for c in _PPI_COLS + _RG_COLS})
        elif len(fu) == 0:
            notes.append(not_computable("every item has gold: nothing to correct (the gold-only rate is the answer)"))
            r.update({c: NAN for c in _PPI_COLS + _RG_COLS})
        else:
            p = ppi_mean(y, f, fu, confidence=confidence, null=null)
            r.update(ppi=p["estimate"], ppi_low=p["low"], ppi_high=p["high"], ppi_lam=p["lam"], ppi_n_eff=p["n_eff"],
                     ppi_p=p["pvalue"])
            rg = rogan_gladen(y, f, f_all, confidence=confidence, min_youden=min_youden, null=null)
            r.update(rg=rg["estimate"], rg_low=rg["low"], rg_high=rg["high"], rg_sensitivity=rg["sensitivity"],
                     rg_specificity=rg["specificity"], rg_n_eff=rg["n_eff"], rg_p=rg["pvalue"])
            notes.append(rg["note"].replace("not computable: ", "Rogan–Gladen not computable: ")
                         if rg["note"] else "")
        r["note"] = join_notes(*notes)
        rows.append(r)
    out = pd.DataFrame(rows)
    if len(out):
        out["ppi_p_adjusted"] = intervals.adjust_pvalues(out["ppi_p"], adjust)
        out["rg_p_adjusted"] = intervals.adjust_pvalues(out["rg_p"], adjust)
    R = rate[:1].upper() + rate[1:]
    measures = [
        Measure("items", "Items", "count"), Measure("no_verdict", "Items without a verdict", "count"),
        Measure("gold_items", "Gold items", "count"), Measure("unparsed", "Unparsed replies", "count"),
        *_rate_measures(rate, "proportion", "items", "gold_items", "items", adjust,
                        gold_only_method_column="gold_only_method"),
        Measure("rg", f"{R}, Rogan–Gladen", "proportion", "rg_low", "rg_high", method=RG_METHOD, n="items",
                n_unit="items"),
        Measure("rg_sensitivity", "Sensitivity (Rogan–Gladen)", "proportion", n="gold_items", n_unit="items"),
        Measure("rg_specificity", "Specificity (Rogan–Gladen)", "proportion", n="gold_items", n_unit="items"),
        Measure("rg_n_eff", "Effective gold labels (Rogan–Gladen)", "count", n="gold_items", n_unit="items"),
        Measure("rg_p", "Rogan–Gladen p", "p-value"),
        Measure("rg_p_adjusted", f"Rogan–Gladen {_ADJUSTED.get(adjust, adjust)} p", "p-value"),
    ]
    return results(out, measures, level=confidence, keys=by)


@needs_verdicts("the corrected difference (PPI++, Rogan–Gladen)")
def corrected_difference(df: pd.DataFrame, system: str, a: str, b: str, by: Sequence[str] = ("judge",), *,
                         confidence: float = 0.95, min_gold: int = MIN_GOLD, adjust: str = "holm",
                         n_resamples: int = 1000, seed: int = 0) -> Results:
    """Rate of system ``a`` minus rate of system ``b``, both judged by the same judge on the same items: paired and
    corrected.

    The unit is the item (a prompt both systems answered): per item the gold difference ``y_a − y_b`` and the
    judge's difference ``f_a − f_b``; PPI++ (:func:`ppi_mean`) on these differences estimates the difference of the
    gold rates (a mean, so PPI++ applies unchanged; Angelopoulos et al. 2023, §2), tested against 0 and adjusted
    across groups. Items are paired on (dataset, item_id); an item one system lacks is left out and counted.

    Parameters
    ----------
    df : tidy verdict table with a column ``system`` telling the two systems apart (e.g. ``generator_2``).
    system, a, b : the column and its two values.
    by : grouping columns besides ``system`` (e.g. ``["judge", "subset"]``).

    Returns
    -------
    Results, one row per group (keys ``by``, level ``confidence``): counts ``pairs`` (items both systems have with
    a parsed verdict), ``unpaired``, ``gold_pairs``; differences in [−1, 1] (unit "pp", labelled "Difference of
    pass rates, …" or "Difference of win rates of output 2, …"; n = ``pairs``, ``gold_pairs`` for gold only, n
    unit "items"): ``judge_only`` (+ ``_low``/``_high``: the paired item bootstrap of the judge's difference,
    :func:`~evallab.metrics._intervals.ratio_difference_interval_method`, its method per row in
    ``judge_only_method``: the Wilson bound when the two sides are identical), ``gold_only`` (+ the CLT interval
    on the gold pairs, :data:`CLT_METHOD`), ``ppi`` (+ ``_low``/``_high``, :data:`PPI_METHOD`); ``ppi_lam``
    (coefficient), ``ppi_n_eff`` (count), ``ppi_p`` (H0: no difference) and ``ppi_p_adjusted`` (p-values);
    ``note``.

    Raises
    ------
    DataError
        ``system`` not a column, or ``a``/``b`` not among its values.

    References
    ----------
    Angelopoulos, Duchi and Zrnic (2023), PPI++, arXiv:2311.01453, §2 (a mean of per-item differences).

    Examples
    --------
    Per item, the judge's difference x − y is 1, 0, 0, 1 (mean 0.5); gold on q1, q2 gives 1, 0 (mean 0.5):

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4"] * 2, "judge": "A",
    ...     "strategy": ["x"] * 4 + ["y"] * 4, "verdict": ["2", "2", "1", "2", "1", "2", "1", "1"],
    ...     "gold": ["2", "2", None, None, "1", "2", None, None]}))
    >>> d = corrected_difference(df, "strategy", "x", "y", min_gold=2, n_resamples=50)
    >>> print(d[["pairs", "gold_pairs", "judge_only", "gold_only", "ppi"]].round(3).to_string(index=False))
    pairs  gold_pairs  judge_only  gold_only  ppi
        4           2         0.5        0.5  0.5
    """
    by = [c for c in by if c != system]
    if system not in df.columns:
        raise DataError(f"no column {system!r} telling the systems apart; columns: {list(df.columns)}", column=system)
    have = set(map(str, df[system].dropna().unique()))
    missing = [s for s in (a, b) if s not in have]
    if missing:
        raise DataError(f"{system}={missing[0]!r} not in the table; values: {sorted(have)}", column=system)
    rate = rate_name(df)
    iv = item_values(df[df[system].astype(str).isin([a, b])], [*by, system])
    key = [*by, "dataset", "item_id"]
    A = iv[iv[system].astype(str) == a].drop(columns=system)
    B = iv[iv[system].astype(str) == b].drop(columns=system)
    m = A.merge(B, on=key, how="outer", suffixes=("_a", "_b"))
    rows = []
    for k, g in groups(m, by):
        both = (g["f_a"].notna() & g["f_b"].notna()).to_numpy()
        p = g[both]
        lab = (p["y_a"].notna() & p["y_b"].notna()).to_numpy()
        d_f = (p["f_a"] - p["f_b"]).to_numpy(float)
        d_y = (p["y_a"] - p["y_b"]).to_numpy(float)
        r = dict(k, pairs=int(both.sum()), unpaired=int((~both).sum()), gold_pairs=int(lab.sum()),
                 judge_only=float(d_f.mean()) if len(d_f) else NAN)
        r["judge_only_low"], r["judge_only_high"], r["judge_only_method"] = \
            intervals.ratio_difference_interval_method(
                (p["f_a"] * p["parsed_a"]).to_numpy(float), p["parsed_a"].to_numpy(float),
                (p["f_b"] * p["parsed_b"]).to_numpy(float), p["parsed_b"].to_numpy(float), n_resamples=n_resamples,
                confidence=confidence, seed=seed) if len(p) > 1 else (NAN, NAN, "")
        yl = d_y[lab]
        r["gold_only"] = float(yl.mean()) if len(yl) else NAN
        r["gold_only_low"], r["gold_only_high"] = _clt(yl, confidence) if len(yl) > 1 else (NAN, NAN)
        note = ""
        if len(yl) < min_gold:
            note = not_computable(f"{len(yl)} gold pairs, fewer than min_gold={min_gold}")
            r.update(ppi=NAN, ppi_low=NAN, ppi_high=NAN, ppi_lam=NAN, ppi_n_eff=NAN, ppi_p=NAN)
        elif lab.all():
            note = not_computable("every pair has gold: nothing to correct")
            r.update(ppi=NAN, ppi_low=NAN, ppi_high=NAN, ppi_lam=NAN, ppi_n_eff=NAN, ppi_p=NAN)
        else:
            q = ppi_mean(yl, d_f[lab], d_f[~lab], confidence=confidence, null=0.0)
            r.update(ppi=q["estimate"], ppi_low=q["low"], ppi_high=q["high"], ppi_lam=q["lam"], ppi_n_eff=q["n_eff"],
                     ppi_p=q["pvalue"])
        r["note"] = note
        rows.append(r)
    out = pd.DataFrame(rows)
    if len(out):
        out["ppi_p_adjusted"] = intervals.adjust_pvalues(out["ppi_p"], adjust)
    diff = "difference of win rates of output 2" if rate != "pass rate" else "difference of pass rates"
    measures = [Measure("pairs", "Items both systems have", "count"), Measure("unpaired", "Unpaired items", "count"),
                Measure("gold_pairs", "Gold items", "count"),
                *_rate_measures(diff, "pp", "pairs", "gold_pairs", "items", adjust, gold_only_method=CLT_METHOD)]
    return results(out, measures, level=confidence, keys=by)


def gold_rate(df: pd.DataFrame, by: Sequence[str] = ("judge",)) -> Results:
    """The gold rate per group on every item that has gold — the truth a correction is compared with when the full
    gold is known.

    Returns
    -------
    Results (keys ``by``): ``truth`` (mean gold value in [0, 1], NaN without gold; a proportion labelled
    "Truth (<rate> on every gold item)", n = ``truth_items``, no interval: it is the population value here),
    ``truth_items`` (count).

    Parameters
    ----------
    df : DataFrame
        A tidy verdict table.
    by : sequence of str, default ("judge",)
        Grouping columns.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3"], "judge": "A", "verdict": "pass",
    ...                                    "gold": ["pass", "fail", None]}))
    >>> print(gold_rate(df).to_string(index=False))
    judge  truth  truth_items
        A    0.5            2
    """
    iv = item_values(df, by)
    rows = []
    for key, g in groups(iv, list(by)):
        y = g["y"].dropna()
        rows.append(dict(key, truth=float(y.mean()) if len(y) else NAN, truth_items=len(y)))
    return results(pd.DataFrame(rows, columns=[*by, "truth", "truth_items"]),
                   [Measure("truth", f"Truth ({rate_name(df)} on every gold item)", "proportion", n="truth_items",
                            n_unit="items"),
                    Measure("truth_items", "Items with gold", "count")], keys=list(by))


#: the estimates of :func:`corrected_rates` / :func:`corrected_difference` in the order a report shows them
METHODS = {"judge_only": "judge only", "gold_only": "gold labels only", "ppi": "PPI++", "rg": "Rogan–Gladen"}


def side_by_side(table: Results, by: Sequence[str], truth: pd.DataFrame | None = None) -> Results:
    """One row per (group, method) from :func:`corrected_rates` (or :func:`corrected_difference`).

    Parameters
    ----------
    table : Results
        The output of :func:`corrected_rates` or :func:`corrected_difference`.
    by : sequence of str
        Its group columns (``[]`` for one group).
    truth : DataFrame, optional
        :func:`gold_rate` on the same ``by`` (or one row with ``truth`` when ``by`` is empty).

    Returns
    -------
    Results (keys ``by`` and ``method``, level of ``table``): ``method`` (:data:`METHODS`), ``estimate`` +
    ``estimate_low``/``estimate_high`` (the unit of ``table``'s estimates: proportion or pp; labelled with the
    rate, e.g. "Win rate of output 2"), ``estimate_method`` (the interval's method on that row: the source
    measure's own, per row where it varies), ``n`` (the estimate's n, in items), ``n_eff`` (effective gold
    labels of the corrected methods, count), ``note`` (why a corrected figure is missing); with ``truth`` also
    ``truth`` (same unit) and ``covers`` (whether the interval holds the truth; NA without an interval).

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": [f"q{i}" for i in range(1, 9)], "judge": "A",
    ...     "verdict": ["pass", "pass", "pass", "fail", "pass", "fail", "pass", "pass"],
    ...     "gold": ["pass", "pass", "fail", "fail", None, None, None, None]}))
    >>> s = side_by_side(corrected_rates(df, [], min_gold=4), [], truth=gold_rate(df, []))
    >>> print(s[["method", "estimate", "n", "truth"]].to_string(index=False))
              method  estimate  n  truth
          judge only      0.75  8    0.5
    gold labels only      0.50  4    0.5
               PPI++      0.50  8    0.5
        Rogan–Gladen      0.50  8    0.5
    """
    by = list(by)
    ms = getattr(table, "measures", None) or {}
    rows = []
    for _, r in table.iterrows():
        for m, name in METHODS.items():
            if m not in table.columns:
                continue
            mm = ms.get(m)
            method = mm.method if mm is not None else None
            if mm is not None and mm.method_column and isinstance(r.get(mm.method_column), str) \
                    and r.get(mm.method_column):
                method = r[mm.method_column]
            rows.append({**{c: r[c] for c in by}, "method": name, "estimate": r[m], "estimate_low": r[f"{m}_low"],
                         "estimate_high": r[f"{m}_high"], "estimate_method": method or "",
                         "n": r.get(mm.n, NAN) if mm is not None and mm.n else NAN,
                         "n_eff": r.get(f"{m}_n_eff", NAN) if m in ("ppi", "rg") else NAN,
                         "note": r.get("note", "") if m in ("ppi", "rg") else ""})
    out = pd.DataFrame(rows, columns=[*by, "method", "estimate", "estimate_low", "estimate_high", "estimate_method",
                                      "n", "n_eff", "note"])
    ref = ms.get("judge_only")
    unit = ref.unit if ref is not None else "proportion"
    label = ref.label.rsplit(",", 1)[0] if ref is not None else "Estimate"
    n_unit = ref.n_unit if ref is not None else "items"
    measures = [Measure("estimate", label, unit, "estimate_low", "estimate_high", method_column="estimate_method",
                        n="n", n_unit=n_unit),
                Measure("n_eff", "Effective gold labels", "count"), Measure("truth", "Truth", unit)]
    if truth is not None and len(out):
        out = out.merge(truth[[*by, "truth"]], on=by, how="left") if by else out.assign(truth=truth["truth"].iloc[0])
        ok = out["estimate_low"].notna() & out["estimate_high"].notna() & out["truth"].notna()
        out["covers"] = pd.array(np.where(ok, (out["estimate_low"] <= out["truth"]) &
                                          (out["truth"] <= out["estimate_high"]), None), dtype="boolean")
    return results(out, measures, level=getattr(table, "level", None), keys=[*by, "method"])


@needs_verdicts("hide_gold (gold verdicts)")
def hide_gold(df: pd.DataFrame, n_gold: int, *, seed: int = 0, by: Sequence[str] = ()) -> pd.DataFrame:
    """A copy of ``df`` with gold kept on ``n_gold`` items drawn at random (per group of ``by``; all when fewer) and
    set to NA elsewhere — a labelling round simulated on a table whose full gold is known, so a correction can be
    compared with the truth. Items are (dataset, item_id); every reply of a kept item keeps its gold.

    Raises
    ------
    EvallabError
        ``n_gold`` < 0.

    Parameters
    ----------
    df : DataFrame
        A tidy verdict table with gold.
    n_gold : int
        Items that keep their gold, per group of ``by``.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.
    by : sequence of str, default ()
        Groups drawn separately.

    Returns
    -------
    DataFrame
        ``df``'s rows and columns, ``gold`` NA outside the drawn items.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4"], "judge": "A", "verdict": "pass",
    ...                                    "gold": "pass"}))
    >>> int(hide_gold(df, 2, seed=0)["gold"].notna().sum())
    2
    """
    if n_gold < 0:
        raise EvallabError(f"n_gold={n_gold}; expected a number of items ≥ 0")
    rng = np.random.default_rng(seed)
    out = df.copy()
    gold_items = out.loc[out["gold"].notna(), [*by, "dataset", "item_id"]].drop_duplicates()
    gold_items = gold_items.sort_values([*by, "dataset", "item_id"], kind="stable")
    keep = []
    for _, g in groups(gold_items, list(by)):
        idx = rng.permutation(len(g))[:n_gold]
        keep.append(g.iloc[np.sort(idx)])
    kept = pd.concat(keep) if keep else gold_items.iloc[:0]
    k = pd.MultiIndex.from_frame(kept[[*by, "dataset", "item_id"]].astype(str))
    mine = pd.MultiIndex.from_frame(out[[*by, "dataset", "item_id"]].astype(str))
    out.loc[~mine.isin(k), "gold"] = pd.NA
    return out


__all__ = ["CLT_METHOD", "METHODS", "MIN_GOLD", "MIN_YOUDEN", "PPI_METHOD", "RG_METHOD", "VALUE",
           "corrected_difference", "corrected_rates", "gold_rate", "hide_gold", "item_values", "judge_adds_nothing",
           "power_tuning", "ppi_mean", "rate_keys", "rate_name", "rogan_gladen", "side_by_side"]
