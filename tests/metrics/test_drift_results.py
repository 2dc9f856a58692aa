"""Issue 25: the drift and evaluator estimators return :class:`evallab.Results` whose measures say what each column
is (label, unit, interval columns, n and what it counts), and whose per-row interval methods name what computed each
interval — checked against intervals computed here with statsmodels and scipy, never against values the code
printed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from evallab import verdicts as V
from evallab._results import WILSON, Results, bootstrap_method
from evallab.metrics import _agreement as agreement
from evallab.metrics import _drift as drift
from evallab.metrics import _evaluators as evaluators
from evallab.reporting._tables import to_html

CP = "Clopper–Pearson (exact binomial) on items"
N_RES = 200


def _table(n_items=40, orders=("ab", "ba"), samples=1, flip_every=5, gold=True, judge="old", seed=0):
    """A tidy table: ``n_items`` items, every order and sample, verdicts drawn with a seed; gold on every item."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        g = "1" if i % 2 else "2"
        for o in orders:
            for s in range(samples):
                v = g if rng.random() < 0.8 else ("2" if g == "1" else "1")
                rows.append(dict(item_id=f"q{i}", subset="S", strategy="Vanilla", order=o, sample=s, judge=judge,
                                 verdict=v, gold=g if gold else None))
    return V.coerce(pd.DataFrame(rows))


def _flip(df, every, judge="new"):
    """A copy where every ``every``-th reply's verdict is swapped."""
    out = df.copy()
    idx = out.index[::every]
    out.loc[idx, "verdict"] = out.loc[idx, "verdict"].map({"1": "2", "2": "1"})
    return out.assign(judge=judge)


def _per_item(rep):
    p = rep.pairs[rep.pairs["both_parsed"]]
    return p.assign(ch=p["changed"].astype(float), n=1.0).groupby("item_id")[["ch", "n"]].sum()


def _scipy_ratio_bootstrap(num, den, n_resamples=N_RES, confidence=0.95):
    res = sps.bootstrap((np.asarray(num, float), np.asarray(den, float)),
                        lambda a, b, axis: a.sum(axis) / b.sum(axis), paired=True, vectorized=True,
                        n_resamples=n_resamples, confidence_level=confidence, method="percentile",
                        random_state=np.random.default_rng(0))
    return res.confidence_interval.low, res.confidence_interval.high


def test_drift_groups_are_results_with_their_measures():
    base = _table()
    rep = drift.compare(base, _flip(base, 5), by=["subset"], n_resamples=N_RES, confidence=0.9)
    for t in (rep.groups, rep.overall):
        assert isinstance(t, Results) and t.level == 0.9
        m = t.measures
        assert (m["flip_rate"].label, m["flip_rate"].unit, m["flip_rate"].low, m["flip_rate"].high) == \
            ("Verdicts changed", "proportion", "flip_rate_low", "flip_rate_high")
        # the share is over replies; its exact interval counts each item once, so its n is the items compared
        assert (m["flip_rate"].n, m["flip_rate"].n_unit) == ("items_compared", "items")
        assert m["kappa"].unit == "coefficient" and m["delta_accuracy"].unit == "pp"
        assert (m["delta_accuracy"].low, m["delta_accuracy"].high) == ("delta_low", "delta_high")
        assert m["flip_p_adjusted"].unit == m["mcnemar_p"].unit == "p-value"  # kept after the gate filled them
        assert all(m[c].unit == "count" for c in ("items", "changed", "both_parsed", "same_ab", "mcnemar_b"))
    assert rep.groups.keys == ["subset", "group"] and isinstance(rep.flips, Results)
    assert rep.flips.measures["count"].unit == "count"
    ft = rep.flip_table()
    assert isinstance(ft, Results) and {m.unit for m in ft.measures.values()} == {"count"}
    assert int(ft.to_numpy().sum()) == len(rep.pairs)


