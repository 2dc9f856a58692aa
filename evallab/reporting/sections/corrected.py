"""Report 07, corrected rates: what the gold labels would say, how many more the next round needs, and when the
judge can be trusted alone — one function per section of ``notebooks/07_corrected_rates.ipynb``.

Each function takes tidy verdict tables (or an estimator's :class:`~evallab.Results`) and the report's
parameters and returns a :class:`~evallab.Section`: its findings in words with the estimates behind them, its
tables, figures, metrics (the keys ``metrics.json`` has always held), conclusions and caveats. A section the
table cannot support says so in one sentence and shows no empty table.

The sources of the figures: PPI++ (Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453, eq. 2, Example 6.1) and
Rogan & Gladen (1978) with Greenland's (1988) variance (:mod:`evallab.metrics._corrected`); the planner
(:mod:`evallab.metrics._power`: Wald 1943, Fleiss, Levin & Paik 2003 §2.5, Connor 1987, Condorcet); selective
judging (Jung, Brahman & Choi 2024, "Trust or Escalate", §2.2, Algorithm 1; :mod:`evallab.metrics._selective`);
content-free probes and contextual calibration (Zhao et al. 2021, "Calibrate Before Use", §5;
:mod:`evallab.metrics._contextual`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from evallab._results import Estimate, Measure, Results, format_number, with_measures
from evallab.metrics import _contextual as contextual
from evallab.metrics import _corrected as corrected
from evallab.metrics import _drift as drift
from evallab.metrics import _power as power
from evallab.metrics import _selective as selective
from evallab.metrics._design import note_reasons
from evallab.reporting._context import Section, bundled_section
from evallab.reporting._params import ParameterError
from evallab.reporting.sections.position import _who, _why

#: the p-value adjustments in words
_ADJUSTMENT = {"holm": "Holm", "bh": "Benjamini–Hochberg", "none": "no"}

RANDOM_SAMPLE_CAVEAT = ("The corrections assume the gold {unit} are a random sample of the {unit}; a hand-picked "
                        "labelling round breaks them.")
ROGAN_GLADEN_CAVEAT = ("Rogan–Gladen assumes the judge's sensitivity and specificity are the same on the gold and the "
                       "other items; PPI++ assumes only the random sample.")
SIMULATED_DIFFERENCE_CAVEAT = ("Differences of two systems are shown on simulated data: LLMBar has no two systems "
                               "answering the same prompts.")
SELECTIVE_CAVEAT = ("The selective guarantee is over calibration draws from the same distribution; a held-out split "
                    "adds its own noise, so a split may miss 1 − α even when the guarantee holds.")


#: the heading and method text of a bundled section (shown only where the section is)
TWO_SYSTEMS_HEADING = "## Two systems, one judge: the paired corrected difference\nLLMBar has no two systems answering the same prompts, so this section runs on a simulated table with a known truth:\nsystems A and B answer the same 2,000 prompts, a judge with sensitivity 0.9 and specificity 0.7 grades both, gold on\n300 prompts. PPI++ on the per-prompt differences corrects the difference of pass rates; the judge-only difference is\nshrunk by the judge's errors."

#: the heading and method text of a bundled section (shown only where the section is)
ANCHOR_HEADING = '## Anchor calibration on the simulated judge (known injected leniency)\nThe simulated judge grades `sim_scenarios` keryx scenarios\' calibration answers under balanced and PASS-only anchors,\n`sim_samples` times each, and the content-free answers "N/A", "" and "[MASK]" under the same prompts. Its leniency is\ninjected: P(pass) × (1 + `sim_pass_only_inflation`) under PASS-only anchors, so the probe\'s true P(PASS) is known.\nContextual calibration (W = diag(p_cf)⁻¹) then passes an answer only when its P(PASS) exceeds the probe\'s.'

#: the heading and method text of a bundled section (shown only where the section is)
LIVE_HEADING = '## Live SmolLM2 recordings\nThe run recorded under `live_dir` by `make live` (the graded answers and content-free probe replies of its inflation\nand probe studies): the content-free probe and contextual calibration per anchor set where probe replies are\nrecorded, and the corrected pass rate where gold is recorded on part of the answers.'


def _units(df: pd.DataFrame) -> str:
    """What an item of ``df`` is called: "pairs" for a pairwise table, else "items"."""
    return "pairs" if corrected.rate_name(df) != "pass rate" else "items"


def _position(t: pd.DataFrame, **match) -> int | None:
    """The position of the first row of ``t`` whose columns equal ``match`` (compared as text), or None."""
    ok = np.ones(len(t), bool)
    for c, v in match.items():
        ok &= t[c].astype(str).to_numpy() == str(v)
    hit = np.flatnonzero(ok)
    return int(hit[0]) if len(hit) else None


def _records(t: pd.DataFrame | None) -> list[dict] | None:
    return None if t is None else pd.DataFrame(t).to_dict("records")


def _count(n: int, noun: str) -> str:
    """"1 judge", "6 judges"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _p_text(e: Estimate) -> str:
    """"p = 0.017", or "p < 0.001"."""
    return "p < 0.001" if e.value is not None and e.value < 0.001 else f"p = {e.number()}"


def _pick(t: pd.DataFrame, judge: str, what: str) -> int:
    """The row of ``judge`` in ``t``; raises :class:`ParameterError` naming the judges it has."""
    i = _position(t, judge=judge)
    if i is None:
        raise ParameterError(f"{what}: judge {judge!r} is not in the table; expected one of "
                             f"{sorted(map(str, t['judge'].unique()))}")
    return i


