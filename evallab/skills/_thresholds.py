"""Threshold tuning of the trigger router: every (probe, skill) pair scored with the decision score of each
keryx threshold, ROC and PR curves, and the thresholds maximising F1 / balanced accuracy / MCC / recall at zero
false positives, with bootstrap intervals over skills and a cross-validated estimate (GroupKFold over skills).

- :data:`KERYX_THRESHOLDS`, :func:`pair_scores`, :func:`roc_pr`, :func:`confusion_by_probe`.
- :func:`roc_pr_summary` — ROC AUC and average precision of each decision score beside the base rate, as
  :class:`~evallab.Results`.
- :data:`OBJECTIVES`, :func:`choose_threshold`, :func:`select_nothing_value`, :func:`metric_at`, :func:`fp_at`.
- :func:`tune_thresholds` → :class:`TuningResult` (its ``table`` a :class:`~evallab.Results`: thresholds and
  values with their skill-bootstrap intervals, the cross-validated estimate, keryx's constants).

Every interval here is a percentile bootstrap over SKILLS (a skill's triggers share its description, so its probes
are not independent): :func:`skill_resample_weights` draws the resamples — the same draws as
``scipy.stats.bootstrap`` on the skill indices with the same seed — so the intervals of one figure agree wherever
it is shown (the F1 of a scorer in :func:`tune_thresholds` and :func:`~evallab.skills.compare_scorers`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import auc as _auc
from sklearn.metrics import precision_recall_curve, roc_curve
from sklearn.model_selection import GroupKFold

from evallab._results import Measure, Results, bootstrap_method, results
from evallab.errors import EvallabError
from evallab.metrics._intervals import no_interval_note
from evallab.skills._catalogs import as_catalog
from evallab.skills._trigger_loo import loo_scores, make_probes
from evallab.skills._trigger_select import DESCRIPTION_SUPPORT_THRESHOLD, FORK_THRESHOLD, USE_THRESHOLD

#: the three thresholds keryx uses and the score each applies to (see :func:`pair_scores`)
KERYX_THRESHOLDS = {"select": FORK_THRESHOLD, "use": USE_THRESHOLD, "support": DESCRIPTION_SUPPORT_THRESHOLD}


def pair_scores(catalog, probes: pd.DataFrame | None = None, *, scorer: str = "keryx",
                strip_exclusions: bool = True, threshold: float = FORK_THRESHOLD,
                support_threshold: float = DESCRIPTION_SUPPORT_THRESHOLD,
                scores: tuple[np.ndarray, np.ndarray] | None = None) -> pd.DataFrame:
    """Every (probe, skill) pair scored, with a label and the decision score of each tunable threshold.

    Returns
    -------
    DataFrame, one row per (probe, skill) pair except the probe's same-category neighbours (keryx treats a
    same-category tie as an ambiguity for a human, not a trigger defect, so such pairs are neither positives nor
    negatives): ``probe_id``, ``probe_skill`` (the probe's own skill), ``skill_id``,
    ``label`` (1 when ``skill_id`` is the probe's own skill), ``score`` (leave-one-out full score),
    ``description_score`` (unmodified description-only score), ``outranked`` (a different-category skill strictly
    outscores this one), and three decision scores, −1 where the other conditions of the rule fail:

    - ``d_select`` — ``score`` if not outranked and ``description_score ≥ support_threshold`` (keryx 0.30 applies);
    - ``d_support`` — ``description_score`` if not outranked and ``score ≥ threshold`` (keryx 0.12 applies);
    - ``d_use`` — ``score`` (scout's use/fork bars, 0.55/0.30, apply to the top score alone).
    """
    catalog = as_catalog(catalog)
    probes = make_probes(catalog) if probes is None else probes.reset_index(drop=True)
    full, desc = scores if scores is not None else \
        loo_scores(catalog, probes, scorer=scorer, strip_exclusions=strip_exclusions)
    P, n = full.shape
    cats = np.array([s.category for s in catalog.skills])
    code = pd.factorize(cats)[0]
    C = code.max() + 1
    # best score per (probe, category), then for each skill the best score of any OTHER category
    catmax = np.full((P, C), -np.inf)
    for c in range(C):
        catmax[:, c] = full[:, code == c].max(axis=1)
    top2 = np.sort(catmax, axis=1)[:, -2:] if C > 1 else np.column_stack([np.full(P, -np.inf), catmax[:, -1]])
    first_cat = np.argmax(catmax, axis=1)
    best_other = np.where(code[None, :] == first_cat[:, None], top2[:, [0]], top2[:, [1]])
    outranked = best_other > full
    pos = np.array([catalog.index_of(x) for x in probes.skill_id], dtype=np.int64)
    label = np.zeros((P, n), dtype=np.int8)
    label[np.arange(P), pos] = 1
    ok_support = desc >= support_threshold
    keep = ((code[None, :] != code[pos][:, None]) | (label == 1)).ravel()
    return pd.DataFrame({
        "probe_id": np.repeat(probes.probe_id.to_numpy(), n),
        "probe_skill": np.repeat(probes.skill_id.to_numpy(), n),
        "skill_id": np.tile(np.array(catalog.ids, dtype=object), P),
        "label": label.ravel(),
        "score": full.ravel(),
        "description_score": desc.ravel(),
        "outranked": outranked.ravel(),
        "d_select": np.where(~outranked & ok_support, full, -1.0).ravel(),
        "d_support": np.where(~outranked & (full >= threshold), desc, -1.0).ravel(),
        "d_use": full.ravel(),
    })[keep].reset_index(drop=True)


def roc_pr(pairs: pd.DataFrame, target: str = "select") -> dict:
    """ROC and precision-recall curves of one decision score (scikit-learn ``roc_curve``,
    ``precision_recall_curve``; the two AUCs computed from them as ``roc_auc_score`` and
    ``average_precision_score`` do).

    Returns ``{"fpr", "tpr", "roc_thresholds", "precision", "recall", "pr_thresholds", "roc_auc",
    "average_precision"}`` (arrays and floats; both AUCs NaN when the pairs hold one class only).
    """
    y, d = pairs["label"].to_numpy(), pairs[f"d_{target}"].to_numpy()
    two = len(np.unique(y)) == 2
    with warnings.catch_warnings():  # one class: the curves are meaningless and the AUCs NaN, said without a warning
        if not two:
            warnings.simplefilter("ignore", UndefinedMetricWarning)
        fpr, tpr, th = roc_curve(y, d)
        prec, rec, pth = precision_recall_curve(y, d)
    # the two AUCs from these curves, as roc_auc_score and average_precision_score compute them for 0/1 labels
    # (auc of the ROC curve; the step integral of the precision-recall curve, clipped at 0) — the same floats
    return {"fpr": fpr, "tpr": tpr, "roc_thresholds": th, "precision": prec, "recall": rec, "pr_thresholds": pth,
            "roc_auc": float(_auc(fpr, tpr)) if two else float("nan"),
            "average_precision": float(max(0.0, -np.sum(np.diff(rec) * prec[:-1]))) if two else float("nan")}


#: the measures of :func:`roc_pr_summary`
CURVE_MEASURES = [
    Measure("pairs", "Pairs", "count"),
    Measure("positives", "Positive pairs", "count"),
    Measure("base_rate", "Base rate", "proportion", n="pairs", n_unit="pairs"),
    Measure("average_precision", "Average precision", "coefficient", n="pairs", n_unit="pairs", digits=3),
    Measure("roc_auc", "ROC AUC", "coefficient", n="pairs", n_unit="pairs", digits=3),
]


def roc_pr_summary(pairs: pd.DataFrame, targets: Sequence[str] = ("select", "support", "use")) -> Results:
    """ROC AUC and average precision of each decision score, beside the base rate that bounds what they mean.

    With one own skill per probe against dozens of others nearly every pair is negative; a scorer that ranks at
    random then has average precision equal to the base rate (the positive share) while its ROC AUC is 0.5, and
    ROC AUC, built on the false-positive RATE, stays high even when most selections are wrong. Read average
    precision against ``base_rate``, and ROC AUC beside it, never alone.

    Parameters
    ----------
    pairs : DataFrame
        :func:`pair_scores` output.
    targets : sequence of {"select", "support", "use"}, default all three
        The decision scores (``d_<target>``).

    Returns
    -------
    Results
        One row per target: ``target``, ``pairs``, ``positives`` (counts), ``base_rate`` (positives / pairs, a
        proportion), ``average_precision`` and ``roc_auc`` (:func:`roc_pr`: scikit-learn
        ``average_precision_score``, ``roc_auc_score``; unitless in [0, 1], NaN with the reason in ``note`` when
        a class is absent); measures :data:`CURVE_MEASURES` (n: pairs). No interval.
    """
    rows = []
    for t in targets:
        cur = roc_pr(pairs, t)
        pos = int(pairs["label"].sum())
        note = "" if np.isfinite(cur["roc_auc"]) else \
            f"not computable: every pair is {'positive' if pos else 'negative'} (the curves need both classes)"
        rows.append({"target": t, "pairs": len(pairs), "positives": pos,
                     "base_rate": pos / len(pairs) if len(pairs) else float("nan"),
                     "average_precision": cur["average_precision"], "roc_auc": cur["roc_auc"], "note": note})
    return results(pd.DataFrame(rows, columns=["target", "pairs", "positives", "base_rate", "average_precision",
                                               "roc_auc", "note"]), CURVE_MEASURES, keys=["target"])


def skill_resample_weights(n_skills: int, n_resamples: int, seed: int = 0) -> np.ndarray:
    """How often each skill is drawn in each bootstrap resample: an array (n_resamples, n_skills) of counts.

    The resamples are those of :mod:`evallab.metrics._intervals` — the indices ``scipy.stats.bootstrap`` draws for
    ``n_skills`` units with ``numpy.random.default_rng(seed)`` (checked in the tests) — so every figure resampled
    with one seed uses the same draws and paired differences are paired.
    """
    from evallab.metrics._intervals import _draws  # the one definition of the draws

    idx = _draws(n_skills, n_resamples, seed)
    w = np.zeros((n_resamples, n_skills))
    np.add.at(w, (np.repeat(np.arange(n_resamples), n_skills), idx.ravel()), 1.0)
    return w


def _percentile(dist: np.ndarray, confidence: float, what: str) -> tuple[float, float, str]:
    """Percentile interval of the finite values of a bootstrap distribution: ``(low, high, note)``.

    Resamples where the figure is undefined (NaN) are left out. An interval whose bounds are equal would read
    [x, x] and claim a certainty the data do not hold: it is NaN, and the note says how many resamples sit on the
    point. No finite value: NaN without a note.
    """
    dist = np.asarray(dist, dtype=float)
    dist = dist[np.isfinite(dist)]
    if len(dist) == 0:
        return np.nan, np.nan, ""
    a = (1 - confidence) / 2
    lo, hi = (float(x) for x in np.quantile(dist, [a, 1 - a]))
    if lo == hi:
        return (np.nan, np.nan, f"{float(np.mean(dist == lo)):.0%} of bootstrap resamples give the same {what} "
                                f"({lo:.3g}): the {confidence:.0%} percentile interval is that single point, so none "
                                "is shown")
    return lo, hi, ""


def weighted_curves(y: np.ndarray, d: np.ndarray, weights: np.ndarray,
                    groups: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Average precision and ROC AUC of decision scores ``d`` for labels ``y`` under each row of ``weights`` (a
    pair's weight: how often its probe's skill is drawn), vectorised over the rows.

    The formulas of scikit-learn's ``average_precision_score`` (Σ (R_k − R_{k−1}) P_k over the distinct scores,
    highest first) and ``roc_auc_score`` (trapezoids of the ROC curve, ties counted half) with ``sample_weight``,
    checked against both in the tests.

    Parameters
    ----------
    y, d : arrays of shape (n_pairs,)
        Labels (0/1) and decision scores.
    weights : array of shape (n_rows, n_pairs), or (n_rows, n_groups) with ``groups``
        Each row's weight of every pair, or of every group of pairs.
    groups : int array of shape (n_pairs,), optional
        The group (e.g. the resampled skill) of each pair: pair i weighs ``weights[:, groups[i]]``. The positive and
        negative pairs of each (distinct score, group) are counted once, so the work grows with the groups, not the
        pairs.

    Returns
    -------
    (average_precision, roc_auc) : arrays of shape (n_rows,); NaN where a row weights no positive (or no negative,
    for ROC AUC).
    """
    y = np.asarray(y, dtype=float)
    d = np.asarray(d, dtype=float)
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    levels, level = np.unique(-d, return_inverse=True)  # distinct scores, highest first
    if groups is None:
        groups, n_groups = np.arange(len(d)), len(d)
    else:
        groups = np.asarray(groups, dtype=np.int64)
        n_groups = w.shape[1]
    cell = level * n_groups + groups
    size = len(levels) * n_groups
    pos_in = np.bincount(cell, weights=y, minlength=size).reshape(len(levels), n_groups)
    neg_in = np.bincount(cell, weights=1 - y, minlength=size).reshape(len(levels), n_groups)
    tp = np.cumsum(w @ pos_in.T, axis=1)  # (n_rows, n_levels): weighted positives at or above each score
    fp = np.cumsum(w @ neg_in.T, axis=1)
    pos, neg = tp[:, -1:], fp[:, -1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tp + fp > 0, tp / np.where(tp + fp > 0, tp + fp, 1), 0.0)
        recall = tp / pos
        tpr, fpr = recall, fp / neg
    zero = np.zeros((len(w), 1))
    ap = np.sum(np.diff(np.hstack([zero, recall]), axis=1) * precision, axis=1)
    tpr0, fpr0 = np.hstack([zero, tpr]), np.hstack([zero, fpr])
    auc = np.sum(np.diff(fpr0, axis=1) * (tpr0[:, 1:] + tpr0[:, :-1]) / 2, axis=1)
    ap = np.where(pos[:, 0] > 0, ap, np.nan)
    auc = np.where((pos[:, 0] > 0) & (neg[:, 0] > 0), auc, np.nan)
    return ap, auc


def confusion_by_probe(pairs: pd.DataFrame, target: str = "select", grid: Sequence[float] | None = None):
    """Per-probe confusion counts at every threshold of ``grid`` (predicted positive = decision ≥ threshold).

    Returns ``(probe_ids, probe_skills, grid, counts)`` with ``counts`` of shape (n_probes, n_grid, 4) holding
    TP, FP, FN, TN.
    """
    grid = np.round(np.linspace(0, 1, 101), 10) if grid is None else np.asarray(grid, dtype=float)
    if len(pairs) == 0:
        raise EvallabError("no (probe, skill) pairs to tune on: the catalog gave no probes")
    p = pairs.sort_values(["probe_id"], kind="mergesort")
    ids, start = np.unique(p.probe_id.to_numpy(), return_index=True)
    d = p[f"d_{target}"].to_numpy()
    y = p["label"].to_numpy().astype(bool)
    if len(grid) and np.all(grid[1:] >= grid[:-1]):
        # sorted grid: a pair is predicted positive at the first `above` grid points (those ≤ d; none when d is
        # NaN), so the counts at each threshold are reversed cumulative sums of a (probe, above) histogram —
        # the same whole numbers as summing the (pairs, grid) comparison d ≥ grid below
        n_g = len(grid)
        above = np.where(np.isnan(d), 0, np.searchsorted(grid, d, side="right"))
        probe = np.repeat(np.arange(len(ids)), np.diff(np.append(start, len(p))))
        cell = probe * (n_g + 1) + above
        hist_p = np.bincount(cell[y], minlength=len(ids) * (n_g + 1)).reshape(len(ids), n_g + 1)
        hist_n = np.bincount(cell[~y], minlength=len(ids) * (n_g + 1)).reshape(len(ids), n_g + 1)
        tp = np.cumsum(hist_p[:, ::-1], axis=1)[:, ::-1][:, 1:]
        fp = np.cumsum(hist_n[:, ::-1], axis=1)[:, ::-1][:, 1:]
    else:
        pred = d[:, None] >= grid[None, :]
        tp = np.add.reduceat(pred & y[:, None], start, axis=0)
        fp = np.add.reduceat(pred & ~y[:, None], start, axis=0)
    npos = np.add.reduceat(y.astype(np.int64), start)[:, None]
    nn = np.diff(np.append(start, len(p)))[:, None]
    fn = npos - tp
    tn = (nn - npos) - fp
    skills = p.probe_skill.to_numpy()[start]
    return ids, skills, grid, np.stack([tp, fp, fn, tn], axis=-1).astype(float)


def _metrics(c: np.ndarray) -> dict[str, np.ndarray]:
    """Objective values per threshold from summed counts (..., 4) = TP, FP, FN, TN.

    accuracy = (TP + TN) / all; F1 = 2TP / (2TP + FP + FN); balanced accuracy = (TPR + TNR) / 2 (Brodersen et al.
    2010; scikit-learn ``balanced_accuracy_score``); MCC = (TP·TN − FP·FN) / √((TP+FP)(TP+FN)(TN+FP)(TN+FN))
    (Matthews 1975; scikit-learn ``matthews_corrcoef``, which returns 0 when a margin is empty — kept here);
    recall = TP / (TP + FN). NaN where a denominator is 0 (accuracy, F1, recall; balanced accuracy when a class
    is absent).
    """
    tp, fp, fn, tn = c[..., 0], c[..., 1], c[..., 2], c[..., 3]
    tot = tp + fp + fn + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(tot > 0, (tp + tn) / tot, np.nan)
        f1 = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), np.nan)
        rec = np.where(tp + fn > 0, tp / (tp + fn), np.nan)
        tnr = np.where(tn + fp > 0, tn / (tn + fp), np.nan)
        bal = (rec + tnr) / 2
        den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        mcc = np.where(den > 0, (tp * tn - fp * fn) / np.where(den > 0, den, 1), 0.0)
    return {"accuracy": acc, "f1": f1, "balanced_accuracy": bal, "mcc": mcc, "recall": rec, "fp": fp}


#: objectives a threshold can be tuned for. "accuracy" is kept for reference only: when negatives dominate (one
#: own skill per probe against dozens of others) rejecting every pair already scores the base rate, so accuracy
#: barely tells thresholds apart — read it with ``select_nothing_value`` (the base rate) beside it.
OBJECTIVES = ("f1", "balanced_accuracy", "mcc", "recall_at_zero_fp", "accuracy")
#: the objectives whose value is a maximised metric (the zero-FP objective is a constrained recall)
_MAXIMISED = ("accuracy", "f1", "balanced_accuracy", "mcc")


def select_nothing_value(counts: np.ndarray, objective: str) -> float:
    """The value ``objective`` takes when no pair is selected (every pair predicted negative), from summed counts
    (4,) = TP, FP, FN, TN at any threshold — the chance line a tuned value must beat.

    accuracy → the share of negative pairs (the base rate); F1 → 0; balanced accuracy → 0.5; MCC → 0
    (scikit-learn's convention for an empty margin); recall at zero FP → 0 (selecting nothing is always free of
    false positives). NaN when there are no pairs (balanced accuracy: when a class is absent).
    """
    tp, fp, fn, tn = (float(x) for x in counts)
    pos, neg = tp + fn, fp + tn
    if objective == "accuracy":
        return neg / (pos + neg) if pos + neg else float("nan")
    if objective in ("f1", "mcc", "recall_at_zero_fp"):
        return 0.0 if pos + neg else float("nan")
    if objective == "balanced_accuracy":
        return 0.5 if pos and neg else float("nan")
    raise EvallabError(f"objective must be one of {OBJECTIVES}, got {objective!r}")


def choose_threshold(counts: np.ndarray, grid: np.ndarray, objective: str) -> tuple[float, float]:
    """The threshold of ``grid`` that optimises ``objective`` on summed counts (n_grid, 4) and the value reached.

    "f1", "balanced_accuracy", "mcc", "accuracy": the maximiser (the smallest threshold among ties);
    "recall_at_zero_fp": the smallest threshold with no false positive (hence the highest recall without one).
    When no threshold of the grid is free of false positives (e.g. a different-category skill ties the right one
    at 1.0), the threshold AND the value are NaN: the constraint cannot be met on the grid (only selecting nothing
    avoids them, see :func:`select_nothing_value`) — never reported as a recall of 0.
    """
    m = _metrics(counts)
    if objective in _MAXIMISED:
        v = m[objective]
        if np.all(np.isnan(v)):
            return float("nan"), float("nan")
        k = int(np.nanargmax(v))
        return float(grid[k]), float(v[k])
    if objective == "recall_at_zero_fp":
        ok = np.flatnonzero(m["fp"] == 0)
        if len(ok) == 0:
            return float("nan"), float("nan")
        k = int(ok[0])
        return float(grid[k]), float(m["recall"][k])
    raise EvallabError(f"objective must be one of {OBJECTIVES}, got {objective!r}")


def _choose_batch(sums: np.ndarray, grid: np.ndarray, objective: str,
                  m: dict[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`choose_threshold` for a batch of summed counts (B, n_grid, 4) → (thresholds (B,), values (B,));
    ``m``: :func:`_metrics` of ``sums`` when already computed."""
    m = _metrics(sums) if m is None else m
    if objective in _MAXIMISED:
        v = m[objective]
        allnan = np.all(np.isnan(v), axis=1)
        k = np.argmax(np.where(np.isnan(v), -np.inf, v), axis=1)
        thr = np.where(allnan, np.nan, grid[k])
        val = np.where(allnan, np.nan, v[np.arange(len(k)), k])
        return thr, val
    if objective == "recall_at_zero_fp":
        ok = m["fp"] == 0
        has = ok.any(axis=1)
        k = np.argmax(ok, axis=1)
        return np.where(has, grid[k], np.nan), np.where(has, m["recall"][np.arange(len(k)), k], np.nan)
    raise EvallabError(f"objective must be one of {OBJECTIVES}, got {objective!r}")


def _bootstrap_sums(counts: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The summed counts (n_resamples, *counts.shape[1:]) of each skill-bootstrap resample of the rows of
    ``counts`` (:func:`skill_resample_weights`)."""
    w = skill_resample_weights(len(counts), n_resamples, seed)
    return (w @ counts.reshape(len(counts), -1)).reshape(n_resamples, *counts.shape[1:])


def _bootstrap_choice(counts: np.ndarray, grid: np.ndarray, objective: str, *, n_resamples: int,
                      confidence: float, seed: int, sums: tuple[np.ndarray, dict] | None = None,
                      ) -> tuple[float, float, float, float, str]:
    """Percentile bootstrap over clusters — the rows of ``counts``, one per skill — of the chosen threshold and of
    the value it reaches (resamples from :func:`skill_resample_weights`).

    Resamples where the choice is undefined (NaN: no zero-FP threshold) are left out of the percentiles. When the
    percentile interval is a single point (every resample, or more than the interval's share of them, gives the
    same threshold or value) it would read [x, x] and claim a certainty the data do not hold: that interval is
    NaN and the returned note says how many resamples sit on the point.

    ``sums``: ``(_bootstrap_sums(counts, n_resamples, seed), _metrics of them)`` when already computed (one
    computation serves every objective of :func:`tune_thresholds`).

    Returns ``(threshold_low, threshold_high, value_low, value_high, note)``.
    """
    if sums is None:
        b = _bootstrap_sums(counts, n_resamples, seed)
        sums = (b, _metrics(b))
    thr, val = _choose_batch(sums[0], grid, objective, sums[1])
    t_lo, t_hi, t_note = _percentile(thr, confidence, "threshold")
    v_lo, v_hi, v_note = _percentile(val, confidence, "value")
    return t_lo, t_hi, v_lo, v_hi, "; ".join(n for n in (t_note, v_note) if n)


def metric_at(counts: np.ndarray, grid: np.ndarray, objective: str, threshold: float) -> float:
    """The objective's metric at the grid point nearest ``threshold``: accuracy, F1, balanced accuracy or MCC; for
    "recall_at_zero_fp" the recall under the SAME constraint as the tuned threshold — NaN when that threshold lets
    a false positive through (see :func:`fp_at` for how many)."""
    k = int(np.argmin(np.abs(grid - threshold)))
    m = _metrics(counts[k])
    if objective == "recall_at_zero_fp":
        return float(m["recall"]) if m["fp"] == 0 else float("nan")
    return float(m[objective])


def fp_at(counts: np.ndarray, grid: np.ndarray, threshold: float) -> int:
    """False-positive pairs at the grid point nearest ``threshold`` (counts summed over probes, (n_grid, 4))."""
    return int(counts[int(np.argmin(np.abs(grid - threshold))), 1])


def tuning_measures(method: str | None = None) -> list[Measure]:
    """The measures of :func:`tune_thresholds`' table; ``method`` names how the threshold and value intervals were
    computed (``None``: none was)."""
    at = {"n": "pairs", "n_unit": "pairs"}
    folds = {"n": "cv_folds", "n_unit": "folds"}
    neg = {"n": "negatives", "n_unit": "negative pairs"}
    return [
        Measure("threshold", "Tuned threshold", "coefficient", "threshold_low", "threshold_high", method=method,
                digits=2, **at),
        Measure("value", "Objective value", "coefficient", "value_low", "value_high", method=method, digits=3,
                **at),
        Measure("fp", "False positives", "count", **neg),
        Measure("cv_threshold", "CV threshold", "coefficient", digits=2, **folds),
        Measure("cv_threshold_sd", "CV threshold SD", "coefficient", digits=2, **folds),
        Measure("cv_value", "CV value", "coefficient", digits=3, **folds),
        Measure("cv_folds", "CV folds", "count"),
        Measure("select_nothing_value", "Selecting no skill", "coefficient", digits=3, **at),
        Measure("keryx_threshold", "keryx's threshold", "coefficient", digits=2),
        Measure("keryx_value", "Value at keryx's threshold", "coefficient", digits=3, **at),
        Measure("keryx_fp", "False positives at keryx's", "count", **neg),
        Measure("positives", "Positive pairs", "count"),
        Measure("negatives", "Negative pairs", "count"),
        Measure("pairs", "Pairs", "count"),
        Measure("skills", "Skills", "count"),
    ]


@dataclass
class TuningResult:
    """Chosen thresholds of one decision score.

    Attributes
    ----------
    target : str
        The decision score tuned ("select", "support", "use").
    table : Results
        One row per objective (columns in :func:`tune_thresholds`), measures from :func:`tuning_measures`.
    grid : ndarray
        The candidate thresholds.
    curve : DataFrame
        Per threshold of ``grid``: ``accuracy``, ``f1``, ``balanced_accuracy``, ``mcc``, ``recall`` and ``fp``
        on every pair.
    """

    target: str
    table: Results
    grid: np.ndarray
    curve: pd.DataFrame  # per threshold: accuracy, f1, balanced_accuracy, mcc, recall, fp


def tune_thresholds(pairs: pd.DataFrame, target: str = "select", *, grid: Sequence[float] | None = None,
                    objectives: Sequence[str] = OBJECTIVES, n_resamples: int = 200, confidence: float = 0.95,
                    n_splits: int = 5, seed: int = 0, keryx_threshold: float | None = None) -> TuningResult:
    """Tune one threshold on (probe, skill) pairs.

    Parameters
    ----------
    pairs : :func:`pair_scores` output.
    target : "select" (keryx 0.30), "support" (0.12) or "use" (0.55): which decision score to threshold.
    grid : candidate thresholds (default 0, 0.01, …, 1).
    objectives : any of :data:`OBJECTIVES` (see :func:`choose_threshold`). Plain accuracy is a poor objective when
        negatives dominate: its row carries the base rate in ``select_nothing_value``.
    n_resamples : bootstrap resamples over skills (a skill's probes are not independent; percentile,
        :func:`skill_resample_weights`); 0 skips the intervals.
    confidence : level of the intervals, in (0, 1).
    n_splits : folds of scikit-learn ``GroupKFold`` over probes grouped by their skill (a skill's probes never sit
        on both sides); the threshold is chosen on the training folds and measured on the held-out fold.
    keryx_threshold : the constant to compare with (default :data:`KERYX_THRESHOLDS` [target]). It is evaluated
        under the same constraint as the tuned threshold: for "recall_at_zero_fp" its value is NaN when keryx's
        constant lets false positives through (``keryx_fp`` says how many), never its unconstrained recall.

    Returns
    -------
    TuningResult
        Its ``table`` (a :class:`~evallab.Results`) has one row per objective: ``target``, ``objective``,
        ``threshold`` (the chosen threshold, on the decision score's 0–1 scale) and ``value`` (the objective's
        metric there: F1, balanced accuracy, recall or accuracy in [0, 1], MCC in [−1, 1]), each with its
        percentile bootstrap interval over skills (``threshold_low/_high``, ``value_low/_high``; method
        "skill bootstrap (percentile, N resamples)", NaN with the reason in ``note`` when switched off, with
        fewer than 2 skills, or when the interval is a single point); the cross-validated estimate
        (``cv_threshold`` mean and ``cv_threshold_sd`` over folds, ``cv_value`` mean held-out metric,
        ``cv_folds``); ``keryx_threshold`` / ``keryx_value`` (the metric at keryx's constant, under the same
        constraint); ``fp`` / ``keryx_fp`` (false-positive pairs at each); ``positives``, ``negatives``,
        ``pairs`` (pair counts) and ``skills`` (the resampled units); ``select_nothing_value`` (the objective
        when no pair is selected: the base rate for accuracy) and ``note`` (why a value or interval is missing).
        Measures: :func:`tuning_measures` (n: pairs; CV figures: folds).
    """
    if target not in KERYX_THRESHOLDS:
        raise EvallabError(f"target must be one of {tuple(KERYX_THRESHOLDS)}, got {target!r}")
    for obj in objectives:
        if obj not in OBJECTIVES:
            raise EvallabError(f"objective must be one of {OBJECTIVES}, got {obj!r}")
    kt = KERYX_THRESHOLDS[target] if keryx_threshold is None else keryx_threshold
    _, skills, g, counts = confusion_by_probe(pairs, target, grid)
    total = counts.sum(0)
    P = len(counts)
    groups = pd.factorize(skills)[0]
    by_skill = np.zeros((groups.max() + 1 if len(groups) else 0, *counts.shape[1:]))
    np.add.at(by_skill, groups, counts)  # a skill's probes are not independent: the skill is the resampling unit
    k = min(n_splits, len(np.unique(groups)))
    positives, negatives = int(total[0, 0] + total[0, 2]), int(total[0, 1] + total[0, 3])
    rows, boot = [], None
    for obj in objectives:
        thr, val = choose_threshold(total, g, obj)
        kfp = fp_at(total, g, kt)
        row = {"target": target, "objective": obj, "threshold": thr, "value": val,
               "keryx_threshold": kt, "keryx_value": metric_at(total, g, obj, kt),
               "fp": fp_at(total, g, thr) if np.isfinite(thr) else np.nan, "keryx_fp": kfp,
               "positives": positives, "negatives": negatives, "pairs": positives + negatives,
               "skills": len(by_skill), "select_nothing_value": select_nothing_value(total[0], obj)}
        notes = []
        if obj == "recall_at_zero_fp":
            if not np.isfinite(thr):
                notes.append(f"no threshold in [{g.min():.2f}, {g.max():.2f}] is free of false positives "
                             f"(at {g.max():.2f}: {fp_at(total, g, g.max())}); only selecting nothing is, with "
                             "recall 0")
            if kfp:
                notes.append(f"keryx's {kt:.2f} lets {kfp} false positive(s) through: the zero-FP constraint "
                             "fails there")
        if n_resamples > 0 and len(by_skill) >= 2:
            if boot is None:  # the same resamples for every objective: summed once
                boot = _bootstrap_sums(by_skill, n_resamples, seed)
                boot = (boot, _metrics(boot))
            (row["threshold_low"], row["threshold_high"], row["value_low"], row["value_high"],
             bnote) = _bootstrap_choice(by_skill, g, obj, n_resamples=n_resamples, confidence=confidence,
                                        seed=seed, sums=boot)
            if bnote and np.isfinite(thr):
                notes.append(bnote)
        else:
            row.update(threshold_low=np.nan, threshold_high=np.nan, value_low=np.nan, value_high=np.nan)
            if np.isfinite(thr):
                notes.append(no_interval_note(thr, np.nan, np.nan, units=len(by_skill), n_resamples=n_resamples,
                                              unit_name="skill"))
        if k >= 2:
            ths, vals = [], []
            for tr, te in GroupKFold(n_splits=k).split(np.zeros(P), groups=groups):
                t, _ = choose_threshold(counts[tr].sum(0), g, obj)
                if np.isnan(t):
                    continue
                ths.append(t)
                vals.append(metric_at(counts[te].sum(0), g, obj, t))
            row.update(cv_threshold=float(np.mean(ths)) if ths else np.nan,
                       cv_threshold_sd=float(np.std(ths, ddof=1)) if len(ths) > 1 else np.nan,
                       cv_value=float(np.nanmean(vals)) if np.isfinite(vals).any() else np.nan, cv_folds=len(ths))
        else:
            row.update(cv_threshold=np.nan, cv_threshold_sd=np.nan, cv_value=np.nan, cv_folds=0)
        row["note"] = "; ".join(notes)
        rows.append(row)
    m = _metrics(total)
    curve = pd.DataFrame({"threshold": g, **{c: m[c] for c in ("accuracy", "f1", "balanced_accuracy", "mcc",
                                                                 "recall", "fp")}})
    booted = n_resamples > 0 and len(by_skill) >= 2
    table = results(pd.DataFrame(rows), tuning_measures(bootstrap_method(n_resamples, "skill") if booted else None),
                    level=confidence if booted else None, keys=["target", "objective"])
    return TuningResult(target, table, g, curve)
