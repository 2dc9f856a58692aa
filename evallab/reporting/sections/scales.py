"""Report 08, scores on a scale: which judge and prompt agree best with the humans, by criterion; whether any is
within the humans' own disagreement; how lenient each judge is; which criteria the humans disagree on — one
function per section of ``notebooks/08_scales.ipynb``.

Each function takes the estimators' :class:`~evallab.Results` (:mod:`evallab.metrics._scales`: weighted kappa,
Krippendorff's alpha, ICC, Pearson / Spearman / Kendall at the item and system level, bias, MAE, with item-bootstrap
intervals) and returns a :class:`~evallab.Section`. The bundled table is HANNA (Chhun et al., COLING 2022; LLM
ratings from Chhun, Suchanek & Clavel, TACL 2024; ``data/hanna/SOURCE.md``).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evallab._results import Results
from evallab.metrics import _scales as scales
from evallab.reporting._context import Section
from evallab.reporting._params import ParameterError

#: the agreement figures a report may rank by → how a sentence names them
RANKED = {"spearman": "Spearman's ρ over items", "kendall": "Kendall's τ-b over items",
          "pearson": "Pearson's r over items", "kappa_quadratic": "quadratic-weighted kappa",
          "icc2_1": "ICC(2,1)", "sys_kendall": "Kendall's τ-b over systems",
          "sys_spearman": "Spearman's ρ over systems", "sys_pearson": "Pearson's r over systems"}
#: HANNA's wording (3 humans, 11 generators); the sections word it from the table (:func:`_ceiling_caveat`,
#: :func:`_system_caveat`)
CEILING_CAVEAT = ("The human ceiling is one human against the mean of the other two; a judge is compared with the "
                  "mean of all three, a less noisy reference, which favours the judge slightly.")
SYSTEM_CAVEAT = ("The system-level rank correlations (Spearman, Kendall over the generators' means) rest on 11 "
                 "points: their intervals are conservative (about 99% coverage at the nominal 95% in make "
                 "coverage's simulation); the system-level Pearson and every item-level interval cover at 95%.")
_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}


def _rater_words(raters) -> tuple[str, str]:
    """How report 08 names its raters, from their labels (``judge`` or ``judge · strategy``,
    :func:`evallab.verdicts.rater_label`): (column header, noun) — ``("Judge · prompt", "judge × prompt")`` when
    every strategy reads "prompt …" (HANNA's prompt variants), ``("Judge · strategy", "judge × strategy")`` for
    any other strategy column, ``("Judge", "judge")`` when no label carries a strategy.

    >>> _rater_words(["ChatGPT · prompt 1", "Llama · prompt 2"])
    ('Judge · prompt', 'judge × prompt')
    >>> _rater_words(["gpt-4o · rubric-v2", "gpt-4o"])
    ('Judge · strategy', 'judge × strategy')
    >>> _rater_words(["gpt-4o"])
    ('Judge', 'judge')
    """
    parts = [str(r).split(" · ", 1)[1] for r in raters if " · " in str(r)]
    if not parts:
        return "Judge", "judge"
    word = "prompt" if all(p.startswith("prompt") for p in parts) else "strategy"
    return f"Judge · {word}", f"judge × {word}"


def _count(n: int) -> str:
    return _WORDS.get(n, str(n))


def _ceiling_caveat(n_humans: int) -> str:
    """The ceiling caveat for a table of ``n_humans`` human raters (HANNA: 3)."""
    other = "the other human" if n_humans == 2 else f"the mean of the other {_count(n_humans - 1)}"
    return (f"The human ceiling is one human against {other}; a judge is compared with the mean of all "
            f"{_count(n_humans)}, a less noisy reference, which favours the judge slightly.")


def _system_caveat(n_systems: int) -> str:
    """The system-level caveat for a table of ``n_systems`` systems (``subset``; HANNA: 11 story generators)."""
    if n_systems < 2:
        return ("The table has one system (no `subset` column, or one value): the system-level correlations are "
                "not computed and items are resampled as one pool.")
    return (f"The system-level rank correlations (Spearman, Kendall over the systems' means) rest on {n_systems} "
            "points: their intervals are conservative (about 99% coverage at the nominal 95% on HANNA's 11 "
            "generators in make coverage's simulation); the system-level Pearson and every item-level interval "
            "cover at 95%.")


def _n_systems(res: pd.DataFrame) -> int:
    return int(pd.to_numeric(res["systems"], errors="coerce").max()) if "systems" in res.columns and len(res) else 0


def _n_humans(ceiling: pd.DataFrame) -> int:
    return int(ceiling["rater"].nunique()) if "rater" in ceiling.columns else 0


def breakdown(table: pd.DataFrame, by: Sequence[str]) -> tuple[list[str], Section]:
    """The design columns report 08 breaks its figures down by, and the one line saying so when they change:
    the notebook's default ``["criterion"]`` on a table without a ``criterion`` column gives no breakdown (one
    cell: the whole table); any other ``by`` is kept as given (the estimators refuse a column the table lacks).

    Returns
    -------
    (list of str, Section)
        The columns and a section holding that one line (empty when ``by`` is kept).
    """
    sec = Section()
    if list(by) == ["criterion"] and "criterion" not in table.columns:
        sec.text("The table has no `criterion` column: every figure is over the whole table (no breakdown; "
                 "pass `-p by '[...]'` to name design columns).")
        by = []
    averaged = _samples_averaged(table, by)
    if averaged:
        sec.text(averaged)
    return list(by), sec


def _samples_averaged(table: pd.DataFrame, by: Sequence[str] = ()) -> str:
    """One sentence when some rater scored an item more than once in a design cell (repeated samples): the scale
    estimators use each rater's mean score per item (:func:`evallab.metrics._scales.wide`), so the draws are not
    counted as separate items — said, never done silently. ``""`` when every rater scored each item once.

    >>> t = pd.DataFrame({"item_id": ["a", "a", "b", "a", "b"], "judge": ["j", "j", "j", "h", "h"],
    ...                   "score": [4.0, 2.0, 5.0, 3.0, 5.0], "role": ["judge"] * 3 + ["human"] * 2})
    >>> _samples_averaged(t)
    "1 rater scored an item more than once (j: up to 2 scores on 1 of 2 items); every figure uses each rater's \
mean score per item, so repeated samples are averaged, not counted as items (report 08's stability section \
shows how far they agree)."
    """
    from evallab.verdicts import rater_label

    d = scales.require_scores(scales._slim(table, by))  # the columns read here: a rating table is long
    keys = [c for c in (*by, "subset", "item_id") if c in d.columns]
    n = d.assign(_rater=rater_label(d)).groupby([*keys, "_rater"], observed=True, dropna=False).size()
    if n.empty or n.max() <= 1:
        return ""
    per = n.groupby(level="_rater", observed=True).agg(most="max", scored="size",
                                                       repeated=lambda x: int((x > 1).sum()))
    per = per[per["most"] > 1]
    names = [f"{r}: up to {int(x.most)} scores on {int(x.repeated):,} of {int(x.scored):,} items"
             for r, x in per.iterrows()]
    return (f"{len(names)} rater{'' if len(names) == 1 else 's'} scored an item more than once "
            f"({'; '.join(names[:6])}{'; …' if len(names) > 6 else ''}); every figure uses each rater's mean score "
            "per item, so repeated samples are averaged, not counted as items (report 08's stability section shows "
            "how far they agree).")
ROUNDING_CAVEAT = ("Weighted kappa and exact / within-one agreement compare the scores rounded to the scale's "
                   "steps (half up); correlations, bias and MAE use the scores as they are.")


def load_table(verdicts_path: str = "", hanna_path: str = "", *, criteria: Sequence[str] = (),
               judges: Sequence[str] = (), prompts: Sequence[int] = ()) -> pd.DataFrame:
    """The score table report 08 studies: the user's tidy score table at ``verdicts_path`` (with its humans as
    raters, ``role`` = ``human``, or named by the notebook), else HANNA (at ``hanna_path``, default bundled),
    restricted to ``criteria``, ``judges`` and ``prompts`` (empty: all).

    Raises
    ------
    DataError, VerdictTableError
        From the loaders, naming the file, row or column; a verdict-only table is refused in one line.
    """
    from evallab.datasets import load_hanna, load_study

    if verdicts_path:
        table = load_study(verdicts_path, scores=True)
        if criteria and "criterion" in table.columns:
            table = table[table["criterion"].isin(list(criteria))]
        return table
    return load_hanna(hanna_path or None, criteria=list(criteria) or None, judges=list(judges) or None,
                      prompts=[int(p) for p in prompts] or None)


def _humans_in(table: pd.DataFrame, humans: Sequence[str] = ()) -> list[str]:
    """The human raters of a score table: ``humans`` when given, else the judges whose ``role`` is ``human``
    (:func:`evallab.metrics._scales.humans_of`)."""
    return scales.humans_of(scales.require_scores(scales._slim(table, ())), list(humans) or None)


def _too_few_humans(what: str, humans: Sequence[str], *, at_least: int = 2) -> str:
    """The one sentence a section shows in place of ``what`` (e.g. "The human ceiling") when the table has fewer
    than ``at_least`` human raters: what it needs, and how many the table has, named."""
    n = len(humans)
    has = "none" if not n else f"{'one' if n == 1 else _count(n)} ({', '.join(map(str, humans))})"
    return f"{what} needs at least {_count(at_least)} human raters; the table has {has}."


def _not_computed(why: str, humans: Sequence[str], by: Sequence[str]) -> Results:
    """An empty :class:`~evallab.Results` standing for an estimator the table cannot support; ``attrs["why"]``
    is the sentence the sections show instead, ``attrs["humans"]`` the human raters the table has."""
    from evallab._results import results

    res = results(pd.DataFrame(), [], keys=list(by))
    res.attrs.update(why=why, humans=[str(h) for h in humans])
    return res


def human_ceiling(table: pd.DataFrame, *, humans: Sequence[str] = (), by: Sequence[str] = ("criterion",),
                  **ci) -> Results:
    """Report 08's human ceiling: :func:`evallab.metrics.human_ceiling` (each human against the mean of the other
    humans, leave one rater out) — or, on a table with fewer than two human raters, an empty
    :class:`~evallab.Results` whose ``attrs["why"]`` says so (the report's sections state it instead of failing).
    ``ci``: ``confidence``, ``n_resamples``, ``seed``."""
    hs = _humans_in(table, humans)
    if len(hs) < 2:
        return _not_computed(_too_few_humans("The human ceiling", hs), hs, by)
    return scales.human_ceiling(table, humans=list(humans) or None, by=by, **ci)


def human_reliability(table: pd.DataFrame, humans: Sequence[str] = (), *, by: Sequence[str] = ("criterion",),
                      **ci) -> Results:
    """Report 08's inter-annotator agreement of the human raters: :func:`evallab.metrics.rater_reliability`
    (Krippendorff's alpha, ICC, weighted kappa) — or, on a table with fewer than two human raters, an empty
    :class:`~evallab.Results` whose ``attrs["why"]`` says so. ``ci``: ``confidence``, ``n_resamples``, ``seed``."""
    hs = _humans_in(table, humans)
    if len(hs) < 2:
        return _not_computed(_too_few_humans("The humans' agreement with each other", hs), hs, by)
    return scales.rater_reliability(table, list(humans) or None, by=by, **ci)


def _check(measure: str) -> None:
    if measure not in RANKED:
        raise ParameterError(f"measure {measure!r}; expected one of {sorted(RANKED)}")


def _by(res: pd.DataFrame) -> list[str]:
    return [k for k in (getattr(res, "keys", None) or []) if k != "rater"]


def _cells(res: pd.DataFrame):
    by = _by(res)
    if not by:
        yield "", res
        return
    for key, g in res.groupby(by, sort=True, observed=True):
        yield (key if isinstance(key, str) else " · ".join(map(str, key if isinstance(key, tuple) else (key,)))), g


def best_by_criterion(agreement: Results, ceiling: Results, *, measure: str = "spearman") -> Section:
    """Per criterion, the judge × prompt whose ``measure`` against the human mean is highest, with its interval,
    beside the human ceiling (the mean over humans of one human against the others) and whether the best judge
    reaches it: its interval covers or exceeds the ceiling. Without a ceiling (fewer than two human raters:
    :func:`human_ceiling`'s ``attrs["why"]``), the best judge per cell and that one sentence."""
    _check(measure)
    sec = Section()
    if agreement.empty:
        return sec.text("No judge has scores on the items the humans rated: nothing to compare.")
    if ceiling.attrs.get("why"):
        return _best_without_ceiling(agreement, ceiling, measure)
    rows = []
    for name, i in _best_per_cell(agreement, measure):
        best = agreement.estimate(measure, agreement.index.get_loc(i))
        ce = ceiling
        for k in _by(agreement):
            ce = ce[ce[k] == agreement.loc[i, k]] if k in ce.columns else ce
        ceil = float(ce[measure].mean()) if len(ce) else float("nan")
        reach = best.high is not None and ceil == ceil and best.high >= ceil
        above = best.value is not None and ceil == ceil and best.value >= ceil
        rows.append({"criterion": name, "best": agreement.loc[i, "rater"], "ceiling": ceil, "reaches": reach,
                     "at_or_above": above, "verdict": "at or above" if above else "within reach" if reach else
                     "below"})
        where = f"On {name}, " if name else ""
        verdict = ("at or above the human ceiling" if above else "within the human ceiling's reach (its interval "
                   "covers it)" if reach else "below the human ceiling")
        sec.finding(f"{where}{agreement.loc[i, 'rater']} agrees best with the human mean ({RANKED[measure]}); the "
                    f"humans' own leave-one-out figure is {ceil:.2f}: the judge is {verdict}.", best)
    top, cols = _ranking(agreement, measure)
    sec.table(top, cols,
              caption=f"Every {_rater_words(agreement['rater'])[1]} against the human mean, by criterion (ranked by "
                      f"{RANKED[measure]})",
              csv_name="agreement")
    sec.metrics["best_by_criterion"] = pd.DataFrame(rows).to_dict("records")
    sec.conclusions.append(_reach_conclusion(rows, measure))
    sec.caveats += [_ceiling_caveat(_n_humans(ceiling)), ROUNDING_CAVEAT, _system_caveat(_n_systems(agreement))]
    return sec


def _best_per_cell(agreement: Results, measure: str):
    """(cell name, index label of the judge with the highest ``measure``) per design cell with a value."""
    for name, g in _cells(agreement):
        g = g[g[measure].notna()]
        if not g.empty:
            yield name, g[measure].astype(float).idxmax()


def _ranking(agreement: Results, measure: str) -> tuple[pd.DataFrame, dict]:
    """Every judge × prompt ranked by ``measure`` within its cell, and the columns shown."""
    shown = {"rater": _rater_words(agreement["rater"])[0], measure: RANKED[measure]}
    for extra in ("kendall", "sys_kendall", "kappa_quadratic"):
        if extra != measure:
            shown[extra] = agreement.measures[extra].label
    top = agreement.sort_values([*_by(agreement), measure], ascending=[True] * len(_by(agreement)) + [False])
    return top, {**{k: k.capitalize() for k in _by(agreement)}, **shown}


def _best_without_ceiling(agreement: Results, ceiling: Results, measure: str) -> Section:
    """:func:`best_by_criterion` on a table without a human ceiling (fewer than two human raters): the best judge
    per cell against the human rating, and the ceiling's one sentence (``ceiling.attrs["why"]``) in place of the
    comparison."""
    sec = Section()
    hs = ceiling.attrs.get("humans") or []
    ref = f"the human rater {hs[0]}" if len(hs) == 1 else "the human mean"
    rows = []
    for name, i in _best_per_cell(agreement, measure):
        rows.append({"criterion": name, "best": agreement.loc[i, "rater"], "ceiling": None,
                     "verdict": "no human ceiling"})
        where = f"On {name}, " if name else ""
        sec.finding(f"{where}{agreement.loc[i, 'rater']} agrees best with {ref} ({RANKED[measure]})",
                    agreement.estimate(measure, agreement.index.get_loc(i)))
    sec.text(ceiling.attrs["why"])
    top, cols = _ranking(agreement, measure)
    sec.table(top, cols, caption=f"Every {_rater_words(agreement['rater'])[1]} against {ref} (ranked by "
                                 f"{RANKED[measure]})",
              csv_name="agreement")
    sec.metrics["best_by_criterion"] = rows
    why = ceiling.attrs["why"]
    best = f"The best judge, {rows[0]['best']}, is" if len(rows) == 1 else "The best judges are"
    sec.conclusions.append(f"{best} not set against a human ceiling: {why[0].lower()}{why[1:]}")
    sec.caveats += [ROUNDING_CAVEAT, _system_caveat(_n_systems(agreement))]
    return sec


def _reach_conclusion(rows: list[dict], measure: str) -> str:
    """The conclusion by the finding's own rule: at or above the ceiling (the estimate), within reach (only the
    interval covers it), below."""
    if not rows:
        return "No judge has a figure to set against the human ceiling."
    words = {"at or above": "at or above", "within reach": "within reach of", "below": "below"}
    if len(rows) == 1 and not rows[0]["criterion"]:
        r = rows[0]
        return (f"The best judge, {r['best']}, is {words[r['verdict']]} the human ceiling ({RANKED[measure]}, "
                f"{r['ceiling']:.2f}).")
    parts = []
    for verdict in ("at or above", "within reach", "below"):
        names = [r["criterion"] for r in rows if r["verdict"] == verdict]
        if names:
            parts.append(f"{words[verdict]} it on {len(names)} of {len(rows)} "
                         f"criteria ({', '.join(names)})")
    return f"The best judge per criterion is, against the human ceiling ({RANKED[measure]}): {'; '.join(parts)}."


def ceiling_table(ceiling: Results, *, measure: str = "spearman") -> Section:
    """The human ceiling: each human against the mean of the others, per criterion, with intervals."""
    _check(measure)
    sec = Section()
    if ceiling.attrs.get("why"):
        return sec.text(ceiling.attrs["why"])
    if ceiling.empty:
        return sec.text("The table has fewer than two human raters on common items: no human ceiling.")
    cols = {**{k: k.capitalize() for k in _by(ceiling)}, "rater": "Human", measure: RANKED[measure],
            "kappa_quadratic": ceiling.measures["kappa_quadratic"].label, "mae": ceiling.measures["mae"].label}
    sec.table(ceiling, cols, caption="Leave one rater out: one human against the mean of the other humans",
              csv_name="human-ceiling")
    return sec


def leniency(agreement: Results) -> Section:
    """How lenient each judge × prompt is: the mean bias (judge − human mean, scale points) with its paired item
    interval, averaged here per judge × prompt over the criteria (the table keeps every criterion)."""
    sec = Section()
    if agreement.empty:
        return sec.text("No judge has scores on the items the humans rated: no leniency to measure.")
    header, noun = _rater_words(agreement["rater"])
    i_max = agreement["bias"].astype(float).idxmax()
    i_min = agreement["bias"].astype(float).idxmin()
    for i, word in ((i_max, "most lenient"), (i_min, "most severe")):
        e = agreement.estimate("bias", agreement.index.get_loc(i))
        where = " · ".join(str(agreement.loc[i, k]) for k in _by(agreement))
        sec.finding(f"The {word} {noun} is {agreement.loc[i, 'rater']}"
                    f"{' on ' + where if where else ''}: mean bias against the human mean", e)
    per = agreement.groupby("rater", observed=True)["bias"].mean().sort_values()
    over = f"Averaged over the {' · '.join(_by(agreement))} cells" if _by(agreement) else "Over the table"
    sec.text(f"{over}, {int((per > 0).sum())} of {len(per)} {noun} rate above the "
             f"humans and {int((per < 0).sum())} below; from {per.index[0]} ({per.iloc[0]:+.2f} scale points) "
             f"to {per.index[-1]} ({per.iloc[-1]:+.2f}).")
    cols = {**{k: k.capitalize() for k in _by(agreement)}, "rater": header,
            "bias": agreement.measures["bias"].label, "mae": agreement.measures["mae"].label,
            "exact": agreement.measures["exact"].label, "within_one": agreement.measures["within_one"].label}
    sec.table(agreement.sort_values("bias"), cols, caption="Leniency: mean bias and MAE against the human mean",
              csv_name="leniency")
    sec.metrics["mean_bias_by_rater"] = {str(k): float(v) for k, v in per.items()}
    return sec


def human_disagreement(reliability: Results) -> Section:
    """Which criteria the humans disagree on: Krippendorff's alpha (ordinal, interval), ICC(2,1), ICC(3,1),
    ICC(2,k) and the mean pairwise weighted kappa of the human raters, per criterion."""
    sec = Section()
    if reliability.attrs.get("why"):
        return sec.text(reliability.attrs["why"])
    if reliability.empty:
        return sec.text("The table has fewer than two human raters on common items: no inter-annotator agreement.")
    r = reliability.reset_index(drop=True)
    lo, hi = r["alpha_ordinal"].astype(float).idxmin(), r["alpha_ordinal"].astype(float).idxmax()

    def name(i) -> str:
        return " · ".join(str(r.loc[i, k]) for k in _by(r)) or "the table"

    if len(r) == 1:
        sec.finding(f"The {_count(int(r.loc[0, 'raters']))} human raters' agreement on {name(0)}: Krippendorff's "
                    "ordinal alpha", r.estimate("alpha_ordinal", 0))
    else:
        sec.finding(f"The humans disagree most on {name(lo)}: Krippendorff's ordinal alpha",
                    r.estimate("alpha_ordinal", lo))
        sec.finding(f"They agree most on {name(hi)}", r.estimate("alpha_ordinal", hi))
    low = [name(i) for i in r.index if float(r.loc[i, "alpha_ordinal"]) < 0.2]
    if low:
        sec.conclusions.append(f"The human raters barely agree (ordinal alpha below 0.2) on {', '.join(low)}: a "
                               "judge's agreement with their mean is bounded by it.")
    cols = {**{k: k.capitalize() for k in _by(r)}, **{f: scales.RELIABILITY_FIGURES[f][0] for f in
                                                       scales.RELIABILITY_FIGURES}}
    sec.table(r, cols, caption="Inter-annotator agreement of the human raters", csv_name="human-agreement")
    sec.metrics["human_alpha_ordinal"] = {name(i): float(r.loc[i, "alpha_ordinal"]) for i in r.index}
    return sec


__all__ = ["best_by_criterion", "breakdown", "ceiling_table", "human_ceiling", "human_disagreement",
           "human_reliability", "leniency", "load_table"]
