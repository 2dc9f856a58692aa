"""keryx's scorer beside TF-IDF and BM25 on the same probes: leave-one-out trigger accuracy, ROC AUC, average
precision and the F1-best threshold of each (used by ``notebooks/04_trigger_thresholds.ipynb``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab.skills._catalogs import as_catalog
from evallab.skills._thresholds import (
    KERYX_THRESHOLDS,
    choose_threshold,
    confusion_by_probe,
    metric_at,
    pair_scores,
    roc_pr,
)
from evallab.skills._trigger_index import SCORERS
from evallab.skills._trigger_loo import leave_one_out, loo_scores, make_probes


def compare_scorers(catalog, scorers: Sequence[str] = SCORERS, *, strip_exclusions: bool = True,
                    probes: pd.DataFrame | None = None, grid: Sequence[float] | None = None,
                    target: str = "select") -> tuple[pd.DataFrame, dict[str, dict]]:
    """Leave-one-out trigger accuracy, ROC AUC, average precision and the F1-best threshold of each scorer, on the
    same probes (one :func:`pair_scores` per scorer; no bootstrap).

    Probes default to the catalog's TRIGGER probes (``make_probes(catalog, source="triggers")``): a "Use when"
    probe is cut from its skill's own description and nothing is left out, so it is scored against its own source
    text and says nothing about routing.

    Score scales differ across scorers, so keryx's constants (select 0.30, support 0.12) mean something for the
    keryx scorer only: each scorer's leave-one-out accuracy is reported at ITS OWN F1-chosen select threshold
    (chosen on the ``d_select`` decision score over ``grid``, the description-support gate at keryx's 0.12, as
    :func:`pair_scores` builds it) and, under its own name, at keryx's thresholds.

    Returns
    -------
    (table, curves) : ``table`` one row per scorer: ``scorer``, ``probes``, ``select_threshold`` (F1-best select
        threshold of this scorer), ``loo_trigger_accuracy_at_f1_threshold`` (share of probes selected
        leave-one-out at ``select_threshold``, in [0, 1]; NaN when no threshold is chosen),
        ``loo_trigger_accuracy_at_keryx_thresholds`` (at 0.30 / 0.12 — comparable for the keryx scorer only),
        ``roc_auc``, ``average_precision`` (of ``target``'s decision score), ``f1_threshold`` and ``f1`` (F1-best
        threshold of ``target`` and its F1), ``f1_at_keryx`` (F1 at keryx's constant for ``target``); ``curves``
        maps scorer → :func:`roc_pr` output.
    """
    catalog = as_catalog(catalog)
    probes = make_probes(catalog, source="triggers") if probes is None else probes
    rows, curves = [], {}
    for sc in scorers:
        sco = loo_scores(catalog, probes, scorer=sc, strip_exclusions=strip_exclusions)
        loo_k = leave_one_out(catalog, probes, scores=sco)
        pairs = pair_scores(catalog, probes, scores=sco)
        cur = roc_pr(pairs, target)
        _, _, g, counts = confusion_by_probe(pairs, target, grid)
        thr, f1 = choose_threshold(counts.sum(0), g, "f1")
        if target == "select":
            sel_thr = thr
        else:
            _, _, gs, cs = confusion_by_probe(pairs, "select", grid)
            sel_thr, _ = choose_threshold(cs.sum(0), gs, "f1")
        own = float(leave_one_out(catalog, probes, scores=sco, threshold=sel_thr).selected.mean()) \
            if np.isfinite(sel_thr) else float("nan")
        curves[sc] = cur
        rows.append({"scorer": sc, "probes": len(probes), "select_threshold": sel_thr,
                     "loo_trigger_accuracy_at_f1_threshold": own,
                     "loo_trigger_accuracy_at_keryx_thresholds": float(loo_k.selected.mean()),
                     "roc_auc": cur["roc_auc"], "average_precision": cur["average_precision"], "f1_threshold": thr,
                     "f1": f1, "f1_at_keryx": metric_at(counts.sum(0), g, "f1", KERYX_THRESHOLDS[target])})
    return pd.DataFrame(rows), curves
