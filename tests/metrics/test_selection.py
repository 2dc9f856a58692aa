"""Which items to label (issue 31, item 3): inclusion probabilities, the weighted estimators against hand
computations and a library reference, unbiasedness by simulation, the plan, and the refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import ppi_py
import pytest
from scipy.stats import norm

from evallab.errors import ArgumentError, DataError
from evallab.metrics import select_items, selected_rate, selection_plan

Z = norm.ppf(0.975)


def _repeated(n_items: int, samples: int = 3, seed: int = 0) -> pd.DataFrame:
    """A judge with ``samples`` replies per item; a reply names gold with an item's own probability."""
    rng = np.random.default_rng(seed)
    gold = rng.random(n_items) < 0.6
    q = np.where(rng.random(n_items) < 0.6, 0.97, rng.uniform(0.4, 0.8, n_items))
    right = rng.random((n_items, samples)) < q[:, None]
    passed = np.where(right, gold[:, None], ~gold[:, None])
    return pd.DataFrame({"item_id": np.repeat([f"q{i}" for i in range(n_items)], samples), "judge": "J",
                         "sample": np.tile(np.arange(samples), n_items),
                         "verdict": np.where(passed.ravel(), "pass", "fail"),
                         "gold": np.repeat(np.where(gold, "pass", "fail"), samples)})


def _with_gold_on(table: pd.DataFrame, sel: pd.DataFrame) -> pd.DataFrame:
    keep = set(sel.loc[sel["selected"], "item_id"])
    return table.assign(gold=table["gold"].where(table["item_id"].isin(keep), None))


@pytest.mark.parametrize("strategy", ["random", "stratified", "active"])
def test_inclusion_probabilities_sum_to_the_labels_asked_for(strategy):
    t = _repeated(90)
    sel = select_items(t, 24, strategy, seed=3)
    pi = sel["inclusion_probability"].to_numpy()
    assert len(sel) == 90 and ((pi > 0) & (pi <= 1)).all()
    assert pi.sum() == pytest.approx(24, abs=1e-9)
    assert np.allclose(sel["weight"], 1 / pi)
    if strategy != "active":  # a fixed-size draw: exactly n
        assert sel["selected"].sum() == 24
    chosen = sel.loc[sel["selected"], "label_order"].sort_values().tolist()
    assert chosen == list(range(1, int(sel["selected"].sum()) + 1))


def test_stratified_probabilities_are_labels_over_stratum_size_counted_by_hand():
    t = _repeated(90)
    sel = select_items(t, 24, "stratified", seed=1)
    shares = t.assign(p=t["verdict"].eq("pass")).groupby("item_id", sort=False)["p"].mean()
    # strata by hand: the majority verdict and the share of samples giving it (3 samples: 2/3 or 3/3)
    stratum = np.where(shares > 0.5, "pass", "fail") + np.where((shares == 0) | (shares == 1), "-3", "-2")
    hand = pd.Series(stratum, index=shares.index).reindex(sel["item_id"]).to_numpy()
    for h in np.unique(hand):
        rows = sel[hand == h]
        assert rows["stratum"].nunique() == 1  # the same strata as the hand count
        assert rows["inclusion_probability"].iloc[0] == pytest.approx(rows["selected"].sum() / len(rows))
        assert rows["selected"].sum() >= min(len(rows), 3)


def test_active_puts_more_probability_where_the_judge_is_unsure_and_keeps_the_uniform_floor():
    t = _repeated(90)
    sel = select_items(t, 24, "active", seed=0, tau=0.2)
    share = t.assign(p=t["verdict"].eq("pass")).groupby("item_id", sort=False)["p"].mean()
    split = ((share > 0) & (share < 1)).reindex(sel["item_id"]).to_numpy()
    pi = sel["inclusion_probability"].to_numpy()
    assert pi[split].min() > pi[~split].max()
    assert pi.min() >= 0.2 * 24 / 90 - 1e-12


