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


__all__ = ["balanced_calibration", "by_judge", "by_subset", "few_shot", "live_section", "load", "overview"]
