"""Report 02, "Position bias and few-shot anchor effects": what each section states (issue 25: thin notebooks).

Does a pairwise judge's verdict depend on which output is shown first? Each pair is judged twice, output 1 first
(``ab``) and swapped (``ba``). The sections, in the report's order:

- :func:`overview` — the table's shape in words (orders, gold, samples, design columns, what the filters left out).
- :func:`by_judge` — per judge (and strategy: strategies are never pooled): position consistency (Zheng et al.
  2023, MT-Bench, Table 2 "Consistency"; Shi et al. 2024, "Judging the Judges", §3.1 "position consistency";
  LLMBar's "Agr.", Zeng et al. 2024, §4), MT-Bench's breakdown (Table 2: consistent / "Biased toward first" /
  "Biased toward second" / "Error"), preference fairness (Shi et al. 2024, §3.1; unnormalised), first-slot
  preference (share of decisive replies picking the output shown first, 0.5 = none), McNemar's order-effect test
  on items (McNemar 1947), and the consistency vs first-slot preference figure.
- :func:`by_subset` — the same per subset, judge and strategy.
- :func:`balanced_calibration` — FairEval's balanced position calibration (Wang et al. 2023, "Large Language
  Models are not Fair Evaluators", §3.2): both orders judged and averaged, an inconsistent pair a tie; shown beside
  the two order accuracies, whose mean is LLMBar's "Acc." (Zeng et al. 2024, §4) and equals it on binary
  verdicts.
- :func:`few_shot` — the few-shot anchor effect: LLMBar's in-context strategies (``Vanilla_1shot``: one example
  answered "Output (a)"; ``Vanilla_2shot``: "(b)" then "(a)") against 0-shot ``Vanilla``, deltas paired over
  items (report 03's :func:`~evallab.reporting.sections.inflation.few_shot_section` on this report's table).
- :func:`live_section` — the same measurements on the committed SmolLM2-135M run (``data/live/smollm2``, ``make
  live``), with repetition stability of sampled replies (Shi et al. 2024, §3.1) and the parse rate.

Each returns a :class:`~evallab.reporting._context.Section`; every number it states comes from an estimator's
:class:`~evallab.Results` (value, interval, level, the method that computed the interval, n), never retyped here.
Definitions and their sources, quoted, are in :mod:`evallab.metrics._position`. A figure the table cannot support
(one presentation order, no gold, no few-shot strategies) gets one sentence saying why, from the estimator's note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from evallab._results import Results, common_methods, results
from evallab.metrics import _agreement as agreement
from evallab.metrics import _position as position
from evallab.metrics._design import DESIGN_COLUMNS, describe, note_reasons
from evallab.reporting import _live as live
from evallab.reporting._context import Section, bundled_section

#: the design cell of the per-judge figures: strategies are compared, never pooled
BY = ("judge", "strategy")
SMALL_N = 100  # pairs per row below which the intervals are called wide


#: the live section's heading and what it measures (shown with the section only)
LIVE_HEADING = ("## Live judge: SmolLM2-135M on llama.cpp\n"
    "The same measurements on a real judge that runs on this machine: llama.cpp's server "
    "(llama-cpp-python) serving SmolLM2-135M-Instruct, recorded by `make live` and replayed here offline."
    " LLMBar Natural, every pair in both orders: one greedy reply (temperature 0) for position "
    "consistency, MT-Bench's breakdown, first-slot preference and accuracy, and sampled replies "
    "(temperature 0.7) for repetition stability. Structured verdicts (grammar-constrained JSON) are "
    "compared with the text prompt alone for the parse rate.")


# ------------------------------------------------------------------------------------------------ helpers
def load(verdicts_path: str = "", data_dir: str = "", *, subsets: Sequence[str] = (),
         judges: Sequence[str] = ()) -> pd.DataFrame:
    """The report's verdict table, every strategy kept (the sections select theirs): the user's table at
    ``verdicts_path`` or the bundled LLMBar (at ``data_dir``), filtered by ``subsets`` and ``judges``.

    On the bundled LLMBar, empty ``subsets`` mean LLMBar's Natural and Adversarial sets, and the sections' empty
    ``strategies`` mean Vanilla (kept in ``attrs["default_strategies"]``); on the user's table empty means all
    (:func:`evallab.datasets._study.llmbar_defaults`).

    Raises
    ------
    DataError, VerdictTableError
        From :func:`evallab.datasets.load_study`, naming the file, row or column.
    """
    from evallab.datasets import load_study
    from evallab.datasets._study import llmbar_defaults

    subsets, strategies = llmbar_defaults(verdicts_path, subsets)
    table = load_study(verdicts_path, data_dir, subsets=subsets, judges=list(judges) or None)
    table.attrs["default_strategies"] = strategies or []
    return table


def _select(table: pd.DataFrame, strategies: Sequence[str]) -> pd.DataFrame:
    """The rows of ``strategies``; empty: the loader's default (Vanilla on the bundled LLMBar), else all."""
    from evallab import verdicts

    return verdicts.select(table, strategies=list(strategies) or table.attrs.get("default_strategies") or None)


def _why(res: pd.DataFrame) -> str:
    """The distinct reasons in a table's notes, without their "not computable: " prefix, as one phrase."""
    return "; ".join(note_reasons(*res.get("note", pd.Series(dtype=str)).dropna().astype(str))) or \
        "the table has no rows it can be computed from"


def _several(res: pd.DataFrame, col: str) -> bool:
    return col in res.columns and res[col].astype(str).nunique() > 1


def _who(res: pd.DataFrame, i, cols: Sequence[str] = DESIGN_COLUMNS) -> str:
    """Row ``i`` by every design column that varies in ``res`` (the judge always): "GPT-4", "GPT-4 · CoT"."""
    parts = [str(res.at[i, c]) for c in cols if c in res.columns and (c == "judge" or _several(res, c))]
    return " · ".join(p for p in parts if p)


def _rows_word(res: pd.DataFrame, cols: Sequence[str] = DESIGN_COLUMNS) -> str:
    """What a row of ``res`` is: "judges", "judge × strategy rows", "subset × judge rows"."""
    vary = [c for c in cols if c in res.columns and (c == "judge" or _several(res, c))]
    return "judges" if vary == ["judge"] else " × ".join(vary) + " rows"


def _strategies_text(df: pd.DataFrame) -> str:
    """One sentence when the table holds several strategies: each row is one strategy, never pooled."""
    if not _several(df, "strategy"):
        return ""
    names = ", ".join(sorted(map(str, df["strategy"].unique())))
    return (f"The table holds {df['strategy'].nunique()} strategies ({names}): each row is one judge under one "
            "strategy; strategies are never pooled.")


def _bias_caveats(bias: Results) -> list[str]:
    unparsed = int(bias["unparsed"].sum())
    out = [f"{unparsed:,} unparsed replies are counted, not scored."] if unparsed else []
    if len(bias) and 0 < bias["pairs"].max() < SMALL_N:
        out.append(f"Small n: at most {int(bias['pairs'].max())} pairs per row; intervals are wide.")
    out.append("McNemar's test is per row without multiplicity adjustment.")
    return out


def _orders(df: pd.DataFrame) -> str:
    """What the position figures can rest on: "both" (pairs judged in both orders), "one" (a pairwise table in one
    presentation order), "pointwise" (no pairwise reply)."""
    shape = describe(df)
    return "pointwise" if shape["kind"] == "pointwise" else "both" if shape["both_orders"] else "one"


