"""Report 03, "Anchor sets and positive-bias inflation": what each section states (issue 25: thin notebooks).

MeowKit's rubric rules (spec "Rubric Library", rules 1, 4, 5; ``calibration-guide.md``) claim that PASS-only
anchors inflate an evaluator's pass rate by 40–60% and that FAIL-last anchors prime FAIL. The sections, in the
report's order:

- :func:`few_shot_section` — LLMBar's in-context strategies against 0-shot (Zeng et al. 2024, LLMBar, §4:
  ``Vanilla_1shot``/``Vanilla_2shot``): first-slot preference and accuracy per judge, deltas paired over items.
- :func:`rubric_section` — the MeowKit rubric library validated, and hard-fail propagation per preset (spec
  "Hard-Fail Propagation", rule 3).
- :func:`experiment_section` — the PASS-only / FAIL-last vs balanced experiment with a judge of the user's
  (MeowKit spec 001, "PASS / WARN / FAIL Anchors"; rule 5 for FAIL-last priming), after :func:`run_experiment`.
- :func:`live_section` — the same experiment on the committed SmolLM2-135M run and the content-free probe (Zhao
  et al. 2021, "Calibrate Before Use", §4).

Each returns a :class:`~evallab.reporting._context.Section`; every number it states comes from an estimator's
:class:`~evallab.Results` (its value, interval, level, method and n), never retyped here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from evallab._results import Measure, Results, results
from evallab._results import common_methods as _common_methods
from evallab.metrics import _inflation as inflation
from evallab.metrics import _position as position
from evallab.reporting._context import Section, bundled_section

#: the LLMBar strategies the few-shot section compares by default (0-shot first)
FEW_SHOT = ("Vanilla", "Vanilla_1shot", "Vanilla_2shot")


#: the rubric section's heading and what it checks (shown with the section only)
RUBRIC_HEADING = ("## The rubric library: validation and hard-fail propagation\n"
    "Every rule of `rubric-rules.md` a file can show, plus what upstream's validator misses (a preset "
    "naming a missing rubric, weights out of range, an unknown threshold, instruction-like text). Then "
    "each preset's verdict when every rubric passes but `functionality` fails: hard-fail makes it FAIL "
    "whatever the weighted average.")

#: the live section's heading and what it runs (shown with the section only)
LIVE_HEADING = ("## Live judge: SmolLM2-135M on llama.cpp\n"
    "The anchor-set experiment run for real: the keryx calibration answers graded by "
    "SmolLM2-135M-Instruct on llama.cpp (recorded by `make live`, replayed here) under balanced, "
    "PASS-only and FAIL-last anchors drawn from other scenarios, greedy, with structured verdicts; plus "
    "the content-free probe — an empty answer graded against each scenario's rubric under each anchor set"
    " (Zhao et al. 2021, \"Calibrate Before Use\").")


# ------------------------------------------------------------------------------------------------ helpers
def _largest(res: Results, rows: pd.DataFrame, column: str):
    """``(row, estimate, k)``: the row of ``rows`` (a subset of ``res``) with the largest ``|column|``, its
    :class:`~evallab.Estimate`, and how many of ``rows``' intervals exclude 0."""
    i = rows[column].abs().idxmax()
    return i, res.estimate(column, i), sum(res.estimate(column, j).excludes(0) for j in rows.index)


def _join(words: Sequence[str]) -> str:
    return ", ".join(map(str, words)) or "none of them"


