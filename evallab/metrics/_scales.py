"""Agreement on rating scales (1–5, 1–10): a judge's scores against the humans', and the humans' own agreement.

Every figure is computed from the tidy score table (``score`` column; :mod:`evallab.verdicts`) through well-kept
definitions, each checked against its library in the tests:

- weighted Cohen's kappa, linear and quadratic (Cohen 1968; ``sklearn.metrics.cohen_kappa_score(weights=...)``),
  on the scores rounded to the scale's steps (half up);
- Krippendorff's alpha at the ordinal and interval levels (Krippendorff 2011, "Computing Krippendorff's
  alpha-reliability", §§ C, E; the ``krippendorff`` package);
- the intraclass correlations of Shrout & Fleiss (1979) / McGraw & Wong (1996) from the two-way ANOVA of the
  items × raters matrix: ICC(2,1) (two-way random, absolute agreement, one rater), ICC(3,1) (two-way mixed,
  consistency, one rater), ICC(2,k) (two-way random, absolute agreement, mean of k raters) — pingouin's ``ICC2``,
  ``ICC3``, ``ICC2k`` rows;
- Pearson, Spearman and Kendall's tau-b (``scipy.stats.pearsonr``/``spearmanr``/``kendalltau``) between a rater
  and the reference (the human mean) over items, and over systems (the means per ``subset``: HANNA's story
  generators);
- mean bias (rater − reference: leniency, in scale points), mean absolute error, and the shares of exact and
  within-one-step agreement (on the rounded scores).

Intervals: percentile bootstrap over ITEMS (every rater's score of an item resampled together: the same draws as
``scipy.stats.bootstrap(paired=True)``, :func:`evallab.metrics._intervals._draws`); when the items belong to
systems (HANNA's story generators, fixed in number of stories), items are resampled within each system, for the
item-level and the system-level figures alike. Every interval's coverage is checked by simulation (``make coverage``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab import verdicts as V
from evallab._results import Measure, Results, bootstrap_method, results
from evallab.errors import DesignError
from evallab.metrics._design import require_verdicts as _require_verdicts
from evallab.metrics._intervals import _check_confidence, _draws

NAN = float("nan")
#: the reference a rater is compared with, as named in the tables
HUMAN_MEAN = "human mean"


# ------------------------------------------------------------------------------------------- the table checks
def require_scores(df: pd.DataFrame, *, what: str = "this estimator", instead: str | None = None) -> pd.DataFrame:
    """``df``'s rows with a numeric score; refuses a verdict-only table in one line.

    Raises
    ------
    DesignError
        The table has no ``score`` column or no numeric score (a verdict table): one line saying what it holds,
        what is expected and where to go instead (:func:`evallab.verdicts.verdict_table_refusal`).
    """
    if not V.has_scores(df):
        raise DesignError(V.verdict_table_refusal(df, what, instead), column="score")
    if "judge" not in df.columns or "item_id" not in df.columns:
        raise DesignError("a score table needs 'item_id' and 'judge' columns (see evallab.verdicts)",
                          column="judge" if "judge" not in df.columns else "item_id")
    fill = {c: "" for c in ("strategy", "subset") if c not in df.columns}
    d = df.assign(**fill) if fill else df
    keep = pd.to_numeric(d["score"], errors="coerce").notna()
    return d[keep] if not keep.all() else d.copy(deep=False)  # every row scored: no row selection to copy


def _slim(df: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Only the columns the scale estimators read (a rating table is long: every other column would be carried
    through each selection)."""
    cols = list(dict.fromkeys([*by, "item_id", "judge", "strategy", "subset", "score", "role", "verdict",
                               "scale_min", "scale_max", "scale_step", "scale_level"]))
    return df[[c for c in cols if c in df.columns]]


def require_verdicts(df: pd.DataFrame, *, what: str = "this estimator", instead: str | None = None
                     ) -> pd.DataFrame:
    """``df`` unchanged when it holds verdicts; refuses a score-only table in one line
    (:func:`evallab.metrics._design.require_verdicts`, which every verdict estimator runs first).

    Raises
    ------
    DesignError
        Every ``verdict`` is empty while scores are present (a rating table such as HANNA's).
    """
    return _require_verdicts(df, what=what, instead=instead)


def humans_of(df: pd.DataFrame, humans: Sequence[str] | None = None) -> list[str]:
    """The human raters: ``humans`` when given, else the judges whose ``role`` is ``human``."""
    if humans:
        return [str(h) for h in humans]
    if "role" in df.columns:
        return sorted(map(str, df.loc[df["role"].astype("string") == "human", "judge"].unique()))
    raise DesignError("no human raters named: pass humans=[...] or give the table a 'role' column (human/judge)",
                      column="role")