def _lean_shown(df: pd.DataFrame) -> bool:
    """The first-slot lean from gold is the report's figure: a one-order pairwise table with gold."""
    return _orders(df) == "one" and bool((df["gold"].notna() & df["order"].isin(position.ORDERS)).any())


# ------------------------------------------------------------------------------------------- the sections
def overview(table: pd.DataFrame, *, strategies: Sequence[str] = ()) -> Section:
    """The shape of the table the position figures use (:func:`evallab.metrics._design.describe`).

    Parameters
    ----------
    table : DataFrame
        From :func:`load`.
    strategies : sequence of str, default ()
        The strategies of the position figures; empty: all.

    Returns
    -------
    Section
        One sentence; metric ``table_shape``.

    Raises
    ------
    VerdictTableError
        ``strategies`` selects no row (naming the strategies available).
    """
    text = describe(_select(table, strategies))["text"]
    return Section(metrics={"table_shape": text}).text(text)


# one denominator per row: pairs with both replies parsed (MT-Bench's biased-toward shares, over every pair asked,
# are in the breakdown table)
BIAS_COLUMNS = {"judge": "Judge", "strategy": "Strategy", "both_parsed": "Pairs (both parsed)",
                "position_consistency": "Position consistency", "first_slot_preference": "First-slot preference",
                "mcnemar_p": "McNemar p"}
#: how the McNemar p-value beside first-slot preference is computed (:func:`evallab.metrics._intervals.mcnemar`)
MCNEMAR_NOTE = ("McNemar p: exact binomial test when fewer than 25 items are discordant, else χ² with continuity "
                "correction")
BREAKDOWN_COLUMNS = {"judge": "Judge", "strategy": "Strategy", "pairs": "Pairs (asked in both orders)",
                     "consistent_rate": "Consistent", "biased_first_rate": "Biased toward first",
                     "biased_second_rate": "Biased toward second", "error_rate": "Error (unparsed)",
                     "units": "Subsets", "preference_fairness_mean": "Preference fairness (Shi et al.: mean over "
                     "subsets)", "preference_fairness": "Preference fairness (pooled)"}


BY_JUDGE_HEADING = ("## Consistency, MT-Bench's breakdown and first-slot preference per judge\n"
                    "All selected subsets pooled by item; one row per judge and strategy (strategies are never "
                    "pooled); the item is the resampling unit; McNemar's test pairs items. Each table names the "
                    "method of its intervals.")
BPC_HEADING = ("## Balanced position calibration (FairEval)\n"
               "Each pair judged in both orders; an inconsistent pair counts as a tie worth `tie_credit`. With "
               "`tie_credit = 0.5` its accuracy equals the mean of the two order accuracies on the same pairs (shown "
               "beside it): the calibration neutralises the order, it does not add accuracy. \"Right in both "
               "orders\" counts a pair right only when it is right in both orders; \"Abstention\" is the share of "
               "pairs a consistency-only policy would leave undecided.")


def by_judge(table: pd.DataFrame, *, strategies: Sequence[str] = (), confidence: float = 0.95,
             n_resamples: int = 1000, seed: int = 0) -> Section:
    """Position bias per judge and strategy (:func:`evallab.metrics._position.position_bias`), all selected subsets
    pooled by item (the item is the resampling unit; McNemar's test pairs items).

    Parameters
    ----------
    table : DataFrame
        From :func:`load`.
    strategies : sequence of str, default ()
        Strategies kept; empty: all (each a row of its own).
    confidence, n_resamples, seed
        Level, bootstrap resamples over items and seed of every interval.

    Returns
    -------
    Section
        The headline finding (the most position-consistent row, and how many rows show an order effect), the
        position-bias table, MT-Bench's breakdown with preference fairness (Shi et al.'s mean over subsets and the
        pooled figure), the consistency vs first-slot preference figure; metrics ``pairs_per_judge``, ``unparsed_replies``, ``most_consistent_judge``,
        ``max_position_consistency``, ``judges_with_order_effect_p_lt_0_05``, ``position_bias`` (records). On a
        table the figures cannot be computed on (one presentation order): one sentence saying why, no table.

    Source: Zheng et al. (2023), MT-Bench, Table 2; Shi et al. (2024), "Judging the Judges", §3.1; McNemar (1947).
    """
    df = _select(table, strategies)
    kind = _orders(df)
    if kind != "both":
        why = ("This table holds pointwise verdicts: report 02's figures compare two outputs of a pair, so none "
               "applies." if kind == "pointwise" else
               "Every pair of this table is shown in one presentation order: position consistency, MT-Bench's "
               "breakdown, first-slot preference, McNemar's order effect and balanced position calibration need "
               "each pair judged in both orders, so none is computed"
               + ("; the judge's lean to the first slot is measured from its errors against gold instead "
                  "(below)." if _lean_shown(df) else " (and without gold no lean to the first slot can be told "
                                                        "from quality)."))
        sec = Section(metrics={"position_bias": []}, conclusions=[why]).text("## Position bias").text(why)
        if _lean_shown(df):
            lean = _first_slot_lean(df, confidence=confidence, n_resamples=n_resamples, seed=seed)
            sec.items += lean.items
            sec.metrics.update(lean.metrics)
            sec.caveats += lean.caveats
        return sec
    bias = common_methods(position.position_bias(df, list(BY), confidence=confidence, n_resamples=n_resamples,
                                                 seed=seed))
    ok = bias[bias["position_consistency"].notna()]
    sec = Section(metrics={
        "pairs_per_judge": int(bias["pairs"].max()) if len(bias) else 0,
        "unparsed_replies": int(bias["unparsed"].sum()),
        "most_consistent_judge": _who(bias, ok["position_consistency"].idxmax()) if len(ok) else None,
        "max_position_consistency": float(ok["position_consistency"].max()) if len(ok) else None,
        "judges_with_order_effect_p_lt_0_05": int((bias["mcnemar_p"] < 0.05).sum()),
        "position_bias": bias.to_frame().to_dict("records")})
    if not bias[["position_consistency", "first_slot_preference"]].notna().any().any():
        why = _why(bias)
        sec.text(f"Position consistency, MT-Bench's breakdown and first-slot preference are not computable on this "
                 f"table: {why}.")
        sec.conclusions.append(f"Position bias could not be measured on this table ({why}).")
        return sec
    sec.text(BY_JUDGE_HEADING)
    sec.caveats += _bias_caveats(bias)
    if _strategies_text(df):
        sec.text(_strategies_text(df))
    words = _rows_word(bias)
    tested = bias[bias["mcnemar_p"].notna()]
    n_effect = int((tested["mcnemar_p"] < 0.05).sum())
    if len(ok):
        best = ok["position_consistency"].idxmax()
        e = bias.estimate("position_consistency", best)
        if len(bias) == 1:
            p = bias.estimate("mcnemar_p", best)
            sec.finding(f"{_who(bias, best)} gives the same verdict in both orders on {e}; McNemar's test on items "
                        f"{'finds an' if n_effect else 'finds no'} order effect at p < 0.05 (p = {p.number()}).", e)
        else:
            sec.finding(f"{_who(bias, best)} is the most position-consistent of the {len(bias)} {words}: the same "
                        f"verdict in both orders on {e}; {n_effect} of {len(tested)} {words} show an order effect "
                        f"(McNemar on items, p < 0.05).", e)
        lo, hi = ok["position_consistency"].idxmin(), best
        sec.conclusions.append(
            f"Position consistency ranges from {bias.estimate('position_consistency', lo).number()} "
            f"({_who(bias, lo)}) to {bias.estimate('position_consistency', hi).number()} ({_who(bias, hi)}); "
            f"{n_effect} of {len(tested)} {words} show an order effect (McNemar, p < 0.05)."
            if len(ok) > 1 else f"{sec.findings[0].sentence}")
    else:
        sec.text(f"Position consistency is not computable on this table ({_why(bias)}); first-slot preference is "
                 "shown where it is.")
    fs = bias[bias["first_slot_preference"].notna()]
    if len(fs):
        est = [bias.estimate("first_slot_preference", i) for i in fs.index]
        above = sum(e.excludes(0.5) and e.value > 0.5 for e in est)
        below = sum(e.excludes(0.5) and e.value < 0.5 for e in est)
        sec.metrics["rows_favouring_first_slot"] = above
        none = sum(not e.has_interval for e in est)
        inside = len(fs) - above - below - none
        sec.conclusions.append(
            f"{above} of {len(fs)} {words} favour the first-shown output (first-slot preference above 50%, its "
            f"interval excluding 50%)" + (f", {below} the second" if below else "")
            + (f"; {inside} {'has' if inside == 1 else 'have'} an interval that includes 50%" if inside else "")
            + (f"; {none} have no interval (no bootstrap)" if none else "") + ".")
    cols = {c: v for c, v in BIAS_COLUMNS.items() if c != "strategy" or _several(bias, "strategy")}
    sec.table(bias, cols, caption=f"Position bias per judge (first-slot preference: 50% = none; {MCNEMAR_NOTE})",
              csv_name="bias")
    if len(ok):
        fair = position.preference_fairness(df, list(BY))
        keys = [c for c in BY if c in fair.columns]
        merged = bias.to_frame().merge(fair.to_frame()[[*keys, "units", "preference_fairness_mean"]], on=keys,
                                       how="left")
        both = results(merged, {**bias.measures, **{c: fair.measure(c) for c in ("units", "preference_fairness_mean")}},
                       level=confidence, keys=bias.keys)
        sec.metrics["preference_fairness"] = fair.to_frame().to_dict("records")
        sec.table(both, {c: v for c, v in BREAKDOWN_COLUMNS.items() if c in cols or c not in BIAS_COLUMNS},
                  caption="MT-Bench's breakdown of every pair asked in both orders (Zheng et al. 2023, Table 2: "
                          "\"'Error' indicates wrong output format\", here an unparsed reply) and preference fairness "
                          "(Shi et al. 2024; 0 = fair, negative = the first-shown output favoured): Shi et al.'s, "
                          "computed per subset and averaged, beside the same figure pooled over the subsets' pairs",
                  csv_name="breakdown")
    shown = bias.dropna(subset=["position_consistency", "first_slot_preference"])
    if len(shown):
        from evallab.reporting import _plots as plots

        sec.figure(plots.scatter_intervals(
            shown.assign(who=[_who(bias, i) for i in shown.index]), x="first_slot_preference",
            y="position_consistency", x_low="first_slot_preference_low", x_high="first_slot_preference_high",
            y_low="position_consistency_low", y_high="position_consistency_high", label="who", xref=0.5,
            title="Position consistency vs first-slot preference",
            xlabel=f"first-slot preference (share of decisive replies, 0.5 = none; {confidence:.0%} interval)",
            ylabel=f"position consistency (share of pairs; {confidence:.0%} interval)"))
    return sec


