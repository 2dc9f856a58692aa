"""Report 08's score studies (issue 28, item 4): how far a prompt variant moves a judge's scores and its agreement
with the humans, how far two judges' scores drift apart, a pass/fail cut tuned against the human mean, and the
repetition stability of scores — one function per section of ``notebooks/08_scales.ipynb``.

The estimators are :mod:`evallab.metrics`' :func:`~evallab.metrics.score_shift`,
:func:`~evallab.metrics.score_drift`, :func:`~evallab.metrics.score_cut` and
:func:`~evallab.metrics.score_stability` (item-bootstrap intervals, method and level in each table).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evallab._results import Results
from evallab.metrics import _score_studies as ST
from evallab.metrics._scales import _slim, humans_of, require_scores
from evallab.reporting._context import Section
from evallab.reporting.sections.scales import _rater_words
from evallab.verdicts import rater_label

STABILITY_SIMULATED = ("score_stability's intervals are checked on simulated repeated samples (make coverage, "
                       "--only scale-studies).")
CUT_CAVEAT = ("The cut is tuned on the same items it is judged on (Youden's J, the highest among equally good "
              "cuts), and tuned again in each item resample: its interval is the spread of the chosen cut over "
              "resamples, conservative by construction on a stepped scale (make coverage); the pass rate, balanced "
              "accuracy and kappa at the cut carry that tuning's variability.")


def _keys(res: Results, drop: Sequence[str]) -> list[str]:
    return [k for k in (getattr(res, "keys", None) or []) if k not in drop]


def _where(res: Results, i, drop: Sequence[str] = ()) -> str:
    ks = _keys(res, drop)
    return " · ".join(str(res.loc[i, k]) for k in ks)


def _excludes_zero(res: Results, col: str) -> pd.Series:
    lo, hi = res[f"{col}_low"].astype(float), res[f"{col}_high"].astype(float)
    return (lo > 0) | (hi < 0)


def prompt_shifts(shift: Results) -> Section:
    """Each configuration (HANNA: prompt variant) of each judge against the judge's baseline on the same stories:
    the paired mean shift (leniency inflation on the scale) and the change in Spearman's ρ with the human mean."""
    sec = Section()
    if shift.empty:
        return sec.text("Every judge has one configuration in this table: no prompt variant to compare.")
    r = shift.reset_index(drop=True)
    moved = _excludes_zero(r, "shift")
    base = ", ".join(sorted(set(map(str, r["baseline"]))))
    sec.text(f"Of {len(r)} comparisons with the baseline ({base}) on the same items, {int(moved.sum())} shift the "
             f"scores by an amount whose 95% interval excludes zero ({int((moved & (r['shift'] > 0)).sum())} up, "
             f"{int((moved & (r['shift'] < 0)).sum())} down).")
    up, down = r["shift"].astype(float).idxmax(), r["shift"].astype(float).idxmin()
    for i, word in ((up, "most lenient"), (down, "most severe")):
        sec.finding(f"The {word} change of prompt is {r.loc[i, 'judge']} with {r.loc[i, 'configuration']} instead "
                    f"of {r.loc[i, 'baseline']} on {_where(r, i, ('judge', 'configuration'))}: paired mean shift",
                    r.estimate("shift", i))
    if "d_spearman" in r.columns:
        lo, hi = r["d_spearman"].astype(float).idxmin(), r["d_spearman"].astype(float).idxmax()
        for i, word in ((lo, "loses the most"), (hi, "gains the most")):
            sec.finding(f"In agreement with the human mean, {r.loc[i, 'judge']} with {r.loc[i, 'configuration']} "
                        f"{word} on {_where(r, i, ('judge', 'configuration'))}: Δ Spearman's ρ",
                        r.estimate("d_spearman", i))
        worse = _excludes_zero(r, "d_spearman") & (r["d_spearman"] < 0)
        better = _excludes_zero(r, "d_spearman") & (r["d_spearman"] > 0)
        sec.conclusions.append(f"A prompt variant changes a judge's Spearman ρ with the humans beyond its interval in "
                               f"{int(worse.sum())} comparisons for the worse and {int(better.sum())} for the better, "
                               f"of {len(r)}.")
    cols = {**{k: k.capitalize() for k in _keys(r, ("judge", "configuration"))}, "judge": "Judge",
            "configuration": "Configuration", "baseline": "Baseline",
            **{f: r.measures[f].label for f in ST.SHIFT_FIGURES if f in r.columns}}
    sec.table(r, cols, caption="Each prompt variant against the judge's baseline on the same items",
              csv_name="prompt-shifts")
    sec.metrics["prompt_shifts_beyond_interval"] = int(moved.sum())
    return sec