def test_two_orders_bootstrap_and_one_order_wilson_and_kappa_methods():
    base = _table()
    rep = drift.compare(base, _flip(base, 5), by=[], n_resamples=N_RES)
    e = rep.overall.estimate("flip_rate")
    per = _per_item(rep)
    # two replies per item: Clopper–Pearson on the items, k = items · flip rate (scipy's beta quantiles)
    assert e.method == CP == rep.overall.estimate("agreement").method
    k, n_items = len(per) * per["ch"].sum() / per["n"].sum(), len(per)
    assert (e.low, e.high) == pytest.approx((sps.beta.ppf(0.025, k, n_items - k + 1),
                                             sps.beta.ppf(0.975, k + 1, n_items - k)))
    assert e.n == n_items and e.n_unit == "items"  # the interval's unit: each item once
    assert rep.overall["kappa_method"].iloc[0] == bootstrap_method(N_RES, "item")
    assert rep.overall["delta_method"].iloc[0] == bootstrap_method(N_RES, "item", paired=True)
    # one reply per item: the exact binomial interval (statsmodels' "beta"), the asymptotic standard error for kappa
    one = _table(orders=("ab",))
    rep1 = drift.compare(one, _flip(one, 4), by=[], n_resamples=N_RES)
    o = rep1.overall.iloc[0]
    e1 = rep1.overall.estimate("flip_rate")
    assert e1.method == CP
    assert (e1.low, e1.high) == pytest.approx(proportion_confint(o["changed"], o["both_parsed"], method="beta"))
    assert o["kappa_method"] == agreement.KAPPA_ASYMPTOTIC
    labels = sorted({"1", "2"})
    p = rep1.pairs
    table = pd.crosstab(p["verdict_baseline"], p["verdict_candidate"]).reindex(index=labels, columns=labels,
                                                                                fill_value=0)
    ref = cohens_kappa(table.to_numpy(float), return_results=True)
    z = sps.norm.ppf(0.975)
    assert (o["kappa_low"], o["kappa_high"]) == pytest.approx((ref["kappa"] - z * ref["std_kappa"],
                                                                ref["kappa"] + z * ref["std_kappa"]))


def test_no_change_names_the_wilson_fallbacks_not_a_bootstrap():
    base = _table()
    same = drift.compare(base, base.assign(judge="copy"), by=[], n_resamples=N_RES)
    o = same.overall.iloc[0]
    n = base["item_id"].nunique()
    # every item changed 0 of 2: the same exact method as at any other count, 0 of n items (statsmodels' bounds)
    assert o["flip_rate_method"] == CP
    assert (o["flip_rate_low"], o["flip_rate_high"]) == pytest.approx(proportion_confint(0, n, method="beta"))
    assert o["delta_method"] == f"bound from the {WILSON} interval of 0 of {n} items changed"
    assert o["kappa_method"] == "" and np.isnan(o["kappa_low"])  # degenerate: no interval, no method
    assert "every item gives the same value" in o["note"]
    # the page names the method that computed each interval (under the table: one row, so the column's method)
    text = to_html(same.overall, columns=["group", "flip_rate", "delta_accuracy"]).html
    assert f": {CP}" in text and "paired item bootstrap" not in text
    assert f"bound from the {WILSON} interval of 0 of {n} items changed" in text


def test_a_table_without_gold_or_parsed_replies_says_why():
    base = _table(gold=False)
    rep = drift.compare(base, _flip(base, 3), by=[], n_resamples=0)
    o = rep.overall.iloc[0]
    assert "accuracy not computable: no paired reply has a gold label" in o["note"]
    assert rep.overall.estimate("delta_accuracy").value is None
    cand = base.assign(judge="new", verdict=pd.NA)
    none = drift.compare(base, cand, by=[], n_resamples=0).overall
    assert none.estimate("flip_rate").value is None
    assert str(none.estimate("flip_rate")).startswith("not computable: no reply both judges parsed")


