"""Report 04, "Trigger thresholds and exclusion stripping": what each section states (issue 25: thin notebooks).

keryx's lexical router (``scout.ts``, ``eval.ts``; formulas in ``data/keryx/SOURCE.md``) selects a skill at IDF
coverage ≥ 0.30 when no skill of another category strictly outscores it, requires the skill's own description to
cover ≥ 0.12 of a trigger probe (leave-one-out), and tells an author to use an existing skill at ≥ 0.55. The
sections, in the report's order, each a function returning a :class:`~evallab.reporting._context.Section`:

- :func:`catalog_section` — what the catalog holds (skills, categories, trigger and "Use when" probes).
- :func:`leave_one_out_section` — leave-one-out trigger accuracy (keryx ``checkSkillSelectedLeaveOneOut``),
  trigger probes apart from "Use when" probes (:func:`evallab.skills.loo_summary`).
- :func:`failures_section` — the trigger probes that fail, and why.
- :func:`skill_accuracy_section` — keryx eval.ts's per-skill trigger accuracy (positives and negatives).
- :func:`thresholds_section` — the thresholds maximising F1 / balanced accuracy / MCC / recall at zero false
  positives, with skill-bootstrap intervals and GroupKFold cross-validation (:func:`evallab.skills.tune_thresholds`).
- :func:`curves_section` — ROC and precision-recall of the three decision scores, average precision beside the base
  rate.
- :func:`scorers_section` — keryx's scorer beside TF-IDF and BM25, headlined by average precision and best F1 (a
  figure the base rate allows), ROC AUC beside them (:func:`evallab.skills.compare_scorers`).
- :func:`stripping_section` — what stripping exclusion clauses changes (keryx docs, "Exclusion clauses in a
  description/triggers are safe to write").

They share one :class:`TriggerStudy` (:func:`load_trigger_study`), which computes the leave-one-out scores and the
(probe, skill) pairs once. Every number a sentence states comes from an estimator's :class:`~evallab.Results`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from evallab._results import Estimate, Results, relabel, results, with_measures
from evallab.reporting._context import Section
from evallab.reporting._params import ParameterError

#: the objectives in words
OBJECTIVE_WORDS = {"f1": "F1", "balanced_accuracy": "balanced accuracy", "mcc": "MCC",
                   "recall_at_zero_fp": "recall at zero FP", "accuracy": "accuracy"}
#: the decision scores tuned, in the report's order
TARGETS = ("select", "support", "use")
#: bootstrap resamples of the leave-one-out figures: at least this many when the bootstrap is on (they are cheap)
LOO_RESAMPLES = 1000
#: a share of negative pairs at or above which plain accuracy is said to be unable to tell thresholds apart
DOMINANT_NEGATIVES = 0.9


@dataclass
class TriggerStudy:
    """One catalog under one scorer, with what every section reuses computed once.

    Attributes
    ----------
    catalog : Catalog
        The skill catalog (:func:`evallab.skills.load_catalog`).
    scorer : str
        ``"keryx"``, ``"tfidf"`` or ``"bm25"``.
    strip_exclusions : bool
        Strip exclusion clauses from the entries' own text.
    grid : ndarray
        The candidate thresholds.
    """

    catalog: object
    scorer: str = "keryx"
    strip_exclusions: bool = True
    grid: np.ndarray = field(default_factory=lambda: np.round(np.linspace(0.0, 1.0, 101), 10))

    @property
    def name(self) -> str:
        """The catalog's file name (no folder), or "the catalog"."""
        return str(self.catalog.path).replace("\\", "/").rsplit("/", 1)[-1] if self.catalog.path else "the catalog"

    @cached_property
    def probes(self) -> pd.DataFrame:
        """keryx's probe population: triggers, else a skill's "Use when" clause."""
        from evallab.skills._trigger_loo import make_probes

        return make_probes(self.catalog)

    @cached_property
    def triggers(self) -> pd.DataFrame:
        """The trigger probes: every trigger figure and the tuning use these."""
        from evallab.skills._trigger_loo import make_probes

        return make_probes(self.catalog, source="triggers")

    @property
    def has_triggers(self) -> bool:
        return len(self.triggers) > 0

    @cached_property
    def loo(self) -> Results:
        """Leave-one-out selection of every probe (both kinds)."""
        from evallab.skills import leave_one_out

        return leave_one_out(self.catalog, self.probes, scorer=self.scorer, strip_exclusions=self.strip_exclusions)

    @cached_property
    def pairs(self) -> pd.DataFrame:
        """Every (trigger probe, skill) pair with its decision scores."""
        from evallab.skills._thresholds import pair_scores
        from evallab.skills._trigger_loo import loo_scores

        scores = loo_scores(self.catalog, self.triggers, scorer=self.scorer, strip_exclusions=self.strip_exclusions)
        return pair_scores(self.catalog, self.triggers, scores=scores)

    @property
    def no_triggers(self) -> str:
        """The one sentence a trigger section says on a catalog without triggers."""
        return (f"{self.name} has no triggers, so this section is not computable: a 'Use when' probe is scored "
                "against the description it was cut from, with nothing left out, and cannot test the router.")


