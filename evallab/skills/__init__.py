"""The skill-pack formats evallab calibrates against: keryx skill catalogs and the lexical trigger router, keryx
judge scenarios and the stable-pack gate, MeowKit rubrics and presets, aeon assertion manifests.

Import everything from here (``from evallab.skills import load_catalog, leave_one_out``); the modules behind it are
private. The keryx judge-recording format these checks read is :mod:`evallab.judges` 's (:class:`~evallab.judges.
Recording`, :func:`~evallab.judges.load_recordings`, :func:`~evallab.judges.to_verdicts`, the canned answer
:data:`~evallab.judges.KINDS` and their :data:`~evallab.judges.EXPECTED` verdicts): the judge runner writes it and
replay reads it, so it lives in the layer below this one.

Skill catalogs and the trigger router (keryx ``scout.ts`` and ``eval.ts``, ``data/keryx/SOURCE.md``):

- :class:`Catalog` / :class:`Skill`, :func:`load_catalog`, :func:`catalog_from_records` — JSONL catalogs of SKILL.md
  frontmatter, errors naming file and line.
- :func:`tokenize`, :func:`strip_exclusions` — keryx's tokenizer and exclusion-clause stripper.
- :data:`SCORERS`, :func:`score_matrix` — queries × skills under keryx's IDF coverage, TF-IDF or BM25.
- :func:`rank`, :func:`scout` — keryx's selection rules.
- :func:`make_probes`, :func:`loo_scores`, :func:`leave_one_out`, :func:`loo_summary`,
  :func:`trigger_accuracy`, :func:`skill_accuracy_summary`, :func:`stripping_effect`, :func:`stripping_summary`,
  :func:`roc_pr_summary` — leave-one-out trigger accuracy and stripping (skill-clustered intervals).
- :data:`KERYX_THRESHOLDS`, :data:`OBJECTIVES` (what a threshold is tuned for), :func:`pair_scores`, :func:`roc_pr`,
  :func:`select_nothing_value`, :func:`tune_thresholds`, :func:`compare_scorers` — ROC/PR curves and threshold
  choice with bootstrap intervals over skills.
- :func:`score_query`, :func:`tune_catalog` — a prompt scored
  against a whole catalog, a catalog's leave-one-out accuracy and tuned thresholds (``evallab triggers``).

keryx judge scenarios (spec 000, "Write a rubric (judge) eval scenario"):

- :class:`EvalSpec` / :class:`Scenario`, :func:`parse_evals`, :func:`load_evals`, :func:`load_tree`
  (:class:`EvalSpecError`) — ``evals.json``, validated.
- :func:`grade_answer`, :func:`canned_answers` — ``gradeScenarioAnswer``; the eight anti-gaming answers.
- :func:`integrity_findings`, :class:`IntegrityFinding`, :func:`findings_frame`, :func:`findings_summary` — the
  integrity rules I1–I10.
- :func:`ag_matrix`, :func:`ag_findings`, :func:`ag_summary`, :func:`ag_overall`, :data:`AG_PASS_UNVERIFIED` — rule
  AG offline from recordings.
- :func:`load_calibration_items` — the labelled calibration answers as an items table.
- :func:`load_eval_report`, :func:`pack_gate`, :func:`gate_verdicts`, :func:`pass_rates` (:class:`EvalReportError`)
  — the stable-pack gate with counts re-derived from trial records.
- :func:`trial_causes`, :func:`trial_disagreements`, :func:`trial_outputs` — why a
  scenario's trials got different verdicts.

MeowKit rubrics (``data/meowkit``):

- :class:`Rubric`, :func:`parse_rubric`, :func:`parse_preset`, :func:`load_library` (:class:`RubricError`).
- :func:`validate_rubric`, :func:`validate_library` — findings (``path``, ``line``, ``code``, ``rule``, ``message``).
- :func:`preset_verdict` — the weighted verdict with hard-fail propagation; :func:`score_preset`
  finds a preset by name or file and validates it first; :func:`validate_files` validates any
  mix of rubric files, preset files and library folders.
- :func:`anchor_set`, :func:`rubric_anchor_set` (:class:`AnchorExample`), :func:`is_mixed`, :func:`check_mixed_k` —
  anchor-set variants.

aeon assertion manifests (spec 002):

- :func:`parse_manifest`, :func:`load_manifest`, :func:`lint_manifest` (:class:`ManifestError`).
- :func:`evaluate`, :func:`load_state`, :func:`history` — assertions on
  outputs and regression states across runs.
- :func:`bootstrap` — a manifest drafted from successful outputs.
- :func:`eval_outputs`, :func:`bootstrap_outputs` — both on a folder of outputs (``evallab manifests``).

The names load on first use (PEP 562), so importing the rubrics does not import scikit-learn and ``bm25s``.
"""

