"""Report 05 (drift): what each section states, from the estimators of :mod:`evallab.metrics._drift` and
:mod:`evallab.metrics._evaluators`.

Every public function returns a :class:`evallab.Section` (findings with the estimates behind them, tables, figures,
metrics for ``metrics.json``, conclusions and caveats) that the notebook shows with :meth:`evallab.Report.render`.
A section the table cannot support holds one sentence saying so and no empty table.

Sources
-------
- The gate: MeowKit rule 6 (spec 001, "Calibration Set and Drift Check"; ``data/meowkit/rules/rubric-rules.md``):
  "replay the calibration set with the new model. Re-evaluator agreement with stored gold verdicts must stay within
  5% per rubric". What is tested here is the share of verdicts that changed between the two judges (the flip rate,
  which bounds the change in agreement with gold) against 5%, one-sided per group, exact on items
  (:func:`evallab.metrics._drift.gate`); the change in accuracy against gold is shown beside it.
- The model upgrade: LLMBar (Zeng et al. 2024, "Evaluating Large Language Models at Evaluating Instruction
  Following"), the released verdicts of gpt-3.5-turbo-0301 (``ChatGPT-0301``) and -0613 (``ChatGPT``) in both
  orders (``data/llmbar/verdicts.csv``).
- Prompt drift, evaluator metrics and win rates: AlpacaEval (Li, Dubois et al. 2023; ``alpaca_eval/metrics.py``
  ``get_winrate``, ``analyze.py`` ``get_length_biases``), the three gpt-4-1106-preview annotator configurations
  of ``data/alpaca_eval/multi_annotator_preferences.csv``; the length-controlled win rate: Dubois et al. (2024),
  "Length-Controlled AlpacaEval"; rankings: Kendall's tau (Kendall 1938) between AlpacaEval's published
  leaderboards (``data/alpaca_eval/leaderboards``).
- The live judge: evallab's own recording of SmolLM2-135M-Instruct on llama.cpp (``data/live/smollm2``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab._results import Results, format_number, results
from evallab.errors import DataError
from evallab.metrics import _drift as drift
from evallab.metrics import _evaluators as evaluators
from evallab.metrics._agreement import judge_agreement
from evallab.reporting import _live as live
from evallab.reporting import _plots as plots
from evallab.reporting._context import Section, bundled_section
from evallab.verdicts import snapshot_note

#: how two AlpacaEval configurations' (or two prompts') replies are paired: the same request, the prompt aside
PROMPT_MATCH = ("dataset", "item_id", "anchor_set", "order", "sample")
#: the headline's per-subset columns kept in metrics.json (``headline_by_subset``)
HEADLINE_COLUMNS = ["group", "items", "both_parsed_ab", "same_ab", "both_parsed_ba", "same_ba", "items_all_parsed",
                    "items_unchanged", "changed", "flip_rate", "flip_rate_low", "flip_rate_high", "status", "kappa",
                    "kappa_low", "kappa_high", "baseline_accuracy", "candidate_accuracy", "delta_accuracy",
                    "delta_low", "delta_high", "mcnemar_b", "mcnemar_c", "mcnemar_p", "note"]
BY_STRATEGY_COLUMNS = ["strategy", "items", "replies", "flip_rate", "status", "kappa", "baseline_accuracy",
                       "candidate_accuracy", "delta_accuracy"]
UNPARSED_CAVEAT = "Unparsed replies are counted, not scored: a verdict changes only where both judges parsed the reply."
ALPACA_CAVEAT = ("AlpacaEval: output 1 is always the baseline and the longer output is mostly the baseline's, so a "
                 "preference for output 1 mixes baseline identity with length.")
LC_CAVEAT = ("The length-controlled win rate's instruction-difficulty term is estimated here from the other models "
             "judged by the same configuration on the same instruction (leave-this-model-out), where AlpacaEval fits "
             "it over its whole leaderboard; AlpacaEval's regularisation toward the baseline is not applied.")

#: the AlpacaEval sections' heading (shown with :func:`annotator_agreement` only)
ALPACA_HEADING = ("## AlpacaEval: prompt drift between annotator configurations\n"
    "Pairs of configurations on the pairs both judged (verdicts `1`, `2`, `tie`). Evaluator metrics as "
    "measured here: P(prefer output 1) = 2 − mean(preference) (AlpacaEval's definition, the weighted "
    "configuration's continuous preference used as is) — on these pairs output 1 is ALWAYS the baseline "
    "model, so it is the baseline's win rate, not a position effect; P(prefer longer) counts pairs whose "
    "lengths differ by more than 30 characters — the longer output is mostly the baseline's "
    "(`longer_is_output_1`), so it is confounded with quality; read it beside the length-controlled win "
    "rates below.")

#: the rankings section's heading and what it measures (shown with the section only)
RANKINGS_HEADING = ("## Win rates, length-controlled, and the annotator change's effect on rankings\n"
    "Win rate of each model against the baseline output under each configuration, from the continuous "
    "preference where the configuration gives one (AlpacaEval's leaderboard figure), and the "
    "length-controlled win rate (Dubois et al. 2024: a logistic GLM of the preference on tanh(Δlength / "
    "sd) and an instruction-difficulty term, estimated here from the other models of the same "
    "configuration on the same instruction where AlpacaEval fits it over its whole leaderboard). "
    "Kendall's tau between the rankings of the models two configurations share — from these verdicts, and"
    " from AlpacaEval's published leaderboards (same version = same baseline; the baseline's own 50% row "
    "left out); n is the number of models, p the exact two-sided p-value. A tau is headlined only from "
    "`rank_min_models` models: below five, even two identical rankings cannot be told from chance at the "
    "5% level (the smallest possible p is 2/n!: 0.083 with four models). Pairs with fewer models are "
    "listed, never headlined.")

#: the live section's heading and what it runs (shown with the section only)
LIVE_HEADING = ("## Live judge: SmolLM2-135M on llama.cpp — prompt drift\n"
    "A prompt change on a real judge: SmolLM2-135M-Instruct on llama.cpp (recorded by `make live`, "
    "replayed here) judged the same LLMBar Natural pairs in both orders, greedy, under evallab's plain "
    "pairwise prompt and under the prompt with LLMBar's rules. The flip rate is the share of paired "
    "verdicts that changed; MeowKit's gate allows at most `tolerance` (one-sided test).")


def _share(x: float) -> str:
    """A tolerance or level as a percentage in words ("5%", "2.5%")."""
    return f"{100 * float(x):g}%"


def upgrade_missing(table: pd.DataFrame, baseline_judge: str, candidate_judge: str) -> str:
    """Why model-upgrade drift cannot be computed on ``table`` ("" when both judges are in it).

    Parameters
    ----------
    table : DataFrame
        Tidy verdict table.
    baseline_judge, candidate_judge : str
        The judge labels compared.
    """
    present = sorted(map(str, table["judge"].dropna().unique()))
    if baseline_judge in present and candidate_judge in present:
        return ""
    return (f"Model-upgrade drift is not computable on this table: it needs verdicts of both {baseline_judge} and "
            f"{candidate_judge} (the table has {', '.join(present) or 'no judge'}).")


def _missing_section(reason: str) -> Section:
    return Section(conclusions=[reason]).text(reason)


def _upgrade(table: pd.DataFrame, baseline_judge: str, candidate_judge: str, by: Sequence[str],
             match_on: Sequence[str] = (), **kw) -> drift.DriftReport | Section:
    """The model-upgrade comparison grouped by ``by`` (replies paired on ``match_on``; empty: the same request,
    :data:`evallab.metrics._drift.MATCH_ON`), or the one-sentence section saying why it is missing (a judge absent,
    or replies that cannot be paired)."""
    missing = upgrade_missing(table, baseline_judge, candidate_judge)
    if missing:
        return _missing_section(missing)
    try:
        return drift.compare_judges(table, baseline_judge, candidate_judge, by=list(by),
                                    match_on=list(match_on) or drift.MATCH_ON, **kw)
    except DataError as exc:  # nothing to pair, or pairs of different outputs
        return _missing_section(f"Model-upgrade drift is not computable on this table: {exc.message}.")


def _adjustment(adjust: str, groups: int, unit: str) -> str:
    """Whether (and across what) the gate's drift test is adjusted: "holm-adjusted across 45 groups", "unadjusted"."""
    return "unadjusted" if adjust == "none" or groups <= 1 else f"{adjust}-adjusted across {groups} {unit}"


