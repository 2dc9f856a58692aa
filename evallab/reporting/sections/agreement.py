"""Report 01, "Judge agreement with gold and between judges": what each section states (issue 25: thin notebooks).

Do LLM judges agree with gold labels, and with each other? The sections, in the report's order:

- :func:`unparsed_section` — the table's shape and its unparsed replies, counted and left out of every figure (never
  scored as wrong).
- :func:`published_section` — LLMBar's published table recomputed row by row (Zeng et al. 2024, "Evaluating Large
  Language Models at Evaluating Instruction Following", ICLR 2024, Tables 2–4 and ``statistics.csv``: Acc. counts
  an unparsed reply as wrong, Agr. counts a pair whose two replies were both unparsed as agreeing); shown only when
  the report runs on the bundled LLMBar — a report on the user's table states that table's findings only.
- :func:`accuracy_section` — accuracy against gold per presentation order and LLMBar's Acc., "the average accuracy
  over the two orders" (LLMBar §4); the pooled accuracy (correct / parsed replies) under its own name, and instead of
  Acc. where only one order is recorded.
- :func:`kappa_section` — Cohen's kappa against gold (Cohen 1960; ``sklearn.metrics.cohen_kappa_score``).
- :func:`judge_agreement_section` — judge × judge raw agreement and Cohen's kappa on the replies both parsed, with
  the heatmap.
- :func:`panel_section` — Fleiss' kappa (Fleiss 1971) and Krippendorff's alpha (nominal; Krippendorff 2011) across
  all judges, per subset and for the whole table.

A table with several prompt strategies is never pooled into one headline: each headline is stated per strategy
(naming it). Each function returns a :class:`~evallab.reporting._context.Section`; every number it states comes
from an estimator's :class:`~evallab.Results` (:mod:`evallab.metrics._agreement`: value, interval, level, method
and n), never retyped here; a figure the table cannot support is one sentence built from the Results' note.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

from evallab import verdicts as V
from evallab._results import Measure, Results, common_methods, results
from evallab.metrics import _agreement as agreement
from evallab.metrics import _design as design
from evallab.reporting import _plots as plots
from evallab.reporting._context import Section

#: the design cell of report 01's per-group tables (LLMBar's table: one row per subset, judge, strategy)
BY = ("subset", "judge", "strategy")
#: at most this many strategies get their own figure (the tables hold every strategy)
MAX_FIGURES = 4
#: the minimum-size rule's default (:data:`evallab.metrics._design.MIN_ITEMS`; the notebook's ``min_items``)
MIN_ITEMS = design.MIN_ITEMS
#: LLMBar's published reference row the index shows (Natural, GPT-4, Vanilla: Acc. 95.5, Agr. 95)
REFERENCE = {"subset": "LLMBar/Natural", "judge": "GPT-4", "strategy": "Vanilla"}

#: the measures of the unparsed-replies table (:func:`evallab.verdicts.parse_rate`)
PARSE_MEASURES = [Measure("replies", "Replies", "count", note=None), Measure("unparsed", "Unparsed", "count", note=None),
                  Measure("unparsed_rate", "Unparsed share", "proportion", n="replies", n_unit="replies", note=None)]


# ------------------------------------------------------------------------------------------------ helpers
def _strategies(res: pd.DataFrame) -> Iterator[tuple[str | None, pd.DataFrame]]:
    """``(strategy, rows)`` per prompt strategy of ``res`` (``None`` for the only one: a table with one strategy,
    or none recorded, is not named)."""
    if "strategy" not in res.columns or res["strategy"].nunique(dropna=False) <= 1:
        yield None, res
        return
    for s, g in res.groupby("strategy", sort=True, dropna=False):
        yield str(s), g


#: the sentence openings of this module that read in lower case after "With strategy X, "
_OPENINGS = ("The", "Across", "Accuracy", "Agreement", "Judges", "Over", "By", "No")


def _with(strategy: str | None, rest: str) -> str:
    """The sentence ``rest`` (written as it opens a sentence), after "With strategy X, " when the table has several
    strategies (a judge's or a measure's name keeps its case)."""
    if strategy is None:
        return rest
    first = rest.split(" ", 1)[0]
    return f"With strategy {strategy}, " + (rest[:1].lower() + rest[1:] if first in _OPENINGS else rest)


def _where(res: pd.DataFrame, i, *, subset: bool = True) -> str:
    """The row's judge and, when recorded, its subset ("GPT-4 on LLMBar/Natural"; "GPT-4" without subsets)."""
    r = res.loc[i]
    where = f" on {r['subset']}" if subset and "subset" in res.columns and str(r.get("subset") or "") else ""
    return f"{r['judge']}{where}"


def _shown(res: pd.DataFrame, columns: dict[str, str]) -> dict[str, str]:
    """``columns`` without the design columns that say nothing here (``subset``/``strategy``/``scope`` empty in every
    row or the same in all: no empty "subset=" column)."""
    def says(c: str) -> bool:
        if c not in ("subset", "strategy", "scope"):
            return True
        v = res[c].astype(str) if c in res.columns else pd.Series(dtype=str)
        return bool(len(v)) and (v != "").any() and v.nunique() > 1
    return {c: label for c, label in columns.items() if c in res.columns and says(c)}


def _reason(res: Results, column: str) -> str:
    """Why ``column`` is missing in every row: the distinct notes of the rows, as one phrase."""
    notes = [res.estimate(column, i).note or "" for i in range(len(res))]
    first = [(design.note_reasons(n) or [n])[0] for n in notes]  # a row's first reason
    return "; ".join(sorted(set(first) - {""})) or "the table has no row it can be computed from"


def _ranked(sec: Section, res: Results, rows: pd.DataFrame, column: str, strategy: str | None,
            what: str) -> pd.Index | None:
    """The labels of ``rows`` (of ``res``) with ``column`` computed, highest first; when there is none, one sentence
    in ``sec`` saying why ``what`` is not computable (from the rows' notes), and None."""
    ok = rows[rows[column].notna()].sort_values(column, ascending=False)
    if len(ok):
        return ok.index
    why = _reason(results(rows, res.measures, level=res.level), column)
    sec.text(_with(strategy, f"{what} is not computable on this table: {why}."))
    return None


def _records(res: pd.DataFrame, columns: Sequence[str]) -> list[dict]:
    return pd.DataFrame(res)[[c for c in columns if c in res.columns]].to_dict("records")


