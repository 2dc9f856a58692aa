"""Pure estimators in the field's terms: tidy verdict tables in, :class:`evallab.Results` out; no file I/O, no
judge calls, no plots. Every estimator takes the grouping ``by`` that defines a design cell and refuses to pool
replies silently; every interval resamples the item, and names its method and level in the Results' measures.

The estimators by topic (each function's docstring gives its parameters, the columns it returns with their units,
the source it follows and an example; the modules behind them are private):

- agreement with gold and between judges — :func:`pairwise_statistics` (LLMBar's Acc. and per-order accuracy),
  :func:`accuracy`, :func:`cohen_kappa_vs_gold`, :func:`judge_agreement`, :func:`fleiss_kappa`,
  :func:`krippendorff_alpha`, :func:`repetition_stability`, :func:`majority_vote` (the majority verdict over
  samples), :func:`published_check`;
- position bias — :func:`position_consistency`, :func:`position_bias` (MT-Bench's breakdown, preference fairness,
  first-slot preference, McNemar's order effect), :func:`balanced_position_accuracy`, :func:`anchor_effect`,
  :func:`first_slot_lean` (a one-order table with gold: the judge's errors by slot);
- drift between a baseline and a candidate judge — :func:`compare_judges`, :func:`drift_summary`,
  :func:`drift_gate` (MeowKit's flip-rate gate), :func:`subset_level`;
- positive-bias inflation — :func:`pass_rate`, :func:`inflation_table`, :func:`inflation_tables`,
  :func:`position_priming`;
- evaluators and leaderboards — :func:`win_rates`, :func:`length_controlled_win_rates`, :func:`evaluator_metrics`,
  :func:`model_leaderboard` (per-model win rate with Arena-Hard's ``>>`` weighting, or pass rate),
  :func:`win_rate_rank_agreement`, :func:`leaderboard_rank_agreement` (Kendall's tau-b between rankings);
- corrected rates from a judge plus gold labels — :func:`corrected_rates` (PPI++, Rogan–Gladen),
  :func:`corrected_difference`, :func:`hide_gold`;
- which items to label next — :func:`select_items` (random, stratified by the judge's verdict × confidence, or
  active selection after Zrnic & Candès 2024, each item's inclusion probability recorded), :func:`selection_plan`
  (the half-width each strategy is expected to give), :func:`selected_rate` (the corrected rate from those labels,
  weighted by 1/π);
- planning — :func:`gold_for_half_width`, :func:`items_for_flip_rate`, :func:`items_for_accuracy_change`,
  :func:`samples_for_stable_majority`, :func:`next_round` (McNemar's exact power behind
  :func:`items_for_accuracy_change` is private);
- selective judging — :func:`selective_judging` (Jung et al.'s fixed-sequence threshold, calibrated on one split
  and applied to the held-out items);
- contextual calibration — :func:`content_free_probe`, :func:`calibrate`, :func:`calibrated_rates`;
- rating scales (1–5, 1–10: the ``score`` column) — :func:`score_agreement` (each judge against the human mean:
  weighted kappa, ICC(2,1), Pearson / Spearman / Kendall's tau-b over items and over systems, mean bias, MAE,
  exact and within-one agreement), :func:`human_ceiling` (each human against the mean of the others),
  :func:`rater_reliability` (Krippendorff's alpha ordinal and interval, ICC(2,1), ICC(3,1), ICC(2,k), pairwise
  weighted kappa); and the scales in the existing studies — :func:`score_shift` (prompt variants or anchor sets
  against a baseline on the same items: paired mean shift, Δ Spearman, Δ weighted kappa), :func:`score_stability`
  (within-item spread across samples, ICC(1)), :func:`score_drift` (two judges' scores: shift, MAE, changed share,
  weighted kappa), :func:`score_cut` (a pass/fail cut tuned against gold: ROC AUC, Youden's cut and its interval);
- can the judge replace an annotator — :func:`alt_test` (Calderon et al.'s Alternative Annotator Test: winning
  rate, average advantage probability, the smallest passing ε);
- juries — :func:`jury_verdicts` (one verdict from several judges' replies: majority, strict majority, unanimity,
  weights learnt on a held-out split; a stated rule for unparsed members), :func:`jury_comparison` (each jury beside
  its members: verdict rate, accuracy, position consistency, cost, with intervals);
- judge studies — :func:`compare_configurations` (each judge × prompt × anchor set configuration of a study:
  agreement with gold, position consistency, leniency, stability, parse rate, cost per verdict; every two compared
  on the same items with paired intervals, McNemar on items and Holm; the recommendation, never a winner when
  intervals overlap);
- the design underneath — :func:`describe` (what a table holds), :func:`paired_design` (a
  design checked and encoded once, for several estimators).

The interval helpers (Wilson, McNemar, ratio intervals, p-value adjustment) and the design checks behind the
estimators are private (``evallab.metrics._intervals``, ``evallab.metrics._design``); each estimator names the
method of its intervals in its Results' measures.
"""

from evallab._face import lazy_face

#: public name → (private module, its name there)
_NAMES = {
    "DesignError": ("evallab.errors", "DesignError"),
    **{n: ("_agreement", n) for n in (
        "accuracy", "cohen_kappa_vs_gold", "fleiss_kappa", "judge_agreement", "krippendorff_alpha", "majority_vote",
        "pairwise_statistics", "published_check", "repetition_stability")},
    **{n: ("_position", n) for n in (
        "anchor_effect", "balanced_position_accuracy", "first_slot_lean", "position_bias", "position_consistency")},
    "compare_judges": ("_drift", "compare_judges"), "drift_summary": ("_drift", "compare"),
    "drift_gate": ("_drift", "gate"), "subset_level": ("_drift", "subset_level"),
    **{n: ("_inflation", n) for n in ("inflation_table", "inflation_tables", "pass_rate", "position_priming")},
    **{n: ("_evaluators", n) for n in (
        "evaluator_metrics", "leaderboard_rank_agreement", "length_controlled_win_rates", "model_leaderboard",
        "win_rate_rank_agreement", "win_rates")},
    **{n: ("_corrected", n) for n in (
        "corrected_difference", "corrected_rates", "hide_gold")},
    **{n: ("_power", n) for n in (
        "gold_for_half_width", "items_for_accuracy_change", "items_for_flip_rate", "next_round",
        "samples_for_stable_majority")},
    **{n: ("_selective", n) for n in ("selective_judging",)},
    **{n: ("_selection", n) for n in ("select_items", "selected_rate", "selection_plan")},
    **{n: ("_contextual", n) for n in ("calibrate", "calibrated_rates", "content_free_probe")},
    **{n: ("_design", n) for n in ("describe", "paired_design")},
    **{n: ("_scales", n) for n in ("human_ceiling", "rater_reliability", "score_agreement")},
    **{n: ("_score_studies", n) for n in ("score_cut", "score_drift", "score_shift", "score_stability")},
    "alt_test": ("_alt_test", "alt_test"),
    "compare_configurations": ("_configurations", "compare_configurations"),
    **{n: ("_jury", n) for n in ("jury_comparison", "jury_verdicts")},
}
__all__ = sorted(_NAMES)
#: the estimators load on first use (``evallab.metrics.position_bias``), so importing one does not import every
#: other's dependencies
__getattr__, __dir__ = lazy_face(__name__, _NAMES)