def _status_label(adjust: str, groups: int, unit: str, *, overall: bool = False) -> str:
    """The status column's label, saying how its drift test is adjusted: "Status (holm-adjusted across 45 groups)",
    "Status (unadjusted)"; ``overall``: the table also holds the overall row, tested alone."""
    return f"Status ({_adjustment(adjust, groups, unit)}{'; the overall row alone' if overall else ''})"


def _status_note(adjust: str, groups: int, unit: str, tolerance: float, alpha: float, *, overall: bool = False) -> str:
    """The sentence a status table's caption ends with: how its status was decided (:func:`evallab.metrics._drift.
    gate`)."""
    how = _adjustment(adjust, groups, unit) + ("; the overall row tested alone" if overall else "")
    return (f"Status: drift when the one-sided exact p of 'more than {_share(tolerance)} changed' is below "
            f"{alpha:g} ({how}); within when the interval's upper bound is at most {_share(tolerance)}; else "
            "inconclusive.")


def _own_sample_flip(table: pd.DataFrame, judges: Sequence[str]) -> list[str]:
    """Each judge's own flip rate between its samples 0 and 1 (same item, order, strategy, anchor set; both
    parsed), as "12.0% (ChatGPT, 50 replies)" phrases; empty unless every judge has a sample 1."""
    out = []
    keys = [c for c in ("dataset", "item_id", "strategy", "anchor_set", "order") if c in table.columns]
    for j in judges:
        t = table[(table["judge"] == j) & table["verdict"].notna()]
        a = t[t["sample"] == 0].set_index(keys)["verdict"]
        b = t[t["sample"] == 1].set_index(keys)["verdict"]
        both = a.index.intersection(b.index)
        if not len(both):
            return []
        changed = (a.loc[both].astype(str) != b.loc[both].astype(str)).mean()
        out.append(f"{format_number(float(changed), 'proportion')}% ({j}, {len(both):,} replies)")
    return out


def _strategies(table: pd.DataFrame, baseline_judge: str, candidate_judge: str) -> str:
    """The strategies the compared replies carry: "strategy Vanilla", "strategies CoT, Vanilla", or "strategy A →
    B" when the two judges' replies carry different ones (two prompts paired without ``strategy``)."""
    def names(j: str) -> list[str]:
        values = table.loc[table["judge"] == j, "strategy"].dropna().astype(str)
        return sorted(v for v in values.unique() if v.strip()) or ["(none recorded)"]

    a, b = names(baseline_judge), names(candidate_judge)
    if a == b:
        return f"{'strategy' if len(a) == 1 else 'strategies'} {', '.join(a)}"
    return f"{'strategy' if len(a) == 1 and len(b) == 1 else 'strategies'} {', '.join(a)} → {', '.join(b)}"


