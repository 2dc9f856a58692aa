"""The annotators and the judge against them (issue 31, items 4–5), for report 08: the annotators' agreement
(pairwise and as a panel, with intervals), the gold they produced, each annotator against the others, whether a
judge can replace one of them (the Alternative Annotator Test, Calderon, Reichart & Dror, ACL 2025), and the plan
for the next round of labels.

The annotators are HANNA's three human raters (scores 1–5: weighted kappa, Krippendorff's alpha ordinal, ICC; gold
= their mean), or the labels of ``evallab label`` (the ``labels`` importer: the annotator as the rater; verdicts
pass/warn/fail or pairwise 1/2/tie: Cohen's kappa, Krippendorff's alpha nominal, Fleiss' kappa; gold = the majority,
:func:`~evallab.importers.gold_from_annotators`) joined to a judge's verdict or score table on ``item_id``.

:func:`annotator_panel` computes everything once (reusing the notebook's :func:`~evallab.metrics.rater_reliability`
and :func:`~evallab.metrics.human_ceiling` results when given); :func:`annotators_section`,
:func:`alt_test_section` and :func:`next_round_section` only state it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from evallab._results import Measure, Results, results
from evallab.errors import DesignError
from evallab.reporting._context import Section
from evallab.reporting.sections.scales import _rater_words, _too_few_humans

#: the paper's citation, as the sections name the procedure
ALT_TEST = ("the Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025): for each annotator left out, a "
            "one-sided paired t-test of whether the judge represents the remaining annotators at least as well as "
            "that annotator does, within ε; Benjamini–Yekutieli false-discovery-rate control at α = {alpha:g} "
            "across the annotators; the judge passes when it wins for at least half of them (winning rate ω ≥ 0.5)")
SQRT_N = ("the interval's half-width shrinks as 1/√n — more items like the ones labelled, the agreement itself "
          "unchanged")


@dataclass
class Panel:
    """What the annotator sections show, computed once by :func:`annotator_panel`.

    ``kind`` is ``"scores"`` or ``"verdicts"``; ``pairs`` / ``panel`` / ``each`` / ``gold`` / ``judge_gold`` /
    ``alt`` are :class:`~evallab.Results` (``judge_gold`` only for verdicts; ``alt`` None with ``alt_reason``
    saying why when the Alt-Test cannot be run); ``plan_inputs`` are the figures :func:`next_round_section`
    plans from. With fewer than two annotators, ``too_few`` names them and the tables are empty.
    """

    kind: str
    annotators: list[str]
    judges: list[str]
    by: list[str]
    pairs: Results
    panel: Results
    each: Results
    gold: Results
    judge_gold: Results | None = None
    alt: Results | None = None
    alt_reason: str = ""
    epsilon: float = 0.2
    alpha: float = 0.05
    confidence: float = 0.95
    plan_inputs: dict = field(default_factory=dict)
    #: the annotators found when fewer than two (None otherwise): nothing is computed and each section says in one
    #: sentence that it needs at least two human raters, naming the ones the table has
    too_few: list[str] | None = None


def load_labels(labels_path: str = "", judges_path: str = "", table: pd.DataFrame | None = None) -> pd.DataFrame:
    """The table the annotator sections study: ``table`` (the report's score table, its humans as the annotators)
    when ``labels_path`` is empty; else the labels file of ``evallab label`` (the annotators, ``role`` ``human``)
    with the judges' rows of ``judges_path`` (a tidy verdict or score table; empty: the judges of ``table``) —
    all of them: the items nobody labelled count for the plan of the next round (PPI++ uses the judge there).

    Raises
    ------
    DataError, VerdictTableError
        From the loaders, naming the file, row or column.
    DesignError
        No item of the labels file is in the judges' table.
    """
    if not labels_path:
        return table
    from evallab.datasets._generic import load_verdicts
    from evallab.importers import import_file

    labels = import_file(labels_path, format="labels").assign(role="human")
    judges = load_verdicts(judges_path) if judges_path else table
    judges = judges[judges["role"].astype("string") != "human"] if "role" in judges.columns else judges
    judges = judges.assign(role="judge")
    if not judges["item_id"].astype(str).isin(set(labels["item_id"].astype(str))).any():
        raise DesignError(f"no item of the labels file {labels_path!r} is in the judges' table "
                          f"{judges_path or 'of the report'}: expected the same item_id values", column="item_id")
    return pd.concat([labels, judges], ignore_index=True)


# ----------------------------------------------------------------------------------------------- computing
def _rater(d: pd.DataFrame) -> pd.Series:
    """The rater's name: the judge (an annotator, or a judge without a strategy), else ``judge · strategy``."""
    j = d["judge"].astype("string")
    s = d["strategy"].astype("string").fillna("") if "strategy" in d.columns else pd.Series("", index=d.index)
    human = d["role"].astype("string").fillna("") == "human" if "role" in d.columns else s == "human"
    return j.where(human | (s == "") | (s == "human"), j + " · " + s)


def _one_label(d: pd.DataFrame, keys: list[str]) -> tuple[pd.DataFrame, int]:
    """One verdict per (keys…, item, rater): the majority over a judge's orders and samples (items without a
    majority dropped, counted)."""
    from evallab.importers import gold_from_annotators

    d = d[d["verdict"].notna()]
    if not d.duplicated([*keys, "item_id", "_rater"]).any():
        return d, 0
    rep = d.assign(_rep=d["order"].astype(str) + "/" + d["sample"].astype(str))
    g = gold_from_annotators(rep, rule="majority", by=[*keys, "item_id", "_rater"], annotator="_rep",
                             label="verdict").table
    return g.dropna(subset=["gold"]).rename(columns={"gold": "verdict"}), int(g["gold"].isna().sum())


def _alt(d: pd.DataFrame, by, judges, annotators, value, scoring, epsilon, alpha):
    from evallab.metrics import alt_test

    if len(annotators) < 3:
        return None, (f"The Alt-Test is not shown: it needs at least 3 annotators per item (Calderon et al. 2025); "
                      f"this table has {len(annotators)}.")
    try:
        return alt_test(d, by, judges=judges, annotators=annotators, raters="_rater", value=value,
                        scoring=scoring, epsilon=epsilon, alpha=alpha), ""
    except DesignError as e:
        return None, f"The Alt-Test is not shown: {str(e).removeprefix('alt_test: ')}."


def _score_panel(d, by, hs, ci, reliability, ceiling):
    """Scores: each pair of annotators (:func:`~evallab.metrics._scales.reliability_statistics` on the pair's
    columns: weighted kappa, Krippendorff's alpha ordinal, ICC, item bootstrap), the panel and each annotator
    against the others (the report's :func:`~evallab.metrics.rater_reliability` / :func:`~evallab.metrics.
    human_ceiling` when of the same annotators, else computed), and the gold (the annotators' mean per item)."""
    from evallab.metrics import human_ceiling, rater_reliability
    from evallab.metrics._scales import RELIABILITY_FIGURES, _rows, reliability_statistics, scale_of, wide

    d = d[d["_rater"].isin(hs)]  # the annotators' rows only: every figure here is theirs
    # named as the estimators name a rater (judge · strategy): a labels file's annotators carry strategy "human"
    d = d.assign(judge=d["_rater"], strategy="")
    same = reliability is not None and ceiling is not None and "rater" in ceiling.columns \
        and set(map(str, ceiling["rater"])) == set(hs) \
        and list(getattr(reliability, "keys", None) or []) == list(by)
    panel = reliability if same else rater_reliability(d, hs, by=by, **ci)
    each = ceiling if same else human_ceiling(d, humans=hs, by=by, **ci)
    sc = scale_of(d)
    prs, grows = [], []
    for key, g in (d.groupby(list(by), observed=True, sort=True) if by else [((), d)]):
        key_d = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        w = wide(g, hs)
        for a, b in combinations(hs, 2):
            m = w[[a, b]].dropna().to_numpy(float)
            prs.append({**key_d, "annotator_a": a, "annotator_b": b, "raters": 2, "items": len(m),
                        **reliability_statistics(m, scale=sc, **ci)})
        m = w[w[hs].notna().all(axis=1)].to_numpy(float)
        spread = m.max(axis=1) - m.min(axis=1)
        grows.append({**key_d, "items": len(m), "gold_mean": float(m.mean(axis=1).mean()),
                      "unanimous": float((spread == 0).mean()), "spread_2": float((spread >= 2).mean())})
    pairs = _rows(prs, RELIABILITY_FIGURES, list(panel.measures.values()), [*by, "annotator_a", "annotator_b"],
                  ci["confidence"])
    gold = results(pd.DataFrame(grows), [
        Measure("items", "Items rated by every annotator", "count", note=None),
        Measure("gold_mean", "Mean gold score (the annotators' mean per item)", "scale points", note=None),
        Measure("unanimous", "Items all annotators rated the same", "proportion", note=None),
        Measure("spread_2", "Items whose ratings span 2 points or more", "proportion", note=None)], keys=by)
    return pairs, panel, each, gold


def _verdict_panel(d, by, hs, js, ci):
    from evallab.importers import gold_from_annotators
    from evallab.metrics import (
        accuracy,
        cohen_kappa_vs_gold,
        fleiss_kappa,
        judge_agreement,
        krippendorff_alpha,
    )
    from evallab.metrics._agreement import cohen_kappa_method
    from evallab.metrics._design import item_key

    ann = d[d["_rater"].isin(hs)].assign(judge=lambda x: x["_rater"])
    pairs = judge_agreement(ann, by, judges=hs, **ci)
    pairs = pairs[pairs["judge_a"] < pairs["judge_b"]].reset_index(drop=True)
    alpha = krippendorff_alpha(ann, by, judges=hs, **ci)
    fleiss = fleiss_kappa(ann, by, judges=hs, **ci)
    panel = results(alpha.to_frame().merge(fleiss.to_frame()[[*by, "kappa", "kappa_low", "kappa_high",
                                                              "kappa_method"]], on=by) if by else
                    pd.concat([alpha.to_frame(), fleiss.to_frame()[["kappa", "kappa_low", "kappa_high",
                                                                    "kappa_method"]]], axis=1),
                    [*alpha.measures.values(), fleiss.measures["kappa"]], level=alpha.level, keys=by)
    keys = [*by, "item_id"]
    gm = gold_from_annotators(ann, rule="majority", by=keys, annotator="_rater", label="verdict")
    gu = gold_from_annotators(ann, rule="unanimous", by=keys, annotator="_rater", label="verdict")
    s = gm.summary
    gold = results(pd.DataFrame([{"items": s["items"], "with_gold": s["with_gold"], "no_majority": s["no_majority"],
                                  "single_label": s["single_label"], "unanimous": gu.summary["with_gold"]}]),
                   [Measure(c, lab, "count", note=None) for c, lab in (
                       ("items", "Items labelled"), ("with_gold", "Majority gold"), ("no_majority", "No majority"),
                       ("single_label", "One label only"), ("unanimous", "Unanimous"))])
    each_rows = []
    for h in hs:
        others = gold_from_annotators(ann[ann["_rater"] != h], rule="majority", by=keys, annotator="_rater",
                                      label="verdict").table.dropna(subset=["gold"])
        mine = ann[ann["_rater"] == h][[*keys, "dataset", "verdict"]].merge(others[[*keys, "gold"]], on=keys)
        k, lo, hi, method = cohen_kappa_method(mine["gold"].astype(str), mine["verdict"].astype(str),
                                               clusters=item_key(mine), **ci)
        each_rows.append({"rater": h, "reference": "majority of the other annotators", "items": len(mine),
                          "agreement": float((mine["gold"] == mine["verdict"]).mean()) if len(mine) else np.nan,
                          "kappa": k, "kappa_low": lo, "kappa_high": hi, "kappa_method": method,
                          "note": "" if np.isfinite(k) else "not computable: a single category or no item"})
    each = results(pd.DataFrame(each_rows), [
        Measure("items", "Items", "count", note=None),
        Measure("agreement", "Raw agreement with the others' majority", "proportion"),
        Measure("kappa", "Cohen's kappa with the others' majority", "coefficient", "kappa_low", "kappa_high",
                method_column="kappa_method", n="items", n_unit="items", digits=2)],
        level=ci["confidence"], keys=["rater"])
    jd = d[d["_rater"].isin(js)].merge(gm.table[[*keys, "gold"]].rename(columns={"gold": "_gold"}), on=keys,
                                       how="left")
    jd = jd.assign(gold=jd["_gold"], judge=jd["_rater"]).drop(columns="_gold")
    if "dataset" not in jd.columns:
        jd["dataset"] = ""
    for c in ("order", "sample"):
        if c not in jd.columns:
            jd[c] = "" if c == "order" else 0
    kap = cohen_kappa_vs_gold(jd, [*by, "judge"], **ci)
    acc = accuracy(jd, [*by, "judge"], **ci)
    judge_gold = results(kap.to_frame().merge(acc.to_frame()[[*by, "judge", "accuracy", "accuracy_low",
                                                               "accuracy_high", "accuracy_method"]],
                                              on=[*by, "judge"]),
                         [*kap.measures.values(), acc.measures["accuracy"]], level=kap.level, keys=[*by, "judge"])
    return pairs, panel, each, gold, judge_gold, jd


def annotator_panel(table: pd.DataFrame, *, annotators: Sequence[str] = (), judges: Sequence[str] = (),
                    by: Sequence[str] = (), epsilon: float = 0.2, alpha: float = 0.05, confidence: float = 0.95,
                    n_resamples: int = 200, seed: int = 0, reliability: Results | None = None,
                    ceiling: Results | None = None) -> Panel:
    """Everything the annotator sections state, computed once.

    Parameters
    ----------
    table : DataFrame
        A tidy table with the annotators as raters (``role`` ``human``, or named in ``annotators``) beside the
        judges (:func:`load_labels`): scores (HANNA) or verdicts (``evallab label`` pass/warn/fail, 1/2/tie).
    annotators, judges : sequence of str
        Rater names (judges as ``judge · strategy`` when the strategy is set); empty: the ``role`` column.
    by : sequence of str
        Design columns (HANNA: ``criterion``); those the table lacks are dropped.
    epsilon, alpha : float
        The Alt-Test's cost-benefit margin ε (default 0.2, the authors' example) and false-discovery rate.
    confidence, n_resamples, seed
        The item bootstrap of every interval.
    reliability, ceiling : Results, optional
        The report's :func:`~evallab.metrics.rater_reliability` and :func:`~evallab.metrics.human_ceiling`
        (scores), reused rather than computed again when they are of the same annotators and ``by``.

    Returns
    -------
    Panel

    Raises
    ------
    DesignError
        No judge; no annotator named and no ``role`` column. (Fewer than two annotators computes nothing, named in
        ``too_few``, so each section says why; fewer than three only leaves the Alt-Test out, with the reason in
        ``alt_reason``.)
    """
    from evallab.metrics._scales import scale_of

    by = [c for c in by if c in table.columns]
    keep = [*by, "item_id", "dataset", "subset", "judge", "strategy", "role", "order", "sample", "verdict", "score",
            "error", "scale_min", "scale_max", "scale_step", "scale_level"]
    table = table[[c for c in dict.fromkeys(keep) if c in table.columns]]  # what the sections read, nothing else
    d = table.assign(_rater=_rater(table))
    if annotators:
        hs = [str(a) for a in annotators]
    elif "role" in d.columns:
        hs = sorted(map(str, d.loc[d["role"].astype("string") == "human", "_rater"].unique()))
    else:
        raise DesignError("no annotators named: pass annotators=[...] or give the table a 'role' column "
                          "(human/judge)", column="role")
    if len(hs) < 2:  # every section says so in one sentence (Panel.too_few) instead of failing the report
        none = results(pd.DataFrame(), [])
        return Panel("scores", hs, [], [], none, none, none, none, epsilon=epsilon, alpha=alpha,
                     confidence=confidence, too_few=hs)
    by = [c for c in by if d.loc[d["_rater"].isin(hs), c].notna().all()]  # a labels file has no criterion
    js = [str(j) for j in judges] or sorted(set(map(str, d["_rater"].unique())) - set(hs))
    if not js:
        raise DesignError("no judge beside the annotators: nothing to test against them", column="judge")
    ci = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    judged = d[d["_rater"].isin(js)].groupby("_rater")["item_id"].nunique().to_dict()
    labelled = d.loc[d["_rater"].isin(hs), "item_id"].astype(str)
    # the judges' other items only count for the plan (matched against the distinct labelled items; every row kept:
    # no row selection)
    on = d["item_id"].astype(str).isin(labelled.unique())
    if not on.all():
        d = d[on]
    scores = "score" in d.columns and d["score"].notna().any() and d["verdict"].isna().all() \
        if "verdict" in d.columns else True
    plan = {"judged_items": judged}
    if scores:
        d = d[d["score"].notna()]
        pairs, panel, each, gold = _score_panel(d, by, hs, ci, reliability, ceiling)
        alt, why = _alt(d, by, js, hs, "score", "neg_rmse", epsilon, alpha)
        jg = None
        lo, hi, step = scale_of(d)
        plan["scale"] = (lo, hi, step)
    else:
        d, dropped = _one_label(d, by)
        pairs, panel, each, gold, jg, jd = _verdict_panel(d, by, hs, js, ci)
        alt, why = _alt(d, by, js, hs, "verdict", "accuracy", epsilon, alpha)
        plan["judged"] = jd
        plan["dropped"] = dropped
    return Panel("scores" if scores else "verdicts", hs, js, by, pairs, panel, each, gold, jg, alt, why, epsilon,
                 alpha, confidence, plan)


# ----------------------------------------------------------------------------------------------- stating
def _name(r, by) -> str:
    return " · ".join(str(r[k]) for k in by)


def annotators_section(panel: Panel) -> Section:
    """The annotators' agreement as a panel and pairwise (weighted kappa / Krippendorff's alpha ordinal on
    scores; Cohen's kappa / Krippendorff's alpha nominal / Fleiss' kappa on verdicts; item-bootstrap intervals),
    the gold they produced (the mean on scores; the majority with the no-majority count on verdicts), each
    annotator against the others, and (verdicts) each judge against the majority gold."""
    p, sec = panel, Section()
    if p.too_few is not None:
        return sec.text(_too_few_humans("The annotators' agreement", p.too_few))
    n = len(p.annotators)
    if p.kind == "scores":
        r = p.panel.reset_index(drop=True)
        i = int(r["alpha_ordinal"].astype(float).idxmin())
        where = f" on {_name(r.loc[i], p.by)}" if p.by else ""
        sec.finding(f"As a panel, the {n} annotators agree least{where}: Krippendorff's ordinal alpha",
                    r.estimate("alpha_ordinal", i))
        pr = p.pairs.reset_index(drop=True)
        j = int(pr["kappa_quadratic"].astype(float).idxmin())
        sec.finding(f"The least agreeing pair is {pr.loc[j, 'annotator_a']} and {pr.loc[j, 'annotator_b']}"
                    + (f" on {_name(pr.loc[j], p.by)}" if p.by else "") + ": quadratic-weighted kappa",
                    pr.estimate("kappa_quadratic", j))
        sec.table(pr, {**{k: k.capitalize() for k in p.by}, "annotator_a": "Annotator A", "annotator_b": "Annotator B",
                       "kappa_quadratic": pr.measures["kappa_quadratic"].label.replace(" (mean over rater pairs)",
                                                                                      ""),
                       "kappa_linear": pr.measures["kappa_linear"].label.replace(" (mean over rater pairs)", ""),
                       "alpha_ordinal": pr.measures["alpha_ordinal"].label},
                  caption="Each pair of annotators, on the items both rated", csv_name="annotator-pairs")
        g = p.gold.reset_index(drop=True)
        sec.text(f"The gold is the mean of the {n} annotators' ratings per item: "
                 + (f"{int(g['items'].max()):,} items on each of {len(g)} {p.by[0]} values" if p.by else
                    f"{int(g['items'].sum()):,} items")
                 + f"; {'both' if n == 2 else f'all {n}'} gave the same rating on {g['unanimous'].mean():.0%} of them on average, and their "
                   f"ratings span 2 points or more on {g['spread_2'].mean():.0%}.")
        sec.table(g, {**{k: k.capitalize() for k in p.by}, **{m: g.measures[m].label for m in g.measures}},
                  caption="The gold the annotators produced (the mean per item)", csv_name="annotator-gold")
        e = p.each.reset_index(drop=True)
        k = int(e["spearman"].astype(float).idxmin())
        sec.finding(f"Against the mean of the others, {e.loc[k, 'rater']} agrees least"
                    + (f" (on {_name(e.loc[k], p.by)})" if p.by else "") + ": Spearman's ρ", e.estimate("spearman", k))
        sec.table(e, {**{k: k.capitalize() for k in p.by}, "rater": "Annotator", "spearman": e.measures[
            "spearman"].label, "kappa_quadratic": e.measures["kappa_quadratic"].label, "mae": e.measures["mae"].label},
                  caption="Each annotator against the mean of the others", csv_name="annotator-each")
        sec.metrics["annotator_pairs_kappa_quadratic"] = [
            {**{k: str(x[k]) for k in p.by}, "a": x["annotator_a"], "b": x["annotator_b"],
             "kappa_quadratic": float(x["kappa_quadratic"])} for _, x in pr.iterrows()]
        return sec
    r = p.panel.reset_index(drop=True)
    g = p.gold.iloc[0]
    if r["alpha"].notna().any():
        sec.finding(f"As a panel, the {n} annotators agree with Krippendorff's alpha (nominal)",
                    r.estimate("alpha", 0))
    else:
        sec.text(f"Krippendorff's alpha of the {n} annotators is not computable: {r.loc[0, 'note']}.")
    sec.finding(f"Majority gold: {int(g['with_gold'])} of {int(g['items'])} labelled items have one; "
                f"{int(g['no_majority'])} have no majority (left without gold), {int(g['unanimous'])} are unanimous"
                + (f", {int(g['single_label'])} carry one label only" if int(g["single_label"]) else "") + ".")
    sec.table(r, {**{k: k.capitalize() for k in p.by}, "alpha": "Krippendorff's alpha (nominal)",
                  "kappa": "Fleiss' kappa", "units": "Items"}, caption="The annotators as a panel")
    sec.table(p.pairs, {**{k: k.capitalize() for k in p.by}, "judge_a": "Annotator A", "judge_b": "Annotator B",
                        "agreement": "Raw agreement", "kappa": "Cohen's kappa"},
              caption="Each pair of annotators", csv_name="annotator-pairs")
    sec.table(p.gold, {c: p.gold.measures[c].label for c in p.gold.measures},
              caption="The gold the annotators produced (majority; unanimity beside it)")
    sec.table(p.each, {"rater": "Annotator", "agreement": p.each.measures["agreement"].label,
                       "kappa": p.each.measures["kappa"].label},
              caption="Each annotator against the majority of the others", csv_name="annotator-each")
    jg = p.judge_gold.reset_index(drop=True)
    if jg["kappa"].notna().any():
        i = int(jg["kappa"].astype(float).idxmax())
        sec.finding(f"Against the majority gold, {jg.loc[i, 'judge']} agrees best: Cohen's kappa",
                    jg.estimate("kappa", i))
    sec.table(jg, {**{k: k.capitalize() for k in p.by}, "judge": "Judge", "accuracy": "Agreement with the gold",
                   "kappa": "Cohen's kappa"}, caption="Each judge against the annotators' majority gold",
              csv_name="judge-vs-gold")
    if p.plan_inputs.get("dropped"):
        sec.caveats.append(f"{p.plan_inputs['dropped']} (item, judge) pairs whose orders or samples have no majority "
                           "verdict are left out of the judge's side.")
    sec.metrics["annotator_gold"] = {k: int(v) for k, v in g.items()}
    return sec


def alt_test_section(panel: Panel) -> Section:
    """Can the judge replace one of the annotators? The Alt-Test per judge (× prompt) and design cell: passes at
    the panel's ε or not, the winning rate ω, the average advantage probability ρ and the smallest ε at which it
    would pass — the overall count first, then the best configuration, then the table; one line saying why when
    the table cannot support the test (fewer than 3 annotators per item)."""
    p, sec = panel, Section()
    if p.too_few is not None:  # the test needs three annotators per item (Calderon et al. 2025)
        return sec.text(_too_few_humans("The Alt-Test (Calderon, Reichart & Dror, ACL 2025)", p.too_few,
                                        at_least=3))
    if p.alt is None:
        return sec.text(p.alt_reason)
    a = p.alt.reset_index(drop=True)
    eps = p.epsilon
    header, noun = _rater_words(a["judge"])
    cells = " × ".join([noun, *p.by])
    k, n = int(a["passes"].sum()), len(a)
    at_01 = int((a["min_epsilon"].astype(float) <= 0.1).sum())
    sec.text(f"{k} of {n} ({cells}) configurations pass the Alt-Test at ε = {eps:g}; {at_01} would pass at "
             f"ε = 0.1 (the authors' margin for crowd workers)"
             + (", none at 0." if not (a["min_epsilon"] == 0).any() else
                f", {int((a['min_epsilon'] == 0).sum())} even at ε = 0."))
    per = a.groupby("judge", sort=False).agg(passes=("passes", "sum"), cells=("passes", "size"),
                                             rho=("advantage_probability", "mean"),
                                             eps=("min_epsilon", lambda s: s.max() if s.notna().all() else np.nan))
    best = per.sort_values(["rho", "passes"], ascending=False).index[0]
    b = per.loc[best]
    eps_all = ("passes on every one even at ε = 0" if b["eps"] == 0 else
               f"passes on every one from ε = {b['eps']:.3f}") if np.isfinite(b["eps"]) else \
        "fails on some even at ε = 1"
    over = f" over the {int(b['cells'])} {p.by[0]} values" if p.by and b["cells"] > 1 else ""
    sec.text(f"The best by average advantage probability{over} is {best}: ρ = {b['rho']:.1%}, passing on "
             f"{int(b['passes'])} of {int(b['cells'])} at ε = {eps:g}; it "
             + (eps_all if over else (f"would pass from ε = {b['eps']:.3f}" if np.isfinite(b["eps"]) else
                                       "fails even at ε = 1")) + ".")
    failing = a[~a["passes"].astype(bool)]
    if len(failing):
        worst = failing.sort_values("advantage_probability").iloc[0]
        sec.text(f"{len(failing)} fail at ε = {eps:g}; the weakest is {worst['judge']}"
                 + (f" on {_name(worst, p.by)}" if p.by else "")
                 + f" (ρ = {worst['advantage_probability']:.1%}, "
                 + (f"passing from ε = {worst['min_epsilon']:.3f})." if np.isfinite(worst["min_epsilon"]) else
                    "failing even at ε = 1)."))
    sec.text("The procedure: " + ALT_TEST.format(alpha=p.alpha) + ". " +
             ("Ratings are scored by minus the RMSE from the other annotators' ratings." if p.kind == "scores" else
              "Labels are scored by the share of the other annotators who gave the same label."))
    shown = a.sort_values([*p.by, "advantage_probability"], ascending=[True] * len(p.by) + [False])
    sec.table(shown, {**{c: c.capitalize() for c in p.by}, "judge": header, "passes": f"Passes at ε = {eps:g}",
                      "winning_rate": "Winning rate ω",
                      "advantage_probability": "Average advantage probability ρ",
                      "min_epsilon": "Smallest ε that passes", "items": "Items"},
              caption=f"The Alt-Test (ε = {eps:g}, BY at α = {p.alpha:g}) per configuration", csv_name="alt-test")
    sec.metrics["alt_test_cells"] = [
        {**{c: str(x[c]) for c in p.by}, "judge": str(x["judge"]), "passes": bool(x["passes"]),
         "winning_rate": float(x["winning_rate"]), "advantage_probability": float(x["advantage_probability"]),
         "min_epsilon": float(x["min_epsilon"]) if np.isfinite(x["min_epsilon"]) else None}
        for _, x in a.iterrows()]
    sec.metrics["alt_test"] = {"epsilon": eps, "passing": k, "configurations": n, "passing_at_0.1": at_01,
                               "best": str(best), "best_advantage_probability": float(b["rho"]),
                               "best_min_epsilon_all": float(b["eps"]) if np.isfinite(b["eps"]) else None}
    sec.conclusions.append(f"{k} of {n} judge configurations could replace an annotator at ε = {eps:g} "
                           f"(Alt-Test); the best, {best}, has average advantage probability ρ = {b['rho']:.1%}.")
    return sec


def _more(n: int, hw_now: float, target: float) -> int:
    """Items for a half-width ``target`` from ``n`` items with half-width ``hw_now``, assuming 1/√n."""
    return int(math.ceil(n * (hw_now / target) ** 2))


def next_round_section(panel: Panel, *, half_width: float = 0.05, coefficient_half_width: float = 0.05) -> Section:
    """The plan for the next round of labels: how many more items to label for a stated target half-width.

    On verdicts: the gold labels for the pass rate (pointwise) or the win rate of output 1 (pairwise) within
    ±``half_width`` with the best judge (by kappa against the majority gold) on every item it judged — the planner
    (:func:`~evallab.metrics.gold_for_half_width`, PPI++ at the optimal λ, Angelopoulos, Duchi & Zrnic 2023),
    from the judge's sensitivity and specificity against the gold. On every table: the items for the annotators'
    agreement (Krippendorff's alpha) and for the judge's kappa against the gold to reach ±``coefficient_half_width``,
    scaling the current item-bootstrap half-width by 1/√n (stated as the assumption).
    """
    from evallab.metrics import gold_for_half_width

    p, sec = panel, Section()
    if p.too_few is not None:
        return sec.text(_too_few_humans("The plan for the next round of labels (from the annotators' agreement)",
                                        p.too_few))
    rows = []
    col = "alpha_ordinal" if p.kind == "scores" else "alpha"
    r = p.panel.reset_index(drop=True)
    hw = (r[f"{col}_high"].astype(float) - r[f"{col}_low"].astype(float)) / 2
    units = r["items"] if "items" in r.columns and p.kind == "scores" else r.get("items", r.get("units"))
    if hw.notna().any():
        i = int(hw.idxmax())
        n_now = int(units.iloc[i])
        need = _more(n_now, float(hw.iloc[i]), coefficient_half_width)
        rows.append(dict(question=f"items every annotator labels, for the annotators' Krippendorff's alpha "
                                  f"within ±{coefficient_half_width:g}" + (f" (widest: {_name(r.loc[i], p.by)})"
                                                                          if p.by else ""),
                         have=n_now, half_width_now=float(hw.iloc[i]), needed=need, more=max(0, need - n_now),
                         assumes=SQRT_N, source="item bootstrap of the current labels; 1/√n scaling"))
    if p.kind == "verdicts":
        jg = p.judge_gold.reset_index(drop=True)
        ok = jg["kappa"].notna() & jg["kappa_low"].notna()
        if ok.any():
            i = int(jg.loc[ok, "kappa"].astype(float).idxmax())
            hwk = (float(jg.loc[i, "kappa_high"]) - float(jg.loc[i, "kappa_low"])) / 2
            n_now = int(jg.loc[i, "items"])
            need = _more(n_now, hwk, coefficient_half_width)
            rows.append(dict(question=f"gold items for {jg.loc[i, 'judge']}'s Cohen's kappa against the gold "
                                      f"within ±{coefficient_half_width:g}", have=n_now, half_width_now=hwk,
                             needed=need, more=max(0, need - n_now), assumes=SQRT_N,
                             source="current kappa interval; 1/√n scaling"))
        if jg["kappa"].notna().any():  # the corrected rate uses the best judge, with or without a kappa interval
            i = int(jg["kappa"].astype(float).idxmax())
            jd = p.plan_inputs["judged"]
            mine = jd[jd["judge"] == jg.loc[i, "judge"]]
            lab = mine.dropna(subset=["gold"])
            cats = sorted(set(lab["gold"].astype(str)) - {"tie", "warn"})
            if len(cats) == 2:
                pos = "pass" if "pass" in cats else "1"
                neg = [c for c in cats if c != pos][0]
                g, v = lab["gold"].astype(str), lab["verdict"].astype(str)
                rate = float((g == pos).mean())
                se = float((v[g == pos] == pos).mean()) if (g == pos).any() else float("nan")
                sp = float((v[g == neg] == neg).mean()) if (g == neg).any() else float("nan")
                items = int(p.plan_inputs["judged_items"].get(jg.loc[i, "judge"], mine["item_id"].nunique()))
                if all(np.isfinite([se, sp])) and 0 < rate < 1 and items >= 2:
                    plan = gold_for_half_width(half_width, rate=rate, sensitivity=se, specificity=sp,
                                               items=items, confidence=p.confidence)
                    have = int(lab["item_id"].nunique())
                    what = "pass rate" if pos == "pass" else "win rate of output 1"
                    wj = plan["with_judge"]
                    rows.append(dict(question=f"gold items for the corrected {what} within ±{half_width:.0%} with "
                                              f"{jg.loc[i, 'judge']} on its {items:,} judged items (PPI++)",
                                     have=have, half_width_now=float("nan"), needed=wj,
                                     more=max(0, int(wj) - have) if np.isfinite(wj) else float("nan"),
                                     assumes=f"gold {what} {rate:.2f}, the judge's Se {se:.2f} and Sp {sp:.2f} "
                                             f"against the majority gold",
                                     source="PPI++ variance at the optimal λ (Angelopoulos, Duchi & Zrnic 2023); "
                                            "evallab plan gold",
                                     note="" if np.isfinite(wj) else
                                     "not computable: no number of gold items up to the judged items reaches it"))
    if not rows:
        return sec.text("No interval to plan from: the annotators' agreement has no interval on this table "
                        "(too few items, or n_resamples = 0).")
    plan = results(pd.DataFrame(rows), [
        Measure("have", "Labelled now", "count", note=None), Measure("half_width_now", "Half-width now",
                                                                     "coefficient", digits=3),
        Measure("needed", "Needed in all", "count"), Measure("more", "More to label", "count")], keys=["question"])
    first = plan.iloc[0]
    sec.text("To " + first["question"].replace("items every annotator labels, for", "get")
              + f": {int(first['needed']):,} items, " + (f"{int(first['more']):,} more than the {int(first['have']):,} "
                                                          "labelled now" if first["more"] else "already reached")
              + f" (assuming {SQRT_N}).")
    sec.table(plan, {"question": "Target", "have": "Labelled now", "half_width_now": "Half-width now",
                     "needed": "Needed in all", "more": "More to label", "assumes": "Assumes", "source": "Source"},
              caption=f"The next round of labels ({p.confidence:.0%} intervals)")
    sec.metrics["next_round"] = [{k: (None if isinstance(v, float) and not np.isfinite(v) else v)
                                  for k, v in x.items()} for x in plan.to_frame().to_dict("records")]
    return sec


__all__ = ["alt_test_section", "annotator_panel", "annotators_section", "load_labels",
           "next_round_section"]