from evallab._face import lazy_face

#: public name -> the private module that defines it
_EXPORTS = {
    # catalogs and the trigger router
    "Catalog": "_catalogs", "Skill": "_catalogs", "catalog_from_records": "_catalogs", "load_catalog": "_catalogs",
    "strip_exclusions": "_tokenize", "tokenize": "_tokenize",
    "SCORERS": "_trigger_index", "score_matrix": "_trigger_index", "rank": "_trigger_select", "scout": "_trigger_select",
    "leave_one_out": "_trigger_loo", "loo_scores": "_trigger_loo", "loo_summary": "_trigger_loo",
    "make_probes": "_trigger_loo", "stripping_effect": "_trigger_loo",
    "trigger_accuracy": "_trigger_loo", "skill_accuracy_summary": "_trigger_loo", "stripping_summary": "_trigger_loo",
    "roc_pr_summary": "_thresholds",
    "KERYX_THRESHOLDS": "_thresholds", "OBJECTIVES": "_thresholds",
    "pair_scores": "_thresholds",
    "roc_pr": "_thresholds", "select_nothing_value": "_thresholds", "tune_thresholds": "_thresholds",
    "compare_scorers": "_scorer_comparison", "score_query": "_trigger_study",
    "tune_catalog": "_trigger_study",
    # keryx judge scenarios
    "EvalSpec": "_scenario_schema", "EvalSpecError": "_scenario_schema", "Scenario": "_scenario_schema",
    "load_evals": "_scenario_schema", "load_tree": "_scenario_schema", "parse_evals": "_scenario_schema",
    "canned_answers": "_grading", "grade_answer": "_grading",
    "IntegrityFinding": "_integrity", "findings_frame": "_integrity", "findings_summary": "_integrity",
    "integrity_findings": "_integrity",
    "AG_PASS_UNVERIFIED": "_anti_gaming", "ag_findings": "_anti_gaming", "ag_matrix": "_anti_gaming",
    "ag_overall": "_anti_gaming", "ag_summary": "_anti_gaming",
    "load_calibration_items": "_calibration_items",
    "EvalReportError": "_pack_gate", "gate_verdicts": "_pack_gate", "load_eval_report": "_pack_gate",
    "pack_gate": "_pack_gate", "pass_rates": "_pack_gate", "trial_causes": "_trials", "trial_disagreements": "_trials",
    "trial_outputs": "_trials",
    # MeowKit rubrics
    "AnchorExample": "_rubrics", "Rubric": "_rubrics", "RubricError": "_rubrics",
    "anchor_set": "_rubrics", "check_mixed_k": "_rubrics", "is_mixed": "_rubrics", "load_library": "_rubrics",
    "parse_preset": "_rubrics", "parse_rubric": "_rubrics", "preset_verdict": "_rubrics",
    "rubric_anchor_set": "_rubrics", "validate_library": "_rubrics",
    "validate_rubric": "_rubrics", "score_preset": "_rubrics", "validate_files": "_rubrics",
    # aeon manifests
    "ManifestError": "_manifests", "bootstrap": "_manifests",
    "evaluate": "_manifests", "history": "_manifests", "lint_manifest": "_manifests",
    "load_manifest": "_manifests", "load_state": "_manifests", "parse_manifest": "_manifests", "bootstrap_outputs": "_manifests", "eval_outputs": "_manifests",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