def scale_of(df: pd.DataFrame, scale: tuple[float, float, float] | None = None) -> tuple[float, float, float]:
    """(minimum, maximum, step) of the scale: ``scale`` when given, else the table's declared scale (the ordinal
    one where rows differ: the humans'), else the scores' own range with step 1."""
    if scale:
        lo, hi, step = (float(x) for x in scale)
        return lo, hi, step
    if "scale_min" in df.columns and df["scale_min"].notna().any():
        d = df[df["scale_min"].notna()]  # rows without a declared scale (a labels file's) take the others'
        if "scale_level" in df.columns and (df["scale_level"] == "ordinal").any():
            d = df[df["scale_level"] == "ordinal"]
        step = d["scale_step"].dropna() if "scale_step" in d.columns else pd.Series(dtype=float)
        return (float(d["scale_min"].min()), float(d["scale_max"].max()),
                float(step.min()) if len(step) else 1.0)
    s = df["score"].astype(float)
    return float(np.floor(s.min())), float(np.ceil(s.max())), 1.0


def wide(df: pd.DataFrame, raters: Sequence[str], by: Sequence[str] = ()) -> pd.DataFrame:
    """Scores as items × raters (one column per judge label, ``<judge> · <strategy>`` when the strategy is set);
    rows = (by…, subset, item_id), sorted; a rater's several scores of one item (samples) are averaged."""
    d = require_scores(df)
    # the rows of ``raters`` as numpy codes, without selecting them from the frame: the rater of each row as a
    # code into the distinct raters, each column factorized whole (sorted) and its codes kept for those rows
    rater, names = V._rater_codes(d)
    wanted = names.isin(list(raters)).to_numpy(dtype=bool)
    keep = wanted[rater]
    idx = [*by, "subset", "item_id"]
    parts = [pd.factorize(d[c].astype("string").fillna(""), sort=True) for c in idx]
    combo = np.zeros(int(keep.sum()), dtype=np.int64)
    for codes_, uniq in parts:
        combo = combo * len(uniq) + codes_[keep]
    rows_u, first = np.unique(combo, return_index=True)
    rcode = np.searchsorted(rows_u, combo)
    # the columns: the wanted raters' labels, sorted (a label two (judge, strategy) pairs share is one column)
    cuniq = sorted(set(names[wanted]))
    column_of = np.full(len(names), -1)
    column_of[wanted] = [cuniq.index(x) for x in names[wanted]]
    flat = rcode * len(cuniq) + column_of[rater[keep]]
    R = len(rows_u)
    total = np.bincount(flat, weights=d["score"].to_numpy(dtype=float)[keep], minlength=R * len(cuniq))
    count = np.bincount(flat, minlength=R * len(cuniq))
    with np.errstate(invalid="ignore", divide="ignore"):
        m = (total / count).reshape(R, len(cuniq))
    # the index from each column's sorted uniques and codes (what MultiIndex.from_arrays would find again): a level
    # holds the values present in these rows, in order
    levels, codes = [], []
    for c, u in parts:
        present, code = np.unique(c[keep][first], return_inverse=True)
        levels.append(pd.Index(np.asarray(u, dtype=object)[present]))
        codes.append(code.ravel())
    index = pd.MultiIndex(levels=levels, codes=codes, names=idx, verify_integrity=False)
    out = pd.DataFrame(m, index=index, columns=cuniq)
    out.columns.name = "_rater"
    return out


# ------------------------------------------------------------------------------------------- the statistics
def _round(x: np.ndarray, lo: float, step: float) -> np.ndarray:
    """Scores rounded to the scale's steps, half up, as step indices (0 = the minimum)."""
    return np.floor((x - lo) / step + 0.5 + 1e-9).astype(int)


def _weighted_kappa(conf: np.ndarray, weights: str) -> np.ndarray:
    """Weighted kappa of confusion matrices (..., L, L) — scikit-learn's ``cohen_kappa_score`` formula."""
    L = conf.shape[-1]
    i = np.arange(L)
    w = np.abs(i[:, None] - i[None, :]).astype(float)
    if weights == "quadratic":
        w = w ** 2
    n = conf.sum(axis=(-1, -2))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = conf.sum(-1)[..., :, None] * conf.sum(-2)[..., None, :] / n[..., None, None]
        return 1 - (w * conf).sum(axis=(-1, -2)) / (w * expected).sum(axis=(-1, -2))