def _drift_pair(table: pd.DataFrame, wanted: Sequence[str] = (), humans: Sequence[str] = ()
                ) -> tuple[str, str, list[str]]:
    """The two raters whose drift report 08 shows: ``wanted`` when both are raters of ``table``, else the first and
    the last JUDGE (sorted labels; never a human rater: ``humans``, else ``role`` = ``human``); and the judges."""
    d = require_scores(_slim(table, ()), what="the drift section")  # the columns read here: a rating table is long
    label = rater_label(d).astype(str)
    hs = set(humans_of(d, humans or None)) if humans or "role" in d.columns else set()
    human_rows = d["judge"].astype(str).isin(hs) | label.isin(hs)
    if "role" in d.columns:
        human_rows |= (d["role"].astype("string") == "human").fillna(False)
    labels = sorted(set(label.unique()))
    judges = sorted(set(label[~human_rows.to_numpy(dtype=bool)].unique()))
    if len(wanted) == 2 and all(w in labels for w in wanted):
        return str(wanted[0]), str(wanted[1]), judges
    return (judges[0], judges[-1], judges) if len(judges) >= 2 else ("", "", judges)


def judge_drift(table: pd.DataFrame, pair: Sequence[str] = (), *, by: Sequence[str] = ("criterion",),
                humans: Sequence[str] = (), n_resamples: int = 1000, confidence: float = 0.95,
                seed: int = 0) -> Section:
    """Drift between two judges' scores on the same items (:func:`evallab.metrics.score_drift`): the candidate's
    paired mean shift from the baseline, the mean absolute difference, the share of items whose rounded score
    changed and the quadratic-weighted kappa between them, per ``by`` cell.

    ``pair`` = (baseline, candidate) rater labels (``judge · strategy``); when either is not in the table (or none
    is given), the first and the last judge in sorted order (never a human rater: ``humans``, else the ``role``
    column), and the section says so; with fewer than two judges, one sentence saying why."""
    sec = Section()
    asked = tuple(pair)
    base, cand, judges = _drift_pair(table, asked, humans)
    if not base:
        has = f" ({', '.join(judges)})" if judges else ""
        return sec.text(f"The table has {len(judges)} judge{'' if len(judges) == 1 else 's'} beside the human "
                        f"raters{has}: the drift section needs two judges on the same items.")
    if asked and asked != (base, cand):
        sec.text(f"The pair asked for ({' vs '.join(asked)}) is not in this table; shown instead: {cand} against "
                 f"{base}.")
    r = ST.score_drift(table, base, cand, by=by, n_resamples=n_resamples, confidence=confidence, seed=seed)
    r = r.reset_index(drop=True)
    far = r["mae"].astype(float).idxmax()
    where = _where(r, far, ("baseline", "candidate"))
    sec.finding(f"{cand} against {base}: the scores differ most on {where or 'the table'}; mean absolute "
                "difference", r.estimate("mae", far))
    sec.finding("There, the share of items whose rounded score changed", r.estimate("changed", far))
    s = r["shift"].astype(float)
    level = f"{confidence:.0%}"
    if len(r) == 1:
        sec.text(f"The paired mean shift ({cand} − {base}) is {s.iloc[0]:+.2f} scale points; its {level} interval "
                 f"{'excludes' if bool(_excludes_zero(r, 'shift').iloc[0]) else 'includes'} zero.")
    else:
        sec.text(f"The paired mean shift ({cand} − {base}) ranges from {s.min():+.2f} to {s.max():+.2f} scale "
                 f"points over the {len(r)} "
                 f"{'criteria' if _keys(r, ('baseline', 'candidate')) == ['criterion'] else 'cells'}; "
                 f"{int(_excludes_zero(r, 'shift').sum())} exclude zero at the {level} level.")
    cols = {**{k: k.capitalize() for k in _keys(r, ("baseline", "candidate"))},
            **{f: r.measures[f].label for f in ST.DRIFT_FIGURES}}
    sec.table(r, cols, caption=f"Drift between two judges' scores: {cand} against {base}", csv_name="score-drift")
    sec.metrics["score_drift"] = r[[*_keys(r, ()), "baseline", "candidate", *ST.DRIFT_FIGURES]].to_dict("records")
    return sec