def test_active_estimate_equals_the_hand_computation():
    """θ̂_λ = mean(λf + (y − λf)ξ/π) with λ̂ = −Cov(A, B)/Var(B), A = ξy/π, B = f(1 − ξ/π); CLT interval."""
    f = np.array([0.9, 0.2, 0.6, 0.7, 0.35, 0.8])
    verdict = np.where(f >= 0.5, "pass", "fail")
    conf = np.where(f >= 0.5, f, 1 - f)
    y = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    xi = np.array([1, 1, 1, 0, 1, 0], bool)
    pi = np.array([0.5, 0.8, 0.4, 0.3, 0.6, 0.5])
    t = pd.DataFrame({"item_id": list("abcdef"), "verdict": verdict, "confidence": conf,
                      "gold": np.where(xi, np.where(y == 1, "pass", "fail"), None)})
    sel = pd.DataFrame({"item_id": np.array(list("abcdef"))[xi], "strategy": "active",
                        "inclusion_probability": pi[xi], "items": 6})
    A, B = xi * y / pi, f * (1 - xi / pi)
    lam = float(np.clip(-np.cov(A, B)[0, 1] / np.var(B, ddof=1), 0, 1))
    terms = A + lam * B
    est, se = terms.mean(), terms.std(ddof=1) / np.sqrt(6)
    r = selected_rate(t, sel).iloc[0]
    assert r["lam"] == pytest.approx(lam) and 0 < lam < 1  # a tuned λ, not a clipped one
    assert r["rate"] == pytest.approx(est) and r["se"] == pytest.approx(se)
    assert (r["rate_low"], r["rate_high"]) == pytest.approx((est - Z * se, est + Z * se))
    assert r["labels"] == 4 and r["judge_rate"] == pytest.approx(f.mean())