def by_subset(table: pd.DataFrame, *, strategies: Sequence[str] = (), confidence: float = 0.95,
              n_resamples: int = 1000, seed: int = 0) -> Section:
    """Position bias per subset, judge and strategy (:func:`evallab.metrics._position.position_bias`).

    Parameters
    ----------
    table, strategies, confidence, n_resamples, seed
        As :func:`by_judge`.

    Returns
    -------
    Section
        A finding (the row with the strongest slot preference and how many rows' intervals exclude 50%) and the
        table; one sentence saying why when first-slot preference is not computable on any row.
    """
    df = _select(table, strategies)
    if _orders(df) != "both":
        return Section()  # by_judge says once why no position figure applies
    if not _several(df, "subset"):
        return Section()  # one subset: the per-judge figures are its figures
    res = common_methods(position.position_bias(df, ["subset", *BY], confidence=confidence,
                                                n_resamples=n_resamples, seed=seed))
    ok = res[res["first_slot_preference"].notna()]
    sec = Section().text("## Per subset")
    if not len(ok):
        return sec.text(f"First-slot preference per subset is not computable on this table: {_why(res)}.")
    words = _rows_word(res)
    i = (ok["first_slot_preference"] - 0.5).abs().idxmax()
    e = res.estimate("first_slot_preference", i)
    off = sum(res.estimate("first_slot_preference", j).excludes(0.5) for j in ok.index)
    where = f" on {res.at[i, 'subset']}" if str(res.at[i, "subset"]) else ""
    sec.finding(f"The strongest slot preference is {_who(res, i, BY)}{where}: it picks the first-shown output "
                f"in {e} (50% = none); {off} of {len(ok)} {words} have an interval excluding 50%.", e)
    cols = {"subset": "Subset", **{c: v for c, v in BIAS_COLUMNS.items()
                                   if c != "strategy" or _several(res, "strategy")}}
    return sec.table(res, cols, caption=f"Position bias per subset and judge ({MCNEMAR_NOTE})", csv_name="by_subset")


BPC_COLUMNS = {"judge": "Judge", "strategy": "Strategy", "pairs_with_gold": "Pairs with gold",
               "acc_ab": "Acc. output 1 first", "acc_ba": "Acc. output 2 first",
               "bpc_accuracy": "Balanced calibration accuracy", "strict_accuracy": "Right in both orders",
               "abstention": "Abstention"}