def _why_each(t: pd.DataFrame, rows: Sequence[int]) -> str:
    """Why ``rows`` of ``t`` have no figure: the reasons of its notes as one phrase when ``t`` has one row, else each
    row named with its own ("mine · cot: 25 gold items …; mine · plain: …")."""
    if len(t) == 1:
        return _why(t)
    notes = t["note"] if "note" in t.columns else pd.Series("", index=t.index)
    return "; ".join(f"{_who(t, i)}: {', '.join(note_reasons(str(notes.iloc[i]))) or 'no figure'}" for i in rows)


def _with_judge(t: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """``columns`` led by ``judge`` when the table holds several judges (one judge: named in the caption)."""
    several = "judge" in t.columns and t["judge"].nunique() > 1
    return (["judge"] if several else []) + list(columns)


def _ppi_words(rates: Results, i: int, unit: str, who: str) -> tuple[str, bool]:
    """How row ``i``'s PPI++ figure is stated: "PPI++ from 150 gold pairs gives 48.7% […]", or — when the tuned
    λ gives the judge no weight (:func:`evallab.metrics._corrected.judge_adds_nothing`) — that the judge adds
    nothing and the figure is the gold-only estimate; and whether it does."""
    ppi, lam, worth = rates.estimate("ppi", i), rates.estimate("ppi_lam", i), rates.estimate("ppi_n_eff", i)
    gold = int(rates["gold_items"].iloc[i])
    if corrected.judge_adds_nothing(lam.value, worth.value, gold):
        return (f"PPI++ tunes the weight λ of its verdicts to {lam.number()} (the interval is worth "
                f"{worth.number()} gold labels against the {gold:,} gold {unit} alone), so {who} adds nothing: the "
                f"figure is the gold-only estimate, {ppi}", True)
    return f"PPI++ from {gold:,} gold {unit} gives {ppi}", False


def load_table(verdicts_path: str = "", llmbar_path: str = "", *, subsets: Sequence[str] = (),
               strategies: Sequence[str] = (), orders: Sequence[str] = (), n_gold: int | None = None,
               gold_seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The verdicts report 07 corrects, and the table the corrections see.

    The user's table at ``verdicts_path`` is filtered by ``subsets`` only (every strategy and order it holds is
    kept, and kept apart by :func:`evallab.metrics._corrected.rate_keys`), and its items with gold ARE the gold
    sample: both tables are the user's. The bundled LLMBar (at ``llmbar_path``) is restricted to ``subsets``
    (empty: all), ``strategies`` and ``orders`` (empty: all); every pair has gold, so with ``n_gold`` the second
    table keeps gold on ``n_gold`` random pairs only (:func:`evallab.metrics._corrected.hide_gold` with
    ``gold_seed``): a simulated labelling round whose truth is the first table.

    Returns
    -------
    (DataFrame, DataFrame)
        The table, and the table with gold where the corrections may use it.

    Raises
    ------
    DataError, VerdictTableError
        From :func:`evallab.datasets.load_study`, naming the file, row or column.
    """
    from evallab.datasets import load_study

    if verdicts_path:
        table = load_study(verdicts_path, subsets=list(subsets) or None)
        return table, table
    table = load_study("", llmbar_path, subsets=list(subsets) or None, strategies=list(strategies) or None)
    table = table[table["order"].isin(list(orders))] if orders else table
    return table, (table if n_gold is None else corrected.hide_gold(table, n_gold, seed=gold_seed))


# ---------------------------------------------------------------------------------------------------- sections
def judge_only_corrected_and_truth(full: pd.DataFrame, hidden: pd.DataFrame, rates: Results, *,
                                   source: str = "LLMBar", user_table: str = "") -> Section:
    """Judge only, corrected, and the truth: per judge, its own rate, the gold labels alone, PPI++ and
    Rogan–Gladen beside the rate of every item's gold — or, on the user's table, beside nothing (it has no truth).

    Parameters
    ----------
    full : DataFrame
        The tidy verdict table with every item's gold (the truth); on the user's table, the table itself.
    hidden : DataFrame
        The same table with gold kept on a random subset only (:func:`load_table`); the user's table as it is.
    rates : Results
        :func:`evallab.metrics._corrected.corrected_rates` of ``hidden`` (by the judge and every design column
        that varies within a judge: :func:`evallab.metrics._corrected.rate_keys`).
    source : str, default "LLMBar"
        The data's name in the sentences.
    user_table : str, default ""
        The user's table (the notebook's ``verdicts_path``): its items with gold are the gold sample, there is no
        truth to compare with, every row is stated (the per-judge overall figures) and the data is named by the
        file's name.

    Returns
    -------
    Section
        A sentence on the data. On the bundled data: the finding for the judge whose own rate is farthest from
        the truth among those corrected (its judge-only, PPI++ and true rates, the PPI++ interval's worth in gold
        labels — or, when the tuned λ gives the judge no weight, that it adds nothing and the figure is the
        gold-only estimate); how many judges' intervals hold the truth, per method. On the user's table: one
        finding per row. The side-by-side table and its figure. Metrics ``strategy``, ``orders``, ``n_gold``
        (items whose gold is visible), ``pairs``, ``visible_gold_items``, ``rates``, ``truth`` (null on the
        user's table); one conclusion; the random-sample and Rogan–Gladen caveats.

    Notes
    -----
    PPI++: Angelopoulos, Duchi & Zrnic (2023), eq. 2; Rogan & Gladen (1978) with Greenland's (1988) variance;
    effective gold labels ``Var(Y)/se²`` (PPI++ §7).
    """
    unit, rate = _units(full), corrected.rate_name(full)
    visible = hidden.dropna(subset=["gold"])["item_id"].unique()
    strategies = [x for x in dict.fromkeys(full["strategy"].dropna().astype(str)) if x] if "strategy" in full else []
    orders = sorted(x for x in map(str, full["order"].dropna().unique()) if x) if "order" in full else []
    keys = [c for c in rates.keys if c in rates.columns] if getattr(rates, "keys", None) else ["judge"]
    truth = None if user_table else corrected.gold_rate(full, keys)
    long = corrected.side_by_side(rates, keys, truth)
    sec = Section(metrics={"strategy": ", ".join(strategies), "orders": orders, "n_gold": len(visible),
                           "pairs": int(full["item_id"].nunique()),
                           "visible_gold_items": sorted(map(str, visible)), "rates": _records(rates),
                           "truth": _records(truth)},
                  caveats=[RANDOM_SAMPLE_CAVEAT.format(unit=unit), ROGAN_GLADEN_CAVEAT])
    detail = ([", ".join(strategies)] if strategies else []) + ([f"order {', '.join(orders)}"] if orders else [])
    source = Path(user_table).name if user_table else source
    what = (f"{unit} of {source}" if user_table else f"{source} {unit}") + (f" ({', '.join(detail)})" if detail else "")
    gold_words = (f"{len(visible):,} have gold: the gold sample the corrections use" if user_table else
                  f"gold kept on {len(visible):,} random {unit}, hidden on the rest")
    sec.text(f"{len(full):,} replies of {_count(full['judge'].nunique(), 'judge')} to "
             f"{full['item_id'].nunique():,} {what}; {gold_words}.")
    t = rates.reset_index(drop=True)
    done = np.flatnonzero(t["ppi"].notna().to_numpy())
    if not len(done):
        sec.text(f"No judge is corrected: {_why_each(t, range(len(t))) if len(t) else 'the table has no judge'}.")
    elif user_table:
        for i in done:
            own, ppi = t.estimate("judge_only", i), t.estimate("ppi", i)
            words, nothing = _ppi_words(t, i, unit, _who(t, i))
            sec.finding(f"{_who(t, i)}: its own {rate} is {own}; {words}.", ppi)
            sec.conclusions.append(f"From {int(t['gold_items'].iloc[i]):,} gold {unit}, {_who(t, i)}'s {rate} is "
                                   f"{ppi.number()} {ppi.interval()} "
                                   + ("(the gold-only estimate: its verdicts add nothing)." if nothing else
                                      f"against its own {own.number()}."))
        if len(done) < len(t):
            sec.text(f"Not corrected: {_why_each(t, [i for i in range(len(t)) if i not in set(done)])}.")
    else:
        t = t.merge(truth[[*keys, "truth"]], on=keys, how="left")
        i = int(done[int((t["judge_only"].iloc[done] - t["truth"].iloc[done]).abs().to_numpy().argmax())])
        j = _who(t, i)
        own, ppi, worth = rates.estimate("judge_only", i), rates.estimate("ppi", i), rates.estimate("ppi_n_eff", i)
        tr = truth.estimate("truth", _position(truth, **{k: t[k].iloc[i] for k in keys}))
        words, nothing = _ppi_words(rates, i, unit, j)
        tail = "." if nothing else f"; its interval is worth {worth.number()} gold labels."
        sec.finding(f"{j}: its own {rate} is {own}; {words} against a truth of {tr.number()}{tail}", ppi)
        if nothing:
            sec.conclusions.append(f"With {len(visible):,} random gold {unit}, PPI++ gives {j}'s verdicts no weight "
                                   f"(λ = {rates.estimate('ppi_lam', i).number()}): its {rate} of {ppi.number()} "
                                   f"{ppi.interval()} is the gold-only estimate, worth the "
                                   f"{int(t['gold_items'].iloc[i]):,} gold labels alone, and {j}'s own "
                                   f"{own.number()} adds nothing; the truth is {tr.number()}.")
        else:
            sec.conclusions.append(f"With {len(visible):,} random gold {unit}, PPI++ moves {j}'s {rate} from its own "
                                   f"{own.number()} to {ppi.number()} {ppi.interval()}; the truth is {tr.number()}.")
    covered = long.dropna(subset=["covers"]) if "covers" in long else long.iloc[:0]
    if len(covered):
        held = [f"{int(c['covers'].sum())} of {_count(len(c), 'judge')} ({m})"
                for m, c in covered.groupby("method", sort=False)]
        sec.finding("The interval holds the truth for " + "; ".join(held) + ".")
    name = " ".join([source, *strategies[:1]]) if len(strategies) == 1 else source
    sec.table(long, [*keys, "method", "estimate", *([] if user_table else ["truth"]), "n_eff"],
              csv_name="side_by_side",
              caption=f"{name}: judge only and corrected from {len(visible):,} gold {unit}" if user_table else
              f"{name}: judge only, corrected from {len(visible):,} gold {unit}, and the truth")
    sec.figure(_side_by_side_figure(long, truth, rate, len(visible), unit, rates.level, keys))
    return sec


def _side_by_side_figure(long: Results, truth: Results | None, rate: str, n_gold: int, unit: str, level,
                         keys: Sequence[str] = ("judge",)):
    """Estimates with interval bars per row (judge, and every other key) and method; the truth, when known, as a
    black line over each row."""
    from evallab.reporting import _plots as plots

    keys = list(keys)

    def name(d: pd.DataFrame) -> list[str]:
        return [" · ".join(map(str, r)) for r in d[keys].itertuples(index=False)]

    data = pd.DataFrame(long).assign(row=name(long))
    lvl = f", {level:.0%} CI" if level else ""
    fig = plots.interval_plot(data, x="row", y="estimate", low="estimate_low", high="estimate_high", hue="method",
                              scale=100, title=f"{rate[:1].upper()}{rate[1:]}: judge only vs corrected "
                                               f"({n_gold:,} gold {unit})",
                              ylabel=f"{rate} (%{lvl})", xlabel=" × ".join(keys))
    if truth is not None:
        at = dict(zip(name(truth), truth["truth"], strict=True))
        for i, j in enumerate(dict.fromkeys(data["row"])):
            fig.axes[0].plot([i - 0.4, i + 0.4], [100 * at[j]] * 2, color="black", lw=1)
    return fig


def per_subset(hidden: pd.DataFrame, *, judge: str, depth: int = 1, min_gold: int = corrected.MIN_GOLD,
               null: float | None = 0.5, adjust: str = "holm", confidence: float = 0.95, n_resamples: int = 1000,
               seed: int = 0, user_table: str = "") -> Section:
    """Per subset, with multiplicity control: the correction within each subset (cut to ``depth`` parts), tested
    against ``null`` with the p-values adjusted across subsets; a thin subset refused with the reason.

    Parameters
    ----------
    hidden : DataFrame
        The tidy verdict table with gold on a random subset (and a ``subset`` column).
    judge : str
        The judge whose subsets the section shows (every judge's are in the metrics).
    depth : int, default 1
        Subsets cut to this many '/'-parts (:func:`evallab.metrics._drift.subset_level`).
    min_gold : int, default 30
        Fewest gold items a subset needs before it is corrected.
    null : float or None, default 0.5
        H0 of the per-subset test (None: no test).
    adjust : {"holm", "bh", "none"}, default "holm"
        The adjustment across subsets.
    confidence, n_resamples, seed
        Level of the intervals; the judge-only interval's item bootstrap.
    user_table : str, default ""
        The user's table (the notebook's ``verdicts_path``): a ``judge`` it does not hold means every judge's
        subsets are shown (rows by judge and :func:`evallab.metrics._corrected.rate_keys`).

    Returns
    -------
    Section
        How many subsets are corrected, differ from ``null`` after adjustment, and are refused; the table of
        ``judge``'s subsets (or every row's, see ``user_table``). Metrics ``by_subset`` (every judge). A table
        without two subsets: one sentence saying so, ``by_subset`` null.

    Raises
    ------
    ParameterError
        ``judge`` is not in the table (bundled data).
    """
    unit, rate = _units(hidden), corrected.rate_name(hidden)
    named = hidden["subset"].dropna().astype(str) if "subset" in hidden else pd.Series(dtype=str)
    if named[named != ""].nunique() < 2:
        return Section(metrics={"by_subset": None}).text(
            f"The table has {'one subset' if named[named != ''].nunique() else 'no subset column'}: no per-subset "
            "breakdown (the rates above are the whole table's).")
    keys = corrected.rate_keys(hidden)
    by_subset = corrected.corrected_rates(drift.subset_level(hidden, depth), [*keys, "subset"], min_gold=min_gold,
                                          null=null, adjust=adjust, confidence=confidence, n_resamples=n_resamples,
                                          seed=seed)
    sec = Section(metrics={"by_subset": _records(by_subset)})
    every = bool(user_table) and _position(by_subset, judge=judge) is None
    if every and by_subset["judge"].nunique() == 1:  # the user's one judge
        judge, every = str(by_subset["judge"].iloc[0]), False
    if not every:
        _pick(by_subset, judge, "per_subset")
    one = by_subset if every else by_subset[by_subset["judge"].astype(str) == str(judge)]
    one = one.reset_index(drop=True)
    who, cells = ("every judge", " × ".join([*keys, "subset"]) + " cells") if every else (judge, "subsets")
    thin = int((one["gold_items"] < min_gold).sum())
    other = int((one["ppi"].isna() & (one["gold_items"] >= min_gold)).sum())
    parts = [f"For {who}, {len(one) - thin - other} of {len(one)} {cells} have at least "
             f"{min_gold} gold {unit} and are corrected"]
    if null is not None:
        a = 1 - confidence
        sig = int((one["ppi_p_adjusted"] < a).sum())
        parts.append(f"{sig} differ from a {format_number(null, 'proportion', 0)}% {rate} at the {a:.0%} level after "
                     f"{_ADJUSTMENT.get(adjust, adjust)} adjustment")
    parts.append(f"{thin} {'is' if thin == 1 else 'are'} refused as too thin")
    if other:
        parts.append(f"{other} not corrected because every {unit[:-1]} has gold")
    sec.finding("; ".join(parts) + ".")
    sec.table(one, {**({c: c.replace("_", " ").capitalize() for c in keys} if every else {}),
                    "subset": "Subset", "items": unit.capitalize(), "gold_items": f"Gold {unit}",
                    "judge_only": "Judge only", "ppi": "PPI++", "rg": "Rogan–Gladen",
                    **({"ppi_p_adjusted": by_subset.measures["ppi_p_adjusted"].label} if null is not None else {})},
              caption=f"{'Every judge' if every else judge} per subset ({_ADJUSTMENT.get(adjust, adjust)} "
                      f"adjustment across {cells})")
    return sec


@bundled_section(when="simulated", heading=TWO_SYSTEMS_HEADING)
def paired_difference(table: pd.DataFrame, system: str, a: str, b: str, *, truth: float | None = None,
                      simulated: bool = False, min_gold: int = corrected.MIN_GOLD, confidence: float = 0.95,
                      n_resamples: int = 1000, seed: int = 0) -> Section:
    """Two systems, one judge: the paired corrected difference of their rates (PPI++ on per-item differences).

    Parameters
    ----------
    table : DataFrame
        Tidy verdicts of both systems on the same items, gold on a random subset.
    system, a, b : str
        The column telling the systems apart and its two values (the difference is ``a − b``).
    truth : float, optional
        The true difference (a simulated table), shown beside the estimates.
    simulated : bool, default False
        The table is simulated: says so among the caveats.
    min_gold, confidence, n_resamples, seed
        As in :func:`evallab.metrics._corrected.corrected_difference`.

    Returns
    -------
    Section
        Per judge (the first one in the finding): the judge-only and PPI++ differences, the truth, the p-value of
        no difference; the side-by-side table. Metrics ``difference``, ``difference_truth``.

    Notes
    -----
    PPI++ applies to a mean of per-item differences unchanged (Angelopoulos et al. 2023, §2).
    """
    diff = corrected.corrected_difference(table, system, a, b, min_gold=min_gold, confidence=confidence,
                                          n_resamples=n_resamples, seed=seed)
    sec = Section(metrics={"difference": _records(diff), "difference_truth": truth},
                  caveats=[SIMULATED_DIFFERENCE_CAVEAT] if simulated else [])
    long = corrected.side_by_side(diff, ["judge"], diff[["judge"]].assign(truth=truth) if truth is not None else None)
    own, ppi = diff.estimate("judge_only", 0), diff.estimate("ppi", 0)
    against = f" against a true {Estimate(truth, unit='pp').number()}" if truth is not None else ""
    test = f" (paired, {_p_text(diff.estimate('ppi_p', 0))})" if ppi.value is not None else ""
    sec.finding(f"{a} − {b}: the judge alone says {own}; PPI++ from {int(diff['gold_pairs'].iloc[0]):,} gold items "
                f"gives {ppi}{against}{test}.", ppi)
    sec.table(long, _with_judge(long, ["method", "estimate", *(["truth"] if truth is not None else []), "n_eff"]),
              caption=f"Paired difference {a} − {b}" + (", simulated systems with a known truth" if simulated else ""))
    return sec


def next_round_plan(rates: Results, *, judge: str, items: int, half_width: float, flip_rate: float,
                    tolerance: float, delta: float, discordance: float, repetition_flip_rate: float,
                    confidence: float = 0.95, user_table: str = "") -> Section:
    """The plan for the next labelling round from ``judge``'s corrected rate and its measured sensitivity and
    specificity (Rogan–Gladen's estimates on this round's gold items).

    Parameters
    ----------
    rates : Results
        :func:`evallab.metrics._corrected.corrected_rates` by ``["judge"]``.
    judge : str
        The judge the plan is for.
    items, half_width, flip_rate, tolerance, delta, discordance, repetition_flip_rate, confidence
        As in :func:`evallab.metrics._power.next_round`.
    user_table : str, default ""
        The user's table (the notebook's ``verdicts_path``): a ``judge`` it does not hold means the plan is for
        its row whose PPI++ interval is worth the most gold labels, and a sentence says so.

    Returns
    -------
    Section
        The gold labels needed with and without the judge; the planner's table. Metrics ``plan``, ``plan_judge``;
        one conclusion. Without a corrected rate or sensitivity and specificity for ``judge``: one sentence saying
        why, and ``plan`` null. A ``judge`` with several rows in ``rates`` (the table's other design columns, e.g.
        two prompt strategies): the plan of its row whose PPI++ interval is worth the most gold labels, named (also
        in ``plan_judge``), after a sentence listing its rows.

    Raises
    ------
    ParameterError
        ``judge`` is not in ``rates`` (bundled data).

    Notes
    -----
    Gold only: Wald (1943); with the judge: PPI++'s variance at the optimal λ (Angelopoulos, Duchi & Zrnic 2023);
    items: exact binomial power from Fleiss, Levin & Paik (2003) §2.5 and exact McNemar power from Connor (1987);
    samples: the binomial majority (Condorcet).
    """
    sec = Section(metrics={"plan": None, "plan_judge": judge})
    rates = rates.reset_index(drop=True)
    if user_table and _position(rates, judge=judge) is None:
        usable = rates["ppi"].notna() & rates["rg_sensitivity"].notna() & rates["rg_specificity"].notna()
        if not usable.any():
            return sec.text(f"No plan for the next round: no judge of the table has a corrected rate with its "
                            f"sensitivity and specificity ({_why(rates)}).")
        i = int(np.where(usable, rates["ppi_n_eff"].fillna(0).to_numpy(float), -np.inf).argmax())
        sec.metrics["plan_judge"] = judge = _who(rates, i)
        best = ("the table's only judge" if len(rates) == 1 else
                "the row whose corrected rate is worth the most gold labels")
        sec.text(f"The plan is for {judge}, {best} (plan_judge names a judge the table does not hold).")
    else:
        i = _pick(rates, judge, "next_round_plan")
        rows = np.flatnonzero(rates["judge"].astype(str).to_numpy() == str(judge))
        if len(rows) > 1:  # the judge under several prompts (or anchor sets): one row, named, never the first found
            usable = (rates["ppi"].notna() & rates["rg_sensitivity"].notna() & rates["rg_specificity"].notna()
                      ).to_numpy(bool)[rows]
            worth = np.where(usable, rates["ppi_n_eff"].fillna(0).to_numpy(float)[rows], -np.inf)
            i = int(rows[int(worth.argmax())])
            sec.metrics["plan_judge"] = who = _who(rates, i)
            sec.text(f"{judge} has {len(rows)} rows ({', '.join(_who(rates, r) for r in rows)}); the plan is for "
                     f"{who}, the one whose corrected rate is worth the most gold labels.")
            judge = who
    rate, se, sp = (rates.estimate(c, i) for c in ("ppi", "rg_sensitivity", "rg_specificity"))
    if None in (rate.value, se.value, sp.value):
        why = rates["note"].iloc[i] or "its sensitivity or specificity is not estimated"
        sec.text(f"No plan for the next round from {judge}: {why}.")
        return sec
    plan = power.next_round(rate=rate.value, sensitivity=se.value, specificity=sp.value, items=items,
                            half_width=half_width, flip_rate=flip_rate, tolerance=tolerance, delta=delta,
                            discordance=discordance, repetition_flip_rate=repetition_flip_rate, confidence=confidence)
    sec.metrics["plan"] = _records(plan)
    alone, with_judge = plan.estimate("answer", 0), plan.estimate("answer", 1)
    goal = f"±{half_width:.0%} on {items:,} items"
    if alone.value is None or with_judge.value is None:
        notes = [n.removeprefix("not computable: ") for n in plan["note"].iloc[:2] if n]
        sec.finding(f"For {goal} the plan cannot be met: " + "; ".join(notes) + ".")
    else:
        sec.finding(f"For {goal} the next round needs {alone.number()} gold labels alone, or {with_judge.number()} "
                    f"with {judge}'s verdicts on the rest (sensitivity {se.number()}, specificity {sp.number()} on "
                    "this round's gold).", with_judge)
        sec.conclusions.append(f"The next round needs {with_judge.number()} gold labels with {judge} instead of "
                               f"{alone.number()} for ±{half_width:.0%}.")
    sec.table(plan, {"question": "Question", "answer": "Answer", "achieves": "Achieves", "unit": "Of",
                     "assumes": "Assuming", "source": "Source"}, caption="The planner's answers")
    return sec


@bundled_section(unless="source")
def trust_or_escalate(table: pd.DataFrame, *, over: Sequence[str] = ("strategy",), alpha: float = 0.1,
                      delta: float = 0.1, calibration_share: float = 0.5, splits: int = 100,
                      seed: int = 0, source: str = "") -> Section:
    """Selective judging: when can the judge be trusted alone? Over random calibration / held-out splits: the share
    of splits that certify a confidence threshold, the thresholds they certify, and — among the certifying splits
    — the share of held-out items kept and their agreement with gold, per judge.

    Parameters
    ----------
    table : DataFrame
        Tidy verdicts with gold, pooled over ``over`` (simulated annotators).
    over : sequence of str, default ("strategy",)
        Design columns pooled on purpose (a sentence names them when they vary); the table's other varying
        design columns are kept apart (:func:`evallab.metrics._corrected.rate_keys`).
    alpha, delta, calibration_share, splits, seed
        As in :func:`evallab.metrics._selective.selective_judging`.
    source : str, default ""
        The user's table or LLMBar folder the table was read from; ``""`` (the bundled ``data/llmbar``) marks
        the section bundled (:attr:`evallab.Section.bundled`: left out of a report on the user's table).

    Returns
    -------
    Section
        For the judge with the largest expected coverage: in how many of ``splits`` a threshold is certified,
        the certified thresholds (median, range), the held-out coverage and agreement among the certifying splits
        and the share of them meeting 1 − α, beside the agreement without abstaining — never one split's
        threshold beside a mean over all splits (issue 26, defect 14); or that every item is escalated; the
        table. One sentence instead when every item has a single reply (no confidence to rank by) or too few
        gold items. Metrics ``selective``, ``alpha``, ``delta``; the caveat on the guarantee.

    Notes
    -----
    Jung, Brahman & Choi (2024), §2.2, Algorithm 1 (fixed-sequence testing with the exact binomial bound).
    """
    unit = _units(table)
    over = [c for c in over if c in table.columns]
    by = [c for c in corrected.rate_keys(table) if c not in over]
    sec = Section(metrics={"selective": None, "alpha": alpha, "delta": delta})
    parsed = table[table["verdict"].notna()]
    if parsed.empty or parsed.groupby([*by, "dataset", "item_id"], observed=True).size().max() < 2:
        return sec.text(f"Every {unit[:-1]} has at most one parsed reply per judge, so every confidence is the same: "
                        "selective judging needs several replies per item (samples, both orders or several prompts) "
                        "to rank items by confidence, and is not run.")
    sel = selective.selective_judging(table, by, over=over, alpha=alpha, delta=delta,
                                      calibration_share=calibration_share, splits=splits, seed=seed)
    sec.metrics["selective"] = _records(sel)
    sec.caveats.append(SELECTIVE_CAVEAT)
    pooled = [f"{c} ({', '.join(sorted(map(str, table[c].dropna().unique())))})" for c in over
              if table[c].astype(str).nunique() > 1]
    if pooled:
        sec.text(f"An item's confidence pools its replies over {' and '.join(pooled)}: simulated annotators, on "
                 "purpose.")
    target = format_number(1 - alpha, "proportion", 0) + "%"
    sel = sel.reset_index(drop=True)
    if sel["certified_splits"].isna().all():
        why = "; ".join(f"{_who(sel, i)} — {note_reasons(str(sel.at[i, 'note']))[0]}" if str(sel.at[i, "note"])
                        else _who(sel, i) for i in sel.index)
        return sec.text(f"Selective judging is not run (it calibrates on gold {unit} with a majority verdict): "
                        f"{why}.")
    kept = sel[sel["certified_splits"] > 0]
    if kept.empty:
        sec.finding(f"No judge reaches {target} agreement on any confident subset of {unit} in any of {splits} "
                    f"calibration splits: every {unit[:-1]} is escalated.")
    else:
        i = int(kept["mean_coverage"].idxmax())
        cov, agree, met, overall = (sel.estimate(c, i) for c in ("certified_coverage", "mean_agreement",
                                                                 "held_out_guarantee_rate", "overall_agreement"))
        k, n_kept = int(sel["certified_splits"].iloc[i]), int(sel["kept_splits"].iloc[i])
        lo, mid, hi = (sel.estimate(c, i).number() for c in ("threshold_min", "threshold_median", "threshold_max"))
        thresholds = f"confidence ≥ {mid} in each" if lo == hi else f"confidence ≥ {mid} at the median, {lo}–{hi}"
        sec.finding(f"{_who(sel, i)}: a threshold is certified in {k} of {splits} calibration splits "
                    f"({sel.estimate('certify_rate', i).number()}; {thresholds}); in those splits it is trusted alone "
                    f"on {cov.number()} of the held-out {unit}, agreeing with gold on {agree.number()} of those kept "
                    f"(target ≥ {target}, met in {met.number()} of the {_count(n_kept, 'split')} keeping any), "
                    f"against {overall.number()} without abstaining.", cov)
    sec.table(sel, {**{c: c.replace("_", " ").capitalize() for c in by}, "items": unit.capitalize(),
                    "no_majority": "No majority (escalated)", "certify_rate": "Splits certifying a threshold",
                    "threshold_median": "Threshold (median)", "threshold_min": "Lowest",
                    "threshold_max": "Highest", "certified_coverage": "Coverage (held out, certifying splits)",
                    "mean_agreement": "Agreement kept (held out, certifying splits)",
                    "held_out_guarantee_rate": "Splits meeting 1 − α",
                    "mean_coverage": "Coverage (held out, every split; 0 where none certified)",
                    "overall_agreement": "Agreement without abstaining"},
              caption=f"Trust or escalate: alpha {alpha:g}, delta {delta:g}, {splits} calibration / held-out splits")
    return sec


def _injected(judge) -> dict[str, float]:
    """The simulated judge's true P(PASS) on a content-free answer (no truth) per anchor set, by its rule
    (:class:`evallab.testing.SimulatedJudge`: ``pass_rate``, × (1 + ``pass_only_inflation``) capped at 1 under
    PASS-only anchors, − ``fail_last_priming`` floored at 0 under FAIL-last anchors)."""
    p = judge.pass_rate
    return {"balanced": p, "pass-only": min(1.0, p * (1 + judge.pass_only_inflation)),
            "fail-last": max(0.0, p - judge.fail_last_priming)}


def _probe_and_calibration(table: pd.DataFrame, *, injected: Mapping[str, float] | None, confidence: float,
                           n_resamples: int, seed: int) -> tuple[Results, Results]:
    """The content-free probe of ``table`` (with the ``injected`` P(PASS) per anchor set when known) and its
    calibrated rates."""
    probe = contextual.content_free_probe(table, confidence=confidence)
    cal = contextual.calibrated_rates(table, confidence=confidence, n_resamples=n_resamples, seed=seed)
    if injected is not None:
        probe = with_measures(probe.assign(injected=probe["anchor_set"].astype(str).map(injected)),
                              Measure("injected", "Injected", "proportion"))
    return probe, cal


def _show_probe_and_calibration(sec: Section, probe: Results, cal: Results, who: str) -> None:
    """Both tables in ``sec`` (captions name ``who``); agreement only where gold holds both verdicts."""
    cols = ["anchor_set", "probes", "replies", "p_cf", *(["injected"] if "injected" in probe else [])]
    sec.table(probe, _with_judge(probe, cols), caption=f"Content-free probe per anchor set ({who})")
    if cal.empty:  # no graded answer: the caller says so
        return
    rates = ["pass_rate", "calibrated_pass_rate", "false_pass_rate", "calibrated_false_pass_rate"]
    if cal["gold_items"].sum() > cal["gold_fail_items"].sum():  # agreement needs gold PASS answers too
        rates += ["agreement", "calibrated_agreement"]
    sec.table(cal, _with_judge(cal, ["anchor_set", "items", *rates]),
              caption=f"Before and after contextual calibration ({who})")


@bundled_section(when="judge", heading=ANCHOR_HEADING)
def anchor_calibration(table: pd.DataFrame, judge=None, *, anchor: str = "pass-only", who: str = "simulated judge",
                       confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Section:
    """Anchor calibration on a judge with a known injected leniency: the content-free probe's P(PASS) per anchor
    set beside the injected one, and the rates before and after contextual calibration.

    Parameters
    ----------
    table : DataFrame
        Pointwise tidy verdicts with ``anchor_set``: graded answers (gold on them) and content-free probe replies
        (:func:`evallab.experiments.run_probe`).
    judge : evallab.testing.SimulatedJudge, optional
        The simulated judge that graded them: its injected P(PASS) per anchor set is shown beside the probe's.
    anchor : str, default "pass-only"
        The anchor set the finding is about.
    who : str, default "simulated judge"
        The judge's name in the captions.
    confidence, n_resamples, seed
        Level of the intervals; the item bootstrap of the rates.

    Returns
    -------
    Section
        The probe's P(PASS) under ``anchor`` (and the injected value) and the false-pass rate on gold-FAIL answers
        before and after calibration; both tables. Metrics ``probe``, ``contextual``; one conclusion when the
        injected value is known.

    Raises
    ------
    ParameterError
        ``anchor`` is not an anchor set of the probe.

    Notes
    -----
    Zhao et al. (2021), §5: W = diag(p_cf)⁻¹, b = 0; for pass/fail the calibrated verdict is PASS exactly when
    P(PASS) > p_cf.
    """
    injected = _injected(judge) if judge is not None else None
    probe, cal = _probe_and_calibration(table, injected=injected, confidence=confidence, n_resamples=n_resamples,
                                        seed=seed)
    sec = Section(metrics={"probe": _records(probe), "contextual": _records(cal)})
    i, k = _position(probe, anchor_set=anchor), _position(cal, anchor_set=anchor) if len(cal) else None
    if i is None:
        raise ParameterError(f"anchor {anchor!r} is not an anchor set of the probe; expected one of "
                             f"{sorted(map(str, probe['anchor_set'].unique()))}")
    p_cf = probe.estimate("p_cf", i)
    inj = f" (injected {format_number(injected[anchor], 'proportion')}%)" if injected and anchor in injected else ""
    before = after = Estimate(None, note="no graded answer under these anchors")
    if k is not None:
        before, after = cal.estimate("false_pass_rate", k), cal.estimate("calibrated_false_pass_rate", k)
    if after.value is None or before.value is None:
        move = f"gives no calibrated false-pass rate ({after.note or before.note or 'no gold-FAIL answer'})"
    else:
        what = "the false-pass rate on gold-FAIL answers"
        move = (f"leaves {what} at {after}" if after.value == before.value else
                f"{'cuts' if after.value < before.value else 'raises'} {what} from {before.number()} to {after}")
    sec.finding(f"Under {anchor} anchors the content-free probe passes {p_cf}{inj}; calibrating against it {move}.",
                after)
    if inj:
        sec.conclusions.append(f"The content-free probe recovers the injected {anchor} leniency: {p_cf.number()} vs "
                               f"{format_number(injected[anchor], 'proportion')}% injected.")
    _show_probe_and_calibration(sec, probe, cal, who)
    return sec


@bundled_section(heading=LIVE_HEADING)
def live_recordings(live: pd.DataFrame | None, *, live_dir: str, model: str = "SmolLM2",
                    min_gold: int = corrected.MIN_GOLD, confidence: float = 0.95, n_resamples: int = 1000,
                    seed: int = 0) -> Section:
    """Live recordings of a real judge: the content-free probe and contextual calibration per anchor set where
    probe replies are recorded, and the corrected pass rate where gold is recorded on part of the answers.

    Parameters
    ----------
    live : DataFrame or None
        The pointwise live studies as one tidy table with a ``study`` column
        (:func:`evallab.experiments.load_pointwise`); None when nothing is recorded.
    live_dir : str
        Where the recordings were looked for (named in the sentences).
    model : str, default "SmolLM2"
        The live judge's name in the sentences.
    min_gold, confidence, n_resamples, seed
        As in :func:`evallab.metrics._corrected.corrected_rates`.

    Returns
    -------
    Section
        Without recordings one sentence saying the section is skipped. Else: the replies read; the anchor set
        under which the judge passes the content-free answer most often, against the one it passes least; the
        probe and calibration tables (and why calibration moves nothing where it cannot); the corrected pass
        rates, or why there are none. Metrics ``live``: ``studies``, ``replies``, ``probe``, ``rates`` (null when
        not computed), or null without recordings.
    """
    sec = Section(metrics={"live": None})
    if live is None:
        return sec.text(f"No live {model} recordings in {live_dir}: this section is skipped (the simulated judge "
                        "above stands in).")
    studies = list(dict.fromkeys(live["study"].astype(str)))
    info = {"studies": studies, "replies": len(live), "probe": None, "rates": None}
    sec.metrics["live"] = info
    sec.text(f"{len(live):,} live replies from the {' and '.join(studies)} "
             f"{'study' if len(studies) == 1 else 'studies'} in {live_dir}.")
    is_probe = contextual.is_probe(live)
    if is_probe.any():
        probe, cal = _probe_and_calibration(live, injected=None, confidence=confidence, n_resamples=n_resamples,
                                            seed=seed)
        info["probe"] = _records(probe)
        order = probe.reset_index(drop=True)["p_cf"].sort_values(kind="stable").index  # least lenient first
        lo, hi = int(order[0]), int(order[-1])
        who = str(probe["judge"].iloc[hi]) if "judge" in probe else model
        against = (f", against {probe.estimate('p_cf', lo)} under the {probe['anchor_set'].iloc[lo]} anchors"
                   if len(order) > 1 else "")
        sec.finding(f"{who} passes the content-free answer in {probe.estimate('p_cf', hi)} under the "
                    f"{probe['anchor_set'].iloc[hi]} anchors{against}.", probe.estimate("p_cf", hi))
        _show_probe_and_calibration(sec, probe, cal, f"live {model}")
        shown = cal[cal["calibrated_pass_rate"].notna()]["note"]
        for why in dict.fromkeys(n for n in shown if n):  # rows shown in full: their notes are no footnote
            sec.text(f"{why[:1].upper()}{why[1:]}.")
    else:
        sec.text("The live recordings hold no content-free probe replies: no anchor calibration for them.")
    graded = live[~is_probe]
    gold = graded["gold"].notna()
    if graded.empty:
        sec.text("The live recordings hold no graded answers: no pass rate for them.")
    elif gold.any() and not gold.all():
        rates = corrected.corrected_rates(graded, ["judge", "anchor_set"], min_gold=min_gold, confidence=confidence,
                                          n_resamples=n_resamples, seed=seed)
        info["rates"] = _records(rates)
        done = np.flatnonzero(rates["ppi"].notna().to_numpy())
        if len(done):
            i = int(done[0])
            words, _ = _ppi_words(rates, i, "answers", str(rates["judge"].iloc[i]))
            sec.finding(f"{rates['judge'].iloc[i]} under the {rates['anchor_set'].iloc[i]} anchors: its own pass rate "
                        f"is {rates.estimate('judge_only', i)}; {words}.", rates.estimate("ppi", i))
        long = corrected.side_by_side(rates, ["judge", "anchor_set"])
        sec.table(long, ["judge", "anchor_set", "method", "estimate", "n_eff"],
                  caption=f"Live {model}: judge only and corrected pass rates")
    elif gold.all():
        sec.text("Every live answer has a gold label, so there is nothing to correct: the pass and false-pass rates "
                 "above are measured against gold directly (a corrected rate needs judge verdicts on items without "
                 "gold).")
    else:
        sec.text("The live recordings have no gold labels: no corrected rate for them.")
    return sec


__all__ = ["anchor_calibration", "judge_only_corrected_and_truth", "live_recordings", "load_table",
           "next_round_plan", "paired_difference", "per_subset", "trust_or_escalate"]