def load_trigger_study(catalog: str = "", *, scorer: str = "keryx", strip_exclusions: bool = True,
               threshold_grid: Sequence[float] = (0.0, 1.0, 101)) -> TriggerStudy:
    """The report's catalog under its scorer.

    Parameters
    ----------
    catalog : str, default ""
        A JSONL catalog path, or ``keryx`` | ``meowkit`` | ``sickn33``; ``""``: the bundled keryx catalog.
    scorer : {"keryx", "tfidf", "bm25"}, default "keryx"
    strip_exclusions : bool, default True
        Strip exclusion clauses from the entries' own text (keryx always does).
    threshold_grid : (start, stop, number), default (0.0, 1.0, 101)
        The candidate thresholds, ``numpy.linspace(start, stop, number)`` rounded to 10 decimals.

    Raises
    ------
    ParameterError
        An unknown scorer, or a grid that is not (start, stop, number ≥ 2).
    DataError
        A catalog file that cannot be read (:func:`evallab.skills.load_catalog`, naming file and line).
    """
    from evallab.skills import load_catalog
    from evallab.skills._trigger_index import SCORERS

    if scorer not in SCORERS:
        raise ParameterError(f"scorer {scorer!r}; expected one of {', '.join(SCORERS)}")
    g = list(threshold_grid)
    if len(g) != 3 or int(g[2]) < 2 or int(g[2]) != g[2]:
        raise ParameterError(f"threshold_grid {g!r}; expected [start, stop, number of thresholds ≥ 2], e.g. "
                             "[0.0, 1.0, 101]")
    grid = np.round(np.linspace(float(g[0]), float(g[1]), int(g[2])), 10)
    return TriggerStudy(load_catalog(catalog or "keryx"), scorer, bool(strip_exclusions), grid)


def _loo_resamples(n_resamples: int) -> int:
    """Resamples of the leave-one-out figures: at least :data:`LOO_RESAMPLES`, none when switched off."""
    return max(int(n_resamples), LOO_RESAMPLES) if n_resamples > 0 else 0