def load_few_shot(verdicts_path: str = "", llmbar_dir: str = "", *, subsets: Sequence[str] = (),
                  judges: Sequence[str] = (), strategies: Sequence[str] = FEW_SHOT) -> pd.DataFrame:
    """The verdict table of the few-shot section: the user's table at ``verdicts_path`` (filtered by ``subsets``
    and ``judges``), or the bundled LLMBar (at ``llmbar_dir``), keeping the rows of ``strategies``.

    Parameters
    ----------
    verdicts_path : str, default ""
        A tidy verdict table (CSV, JSONL or Parquet); ``""``: LLMBar.
    llmbar_dir : str, default ""
        LLMBar folder; ``""``: the bundled ``data/llmbar``.
    subsets, judges : sequence of str, default ()
        Filters (:func:`evallab.verdicts.select`); empty: all (empty ``subsets`` on the bundled LLMBar: its
        Natural and Adversarial sets).
    strategies : sequence of str, default :data:`FEW_SHOT`
        The strategies kept (a table without them gives an empty frame, which :func:`few_shot_section` words).

    Raises
    ------
    DataError, VerdictTableError
        From :func:`evallab.datasets.load_study`, naming the file, row or column.
    """
    from evallab.datasets import load_study

    d = load_study(verdicts_path, llmbar_dir, subsets=subsets, judges=list(judges) or None,
                   strategies=None if verdicts_path else list(strategies), llmbar_selection=True)
    return d[d["strategy"].isin(list(strategies))]