def pass_cut(cut: Results, *, threshold: float = 3.0) -> Section:
    """A score cut into pass/fail tuned against the human mean ≥ ``threshold``: per cell, the rater with the highest
    ROC AUC, its Youden cut with the cut's resampling interval, and the pass rate and agreement at that cut."""
    sec = Section()
    if cut.empty:
        return sec.text(f"No rater has items on both sides of the human mean ≥ {threshold:g}: no ROC to draw.")
    r = cut.reset_index(drop=True)
    best = r["auc"].astype(float).idxmax()
    sec.finding(f"Gating on a threshold (gold: human mean ≥ {threshold:g}), {r.loc[best, 'rater']} separates "
                f"passing from failing items best on {_where(r, best, ('rater',)) or 'the table'}: ROC AUC",
                r.estimate("auc", best))
    sec.finding("Its cut maximising Youden's J (pass: score ≥ cut)", r.estimate("cut", best))
    sec.finding(f"At that cut it passes {r.loc[best, 'pass_rate']:.0%} of the items (gold: "
                f"{r.loc[best, 'gold_rate']:.0%}); Cohen's kappa with gold", r.estimate("kappa", best))
    ks = _keys(r, ("rater",))
    if ks:
        per = r.loc[r.groupby(ks, observed=True)["auc"].idxmax()]
        sec.text("The best rater per " + " · ".join(ks) + ": " + "; ".join(
            f"{_where(r, i, ('rater',))}: {r.loc[i, 'rater']} (AUC {r.loc[i, 'auc']:.2f}, cut {r.loc[i, 'cut']:.3g})"
            for i in per.index) + ".")
    cols = {**{k: k.capitalize() for k in ks}, "rater": _rater_words(r["rater"])[0], "gold_rate": "Gold pass rate",
            **{f: r.measures[f].label for f in ST.CUT_FIGURES}}
    sec.table(r.sort_values([*ks, "auc"], ascending=[True] * len(ks) + [False]), cols,
              caption=f"Pass/fail cut tuned against the human mean ≥ {threshold:g}", csv_name="pass-cut")
    sec.caveats.append(CUT_CAVEAT)
    sec.metrics["pass_cut_best"] = {"rater": str(r.loc[best, "rater"]), "auc": float(r.loc[best, "auc"]),
                                    "cut": float(r.loc[best, "cut"])}
    return sec


def stability(table: pd.DataFrame, *, by: Sequence[str] = ("criterion",), n_resamples: int = 1000,
              confidence: float = 0.95, seed: int = 0) -> Section:
    """Repetition stability of scores (:func:`evallab.metrics.score_stability`) when the table holds several
    samples of an item by one rater; else one sentence saying the table has one sample per item."""
    sec = Section()
    # the columns read here and by score_stability (criterion: its check of unsplit criteria)
    d = require_scores(_slim(table, [*by, "criterion", "dataset"]), what="the stability section")
    keys = [c for c in (*by, "item_id", "judge", "strategy") if c in d.columns]
    if not d.duplicated(keys).any():
        hanna = "dataset" in d.columns and d["dataset"].astype("string").str.lower().eq("hanna").all()
        why = " (HANNA publishes each judge's mean over its samples)" if hanna else ""
        return sec.text(f"The table has one sample per item and rater{why}, so repetition stability cannot be "
                        "measured on it; " + STABILITY_SIMULATED)
    r = ST.score_stability(d, by=by, n_resamples=n_resamples, confidence=confidence, seed=seed).reset_index(drop=True)
    worst = r["within_sd"].astype(float).idxmax()
    sec.finding(f"{r.loc[worst, 'rater']}'s samples of one item spread most on "
                f"{_where(r, worst, ('rater',)) or 'the table'}: mean within-item SD", r.estimate("within_sd", worst))
    sec.finding("There, the ICC(1) of its samples", r.estimate("icc1", worst))
    cols = {**{k: k.capitalize() for k in _keys(r, ("rater",))}, "rater": "Rater", "samples": "Samples per item",
            **{f: r.measures[f].label for f in ST.STABILITY_FIGURES}}
    sec.table(r, cols, caption="Repetition stability: within-item spread across samples", csv_name="stability")
    return sec


__all__ = ["judge_drift", "pass_cut", "prompt_shifts", "stability"]