def _pearson_w(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted Pearson correlation along the last axis (weights = how often a unit is drawn)."""
    sw = w.sum(-1)
    mx, my = (w * x).sum(-1) / sw, (w * y).sum(-1) / sw
    dx, dy = x - mx[..., None], y - my[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w * dx * dy).sum(-1) / np.sqrt((w * dx * dx).sum(-1) * (w * dy * dy).sum(-1))


def _corr_from_table(T: np.ndarray, n: np.ndarray, a: np.ndarray, b: np.ndarray, ra: np.ndarray,
                     rb: np.ndarray) -> np.ndarray:
    """Pearson correlation of tables ``T`` (R, gx, gy) whose rows carry the values ``a`` (R or 1, gx) and columns
    ``b`` (R or 1, gy); ``ra``/``rb`` the row / column totals."""
    sa, sb = (ra * a).sum(1), (rb * b).sum(1)
    saa, sbb = (ra * a * a).sum(1), (rb * b * b).sum(1)
    sab = np.einsum("rij,ri,rj->r", T, np.broadcast_to(a, ra.shape), np.broadcast_to(b, rb.shape), optimize=False)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sab - sa * sb / n) / np.sqrt((saa - sa * sa / n) * (sbb - sb * sb / n))


def _table_stats(T: np.ndarray, vx: np.ndarray, vy: np.ndarray) -> dict[str, np.ndarray]:
    """Pearson, Spearman and Kendall's tau-b of resampled contingency tables ``T`` (R, gx, gy) of the distinct
    values ``vx`` (sorted) × ``vy`` (sorted): every unit in a cell shares its values, so the three coefficients
    over the resampled units are functions of the table (midranks for ties, as scipy's)."""
    n = T.sum(axis=(1, 2))
    rx, ry = T.sum(2), T.sum(1)  # (R, gx), (R, gy)
    pearson = _corr_from_table(T, n, vx[None, :], vy[None, :], rx, ry)
    mid_x = np.cumsum(rx, 1) - rx + (rx + 1) / 2  # midrank of each distinct value
    mid_y = np.cumsum(ry, 1) - ry + (ry + 1) / 2
    spearman = _corr_from_table(T, n, mid_x, mid_y, rx, ry)
    # concordant / discordant pairs: the cells strictly below-right / below-left of each cell
    below = np.cumsum(T[:, ::-1, :], 1)[:, ::-1, :] - T  # rows strictly greater
    cb = np.cumsum(below, 2)
    s_bl = cb - below  # ... and columns strictly smaller
    s_br = cb[:, :, -1:] - cb  # ... and columns strictly greater
    con, dis = (T * s_br).sum(axis=(1, 2)), (T * s_bl).sum(axis=(1, 2))
    tx = (n * n - (rx * rx).sum(1)) / 2
    ty = (n * n - (ry * ry).sum(1)) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        kendall = (con - dis) / np.sqrt(tx * ty)
    return {"pearson": pearson, "spearman": spearman, "kendall": kendall}


def _rank_rows(a: np.ndarray) -> np.ndarray:
    """Midranks along the last axis, a row holding a NaN all NaN: ``scipy.stats.rankdata(a, axis=-1)``, computed as
    (values below) + (values equal + 1) / 2 — exact half-integers, the same floats; the rows here are short (one
    value per system) and many (one per resample), where rankdata's per-row sorting costs more."""
    below = (a[..., None, :] < a[..., :, None]).sum(-1)
    equal = (a[..., None, :] == a[..., :, None]).sum(-1)
    return np.where(np.isnan(a).any(-1, keepdims=True), np.nan, below + (equal + 1) / 2)


def _tie_levels(a: np.ndarray, rel: float = 1e-9) -> np.ndarray:
    """Each row's values replaced by the index of their tie group: values within ``rel`` (relative) of the next
    smaller one are one group. System means computed as (resampled) matrix products differ in their last bits
    when they are equal (three HANNA generators' human means are all 165.667 / 96): compared as floats they would
    be ranked apart. The order of the groups is the order of the values, so ranks and signs are those of the
    means with exact ties kept."""
    order = np.argsort(a, axis=-1, kind="stable")
    s = np.take_along_axis(a, order, -1)
    step = np.diff(s, axis=-1) > rel * np.maximum(1.0, np.abs(s[..., 1:]))
    groups = np.concatenate([np.zeros(s.shape[:-1] + (1,)), np.cumsum(step, axis=-1)], axis=-1)
    out = np.empty_like(groups)
    np.put_along_axis(out, order, groups, -1)
    return np.where(np.isfinite(a), out, np.nan)


def _system_stats(mx: np.ndarray, my: np.ndarray) -> dict[str, np.ndarray]:
    """Pearson, Spearman and Kendall's tau-b over systems, per row of (R, S) system means; equal means (to 1e-9
    relative) are ties for the two rank correlations (:func:`_tie_levels`)."""
    w = np.ones_like(mx)
    tx, ty = _tie_levels(mx), _tie_levels(my)
    out = {"pearson": _pearson_w(mx, my, w), "spearman": _pearson_w(_rank_rows(tx), _rank_rows(ty), w)}
    i, j = np.triu_indices(mx.shape[1], 1)
    sx, sy = np.sign(tx[:, i] - tx[:, j]), np.sign(ty[:, i] - ty[:, j])
    with np.errstate(invalid="ignore", divide="ignore"):
        out["kendall"] = (sx * sy).sum(1) / np.sqrt((sx != 0).sum(1) * (sy != 0).sum(1))
    return out


def _interval(dist: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile interval of the finite resampled values; (nan, nan) when degenerate (bounds equal) or none."""
    d = dist[np.isfinite(dist)]
    if len(d) < 2:
        return NAN, NAN
    a = (1 - confidence) / 2
    lo, hi = (float(v) for v in np.quantile(d, [a, 1 - a]))
    return (NAN, NAN) if lo == hi else (lo, hi)


def _percentile_intervals(dists: Sequence[np.ndarray], confidence: float) -> list[tuple[float, float]]:
    """:func:`_interval` of each distribution; those of one length, all finite and of floats, in one
    ``np.quantile`` call along the rows (each row's quantiles are computed exactly as alone)."""
    out: list = [None] * len(dists)
    together = [i for i, v in enumerate(dists) if v.dtype == np.float64 and v.ndim == 1 and len(v) >= 2
                and len(v) == len(dists[0]) and np.isfinite(v).all()]
    if together:
        a = (1 - confidence) / 2
        q = np.quantile(np.stack([dists[i] for i in together]), [a, 1 - a], axis=1).tolist()
        for i, lo, hi in zip(together, q[0], q[1], strict=True):
            out[i] = (NAN, NAN) if lo == hi else (lo, hi)
    return [iv if iv is not None else _interval(v, confidence) for iv, v in zip(out, dists, strict=True)]


def _estimates(parts: list[dict[str, np.ndarray]], confidence: float) -> dict[str, tuple[float, float, float]]:
    """figure → (value, low, high): the value from ``parts[0]`` (the sample), the percentile interval from
    ``parts[1]`` (the resamples), when there are resamples."""
    names = list(parts[0])
    ivs = (_percentile_intervals([parts[1][k] for k in names], confidence) if len(parts) > 1
           else [(NAN, NAN)] * len(names))
    return {k: (float(parts[0][k][0]), *iv) for k, iv in zip(names, ivs, strict=True)}


#: resamples kept for reuse (draws, counts, strata draws), keyed by their parameters: every rater of a design cell
#: is resampled with the same draws (paired), and they are drawn once
_CACHE: dict = {}


def _cached(key, make):
    if key not in _CACHE:
        if len(_CACHE) > 32:
            _CACHE.clear()
        _CACHE[key] = make()
    return _CACHE[key]


def _counts(idx: np.ndarray, n: int) -> np.ndarray:
    """How often each of ``n`` units is drawn in each row of ``idx`` (R, n)."""
    R = idx.shape[0]
    return np.bincount((np.arange(R)[:, None] * n + idx).ravel(), minlength=R * n).reshape(R, n).astype(float)


def _strata_draws(strata: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Item indices of resamples drawn within each stratum (its own size), shape (R, n)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, len(strata)), dtype=np.int64)
    for s in np.unique(strata):
        pos = np.flatnonzero(strata == s)
        out[:, pos] = pos[rng.integers(0, len(pos), (n_resamples, len(pos)))]
    return out


def _system_codes(systems) -> tuple[np.ndarray, int]:
    """Each item's system as a code into the sorted distinct systems (as strings), and their number: the codes of
    ``pd.factorize(pd.Series(systems).astype(str), sort=True)``; systems that are all strings (a wide table's
    ``subset`` level) through ``np.unique``, the same order (code points) without a pandas Series per call."""
    s = np.asarray(systems)
    if s.ndim == 1 and (s.dtype.kind == "U" or (s.dtype == object and all(isinstance(v, str) for v in s))):
        u, codes = np.unique(s.astype(str), return_inverse=True)
        return codes.astype(np.intp).ravel(), len(u)
    codes, u = pd.factorize(pd.Series(systems).astype(str), sort=True)
    return np.asarray(codes), len(u)


def pair_statistics(x: np.ndarray, y: np.ndarray, systems: np.ndarray | None = None, *,
                    scale: tuple[float, float, float] = (1, 5, 1), n_resamples: int = 1000,
                    confidence: float = 0.95, seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """Every agreement figure of a rater ``x`` against a reference ``y`` on the same items, with intervals.

    Parameters
    ----------
    x, y : array of float, shape (n,)
        The rater's and the reference's score of each item; an item where either is NaN is left out (it is still
        drawn in the resamples, so raters of one design cell with different missing items share one set of
        draws — a paired resample of the cell's items).
    systems : array, shape (n,), optional
        The system (HANNA: story generator) of each item, for the system-level correlations; None: left out.
    scale : (minimum, maximum, step)
        The scale the scores are rounded to for kappa and exact / within-one agreement.
    n_resamples, confidence, seed
        The item bootstrap (``n_resamples`` 0: no intervals).

    Returns
    -------
    dict
        figure → (value, low, high): ``pearson``, ``spearman``, ``kendall`` (item level), ``sys_pearson``,
        ``sys_spearman``, ``sys_kendall`` (over system means), ``bias`` (mean x − y, scale points), ``mae``
        (scale points), ``exact``, ``within_one`` (proportions of items), ``kappa_linear``, ``kappa_quadratic``,
        ``icc2_1`` (ICC(2,1) of the two columns).
    """
    _check_confidence(confidence)
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    valid = ~(np.isnan(x) | np.isnan(y))
    xv, yv = np.where(valid, x, 0.0), np.where(valid, y, 0.0)
    lo, hi, step = scale
    L = int(round((hi - lo) / step)) + 1
    vx, ix = np.unique(xv[valid], return_inverse=True)
    vy, iy = np.unique(yv[valid], return_inverse=True)
    cell = np.zeros(n, dtype=np.int64)
    cell[valid] = ix * len(vy) + iy
    ncell = len(vx) * len(vy)
    # the rounded categories of each distinct value, as 0/1 maps (distinct values → scale steps)
    ax = np.eye(L)[np.clip(_round(vx, lo, step), 0, L - 1)]
    ay = np.eye(L)[np.clip(_round(vy, lo, step), 0, L - 1)]
    near = np.abs(np.clip(_round(xv, lo, step), 0, L - 1) - np.clip(_round(yv, lo, step), 0, L - 1))
    d = xv - yv
    sums = np.column_stack([np.ones(n), d, np.abs(d), near == 0, near <= 1, xv + yv, (xv + yv) ** 2,
                            xv * xv + yv * yv, xv, yv]).astype(float) * valid[:, None]
    codes = None
    if systems is not None:
        codes, n_sys = _system_codes(systems)
    # with systems, items are resampled within each system (a design with fixed systems, HANNA's 96 stories each):
    # the same draws for the item-level and the system-level figures
    key = ("draws", n, n_resamples, seed) if codes is None else ("strata", codes.tobytes(), n_resamples, seed)
    draws = [np.arange(n)[None, :]]
    if n_resamples > 0 and n >= 2:
        draws.append(_cached(key, functools.partial(_draws, n, n_resamples, seed) if codes is None else
                             functools.partial(_strata_draws, codes, n_resamples, seed + 1)))
    parts, weights = [], []
    for idx in draws:
        R = idx.shape[0]
        w = valid[None, :].astype(float) if R == 1 else \
            _cached(("counts", *key), functools.partial(_counts, idx, n))
        weights.append(w)
        tot = w @ sums
        T = np.bincount((np.arange(R)[:, None] * ncell + cell[idx]).ravel(),
                        weights=None if valid.all() else valid[idx].ravel(),
                        minlength=R * ncell).reshape(R, len(vx), len(vy)).astype(float)
        conf = ax.T @ T @ ay
        st = _table_stats(T, vx, vy)
        m = tot[:, 0]
        with np.errstate(invalid="ignore", divide="ignore"):
            st["bias"], st["mae"] = tot[:, 1] / m, tot[:, 2] / m
            st["exact"], st["within_one"] = tot[:, 3] / m, tot[:, 4] / m
        st["kappa_linear"], st["kappa_quadratic"] = _weighted_kappa(conf, "linear"), _weighted_kappa(conf, "quadratic")
        st["icc2_1"] = _icc_from_totals(m, tot[:, 5], tot[:, 6], tot[:, 7], tot[:, 8:10], 2)["icc2_1"]
        parts.append(st)
    if codes is not None:
        # system means of each resample from how often it draws each item (the strata draws keep each item's
        # system): (R, n) counts × (n, S) valid one-hot columns, weighted by x and y
        vo = np.eye(n_sys)[codes] * valid[:, None]
        for k, w in enumerate(weights):
            w = w if k else np.ones((1, n))
            with np.errstate(invalid="ignore", divide="ignore"):
                cnt = w @ vo
                mx, my = (w @ (xv[:, None] * vo)) / cnt, (w @ (yv[:, None] * vo)) / cnt
            for name, val in _system_stats(mx, my).items():
                parts[k][f"sys_{name}"] = val
    return _estimates(parts, confidence)


def _icc_from_totals(n, row_sum, row_sq, sq, col, k) -> dict[str, np.ndarray]:
    """ICC(2,1), ICC(3,1), ICC(2,k) from the totals of an items × k raters matrix (every item rated by all k):
    items ``n``, Σ row sums (grand total), Σ row sums², Σ x², column totals ``col`` (..., k). The two-way ANOVA
    mean squares of Shrout & Fleiss (1979), Table 2 (pingouin's ``intraclass_corr`` rows ICC2, ICC3, ICC2k)."""
    g = row_sum
    cf = g * g / (n * k)
    ss_total = sq - cf
    ss_rows = row_sq / k - cf
    ss_cols = (col * col).sum(-1) / n - cf
    ss_err = ss_total - ss_rows - ss_cols
    with np.errstate(invalid="ignore", divide="ignore"):
        msr, msc = ss_rows / (n - 1), ss_cols / (k - 1)
        mse = ss_err / ((n - 1) * (k - 1))
        return {"icc2_1": (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n),
                "icc3_1": (msr - mse) / (msr + (k - 1) * mse),
                "icc2_k": (msr - mse) / (msr + (msc - mse) / n)}


def _alpha_interval(tot: np.ndarray) -> np.ndarray:
    """Krippendorff's interval alpha from totals of per-unit sums [m_u, Σx, Σx², Σ_u pairs term]."""
    m, s1, s2, within = tot[..., 0], tot[..., 1], tot[..., 2], tot[..., 3]
    with np.errstate(invalid="ignore", divide="ignore"):
        d_o = within / m
        d_e = 2 * (m * s2 - s1 * s1) / (m * (m - 1))
        return 1 - d_o / d_e


def _alpha_ordinal(coinc: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal alpha from coincidence matrices (..., L, L) (Krippendorff 2011, § E)."""
    nc = coinc.sum(-1)
    n = nc.sum(-1)
    cum = np.cumsum(nc, -1)
    # delta(c, k) = (sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2, c <= k
    L = coinc.shape[-1]
    c, k = np.meshgrid(np.arange(L), np.arange(L), indexing="ij")
    a, b = np.minimum(c, k), np.maximum(c, k)
    delta = (cum[..., b] - cum[..., a] + nc[..., a] - (nc[..., a] + nc[..., b]) / 2) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        d_o = (coinc * delta).sum((-1, -2))
        d_e = (nc[..., :, None] * nc[..., None, :] * delta).sum((-1, -2)) / (n - 1)
        return 1 - d_o / d_e


def reliability_statistics(m: np.ndarray, *, scale: tuple[float, float, float] = (1, 5, 1),
                           n_resamples: int = 1000, confidence: float = 0.95,
                           seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """Inter-rater agreement of the columns of an items × raters matrix ``m`` (no NaN), with item-bootstrap
    intervals: ``alpha_ordinal`` (on the scores rounded to the scale's steps), ``alpha_interval``, ``icc2_1``,
    ``icc3_1``, ``icc2_k``, ``kappa_linear``/``kappa_quadratic`` (the mean over rater pairs).
    """
    _check_confidence(confidence)
    m = np.asarray(m, float)
    n, k = m.shape
    lo, hi, step = scale
    L = int(round((hi - lo) / step)) + 1
    c = np.clip(_round(m, lo, step), 0, L - 1)
    rs = m.sum(1)
    within = (2 / (k - 1)) * (k * (m * m).sum(1) - rs * rs)
    sums = np.column_stack([np.full(n, k), rs, rs * rs, (m * m).sum(1), m, within]).astype(float)
    # per-unit coincidence matrix: each ordered pair of distinct raters adds 1/(k-1)
    coinc = np.zeros((n, L, L))
    pairs = [(a, b) for a in range(k) for b in range(k) if a != b]
    for a, b in pairs:
        np.add.at(coinc, (np.arange(n), c[:, a], c[:, b]), 1 / (k - 1))
    coinc = coinc.reshape(n, L * L)
    upairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    kcells = [c[:, a] * L + c[:, b] for a, b in upairs]
    idx_all = [np.arange(n)[None, :]]
    if n_resamples > 0 and n >= 2:
        idx_all.append(_cached(("draws", n, n_resamples, seed), functools.partial(_draws, n, n_resamples, seed)))
    parts = []
    for idx in idx_all:
        R = idx.shape[0]
        w = _counts(idx, n) if R == 1 else \
            _cached(("counts", "draws", n, n_resamples, seed), functools.partial(_counts, idx, n))
        tot = w @ sums
        st = _icc_from_totals(tot[:, 0] / k, tot[:, 1], tot[:, 2], tot[:, 3], tot[:, 4:4 + k], k)
        st["alpha_interval"] = _alpha_interval(np.column_stack([tot[:, 0], tot[:, 1], tot[:, 3], tot[:, 4 + k]]))
        st["alpha_ordinal"] = _alpha_ordinal((w @ coinc).reshape(R, L, L))
        # each rater pair's confusion matrices, once for both weightings: the draw counts times the items' one-hot
        # cells — sums of whole numbers, exact in any order, so the same floats as a bincount of the drawn cells
        confs = [(w @ np.eye(L * L)[kc]).reshape(R, L, L) for kc in kcells]
        for weights in ("linear", "quadratic"):
            st[f"kappa_{weights}"] = np.mean([_weighted_kappa(conf, weights) for conf in confs], axis=0)
        parts.append(st)
    return _estimates(parts, confidence)


# ------------------------------------------------------------------------------------------- the estimators
def _m(column: str, label: str, unit: str, method: str, n_unit: str = "items", digits: int | None = 2) -> Measure:
    return Measure(column, label, unit, f"{column}_low", f"{column}_high", method=method, n="items",
                   n_unit=n_unit, digits=digits)


#: figure → (label, unit)
PAIR_FIGURES = {
    "spearman": ("Spearman ρ (items)", "coefficient"), "kendall": ("Kendall τ-b (items)", "coefficient"),
    "pearson": ("Pearson r (items)", "coefficient"),
    "sys_spearman": ("Spearman ρ (systems)", "coefficient"), "sys_kendall": ("Kendall τ-b (systems)", "coefficient"),
    "sys_pearson": ("Pearson r (systems)", "coefficient"),
    "bias": ("Mean bias (rater − reference)", "scale points"), "mae": ("Mean absolute error", "scale points"),
    "exact": ("Exact agreement (rounded)", "proportion"), "within_one": ("Within one step (rounded)", "proportion"),
    "kappa_linear": ("Weighted kappa, linear", "coefficient"),
    "kappa_quadratic": ("Weighted kappa, quadratic", "coefficient"),
    "icc2_1": ("ICC(2,1) absolute agreement", "coefficient"),
}
RELIABILITY_FIGURES = {
    "alpha_ordinal": ("Krippendorff's α (ordinal)", "coefficient"),
    "alpha_interval": ("Krippendorff's α (interval)", "coefficient"),
    "icc2_1": ("ICC(2,1) two-way random, absolute agreement, one rater", "coefficient"),
    "icc3_1": ("ICC(3,1) two-way mixed, consistency, one rater", "coefficient"),
    "icc2_k": ("ICC(2,k) two-way random, absolute agreement, mean of k raters", "coefficient"),
    "kappa_linear": ("Weighted kappa, linear (mean over rater pairs)", "coefficient"),
    "kappa_quadratic": ("Weighted kappa, quadratic (mean over rater pairs)", "coefficient"),
}


def _pair_measures(n_resamples: int, stratified: bool = True) -> list[Measure]:
    out = [Measure("items", "Items", "count", note=None), Measure("systems", "Systems", "count", note=None)]
    within = ", items resampled within each system" if stratified else ""
    for f, (label, unit) in PAIR_FIGURES.items():
        method = bootstrap_method(n_resamples, paired=f in ("bias", "mae")) + within
        out.append(_m(f, label, unit, method, digits=1 if unit == "proportion" else 2))
    return out


def _rows(rows: list[dict], figures: dict, measures: list[Measure], keys: Sequence[str],
          confidence: float) -> Results:
    frame = pd.DataFrame(rows)
    for f in figures:
        if f in frame.columns:
            v = frame.pop(f)
            frame[f] = [t[0] for t in v]
            frame[f"{f}_low"] = [t[1] for t in v]
            frame[f"{f}_high"] = [t[2] for t in v]
    return results(frame, measures, level=confidence, keys=keys)


def _one_thread(fn):
    """Run ``fn`` with BLAS on one thread: the estimators' matrix products are small, and a shared machine's thread
    pool costs more than it gives (threadpoolctl, scikit-learn's dependency)."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            return fn(*args, **kwargs)

    return run


@_one_thread
def score_agreement(df: pd.DataFrame, judges: Sequence[str] | None = None, *, humans: Sequence[str] | None = None,
                    by: Sequence[str] = ("criterion",), systems: str | None = "subset",
                    scale: tuple[float, float, float] | None = None, n_resamples: int = 1000,
                    confidence: float = 0.95, seed: int = 0) -> Results:
    """Each judge (× strategy) against the mean of the human raters, per design cell ``by``.

    Parameters
    ----------
    df : DataFrame
        A tidy score table (``score``; the humans as raters beside the judges, e.g. :func:`evallab.datasets.
        load_hanna`).
    judges : sequence of str, optional
        Judge labels (``judge`` or ``judge · strategy``) to compare; None = every non-human rater.
    humans : sequence of str, optional
        The human raters; None = the judges whose ``role`` is ``human``.
    by : sequence of str, default ("criterion",)
        Design columns: one row per (by…, rater).
    systems : str or None, default "subset"
        Column naming each item's system for the system-level correlations (None: left out).
    scale : (min, max, step), optional
        Default: the table's declared scale (:func:`scale_of`).
    n_resamples, confidence, seed
        The item bootstrap.

    Returns
    -------
    Results
        One row per (by…, ``rater``): ``reference`` (``human mean``), ``items``, ``systems`` and every figure of
        :func:`pair_statistics` with ``_low``/``_high`` bounds. Items where the judge or any human lacks a score
        are left out of that row.

    Raises
    ------
    DesignError
        A verdict-only table (:func:`require_scores`), no human raters, a ``by`` column the table lacks.

    Examples
    --------
    >>> from evallab.datasets import load_hanna
    >>> t = load_hanna(criteria=["Coherence"], judges=["ChatGPT"], prompts=[1])
    >>> r = score_agreement(t, n_resamples=0)
    >>> r.loc[0, "rater"], round(float(r.loc[0, "spearman"]), 3)
    ('ChatGPT · prompt 1', 0.447)
    """
    d = require_scores(_slim(df, by), what="score_agreement (weighted kappa, ICC, correlations, bias)",
                       instead="evallab.metrics.cohen_kappa_vs_gold or accuracy (a judge against gold), or report 01")
    hs = humans_of(d, humans)
    missing = [c for c in by if c not in d.columns]
    if missing:
        raise DesignError(f"by={list(by)}: the table has no column {missing[0]!r}", column=missing[0])
    sc = scale_of(d, scale)
    labels = V.rater_label(d)
    js = list(judges) if judges else sorted(set(map(str, labels.unique())) - set(hs))
    rows = []
    for key, g in (d.groupby(list(by), observed=True, sort=True) if by else [((), d)]):
        w = wide(g, [*hs, *js])
        missing_h = [h for h in hs if h not in w.columns]
        if missing_h:
            continue
        ref = w[hs]
        ref_mean = ref.mean(axis=1, skipna=False).to_numpy(float)
        ref_ok = ref.notna().all(axis=1).to_numpy()
        sysv = w.index.get_level_values("subset").to_numpy() if systems else None
        for j in js:
            if j not in w.columns:
                continue
            ok = ref_ok & w[j].notna().to_numpy()
            st = pair_statistics(w[j].to_numpy(float), ref_mean, sysv, scale=sc, n_resamples=n_resamples,
                                 confidence=confidence, seed=seed)
            key_d = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
            rows.append({**key_d, "rater": j, "reference": HUMAN_MEAN, "items": int(ok.sum()),
                         "systems": int(len(set(sysv[ok]))) if sysv is not None else 0, **st})
    # "within each system" only when there are several: a table without systems is one pool of items
    strat = bool(systems) and any(r["systems"] > 1 for r in rows)
    return _rows(rows, PAIR_FIGURES, _pair_measures(n_resamples, strat), [*by, "rater"], confidence)


@_one_thread
def human_ceiling(df: pd.DataFrame, *, humans: Sequence[str] | None = None, by: Sequence[str] = ("criterion",),
                  systems: str | None = "subset", scale: tuple[float, float, float] | None = None,
                  n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> Results:
    """Leave one rater out: each human against the mean of the OTHER humans, with the figures of
    :func:`score_agreement` — the agreement a judge must reach to be within human disagreement.

    Returns
    -------
    Results
        One row per (by…, human): ``rater`` = the human, ``reference`` = ``mean of the other humans``, the figures
        of :func:`pair_statistics`.

    Raises
    ------
    DesignError
        A verdict-only table, fewer than two human raters.

    Notes
    -----
    The human's reference is the mean of k − 1 humans, the judge's (in :func:`score_agreement`) the mean of k: a
    mean of more raters is less noisy, which favours the judge slightly in correlations.
    """
    d = require_scores(_slim(df, by), what="human_ceiling (each human against the others' mean)",
                       instead="evallab.metrics.alt_test (can the judge replace an annotator) or judge_agreement")
    hs = humans_of(d, humans)
    if len(hs) < 2:
        raise DesignError(f"the human ceiling needs at least two human raters; the table has {hs}", column="judge")
    sc = scale_of(d, scale)
    rows = []
    for key, g in (d.groupby(list(by), observed=True, sort=True) if by else [((), d)]):
        w = wide(g, hs)
        if any(h not in w.columns for h in hs):
            continue
        w = w[w[hs].notna().all(axis=1)]
        sysv = w.index.get_level_values("subset").to_numpy() if systems else None
        for h in hs:
            others = [o for o in hs if o != h]
            st = pair_statistics(w[h].to_numpy(float), w[others].mean(axis=1).to_numpy(float), sysv, scale=sc,
                                 n_resamples=n_resamples, confidence=confidence, seed=seed)
            key_d = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
            rows.append({**key_d, "rater": h, "reference": "mean of the other humans", "items": len(w),
                         "systems": int(len(set(sysv))) if sysv is not None else 0, **st})
    # "within each system" only when there are several: a table without systems is one pool of items
    strat = bool(systems) and any(r["systems"] > 1 for r in rows)
    return _rows(rows, PAIR_FIGURES, _pair_measures(n_resamples, strat), [*by, "rater"], confidence)


@_one_thread
def rater_reliability(df: pd.DataFrame, raters: Sequence[str] | None = None, *, by: Sequence[str] = ("criterion",),
                      scale: tuple[float, float, float] | None = None, n_resamples: int = 1000,
                      confidence: float = 0.95, seed: int = 0) -> Results:
    """Inter-rater agreement of a set of raters (default: the humans) per design cell: Krippendorff's alpha
    (ordinal, interval), ICC(2,1), ICC(3,1), ICC(2,k), and weighted kappa (linear, quadratic) averaged over the
    rater pairs — on the items every rater scored.

    Returns
    -------
    Results
        One row per ``by`` cell: ``raters`` (count), ``items`` and each figure of :data:`RELIABILITY_FIGURES` with
        its item-bootstrap bounds.

    Raises
    ------
    DesignError
        A verdict-only table, fewer than two raters.

    Examples
    --------
    >>> from evallab.datasets import load_hanna
    >>> r = rater_reliability(load_hanna(criteria=["Surprise"], judges=["ChatGPT"], prompts=[1]), n_resamples=0)
    >>> round(float(r.loc[0, "icc2_k"]), 3)
    0.139
    """
    d = require_scores(_slim(df, by), what="rater_reliability (Krippendorff's alpha ordinal/interval, ICC)",
                       instead="evallab.metrics.krippendorff_alpha, fleiss_kappa or judge_agreement (nominal), or "
                               "report 01")
    rs = list(raters) if raters else humans_of(d)
    if len(rs) < 2:
        raise DesignError(f"agreement needs at least two raters; got {rs}", column="judge")
    sc = scale_of(d, scale)
    rows = []
    for key, g in (d.groupby(list(by), observed=True, sort=True) if by else [((), d)]):
        w = wide(g, rs)
        if any(r not in w.columns for r in rs):
            continue
        w = w[w[rs].notna().all(axis=1)]
        st = reliability_statistics(w[rs].to_numpy(float), scale=sc, n_resamples=n_resamples,
                                    confidence=confidence, seed=seed)
        key_d = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        rows.append({**key_d, "raters": len(rs), "items": len(w), **st})
    ms = [Measure("items", "Items", "count", note=None), Measure("raters", "Raters", "count", note=None)]
    ms += [_m(f, label, unit, bootstrap_method(n_resamples)) for f, (label, unit) in RELIABILITY_FIGURES.items()]
    return _rows(rows, RELIABILITY_FIGURES, ms, list(by), confidence)