# ------------------------------------------------------------------------------------------- the sections
def few_shot_section(shots: pd.DataFrame, *, baseline: str = "Vanilla",
                     variants: Sequence[str] = ("Vanilla_1shot", "Vanilla_2shot"), confidence: float = 0.95,
                     n_resamples: int = 1000, seed: int = 0) -> Section:
    """Offline evidence: how in-context examples move each judge's first-slot preference and accuracy against the
    0-shot ``baseline`` (LLMBar's ``Vanilla_1shot`` shows one example answered "Output (a)": a one-sided anchor;
    ``Vanilla_2shot`` a mixed pair). Per judge, pooled over the table's subsets.

    Parameters
    ----------
    shots : DataFrame
        From :func:`load_few_shot`.
    baseline : str, default "Vanilla"
        The 0-shot strategy.
    variants : sequence of str, default ("Vanilla_1shot", "Vanilla_2shot")
        The few-shot strategies; the first one is the headline of the metrics and conclusions.
    confidence : float, default 0.95
        Level of every interval.
    n_resamples : int, default 1000
        Bootstrap resamples over items.
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Section
        A finding (the largest first-slot shift and how many intervals exclude 0) and one on accuracy, the table
        (:func:`evallab.metrics._position.anchor_effect`, each interval's method named by it), two figures;
        metrics ``llmbar_judges``, ``llmbar_pairs`` (items),
        ``max_abs_first_slot_shift_pp`` and ``judges_first_slot_shift_ci_excludes_0`` (for ``variants[0]``),
        ``anchor_effect`` (the table's records). A table without ``baseline`` and a variant, or on which neither
        figure can be compared (one presentation order and no gold), gets one sentence saying why, and no table.

    Source: first-slot preference as in :mod:`evallab.metrics._position` (share of decisive replies picking the
    output shown first, both orders pooled); LLMBar's strategies from Zeng et al. (2024), §4 and Table 3.
    """
    from evallab.reporting import _plots as plots
    from evallab.verdicts import snapshot_note

    variants = list(variants)
    sec = Section(metrics={"llmbar_judges": 0, "llmbar_pairs": 0, "max_abs_first_slot_shift_pp": None,
                           "judges_first_slot_shift_ci_excludes_0": 0, "anchor_effect": []})
    have = set(shots["strategy"].dropna().astype(str).unique()) if "strategy" in shots.columns else set()
    if baseline not in have or not set(variants) & have:
        sec.text(f"The few-shot comparison needs strategy {baseline} and one of {_join(variants)}; the table has "
                 f"{_join(sorted(have))}, so this section is skipped.")
        sec.conclusions.append(f"The offline few-shot evidence could not be computed: the table lacks strategy "
                               f"{baseline} or the few-shot strategies ({_join(variants)}).")
        return sec
    sec.text(f"{len(shots):,} replies to {shots['item_id'].nunique():,} items by {shots['judge'].nunique()} judges, "
             f"strategies {_join(sorted(have))}.")
    if snapshot_note(shots):
        sec.text(f"Warning: {snapshot_note(shots)}.")
    ae = _common_methods(position.anchor_effect(shots, baseline=baseline, variants=variants, confidence=confidence,
                                                n_resamples=n_resamples, seed=seed))
    if ae.attrs.get("missing_baseline"):
        sec.text(f"Left out, without verdicts under {baseline}: "
                 f"{_join(', '.join(map(str, k.values())) for k in ae.attrs['missing_baseline'])}.")
    shifted = ae[ae["strategy"] != baseline]
    moved = shifted.dropna(subset=["delta_first_slot"])
    acc = shifted.dropna(subset=["delta_accuracy"])
    cols = ["judge", "strategy", "items", "first_slot_preference", "accuracy", "delta_first_slot", "delta_accuracy"]
    if not len(moved) and not len(acc):  # nothing to compare: the reason, not a table of dashes
        why = next((n for n in shifted["note"] if isinstance(n, str) and n), "no judge has a decisive reply")
        sec.text(f"Neither first-slot preference nor accuracy can be compared between the strategies on this table "
                 f"({why}).")
        sec.conclusions.append(f"The few-shot comparison ({_join(variants)} against {baseline}) is not computable "
                               f"on this table: {why.removeprefix('not computable: ')}.")
        sec.metrics.update({"llmbar_judges": int(shots["judge"].nunique()),
                            "llmbar_pairs": int(shots["item_id"].nunique())})
        return sec
    if len(moved):
        i, e, sig = _largest(ae, moved, "delta_first_slot")
        sec.finding(f"In-context examples move first-slot preference most for {ae.at[i, 'judge']} with "
                    f"{ae.at[i, 'strategy']}: {e} against {baseline}; {sig} of {len(moved)} judge × strategy shifts "
                    f"have an interval excluding 0.", e)
    else:
        why = next((n for n in shifted["note"] if isinstance(n, str) and n), "no judge has decisive replies")
        sec.text(f"First-slot preference is not computable on this table ({why}); the table shows accuracy only.")
        cols = [c for c in cols if "first_slot" not in c]
    if len(moved) and not len(acc):
        sec.text("Accuracy is not computable on this table (no parsed reply with gold); the table shows first-slot "
                 "preference only.")
        cols = [c for c in cols if "accuracy" not in c]
    if len(acc):
        i, e, sig = _largest(ae, acc, "delta_accuracy")
        sec.finding(f"The largest change in accuracy against gold is {e} ({ae.at[i, 'judge']} with "
                    f"{ae.at[i, 'strategy']}); {sig} of {len(acc)} judge × strategy changes have an interval "
                    f"excluding 0.", e)
    sec.table(ae, cols, caption=f"First-slot preference and accuracy per strategy; deltas against {baseline}",
              csv_name="anchor")
    for y, what, rows in (("delta_first_slot", "first-slot preference", moved), ("delta_accuracy", "accuracy", acc)):
        if len(rows):
            sec.figure(plots.interval_plot(rows, x="judge", y=y, low=f"{y}_low", high=f"{y}_high", hue="strategy",
                                           scale=100, ref=0.0, title=f"Change in {what} vs {baseline} (0-shot)",
                                           ylabel=f"Δ {what} (percentage points, {confidence:.0%} interval)",
                                           xlabel="judge"))
    one = moved[moved["strategy"] == variants[0]]
    sig1 = _largest(ae, one, "delta_first_slot")[2] if len(one) else 0
    sec.metrics.update({
        "llmbar_judges": int(shots["judge"].nunique()), "llmbar_pairs": int(shots["item_id"].nunique()),
        "max_abs_first_slot_shift_pp": float(100 * one["delta_first_slot"].abs().max()) if len(one) else None,
        "judges_first_slot_shift_ci_excludes_0": int(sig1), "anchor_effect": ae.to_frame().to_dict("records")})
    if len(one):
        sec.conclusions.append(f"{variants[0]} moves first-slot preference by up to "
                               f"{100 * one['delta_first_slot'].abs().max():.1f} pp against {baseline}; {sig1} of "
                               f"{len(one)} judges' intervals exclude 0.")
    if "Vanilla_1shot" in set(shifted["strategy"].unique()):
        sec.caveats.append("The LLMBar few-shot strategies were not designed as an anchor experiment: "
                           "Vanilla_1shot's single example is one-sided, so it confounds the example's content with "
                           "its answer.")
    unparsed = int(shots["verdict"].isna().sum())
    if unparsed:
        sec.caveats.append(f"{unparsed:,} unparsed replies of the few-shot table are counted, not scored.")
    return sec