def test_evaluator_metrics_methods_per_row():
    # J1: discrete, one reply per item -> Wilson; J2: continuous preferences -> item bootstrap
    items = [f"q{i}" for i in range(30)]
    rng = np.random.default_rng(1)
    v1 = rng.choice(["1", "2"], size=30, p=[0.7, 0.3])
    pref = rng.uniform(1, 2, size=30)
    df = V.coerce(pd.DataFrame({"item_id": items * 2, "judge": ["J1"] * 30 + ["J2"] * 30,
                                "verdict": list(v1) + ["1" if p < 1.5 else "2" for p in pref]}))
    df["score"] = [np.nan] * 30 + list(pref)
    ev = evaluators.evaluator_metrics(df, n_resamples=N_RES).set_index("judge")
    assert isinstance(ev, Results)
    m = ev.measures["p_prefer_output_1"]
    assert (m.unit, m.low, m.high, m.method_column, m.n, m.n_unit) == (
        "proportion", "p_prefer_output_1_low", "p_prefer_output_1_high", "p_prefer_output_1_method", "parsed",
        "replies")
    k = int((v1 == "1").sum())
    assert ev.loc["J1", "p_prefer_output_1_method"] == WILSON and ev.loc["J1", "parsed"] == 30
    assert (ev.loc["J1", "p_prefer_output_1_low"], ev.loc["J1", "p_prefer_output_1_high"]) == pytest.approx(
        proportion_confint(k, 30, method="wilson"))
    assert ev.loc["J2", "p_prefer_output_1_method"] == bootstrap_method(N_RES, "item")
    in_item_order = np.argsort(items)  # the estimator resamples items in their sorted order
    assert (ev.loc["J2", "p_prefer_output_1_low"], ev.loc["J2", "p_prefer_output_1_high"]) == pytest.approx(
        _scipy_ratio_bootstrap((2 - pref)[in_item_order], np.ones(30)))
    assert ev.loc["J1", "p_prefer_shown_first_method"] == ""  # no shown order: no interval, no method
    assert ev.measures["longer_is_output_1"].low is None


def test_win_rates_and_length_controlled_measures():
    df = V.coerce(pd.DataFrame({"item_id": list("abcde"), "judge": "J", "verdict": ["2", "2", "1", "1", pd.NA]}))
    df["generator_2"] = "m"
    w = evaluators.win_rates(df, n_resamples=N_RES)
    assert isinstance(w, Results) and "low" not in w.columns
    e = w.estimate("win_rate")
    assert e.method == WILSON and (e.low, e.high) == pytest.approx(proportion_confint(2, 4, method="wilson"))
    assert (e.n, e.n_unit) == (4, "replies")
    lc = evaluators.length_controlled_win_rates(df, pd.DataFrame({"item_id": list("abcde"), "len_1": 1,
                                                                 "len_2": 2}))
    m = lc.measures["lc_win_rate"]
    assert (m.low, m.high, m.method) == ("lc_win_rate_low", "lc_win_rate_high", evaluators.LC_METHOD)
    assert lc["note"].iloc[0].startswith("not computable")  # 4 pairs: too few for the GLM


def test_rank_tables_are_results_and_say_why_tau_is_missing():
    df = V.coerce(pd.DataFrame({"item_id": ["a", "b", "a", "b"], "judge": ["X", "X", "Y", "Y"],
                                "verdict": ["1", "2", "2", "2"]}))
    df["generator_2"] = ["m1", "m2", "m1", "m3"]  # one common model
    t = evaluators.win_rate_rank_agreement(df)
    assert isinstance(t, Results) and t.measures["tau"].unit == "coefficient"
    assert t.measures["pvalue"].unit == "p-value" and t.measures["n"].unit == "count"
    assert t["n"].iloc[0] == 1 and np.isnan(t["tau"].iloc[0])
    assert t["note"].iloc[0] == "not computable: Kendall's tau needs 2 or more common entities (1 here)"
    assert str(t.estimate("tau")) == t["note"].iloc[0]
    a = pd.Series([1.0, 2.0, 3.0, 4.0, 5.0], index=list("vwxyz"))
    b = pd.Series([2.0, 1.0, 3.0, 5.0, 4.0], index=list("vwxyz"))
    board = pd.DataFrame({"version": "V", "leaderboard": ["A"] * 5 + ["B"] * 5, "model": list("vwxyz") * 2,
                          "win_rate": list(a) + list(b), "is_baseline": False})
    lb = evaluators.leaderboard_rank_agreement(board)
    ref = sps.kendalltau(a.to_numpy(), b.to_numpy())
    assert lb["tau"].iloc[0] == pytest.approx(ref.statistic) and lb["note"].iloc[0] == ""
    h = evaluators.rank_headline(lb)
    assert h["row"] == 0 and lb.estimate("tau", h["row"]).n_unit == "models"
