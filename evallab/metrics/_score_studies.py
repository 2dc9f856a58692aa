"""Scores in the existing studies (issue 28, item 4): prompt variants and anchor sets compared on the same items,
repetition stability of scores, drift between two judges' scores, and a score cut into pass/fail tuned against gold.

Every estimator reads the tidy score table (``score`` column; :mod:`evallab.verdicts`), keeps each judge and each
design cell ``by`` (default the criterion) apart — scores of different judges or criteria are never pooled — and
puts an item-clustered interval on each figure: a percentile bootstrap over ITEMS, every score of a resampled item
drawn together (the draws of ``scipy.stats.bootstrap(paired=True)``, :func:`evallab.metrics._intervals._draws`).

- :func:`score_shift` — a configuration (prompt variant, anchor set: the ``strategy`` column or any other) against a
  baseline on the same items: the paired mean shift in scale points (leniency inflation on a scale) and the change
  in agreement with the human mean (Δ Spearman's ρ, Δ quadratic-weighted kappa), paired item bootstrap.
- :func:`score_stability` — within-item spread of one rater's samples: the mean within-item standard deviation,
  the share of items whose samples are all equal, and the one-way ICC(1) of the samples (Shrout & Fleiss 1979,
  ICC(1,1); unequal sample counts through the ANOVA's k0, Donner 1986).
- :func:`score_drift` — two judges' scores on the same items: paired mean shift, mean absolute difference, the
  share of items whose rounded score changed, quadratic-weighted kappa between them.
- :func:`score_cut` — a score cut into pass/fail tuned against binary gold (human mean ≥ a threshold, or a gold
  column): ROC AUC (scikit-learn's ``roc_auc_score``), the cut maximising Youden's J (= balanced accuracy) or
  accuracy, the distribution of that cut over item resamples (the cut re-tuned in each), and the pass rate,
  accuracy and Cohen's kappa at the cut.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab._results import Measure, Results, bootstrap_method
from evallab.errors import DesignError
from evallab.metrics._intervals import _check_confidence, _draws
from evallab.metrics._scales import (
    NAN,
    _cached,
    _counts,
    _estimates,
    _interval,
    _m,
    _one_thread,
    _round,
    _rows,
    _slim,
    _table_stats,
    _weighted_kappa,
    humans_of,
    require_scores,
    scale_of,
    wide,
)
from evallab.verdicts import rater_label


# ------------------------------------------------------------------------------------------- shared pieces
def _check_by(d: pd.DataFrame, by: Sequence[str], what: str) -> None:
    """Refuse a ``by`` column the table lacks, and a table of several criteria not split by criterion."""
    missing = [c for c in by if c not in d.columns]
    if missing:
        raise DesignError(f"{what}: by={list(by)}, but the table has no column {missing[0]!r}", column=missing[0])
    if "criterion" in d.columns and "criterion" not in by and d["criterion"].astype("string").nunique() > 1:
        raise DesignError(f"{what}: the table holds {d['criterion'].nunique()} criteria; pass by=['criterion'] "
                          "(scores of different criteria are never pooled)", column="criterion")


def _cells(d: pd.DataFrame, by: Sequence[str]):
    """(key dict, rows) per design cell ``by``."""
    if not by:
        yield {}, d
        return
    for key, g in d.groupby(list(by), observed=True, sort=True):
        yield dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)), g


def _where(key: dict) -> str:
    return f" ({', '.join(f'{k} {v}' for k, v in key.items())})" if key else ""


def _index(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """The identity row (the estimate) then the item resamples, shape (1 + R, n)."""
    if n_resamples <= 0 or n < 2:
        return np.arange(n)[None, :]
    return _cached(("draws+estimate", n, n_resamples, seed),
                   lambda: np.vstack([np.arange(n)[None, :], _draws(n, n_resamples, seed)]))


def _weights(idx: np.ndarray, n: int) -> np.ndarray:
    """How often each item is drawn in each row of ``idx`` (1 + R, n), kept for the next comparison on as many
    items (the same draws; known by the first item of every row and the first eight of the last)."""
    return _cached(("counts+estimate", n, idx.shape[0], idx[:, 0].tobytes(), idx[-1, :8].tobytes()),
                   functools.partial(_counts, idx, n))


def _triple(dist: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """(estimate, low, high): row 0 the estimate, the rest the resampled values (percentile interval)."""
    dist = np.asarray(dist, float)
    return (float(dist[0]), *(_interval(dist[1:], confidence) if len(dist) > 1 else (NAN, NAN)))


def _triples(dists: dict[str, np.ndarray], confidence: float) -> dict[str, tuple[float, float, float]]:
    """:func:`_triple` of each figure's distribution, the intervals computed together
    (:func:`evallab.metrics._scales._estimates`)."""
    ds = {f: np.asarray(v, float) for f, v in dists.items()}
    if not all(len(v) > 1 for v in ds.values()):
        return {f: _triple(v, confidence) for f, v in ds.items()}
    return _estimates([{f: v[:1] for f, v in ds.items()}, {f: v[1:] for f, v in ds.items()}], confidence)


def _agreement_dists(x: np.ndarray, y: np.ndarray, idx: np.ndarray,
                     scale: tuple[float, float, float]) -> dict[str, np.ndarray]:
    """Spearman's ρ (midranks, as scipy's ``spearmanr``) and quadratic-weighted kappa (on the scores rounded to the
    scale's steps, as scikit-learn's ``cohen_kappa_score(weights="quadratic")``) of ``x`` against ``y`` in each row
    of ``idx``: both from the resampled contingency table of their distinct values."""
    lo, hi, step = scale
    L = int(round((hi - lo) / step)) + 1
    vx, ix = np.unique(x, return_inverse=True)
    vy, iy = np.unique(y, return_inverse=True)
    ncell = len(vx) * len(vy)
    R = idx.shape[0]
    cell = (ix * len(vy) + iy)[idx]
    T = np.bincount((np.arange(R)[:, None] * ncell + cell).ravel(), minlength=R * ncell).reshape(
        R, len(vx), len(vy)).astype(float)
    k = np.clip(_round(x, lo, step), 0, L - 1) * L + np.clip(_round(y, lo, step), 0, L - 1)
    # the rounded confusion matrices: draw counts times the items' one-hot cells (whole numbers: the same floats as
    # a bincount of the drawn cells)
    conf = (_weights(idx, len(x)) @ np.eye(L * L)[k]).reshape(R, L, L)
    return {"spearman": _table_stats(T, vx, vy)["spearman"], "kappa_quadratic": _weighted_kappa(conf, "quadratic")}


def _measures(figures: dict, method: str, digits_of=None) -> list[Measure]:
    out = [Measure("items", "Items", "count", note=None)]
    for f, (label, unit) in figures.items():
        out.append(_m(f, label, unit, method, digits=(digits_of or {}).get(f, 1 if unit == "proportion" else 2)))
    return out


def _float_scores(d: pd.DataFrame) -> pd.DataFrame:
    return d.assign(score=pd.to_numeric(d["score"], errors="coerce").astype(float))


# ------------------------------------------------------------------------------------------- prompt variants
#: figure → (label, unit) of :func:`score_shift`
SHIFT_FIGURES = {
    "shift": ("Paired mean shift (configuration − baseline)", "scale points"),
    "spearman_baseline": ("Spearman ρ vs human mean, baseline", "coefficient"),
    "spearman": ("Spearman ρ vs human mean, configuration", "coefficient"),
    "d_spearman": ("Δ Spearman ρ vs human mean (configuration − baseline)", "coefficient"),
    "d_kappa_quadratic": ("Δ quadratic-weighted kappa vs human mean (configuration − baseline)", "coefficient"),
}


@_one_thread
def score_shift(df: pd.DataFrame, *, between: str = "strategy", baseline: str | None = None,
                by: Sequence[str] = ("criterion",), humans: Sequence[str] | None = None,
                scale: tuple[float, float, float] | None = None, n_resamples: int = 1000, confidence: float = 0.95,
                seed: int = 0) -> Results:
    """Each configuration (prompt variant, anchor set …) of each judge against the judge's baseline configuration,
    on the same items: the paired mean shift in scale points and the change in agreement with the human mean.

    Parameters
    ----------
    df : DataFrame
        A tidy score table (``score``), e.g. :func:`evallab.datasets.load_hanna` (four prompt variants per judge in
        ``strategy``); the human raters (``role`` = ``human`` or ``humans``), when present, give the reference.
    between : str, default "strategy"
        The column naming the configuration (HANNA's prompt variant; an anchor-set column).
    baseline : str, optional
        The baseline configuration; None = each judge's first configuration in sorted order (HANNA: ``prompt 1``).
    by : sequence of str, default ("criterion",)
        Design columns; one row per (by…, judge, configuration). A table of several criteria must be split by them.
    humans : sequence of str, optional
        The human raters; None = the judges whose ``role`` is ``human`` (none: the agreement figures are left out).
    scale : (min, max, step), optional
        The scale kappa rounds to (half up); default the table's declared scale.
    n_resamples, confidence, seed
        The paired item bootstrap (``n_resamples`` 0: no intervals).

    Returns
    -------
    Results
        One row per (by…, ``judge``, ``configuration``) other than the baseline: ``baseline``, ``items`` (the items
        the judge scored under EVERY configuration and every human rated: all of a judge's comparisons are on the
        same items), ``shift`` = mean over items of (configuration − baseline)
        score, in scale points (positive: the configuration is more lenient — leniency inflation on a scale);
        ``spearman_baseline`` and ``spearman`` (each against the human mean), ``d_spearman`` and
        ``d_kappa_quadratic`` (configuration − baseline), each with ``_low``/``_high`` bounds of a paired item
        bootstrap (percentile; both configurations and the humans of a resampled item drawn together). A judge's
        several samples of an item are averaged first.

    Raises
    ------
    DesignError
        A verdict-only table; a ``by`` or ``between`` column the table lacks; several criteria not split by; a
        judge whose configurations share no item (one line naming the judge and the configurations);
        a ``baseline`` no judge has.

    References
    ----------
    Spearman's ρ as ``scipy.stats.spearmanr``; weighted kappa, Cohen (1968), as scikit-learn's
    ``cohen_kappa_score(weights="quadratic")``; the paired bootstrap: Efron & Tibshirani (1993), ch. 13.

    Examples
    --------
    >>> from evallab.datasets import load_hanna
    >>> t = load_hanna(criteria=["Coherence"], judges=["ChatGPT"], prompts=[1, 2])
    >>> r = score_shift(t, n_resamples=0)
    >>> r.loc[0, "configuration"], round(float(r.loc[0, "shift"]), 3)
    ('prompt 2', -0.007)
    """
    _check_confidence(confidence)
    # only the columns read (criterion: _check_by's check of unsplit criteria): a rating table is long, and
    # require_scores selects its scored rows
    d = require_scores(_slim(df, [*by, between, "criterion"]), what="score_shift", instead="anchor_effect")
    if between not in d.columns:
        raise DesignError(f"score_shift: between={between!r}, but the table has no such column", column=between)
    _check_by(d, by, "score_shift")
    d = d[[c for c in dict.fromkeys([*by, between, "item_id", "judge", "role", "score", "subset", "scale_min",
                                     "scale_max", "scale_step", "scale_level"]) if c in d.columns]]
    hs = humans_of(d, humans) if (humans or "role" in d.columns) else []
    sc = scale_of(d, scale)
    is_h = d["judge"].astype(str).isin(hs).to_numpy()
    conf_ = d[between].astype("string").fillna("").where(~is_h, "")
    d = d.assign(strategy=conf_)  # wide() labels each judge's column ``judge · configuration``
    jc = pd.DataFrame({"j": d.loc[~is_h, "judge"].astype(str), "c": conf_[~is_h].astype(str)}).drop_duplicates()
    pairs = sorted(zip(jc["j"], jc["c"], strict=True))
    configs: dict[str, list[str]] = {}
    for j, c in pairs:
        configs.setdefault(j, []).append(c)
    lab = {(j, c): (j if c == "" else f"{j} · {c}") for j, c in pairs}
    rows, seen_base = [], False
    for key, g in _cells(d, by):
        w = wide(g, [*hs, *lab.values()])
        ref = None
        if hs:
            if any(x not in w.columns for x in hs):
                continue
            ref = w[hs].mean(axis=1, skipna=False).to_numpy(float)
        for judge, levels in configs.items():
            base = levels[0] if baseline is None else str(baseline)
            if base not in levels or lab[(judge, base)] not in w.columns:
                continue
            seen_base = True
            cols = [lab[(judge, c)] for c in levels if lab[(judge, c)] in w.columns]
            X = w[cols].to_numpy(float)
            ok = ~np.isnan(X).any(axis=1) & (~np.isnan(ref) if ref is not None else True)
            if not ok.any():
                raise DesignError(f"score_shift: {judge}'s configurations ({between} {', '.join(map(repr, levels))})"
                                  f" share no item{_where(key)}; a paired shift needs the same items",
                                  column=between)
            X = X[ok]
            n = len(X)
            idx = _index(n, n_resamples, seed)
            w8 = _weights(idx, n)
            ib = cols.index(lab[(judge, base)])
            ab = _agreement_dists(X[:, ib], ref[ok], idx, sc) if ref is not None else None
            for c in levels:
                if c == base or lab[(judge, c)] not in w.columns:
                    continue
                xc = X[:, cols.index(lab[(judge, c)])]
                dists = {"shift": w8 @ (xc - X[:, ib]) / n}
                if ab is not None:
                    ac = _agreement_dists(xc, ref[ok], idx, sc)
                    dists["spearman_baseline"] = ab["spearman"]
                    dists["spearman"] = ac["spearman"]
                    dists["d_spearman"] = ac["spearman"] - ab["spearman"]
                    dists["d_kappa_quadratic"] = ac["kappa_quadratic"] - ab["kappa_quadratic"]
                st = _triples(dists, confidence)
                rows.append({**key, "judge": judge, "configuration": c, "baseline": base, "items": n, **st})
    if baseline is not None and not seen_base:
        raise DesignError(f"score_shift: no judge has rows with {between} {baseline!r}", column=between)
    method = bootstrap_method(n_resamples, paired=True)
    return _rows(rows, SHIFT_FIGURES, _measures(SHIFT_FIGURES, method), [*by, "judge", "configuration"],
                 confidence)


# ------------------------------------------------------------------------------------------- repetitions
#: figure → (label, unit) of :func:`score_stability`
STABILITY_FIGURES = {
    "within_sd": ("Mean within-item SD across samples", "scale points"),
    "all_equal": ("Items with all samples equal", "proportion"),
    "icc1": ("ICC(1) of the samples (one-way random, one sample)", "coefficient"),
}


def _stability_dists(k: np.ndarray, mean: np.ndarray, sd: np.ndarray, equal: np.ndarray,
                     w: np.ndarray) -> dict[str, np.ndarray]:
    """Within-item SD, all-equal share and ICC(1) from per-item sample counts ``k``, means, SDs (ddof 1) and
    all-equal flags, weighted by how often each item is drawn (rows of ``w``)."""
    a = w.sum(1)
    N = w @ k
    s1 = w @ (k * mean)
    ssb = w @ (k * mean * mean) - s1 * s1 / N
    ssw = w @ ((k - 1) * sd * sd)
    with np.errstate(invalid="ignore", divide="ignore"):
        msb, msw = ssb / (a - 1), ssw / (N - a)
        k0 = (N - (w @ (k * k)) / N) / (a - 1)
        icc = (msb - msw) / (msb + (k0 - 1) * msw)
    return {"within_sd": (w @ sd) / a, "all_equal": (w @ equal.astype(float)) / a, "icc1": icc}


@_one_thread
def score_stability(df: pd.DataFrame, raters: Sequence[str] | None = None, *, by: Sequence[str] = ("criterion",),
                    n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> Results:
    """Repetition stability of scores: how far one rater's samples of the same item spread.

    Parameters
    ----------
    df : DataFrame
        A tidy score table with several samples per (item, rater) (``sample`` 0, 1, …).
    raters : sequence of str, optional
        Rater labels (``judge`` or ``judge · strategy``); None = every rater with repeated samples.
    by : sequence of str, default ("criterion",)
        Design columns; one row per (by…, ``rater``).
    n_resamples, confidence, seed
        The item bootstrap.

    Returns
    -------
    Results
        One row per (by…, ``rater``) with repeated samples: ``items`` (with ≥ 2 samples; the others are left out),
        ``samples`` (median per item), ``within_sd`` = the mean over items of the samples' standard deviation
        (ddof 1, scale points), ``all_equal`` = share of items whose samples are all equal, ``icc1`` = ICC(1): the
        one-way random-effects intraclass correlation of the samples (Shrout & Fleiss 1979, ICC(1,1); with unequal
        counts the ANOVA's k0 = (N − Σk²/N)/(a − 1)); each with item-bootstrap bounds (percentile, an item's samples
        drawn together).

    Raises
    ------
    DesignError
        A verdict-only table; a missing ``by`` column; several criteria not split by; no item with two or more
        samples of one rater (one line: the table has one sample per item).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"item_id": ["a", "a", "b", "b"], "judge": "J", "sample": [0, 1, 0, 1],
    ...                   "score": [3.0, 4.0, 2.0, 2.0]})
    >>> r = score_stability(t, by=(), n_resamples=0)
    >>> round(float(r.loc[0, "within_sd"]), 4), float(r.loc[0, "all_equal"])
    (0.3536, 0.5)
    """
    _check_confidence(confidence)
    d = require_scores(_slim(df, [*by, "criterion"]), what="score_stability", instead="repetition_stability")
    _check_by(d, by, "score_stability")
    d = _float_scores(d.assign(_rater=rater_label(d)))
    if raters:
        d = d[d["_rater"].isin(list(raters))]
    rows = []
    for key, g in _cells(d, by):
        for rater, gr in g.groupby("_rater", observed=True, sort=True):
            s = gr.groupby("item_id", observed=True)["score"].agg(["count", "mean", "std", "min", "max"])
            s = s[s["count"] >= 2]
            if s.empty:
                continue
            n = len(s)
            idx = _index(n, n_resamples, seed)
            dist = _stability_dists(s["count"].to_numpy(float), s["mean"].to_numpy(float),
                                    s["std"].to_numpy(float), (s["max"] == s["min"]).to_numpy(), _weights(idx, n))
            rows.append({**key, "rater": str(rater), "items": n, "samples": float(s["count"].median()),
                         **_triples(dist, confidence)})
    if not rows:
        raise DesignError("score_stability needs repeated samples: no item has two or more samples of one rater "
                          "(this table has one sample per item and rater)", column="sample")
    ms = _measures(STABILITY_FIGURES, bootstrap_method(n_resamples))
    ms.insert(1, Measure("samples", "Samples per item (median)", "count", note=None))
    return _rows(rows, STABILITY_FIGURES, ms, [*by, "rater"], confidence)


# ------------------------------------------------------------------------------------------- two judges
#: figure → (label, unit) of :func:`score_drift`
DRIFT_FIGURES = {
    "shift": ("Paired mean shift (candidate − baseline)", "scale points"),
    "mae": ("Mean absolute difference", "scale points"),
    "changed": ("Items whose rounded score changed", "proportion"),
    "kappa_quadratic": ("Quadratic-weighted kappa, candidate vs baseline", "coefficient"),
}


@_one_thread
def score_drift(df: pd.DataFrame, baseline: str, candidate: str, *, by: Sequence[str] = ("criterion",),
                scale: tuple[float, float, float] | None = None, n_resamples: int = 1000, confidence: float = 0.95,
                seed: int = 0) -> Results:
    """Drift between two judges' scores on the same items: how far the candidate moved from the baseline.

    Parameters
    ----------
    df : DataFrame
        A tidy score table.
    baseline, candidate : str
        Rater labels: ``judge`` or ``judge · strategy`` (HANNA: ``ChatGPT · prompt 1``).
    by : sequence of str, default ("criterion",)
        Design columns; one row per cell.
    scale : (min, max, step), optional
        The scale the scores are rounded to (half up) for ``changed`` and kappa; default the table's.
    n_resamples, confidence, seed
        The paired item bootstrap.

    Returns
    -------
    Results
        One row per ``by`` cell: ``baseline``, ``candidate``, ``items`` (scored by both), ``shift`` = mean of
        (candidate − baseline) in scale points, ``mae`` = mean |candidate − baseline|, ``changed`` = share of items
        whose rounded score differs, ``kappa_quadratic`` = quadratic-weighted Cohen's kappa between the rounded
        scores (scikit-learn's ``cohen_kappa_score(weights="quadratic")``), each with paired item-bootstrap bounds
        (percentile).

    Raises
    ------
    DesignError
        A verdict-only table; a label the table lacks (the available ones named); a cell where the two share no
        item; several criteria not split by.

    Examples
    --------
    >>> from evallab.datasets import load_hanna
    >>> t = load_hanna(criteria=["Coherence"], judges=["ChatGPT", "Mistral-7B"], prompts=[1])
    >>> r = score_drift(t, "ChatGPT · prompt 1", "Mistral-7B · prompt 1", n_resamples=0)
    >>> round(float(r.loc[0, "mae"]), 3)
    0.975
    """
    _check_confidence(confidence)
    d = require_scores(_slim(df, [*by, "criterion"]), what="score_drift", instead="compare_judges")
    _check_by(d, by, "score_drift")
    lab_all = rater_label(d)
    labels = set(map(str, lab_all.unique()))
    for name, lab in (("baseline", baseline), ("candidate", candidate)):
        if lab not in labels:
            raise DesignError(f"score_drift: {name} {lab!r} is not a rater of this table; expected one of "
                              f"{sorted(labels)[:8]}{' …' if len(labels) > 8 else ''}", column="judge")
    lo, hi, step = scale_of(d, scale)
    L = int(round((hi - lo) / step)) + 1
    d = d[lab_all.isin([baseline, candidate]).to_numpy(dtype=bool)]
    rows = []
    for key, g in _cells(d, by):
        w = wide(g, [baseline, candidate])
        if baseline not in w.columns or candidate not in w.columns:
            continue
        ok = w[baseline].notna() & w[candidate].notna()
        if not ok.any():
            raise DesignError(f"score_drift: {baseline} and {candidate} share no item{_where(key)}", column="item_id")
        xb, xc = w.loc[ok, baseline].to_numpy(float), w.loc[ok, candidate].to_numpy(float)
        n = len(xb)
        idx = _index(n, n_resamples, seed)
        wt = _weights(idx, n)
        rb, rc = np.clip(_round(xb, lo, step), 0, L - 1), np.clip(_round(xc, lo, step), 0, L - 1)
        R = idx.shape[0]
        conf = np.bincount((np.arange(R)[:, None] * L * L + (rb * L + rc)[idx]).ravel(),
                           minlength=R * L * L).reshape(R, L, L).astype(float)
        st = {"shift": wt @ (xc - xb) / n, "mae": wt @ np.abs(xc - xb) / n, "changed": wt @ (rb != rc) / n,
              "kappa_quadratic": _weighted_kappa(conf, "quadratic")}
        rows.append({**key, "baseline": baseline, "candidate": candidate, "items": n,
                     **_triples(st, confidence)})
    return _rows(rows, DRIFT_FIGURES, _measures(DRIFT_FIGURES, bootstrap_method(n_resamples, paired=True)),
                 list(by), confidence)


# ------------------------------------------------------------------------------------------- pass/fail cut
#: figure → (label, unit) of :func:`score_cut`
CUT_FIGURES = {
    "auc": ("ROC AUC vs gold", "coefficient"),
    "cut": ("Chosen cut (pass: score ≥ cut)", "scale points"),
    "pass_rate": ("Pass rate at the cut", "proportion"),
    "balanced_accuracy": ("Balanced accuracy at the cut", "proportion"),
    "accuracy": ("Accuracy at the cut", "proportion"),
    "kappa": ("Cohen's kappa at the cut vs gold", "coefficient"),
}
CUT_RULES = {"youden": "Youden's J = TPR − FPR (equivalently balanced accuracy)", "accuracy": "accuracy"}


def _cut_dists(x: np.ndarray, gold: np.ndarray, idx: np.ndarray, rule: str) -> dict[str, np.ndarray]:
    """AUC, the chosen cut and the figures at it in each row of ``idx``, from the counts of positives and negatives
    at each distinct score: AUC = P(score⁺ > score⁻) + ½ P(tie) (the Mann–Whitney form of ``roc_auc_score``); the
    candidate cuts are the distinct scores present in the row, the highest among equally good ones kept."""
    v, iv = np.unique(x, return_inverse=True)
    V, R = len(v), idx.shape[0]
    code = (iv * 2 + (gold > 0.5)).astype(np.int64)  # (value, gold class) of each item
    # draw counts times the items' one-hot (value, class): whole numbers, the same floats as a bincount of the draws
    counts = (_weights(idx, len(x)) @ np.eye(2 * V)[code]).reshape(R, V, 2)
    neg, pos = counts[..., 0], counts[..., 1]
    tot = neg + pos
    P, N = pos.sum(1), neg.sum(1)
    n = P + N
    below = np.cumsum(neg, 1) - neg  # negatives strictly below each value
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = (pos * (below + 0.5 * neg)).sum(1) / (P * N)
        tp = np.cumsum(pos[:, ::-1], 1)[:, ::-1]  # pass = score ≥ v
        fp = np.cumsum(neg[:, ::-1], 1)[:, ::-1]
        tpr, fpr = tp / P[:, None], fp / N[:, None]
        score = tpr - fpr if rule == "youden" else (tp + (N[:, None] - fp)) / n[:, None]
    score = np.where(tot > 0, score, -np.inf)[:, ::-1]  # highest cut first: argmax keeps it among ties
    j = V - 1 - np.argmax(score, 1)
    r = np.arange(R)
    TP, FP = tp[r, j], fp[r, j]
    TN = N - FP
    with np.errstate(invalid="ignore", divide="ignore"):
        pass_rate, acc = (TP + FP) / n, (TP + TN) / n
        pe = pass_rate * P / n + (1 - pass_rate) * N / n
        return {"auc": auc, "cut": v[j], "pass_rate": pass_rate,
                "balanced_accuracy": (TP / P + TN / N) / 2, "accuracy": acc, "kappa": (acc - pe) / (1 - pe)}


def _cut_interval(dist: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile interval of the resampled cuts, ends at cuts that occur (lower / higher order statistic): a
    single cut in ≥ 95% of the resamples gives [cut, cut]."""
    d = dist[np.isfinite(dist)]
    if len(d) < 2:
        return NAN, NAN
    a = (1 - confidence) / 2
    return float(np.quantile(d, a, method="lower")), float(np.quantile(d, 1 - a, method="higher"))


def _gold_of(g: pd.DataFrame, gold: str, threshold: float) -> pd.Series:
    """Binary gold per item from the ``gold`` column: pass/fail, true/false, 1/0, or a number ≥ ``threshold``."""
    v = g[["item_id", gold]].dropna().drop_duplicates("item_id").set_index("item_id")[gold]
    num = pd.to_numeric(v, errors="coerce")
    if num.notna().all():
        return num.astype(float) if set(num.unique()) <= {0, 1} else (num >= threshold).astype(float)
    t = v.astype(str).str.strip().str.lower()
    m = {"pass": 1.0, "fail": 0.0, "true": 1.0, "false": 0.0, "1": 1.0, "0": 0.0}
    bad = t[~t.isin(list(m))]
    if len(bad):
        raise DesignError(f"score_cut: gold column {gold!r} holds {bad.iloc[0]!r} for item {bad.index[0]!r}; "
                          "expected pass/fail, true/false, 1/0 or a number", column=gold)
    return t.map(m)


@_one_thread
def score_cut(df: pd.DataFrame, raters: Sequence[str] | None = None, *, threshold: float = 3.0,
              gold: str | None = None, humans: Sequence[str] | None = None, by: Sequence[str] = ("criterion",),
              rule: str = "youden", n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> Results:
    """A score cut into pass/fail tuned against binary gold: ROC AUC, the chosen cut and its interval, and the pass
    rate and agreement at the cut — for users who gate on a threshold.

    Parameters
    ----------
    df : DataFrame
        A tidy score table.
    raters : sequence of str, optional
        Rater labels (``judge`` or ``judge · strategy``) to cut; None = every non-human rater.
    threshold : float, default 3.0
        Gold is "pass" where the human mean (or a numeric ``gold`` column) is ≥ ``threshold``, scale points.
    gold : str, optional
        A column holding each item's gold pass label (pass/fail, true/false, 1/0, or a number compared with
        ``threshold``); None = the human mean of the human raters.
    humans : sequence of str, optional
        The human raters when ``gold`` is None; None = the judges whose ``role`` is ``human``.
    by : sequence of str, default ("criterion",)
        Design columns; one row per (by…, ``rater``).
    rule : {"youden", "accuracy"}
        The cut kept among the rater's distinct scores (pass = score ≥ cut): the one maximising Youden's J = TPR −
        FPR (Youden 1950; the same cut maximises balanced accuracy), or accuracy; the highest among ties.
    n_resamples, confidence, seed
        The item bootstrap.

    Returns
    -------
    Results
        One row per (by…, ``rater``) with both gold classes: ``items``, ``gold_rate`` (share passing gold), ``auc``
        (the Mann–Whitney form P(score⁺ > score⁻) + ½ P(tie), equal to ``sklearn.metrics.roc_auc_score``), ``cut``,
        ``pass_rate`` (share of items with score ≥ cut), ``balanced_accuracy``, ``accuracy`` and ``kappa`` (Cohen's
        kappa of pass/fail vs gold) at the cut, each with item-bootstrap bounds (percentile). The cut is tuned again
        in each resample: the cut's interval is the percentile interval of the chosen cut's distribution over item
        resamples (its ends are cuts that occur), and the figures at the cut include the tuning's variability.

    Raises
    ------
    DesignError
        A verdict-only table; no human raters and no ``gold``; an unreadable gold label; an unknown ``rule``; no
        rater with both gold classes on its items; several criteria not split by.

    Examples
    --------
    >>> from evallab.datasets import load_hanna
    >>> t = load_hanna(criteria=["Coherence"], judges=["ChatGPT"], prompts=[1])
    >>> r = score_cut(t, n_resamples=0)
    >>> round(float(r.loc[0, "auc"]), 3), float(r.loc[0, "cut"])
    (0.655, 1.3333333333333333)
    """
    _check_confidence(confidence)
    if rule not in CUT_RULES:
        raise DesignError(f"score_cut: rule {rule!r}; expected one of {sorted(CUT_RULES)}", column="rule")
    d = require_scores(_slim(df, [*by, "criterion", *([gold] if gold else [])]), what="score_cut",
                       instead="pass_rate")
    _check_by(d, by, "score_cut")
    if gold and gold not in d.columns:
        raise DesignError(f"score_cut: gold={gold!r}, but the table has no such column", column=gold)
    d = d[[c for c in dict.fromkeys([*by, "item_id", "judge", "strategy", "subset", "role", "score", gold])
           if c and c in d.columns]]
    hs = [] if gold else humans_of(d, humans)
    if not gold and not hs:
        raise DesignError("score_cut needs gold: human raters (role human, or humans=[...]) or a gold column",
                          column="role")
    lab_all = rater_label(d)
    js = list(raters) if raters else sorted(set(map(str, lab_all.unique())) - set(hs))
    d = d[lab_all.isin([*hs, *js]).to_numpy(dtype=bool)]
    rows = []
    for key, g in _cells(d, by):
        w = wide(g, [*hs, *js])
        if gold:
            yb = _gold_of(g, gold, threshold).reindex(w.index.get_level_values("item_id")).to_numpy(float)
        elif any(h not in w.columns for h in hs):
            continue
        else:
            m = w[hs].mean(axis=1, skipna=False).to_numpy(float)
            yb = np.where(np.isnan(m), np.nan, (m >= threshold).astype(float))
        for rater in js:
            if rater not in w.columns:
                continue
            xs = w[rater].to_numpy(float)
            ok = ~np.isnan(xs) & ~np.isnan(yb)
            x, y = xs[ok], yb[ok]
            if len(np.unique(y)) < 2:
                continue
            n = len(x)
            dist = _cut_dists(x, y, _index(n, n_resamples, seed), rule)
            st = _triples(dist, confidence)
            st["cut"] = (float(dist["cut"][0]), *(_cut_interval(dist["cut"][1:], confidence) if n_resamples
                                                   else (NAN, NAN)))
            rows.append({**key, "rater": rater, "items": n, "gold_rate": float(y.mean()), **st})
    if not rows:
        raise DesignError("score_cut: no rater has items of both gold classes (pass and fail at threshold "
                          f"{threshold:g}); a ROC needs both", column=gold or "score")
    method = bootstrap_method(n_resamples)
    retuned = method + ", the cut re-tuned in each resample"
    ms = [Measure("items", "Items", "count", note=None), Measure("gold_rate", "Gold pass rate", "proportion",
                                                                 note=None, digits=1)]
    for f, (label, unit) in CUT_FIGURES.items():
        ms.append(_m(f, label, unit, method if f == "auc" else retuned,
                     digits=1 if unit == "proportion" else 2))
    return _rows(rows, CUT_FIGURES, ms, [*by, "rater"], confidence)