#: the measures of the hard-fail table of :func:`rubric_section`
HARD_FAIL_MEASURES = [Measure("rubrics", "Rubrics", "count"),
                      Measure("weighted_score", "Weighted score", "coefficient", digits=2)]


@bundled_section(unless="rubrics_dir")
def rubric_section(rubrics_dir: str | Path | None = None) -> Section:
    """The rubric library: every rule of ``rubric-rules.md`` a file can show (plus what upstream's validator
    misses), then each preset's verdict when every rubric passes but ``functionality`` fails.

    Parameters
    ----------
    rubrics_dir : str or Path, optional
        A MeowKit-style rubric library; default the bundled ``data/meowkit/rubrics``.

    Returns
    -------
    Section
        A finding (validation findings; presets that FAIL), the validation findings (a sentence when there are
        none), the hard-fail table (weighted score: PASS 1, WARN 0.5, FAIL 0); metrics ``rubric_findings``,
        ``presets_hard_failed_on_functionality``, ``hard_fail`` (records).

    Raises
    ------
    RubricError
        A missing library folder or a file that cannot be read (:func:`evallab.skills.load_library`).

    Source: MeowKit spec "Hard-Fail Propagation" (rule 3) and ``rubric-rules.md`` (R1–R10);
    :func:`evallab.skills.preset_verdict`.
    """
    from evallab import skills as rubrics
    from evallab.skills._rubrics import preset_verdict, validate_library

    found = validate_library(rubrics_dir or None)
    lib = rubrics.load_library(rubrics_dir or None, strict=False)
    rows = []
    for name, pre in lib.presets.items():
        v = preset_verdict(pre, {r: "PASS" for r in pre.weights} | {"functionality": "FAIL"}, lib.rubrics)
        rows.append({"preset": name, "rubrics": len(pre.weights), "weighted_score": v.score, "verdict": v.verdict,
                     "hard_failed": ", ".join(v.hard_failed)})
    hard = results(pd.DataFrame(rows, columns=["preset", "rubrics", "weighted_score", "verdict", "hard_failed"]),
                   HARD_FAIL_MEASURES, keys=["preset"])
    n_hard = int((hard["verdict"] == "FAIL").sum())
    said = "passes every validation rule" if not len(found) else f"has {len(found)} validation findings (below)"
    sec = Section(metrics={"rubric_findings": int(len(found)), "presets_hard_failed_on_functionality": n_hard,
                           "hard_fail": hard.to_frame().to_dict("records")})
    sec.text(RUBRIC_HEADING)
    sec.finding(f"The rubric library {said}; {n_hard} of {len(hard)} presets FAIL when only functionality fails, "
                f"whatever their weighted score (hard-fail propagation).")
    if len(found):
        shown = results(found.assign(path=[Path(p).name for p in found["path"]]),
                        [Measure("line", "Line", "count")], keys=["path"])
        sec.table(shown, {"path": "File", "line": "Line", "code": "Code", "rule": "Rule", "message": "Finding"},
                  caption="Rubric library validation findings", csv_name="rubric_findings")
    sec.table(hard, {"preset": "Preset", "rubrics": "Rubrics", "weighted_score": "Weighted score",
                     "verdict": "Verdict", "hard_failed": "Hard-failed rubric"},
              caption="Each preset's verdict when every rubric passes except functionality", csv_name="hard_fail")
    held = "holds" if n_hard == len(hard) else "does not hold for every preset"
    sec.conclusions.append(f"Hard-fail propagation {held}: {n_hard} of {len(hard)} presets FAIL when functionality "
                           f"fails.")
    return sec


