"""keryx's scorer beside TF-IDF and BM25 on the same probes: leave-one-out trigger accuracy, average precision, the
best F1 and ROC AUC of each, with skill-bootstrap intervals and paired differences against a reference scorer (used
by ``notebooks/04_trigger_thresholds.ipynb``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab._results import Measure, Results, bootstrap_method, results
from evallab.errors import EvallabError
from evallab.metrics._intervals import no_interval_note
from evallab.skills._catalogs import as_catalog
from evallab.skills._thresholds import (
    KERYX_THRESHOLDS,
    _choose_batch,
    _percentile,
    choose_threshold,
    confusion_by_probe,
    metric_at,
    pair_scores,
    roc_pr,
    skill_resample_weights,
    weighted_curves,
)
from evallab.skills._trigger_index import SCORERS
from evallab.skills._trigger_loo import leave_one_out, loo_scores, make_probes

#: the figures :func:`compare_scorers` resamples, as (column, what it is called in a note)
_BOOTSTRAPPED = (("average_precision", "average precision"), ("f1", "F1"), ("roc_auc", "ROC AUC"))


def comparison_measures(method: str | None = None, paired: str | None = None,
                        reference: str = "the reference") -> list[Measure]:
    """The measures of :func:`compare_scorers`' table; ``method`` names how the intervals of average precision,
    F1 and ROC AUC were computed, ``paired`` how those of their differences against ``reference`` were (``None``:
    not computed)."""
    at = {"n": "pairs", "n_unit": "pairs"}
    probes = {"n": "probes", "n_unit": "trigger probes"}
    delta = {"note": "delta_note", "unit": "coefficient", "method": paired, "digits": 3, **at}
    ms = [Measure("probes", "Probes", "count"), Measure("pairs", "Pairs", "count"),
          Measure("positive_pairs", "Positive pairs", "count"),
          Measure("base_rate", "Base rate", "proportion", **at),
          Measure("select_threshold", "Own F1 select threshold", "coefficient", digits=2),
          Measure("loo_trigger_accuracy_at_f1_threshold", "LOO trigger accuracy at its own threshold", "proportion",
                  **probes),
          Measure("loo_trigger_accuracy_at_keryx_thresholds", "LOO trigger accuracy at keryx's 0.30 / 0.12",
                  "proportion", **probes),
          Measure("f1_threshold", "F1 threshold", "coefficient", digits=2),
          Measure("f1_at_keryx", "F1 at keryx's threshold", "coefficient", digits=3, **at)]
    labels = {"average_precision": "Average precision", "f1": "F1", "roc_auc": "ROC AUC"}
    for col, _ in _BOOTSTRAPPED:
        ms.append(Measure(col, labels[col], "coefficient", f"{col}_low", f"{col}_high", method=method, digits=3,
                          **at))
        ms.append(Measure(f"delta_{col}", f"Δ {labels[col]} vs {reference}", low=f"delta_{col}_low",
                          high=f"delta_{col}_high", **delta))
    return ms


def compare_scorers(catalog, scorers: Sequence[str] = SCORERS, *, strip_exclusions: bool = True,
                    probes: pd.DataFrame | None = None, grid: Sequence[float] | None = None,
                    target: str = "select", n_resamples: int = 0, confidence: float = 0.95, seed: int = 0,
                    reference: str | None = None) -> tuple[Results, dict[str, dict]]:
    """Leave-one-out trigger accuracy, average precision, the F1-best threshold and ROC AUC of each scorer on the
    same probes (one :func:`pair_scores` per scorer), with skill-bootstrap intervals and paired differences against
    ``reference``.

    Probes default to the catalog's TRIGGER probes (``make_probes(catalog, source="triggers")``): a "Use when"
    probe is cut from its skill's own description and nothing is left out, so it is scored against its own source
    text and says nothing about routing.

    Score scales differ across scorers, so keryx's constants (select 0.30, support 0.12) mean something for the
    keryx scorer only: each scorer's leave-one-out accuracy is reported at ITS OWN F1-chosen select threshold
    (chosen on the ``d_select`` decision score over ``grid``, the description-support gate at keryx's 0.12, as
    :func:`pair_scores` builds it) and, under its own name, at keryx's thresholds.

    Nearly every pair is negative (one own skill per probe against dozens of others), so ROC AUC — built on the
    false-positive RATE — stays high for a scorer whose selections are mostly wrong. Compare scorers on average
    precision (a scorer ranking at random scores the base rate, ``base_rate``) and the best F1, with ROC AUC
    beside them.

    Parameters
    ----------
    catalog : Catalog or records
        The skill catalog.
    scorers : sequence of {"keryx", "tfidf", "bm25"}, default all three
        The scorers, in the table's order.
    strip_exclusions : bool, default True
        Strip exclusion clauses from the entries.
    probes : DataFrame, optional
        Probes to score (default: the trigger probes).
    grid : sequence of float, optional
        Candidate thresholds (default 0, 0.01, …, 1).
    target : {"select", "support", "use"}, default "select"
        The decision score of average precision, ROC AUC and the F1 columns.
    n_resamples : int, default 0
        Percentile bootstrap resamples over skills (:func:`~evallab.skills._thresholds.skill_resample_weights`:
        the same draws for every scorer, so the differences are paired, and the same as
        :func:`~evallab.skills.tune_thresholds` with the same seed, so a scorer's F1 interval is the tuned
        table's); 0: no interval.
    confidence : float, default 0.95
        Level of the intervals.
    seed : int, default 0
        Seed of the resamples.
    reference : str, optional
        The scorer the differences are taken against (default: the first of ``scorers``).

    Returns
    -------
    (table, curves)
        ``table`` (a :class:`~evallab.Results`), one row per scorer: ``scorer``, ``probes``, ``pairs``,
        ``positive_pairs`` (counts) and ``base_rate`` (positive share of the pairs, a proportion: the average
        precision of a scorer ranking at random); ``select_threshold`` (F1-best select threshold of this scorer);
        ``loo_trigger_accuracy_at_f1_threshold`` (share of probes selected leave-one-out at ``select_threshold``,
        a proportion; NaN when no threshold is chosen) and ``loo_trigger_accuracy_at_keryx_thresholds`` (at
        0.30 / 0.12 — comparable for the keryx scorer only); ``average_precision``, ``f1`` (the best F1 of
        ``target`` over ``grid``, at ``f1_threshold``) and ``roc_auc`` (unitless, [0, 1]), each with
        ``<col>_low/_high`` (skill bootstrap) and ``delta_<col>`` = this scorer's minus ``reference``'s with
        ``delta_<col>_low/_high`` (paired skill bootstrap; NaN on the reference's own row, ``delta_note`` says
        why); ``f1_at_keryx`` (F1 at keryx's constant for ``target``); ``reference``; ``note`` (why an interval
        or a difference is missing). Measures: :func:`comparison_measures` (n: pairs; LOO accuracies: trigger probes).
        ``curves`` maps scorer → :func:`~evallab.skills.roc_pr` output.

    Raises
    ------
    EvallabError
        ``reference`` is not one of ``scorers``.
    """
    catalog = as_catalog(catalog)
    scorers = list(scorers)
    reference = scorers[0] if reference is None and scorers else reference
    if scorers and reference not in scorers:
        raise EvallabError(f"reference {reference!r} is not one of the scorers compared ({', '.join(scorers)})")
    probes = make_probes(catalog, source="triggers") if probes is None else probes
    rows, curves, dists, n_skills = [], {}, {}, 0
    for sc in scorers:
        sco = loo_scores(catalog, probes, scorer=sc, strip_exclusions=strip_exclusions)
        loo_k = leave_one_out(catalog, probes, scores=sco)
        pairs = pair_scores(catalog, probes, scores=sco)
        cur = roc_pr(pairs, target)
        _, skills, g, counts = confusion_by_probe(pairs, target, grid)
        thr, f1 = choose_threshold(counts.sum(0), g, "f1")
        if target == "select":
            sel_thr = thr
        else:
            _, _, gs, cs = confusion_by_probe(pairs, "select", grid)
            sel_thr, _ = choose_threshold(cs.sum(0), gs, "f1")
        own = float(leave_one_out(catalog, probes, scores=sco, threshold=sel_thr).selected.mean()) \
            if np.isfinite(sel_thr) else float("nan")
        curves[sc] = cur
        pos = int(pairs["label"].sum())
        rows.append({"scorer": sc, "probes": len(probes), "pairs": len(pairs), "positive_pairs": pos,
                     "base_rate": pos / len(pairs) if len(pairs) else float("nan"), "select_threshold": sel_thr,
                     "loo_trigger_accuracy_at_f1_threshold": own,
                     "loo_trigger_accuracy_at_keryx_thresholds": float(loo_k.selected.mean()),
                     "roc_auc": cur["roc_auc"], "average_precision": cur["average_precision"], "f1_threshold": thr,
                     "f1": f1, "f1_at_keryx": metric_at(counts.sum(0), g, "f1", KERYX_THRESHOLDS[target]),
                     "reference": reference})
        codes, uniq = pd.factorize(skills)  # the resampled unit: the probe's skill, in tune_thresholds' order
        n_skills = len(uniq)
        if n_resamples > 0 and len(uniq) >= 2:
            w = skill_resample_weights(len(uniq), n_resamples, seed)
            by_skill = np.zeros((len(uniq), *counts.shape[1:]))
            np.add.at(by_skill, codes, counts)
            sums = (w @ by_skill.reshape(len(uniq), -1)).reshape(n_resamples, *counts.shape[1:])
            ap, auc = weighted_curves(pairs["label"].to_numpy(), pairs[f"d_{target}"].to_numpy(), w,
                                      groups=pd.Index(uniq).get_indexer(pairs["probe_skill"]))
            dists[sc] = {"average_precision": ap, "f1": _choose_batch(sums, g, "f1")[1], "roc_auc": auc}
        else:
            dists[sc] = None
    booted = bool(dists) and all(d is not None for d in dists.values())
    for r in rows:
        notes, dnotes = [], []
        for col, what in _BOOTSTRAPPED:
            lo = hi = dlo = dhi = np.nan
            if booted:
                lo, hi, why = _percentile(dists[r["scorer"]][col], confidence, what)
                if why:
                    notes.append(why)
                if r["scorer"] != reference:
                    dlo, dhi, why = _percentile(dists[r["scorer"]][col] - dists[reference][col], confidence,
                                                f"difference in {what}")
                    if why:
                        dnotes.append(why)
            r.update({f"{col}_low": lo, f"{col}_high": hi, f"delta_{col}_low": dlo, f"delta_{col}_high": dhi})
            ref_value = next(x[col] for x in rows if x["scorer"] == reference)
            r[f"delta_{col}"] = r[col] - ref_value if r["scorer"] != reference else np.nan
        if not booted:  # switched off, or a single skill
            notes.append(no_interval_note(1.0, np.nan, np.nan, units=n_skills, n_resamples=n_resamples,
                                          unit_name="skill"))
        if r["scorer"] == reference:
            dnotes.append(f"{reference} is the reference scorer the differences are taken against")
        elif not booted:
            dnotes.append(notes[-1])
        # a table footnotes a row's missing cells with its one ``note``; an Estimate of a difference reads its own
        r["note"], r["delta_note"] = "; ".join(dict.fromkeys(notes + dnotes)), "; ".join(dict.fromkeys(dnotes))
    cols = ["scorer", "probes", "pairs", "positive_pairs", "base_rate", "select_threshold",
            "loo_trigger_accuracy_at_f1_threshold", "loo_trigger_accuracy_at_keryx_thresholds",
            *[f"{c}{x}" for c, _ in _BOOTSTRAPPED for x in ("", "_low", "_high")], "f1_threshold", "f1_at_keryx",
            *[f"delta_{c}{x}" for c, _ in _BOOTSTRAPPED for x in ("", "_low", "_high")], "reference", "note",
            "delta_note"]
    method = bootstrap_method(n_resamples, "skill") if booted else None
    paired = bootstrap_method(n_resamples, "skill", paired=True) if booted else None
    table = results(pd.DataFrame(rows, columns=cols), comparison_measures(method, paired, str(reference)),
                    level=confidence if booted else None, keys=["scorer"])
    return table, curves