def _sample(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


# ------------------------------------------------------------------------------------------ unparsed replies
def unparsed_section(df: pd.DataFrame, *, min_items: int = MIN_ITEMS) -> Section:
    """The table's shape, what the report's counts count, its minimum-size rule, and the unparsed replies per judge
    and strategy.

    Parameters
    ----------
    df : DataFrame
        The tidy verdict table of the report (:func:`evallab.datasets.load_study`).
    min_items : int, default :data:`MIN_ITEMS`
        The minimum-size rule every section applies (:func:`evallab.metrics._design.min_size_rule`), stated here.

    Returns
    -------
    Section
        The shape in words (:func:`evallab.metrics._design.describe`); what an item, a pair and a reply are, and
        whether the table has several samples per request (the majority-vote section appears only then); the
        minimum-size rule; a finding on the unparsed share and its table (:func:`evallab.verdicts.parse_rate`);
        metrics ``replies``, ``unparsed_replies``, ``judges``, ``table_shape``, ``samples``, ``min_items``; the
        caveat that unparsed replies are counted, not scored (and, on LLMBar only —
        :func:`evallab.datasets._study.is_llmbar` — that its own convention, unparsed = wrong, is reported
        separately).
    """
    from evallab.datasets._study import is_llmbar

    shape = design.describe(df)
    by = [c for c in ("judge", "strategy") if c in df.columns]
    parse = results(V.parse_rate(df, by=by), PARSE_MEASURES, keys=by)
    n, k = len(df), int(df["verdict"].isna().sum())
    overall = results(pd.DataFrame([{"replies": n, "unparsed": k, "unparsed_rate": k / n if n else float("nan")}]),
                      PARSE_MEASURES)
    e = overall.estimate("unparsed_rate")
    sec = Section(metrics={"replies": n, "unparsed_replies": k, "judges": int(df["judge"].nunique()),
                           "table_shape": shape["text"], "samples": shape["samples"], "min_items": min_items})
    sec.text(shape["text"])
    counts = "An item is one question; a reply is one verdict of a judge"
    if shape["kind"] != "pointwise" and set(shape["orders"]) >= set(design.ORDERS):
        counts += "; a pair is one (item, sample) asked in both presentation orders"
    counts += ("; a request is an item asked of one judge and strategy." if shape["kind"] == "pointwise" else
               "; a request is an item in one order, asked of one judge and strategy.")
    if shape["samples"] > 1:
        counts += (f" Requests were sampled up to {shape['samples']} times: the majority verdict over the samples "
                   "is shown in its own section.")
    else:
        counts += " Each request was sampled once, so there is no majority vote over samples."
    sec.text(counts)
    sec.text(design.min_size_rule(min_items))
    sec.finding(f"{k:,} of {n:,} replies ({e.number()}) could not be parsed; they are counted here and left out of "
                "every figure below, never scored as wrong.", e)
    sec.table(parse, _shown(parse, {"judge": "Judge", "strategy": "Strategy", "replies": "Replies",
                                    "unparsed": "Unparsed", "unparsed_rate": "Unparsed share"}),
              caption="Unparsed replies per judge and strategy", csv_name="unparsed")
    if k:
        sec.caveats.append(f"{k:,} unparsed {'reply' if k == 1 else 'replies'} ({e.number()}) "
                           f"{'is' if k == 1 else 'are'} counted, not scored" + ("; LLMBar's own convention (unparsed = wrong) is reported separately."
                                       if is_llmbar(df) else "."))
    return sec


# ---------------------------------------------------------------------------------------- published table
#: the measures of the published-check summary
PUBLISHED_SUMMARY = [Measure("rows", "Published rows", "count", note=None),
                     Measure("reproduced", "Rows reproduced exactly", "count", n="rows", n_unit="rows", note=None)]


#: the published section's heading and LLMBar's conventions (shown with the section only: on the bundled LLMBar)
PUBLISHED_HEADING = ("## Reproducing the published table\n"
    "The data is LLMBar (Zeng et al., *Evaluating Large Language Models at Evaluating Instruction Following*, ICLR "
    "2024), bundled in `data/llmbar`: each pair is asked in both presentation orders, and LLMBar's *Acc.* is the "
    "mean of the two order accuracies. LLMBar's own figures (Acc. counts an unparsed reply as wrong; Agr. counts a "
    "pair whose two replies were both unparsed as agreeing) are recomputed here from the verdicts for every "
    "published (subset, judge, strategy) row and checked against the authors' `statistics.csv`; every other "
    "section excludes unparsed replies and counts them.")


def published_section(verdicts_path: str = "", data_dir: str = "", shown: pd.DataFrame | None = None) -> Section:
    """LLMBar's published table (``statistics.csv``) recomputed from its verdicts, row by row
    (:func:`evallab.metrics._agreement.published_check`), when the report runs on the bundled LLMBar.

    Parameters
    ----------
    verdicts_path : str, default ""
        The report's ``verdicts_path``: the user's own table when set — then nothing of LLMBar is compared and the
        section is empty (no heading).
    data_dir : str, default ""
        LLMBar folder; ``""``: the bundled ``data/llmbar``.
    shown : DataFrame, optional
        The report's table: the rows of its subsets and strategies are shown (every published row is checked).

    Returns
    -------
    Section
        Marked bundled (:attr:`~evallab.reporting._context.Section.bundled`: :meth:`Report.render` leaves it out of
        a report on the user's table). The heading and LLMBar's conventions (:data:`PUBLISHED_HEADING`), a finding
        on the rows reproduced exactly, one on the reference row (LLMBar/Natural, GPT-4, Vanilla), the
        table; metrics ``published_rows_reproduced``, ``published_rows``, ``natural_vanilla_gpt4_acc_published``,
        ``natural_vanilla_gpt4_agr_published`` (Acc. in percent and Agr. as a count of pairs, recomputed).
    """
    sec = Section(bundled=True)
    if verdicts_path:
        return sec  # the user's table: nothing of LLMBar, no heading
    sec.text(PUBLISHED_HEADING)
    from evallab.datasets import load_llmbar_statistics, load_study

    pub = agreement.published_check(load_study("", data_dir), load_llmbar_statistics(data_dir or None))
    k, n = int(pub["match"].sum()), len(pub)
    summary = results(pd.DataFrame([{"rows": n, "reproduced": k}]), PUBLISHED_SUMMARY)
    sec.metrics.update(published_rows_reproduced=k, published_rows=n)
    sec.finding(f"LLMBar's published rows are reproduced exactly: {k:,} of {n:,} (subset × judge × strategy; n, "
                "correct per order, Acc., correct in both orders, Agr.).", summary.estimate("reproduced"))
    ref = pub[(pub[list(REFERENCE)] == pd.Series(REFERENCE)).all(axis=1)]
    if len(ref):
        i = ref.index[0]
        acc, agr = pub.estimate("correct_average_pct_ours", i), pub.estimate("positional_agreement_equal_ours", i)
        sec.metrics.update(natural_vanilla_gpt4_acc_published=acc.value, natural_vanilla_gpt4_agr_published=int(agr.value))
        sec.finding(f"GPT-4 with the Vanilla prompt on LLMBar/Natural: Acc. {acc.number()} and Agr. "
                    f"{agr.number()} of {pub.at[i, 'n']:,} pairs, as published (unparsed replies counted wrong).", acc)
    rows = pub
    if shown is not None and len(shown):
        rows = pub[pub["subset"].isin(shown["subset"].unique()) & pub["strategy"].isin(shown["strategy"].unique())]
    sec.table(rows, {"subset": "Subset", "judge": "Judge", "strategy": "Strategy", "n": "Pairs",
                     "correct_average_pct": "Acc. (published)", "correct_average_pct_ours": "Acc. (recomputed)",
                     "positional_agreement_equal": "Agr. (published)",
                     "positional_agreement_equal_ours": "Agr. (recomputed)", "match": "All equal"},
              caption="LLMBar's published table beside the figures recomputed from its verdicts", csv_name="published")
    sec.conclusions.append(f"LLMBar's published figures are reproduced exactly on {k:,} of {n:,} rows.")
    return sec


# ------------------------------------------------------------------------------- whole table, then by subset
def _levels(df: pd.DataFrame, by: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """The keys of the whole-table figures (``by`` without ``subset``: per judge × strategy) and of the breakdown by
    subset (``by``; None when the table has one subset or none recorded)."""
    by = [c for c in by if c in df.columns]
    whole = [c for c in by if c != "subset"]
    several = "subset" in by and df["subset"].astype(str).replace("", pd.NA).dropna().nunique() > 1
    return whole, (by if several else None)


def _headlined(rows: pd.DataFrame, column: str, items: str, min_items: int) -> pd.DataFrame:
    """The rows a headline may name: ``column`` computed and at least ``min_items`` items (the minimum-size rule,
    :func:`evallab.metrics._design.too_thin`), highest first."""
    ok = rows[rows[column].notna() & ~design.too_thin(rows[items].to_numpy(), min_items)]
    return ok.sort_values(column, ascending=False)


def _thin_sentence(res: pd.DataFrame, items: str, min_items: int, what: str) -> str | None:
    """One sentence naming the breakdown rows below the minimum size (shown, never headlined), or None."""
    thin = res[design.too_thin(res[items].to_numpy(), min_items)]
    if not len(thin):
        return None
    names = sorted({_where(res, i) for i in thin.index})
    return (f"{len(thin)} of {_sample(len(res), what + ' row')} rest on fewer than {min_items:,} items (min_items): "
            f"shown, never headlined ({', '.join(names[:8])}{', …' if len(names) > 8 else ''}).")


def _per_judge(res: Results, rows: pd.DataFrame, column: str) -> str:
    """Every judge's whole-table figure in one phrase, highest first ("GPT-4 84.5%, PaLM2 70.5%")."""
    ok = rows[rows[column].notna()].sort_values(column, ascending=False)
    return ", ".join(f"{res.at[i, 'judge']} {res.estimate(column, i).number()}" for i in ok.index)


def _apart(res: Results, ok: pd.Index, column: str) -> str | None:
    """Why the two highest judges of ``ok`` (labels of ``res``, highest first) cannot be told apart — equal to the
    shown digits, or the highest interval reaching the next one's — or None when the highest stands apart (or there
    is one judge). A report declares no winner then."""
    if len(ok) < 2:
        return None
    e, f = res.estimate(column, ok[0]), res.estimate(column, ok[1])
    if e.number() == f.number():
        return "the two highest are equal as shown"
    if e.low is not None and f.high is not None and f.high >= e.low:
        return "the highest interval overlaps the next one's"
    return None


def _every(res: Results, ok: pd.Index, column: str) -> str:
    """Every judge of ``ok`` with its figure and interval ("A 75.6% [61.3, 85.8], B 74.4% [65.6, 83.3]")."""
    return ", ".join(f"{res.at[j, 'judge']} {res.estimate(column, j).number()}"
                     + (f" {res.estimate(column, j).interval()}" if res.estimate(column, j).has_interval else "")
                     for j in ok)


def _no_winner(res: Results, ok: pd.Index, column: str, what: str, why: str) -> str:
    """The sentence of a tie at the top: the judges cannot be told apart on ``what`` at this n."""
    es = [res.estimate(column, j) for j in ok]
    ns = [f"{e.n:,}" for e in es if e.n is not None]
    unit = es[0].n_unit or ""
    size = (f"n = {ns[0]} {unit} each" if len(set(ns)) == 1 else f"n = {', '.join(ns)} {unit}") if ns else ""
    level = f"{res.level:.0%} CI" if any(e.has_interval for e in es) else ""
    paren = "; ".join(x for x in (level, size.strip()) if x)
    return (f"Over the whole table, the judges cannot be told apart on {what} at this n ({why}), so no judge is "
            f"declared best: {_every(res, ok, column)}" + (f" ({paren})." if paren else "."))


def _span(res: Results, ok: pd.Index, column: str) -> str:
    """The range of ``column`` over ``ok`` (highest first): "from 0.41 to 0.52", or "all judges 0.52" when every
    judge shows the same value."""
    hi, lo = res.estimate(column, ok[0]).number(), res.estimate(column, ok[-1]).number()
    return f"all judges {hi}" if hi == lo else f"from {lo} to {hi}"


# ---------------------------------------------------------------------------------------- accuracy vs gold
ACCURACY_COLUMNS = {"subset": "Subset", "judge": "Judge", "strategy": "Strategy", "n": "Items",
                    "acc_ab": "Acc. output 1 first", "acc_ba": "Acc. output 2 first", "acc": "Acc.",
                    "accuracy_pooled": "Pooled accuracy"}
POOLED_COLUMNS = {"subset": "Subset", "judge": "Judge", "strategy": "Strategy", "parsed": "Parsed replies",
                  "items": "Items", "accuracy": "Pooled accuracy"}


def accuracy_section(df: pd.DataFrame, by: Sequence[str] = BY, *, min_items: int = MIN_ITEMS,
                     confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """Accuracy against gold, unparsed replies excluded: each judge's figure over the whole table first (per
    strategy), then the breakdown by subset; per presentation order, LLMBar's Acc. (the mean of the two order
    accuracies) and the pooled accuracy (correct / parsed over both orders) beside it.

    Where only one order is recorded Acc. is not computable (it averages the two orders): the pooled accuracy is
    headlined instead, and the sentence says so. Each strategy gets its own headline; a subset row resting on fewer
    than ``min_items`` items is shown but never headlined.

    Parameters
    ----------
    df : DataFrame
        The tidy verdict table.
    by : sequence of str, default :data:`BY`
        The design cell of the breakdown (the whole-table figures drop ``subset``).
    min_items : int, default :data:`MIN_ITEMS`
        The minimum-size rule (:func:`evallab.metrics._design.too_thin`).
    confidence, n_resamples, seed : float, int, int
        Interval level, bootstrap resamples over items, seed.

    Returns
    -------
    Section
        Per strategy a finding on each judge's whole-table Acc. (or pooled accuracy), the highest first; the
        whole-table table; the breakdown by subset (table, the highest row among those with ``min_items`` items,
        the thin rows named); a figure; metrics ``best_judge``, ``best_strategy``, ``best_acc``, ``best_acc_low``,
        ``best_acc_high`` (the highest whole-table Acc.), ``accuracy_overall`` (records per judge × strategy),
        ``accuracy``, ``accuracy_pooled``, ``accuracy_published_convention`` (records per design cell ``by``; the
        last counts an unparsed reply as wrong).

    Source: Zeng et al. (2024), LLMBar, §4 ("we report the average accuracy over the two orders").
    """
    ci = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    whole_by, sub_by = _levels(df, by)
    cell = sub_by or whole_by
    acc = agreement.pairwise_statistics(df, whole_by, **ci)
    pooled = agreement.accuracy(df, whole_by, **ci)
    cell_acc = agreement.pairwise_statistics(df, cell, **ci) if sub_by else acc
    cell_pooled = agreement.accuracy(df, cell, **ci) if sub_by else pooled
    published = agreement.accuracy(df, cell, unparsed="published", **ci)
    sec = Section(metrics={
        "best_judge": None, "best_strategy": None, "best_acc": None, "best_acc_low": None, "best_acc_high": None,
        "accuracy_overall": _records(acc, [*whole_by, "n", "acc", "acc_low", "acc_high", "parsed",
                                           "accuracy_pooled", "note"]),
        "accuracy": _records(cell_acc, [*cell, "n", "acc", "acc_low", "acc_high", "unparsed_ab", "unparsed_ba",
                                        "note"]),
        "accuracy_pooled": _records(cell_pooled, [*cell, "parsed", "accuracy", "accuracy_low", "accuracy_high",
                                                  "note"]),
        "accuracy_published_convention": _records(published, [*cell, "parsed", "unparsed", "accuracy",
                                                              "accuracy_low", "accuracy_high", "note"])})
    ranked = acc[acc["acc"].notna()].sort_values("acc", ascending=False)
    if len(ranked):
        i = ranked.index[0]
        e = acc.estimate("acc", i)
        sec.metrics.update(best_judge=str(acc.at[i, "judge"]), best_strategy=str(acc.at[i, "strategy"])
                           if "strategy" in acc else None, best_acc=e.value, best_acc_low=e.low, best_acc_high=e.high)
    pointwise = design.describe(df)["kind"] == "pointwise"  # no pair, no order: accuracy is correct / parsed
    if pointwise and (df["verdict"] == "warn").any():
        sec.text(_WARN_RULE + " " + _warn_count(df))
    for strategy, rows in _strategies(acc):
        _accuracy_finding(sec, acc, pooled, rows, strategy, pointwise=pointwise)
    has_acc = acc["acc"].notna().any()
    where = " over the whole table" if sub_by else ""
    pooled_columns = {**POOLED_COLUMNS, "accuracy": "Accuracy"} if pointwise else POOLED_COLUMNS
    if has_acc:
        sec.table(common_methods(acc), _shown(acc, ACCURACY_COLUMNS), csv_name="accuracy_overall",
                  caption=f"Accuracy against gold per judge{where}: per order, LLMBar's Acc. (mean of the two) "
                          "and pooled")
    elif pooled["accuracy"].notna().any():
        sec.table(common_methods(pooled), _shown(pooled, pooled_columns), csv_name="pooled_overall",
                  caption=f"{'Accuracy' if pointwise else 'Pooled accuracy'} against gold per judge{where} "
                          "(correct / parsed replies)")
    if sub_by:
        column, res = ("acc", cell_acc) if has_acc else ("accuracy", cell_pooled)
        items = "n" if has_acc else "items"
        if res[column].notna().any():
            _breakdown(sec, res, column, items, min_items,
                       "Acc." if has_acc else "accuracy" if pointwise else "the pooled accuracy",
                       _shown(res, ACCURACY_COLUMNS if has_acc else pooled_columns))
    fig_rows = cell_acc[cell_acc["acc"].notna()]
    for n_fig, (strategy, rows) in enumerate(_strategies(fig_rows) if len(fig_rows) else ()):  # no Acc.: no figure
        if n_fig == MAX_FIGURES:
            sec.text(f"Figures for the first {MAX_FIGURES} strategies; the table holds every strategy.")
            break
        sec.figure(plots.interval_plot(
            rows, x="judge", y="acc", low="acc_low", high="acc_high",
            hue="subset" if sub_by else None, scale=100, ref=0.5,
            title="Acc. (mean of the two order accuracies)" + (f", strategy {strategy}" if strategy else ""),
            ylabel=f"accuracy (%) with {confidence:.0%} interval", xlabel="judge"))
    gold = df.assign(_g=df["gold"].notna()).groupby(["dataset", "item_id"], observed=True)["_g"].any()
    if 0 < int((~gold).sum()) < len(gold):  # said once, in items (no gold at all: the sections say so instead)
        sec.caveats.append(f"{int((~gold).sum()):,} of {_sample(len(gold), 'item')} have no gold label: every "
                           "figure against gold (accuracy, Cohen's kappa, the majority's accuracy) leaves them out.")
    return sec


#: how a ``warn`` verdict is scored against gold (:func:`evallab.metrics._agreement.accuracy`: correct means the
#: verdict equals gold; :func:`~evallab.metrics._agreement.cohen_kappa_vs_gold`: every label is its own category)
_WARN_RULE = ("A `warn` verdict is scored as given: it is correct only where gold is `warn` too, so against pass/fail "
              "gold it counts as wrong in the accuracy (neither a pass nor half right), and in Cohen's kappa it is a "
              "category of its own (a disagreement with either gold label).")


def _warn_count(df: pd.DataFrame) -> str:
    """How many parsed replies with gold are ``warn`` (the replies :data:`_WARN_RULE` applies to)."""
    wg = df[df["verdict"].notna() & df["gold"].notna()]
    k = int((wg["verdict"] == "warn").sum())
    return f"Here {k:,} of the {len(wg):,} parsed replies with gold are `warn`."


def _breakdown(sec: Section, res: Results, column: str, items: str, min_items: int, what: str,
               columns: dict[str, str]) -> None:
    """The breakdown by subset: per strategy the highest row among those with ``min_items`` items (a sentence), the
    rows below the minimum size named, and the table."""
    for strategy, rows in _strategies(res):
        ok = _headlined(rows, column, items, min_items)
        if len(ok):
            i = ok.index[0]
            sec.finding(_with(strategy, f"By subset, among rows with at least {min_items:,} items, {what} is highest "
                                        f"for {_where(res, i)}: {res.estimate(column, i)}."), res.estimate(column, i))
        else:
            sec.text(_with(strategy, f"By subset, no row with a computed figure rests on {min_items:,} items or more "
                                     "(min_items): none is headlined."))
    thin = _thin_sentence(res, items, min_items, "subset")
    if thin:
        sec.text(thin)
    sec.table(common_methods(res), columns, csv_name=f"{column}_by_subset",
              caption=f"By subset: {what}" + (f" (rows with fewer than {min_items:,} items are never headlined)"
                                              if thin else ""))


def _without_acc(acc: Results, pooled: Results, left_out: pd.DataFrame, strategy: str | None) -> str:
    """The judges the Acc. headline leaves out (``left_out``: their rows of ``acc``), each named with why and with
    its pooled accuracy (correct / parsed replies) where that is computable."""
    p = pooled if strategy is None else pooled[pooled["strategy"].astype(str) == strategy]
    parts = []
    for j in left_out.index:
        judge = str(acc.at[j, "judge"])
        why = _reason(results(left_out.loc[[j]], acc.measures, level=acc.level), "acc")
        q = p.index[(p["judge"].astype(str) == judge) & p["accuracy"].notna()]
        also = (f"; its pooled accuracy (correct / parsed replies, the recorded orders pooled) is "
                f"{pooled.estimate('accuracy', q[0])}") if len(q) else ""
        parts.append(f"Acc. is not computable for {judge} ({why}), so it is not in the headline above{also}")
    return ". ".join(parts) + "."


def _accuracy_finding(sec: Section, acc: Results, pooled: Results, rows: pd.DataFrame, strategy: str | None, *,
                      pointwise: bool = False) -> None:
    """One strategy's headline on the whole table: every judge's Acc., the highest first; the pooled accuracy, said
    in words, where Acc. is not computable; one sentence when neither is. Its conclusion (the range of Acc., judges
    below chance). On a ``pointwise`` table (no pair, no order) the accuracy is stated as it is, without a word on
    Acc. or orders."""
    ok = rows[rows["acc"].notna()].sort_values("acc", ascending=False)
    if len(ok):
        i, w = ok.index[0], ok.index[-1]
        e = acc.estimate("acc", i)
        above = sum(acc.estimate("acc", j).excludes(0.5) and acc.estimate("acc", j).low > 0.5 for j in ok.index)
        others = f" (every judge: {_per_judge(acc, rows, 'acc')})" if len(ok) > 1 else ""
        chance = (f"{above} of {_sample(len(ok), 'judge')} {'is' if len(ok) == 1 else 'are'} above chance "
                  "(interval above 50%)")
        tie = _apart(acc, ok.index, "acc")
        if tie:
            sec.finding(_with(strategy, _no_winner(acc, ok.index, "acc", "Acc. (mean of the two order accuracies)",
                                                   tie)[:-1] + f"; {chance}."))
            sec.conclusions.append(_with(strategy, f"Acc. over the whole table: {_span(acc, ok.index, 'acc')}; the "
                                                   "judges cannot be told apart at this n."))
        else:
            sec.finding(_with(strategy, f"Over the whole table, {acc.at[i, 'judge']} has the highest Acc. (mean of "
                                        f"the two order accuracies): {e}{others}; {chance}."), e)
            sec.conclusions.append(_with(strategy, f"Acc. over the whole table ranges from "
                                                   f"{acc.estimate('acc', w).number()} ({acc.at[w, 'judge']}) to "
                                                   f"{e.number()} {e.interval()} ({acc.at[i, 'judge']})."))
        left_out = rows[rows["acc"].isna()]
        if len(left_out):
            sec.text(_with(strategy, _without_acc(acc, pooled, left_out, strategy)))
            sec.conclusions.append(_with(strategy, f"Acc. not computable for "
                                                   f"{', '.join(str(acc.at[j, 'judge']) for j in left_out.index)}."))
        below = [j for j in ok.index if acc.estimate("acc", j).high is not None and acc.estimate("acc", j).high < 0.5]
        if below:
            sec.conclusions.append(_with(strategy, f"{_sample(len(below), 'judge')} below chance (whole interval "
                                                   f"under 50%): {', '.join(sorted({str(acc.at[j, 'judge']) for j in below}))}."))
        return
    why = _reason(results(rows, acc.measures, level=acc.level), "acc")
    p = pooled if strategy is None else pooled[pooled["strategy"].astype(str) == strategy]
    ok = p[p["accuracy"].notna()].sort_values("accuracy", ascending=False)
    if len(ok):
        i = ok.index[0]
        e = pooled.estimate("accuracy", i)
        others = f" (every judge: {_per_judge(pooled, p, 'accuracy')})" if len(ok) > 1 else ""
        tie = _apart(pooled, ok.index, "accuracy")
        if pointwise and tie:
            sec.finding(_with(strategy, _no_winner(pooled, ok.index, "accuracy",
                                                   "accuracy against gold (correct / parsed replies)", tie)))
            sec.conclusions.append(_with(strategy, f"Accuracy against gold over the whole table: "
                                                   f"{_span(pooled, ok.index, 'accuracy')}; the judges cannot be "
                                                   "told apart at this n."))
            return
        if pointwise:
            sec.finding(_with(strategy, f"Over the whole table, accuracy against gold (correct / parsed replies) is "
                                        f"highest for {pooled.at[i, 'judge']}: {e}{others}."), e)
            sec.conclusions.append(_with(strategy, f"Accuracy against gold over the whole table is at most "
                                                   f"{e.number()} ({pooled.at[i, 'judge']})."))
            return
        sec.finding(_with(strategy, f"LLMBar's Acc. (the mean of the two order accuracies) is not computable on this "
                                    f"table ({why}); over the whole table the pooled accuracy (correct / parsed "
                                    f"replies, the recorded orders pooled) is highest for {pooled.at[i, 'judge']}: "
                                    f"{e}{others}."), e)
        sec.conclusions.append(_with(strategy, f"Acc. is not computable ({why}); the pooled accuracy is at most "
                                               f"{e.number()} ({pooled.at[i, 'judge']})."))
    else:
        why = _reason(results(p, pooled.measures, level=pooled.level), "accuracy")
        sec.text(_with(strategy, f"Accuracy against gold is not computable on this table: {why}."))
        sec.conclusions.append(_with(strategy, f"Accuracy against gold could not be computed ({why})."))


# ------------------------------------------------------------------------------------ Cohen's kappa vs gold
KAPPA_COLUMNS = {"subset": "Subset", "judge": "Judge", "strategy": "Strategy", "n": "Replies", "items": "Items",
                 "no_gold": "No gold", "unparsed": "Unparsed", "kappa": "Cohen's kappa"}


def kappa_section(df: pd.DataFrame, by: Sequence[str] = BY, *, min_items: int = MIN_ITEMS, confidence: float = 0.95,
                  n_resamples: int = 1000, seed: int = 0) -> Section:
    """Cohen's kappa of the verdicts against gold on the parsed replies with gold, both orders pooled (the item is
    the resampling unit: an item's two orders are not independent): each judge over the whole table first, per
    strategy, then by subset (rows below ``min_items`` items shown, never headlined).

    Returns
    -------
    Section
        Per strategy a finding on every judge's whole-table kappa, the highest first (one sentence when not
        computable, from the estimator's note); the table; the breakdown by subset; a conclusion on the range.

    Source: Cohen (1960); ``sklearn.metrics.cohen_kappa_score`` (:func:`evallab.metrics._agreement.cohen_kappa_vs_gold`).
    """
    ci = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    whole_by, sub_by = _levels(df, by)
    kappa = agreement.cohen_kappa_vs_gold(df, whole_by, **ci)
    sec = Section()
    for strategy, rows in _strategies(kappa):
        ok = _ranked(sec, kappa, rows, "kappa", strategy, "Cohen's kappa against gold")
        if ok is None:
            continue
        i = ok[0]
        e = kappa.estimate("kappa", i)
        others = f" (every judge: {_per_judge(kappa, rows, 'kappa')})" if len(ok) > 1 else ""
        why = f"; {e.note}" if e.note and not e.has_interval else ""  # e.g. kappa 0 by construction, one category
        tie = _apart(kappa, ok, "kappa")
        if tie:
            sec.finding(_with(strategy, _no_winner(kappa, ok, "kappa", "Cohen's kappa against gold", tie)))
            sec.conclusions.append(_with(strategy, f"Cohen's kappa against gold over the whole table: "
                                                   f"{_span(kappa, ok, 'kappa')}; the judges cannot be told apart "
                                                   "at this n."))
        elif len(ok) > 1:
            sec.finding(_with(strategy, f"Over the whole table, {kappa.at[i, 'judge']} agrees best with gold: "
                                        f"Cohen's kappa {e}{why}{others}."), e)
            sec.conclusions.append(_with(strategy, f"Cohen's kappa against gold over the whole table ranges "
                                                   f"{_span(kappa, ok, 'kappa')}."))
        else:
            sec.finding(_with(strategy, f"Over the whole table, {kappa.at[i, 'judge']}'s Cohen's kappa against gold "
                                        f"is {e}{why}."), e)
            sec.conclusions.append(_with(strategy, f"Cohen's kappa against gold over the whole table is "
                                                   f"{e.number()} ({kappa.at[i, 'judge']})."))
    if kappa["kappa"].notna().any():
        sec.table(common_methods(kappa), _shown(kappa, KAPPA_COLUMNS), csv_name="kappa",
                  caption="Cohen's kappa against gold per judge" + (" over the whole table" if sub_by else "")
                          + ("" if design.describe(df)["kind"] == "pointwise" else " (both orders pooled)"))
        if sub_by:
            cell = agreement.cohen_kappa_vs_gold(df, sub_by, **ci)
            _breakdown(sec, cell, "kappa", "items", min_items, "Cohen's kappa against gold", _shown(cell, KAPPA_COLUMNS))
    return sec


# ---------------------------------------------------------------------------------------- judge × judge
def judge_agreement_section(df: pd.DataFrame, *, min_items: int = MIN_ITEMS, confidence: float = 0.95,
                            n_resamples: int = 1000, seed: int = 0) -> Section:
    """Agreement of every two judges on the same item, strategy, order and sample (replies both parsed) over the
    whole table: raw agreement and Cohen's kappa (:func:`evallab.metrics._agreement.judge_agreement`), per strategy,
    with the heatmap of kappa. A judge pair resting on fewer than ``min_items`` items is shown, never headlined.

    Returns
    -------
    Section
        Per strategy a finding on the most and least concordant judge pairs; the table of judge pairs; one heatmap
        per strategy (at most :data:`MAX_FIGURES`); metric ``judge_agreement`` (records: strategy, judge_a, judge_b,
        n, agreement, kappa, kappa_low, kappa_high). A table with one judge gets one sentence and no table.
    """
    n_judges = int(df["judge"].nunique())
    sec = Section(metrics={"judge_agreement": []})
    if n_judges < 2:
        sec.text(f"Agreement between judges needs two or more judges on the same items; the table has "
                 f"{_sample(n_judges, 'judge')}.")
        sec.caveats.append("Only one judge: agreement between judges is not computable.")
        return sec
    by = ["strategy"] if "strategy" in df.columns else []
    unit = "item, sample" if design.describe(df)["kind"] == "pointwise" else "item, order, sample"
    mat = agreement.judge_agreement(df, by=by, confidence=confidence, n_resamples=n_resamples, seed=seed)
    pairs = mat[mat["judge_a"] < mat["judge_b"]]
    sec.metrics["judge_agreement"] = _records(pairs, [*by, "judge_a", "judge_b", "n", "agreement", "kappa",
                                                      "kappa_low", "kappa_high"])
    for strategy, rows in _strategies(pairs):
        if _ranked(sec, mat, rows, "kappa", strategy, "Cohen's kappa between judges") is None:
            continue
        ok = _headlined(rows, "kappa", "items", min_items).index
        if not len(ok):
            sec.text(_with(strategy, f"No judge pair shares {min_items:,} items or more (min_items): the judge × "
                                     "judge kappas below are shown, none is headlined."))
            continue
        b, w = ok[0], ok[-1]
        e = mat.estimate("kappa", b)
        tail = (f"; the least is {mat.at[w, 'judge_a']} and {mat.at[w, 'judge_b']} at "
                f"{mat.estimate('kappa', w).number()} (of {_sample(len(ok), 'judge pair')})") if w != b else ""
        why = f"; {e.note}" if e.note and not e.has_interval else ""  # e.g. one judge gave one verdict throughout
        sec.finding(_with(strategy, f"The most concordant pair of judges is {mat.at[b, 'judge_a']} and "
                                    f"{mat.at[b, 'judge_b']}: Cohen's kappa {e}{why}{tail}."), e)
    for sentence in _unpaired(df, unit):
        sec.text(sentence)
    sec.table(common_methods(pairs), _shown(pairs, {"strategy": "Strategy", "judge_a": "Judge A", "judge_b": "Judge B",
                                                    "n": "Units both parsed", "items": "Items",
                                                    "agreement": "Raw agreement", "kappa": "Cohen's kappa"}),
              caption=f"Agreement between each pair of judges over the whole table (same {unit})",
              csv_name="pairs")
    for n_fig, (strategy, rows) in enumerate(_strategies(mat)):
        if n_fig == MAX_FIGURES:
            sec.text(f"Heatmaps for the first {MAX_FIGURES} strategies; the table holds every strategy.")
            break
        sec.figure(plots.heatmap(plots.square(rows, "kappa"), xlabel="judge", ylabel="judge",
                                 title=f"Cohen's kappa between judges (same {unit}"
                                       + (f"; strategy {strategy})" if strategy else ")"),
                                 cbar_label="Cohen's kappa (unitless, −1 to 1)"))
    return sec


def _unpaired(df: pd.DataFrame, unit: str) -> list[str]:
    """Per judge pair with unpaired replies, one sentence: how many parsed replies of either judge have no parsed
    reply of the other on the same unit (dataset, item, strategy, order, sample) — left out of that pair's
    agreement — and why: the other judge has no reply there (e.g. a sample it was not asked for), or its reply there
    is unparsed."""
    from itertools import combinations

    key = [c for c in ("dataset", "item_id", "strategy", "order", "sample") if c in df.columns]
    # a unit is its key read as text, numbered (integer codes instead of a tuple of strings per reply)
    text = {c: df[c].astype(str) for c in key}
    parts = [V.codes(t) for t in text.values()]
    code, n_units = V.combine_codes([c for c, _ in parts], [len(u) for _, u in parts])
    parsed = df["verdict"].notna().to_numpy(bool)
    by_judge = df.groupby("judge", sort=True).indices
    units = {j: (set(code[i].tolist()), set(code[i[parsed[i]]].tolist())) for j, i in by_judge.items()}
    if "sample" in df.columns:
        sample = text["sample"].to_numpy(dtype=object)
        samples = {j: set(sample[i]) for j, i in by_judge.items()}
        unit_sample = np.empty(n_units, dtype=object)
        unit_sample[code] = sample
    else:
        samples = {}
    out = []
    for a, b in combinations(sorted(units), 2):
        parts, total = [], 0
        for x, y in ((a, b), (b, a)):
            alone = units[x][1] - units[y][1]
            missing = alone - units[y][0]
            if missing:
                asked = {unit_sample[u] for u in missing} if samples else set()
                extra = sorted(asked - samples.get(y, set()))
                why = (f"sample{'s' if len(extra) > 1 else ''} {', '.join(extra)}, which {y} was never asked for"
                       if extra and len(extra) == len(asked) else f"{y} has no reply there")
                parts.append(f"{len(missing):,} of {x}'s with no reply of {y} on the same ({unit}) ({why})")
            if alone - missing:
                parts.append(f"{len(alone - missing):,} of {x}'s whose counterpart by {y} is unparsed")
            total += len(alone)
        if total:
            out.append(f"{total:,} parsed {'reply is' if total == 1 else 'replies are'} left unpaired, so out of "
                       f"the {a}–{b} agreement: {'; '.join(parts)}.")
    return out


# ---------------------------------------------------------------------------------------- all judges
def panel_section(df: pd.DataFrame, *, min_items: int = MIN_ITEMS, confidence: float = 0.95, n_resamples: int = 1000,
                  seed: int = 0) -> Section:
    """Agreement across all judges: Fleiss' kappa on the units every judge parsed and Krippendorff's alpha (nominal)
    on every unit with two or more parsed replies, for the whole table first and then per subset (when there are
    several), per strategy. Intervals resample items; a row resting on fewer than ``min_items`` items gets no
    interval (its note says so) and is never headlined; Fleiss' kappa from a single unit is not computable.

    Returns
    -------
    Section
        Per strategy a finding on the whole table's alpha and kappa (one sentence when not computable, from the
        note); the two tables; metrics ``fleiss_kappa_whole_table``, ``krippendorff_alpha_whole_table``,
        ``fleiss_kappa_units_whole_table`` and ``whole_table_strategy`` (the first strategy's whole-table row;
        the tables hold every strategy).

    Source: Fleiss (1971), ``statsmodels.stats.inter_rater.fleiss_kappa``; Krippendorff (2011), ``krippendorff.alpha``.
    """
    ci = dict(confidence=confidence, n_resamples=n_resamples, seed=seed, min_items=min_items)
    strat = ["strategy"] if "strategy" in df.columns else []
    scopes = [("whole table", strat)]
    if _levels(df, BY)[1]:
        scopes.append(("per subset", [*strat, "subset"]))
    tables = {}
    for name, fn in (("kappa", agreement.fleiss_kappa), ("alpha", agreement.krippendorff_alpha)):
        parts = [fn(df, by=keys, **ci).assign(scope=scope) for scope, keys in scopes]
        if len(parts) > 1:
            parts[0] = parts[0].assign(subset="all subsets")
        tables[name] = results(pd.concat(parts, ignore_index=True), parts[0].measures, level=confidence,
                               keys=[*strat, "scope", "subset"])
    fk, ka = tables["kappa"], tables["alpha"]
    sec = Section(metrics={"fleiss_kappa_whole_table": None, "krippendorff_alpha_whole_table": None,
                           "fleiss_kappa_units_whole_table": None, "whole_table_strategy": None})
    whole_k, whole_a = fk[fk["scope"] == "whole table"], ka[ka["scope"] == "whole table"]
    first = True
    for strategy, rows in _strategies(whole_a):
        i = rows.index[0]
        j = whole_k.index[whole_k["strategy"].astype(str) == strategy][0] if strategy is not None else whole_k.index[0]
        a, k = ka.estimate("alpha", i), fk.estimate("kappa", j)
        if first:
            sec.metrics.update(fleiss_kappa_whole_table=k.value, krippendorff_alpha_whole_table=a.value,
                               fleiss_kappa_units_whole_table=int(fk.at[j, "units"]),
                               whole_table_strategy=strategy if strategy is not None else
                               (str(df["strategy"].iloc[0]) if strat and len(df) else None))
            first = False
        if a.value is None:
            sec.text(_with(strategy, f"Agreement across all judges is {a}."))
            continue
        k_text = f"Fleiss' kappa {k}" if k.value is not None else f"Fleiss' kappa is {k}"
        a_text = f"{a}" + (f" ({a.note})" if a.note and not a.has_interval else "")
        if k.value is not None and k.note and not k.has_interval:
            k_text += f" ({k.note})"
        sec.finding(_with(strategy, f"Across the {int(ka.at[i, 'raters'])} judges, over the whole table, "
                                    f"Krippendorff's alpha is {a_text}; {k_text}."), a)
        sec.conclusions.append(_with(strategy, f"Judges agree with each other at Krippendorff's alpha {a.number()} "
                                               "over the whole table."))
    cols = {"scope": "Scope", "subset": "Subset", "strategy": "Strategy"}
    for res, column, label, units in ((fk, "kappa", "Fleiss' kappa", "Units every judge parsed"),
                                      (ka, "alpha", "Krippendorff's alpha", "Units with two parsed replies")):
        if res[column].notna().any():
            thin = int((res[column].notna() & design.too_thin(res["items"].to_numpy(), min_items)).sum())
            sec.table(common_methods(res), {**_shown(res, cols), column: label, "units": units, "items": "Items",
                                            "raters": "Judges"},
                      caption=f"{label} across all judges" + (f" ({thin} row(s) with fewer than {min_items:,} items: "
                                                              "no interval, never headlined)" if thin else ""))
    return sec


# ------------------------------------------------------------------------------------ majority over samples
#: the majority section's heading and what it shows (shown with the section only: a table sampled once has none)
MAJORITY_HEADING = ("## Majority vote over samples\n"
    "The accuracy of the majority verdict over a request's samples beside the per-reply accuracy, and the "
    "requests split evenly (a tie between samples) or one sample away from another majority (listed), with each "
    "request's flip probability (the share of its samples against its majority). A tie has no majority and is scored "
    "as the share of its tied verdicts that are gold (half correct when one of two is gold: the expected accuracy of "
    "breaking the tie at random).")
MAJORITY_COLUMNS = {"subset": "Subset", "judge": "Judge", "strategy": "Strategy", "requests": "Requests",
                    "items": "Items", "reply_accuracy": "Accuracy per reply",
                    "majority_accuracy": "Accuracy of the majority", "majority_gain": "Majority − per reply",
                    "tied": "Split evenly (tie)",
                    "straddling": "Tied or one sample from another majority", "flip_probability": "Flip probability"}


def majority_section(df: pd.DataFrame, by: Sequence[str] = BY, *, min_items: int = MIN_ITEMS,
                     confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """The majority verdict over a request's samples (:func:`evallab.metrics._agreement.majority_vote`): its
    accuracy beside the per-reply accuracy, per judge over the whole table first (per strategy), then by subset;
    the requests one sample away from another majority, listed; each request's flip probability. Nothing when every
    request was sampled once (the overview says so).

    Returns
    -------
    Section
        Per judge × strategy a finding on the majority's accuracy against the per-reply accuracy (or, without
        gold, on the straddling requests); the table; the breakdown by subset; the list of straddling requests;
        metrics ``majority_vote`` (records per judge × strategy), ``straddling_requests`` (count). The section
        opens with its heading (:data:`MAJORITY_HEADING`); a table sampled once gets an empty section, no heading.

    Source: Wang et al. (2023), self-consistency (the majority over samples); deepeval#3110, trulens#2741 (a
    stochastic judge straddling the verdict across re-runs).
    """
    sec = Section()
    if design.describe(df)["samples"] <= 1:
        return sec  # no heading either: the overview says each request was sampled once
    sec.text(MAJORITY_HEADING)
    ci = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    two = design.describe(df)["samples"] == 2  # a request's majority of two samples scores as its two replies
    whole_by, sub_by = _levels(df, by)
    mv = agreement.majority_vote(df, whole_by, **ci)
    req = agreement.majority_vote(df, whole_by, per="request")
    straddle = req[req["straddles"]]
    sec.metrics.update(majority_vote=_records(mv, [*whole_by, "requests", "items", "reply_accuracy",
                                                   "majority_accuracy", "majority_gain", "straddling", "tied",
                                                   "flip_probability", "note"]),
                       straddling_requests=len(straddle))
    for strategy, rows in _strategies(mv):
        for i in rows.index:
            who = str(mv.at[i, "judge"])
            m, r, s_ = (mv.estimate(c, i) for c in ("majority_accuracy", "reply_accuracy", "straddle_rate"))
            if mv.at[i, "requests"] == 0:
                sec.text(_with(strategy, f"{who}: the majority vote is {m}."))
                continue
            n_req, tied = int(mv.at[i, "requests"]), int(mv.at[i, "tied"])
            near = int(mv.at[i, "straddling"]) - tied  # a tie straddles too: counted once, as a tie
            split = [f"{tied:,} ({tied / n_req:.1%}) split evenly (a tie between samples)"] if tied else []
            if near or not tied:
                split.append(f"{near:,} ({near / n_req:.1%}) one sample away from another majority")
            straddles = (f"of {_sample(n_req, 'request')}, {' and '.join(split)}; a sample disagrees with its "
                         f"request's majority with probability {mv.estimate('flip_probability', i)}")
            if m.value is None:
                sec.finding(_with(strategy, f"Over the whole table, {who}: {straddles}."))
                continue
            g = mv.estimate("majority_gain", i)
            gain = f"{g.number()} {g.interval()}" if g.has_interval else g.number()
            if not g.has_interval:
                gain += (", no interval: the two are equal on every request — of two samples a tie scores ½, the "
                         "mean of its two replies — so the difference is 0 in every resample"
                         if g.value == 0 and two and n_resamples > 0 else
                         f", no interval{': ' + g.note if g.note else ''}")
            sec.finding(_with(strategy, f"Over the whole table, the majority verdict of {who}'s samples is right on "
                                        f"{m} against {r.number()} {r.interval()} per reply (majority − per reply "
                                        f"{gain}); {straddles}."), m)
    sec.table(common_methods(mv), _shown(mv, MAJORITY_COLUMNS), csv_name="majority",
              caption="Majority verdict over samples per judge" + (" over the whole table" if sub_by else ""))
    if sub_by:
        cell = agreement.majority_vote(df, sub_by, **ci)
        column = "majority_accuracy" if cell["majority_accuracy"].notna().any() else "straddle_rate"
        _breakdown(sec, cell, column, "items", min_items, "the majority's accuracy" if column == "majority_accuracy"
                   else "the share of requests one sample away from another majority", _shown(cell, MAJORITY_COLUMNS))
    if len(straddle):
        shown = straddle.sort_values(["flip_probability", "item_id"], ascending=[False, True])
        sec.table(shown, _shown(shown, {"judge": "Judge", "strategy": "Strategy", "item_id": "Item", "order": "Order",
                                        "samples": "Parsed samples", "majority": "Majority (empty: tied)",
                                        "margin": "Margin (samples)", "flip_probability": "Flip probability",
                                        "gold": "Gold"}),
                  caption="Requests split evenly (a tie between samples: no majority) or one sample away from "
                          "another majority (the majority flips if one sample changes)",
                  csv_name="straddling")
    return sec


# ------------------------------------------------------------------------------------ per-model leaderboard
#: the leaderboard section's heading and what it shows (shown with the section only)
LEADERBOARD_HEADING = ("## Per-model leaderboard from each judge\n"
    "The leaderboard this table gives, per judge: on a pairwise table each model's win rate against the baseline "
    "(output 1), scored as Arena-Hard scores it — a win 1, a tie ½, a loss 0, a strong preference (`>>`) counted "
    "three times, an unparsed reply left out (with its other order where its request — item, sample — was asked in both "
    "orders, as Arena-Hard drops a question one of whose two games has no score; the item's other samples are "
    "kept); on a pointwise table each model's pass rate (pass "
    "/ parsed replies, as inspect and promptfoo report it). Intervals resample items (Arena-Hard's own resamples "
    "single judgments and shows the 5–95% range).")


def leaderboard_section(df: pd.DataFrame, by: Sequence[str] = ("judge", "strategy"), *, model_column: str = "",
                        user_table: str = "", min_items: int = MIN_ITEMS, confidence: float = 0.95,
                        n_resamples: int = 1000, seed: int = 0) -> Section:
    """Per-model results from each judge (:func:`evallab.metrics._evaluators.model_leaderboard`): the win rate
    against the baseline with Arena-Hard's ``>>`` weighting on a pairwise table, the pass rate on a pointwise one,
    per judge × strategy, with item-cluster intervals; a model resting on fewer than ``min_items`` items is shown,
    never headlined.

    Parameters
    ----------
    df : DataFrame
        The report's tidy verdict table.
    by : sequence of str, default ("judge", "strategy")
        The grouping above the model (columns the table lacks are skipped).
    model_column : str, default ""
        The column naming the evaluated model; ``""``: the first of
        :data:`evallab.metrics._evaluators.MODEL_COLUMNS` the table has.
    user_table : str, default ""
        The report's ``verdicts_path``: on the user's table, a table naming no model gets one sentence saying so;
        on the bundled data (LLMBar names no model) the section is empty.
    min_items, confidence, n_resamples, seed : int, float, int, int
        The minimum-size rule, interval level, bootstrap resamples over items, seed.

    Returns
    -------
    Section
        The heading (:data:`LEADERBOARD_HEADING`); per judge × strategy a finding on the leading model (and how
        many others its interval overlaps); the table; metrics ``leaderboard`` (records) and
        ``leaderboard_model_column``. Empty (no heading) when the table names no model and is not the user's.

    Raises
    ------
    DataError
        ``model_column`` set but not a column of the table.

    Source: Li, Chiang et al. (2024), Arena-Hard (lmarena/arena-hard-auto ``show_result.py``); inspect's
    ``accuracy()`` and promptfoo's pass rate.
    """
    from evallab.metrics import _evaluators as evaluators

    col = evaluators.model_column(df, model_column or None)
    if col is None:
        if not user_table:
            return Section()
        return Section().text(LEADERBOARD_HEADING.split("\n", 1)[0]).text(
            "No column of this table names the evaluated model (one of " + ", ".join(evaluators.MODEL_COLUMNS)
            + "; or set `model_column`), so no per-model leaderboard is built.")
    keys = [c for c in by if c in df.columns and c != col]
    lb = evaluators.model_leaderboard(df, keys, model=col, confidence=confidence, n_resamples=n_resamples, seed=seed)
    column = "win_rate" if "win_rate" in lb.columns else "pass_rate"
    what = "win rate against the baseline" if column == "win_rate" else "pass rate"
    sec = Section(metrics={"leaderboard": _records(lb, [*keys, col, "items", "replies", column, f"{column}_low",
                                                        f"{column}_high", "note"]),
                           "leaderboard_model_column": col}).text(LEADERBOARD_HEADING)
    if column == "win_rate" and not lb["strong"].sum():
        sec.text("No verdict of this table is a strong preference (`>>`), so every reply weighs 1: the win rate "
                 "with ties as half a win.")
    if column == "win_rate" and lb["replies_left_out"].sum():
        left, un = int(lb["replies_left_out"].sum()), int(df.loc[df[col].notna(), "verdict"].isna().sum())
        lost = int(lb["items_dropped"].sum())
        sec.text(f"{left:,} {'reply is' if left == 1 else 'replies are'} left out of the win rates: {un:,} unparsed"
                 + (f" and {left - un:,} the other order of an unparsed reply's request" if left > un else "")
                 + (f"; {_sample(lost, 'item')} lost every reply" if lost else
                    "; every item keeps its other replies") + " (column Replies left out).")
    judges = [c for c in keys if c != "strategy"]
    for strategy, rows in _strategies(lb):
        for _, g in (rows.groupby(judges, sort=True) if judges else [(None, rows)]):
            ok = _headlined(g, column, "items", min_items)
            who = " and ".join(str(g[c].iloc[0]) for c in judges) or "the judge"
            ranked = g[g[column].notna()].sort_values(column, ascending=False)
            order = ", ".join(f"{lb.at[j, col]} {lb.estimate(column, j).number()} ({_sample(int(lb.at[j, 'items']), 'item')})"
                              for j in ranked.index)
            if not len(ok):
                sec.text(_with(strategy, f"No model judged by {who} has a {what} on {min_items:,} items or more "
                                         "(min_items): the rows below are shown, none is headlined"
                                         + (f"; by {what}, highest first: {order}." if order else ".")))
                continue
            i = ok.index[0]
            e = lb.estimate(column, i)
            above = [j for j in ranked.index if j not in ok.index and ranked.at[j, column] > ranked.at[i, column]]
            if above:  # ranked higher but too thin to headline: named, never headlined
                sec.text(_with(strategy, f"By {who}'s verdicts, {_sample(len(above), 'model')} with fewer than "
                                         f"{min_items:,} items (min_items) {'ranks' if len(above) == 1 else 'rank'} "
                                         f"above {lb.at[i, col]}, shown but not headlined: "
                                         + ", ".join(f"{lb.at[j, col]} {lb.estimate(column, j).number()} "
                                                     f"({_sample(int(lb.at[j, 'items']), 'item')})" for j in above)
                                         + f"; by {what}, highest first: {order}."))
            base = str(lb.at[i, "baseline"]) if "baseline" in lb.columns and lb.at[i, "baseline"] else ""
            target = f"win rate against {base} (the baseline)" if base and column == "win_rate" else what
            lead = f"among models with {min_items:,} items or more, " if above else ""
            if len(ok) == 1:
                sec.finding(_with(strategy, f"By {who}'s verdicts, {lead}{lb.at[i, col]}'s {target} is {e}."), e)
                continue
            overlap = [j for j in ok.index[1:] if e.low is not None and lb.at[j, f"{column}_high"] >= e.low]
            tail = (f"; its interval overlaps those of {_sample(len(overlap), 'other model')}, so that order is not "
                    "settled" if overlap else "; its interval lies above every other model's")
            sec.finding(_with(strategy, f"By {who}'s verdicts, {lead}{lb.at[i, col]} leads "
                                        f"{_sample(len(ok), 'model')}: "
                                        f"{target} {e}{tail}."), e)
    silent = {c for c in ("baseline", "items_dropped", "replies_left_out", "strong", "unparsed") if c in lb.columns
              and not lb[c].astype(bool).any()}  # a column empty or zero in every row says nothing
    sec.table(common_methods(lb), {c: label for c, label in _shown(lb, {
                                              "strategy": "Strategy", "judge": "Judge", col: "Model",
                                              "baseline": "Baseline", "items": "Items",
                                              "items_dropped": "Items left out (no reply scored)",
                                              "replies_left_out": "Replies left out",
                                              "replies": "Replies", "wins": "Wins", "losses": "Losses",
                                              "ties": "Ties", "strong": "Strong (>>)", "unparsed": "Unparsed",
                                              "passes": "Passes", column: what[:1].upper() + what[1:]}).items()
                                   if c not in silent},
              caption=f"Per-model {what} from each judge", csv_name="leaderboard")
    return sec


__all__ = ["accuracy_section", "judge_agreement_section", "kappa_section", "leaderboard_section", "majority_section",
           "panel_section", "published_section", "unparsed_section"]