def run_experiment(items: pd.DataFrame, *, judge_base_url: str = "", judge_model: str = "",
                   judge_api_key_env: str = "", judge_label: str = "", replay_dir: str = "",
                   record_dir: str | Path = "", cache_dir: str = "",
                   variants: Sequence[str] = ("balanced", "pass-only", "fail-last"), samples: int = 1, k: int = 4,
                   temperature: float = 0.0, max_scenarios: int = 0, seed: int = 0) -> pd.DataFrame | None:
    """Run the anchor-set experiment with the configured judge (:func:`evallab.experiments.
    run_experiment`), or ``None`` when neither ``judge_base_url`` nor ``replay_dir`` is set.

    Parameters
    ----------
    items : DataFrame
        keryx calibration items (:func:`evallab.skills.load_calibration_items`).
    judge_base_url, judge_model, judge_api_key_env, judge_label, cache_dir : str
        The judge (:func:`evallab.judges.make_judge`); the key is read from the environment variable named.
    replay_dir : str
        Replay a recorded run instead of calling a judge (nothing is recorded then).
    record_dir : str or Path
        Where a live run is recorded (``verdicts.jsonl`` + a keryx recording); ``""``: not recorded.
    variants, samples, k, temperature, max_scenarios, seed
        As for :func:`evallab.experiments.run_experiment` (``max_scenarios`` 0: all).

    Returns
    -------
    DataFrame or None
        The tidy verdict table of the run, ``attrs["record_dir"]`` the folder it was recorded to ("" if none).
    """
    if not (judge_base_url or replay_dir):
        return None
    from evallab.experiments import run_experiment
    from evallab.judges import make_judge

    judge = make_judge(judge_base_url, judge_model, judge_api_key_env, label=judge_label or None,
                       replay_dir=replay_dir or None, cache_dir=cache_dir or None)
    run_dir = "" if replay_dir else str(record_dir or "")
    runs = run_experiment(judge, items, list(variants), samples=samples, k=k, seed=seed,
                                     temperature=temperature, max_items=max_scenarios or None,
                                     record_dir=run_dir or None)
    runs.attrs["record_dir"] = run_dir
    return runs


#: the measures of the run's usage table (:func:`evallab.judges.usage_summary`)
USAGE_MEASURES = [Measure(c, label, "count") for c, label in (
    ("replies", "Replies"), ("live_calls", "Live calls"), ("cache_hits", "Cache hits"), ("unparsed", "Unparsed"),
    ("failed", "Failed calls"), ("input_tokens", "Input tokens"), ("output_tokens", "Output tokens"),
    ("unpriced", "Unpriced replies"))] + [Measure("cost_usd", "Cost", "USD", digits=4),
                                          Measure("mean_latency_s", "Mean latency", "s", digits=2)]


def _gold_class_sentence(r: Results, i, who: str, variant: str) -> str:
    """"Under pass-only anchors X's false-pass rate on gold-FAIL answers moves by ... against balanced anchors (to
    ...), and its pass rate on gold-PASS answers by ..." — each change with its interval, level, method and n."""
    fp, tp = r.estimate("delta_false_pass", i), r.estimate("delta_true_pass", i)
    s = (f"Under {variant} anchors {who}'s false-pass rate on gold-FAIL answers moves by {fp} against balanced "
         f"anchors (to {r.estimate('false_pass_rate', i).number()}), and its pass rate on gold-PASS answers by {tp}")
    return s + ("; the false-pass interval includes 0, so this run detects no change."
                if fp.has_interval and not fp.excludes(0) else ".")