def _count(n: int, noun: str) -> str:
    """"1 skill", "64 skills"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _number(value, unit: str = "coefficient", digits: int | None = None) -> str:
    """A value in words, through :class:`~evallab.Estimate` ("0.697", "98.0%", "—" when missing)."""
    return Estimate(None if value is None or pd.isna(value) else float(value), unit=unit, digits=digits).number()


# ---------------------------------------------------------------------------------------------------- sections
def catalog_section(study: TriggerStudy) -> Section:
    """What the catalog holds: skills, categories, trigger probes (each left out in turn) and "Use when" probes
    (cut from a description, nothing left out: reported apart), and the scorer.

    Parameters
    ----------
    study : TriggerStudy
        From :func:`load_trigger_study`.

    Returns
    -------
    Section
        One sentence; metrics ``catalog`` (file name), ``scorer``, ``strip_exclusions``, ``skills``,
        ``trigger_probes``, ``description_probes``.

    Source: keryx eval.ts (a skill without triggers is probed with its description's "Use when" clause).
    """
    cat, n_trig = study.catalog, len(study.triggers)
    n_use, n_cat = len(study.probes) - n_trig, len({s.category for s in study.catalog})
    sec = Section(metrics={"catalog": study.name, "scorer": study.scorer, "strip_exclusions": study.strip_exclusions,
                           "skills": len(cat), "trigger_probes": n_trig, "description_probes": n_use})
    sec.text(f"{study.name}: {_count(len(cat), 'skill')}, {n_cat:,} {'category' if n_cat == 1 else 'categories'}, "
             f"{_count(n_trig, 'trigger probe')} (each "
             f"left out in turn) and {n_use:,} 'Use when' probes (cut from a description, nothing left out: reported "
             f"apart); scorer {study.scorer}, exclusion stripping {'on' if study.strip_exclusions else 'off'}.")
    return sec


def leave_one_out_section(study: TriggerStudy, *, confidence: float = 0.95, n_resamples: int = 1000,
                          seed: int = 0) -> Section:
    """Leave-one-out trigger accuracy: the share of trigger probes that route back to their own skill with only that
    trigger removed from the index, each probe kind apart.

    Parameters
    ----------
    study : TriggerStudy
        From :func:`load_trigger_study`.
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 1000
        Bootstrap resamples over skills (at least :data:`LOO_RESAMPLES` when on); 0: none.
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Section
        The finding (trigger probes selected of all, with the skill-bootstrap interval; the "Use when" probes
        counted apart) and the per-kind table (:func:`evallab.skills.loo_summary`), or one sentence when the
        catalog has no probe. Metrics ``loo_trigger_selected``, ``loo_trigger_accuracy`` (+ ``_low``/``_high``),
        ``loo_failures``, ``description_probes_selected``; a conclusion; the caveats on the probes (the skills' own
        triggers), on the "Use when" probes and on the small number of skills.

    Source: keryx ``checkSkillSelectedLeaveOneOut`` (scout.ts) and ``triggerAccuracy`` (eval.ts), which pools the
    "Use when" probes with the triggers; here they are never pooled.
    """
    from evallab.skills._trigger_loo import loo_summary

    sec = Section(metrics={"loo_trigger_selected": 0, "loo_trigger_accuracy": None, "loo_trigger_accuracy_low": None,
                           "loo_trigger_accuracy_high": None, "loo_failures": 0, "description_probes_selected": 0})
    n_use = len(study.probes) - len(study.triggers)
    if not len(study.probes):
        sec.text(f"{study.name} has neither triggers nor 'Use when' clauses, so no probe can be scored and "
                 "leave-one-out accuracy is not computable.")
        sec.conclusions.append(f"{study.name} has no probe: leave-one-out trigger accuracy is not computable.")
        return sec
    summary = loo_summary(study.loo, confidence=confidence, n_resamples=_loo_resamples(n_resamples), seed=seed)
    kinds = list(summary["kind"])
    uw = kinds.index("use_when") if "use_when" in kinds else None
    apart = (f" The {summary.at[uw, 'probes']:,} 'Use when' probes, scored against the description they were cut "
             f"from, are counted apart ({summary.at[uw, 'selected']:,} selected)." if uw is not None else "")
    if uw is not None:
        sec.metrics["description_probes_selected"] = int(summary.at[uw, "selected"])
    if "trigger" in kinds:
        i = kinds.index("trigger")
        e = summary.estimate("accuracy", i)
        # the headline row's method is named once under the table; a row computed otherwise is footnoted
        summary = with_measures(summary, relabel(summary.measures["accuracy"], method=e.method))
        k, n = int(summary.at[i, "selected"]), int(summary.at[i, "probes"])
        sec.finding(f"Leave-one-out, {k:,} of {n:,} trigger probes from {_count(int(summary.at[i, 'skills']), 'skill')} "
                    f"route back to their own skill with the {study.scorer} scorer: {e}.{apart}", e)
        sec.metrics.update({"loo_trigger_selected": k, "loo_trigger_accuracy": e.value,
                            "loo_trigger_accuracy_low": e.low, "loo_trigger_accuracy_high": e.high,
                            "loo_failures": n - k})
        sec.conclusions.append(f"Leave-one-out, {e.number()} {e.interval()} of the {n:,} trigger probes ({k:,}) "
                               f"select their own skill; {n - k:,} fail.")
        sec.caveats += [f"Probes are the skills' own triggers ({n:,}), not real user prompts: accuracy on live "
                        "traffic may differ.",
                        f"Small n: {_count(len(study.catalog), 'skill')}; intervals resample skills."]
    else:
        sec.text(f"{study.name} has no triggers, so leave-one-out trigger accuracy is not computable; only 'Use when' "
                 f"probes exist, and they are scored against their own description.{apart}")
        sec.conclusions.append(study.no_triggers)
    if n_use:
        sec.caveats.append(f"The {n_use:,} 'Use when' probes are counted apart: they are scored against the "
                           "description they were cut from, with nothing left out. keryx's own triggerAccuracy "
                           "(eval.ts) pools them with the triggers, which raises the figure by construction.")
    sec.table(summary, {"kind": "Probe kind", "probes": "Probes", "skills": "Skills", "selected": "Selected",
                        "accuracy": "Leave-one-out accuracy", "measures": "What it tests"},
              caption="Leave-one-out accuracy per probe kind, each kind apart (intervals resample skills)")
    return sec


def failures_section(study: TriggerStudy) -> Section:
    """The trigger probes that fail leave-one-out, and why: taken by a skill of another category, not supported by
    their own skill's description (description score < 0.12), or below the selection threshold (0.30).

    Parameters
    ----------
    study : TriggerStudy
        From :func:`load_trigger_study`.

    Returns
    -------
    Section
        A finding with the counts of each reason and the table of failing probes (sorted by skill, then score);
        one sentence instead when the catalog has no triggers or no probe fails.

    Source: keryx ``checkSkillSelectedLeaveOneOut`` (scout.ts): the three conditions of a selection.
    """
    from evallab.skills._thresholds import KERYX_THRESHOLDS

    sec = Section()
    if not study.has_triggers:
        return sec.text(study.no_triggers)
    loo = study.loo[study.loo["kind"] == "trigger"]
    fails = loo[~loo["selected"].astype(bool)]
    if not len(fails):
        return sec.text(f"Every one of the {len(loo):,} trigger probes routes back to its own skill leave-one-out; "
                        "no probe fails.")
    sel, sup = KERYX_THRESHOLDS["select"], KERYX_THRESHOLDS["support"]
    outranked = fails["outranked_by"].notna()
    weak = fails["description_score"] < sup
    low_only = ~outranked & ~weak
    e = Estimate(len(fails) / len(loo), unit="proportion", n=len(loo), n_unit="trigger probes",
                 label="Failure share")
    both = int((outranked & weak).sum())
    sec.finding(f"{len(fails):,} of {len(loo):,} trigger probes fail leave-one-out: {int(outranked.sum()):,} are "
                f"taken by a skill of another category and {int(weak.sum()):,} are not supported by their own "
                f"skill's description (description score < {sup:.2f})"
                + (f", {both:,} of them both" if both else "")
                + (f"; {int(low_only.sum()):,} only score below {sel:.2f}" if low_only.any() else "") + ".", e)
    shown = fails.assign(outranked_by=fails["outranked_by"].fillna("none")) \
        .sort_values(["skill_id", "score"]).reset_index(drop=True)
    sec.table(shown, {"skill_id": "Skill", "prompt": "Trigger", "score": "Score", "description_score":
                      "Description score", "outranked_by": "Outranked by", "rank": "Rank"},
              caption="Trigger probes that fail leave-one-out", csv_name="loo_failures")
    return sec


def skill_accuracy_section(study: TriggerStudy, *, confidence: float = 0.95, n_resamples: int = 1000,
                           seed: int = 0, worst: int = 15) -> Section:
    """keryx eval.ts's per-skill trigger accuracy: each skill's triggers (left out) must select it, and the first
    trigger (else the description) of each of its 3 nearest other-category skills must not.

    Parameters
    ----------
    study : TriggerStudy
        From :func:`load_trigger_study`.
    confidence, n_resamples, seed : float, int, int; default 0.95, 1000, 0
        As for :func:`leave_one_out_section` (the interval of the mean).
    worst : int, default 15
        Rows of the table (the lowest accuracies).

    Returns
    -------
    Section
        The finding (mean per-skill accuracy over the skills with triggers, with its interval over skills; how
        many are perfect) and the table of the ``worst`` skills; one sentence when the catalog has no triggers.
        Metric ``mean_skill_trigger_accuracy``.

    Source: keryx eval.ts (``synthesizeNegatives``; :func:`evallab.skills.trigger_accuracy`,
    :func:`evallab.skills.skill_accuracy_summary`).
    """
    from evallab.skills._trigger_loo import skill_accuracy_summary, trigger_accuracy

    sec = Section(metrics={"mean_skill_trigger_accuracy": None})
    if not study.has_triggers:
        return sec.text(study.no_triggers)
    per, _ = trigger_accuracy(study.catalog, scorer=study.scorer, strip_exclusions=study.strip_exclusions,
                              probes=study.triggers)
    per = per[per["n_pos"] > 0].reset_index(drop=True)
    summary = skill_accuracy_summary(per, confidence=confidence, n_resamples=_loo_resamples(n_resamples), seed=seed)
    e = summary.estimate("mean_accuracy")
    n, perfect = int(summary.at[0, "skills"]), int(summary.at[0, "perfect"])
    negatives = ("negatives: the first trigger, else the description, of each of up to 3 nearest other-category "
                 "skills" if per["n_neg"].sum() else "no negatives: no skill of another category to draw them from")
    sec.finding(f"Mean per-skill trigger accuracy is {e} over the {_count(n, 'skill')} with triggers (positives: "
                f"their triggers, each left out; {negatives}); {perfect:,} {'is' if perfect == 1 else 'are'} "
                "perfect.", e)
    sec.metrics["mean_skill_trigger_accuracy"] = e.value
    k = min(worst, len(per))
    sec.table(per.sort_values(["accuracy", "skill_id"]).head(k).reset_index(drop=True),
              {"skill_id": "Skill", "n_pos": "Positives", "tp": "Selected", "n_neg": "Negatives", "tn": "Rejected",
               "accuracy": "Trigger accuracy"},
              caption=(f"Per-skill trigger accuracy: the {k} worst of {_count(len(per), 'skill')}" if k < len(per)
                       else f"Per-skill trigger accuracy of the {_count(len(per), 'skill')} with triggers"))
    return sec


def _tuned_table(tunings: Sequence) -> Results:
    """The tables of several :class:`~evallab.skills._thresholds.TuningResult` as one :class:`~evallab.Results`."""
    first = tunings[0].table
    return results(pd.concat([t.table.to_frame() for t in tunings], ignore_index=True), first.measures,
                   level=first.level, keys=first.keys)


def _row(table: pd.DataFrame, **match) -> int | None:
    """The position of the row whose columns equal ``match``, or None."""
    ok = np.ones(len(table), bool)
    for c, v in match.items():
        ok &= (table[c] == v).to_numpy()
    hit = np.flatnonzero(ok)
    return int(hit[0]) if len(hit) else None


def thresholds_section(study: TriggerStudy, *, objective: str = "f1", confidence: float = 0.95,
                       n_resamples: int = 200, n_splits: int = 5, seed: int = 0) -> Section:
    """Threshold tuning over every (trigger probe, skill) pair: for each decision score (select, support, use), the
    threshold maximising each objective, with skill-bootstrap intervals and a GroupKFold estimate, against keryx's
    constants judged by the same objective and constraint.

    Parameters
    ----------
    study : TriggerStudy
        From :func:`load_trigger_study`.
    objective : {"f1", "balanced_accuracy", "mcc", "recall_at_zero_fp", "accuracy"}, default "f1"
        The headline objective.
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 200
        Bootstrap resamples over skills; 0 skips the intervals.
    n_splits : int, default 5
        GroupKFold folds over probes grouped by skill.
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Section
        The finding on the ``objective``-optimal selection threshold (with its interval, the cross-validated
        threshold, the value reached and keryx's), the finding on plain accuracy beside its base rate, the tuned
        table and the metric-against-threshold figure; one sentence when the catalog has no triggers. Metrics
        ``objective``, ``pairs``, ``positive_pairs``, ``select_threshold`` (+ ``_low``/``_high``),
        ``select_cv_threshold``, ``select_value``, ``select_value_at_keryx``, ``select_fp``,
        ``select_fp_at_keryx``, ``select_nothing_value``, ``select_accuracy``, ``select_accuracy_at_keryx``,
        ``accuracy_base_rate``, ``support_threshold``, ``use_threshold``, ``tuned`` (the table's records); a
        conclusion and the caveat that the interval and CV come from the pairs used to tune.

    Raises
    ------
    ParameterError
        An unknown ``objective``.

    Source: F1, balanced accuracy (Brodersen et al. 2010), MCC (Matthews 1975) as scikit-learn computes them;
    keryx's constants from scout.ts (:data:`evallab.skills.KERYX_THRESHOLDS`).
    """
    from evallab.reporting import _plots as plots
    from evallab.skills._thresholds import OBJECTIVES, tune_thresholds

    if objective not in OBJECTIVES:
        raise ParameterError(f"objective {objective!r}; expected one of {', '.join(OBJECTIVES)}")
    keys = ["pairs", "positive_pairs", "select_threshold", "select_threshold_low", "select_threshold_high",
            "select_cv_threshold", "select_value", "select_value_at_keryx", "select_fp", "select_fp_at_keryx",
            "select_nothing_value", "select_accuracy", "select_accuracy_at_keryx", "accuracy_base_rate",
            "support_threshold", "use_threshold"]
    sec = Section(metrics={"objective": objective, **dict.fromkeys(keys), "pairs": 0, "positive_pairs": 0,
                           "tuned": []})
    if not study.has_triggers:
        sec.conclusions.append(study.no_triggers)
        return sec.text(study.no_triggers)
    pairs = study.pairs
    tunings = [tune_thresholds(pairs, t, grid=study.grid, n_resamples=n_resamples, n_splits=n_splits, seed=seed,
                               confidence=confidence) for t in TARGETS]
    tuned = _tuned_table(tunings)
    word = OBJECTIVE_WORDS[objective]
    s = _row(tuned, target="select", objective=objective)
    thr = tuned.estimate("threshold", s)
    n_pairs, n_pos = int(tuned.at[s, "pairs"]), int(tuned.at[s, "positives"])

    def h(target, col, obj=objective):
        i = _row(tuned, target=target, objective=obj)
        v = tuned.at[i, col] if i is not None else None
        return None if v is None or pd.isna(v) else v.item() if hasattr(v, "item") else v

    if thr.value is not None:
        val, kv = tuned.estimate("value", s), tuned.estimate("keryx_value", s)
        cv = tuned.estimate("cv_threshold", s)
        sec.finding(f"Over {n_pairs:,} (trigger probe, skill) pairs ({n_pos:,} positive), the {word}-optimal "
                    f"selection threshold is {thr} (cross-validated {cv.number()}); it reaches {word} "
                    f"{' '.join(x for x in (val.number(), val.interval()) if x)} ({int(tuned.at[s, 'fp']):,} false "
                    "positives) against "
                    f"{kv.number()} ({int(tuned.at[s, 'keryx_fp']):,} false positives) at keryx's "
                    f"{tuned.at[s, 'keryx_threshold']:.2f}; selecting no skill scores "
                    f"{tuned.estimate('select_nothing_value', s).number()}.", thr)
        sec.conclusions.append(f"The {word}-optimal selection threshold is {thr.number()} (cross-validated "
                               f"{cv.number()}), giving {word} {val.number()} against {kv.number()} at keryx's "
                               f"threshold, on the trigger probes.")
    else:
        sec.finding(f"No selection threshold meets the {word} objective on this catalog: {tuned.at[s, 'note']}.")
    a = _row(tuned, target="select", objective="accuracy")
    if a is not None:
        base = Estimate(float(tuned.at[a, "select_nothing_value"]), unit="proportion", n=n_pairs, n_unit="pairs",
                        label="Share of negative pairs")
        acc, kacc = tuned.estimate("value", a), tuned.estimate("keryx_value", a)
        verdict = (" — plain accuracy cannot tell a working threshold from selecting nothing"
                   if base.value >= DOMINANT_NEGATIVES else "")
        sec.finding(f"Plain accuracy is {acc.number()} at its best selection threshold "
                    f"({tuned.estimate('threshold', a).number()}) and {kacc.number()} at keryx's "
                    f"{tuned.at[a, 'keryx_threshold']:.2f}; {base.number()} of the {n_pairs:,} pairs are negatives, "
                    f"so selecting no skill at all already scores {_number(base.value)}{verdict}.", base)
    if not int(tuned.at[s, "negatives"]):
        sec.text(f"Every pair of {study.name} is positive (the catalog has one category, and same-category "
                 "neighbours are left out), so no threshold is tested against a wrong skill here.")
    shown = tuned.assign(objective=tuned["objective"].map(OBJECTIVE_WORDS))
    sec.table(shown, {"target": "Decision", "objective": "Objective", "threshold": "Tuned threshold",
                      "value": "Objective value", "fp": "False positives", "cv_threshold": "CV threshold",
                      "cv_value": "CV value", "select_nothing_value": "Selecting no skill",
                      "keryx_value": "Value at keryx's threshold", "keryx_fp": "False positives at keryx's"},
              caption="Tuned thresholds per decision and objective on the trigger probes, against keryx's select "
                      "0.30, support 0.12 and use 0.55 (intervals resample skills; GroupKFold cross-validation)",
              csv_name="tuned")
    sec.figure(plots.plot_threshold_sweep(tunings, objective=objective,
                                          population=f"{len(study.triggers):,} trigger probes"))
    sec.metrics.update({
        "pairs": len(pairs), "positive_pairs": int(pairs["label"].sum()),
        "select_threshold": h("select", "threshold"), "select_threshold_low": h("select", "threshold_low"),
        "select_threshold_high": h("select", "threshold_high"), "select_cv_threshold": h("select", "cv_threshold"),
        "select_value": h("select", "value"), "select_value_at_keryx": h("select", "keryx_value"),
        "select_fp": h("select", "fp"), "select_fp_at_keryx": h("select", "keryx_fp"),
        "select_nothing_value": h("select", "select_nothing_value"),
        "select_accuracy": h("select", "value", "accuracy"),
        "select_accuracy_at_keryx": h("select", "keryx_value", "accuracy"),
        "accuracy_base_rate": h("select", "select_nothing_value", "accuracy"),
        "support_threshold": h("support", "threshold"), "use_threshold": h("use", "threshold"),
        "tuned": tuned.to_frame().to_dict("records")})
    sec.caveats.append("The threshold interval and the cross-validated threshold come from the same pairs used to "
                       "tune it.")
    return sec


def curves_section(study: TriggerStudy) -> Section:
    """ROC and precision-recall curves of the three decision scores, with average precision read against the base
    rate (the share of positive pairs: the average precision of a scorer ranking at random) and ROC AUC beside it.

    Parameters
    ----------
    study : TriggerStudy
        From :func:`load_trigger_study`.

    Returns
    -------
    Section
        A finding on the select score (average precision, base rate, ROC AUC), the per-score table
        (:func:`evallab.skills.roc_pr_summary`) and the ROC / PR figure; one sentence when the catalog has no
        triggers or the pairs hold one class only. Metrics ``select_roc_auc``, ``select_average_precision``.

    Source: scikit-learn ``roc_curve``, ``precision_recall_curve``, ``average_precision_score``,
    ``roc_auc_score``; on reading ROC against PR under class imbalance, Saito & Rehmsmeier (2015), PLoS ONE
    10(3): e0118432.
    """
    from evallab.reporting import _plots as plots
    from evallab.skills._thresholds import roc_pr, roc_pr_summary

    sec = Section(metrics={"select_roc_auc": None, "select_average_precision": None})
    if not study.has_triggers:
        return sec.text(study.no_triggers)
    summary = roc_pr_summary(study.pairs, TARGETS)
    s = _row(summary, target="select")
    ap, auc = summary.estimate("average_precision", s), summary.estimate("roc_auc", s)
    if ap.value is None:
        return sec.text(f"The ROC and precision-recall curves are not computable on {study.name}: "
                        f"{summary.at[s, 'note'].removeprefix('not computable: ')}.")
    base = summary.estimate("base_rate", s)
    pos = int(summary.at[s, "positives"])
    sec.finding(f"The select score ({study.scorer} scorer) ranks own skills with average precision {ap.number()} "
                f"against a base rate of {base.number()} ({pos:,} of {int(summary.at[s, 'pairs']):,} pairs positive: "
                f"what a scorer ranking at random reaches); its ROC AUC is {auc.number()}, but "
                f"{_fp_scale(int(summary.at[s, 'pairs']) - pos, pos)}.", ap)
    sec.table(summary, {"target": "Decision score", "average_precision": "Average precision",
                        "base_rate": "Base rate", "roc_auc": "ROC AUC"},
              caption="Average precision of each decision score against the base rate, ROC AUC beside it")
    sec.figure(plots.plot_curves({t: roc_pr(study.pairs, t) for t in TARGETS},
                                 title=f"{study.scorer} scorer: ROC and precision-recall of each decision score "
                                       f"({len(study.triggers):,} trigger probes)"))
    sec.metrics.update({"select_roc_auc": auc.value, "select_average_precision": ap.value})
    return sec


def _fp_scale(negatives: int, positives: int) -> str:
    """Why ROC AUC is not the headline when negatives dominate, in this table's numbers."""
    one = Estimate(0.01, unit="proportion", digits=0).number()
    return (f"it counts false positives as a share of the {negatives:,} negative pairs, where a false-positive "
            f"rate of {one} is already {round(negatives / 100):,} wrong selections against {positives:,} right ones")


def _ranked(table: pd.DataFrame, col: str) -> list[int]:
    """Row positions by ``col``, highest first (missing last)."""
    return list(np.argsort(-table[col].fillna(-np.inf).to_numpy(float), kind="mergesort"))


def scorers_section(study: TriggerStudy, scorers: Sequence[str] = ("keryx", "tfidf", "bm25"), *,
                    confidence: float = 0.95, n_resamples: int = 200, seed: int = 0) -> Section:
    """keryx's scorer beside TF-IDF cosine and BM25 on the same trigger probes, headlined by average precision —
    which a scorer ranking at random scores at the base rate — and the best F1, with ROC AUC beside them: with one
    own skill per probe against dozens of others nearly every pair is negative, and ROC AUC, built on the
    false-positive rate, stays high for a scorer whose selections are mostly wrong.

    Parameters
    ----------
    study : TriggerStudy
        From :func:`load_trigger_study`; its scorer is the reference of the paired differences when compared (else the
        first of ``scorers``).
    scorers : sequence of {"keryx", "tfidf", "bm25"}, default all three
        Empty: the comparison is skipped.
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 200
        Bootstrap resamples over skills (paired across scorers); 0: no interval.
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Section
        Findings: the best scorer by average precision against the base rate (and its paired difference from the
        reference), the best F1 likewise, and ROC AUC beside them; the table
        (:func:`evallab.skills.compare_scorers`) and the curves of each scorer; one sentence when skipped or the
        catalog has no triggers. Metric ``scorers`` (the table's records); a conclusion.

    Source: TF-IDF cosine (scikit-learn ``TfidfVectorizer``), BM25 (bm25s; Robertson & Zaragoza 2009) normalised
    to the query's best attainable evidence; average precision and ROC AUC as scikit-learn computes them.
    """
    from evallab.reporting import _plots as plots
    from evallab.skills._scorer_comparison import compare_scorers

    sec = Section(metrics={"scorers": []})
    scorers = list(scorers)
    if not scorers:
        return sec.text("The scorer comparison was skipped (compare_scorers is empty).")
    if not study.has_triggers:
        return sec.text(study.no_triggers)
    reference = study.scorer if study.scorer in scorers else scorers[0]
    table, curves = compare_scorers(study.catalog, scorers, strip_exclusions=study.strip_exclusions,
                                    probes=study.triggers, grid=study.grid, n_resamples=n_resamples,
                                    confidence=confidence, seed=seed, reference=reference)
    ref = scorers.index(reference)
    base = table.estimate("base_rate", 0)
    population = (f"the same {len(study.triggers):,} trigger probes ({int(table.at[0, 'pairs']):,} (probe, skill) "
                  f"pairs, {base.number()} of them positive: the average precision of a scorer ranking at random)")
    if table["average_precision"].isna().all():
        return sec.text(f"Average precision and ROC AUC are not computable on {study.name}: the pairs hold one class "
                        "only (every pair positive or every pair negative).")
    if len(scorers) == 1:
        e, f1, auc = (table.estimate(c, 0) for c in ("average_precision", "f1", "roc_auc"))
        sec.finding(f"On {population}, the {scorers[0]} scorer reaches average precision {e}; its best F1 is "
                    f"{' '.join(x for x in (f1.number(), f1.interval()) if x)} and its ROC AUC "
                    f"{auc.number()}.", e)
    for col, what in (("average_precision", "average precision"), ("f1", "F1")) if len(scorers) > 1 else ():
        order = _ranked(table, col)
        top, low = order[0], order[-1]
        e = table.estimate(col, top)
        others = ", ".join(f"{table.at[i, 'scorer']} {table.estimate(col, i).number()}" for i in order[1:])
        lowest = f"; {table.at[low, 'scorer']} is the lowest of {len(scorers)}" if low == ref else ""
        diff = ""
        if top != ref:
            d = table.estimate(f"delta_{col}", top)
            if d.has_interval:
                tell = ("its interval excludes 0" if d.excludes(0) else
                        "its interval includes 0, so these data cannot tell the two apart")
                diff = (f" ({table.at[top, 'scorer']} − {reference}: {d.number()} {d.interval()}, {d.level:.0%} CI, "
                        f"{d.method}; {tell})")
        lead = f"On {population}, " if col == "average_precision" else "At each scorer's own F1-best threshold, "
        sec.finding(f"{lead}{table.at[top, 'scorer']} has the highest {what}: {e}; {others}{lowest}{diff}.", e)
    auc_order = _ranked(table, "roc_auc")
    a = table.estimate("roc_auc", auc_order[0])
    if len(scorers) > 1:
        same = auc_order == _ranked(table, "average_precision")
        listed = ", ".join(f"{table.at[i, 'scorer']} {table.estimate('roc_auc', i).number()}" for i in auc_order)
        pos, n_pairs = int(table.at[0, "positive_pairs"]), int(table.at[0, "pairs"])
        sec.finding(f"ROC AUC {'orders the scorers the same way' if same else 'orders the scorers differently'} "
                    f"({listed}); it is shown beside average precision and the best F1, not as the headline, because "
                    f"{_fp_scale(n_pairs - pos, pos)}.", a)
    sec.table(table, {"scorer": "Scorer", "average_precision": "Average precision",
                      "delta_average_precision": f"Δ average precision vs {reference}", "f1": "Best F1",
                      "delta_f1": f"Δ best F1 vs {reference}", "f1_threshold": "F1 threshold", "roc_auc": "ROC AUC",
                      "loo_trigger_accuracy_at_f1_threshold": "LOO trigger accuracy at its own threshold",
                      "loo_trigger_accuracy_at_keryx_thresholds": "LOO trigger accuracy at keryx's 0.30 / 0.12"},
              caption=f"Scorers compared on {population}")
    sec.figure(plots.plot_curves(curves, title="Selection score of each scorer: ROC and precision-recall"))
    sec.metrics["scorers"] = table.to_frame().to_dict("records")
    if len(scorers) > 1:
        top = _ranked(table, "average_precision")[0]
        sec.conclusions.append(
            f"By average precision (base rate {base.number()}), {table.at[top, 'scorer']} ranks own skills best "
            f"({table.estimate('average_precision', top).number()}); {reference} reaches "
            f"{table.estimate('average_precision', ref).number()} (best F1 "
            f"{table.estimate('f1', ref).number()}, ROC AUC {table.estimate('roc_auc', ref).number()}).")
    return sec


def stripping_section(study: TriggerStudy, *, confidence: float = 0.95, n_resamples: int = 1000,
                      seed: int = 0) -> Section:
    """Exclusion stripping before and after: every probe of the per-skill trigger accuracy (trigger probes as
    positives, and the negatives) graded with the entries' exclusion clauses kept, then stripped.

    Parameters
    ----------
    study : TriggerStudy
        From :func:`load_trigger_study`.
    confidence, n_resamples, seed : float, int, int; default 0.95, 1000, 0
        As for :func:`leave_one_out_section`.

    Returns
    -------
    Section
        The finding (verdicts changed; correct verdicts before and after, the paired difference with its interval
        over skills) and the table of the probes that change (a sentence when none does); one sentence when the
        catalog has no triggers. Metrics ``stripping_changed``, ``stripping_correct_before``,
        ``stripping_correct_after``; a conclusion.

    Source: keryx docs, "Exclusion clauses in a description/triggers are safe to write"
    (:func:`evallab.skills.strip_exclusions`, :func:`evallab.skills.stripping_effect`).
    """
    from evallab.skills._trigger_loo import stripping_effect, stripping_summary

    sec = Section(metrics={"stripping_changed": None, "stripping_correct_before": None,
                           "stripping_correct_after": None})
    if not study.has_triggers:
        return sec.text(study.no_triggers)
    effect = stripping_effect(study.catalog, scorer=study.scorer, probes=study.triggers)
    s = stripping_summary(effect, confidence=confidence, n_resamples=_loo_resamples(n_resamples), seed=seed)
    before, after, d = (s.estimate(c) for c in ("correct_before", "correct_after", "delta_correct"))
    changed, probes = int(s.at[0, "changed"]), int(s.at[0, "probes"])
    sec.finding(f"Stripping exclusion clauses changes {changed:,} of {probes:,} probe verdicts "
                f"({int(s.at[0, 'positives']):,} trigger probes, {int(s.at[0, 'negatives']):,} negatives); correct "
                f"verdicts go from {before.number()} to {after.number()}: {d}.", d)
    sec.metrics.update({"stripping_changed": changed, "stripping_correct_before": before.value,
                        "stripping_correct_after": after.value})
    sec.conclusions.append(f"Stripping exclusion clauses changes {changed:,} verdicts; correct verdicts "
                           f"{before.number()} → {after.number()}.")
    moved = effect[effect["changed"].astype(bool)].reset_index(drop=True)
    if not len(moved):
        return sec.text("No probe changes verdict when the exclusion clauses are stripped.")
    sec.table(moved, {"kind": "Kind", "skill_id": "Skill", "prompt": "Probe", "score_before": "Score before",
                      "score_after": "Score after", "correct_before": "Correct before",
                      "correct_after": "Correct after"},
              caption="Probes whose verdict changes when exclusion clauses are stripped", csv_name="stripping")
    return sec


__all__ = ["catalog_section", "curves_section", "failures_section", "leave_one_out_section", "load_trigger_study",
           "scorers_section", "skill_accuracy_section", "stripping_section", "thresholds_section"]