def balanced_calibration(table: pd.DataFrame, *, strategies: Sequence[str] = (), tie_credit: float = 0.5,
                         confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """FairEval's balanced position calibration per judge and strategy
    (:func:`evallab.metrics._position.balanced_position_accuracy`), beside the two order accuracies.

    Parameters
    ----------
    table, strategies, confidence, n_resamples, seed
        As :func:`by_judge`.
    tie_credit : float, default 0.5
        Credit of a pair judged inconsistently (0.5: a tie is half right).

    Returns
    -------
    Section
        A finding (the highest calibrated accuracy, and that on binary verdicts with ``tie_credit`` 0.5 it equals
        the mean of the two order accuracies), the table, the figure; metric ``balanced_position_calibration``
        (records). One sentence saying what is missing (both orders, gold) when no row can be scored.

    Source: Wang et al. (2023), "Large Language Models are not Fair Evaluators", §3.2; Zeng et al. (2024), LLMBar,
    §4 (Acc.).
    """
    if _orders(_select(table, strategies)) != "both":
        return Section(metrics={"balanced_position_calibration": []})  # by_judge says once why
    bpc = common_methods(position.balanced_position_accuracy(_select(table, strategies), list(BY),
                                                             tie_credit=tie_credit, confidence=confidence,
                                                             n_resamples=n_resamples, seed=seed))
    sec = Section(metrics={"balanced_position_calibration": bpc.to_frame().to_dict("records")}).text(BPC_HEADING)
    ok = bpc[bpc["bpc_accuracy"].notna()]
    if not len(ok):
        return sec.text(f"Balanced position calibration is not computable on this table: {_why(bpc)}.")
    b = ok["bpc_accuracy"].idxmax()
    e = bpc.estimate("bpc_accuracy", b)
    ab, ba = bpc.estimate("acc_ab", b), bpc.estimate("acc_ba", b)
    mean = (ab.value + ba.value) / 2
    same = abs(mean - e.value) < 1e-12
    sec.finding(f"With balanced position calibration {_who(bpc, b)} scores highest: {e}; its accuracies with output 1 "
                f"and with output 2 shown first on the same pairs are {ab.number()} and {ba.number()}, whose mean is "
                + ("that same figure: the calibration removes the order, it is not an accuracy gain." if same else
                   f"{'lower' if e.value > mean else 'higher'} (tie credit {tie_credit:g}: the calibrated score is "
                   "not a mean of the two orders)."), e)
    if same:
        sec.conclusions.append("Balanced position calibration neutralises the order but equals the mean of the two "
                               "order accuracies on binary verdicts: it is not an accuracy gain.")
    cols = {c: v for c, v in BPC_COLUMNS.items() if c != "strategy" or _several(bpc, "strategy")}
    sec.table(bpc, cols, caption=f"Balanced position calibration (inconsistent pair = tie worth {tie_credit:g})",
              csv_name="bpc")
    from evallab.reporting import _plots as plots

    sec.figure(plots.interval_plot(ok.assign(who=[_who(bpc, i) for i in ok.index]), x="who", y="bpc_accuracy",
                                   low="bpc_accuracy_low", high="bpc_accuracy_high", scale=100, ref=0.5,
                                   title="Balanced position calibration: accuracy (inconsistent pairs as ties)",
                                   ylabel=f"accuracy (%), {confidence:.0%} interval", xlabel="judge"))
    return sec


LEAN_COLUMNS = {"judge": "Judge", "strategy": "Strategy", "scored": "Decisive replies with gold",
                "p_first_given_gold_second": "P(picks first | gold second)",
                "p_second_given_gold_first": "P(picks second | gold first)", "lean": "Lean (difference)",
                "errors": "Errors", "error_first_share": "Errors picking the first shown",
                "error_first_share_null": "Expected without a lean", "fisher_p": "Fisher's exact p"}


def _first_slot_lean(df: pd.DataFrame, *, confidence: float = 0.95, n_resamples: int = 1000,
                     seed: int = 0) -> Section:
    """On a table with one presentation order and gold: whether each judge leans to the first slot, from its
    errors (:func:`evallab.metrics._position.first_slot_lean`: P(picks the first shown | gold is the second shown)
    against P(picks the second shown | gold is the first shown), the share of errors picking the first shown with
    its interval, Fisher's exact test), labelled with its assumption (outputs not placed by quality). Shown by
    :func:`by_judge` on such a table (an empty section otherwise: with both orders :func:`by_judge` measures the slot
    directly).

    Parameters
    ----------
    df : DataFrame
        The selected table (:func:`by_judge`'s).
    confidence, n_resamples, seed
        As :func:`by_judge`.

    Returns
    -------
    Section
        Heading, a finding per the row with the largest lean, the table; metric ``first_slot_lean`` (records).

    Source: Zheng et al. (2023), MT-Bench, §3.4 (position bias); Fisher's exact test of the 2×2 table.
    """
    if not _lean_shown(df):
        return Section()
    res = common_methods(position.first_slot_lean(df, list(BY), confidence=confidence, n_resamples=n_resamples,
                                                  seed=seed))
    sec = Section(metrics={"first_slot_lean": res.to_frame().to_dict("records")}).text(
        "## Lean to the first slot, from the errors against gold\n"
        f"One presentation order: the judge's errors are split by the slot they picked. Without a lean a judge errs "
        f"as often when gold is the second-shown output as when it is the first; {position.LEAN_ASSUMPTION}.")
    ok = res[res["lean"].notna()]
    if not len(ok):
        return sec.text(f"The lean to the first slot is not computable on this table: {_why(res)}.")
    i = ok["lean"].abs().idxmax()
    e, p = res.estimate("error_first_share", i), res.estimate("fisher_p", i)
    null = res.estimate("error_first_share_null", i)
    a = (f"{int(res.at[i, 'errors_first'])} of {int(res.at[i, 'gold_second'])}")
    b = (f"{int(res.at[i, 'errors_second'])} of {int(res.at[i, 'gold_first'])}")
    share = (f"of its errors, {e} pick the first-shown output ({null.number()} expected without a lean)"
             if pd.notna(e.value) else "it made no error to split")
    sec.finding(f"{_who(res, i, BY)} picks the first-shown output when gold is the second in {a} replies "
                f"({res.estimate('p_first_given_gold_second', i).number()}) and the second-shown when gold is the "
                f"first in {b} ({res.estimate('p_second_given_gold_first', i).number()}): a lean of "
                f"{res.estimate('lean', i).number()} (Fisher's exact p = {p.number()}); {share}. This assumes the "
                "outputs were not placed by quality.", e)
    sec.caveats.append(f"The lean to the first slot from one order: {position.LEAN_ASSUMPTION}.")
    cols = {c: v for c, v in LEAN_COLUMNS.items() if c != "strategy" or _several(res, "strategy")}
    return sec.table(res, cols, caption="Lean to the first slot from the errors against gold (one presentation "
                                        "order; outputs assumed not placed by quality)", csv_name="first_slot_lean")


def few_shot(table: pd.DataFrame, *, baseline: str = "Vanilla",
             variants: Sequence[str] = ("Vanilla_1shot", "Vanilla_2shot"), confidence: float = 0.95,
             n_resamples: int = 1000, seed: int = 0) -> Section:
    """The few-shot anchor effect on this report's table: per judge, first-slot preference and accuracy under each
    of ``variants`` against ``baseline`` on the same items, deltas paired over items
    (:func:`evallab.metrics._position.anchor_effect`, shown by report 03's
    :func:`~evallab.reporting.sections.inflation.few_shot_section`).

    Parameters
    ----------
    table : DataFrame
        From :func:`load` (every strategy; the ones compared are kept).
    baseline : str, default "Vanilla"
        The 0-shot strategy.
    variants : sequence of str, default ("Vanilla_1shot", "Vanilla_2shot")
        The few-shot strategies compared with it, each on its own row.
    confidence, n_resamples, seed
        As :func:`by_judge`.

    Returns
    -------
    Section
        Findings, table and figures of the few-shot comparison; metric ``anchor_effect`` (records). One sentence
        naming the strategies the table has when it lacks ``baseline`` or every variant.
    """
    from evallab.reporting.sections.inflation import few_shot_section

    have = sorted(map(str, table["strategy"].dropna().unique()))
    if baseline not in have or not set(variants) & set(have):
        reason = (f"The few-shot anchor effect is not computable on this table: it needs strategy {baseline} and one "
                  f"of {', '.join(variants)}; the table has {', '.join(have) or 'none'}.")
        return Section(metrics={"anchor_effect": []}, conclusions=[reason]).text(reason)
    shots = table[table["strategy"].isin([baseline, *variants])]
    sec = few_shot_section(shots, baseline=baseline, variants=variants, confidence=confidence,
                           n_resamples=n_resamples, seed=seed)
    if _several(shots, "subset"):
        sec.items.insert(0, f"Subsets {', '.join(sorted(map(str, shots['subset'].unique())))} are pooled by item "
                            "(each item counts once per strategy).")
    return sec


# ------------------------------------------------------------------------------------------- the live judge
@bundled_section
def live_section(run: dict | None, *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """The committed live run (``data/live/smollm2``, ``make live``): SmolLM2-135M's position consistency, MT-Bench's
    breakdown, preference fairness, first-slot preference and Acc. vs gold on its greedy replies (both orders);
    repetition stability of its sampled replies; the parse rate with and without structured verdicts.

    Parameters
    ----------
    run : dict or None
        :func:`evallab.reporting._live.load`; ``None`` or a run without the position study: one sentence.
    confidence, n_resamples, seed
        Level, bootstrap resamples over items and seed of every interval.

    Returns
    -------
    Section
        The judge's caveat and run card, findings (position, accuracy, stability, parse rate), their tables;
        metrics ``live_card``, ``live_position_consistency``, ``live_first_slot_preference``, ``live_acc``,
        ``live_pairs``, ``live_parse_rate_structured``.

    Source: as :func:`by_judge`; repetition stability: Shi et al. (2024), §3.1
    (:func:`evallab.metrics._agreement.repetition_stability`); Acc.: Zeng et al. (2024), §4.
    """
    missing = live.absent(run, "position")
    if missing:
        return Section().text(LIVE_HEADING).text(missing)
    ci = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    card = live._card_line(run)
    pos = run["position"]
    temp = pd.to_numeric(pos["temperature"], errors="coerce")
    greedy, sampled = pos[temp == 0], pos[temp > 0]
    bias = common_methods(position.position_bias(greedy, list(BY), **ci))
    acc = agreement.pairwise_statistics(greedy, list(BY), **ci)
    rates = live.parse_rates(run, confidence=confidence)
    sec = Section().text(LIVE_HEADING).text(f"{live.CAVEAT}\n\nRun: {card}")
    pc, fs = bias.estimate("position_consistency"), bias.estimate("first_slot_preference")
    where = ", ".join(sorted(map(str, greedy["subset"].dropna().unique()))) or "its"
    sec.finding(f"SmolLM2-135M gives the same verdict in both orders on {pc} of {where} pairs (greedy); MT-Bench's "
                f"breakdown: {bias.estimate('biased_first_rate').number()} biased toward the first-shown output, "
                f"{bias.estimate('biased_second_rate').number()} toward the second; it picks the first-shown output "
                f"in {fs} (50% = no slot preference).", fs)
    a = acc.estimate("acc")
    sec.finding(f"Against the gold labels its Acc. (mean of the two order accuracies) is {a} — "
                f"{acc.estimate('acc_ab').number()} with output 1 shown first, {acc.estimate('acc_ba').number()} with "
                "output 2 first (50% is what a coin would score).", a)
    sec.table(bias, {"judge": "Judge", "pairs": "Pairs", "position_consistency": "Position consistency",
                     "biased_first_rate": "Biased to first", "biased_second_rate": "Biased to second",
                     "preference_fairness": "Preference fairness", "first_slot_preference": "First-slot preference",
                     "mcnemar_p": "McNemar p"}, caption=f"SmolLM2-135M, greedy replies ({MCNEMAR_NOTE})")
    sec.table(acc, {"judge": "Judge", "n": "Items", "acc_ab": "Accuracy, output 1 first",
                    "acc_ba": "Accuracy, output 2 first", "acc": "Acc."}, caption="Accuracy against the gold labels")
    if len(sampled):
        every = agreement.repetition_stability(sampled, list(BY), **ci)
        per = agreement.repetition_stability(sampled, [*BY, "order"], **ci).reset_index(drop=True)
        worst = per["flip_rate"].idxmax()
        sec.finding(f"Repeated at temperature {float(temp[temp > 0].iloc[0]):g} ({sampled['sample'].nunique()} "
                    f"samples per pair and order), its parsed samples all agree on {every.estimate('unanimity')} of "
                    f"the (pair, order) units of both orders; the flip rate is highest with order "
                    f"{per.at[worst, 'order']}: {per.estimate('flip_rate', worst)}.", per.estimate("flip_rate", worst))
        k = int(sampled["sample"].nunique())
        ties = int((sampled["verdict"] == "tie").sum())
        chance = agreement.coin_flip_chance(k, 2)  # a binary verdict: output 1 or output 2
        per = per.assign(chance_stability=chance["repetition_stability"], chance_unanimity=chance["unanimity"],
                         chance_flip_rate=chance["flip_rate"])
        with_ties = agreement.coin_flip_chance(k, 3)
        tie_text = (f" (with ties as a third verdict — {ties} of {int(sampled['verdict'].notna().sum()):,} parsed "
                    f"samples were ties — {with_ties['repetition_stability']:.1%}, {with_ties['unanimity']:.1%} and "
                    f"{with_ties['flip_rate']:.1%})") if ties else ""
        sec.text(f"Chance levels: a judge tossing a fair coin between output 1 and output 2 in each of {k} samples "
                 f"would show repetition stability {chance['repetition_stability']:.1%}, unanimity "
                 f"{chance['unanimity']:.1%} and a flip rate of {chance['flip_rate']:.1%}{tie_text}; figures near "
                 "them say the samples agree no more than coin tosses would.")
        sec.table(per, {"order": "Order", "units": "(Pair, order) units", "repetition_stability":
                        "Repetition stability", "chance_stability": "Chance stability", "unanimity": "Unanimous",
                        "chance_unanimity": "Chance unanimity", "flip_rate": "Flip rate",
                        "chance_flip_rate": "Chance flip rate"},
                  caption=f"Sampled replies (temperature {float(temp[temp > 0].iloc[0]):g}): agreement across samples")
    structured = rates.index[(rates["study"] == "all studies")
                             & rates["response format"].str.startswith("structured")]
    text = rates.index[(rates["study"] == "all studies") & rates["response format"].str.startswith("text")]
    if len(structured):
        e = rates.estimate("parse_rate", structured[0])
        plain = (f"; with the text prompt alone {rates.estimate('parse_rate', text[0]).number()} of "
                 f"{int(rates.at[text[0], 'requests']):,} (no grammar)") if len(text) else ""
        sec.finding(f"With structured verdicts (llama.cpp's grammar-constrained json_object with a schema) {e} of "
                    f"the live requests got a parsed verdict{plain}; unparsed replies are counted here and left out "
                    "of every estimate.", e)
    sec.table(rates, {"study": "Study", "response format": "Response format", "requests": "Requests",
                      "parsed": "Parsed", "failed calls": "Failed calls", "parse_rate": "Parse rate"},
              caption="Parse rate of the live replies")
    sec.metrics = {"live_card": card, "live_position_consistency": pc.value, "live_first_slot_preference": fs.value,
                   "live_acc": a.value, "live_pairs": pc.n,
                   "live_parse_rate_structured": rates.estimate("parse_rate", structured[0]).value
                   if len(structured) else None}
    return sec


# ------------------------------------------------------------------------- nine real judges (Shi et al. 2024)
#: the heading of the real-judges section
REAL_HEADING = ("## Nine real judges reproduced: Shi et al. (2024) on MT-Bench\n"
    "The judgments behind Shi et al., \"Judging the Judges\" (arXiv 2406.07791; Position-Bias-Analyzer, MIT): "
    "nine 2024 judges — GPT-4 (0613, 1106-preview, 0125-preview), GPT-3.5-turbo (1106, 0125), Claude 3 Opus, "
    "Sonnet and Haiku, Gemini Pro — on 96 MT-Bench comparisons (24 questions; vicuna-13b-v1.3 against "
    "stablelm-tuned-alpha-7b, falcon-40b-instruct, claude-v1 and llama-13b), each in both orders and sent three "
    "times: 5,184 full replies, no gold. Every reply is parsed twice: by evallab's own parser (the final verdict "
    "statement wins) and as the authors did (the first `[[A]]`/`[[B]]`/`[[C]]`).")
#: the authors' counting in words (shown under the reproduction table)
AUTHORS_COUNTING = ("The authors' printed figure counts REPLIES, not pairs: the denominator is every reply their "
                    "extraction parsed, and a parsed reply whose swapped reply was unparsed counts as consistent "
                    "(Position-Bias-Analyzer `subeval/subjective/analyze_util.py` and `util.py`, commit 9f8b7e8e). "
                    "evallab's figure is the share of PAIRS with both replies parsed that keep their verdict — the "
                    "judge-level \"positional consistency\" of the authors' later analysis.")


@dataclass
class RealJudges:
    """The bundled Position-Bias-Analyzer data a report section needs: the tidy ``table`` (5,184 replies), the
    authors' ``printed`` figures (one row per record file) and the judges' ``prices`` per 1M tokens."""

    table: pd.DataFrame
    printed: pd.DataFrame
    prices: pd.DataFrame


def load_real_judges(data_dir: str = "") -> RealJudges:
    """The nine judges of Shi et al. (2024) (:mod:`evallab.datasets._position_bias_analyzer`): the compact tidy
    table, the figures the authors printed, the prices.

    Raises
    ------
    DataError
        A file of the dataset missing (naming it).
    """
    from evallab.datasets import _position_bias_analyzer as pba

    return RealJudges(pba.load_position_bias_analyzer(data_dir), pba.printed_consistency(data_dir),
                      pba.load_prices(data_dir))


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


@bundled_section
def real_judges(data_dir: str = "", *, contestant: str = "claude-v1", family: str = "claude-3",
                confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """The nine real judges of Shi et al. (2024), bundled (``data/position_bias_analyzer``): their position
    consistency reproduced, price and stability (:func:`_nine_judges`), then family preference
    (:func:`_family_preference`) — one section, two headings.

    Parameters
    ----------
    data_dir : str, default ""
        The dataset folder; empty: the bundled ``data/position_bias_analyzer``.
    contestant, family
        Family preference: the contestant and the judges' family (``prices.csv``'s ``family``) that shares its maker.
    confidence, n_resamples, seed
        Level, bootstrap resamples over comparisons and seed of every interval.

    Returns
    -------
    Section
        Both parts' findings, tables, figure, metrics, conclusions and caveats.

    Raises
    ------
    DataError
        A file of the dataset missing (naming it).
    """
    from evallab.metrics import _intervals as intervals

    data = load_real_judges(data_dir)
    ci = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    with intervals.shared_resamples():  # every interval over the same comparisons draws its resamples once
        a = _nine_judges(data, **ci)
        b = _family_preference(data, contestant=contestant, family=family, **ci)
    a.items += b.items
    a.metrics.update(b.metrics)
    a.conclusions += b.conclusions
    a.caveats += [c for c in b.caveats if c not in a.caveats]
    return a


def _nine_judges(data: RealJudges, *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """Shi et al.'s nine judges: the 27 printed position-consistency figures reproduced under the authors' counting
    beside evallab's own; where evallab's parser and the authors' extraction differ (those replies shown);
    preference fairness (Shi et al.'s positional preference score and evallab's unnormalised figure); repetition
    stability against a random judge's chance level; position consistency against the price per 1M tokens (table
    and figure).

    Parameters
    ----------
    data : RealJudges
        :func:`load_real_judges`.
    confidence, n_resamples, seed
        Level, bootstrap resamples over items (comparisons) and seed of every interval.

    Returns
    -------
    Section
        Findings, tables (reproduction per file, differing replies, per judge with prices), the cost–consistency
        figure; metrics ``real_judges_reproduced`` (files whose printed N, M and X% are reproduced),
        ``real_judges_files``, ``real_judges_parser_differences``, ``real_judges_consistency`` (per judge),
        ``real_judges_price_spearman``.

    Source: Shi et al. (2024), §3.1 (position consistency, preference fairness, repetition stability);
    :mod:`evallab.metrics._shi`, :mod:`evallab.metrics._position`; prices: the authors'
    ``price_vs_consistency.py`` (``data/position_bias_analyzer/SOURCE.md``).
    """
    from scipy.stats import spearmanr

    from evallab.datasets._position_bias_analyzer import differs
    from evallab.metrics import _shi as shi

    t = data.table
    ci = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    sec = Section().text(REAL_HEADING)
    # --- the 27 printed figures
    authors = shi.authors_position_consistency(t, ["judge", "sample"]).to_frame()
    own = position.position_consistency(t, ["judge", "sample"], confidence=confidence, n_resamples=0)
    rep = data.printed.merge(authors, on=["judge", "sample"], suffixes=("_printed", ""))
    rep["reproduced"] = ((rep["consistent_printed"] == rep["consistent"]) & (rep["parsed_printed"] == rep["parsed"])
                         & ((rep["consistent"] / rep["parsed"] * 100).map("{:.2f}".format)
                            == rep["rate_pct_printed"].map("{:.2f}".format)))
    ok = int(rep["reproduced"].sum())
    frame = own.to_frame().merge(rep[["judge", "sample", "consistent_printed", "parsed_printed", "rate_pct_printed",
                                      "consistent", "parsed", "reproduced"]], on=["judge", "sample"])
    frame = frame.assign(repetition=frame["sample"] + 1,
                         printed=[f"{a} of {b}: {x:.2f}%" for a, b, x in zip(frame["consistent_printed"],
                                                                            frame["parsed_printed"],
                                                                            frame["rate_pct_printed"], strict=True)],
                         authors_counting=[f"{a} of {b}: {a / b * 100:.2f}%" for a, b in zip(
                             frame["consistent"], frame["parsed"], strict=True)],
                         match=frame["reproduced"].map({True: "yes", False: "NO"}))
    repro = results(frame, own.measures, level=confidence, keys=["judge", "repetition"])
    sec.finding(f"All {ok} of the {len(rep)} position-consistency figures the authors' code printed (\"N out of M "
                "answers are consistent ... X%\") are reproduced exactly under their counting" if ok == len(rep)
                else f"{ok} of the {len(rep)} printed position-consistency figures are reproduced exactly under the "
                     "authors' counting")
    sec.text(AUTHORS_COUNTING)
    sec.table(repro, {"judge": "Judge", "repetition": "Repetition", "printed": "Printed by the authors",
                      "authors_counting": "Reproduced (authors' counting: replies)", "match": "Same",
                      "both_parsed": "Pairs (both parsed)", "position_consistency": "evallab: position consistency "
                      "(pairs)"}, caption="Position consistency of each record file: the authors' printed figure, "
                      "its reproduction, and evallab's figure on pairs", csv_name="real-judges-reproduced")
    # --- parsers
    diff = t[differs(t)]
    no_mark = int(diff["authors_verdict"].isna().sum())
    several = int((diff["authors_verdict"].notna() & diff["verdict_marks"].str.split().map(
        lambda m: len(set(m)) > 1)).sum())
    na_ours = int(diff["verdict"].isna().sum())
    sec.finding(f"evallab's parser and the authors' extraction disagree on {len(diff)} of {len(t):,} replies "
                f"({_pct(len(diff) / len(t))}): {no_mark} replies carry no `[[X]]` at all (the authors have no "
                f"verdict; evallab reads \"Assistant A is better\" and the like), {several} name two or more "
                f"different marks (the authors take the first, evallab the final statement — or no verdict when the "
                f"final sentence names two: {na_ours} replies), and {len(diff) - no_mark - several} ends on words "
                "after its single mark. Every other reply gets the same verdict from both.")
    shown = diff.assign(repetition=diff["sample"] + 1, authors=diff["authors_verdict"].fillna("—"),
                        evallab=diff["verdict"].fillna("— (" + diff["error"].fillna("") + ")"))
    sec.table(shown[["judge", "repetition", "item_id", "order", "authors", "evallab", "verdict_marks",
                     "reply_tail"]].reset_index(drop=True),
              {"judge": "Judge", "repetition": "Repetition", "item_id": "Comparison", "order": "Order",
               "authors": "Authors (first [[X]])", "evallab": "evallab", "verdict_marks": "Marks in the reply",
               "reply_tail": "End of the reply"},
              caption="The replies where the two extractions differ (verdicts in original terms: 1 = "
                      "vicuna-13b-v1.3, 2 = its opponent)", csv_name="real-judges-parser-differences")
    # --- per judge: consistency, preference, stability, price
    per = position.position_consistency(t, ["judge"], **ci)
    auth_mean = authors.groupby("judge")["position_consistency"].mean()
    pref = shi.shi_preference_score(t, ["judge", "sample"]).to_frame().groupby("judge")["preference_score"].mean()
    fair = position.position_bias(t, ["judge"], n_resamples=0)  # evallab's preference fairness, pooled
    stab = agreement.repetition_stability(t, ["judge"], **ci)
    shi_stab = shi.shi_repetition_stability(t, ["judge"]).to_frame().set_index("judge")["repetition_stability"]
    chance = shi.random_judge_stability(3, 3)
    prices = data.prices.set_index("judge")
    f = per.to_frame().merge(stab.to_frame()[["judge", "units", "repetition_stability", "repetition_stability_low",
                                              "repetition_stability_high", "repetition_stability_method"]],
                             on="judge")
    f = f.merge(fair.to_frame()[["judge", "preference_fairness"]], on="judge")
    f = f.assign(authors_consistency=f["judge"].map(auth_mean), preference_score=f["judge"].map(pref),
                 shi_stability=f["judge"].map(shi_stab),
                 family=f["judge"].map(prices["family"]),
                 input_usd_per_mtok=f["judge"].map(prices["input_usd_per_mtok"]),
                 output_usd_per_mtok=f["judge"].map(prices["output_usd_per_mtok"]))
    f = f.sort_values("position_consistency", ascending=False).reset_index(drop=True)
    from evallab._results import Measure

    measures = {**per.measures, **{c: stab.measure(c) for c in ("units", "repetition_stability")},
                "preference_fairness": fair.measure("preference_fairness"),
                "authors_consistency": Measure("authors_consistency", "Authors' counting (mean of 3 files)",
                                               "proportion"),
                "preference_score": Measure("preference_score", "Positional preference score (Shi et al.)",
                                            "coefficient", digits=3),
                "shi_stability": Measure("shi_stability", "Repetition stability (Shi et al.'s counting)",
                                         "proportion"),
                "input_usd_per_mtok": Measure("input_usd_per_mtok", "USD per 1M input tokens", "", digits=2),
                "output_usd_per_mtok": Measure("output_usd_per_mtok", "USD per 1M output tokens", "", digits=2)}
    table = results(f, measures, level=confidence, keys=["judge"])
    best, worst = 0, len(table) - 1
    pc_best, pc_worst = table.estimate("position_consistency", best), table.estimate("position_consistency", worst)
    sec.finding(f"{table.at[best, 'judge']} is the most position-consistent judge (same verdict in both orders on "
                f"{pc_best} of the comparison × repetition pairs), {table.at[worst, 'judge']} the least "
                f"({pc_worst.number()}).", pc_best)
    rho = spearmanr(f["input_usd_per_mtok"], f["position_consistency"])
    cheap = f[f["input_usd_per_mtok"] <= 1.0]
    top = cheap.iloc[0] if len(cheap) else None
    dearer = f[(f["input_usd_per_mtok"] > 1.0) & (f["position_consistency"] < top["position_consistency"])] \
        if top is not None else f.iloc[:0]
    trend = ("dearer judges tend to be more consistent" if rho.statistic > 0 else
             "dearer judges tend to be less consistent" if rho.statistic < 0 else "price and consistency are unrelated")
    firm = ("" if rho.pvalue < 0.05 else
            ", though with nine judges this is not distinguishable from no relation at the 5% level")
    exception = (f"; {top['judge']} at ${top['input_usd_per_mtok']:.2f} per 1M input tokens keeps its verdict on "
                 f"{_pct(top['position_consistency'])} of pairs, more than {len(dearer)} dearer judges "
                 f"({', '.join(dearer['judge'])})") if len(dearer) else ""
    sec.finding(f"Across the nine judges {trend}: Spearman's rank correlation of the input price per 1M tokens with "
                f"position consistency is {rho.statistic:.2f} (n = 9 judges, p = {rho.pvalue:.2f}){firm}"
                f"{exception}.")
    lo_stab = table.estimate("repetition_stability", int(f["repetition_stability"].idxmin()))
    sec.finding(f"Sent the same prompt three times, every judge gives its most frequent verdict in at least "
                f"{lo_stab} of the samples of a request (repetition stability, Shi et al.; "
                f"{f.at[int(f['repetition_stability'].idxmin()), 'judge']} lowest), against {_pct(chance)} for a "
                "judge answering A, B or tie at random (17/27). (evallab divides by a request's parsed samples; Shi "
                f"et al.'s code counts an unparsed sample against the mode — both are in the table; "
                f"{int(t['verdict'].isna().sum())} replies are unparsed in all.)", lo_stab)
    ps = f.set_index("judge")["preference_score"]
    rec = ps[ps > 0].sort_values(ascending=False)
    first = ps[ps <= 0]
    sec.finding(f"Inconsistent pairs lean to the answer shown SECOND for {len(rec)} of the nine judges "
                f"(Shi et al.'s positional preference score above 0"
                + (f", strongest for {rec.index[0]} at {rec.iloc[0]:+.3f})" if len(rec) else ")")
                + (f"; {', '.join(first.index)} {'leans' if len(first) == 1 else 'lean'} to the first "
                   f"({', '.join(f'{x:+.3f}' for x in first)})" if len(first) else "") + ".")
    sec.table(table, {"judge": "Judge", "family": "Family", "both_parsed": "Pairs (both parsed)",
                      "position_consistency": "Position consistency (evallab: pairs)",
                      "authors_consistency": "Authors' counting (mean of 3 files)",
                      "preference_score": "Positional preference score (Shi et al.)",
                      "preference_fairness": "Preference fairness (evallab, pooled)",
                      "repetition_stability": "Repetition stability (evallab: parsed samples)",
                      "shi_stability": "Repetition stability (Shi et al.: all samples)",
                      "input_usd_per_mtok": "USD / 1M input tokens",
                      "output_usd_per_mtok": "USD / 1M output tokens"},
              caption=f"Per judge over the three repetitions (chance repetition stability {_pct(chance)}; preference: "
                      "0 = fair, positive = the second-shown answer favoured); prices: the authors' price maps, "
                      "spring 2024 list prices, Gemini Pro free", csv_name="real-judges-cost-consistency")
    sec.figure(_cost_consistency_plot(f, confidence))
    sec.metrics = {"real_judges_reproduced": ok, "real_judges_files": len(rep),
                   "real_judges_parser_differences": len(diff),
                   "real_judges_consistency": {r.judge: float(r.position_consistency) for r in f.itertuples()},
                   "real_judges_price_spearman": float(rho.statistic)}
    sec.conclusions.append(f"Shi et al.'s nine judges: all {ok} printed position-consistency figures reproduced; "
                           f"{table.at[best, 'judge']} most consistent ({pc_best.number()}), price and consistency "
                           f"rank-correlate at {rho.statistic:.2f} over 9 judges.")
    sec.caveats.append("Shi et al.'s data hold no gold: consistency, stability and preference say how a judge "
                       "behaves, not whether it is right.")
    return sec


def _cost_consistency_plot(f: pd.DataFrame, confidence: float):
    """Position consistency (with its interval) against the input price per 1M tokens, one point per judge,
    coloured by family; a symmetric-log price axis (Gemini Pro is free)."""
    import matplotlib.pyplot as plt

    from evallab.reporting import _plots as plots

    plots.use_style()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    fams = list(dict.fromkeys(f["family"]))
    for i, fam in enumerate(fams):
        d = f[f["family"] == fam]
        err = [(d["position_consistency"] - d["position_consistency_low"]).clip(lower=0),
               (d["position_consistency_high"] - d["position_consistency"]).clip(lower=0)]
        ax.errorbar(d["input_usd_per_mtok"], d["position_consistency"], yerr=err, fmt="o", capsize=3,
                    color=plots.OKABE_ITO[i % len(plots.OKABE_ITO)], label=fam)
        for r in d.itertuples():
            ax.annotate(r.judge, (r.input_usd_per_mtok, r.position_consistency), textcoords="offset points",
                        xytext=(5, 4), fontsize=plots.MIN_FONT)
    from matplotlib.ticker import FixedLocator, NullLocator

    ax.set_xscale("symlog", linthresh=0.25)
    ticks = [0, 0.25, 0.5, 1, 3, 10, 30]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(ticks, [f"{x:g}" for x in ticks])  # plain labels: no mathtext
    ax.set_xlim(-0.05, 150)  # room for the labels of the dearest judges
    ax.set_xlabel("USD per 1M input tokens (symmetric log scale; Gemini Pro free)")
    ax.set_ylabel(f"position consistency (pairs; {confidence:.0%} interval)")
    ax.set_title("Position consistency vs price: nine judges (Shi et al. 2024)")
    ax.legend(title="family", loc="lower right")
    fig.tight_layout()
    return fig


#: the heading of the family-preference section ({contestant}, {family}, {items}: filled in)
FAMILY_HEADING = ("## Family preference: {family} judges on {contestant}\n"
    "Do judges favour a contestant of their own family? {contestant} is one of the contestants compared with "
    "vicuna-13b-v1.3; the {family} judges' win rate for it (ties half) is set against the other judges' on the same "
    "{items} comparisons, both orders and three repetitions pooled; the comparison is the resampling unit. There is "
    "no gold: a difference says the two groups of judges disagree about {contestant}, not which group is right.")


def _family_preference(data: RealJudges, *, contestant: str = "claude-v1", family: str = "claude-3",
                      confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """The win rate ``family`` judges give ``contestant`` against the other judges' on the same comparisons
    (:func:`evallab.metrics._shi.family_preference`), per judge and pooled, with the paired difference.

    Parameters
    ----------
    data : RealJudges
        :func:`load_real_judges`.
    contestant : str, default "claude-v1"
        The compared model.
    family : str, default "claude-3"
        The judges' family (``prices.csv``'s ``family`` column) that shares the contestant's maker.
    confidence, n_resamples, seed
        Level, bootstrap resamples over comparisons and seed.

    Returns
    -------
    Section
        A finding on the difference, the per-judge table; metrics ``family_preference_difference``,
        ``family_preference_low``, ``family_preference_high``.

    Source: arena-hard-auto#10 (judges favouring their own family); data: Shi et al. (2024).
    """
    from evallab.metrics import _shi as shi

    judges = data.prices.loc[data.prices["family"] == family, "judge"].tolist()
    r = shi.family_preference(data.table, contestant=contestant, family_judges=judges, confidence=confidence,
                              n_resamples=n_resamples, seed=seed)
    g = r.reset_index(drop=True)
    i_f, i_o, i_d = (int(g.index[g["group"] == x][0]) for x in ("family judges", "other judges", "family − others"))
    wf, wo, d = g.estimate("win_rate", i_f), g.estimate("win_rate", i_o), g.estimate("difference", i_d)
    name = family.replace("-", " ").title()
    if d.has_interval and d.excludes(0.0) and d.value > 0:
        verdict = (f"the interval lies above 0: the {name} judges favour {contestant} more than the other judges do "
                   "(a family preference, or a taste they share with its makers)")
    elif d.has_interval and d.excludes(0.0):
        verdict = (f"the interval lies below 0: the {name} judges are HARDER on {contestant} than the other judges — "
                   "no sign of favouring their own family here")
    else:
        verdict = f"the interval includes 0: no difference between the {name} judges and the others is shown"
    sec = Section().text(FAMILY_HEADING.format(contestant=contestant, family=name, items=int(g.at[i_d, "items"])))
    sec.finding(f"The {name} judges give {contestant} a win rate of {wf.number()} against "
                f"vicuna-13b-v1.3, the other judges {wo.number()}, on the same {int(g.at[i_d, 'items'])} "
                f"comparisons: a difference of {d} — {verdict}.", d)
    sec.table(r, {"group": "Judges", "items": "Comparisons", "replies": "Parsed replies",
                  "win_rate": f"{contestant}'s win rate (ties half)", "difference": "Family − others"},
              caption=f"Win rate of {contestant} against vicuna-13b-v1.3 by judge and judge group (no gold)")
    sec.metrics = {"family_preference_difference": d.value, "family_preference_low": d.low,
                   "family_preference_high": d.high}
    sec.conclusions.append(f"Family preference ({family} judges on {contestant}, no gold): {d}.")
    return sec


__all__ = ["balanced_calibration", "by_judge", "by_subset", "few_shot", "live_section", "load", "overview",
           "real_judges"]