def overview(table: pd.DataFrame) -> Section:
    """What the verdict table holds: its replies and judges, and a warning when a judge label pools several model
    snapshots (:func:`evallab.verdicts.snapshot_note`).

    Parameters
    ----------
    table : DataFrame
        Tidy verdict table (LLMBar's by default).

    Returns
    -------
    Section
        Sentences; metrics ``table_judges`` (sorted judge labels).
    """
    judges = sorted(map(str, table["judge"].dropna().unique()))
    sec = Section(metrics={"table_judges": judges})
    sec.text(f"The table holds {len(table):,} replies by {', '.join(judges) or 'no judge'}.")
    note = snapshot_note(table)
    if note:
        sec.text(f"Warning: {note}.")
    return sec


def _accuracy_clause(res: Results, row: int = 0) -> str:
    """"; accuracy 48.1% → 40.0%, a change of −8.1 pp [...] (...)", or why there is none."""
    delta = res.estimate("delta_accuracy", row)
    if delta.value is None:
        return "; no gold labels, so no accuracy change"
    return (f"; accuracy {res.estimate('baseline_accuracy', row).number()} → "
            f"{res.estimate('candidate_accuracy', row).number()}, a change of {delta}")


def headline(table: pd.DataFrame, baseline_judge: str = "ChatGPT-0301", candidate_judge: str = "ChatGPT", *,
             strategy: str = "", subsets: Sequence[str] = (), verdicts_path: str = "",
             match_on: Sequence[str] = (), tolerance: float = drift.DEFAULT_TOLERANCE, alpha: float = 0.05,
             adjust: str = "holm", confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """The model upgrade on the headline pairs: how many verdicts changed (per subset and overall), Cohen's kappa,
    accuracy vs gold before and after with the paired difference, the flip table.

    Parameters
    ----------
    table : DataFrame
        Tidy verdict table holding both judges (subsets cut by :func:`evallab.metrics._drift.subset_level`).
    baseline_judge, candidate_judge : str, default "ChatGPT-0301", "ChatGPT"
        Before and after the upgrade (LLMBar's gpt-3.5-turbo-0301 and -0613).
    strategy : str, default ""
        The prompting strategy of the headline; ``""``: on the bundled LLMBar its headline strategy ``Vanilla``
        (LLMBar's Vanilla+Rules), on the user's table (``verdicts_path``) every strategy of the table, each named.
    subsets : sequence of str, default ()
        The subsets of the headline; empty: on the bundled LLMBar LLMBar/Natural and LLMBar/Adversarial, on the
        user's table every subset (:func:`evallab.datasets._study.llmbar_defaults`).
    verdicts_path : str, default ""
        The report's ``verdicts_path``: set, ``table`` is the user's own and empty ``strategy``/``subsets`` mean the
        table's own; ``""``: the bundled LLMBar.
    match_on : sequence of str, default ()
        Columns pairing the two judges' replies (:func:`evallab.metrics._drift.pair_verdicts`); empty: the same
        request, :data:`evallab.metrics._drift.MATCH_ON`. Leave ``strategy`` out when the two judges are two prompts
        or annotator configurations whose tables name their own strategy (AlpacaEval annotations).
    tolerance, alpha, adjust : float, float, str, default 0.05, 0.05, "holm"
        The gate (:func:`evallab.metrics._drift.gate`).
    confidence, n_resamples, seed : float, int, int, default 0.95, 1000, 0
        Interval level, bootstrap resamples over items, seed.

    Returns
    -------
    Section
        A finding on the overall flip rate (MeowKit's drift measure; its status from the overall row tested alone,
        unadjusted), the per-subset table with the overall row (its status column says how it is adjusted; the
        replies that kept their verdict per order, and the items that kept every verdict), the flip table; metrics
        ``llmbar_headline_*`` and ``headline_by_subset``; a conclusion and the caveat on unparsed replies. One
        sentence instead when either judge is missing or no reply pairs, and a sentence when no reply matches the
        strategy and subsets (the whole table is used then).

    Notes
    -----
    Source: LLMBar (Zeng et al. 2024) verdicts of both models; the 0301 → 0613 figures on LLMBar Natural +
    Adversarial, Vanilla: 16.7% of 838 verdicts changed on 419 items.
    """
    missing = upgrade_missing(table, baseline_judge, candidate_judge)
    if missing:
        return _missing_section(missing)
    from evallab.datasets._study import llmbar_defaults

    sec = Section(caveats=[UNPARSED_CAVEAT])
    subsets, strategies = llmbar_defaults(verdicts_path, subsets, [strategy] if strategy else [])
    keep = pd.Series(True, index=table.index)
    for column, values in (("strategy", strategies), ("subset", subsets)):
        if values:
            keep &= table[column].isin(values)
    head = table[keep]
    if head.empty:
        want = ([f"strategy {', '.join(strategies)}"] if strategies else []) + ([", ".join(subsets)] if subsets else [])
        sec.text(f"No replies for {' in '.join(want)}: the headline uses the whole table.")
        head = table
    scope = _strategies(head, baseline_judge, candidate_judge)
    rep = _upgrade(head, baseline_judge, candidate_judge, ["subset"], match_on, tolerance=tolerance, alpha=alpha,
                   adjust=adjust, confidence=confidence, n_resamples=n_resamples, seed=seed)
    if isinstance(rep, Section):
        return rep
    o, ov = rep.overall, rep.overall.iloc[0]
    flip = o.estimate("flip_rate")
    move = f"{baseline_judge} → {candidate_judge}"
    if flip.value is None:
        sec.finding(f"The flip rate of {move} is not computable on this table: no reply both judges parsed.")
    else:
        sec.finding(f"{move} changes {flip} of verdicts on {int(ov['items']):,} items ({scope}), status "
                    f"{ov['status']} against MeowKit's {_share(tolerance)} tolerance (all these replies tested "
                    f"together, unadjusted){_accuracy_clause(o)}.", flip)
        sec.conclusions.append(f"{move} changes {flip} of headline verdicts (status {ov['status']}, unadjusted)"
                               f"{_accuracy_clause(o)}.")
    own = _own_sample_flip(head, [baseline_judge, candidate_judge])
    if own:
        sec.text("Both judges were sampled more than once, and replies are paired by sample index, so the flip rate "
                 "compares independent draws: part of it is each judge disagreeing with itself. Each judge's own "
                 "verdicts change between its samples 0 and 1 on " + " and ".join(own) + " of the replies it parsed "
                 "twice — a flip rate near those says the two judges differ no more than a judge differs from "
                 "itself.")
    n_sub = len(rep.groups)
    kept = {f"same_{x}": f"Same verdict, order {x}" for x in ("ab", "ba") if ov[f"both_parsed_{x}"]}
    sec.table(rep.with_overall(), {"group": "Subset", "items": "Items", **kept,
                                   "items_unchanged": "Items with every reply parsed and none changed",
                                   "flip_rate": "Verdicts changed",
                                   "status": _status_label(adjust, n_sub, "subsets", overall=True),
                                   "kappa": "Cohen's kappa", "baseline_accuracy": f"{baseline_judge} accuracy",
                                   "candidate_accuracy": f"{candidate_judge} accuracy",
                                   "delta_accuracy": "Δ accuracy"},
              caption=f"Headline: {move} overall and per subset. "
                      + _status_note(adjust, n_sub, "subsets", tolerance, alpha, overall=True), csv_name="headline")
    flips = rep.flip_table()
    sec.table(flips, {"baseline verdict": f"{baseline_judge} verdict",
                      **{c: f"{candidate_judge}: {c}" for c in flips.columns}},
              caption=f"Flip table ({move}, both orders pooled): replies per baseline verdict (rows) and candidate "
                      "verdict (columns)")
    sec.metrics = {
        "llmbar_headline_items": int(ov["items"]), "llmbar_headline_same_ab": int(ov["same_ab"]),
        "llmbar_headline_same_ba": int(ov["same_ba"]), "llmbar_headline_same_both_orders": int(ov["items_unchanged"]),
        **{f"llmbar_headline_{c}": float(ov[c]) for c in (
            "flip_rate", "flip_rate_low", "flip_rate_high", "kappa", "baseline_accuracy", "candidate_accuracy",
            "delta_accuracy", "delta_low", "delta_high", "mcnemar_p")},
        "headline_by_subset": rep.groups[HEADLINE_COLUMNS].to_dict("records"),
    }
    return sec


def by_strategy(table: pd.DataFrame, baseline_judge: str = "ChatGPT-0301", candidate_judge: str = "ChatGPT", *,
                match_on: Sequence[str] = (), tolerance: float = drift.DEFAULT_TOLERANCE, alpha: float = 0.05,
                adjust: str = "holm", confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """The model upgrade per prompting strategy, every subset pooled: the share of verdicts changed, the gate's
    adjusted p and status, kappa and the accuracy change, and the figure of the flip rates.

    Parameters
    ----------
    table, baseline_judge, candidate_judge, match_on, tolerance, alpha, adjust, confidence, n_resamples, seed
        As :func:`headline` (strategies are the baseline's when ``match_on`` leaves ``strategy`` out).

    Returns
    -------
    Section
        A finding naming how many strategies drift and the most affected one, the table, the figure; metrics
        ``llmbar_overall_flip_rate``, ``llmbar_overall_delta_accuracy`` (every paired reply) and ``by_strategy``.

    Notes
    -----
    Source: LLMBar's ten prompting strategies (Zeng et al. 2024, Table 3) run by both models.
    """
    rep = _upgrade(table, baseline_judge, candidate_judge, ["strategy"], match_on, tolerance=tolerance, alpha=alpha,
                   adjust=adjust, confidence=confidence, n_resamples=n_resamples, seed=seed)
    if isinstance(rep, Section):
        return rep
    g = rep.groups
    sec = Section()
    if len(g) < 2:
        return sec.text("The compared replies carry one strategy (or none recorded), so there is no breakdown per "
                        "strategy: the headline above is that strategy's.")
    if g["flip_rate"].notna().any():
        top = g.index.get_loc(g["flip_rate"].idxmax())
        est = g.estimate("flip_rate", top)
        sec.finding(f"{int((g['status'] == 'drift').sum())} of {len(g)} strategies drift beyond "
                    f"{_share(tolerance)} ({_adjustment(adjust, len(g), 'strategies')}); the most affected is "
                    f"{g['strategy'].iloc[top]} with {est} of verdicts changed on {int(g['items'].iloc[top]):,} "
                    "items.", est)
    else:
        sec.text("No strategy has a reply both judges parsed, so no flip rate is computable per strategy.")
    sec.table(g, {"strategy": "Strategy", "items": "Items", "flip_rate": "Verdicts changed",
                  "flip_p_adjusted": "Adjusted p", "status": _status_label(adjust, len(g), "strategies"),
                  "kappa": "Cohen's kappa", "delta_accuracy": "Δ accuracy",
                  "unparsed_candidate": "Unparsed (candidate)"},
              caption=f"{baseline_judge} → {candidate_judge} per strategy. "
                      + _status_note(adjust, len(g), "strategies", tolerance, alpha), csv_name="by-strategy")
    sec.figure(plots.plot_flip_rates(rep, label="strategy", confidence=confidence,
                                     title=f"{baseline_judge} → {candidate_judge}: verdicts changed per strategy"))
    o = rep.overall.iloc[0]
    sec.metrics = {"llmbar_overall_flip_rate": float(o["flip_rate"]),
                   "llmbar_overall_delta_accuracy": float(o["delta_accuracy"]),
                   "by_strategy": g[BY_STRATEGY_COLUMNS].to_dict("records")}
    return sec


def gate_grid(table: pd.DataFrame, baseline_judge: str = "ChatGPT-0301", candidate_judge: str = "ChatGPT", *,
              match_on: Sequence[str] = (), tolerance: float = drift.DEFAULT_TOLERANCE, alpha: float = 0.05,
              adjust: str = "holm", confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """MeowKit's drift gate per subset × strategy: which groups change more than ``tolerance`` of their verdicts
    (one-sided test, adjusted across the groups), which are within it, which cannot tell; the overall row gated on
    its own.

    Parameters
    ----------
    table : DataFrame
        As :func:`headline`; its subsets (as cut by :func:`evallab.metrics._drift.subset_level`) × strategies are
        the groups.
    baseline_judge, candidate_judge, match_on, tolerance, alpha, adjust, confidence, n_resamples, seed
        As :func:`headline`.

    Returns
    -------
    Section
        A finding on the gate (passes or fails, groups flagged and inconclusive, the overall flip rate), the table
        and the figure; metrics ``gate_tolerance``, ``gate_groups``, ``gate_flagged``, ``gate_inconclusive``,
        ``gate_overall_status``, ``gate_passed``, ``gate_flagged_groups``; a conclusion and the caveat on statuses.

    Notes
    -----
    Source: MeowKit rule 6 (spec 001, "Calibration Set and Drift Check"); the test and statuses:
    :func:`evallab.metrics._drift.gate`.
    """
    rep = _upgrade(table, baseline_judge, candidate_judge, ["subset", "strategy"], match_on, tolerance=tolerance,
                   alpha=alpha, adjust=adjust, confidence=confidence, n_resamples=n_resamples, seed=seed)
    if isinstance(rep, Section):
        return rep
    gate, tol = rep.gate, _share(tolerance)
    ov = rep.overall.estimate("flip_rate")
    verdict = "passes" if gate.passed else "fails"
    k = len(gate.inconclusive)
    n_groups = len(rep.groups)
    adj = _adjustment(adjust, n_groups, "groups")
    sec = Section(caveats=[f"Statuses are one-sided exact tests on items of 'flip rate > {tol}' ({adj}); "
                           "'inconclusive' means the interval straddles the tolerance — more items are needed, not a "
                           "pass."])
    sec.finding(f"The drift gate {verdict}: {len(gate.flagged)} of {gate.groups} subset × strategy groups change "
                f"more than {tol} of their verdicts (one-sided p < {alpha:g}, {adj}), {k} "
                f"{'is' if k == 1 else 'are'} inconclusive; overall {ov} of verdicts changed "
                f"({gate.overall.get('status', 'untested')}; every reply tested together, unadjusted).", ov)
    sec.table(rep.groups, {"subset": "Subset", "strategy": "Strategy", "items": "Items",
                           "flip_rate": "Verdicts changed", "flip_p_adjusted": "Adjusted p",
                           "status": _status_label(adjust, n_groups, "groups"), "kappa": "Cohen's kappa",
                           "delta_accuracy": "Δ accuracy"},
              caption="The gate: verdicts changed per subset × strategy. "
                      + _status_note(adjust, n_groups, "groups", tolerance, alpha), csv_name="gate")
    sec.figure(plots.plot_flip_rates(rep, confidence=confidence, title=f"{baseline_judge} → {candidate_judge}: "
                                                                        "verdicts changed per subset × strategy"))
    sec.conclusions.append(f"The drift gate {verdict}: {len(gate.flagged)} of {gate.groups} subset × strategy "
                           f"groups drift beyond MeowKit's {tol} tolerance, {k} inconclusive.")
    sec.metrics = {"gate_tolerance": tolerance, "gate_groups": gate.groups, "gate_flagged": len(gate.flagged),
                   "gate_inconclusive": k, "gate_overall_status": gate.overall.get("status"),
                   "gate_passed": gate.passed, "gate_flagged_groups": gate.names}
    return sec


@bundled_section(unless="source")
def annotator_agreement(verdicts: pd.DataFrame, items: pd.DataFrame | None = None, *, confidence: float = 0.95,
                        n_resamples: int = 1000, seed: int = 0, source: str = "") -> Section:
    """AlpacaEval's annotator configurations: agreement between every two on the same items (raw and Cohen's
    kappa) and the evaluator metrics as measured here — P(prefer output 1), P(prefer the output shown first),
    P(prefer longer).

    Parameters
    ----------
    verdicts : DataFrame
        Tidy verdicts of the configurations (:func:`evallab.datasets.load_alpaca_eval`'s ``verdicts``).
    items : DataFrame, optional
        Output lengths ``len_1``/``len_2`` per ``item_id`` (its ``items``); without them P(prefer longer) is not
        computable.
    confidence, n_resamples, seed : float, int, int, default 0.95, 1000, 0
        Interval level, bootstrap resamples over items, seed.
    source : str, default ""
        The AlpacaEval folder the verdicts were read from; ``""`` (the bundled ``data/alpaca_eval``) marks the
        section bundled (:attr:`evallab.Section.bundled`: left out of a report on the user's table).

    Returns
    -------
    Section
        A finding on the first configuration's preference for output 1 (always AlpacaEval's baseline) beside its
        preference for the longer output; the agreement and evaluator tables; metrics ``alpaca_pair_agreement``
        and ``alpaca_evaluator_metrics``; the caveat on the baseline/length confound.

    Notes
    -----
    Source: AlpacaEval's evaluator leaderboard definitions (``analyze.py``: P(prefer output 1) = 2 − mean
    preference; ``significant_delta_length`` = 30 characters).
    """
    ci = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    pairs = judge_agreement(verdicts, **ci)
    ev = evaluators.evaluator_metrics(verdicts, items, **ci)
    sec = Section(caveats=[ALPACA_CAVEAT]).text(ALPACA_HEADING)
    known = np.flatnonzero(ev["p_prefer_output_1"].notna().to_numpy())
    if len(known):
        row = int(known[0])
        e, longer = ev.estimate("p_prefer_output_1", row), ev.estimate("p_prefer_longer", row)
        tail = (f", and the longer output in {longer.number()}; the longer output is output 1 in "
                f"{ev.estimate('longer_is_output_1', row).number()} of pairs, so baseline and length are confounded"
                if longer.value is not None else "; its preference for the longer output is not computable here "
                "(no output lengths with a gap)")
        sec.finding(f"{ev['judge'].iloc[row]} prefers output 1 — always AlpacaEval's baseline — in {e}{tail}.", e)
    else:
        sec.text("No configuration has a parsed reply, so P(prefer output 1) is not computable.")
    sec.table(pairs[pairs["judge_a"] < pairs["judge_b"]],
              {"judge_a": "Configuration A", "judge_b": "Configuration B", "n": "Replies",
               "agreement": "Raw agreement", "kappa": "Cohen's kappa"},
              caption="AlpacaEval annotator configurations: agreement on the same items")
    sec.table(ev, {"judge": "Configuration", "replies": "Replies", "unparsed": "Unparsed",
                   "p_prefer_output_1": "Prefers output 1 (baseline)",
                   "p_prefer_shown_first": "Prefers the output shown first",
                   "longer_is_output_1": "Longer output is output 1", "p_prefer_longer": "Prefers the longer output"},
              caption="AlpacaEval configurations: preference for the baseline, the first slot and the longer output")
    sec.metrics = {"alpaca_pair_agreement": pairs.to_dict("records"), "alpaca_evaluator_metrics": ev.to_dict("records")}
    return sec


@bundled_section(unless="source")
def prompt_drift(verdicts: pd.DataFrame, baseline: str = "alpaca_eval_gpt4_turbo_fn", *,
                 tolerance: float = drift.DEFAULT_TOLERANCE, alpha: float = 0.05, adjust: str = "holm",
                 confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0, source: str = "") -> Section:
    """Prompt drift: every other annotator configuration against ``baseline`` on the same requests (the prompt is
    what changed), per model — the share of verdicts changed and the gate.

    Parameters
    ----------
    verdicts : DataFrame
        Tidy verdicts of the configurations (``judge`` = configuration, ``generator_2`` = model).
    baseline : str, default "alpaca_eval_gpt4_turbo_fn"
        The configuration treated as the baseline.
    tolerance, alpha, adjust, confidence, n_resamples, seed
        As :func:`headline`.
    source : str, default ""
        The AlpacaEval folder the verdicts were read from; ``""`` (the bundled ``data/alpaca_eval``) marks the
        section bundled (:attr:`evallab.Section.bundled`: left out of a report on the user's table).

    Returns
    -------
    Section
        Per configuration a finding and a per-model table (or a sentence when it shares no request with the
        baseline); metrics ``alpaca_prompt_drift_flip_rate`` (configuration → flip rate); a conclusion naming the
        largest. One sentence when the baseline is absent.
    """
    configs = sorted(map(str, verdicts["judge"].dropna().unique()))
    sec = Section(metrics={"alpaca_prompt_drift_flip_rate": {}})
    if baseline not in configs:
        return sec.text(f"Prompt drift is not computable: the baseline configuration {baseline} is not in the "
                        f"table (configurations: {', '.join(configs) or 'none'}).")
    base = verdicts[verdicts["judge"] == baseline]
    flips = {}
    for cand in (c for c in configs if c != baseline):
        try:
            rep = drift.compare(base, verdicts[verdicts["judge"] == cand], by=["generator_2"], match_on=PROMPT_MATCH,
                                tolerance=tolerance, alpha=alpha, adjust=adjust, confidence=confidence,
                                n_resamples=n_resamples, seed=seed)
        except DataError as exc:  # no request in common
            sec.text(f"{cand}: {exc}")
            continue
        est = rep.overall.estimate("flip_rate")
        flips[cand] = est
        sec.finding(f"Changing the prompt from {baseline} to {cand} changes {est} of verdicts on "
                    f"{int(rep.overall['items'].iloc[0]):,} items; {len(rep.gate.flagged)} of {rep.gate.groups} "
                    f"models drift beyond {_share(tolerance)} "
                    f"({_adjustment(adjust, rep.gate.groups, 'models')}).", est)
        n_models = len(rep.groups)
        sec.table(rep.groups, {"generator_2": "Model", "items": "Items", "both_parsed": "Both parsed",
                               "changed": "Changed", "flip_rate": "Verdicts changed",
                               "status": _status_label(adjust, n_models, "models"), "kappa": "Cohen's kappa"},
                  caption=f"{baseline} → {cand}: verdicts changed per model. "
                          + _status_note(adjust, n_models, "models", tolerance, alpha), csv_name=f"prompt-{cand}")
    sec.metrics["alpaca_prompt_drift_flip_rate"] = {k: e.value for k, e in flips.items()}
    rated = {k: e for k, e in flips.items() if e.value is not None}
    if rated:
        top = max(rated, key=lambda k: rated[k].value)
        sec.conclusions.append(f"A prompt change alone ({baseline} → {top}) changes {rated[top].number()} of "
                               "AlpacaEval verdicts.")
    elif not flips:
        sec.text(f"Prompt drift is not computable: no AlpacaEval configuration shares items with {baseline}.")
    return sec


def _annotator_change(verdicts: pd.DataFrame, leaderboard_a: str, leaderboard_b: str) -> str:
    """What differs between two leaderboards' annotators (``<version>/<annotator>``), from the judge model each
    configuration calls (the verdicts' ``model`` column, :func:`evallab.datasets.load_alpaca_eval`): "one model,
    gpt-4-1106-preview, under two prompts and parsers: prompt drift", "judge models gpt-4 and claude", or "two
    annotator configurations" when a model is unknown."""
    known = verdicts.dropna(subset=["model"]) if "model" in verdicts.columns else verdicts.iloc[:0]
    models = known.groupby("judge")["model"].first().astype(str).to_dict()
    a, b = (models.get(x.rsplit("/", 1)[-1]) for x in (leaderboard_a, leaderboard_b))
    if a and a == b:
        return f"one model, {a}, under two prompts and parsers: prompt drift"
    if a and b:
        return f"judge models {a} and {b}"
    return "two annotator configurations"


def _join_notes(a: pd.Series, b: pd.Series) -> list[str]:
    return ["; ".join(x for x in (s, t) if isinstance(x, str) and x) for s, t in zip(a, b, strict=True)]


@bundled_section(unless="source")
def rankings(verdicts: pd.DataFrame, items: pd.DataFrame, leaderboards: pd.DataFrame, *, rank_min_models: int = 5,
             confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0, source: str = "") -> Section:
    """Win rates (raw and length-controlled) of each model under each configuration, and the effect of changing the
    annotator on rankings: Kendall's tau between the configurations' rankings and between AlpacaEval's published leaderboards,
    headlined only from ``rank_min_models`` common models.

    Parameters
    ----------
    verdicts, items : DataFrame
        :func:`evallab.datasets.load_alpaca_eval`'s verdicts and items (output lengths).
    leaderboards : DataFrame
        :func:`evallab.datasets.load_alpaca_eval_leaderboards`.
    rank_min_models : int, default 5
        Fewest common models a tau is headlined from (:data:`evallab.metrics._evaluators.MIN_RANK_ENTITIES`).
    confidence, n_resamples, seed : float, int, int, default 0.95, 1000, 0
        Interval level, bootstrap resamples over items, seed.
    source : str, default ""
        The AlpacaEval folder the verdicts were read from; ``""`` (the bundled ``data/alpaca_eval``) marks the
        section bundled (:attr:`evallab.Section.bundled`: left out of a report on the user's table).

    Returns
    -------
    Section
        A finding on the lowest leaderboard tau among pairs with enough models (or why none is headlined), the
        win-rate and rank tables, the win-rate figure; metrics ``alpaca_win_rates``,
        ``alpaca_win_rate_rank_agreement``, ``alpaca_leaderboard_rank_agreement``, ``alpaca_rank_min_models``,
        ``alpaca_min_leaderboard_tau`` (+ ``_n``, ``_p``), ``alpaca_leaderboard_pairs_below_min``; a conclusion and
        the caveat on the length-controlled win rate.

    Notes
    -----
    Sources: AlpacaEval ``get_winrate`` (win rate from the continuous preference); Dubois et al. (2024)
    (length-controlled win rate; its instruction-difficulty term estimated here from the other models of the same
    configuration on the same instruction, :func:`evallab.metrics._evaluators.length_controlled_win_rates`, where
    AlpacaEval fits it over its whole leaderboard); Kendall (1938) tau with the exact
    p-value (:func:`evallab.metrics._evaluators.perfect_agreement_pvalue`: with 4 models even identical rankings give
    p = 0.083).
    """
    rates = evaluators.win_rates(verdicts, confidence=confidence, n_resamples=n_resamples, seed=seed)
    lc = evaluators.length_controlled_win_rates(verdicts, items, confidence=confidence)
    keys = ["judge", "generator_2"]
    lc_cols = ["lc_win_rate", "lc_win_rate_low", "lc_win_rate_high", "length_coef"]
    both = rates.merge(lc[keys + lc_cols + ["note"]], on=keys, how="left", suffixes=("", "_lc"))
    both["note"] = _join_notes(both["note"], both.pop("note_lc"))
    wins = results(both, [*rates.measures.values(), lc.measures["lc_win_rate"], lc.measures["length_coef"]],
                   level=confidence, keys=keys)
    pairs = evaluators.win_rate_rank_agreement(verdicts)
    boards = evaluators.leaderboard_rank_agreement(leaderboards)
    enough = f"At least {rank_min_models} models"
    for t in (pairs, boards):
        t["enough_models"] = t["n"] >= rank_min_models
    wb = evaluators.rank_headline(boards, min_n=rank_min_models)
    p_at_min = format_number(wb["p_at_min"], "p-value")
    sec = Section(caveats=[LC_CAVEAT]).text(RANKINGS_HEADING)
    if wb["tau"] is not None:
        tau = boards.estimate("tau", wb["row"])
        p = boards.estimate("pvalue", wb["row"]).number()
        what = _annotator_change(verdicts, wb["leaderboard_a"], wb["leaderboard_b"])
        sec.finding(f"Changing the annotator reorders AlpacaEval's published leaderboards: among the {wb['pairs']} "
                    f"pairs of leaderboards sharing at least {rank_min_models} models, Kendall's tau is as low as "
                    f"{tau} between {wb['leaderboard_a']} and {wb['leaderboard_b']} ({what}; p = {p}) and at most "
                    f"{format_number(wb['max_tau'], 'coefficient', 2)}; {wb['pairs_below_min']} pair(s) with fewer "
                    f"models are listed but not headlined (with {rank_min_models - 1}, even identical rankings give "
                    f"p = {p_at_min}).", tau)
        sec.conclusions.append(f"Changing the annotator ({what}) reorders published leaderboards down to Kendall's "
                               f"tau {tau.number()} on {wb['n']} models (p = {p}; pairs with fewer than "
                               f"{rank_min_models} models not headlined).")
    elif len(boards):
        sec.finding(f"No two published leaderboards share {rank_min_models} or more models, so no rank agreement is "
                    f"headlined (with {rank_min_models - 1}, even identical rankings give p = {p_at_min}).")
    else:
        sec.text("No two published leaderboards of one version share models, so no rank agreement is computed.")
    if len(pairs) and evaluators.rank_headline(pairs, min_n=rank_min_models)["tau"] is None:
        sec.text(f"The configurations' own rankings share at most {int(pairs['n'].max())} models, fewer than "
                 f"{rank_min_models}: their Kendall's tau is listed below but not headlined.")
    sec.table(wins, {"judge": "Configuration", "generator_2": "Model", "parsed": "Parsed", "win_rate": "Win rate",
                     "lc_win_rate": "Length-controlled win rate", "length_coef": "Length coefficient"},
              caption="Win rate against the baseline output, raw and length-controlled", csv_name="win-rates")
    sec.table(pairs, {"judge_a": "Configuration A", "judge_b": "Configuration B", "n": "Models",
                      "tau": "Kendall's tau", "pvalue": "p", "enough_models": enough,
                      "max_shift": "Largest win-rate shift", "max_shift_entity": "Model shifted most"},
              caption="Rank agreement of the models between configurations (from these verdicts)")
    sec.table(boards, {"version": "Version", "leaderboard_a": "Leaderboard A", "leaderboard_b": "Leaderboard B",
                       "n": "Models", "tau": "Kendall's tau", "pvalue": "p", "enough_models": enough},
              caption="Rank agreement between AlpacaEval's published leaderboards", csv_name="leaderboards")
    sec.figure(plots.plot_win_rates(wins, confidence=confidence))
    sec.metrics = {"alpaca_win_rates": wins.to_dict("records"),
                   "alpaca_win_rate_rank_agreement": pairs.to_dict("records"),
                   "alpaca_leaderboard_rank_agreement": boards.to_dict("records"),
                   "alpaca_rank_min_models": rank_min_models, "alpaca_min_leaderboard_tau": wb["tau"],
                   "alpaca_min_leaderboard_tau_n": wb["n"], "alpaca_min_leaderboard_tau_p": wb["pvalue"],
                   "alpaca_leaderboard_pairs_below_min": wb["pairs_below_min"]}
    return sec


@bundled_section
def live_prompt_drift(run: dict | None, *, tolerance: float = drift.DEFAULT_TOLERANCE, alpha: float = 0.05,
                      adjust: str = "holm", confidence: float = 0.95, n_resamples: int = 1000,
                      seed: int = 0) -> Section:
    """A prompt change on a real judge: SmolLM2-135M on llama.cpp, the same LLMBar pairs (both orders, greedy)
    under evallab's plain prompt and under the prompt with LLMBar's rules — the share of paired verdicts changed
    against MeowKit's gate, kappa, and accuracy before and after.

    Parameters
    ----------
    run : dict or None
        The committed live run (:func:`evallab.reporting._live.load`); ``None`` when absent.
    tolerance, alpha, adjust, confidence, n_resamples, seed
        As :func:`headline`.

    Returns
    -------
    Section
        The live judge's caveat and run card, a finding, the overall table and the flips; metrics ``live_card``,
        ``live_prompt_flip_rate``, ``live_prompt_drift_status``, ``live_prompt_pairs``. One sentence when the run or
        its drift study is absent.

    Notes
    -----
    Source: evallab's recording ``data/live/smollm2`` (``make live``, :func:`evallab.experiments.run_live`).
    """
    missing = live.absent(run, "drift") or live.absent(run, "position")
    if missing:
        return Section().text(LIVE_HEADING).text(missing)
    card = live._card_line(run)
    pos = run["position"]
    base = pos[pd.to_numeric(pos["temperature"], errors="coerce") == 0]
    rep = drift.compare(base.assign(judge="SmolLM2-135M · plain prompt"),
                        run["drift"].assign(judge="SmolLM2-135M · rules"), by=["subset"], match_on=PROMPT_MATCH,
                        tolerance=tolerance, alpha=alpha, adjust=adjust, confidence=confidence,
                        n_resamples=n_resamples, seed=seed)
    o, ov = rep.overall, rep.overall.iloc[0]
    est = o.estimate("flip_rate")
    sec = Section().text(LIVE_HEADING).text(f"{live.CAVEAT}\n\nRun: {card}")
    sec.finding(f"Changing only the prompt (adding LLMBar's rules) changes {est} of SmolLM2-135M's paired verdicts "
                f"on the same pairs: MeowKit's gate (at most {_share(tolerance)} may change) says {ov['status']}; "
                f"accuracy vs gold {o.estimate('baseline_accuracy').number()} → "
                f"{o.estimate('candidate_accuracy').number()}.", est)
    sec.table(o, {"both_parsed": "Paired verdicts", "changed": "Changed", "flip_rate": "Verdicts changed",
                  "flip_p_adjusted": "One-sided p", "status": "Gate (one row, unadjusted)", "kappa": "Cohen's kappa",
                  "baseline_accuracy": "Accuracy, plain prompt", "candidate_accuracy": "Accuracy, rules",
                  "delta_accuracy": "Δ accuracy"}, caption="SmolLM2-135M: plain prompt → rules prompt, same pairs")
    sec.table(rep.flips, {"subset": "Subset", "verdict_baseline": "Plain prompt verdict",
                          "verdict_candidate": "Rules prompt verdict", "count": "Replies"},
              caption="Verdict flips (plain prompt → rules prompt)")
    sec.metrics = {"live_card": card, "live_prompt_flip_rate": float(ov["flip_rate"]),
                   "live_prompt_drift_status": str(ov["status"]), "live_prompt_pairs": int(ov["both_parsed"])}
    return sec


__all__ = ["annotator_agreement", "by_strategy", "gate_grid", "headline", "live_prompt_drift", "overview",
           "prompt_drift", "rankings"]