def test_stratified_estimate_equals_the_hand_computation():
    # two strata of 4 items; 3 labelled in the first, 2 in the second
    f = np.array([1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    y = np.array([1, 0, 1, np.nan, 0, 1, np.nan, np.nan])
    h = np.array(["P"] * 4 + ["F"] * 4)
    t = pd.DataFrame({"item_id": [f"i{k}" for k in range(8)], "verdict": np.where(f == 1, "pass", "fail"),
                      "gold": [None if np.isnan(v) else ("pass" if v else "fail") for v in y]})
    lab = ~np.isnan(y)
    sel = pd.DataFrame({"item_id": t["item_id"][lab], "strategy": "stratified", "stratum": h[lab],
                        "stratum_size": 4, "stratum_judge_mean": f[lab], "inclusion_probability": [.75] * 3 + [.5] * 2,
                        "items": 8})
    e1, e2 = y[:3] - 1, y[4:6] - 0
    est = f.mean() + 0.5 * e1.mean() + 0.5 * e2.mean()  # = 0.5 + 0.5·(−1/3) + 0.5·(1/2)
    assert est == pytest.approx(0.5 - 1 / 6 + 1 / 4)
    yh = np.array([1 + e1.mean(), 0 + e2.mean()])
    var_y = 0.5 * (np.var(y[:3], ddof=1) + (yh[0] - est) ** 2) + 0.5 * (np.var(y[4:6], ddof=1) + (yh[1] - est) ** 2)
    var = var_y / 8 + 0.25 * (1 - 3 / 4) * np.var(e1, ddof=1) / 3 + 0.25 * (1 - 2 / 4) * np.var(e2, ddof=1) / 2
    r = selected_rate(t, sel).iloc[0]
    assert r["rate"] == pytest.approx(est) and r["se"] == pytest.approx(np.sqrt(var))


def test_random_selection_is_estimated_by_ppi_plus_plus_as_ppi_py_computes_it():
    t = _repeated(80, seed=4)
    sel = select_items(t, 30, "random", seed=2)
    r = selected_rate(_with_gold_on(t, sel), sel).iloc[0]
    items = t.groupby("item_id", sort=False).agg(f=("verdict", lambda v: (v == "pass").mean()),
                                                 y=("gold", lambda g: float(g.iloc[0] == "pass")))
    chosen = items.index.isin(sel.loc[sel["selected"], "item_id"])
    y, f, fu = items["y"][chosen].to_numpy(), items["f"][chosen].to_numpy(), items["f"][~chosen].to_numpy()
    lo, hi = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.05, lam=r["lam"])
    assert (r["rate_low"], r["rate_high"]) == pytest.approx((float(np.ravel(lo)[0]), float(np.ravel(hi)[0])))
    assert "PPI++" in r["method"]


@pytest.mark.parametrize("strategy, draws", [("active", 60), ("stratified", 40)])
def test_unbiased_for_the_items_own_pass_rate(strategy, draws):
    """Over repeated draws on one fixed table, the mean estimate is the table's true pass rate (computed here from
    its gold) within four Monte-Carlo standard errors."""
    t = _repeated(100, seed=7)
    truth = t.groupby("item_id")["gold"].first().eq("pass").mean()
    est = [selected_rate(_with_gold_on(t, s), s)["rate"].iloc[0]
           for s in (select_items(t, 40, strategy, seed=100 + r) for r in range(draws))]
    mc = np.std(est, ddof=1) / np.sqrt(draws)
    assert abs(np.mean(est) - truth) < 4 * mc, (np.mean(est), truth, mc)
    assert mc < 0.01  # the check has power: a bias of a few points would fail it


def test_the_plan_without_confidence_is_the_gold_only_bound():
    t = pd.DataFrame({"item_id": [f"q{i}" for i in range(50)], "verdict": ["pass"] * 30 + ["fail"] * 20})
    plan = selection_plan(t, 10).set_index("strategy")
    assert plan.loc["random", "half_width"] == pytest.approx(Z * np.sqrt(0.6 * 0.4 / 10))
    assert plan[["half_width"]].loc[["stratified", "active"]].isna().all().all()
    assert "no confidence" in plan.loc["active", "note"]


def test_the_plan_with_calibrated_confidence_prefers_active_and_is_near_the_realised_width():
    rng = np.random.default_rng(5)
    n_items = 600
    conf = np.where(rng.random(n_items) < 0.7, 0.98, rng.uniform(0.5, 0.75, n_items))
    gold = rng.random(n_items) < 0.6
    right = rng.random(n_items) < conf  # calibrated: the verdict is right with its stated confidence
    t = pd.DataFrame({"item_id": [f"q{i}" for i in range(n_items)], "confidence": conf,
                      "verdict": np.where(right == gold, "pass", "fail"), "gold": np.where(gold, "pass", "fail")})
    plan = selection_plan(t, 60).set_index("strategy")
    assert plan.loc["active", "ratio_to_random"] < 0.9
    rows = [selected_rate(_with_gold_on(t, s), s).iloc[0] for s in (select_items(t, 60, "active", seed=r)
                                                                     for r in range(15))]
    assert np.mean([r["rate_high"] - r["rate_low"] for r in rows]) / 2 == pytest.approx(plan.loc["active", "half_width"], rel=0.2)


def test_refusals():
    one = pd.DataFrame({"item_id": [f"q{i}" for i in range(20)], "verdict": ["pass", "fail"] * 10})
    with pytest.raises(DataError, match="active selection needs the judge's confidence"):
        select_items(one, 5, "active")
    with pytest.raises(DataError, match="needs the judge's verdicts"):
        select_items(one[["item_id"]], 5, "stratified")
    with pytest.raises(ArgumentError, match="from 2 to 19"):
        select_items(one, 20)
    with pytest.raises(ArgumentError, match="strategy 'best'"):
        select_items(one, 5, "best")
    with pytest.raises(DataError, match="confidence outside"):
        select_items(one.assign(confidence=[1.5] + [0.9] * 19), 5, "active")
    with pytest.raises(DataError, match="2 judges"):
        select_items(pd.concat([one.assign(judge="A"), one.assign(judge="B")]), 5, "stratified")
    t = _repeated(40)
    sel = select_items(t, 10, "active", seed=0)
    gold_on_all_but_one = _with_gold_on(t, sel)
    first = sel.loc[sel["selected"], "item_id"].iloc[0]
    gold_on_all_but_one.loc[gold_on_all_but_one["item_id"] == first, "gold"] = None
    with pytest.raises(DataError, match="have no gold label"):
        selected_rate(gold_on_all_but_one, sel)
    with pytest.raises(DataError, match="drawn from 40 items"):
        selected_rate(t[t["item_id"] != "q39"], sel)