def _experiment_metrics(infl: Results) -> dict:
    """The pass-only row's headline figures under the keys the project reads (null without that row)."""
    po = infl[infl["anchor_set"] == "pass-only"]
    keys = ("delta_false_pass", "delta_false_pass_low", "delta_false_pass_high", "delta_true_pass", "inflation",
            "inflation_low", "inflation_high", "false_pass_rate")
    return {f"pass_only_{c}": (float(po[c].iloc[0]) if len(po) else None) for c in keys}


def experiment_section(runs: pd.DataFrame | None, items: pd.DataFrame, *, baseline: str = "balanced",
                       confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """The PASS-only (and FAIL-last) vs balanced experiment run by :func:`run_experiment`: per anchor set, the
    change in the false-pass rate on gold-FAIL items and in the pass rate on gold-PASS items (percentage points,
    paired over items) as the headline, then the pass-rate ratio, agreement with gold, McNemar on the pass/fail
    flips, FAIL-last priming, and the run's calls, tokens and cost.

    Parameters
    ----------
    runs : DataFrame or None
        The run's verdict table; ``None``: no judge configured (one sentence says so).
    items : DataFrame
        The keryx calibration items the run graded (counted in the section's first sentence).
    baseline : str, default "balanced"
        The anchor set the others are compared with.
    confidence, n_resamples, seed
        Level, bootstrap resamples over items and seed of every interval.

    Returns
    -------
    Section
        Findings, the inflation table (:func:`evallab.metrics._inflation.inflation_table`), two figures, the
        priming table (:func:`evallab.metrics._inflation.position_priming`) when the run has ``fail-last``, the usage
        table; metrics ``judge_configured``, ``experiment_replies``, ``experiment_unparsed``, ``pass_only_*``,
        ``inflation``, ``usage``, ``experiment_cost_usd`` (null when any reply is unpriced),
        ``experiment_unpriced_replies``, ``experiment_live_calls``, ``fail_last_shift``, ``priming``.

    Source: MeowKit spec 001 ("PASS / WARN / FAIL Anchors": "40–60% positive bias inflation when evaluators saw
    only PASS examples"), rubric rules 4–5; McNemar (1947).
    """
    from evallab.judges import usage_summary
    from evallab.reporting import _plots as plots

    sec = Section(metrics={"judge_configured": runs is not None})
    gold = items["gold"].value_counts()
    sec.text(f"keryx: {len(items)} items from {items['scenario_id'].nunique()} scenarios; gold "
             + ", ".join(f"{g} {n}" for g, n in gold.items()) + ".")
    if runs is None:
        sec.text("No judge configured: set judge_base_url and judge_model (or replay_dir) to run the experiment.")
        sec.conclusions.append("The PASS-only vs balanced experiment was not run with a judge of this report's "
                               "parameters (no judge configured).")
        return sec
    unparsed = int(runs["verdict"].isna().sum())
    where = Path(runs.attrs.get("record_dir") or "").name
    sec.text(f"{len(runs):,} replies, {unparsed:,} unparsed" + (f"; recorded in {where}" if where else "") + ".")
    usage = usage_summary(runs)
    cost = usage["cost_usd"].sum(min_count=len(usage))
    spent = results(usage.assign(note=[f"cost unknown: {u:,} of {n:,} replies have no price" if u else ""
                                       for u, n in zip(usage["unpriced"], usage["replies"], strict=True)]),
                    USAGE_MEASURES, keys=["judge", "model"])
    sec.metrics.update({"experiment_replies": int(len(runs)), "experiment_unparsed": unparsed,
                        "usage": usage.to_dict("records"),
                        "experiment_cost_usd": None if pd.isna(cost) else float(cost),
                        "experiment_unpriced_replies": int(usage["unpriced"].sum()),
                        "experiment_live_calls": int(usage["live_calls"].sum())})
    sec.caveats.append(f"The experiment has {len(runs):,} replies ({unparsed:,} unparsed, counted not scored) on "
                       f"{len(items)} keryx items from {items['scenario_id'].nunique()} scenarios: small n.")
    if baseline not in set(runs["anchor_set"]):
        sec.text(f"The inflation table is not computable on this run: it needs the {baseline} anchor set; the run "
                 f"has {_join(sorted(set(runs['anchor_set'])))}.")
        return sec.table(spent, caption="Calls, tokens and cost of the run")
    infl = _common_methods(inflation.inflation_table(runs, baseline=baseline, confidence=confidence,
                                                     n_resamples=n_resamples, seed=seed))
    sec.metrics.update({**_experiment_metrics(infl), "inflation": infl.to_frame().to_dict("records")})
    po = infl[infl["anchor_set"] == "pass-only"].dropna(subset=["delta_false_pass"])
    for i in po.index:
        sentence = _gold_class_sentence(infl, i, str(infl.at[i, "judge"]), "pass-only")
        sec.finding(sentence, infl.estimate("delta_false_pass", i))
        sec.conclusions.append(sentence)
    if not len(po):
        sec.text("The PASS-only inflation is not computable on this run: it needs the pass-only and balanced anchor "
                 "sets with gold-FAIL items.")
    sec.table(infl, ["judge", "anchor_set", "items", "unparsed", "false_pass_rate", "delta_false_pass",
                     "delta_true_pass", "inflation", "mcnemar_p"],
              caption=f"Positive-bias inflation per anchor set against {baseline} anchors", csv_name="inflation")
    shifted = infl[infl["anchor_set"] != baseline]
    for y, what, short in (("delta_false_pass", "the false-pass rate on gold-FAIL items", "false-pass rate"),
                           ("delta_true_pass", "the pass rate on gold-PASS items", "pass rate on gold-PASS items")):
        if shifted[y].notna().any():
            sec.figure(plots.interval_plot(shifted, x="anchor_set", y=y, low=f"{y}_low", high=f"{y}_high",
                                           hue="judge", scale=100, ref=0.0,
                                           title=f"Change in {what} vs {baseline} anchors",
                                           ylabel=f"Δ {short} (percentage points, {confidence:.0%} interval)",
                                           xlabel="anchor set"))
    if "fail-last" in set(runs["anchor_set"]):
        pr = _common_methods(inflation.position_priming(runs, baseline=baseline, confidence=confidence,
                                                        n_resamples=n_resamples, seed=seed))
        for i in pr.index:
            e = pr.estimate("shift", i)
            sec.finding(f"FAIL-last anchors change {pr.at[i, 'judge']}'s pass rate by {e} against {baseline} "
                        f"anchors: {pr.at[i, 'to_fail']} items turn to fail and {pr.at[i, 'to_pass']} to pass "
                        f"(majority verdict per item; McNemar p = {pr.estimate('mcnemar_p', i).number()}).", e)
        sec.table(pr, ["judge", "items", "pairs", "pass_rate_primed", "pass_rate_baseline", "shift", "flip_rate",
                       "to_fail", "to_pass", "mcnemar_p"], caption=f"FAIL-last priming against {baseline} anchors")
        sec.metrics.update({"fail_last_shift": float(pr["shift"].iloc[0]) if len(pr) else None,
                            "priming": pr.to_frame().to_dict("records")})
    return sec.table(spent, caption="Calls, tokens and cost of the run")


#: the live inflation table's columns: each McNemar test beside the figures it tests (pass/fail flips beside the
#: pass rates, right/wrong changes against gold beside agreement)
LIVE_COLUMNS = {"anchor_set": "Anchor set", "items": "Answers", "false_pass_rate": "False-pass rate (gold FAIL)",
                "delta_false_pass": "Δ false-pass rate vs balanced", "true_pass_rate": "Pass rate (gold PASS)",
                "delta_true_pass": "Δ pass rate (gold PASS) vs balanced",
                "mcnemar_p": "Pass/fail flips vs balanced, McNemar p", "agreement": "Agreement with gold",
                "delta_agreement": "Δ agreement vs balanced",
                "agreement_mcnemar_p": "Right/wrong changes vs balanced, McNemar p"}


@bundled_section
def live_section(run: dict | None, *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """The committed live run (``data/live/smollm2``, recorded by ``make live``): SmolLM2-135M's false-pass rate
    on gold-FAIL answers and pass rate on gold-PASS answers under PASS-only and FAIL-last anchors against balanced
    ones, and the content-free probe — an empty answer graded against each scenario's rubric under each anchor
    set.

    Parameters
    ----------
    run : dict or None
        :func:`evallab.reporting._live.load`; ``None`` or a run without the inflation study: one sentence.
    confidence, n_resamples, seed
        Level, bootstrap resamples over items and seed of every interval.

    Returns
    -------
    Section
        The judge's caveat and run card, a finding per anchor set, the inflation table (:data:`LIVE_COLUMNS`;
        each interval's method named: Wilson for a rate on one reply per answer, a paired item bootstrap for a
        change, the Wilson bound when no answer changed; McNemar's test of the pass/fail flips beside the pass rates
        and of the right/wrong changes beside agreement), the probe's pass rate per anchor set (Wilson) and its finding; metrics
        ``live_card``, ``live_inflation``, ``live_balanced_agreement``, ``live_probe``.

    Source: MeowKit spec 001 and rules 4–5 (as :func:`experiment_section`); the probe after Zhao et al. (2021),
    "Calibrate Before Use", §4 (content-free input).
    """
    from evallab.reporting import _live as live

    sec = Section().text(LIVE_HEADING)
    missing = live.absent(run, "inflation")
    if missing:
        return sec.text(missing)
    sec.text(f"{live.CAVEAT}\n\nRun: {live._card_line(run)}")
    infl = _common_methods(inflation.inflation_table(run["inflation"], baseline="balanced", confidence=confidence,
                                                     n_resamples=n_resamples, seed=seed))
    judge = str(infl["judge"].iloc[0]) if len(infl) else "the live judge"
    for v in ("pass-only", "fail-last"):
        for i in infl.index[infl["anchor_set"] == v]:
            sec.finding(_gold_class_sentence(infl, i, judge, v), infl.estimate("delta_false_pass", i))
    if sec.findings:
        s = sec.findings[0].sentence
        sec.conclusions.append(f"On the committed live run of {judge}: {s[:1].lower()}{s[1:]}")
    sec.table(infl, LIVE_COLUMNS, caption=f"{judge}, keryx answers per anchor set against balanced anchors")
    base = infl[infl["anchor_set"] == "balanced"]
    sec.metrics = {"live_card": live._card_line(run), "live_inflation": infl.to_frame().to_dict("records"),
                   "live_balanced_agreement": float(base["agreement"].iloc[0]) if len(base) else None,
                   "live_probe": []}
    probe = run.get("probe")
    if probe is not None and len(probe):
        pt = _common_methods(inflation.pass_rate(probe, by=(), confidence=confidence, n_resamples=n_resamples,
                                                 seed=seed))
        top = pt["pass_rate"].idxmax()
        sec.finding("The content-free probe (an EMPTY answer graded against each scenario's rubric) passes under "
                    + ", ".join(f"{pt.at[i, 'anchor_set']} anchors in {pt.at[i, 'passes']} of "
                                f"{pt.at[i, 'items'] - pt.at[i, 'unparsed']}" for i in pt.index)
                    + " — an empty answer should never pass; what passes it is the prior the anchors set.",
                    pt.estimate("pass_rate", top))
        sec.table(pt, {"anchor_set": "Anchor set", "items": "Scenarios", "unparsed": "Unparsed", "passes": "Passed",
                       "pass_rate": "P(PASS) of an empty answer"}, caption="Content-free probe")
        sec.metrics["live_probe"] = pt.to_frame().to_dict("records")
    return sec


__all__ = ["experiment_section", "few_shot_section", "live_section", "load_few_shot", "rubric_section",
           "run_experiment"]
