"""The Alt-Test (Calderon et al., ACL 2025) against a hand computation and a simulation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from evallab.errors import DesignError
from evallab.metrics import alt_test

LABELS = {  # 10 items, 4 annotators and a judge
    "A": [1, 1, 0, 0, 1, 0, 1, 2, 2, 0],
    "B": [1, 0, 0, 1, 1, 0, 1, 2, 1, 0],
    "C": [1, 1, 0, 0, 0, 1, 2, 2, 2, 0],
    "D": [0, 1, 0, 0, 1, 0, 1, 2, 2, 1],
    "J": [1, 1, 0, 0, 1, 1, 1, 2, 0, 0],
}


def _long(labels: dict) -> pd.DataFrame:
    return pd.DataFrame([{"item_id": f"q{i}", "judge": r, "verdict": v}
                         for r, vs in labels.items() for i, v in enumerate(vs) if v is not None])


def _hand(labels: dict, judge: str, annotators: list[str], eps: float, score):
    """Plain loops: W_f, W_h per left-out annotator, the t statistic by its formula, the one-sided p-value from
    Student's t cdf, and Benjamini–Yekutieli by its definition (p_(i) · m · Σ1/k / i, cumulative minimum)."""
    out = []
    for j in annotators:
        wf, wh = [], []
        for i in range(len(labels[judge])):
            others = [labels[k][i] for k in annotators if k != j]
            sf, sh = score(labels[judge][i], others), score(labels[j][i], others)
            wf.append(1.0 if sf >= sh else 0.0)
            wh.append(1.0 if sh >= sf else 0.0)
        d = np.array(wh) - np.array(wf)
        n = len(d)
        with np.errstate(divide="ignore"):
            t = (d.mean() - eps) / (d.std(ddof=1) / math.sqrt(n))
        out.append(dict(annotator=j, rho_judge=np.mean(wf), rho_annotator=np.mean(wh), t=t,
                        p=stats.t.cdf(t, n - 1)))
    m = len(out)
    c = sum(1 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda k: out[k]["p"])
    adj = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        k = order[rank - 1]
        running = min(running, out[k]["p"] * m * c / rank)
        adj[k] = min(running, 1.0)
    for o, a in zip(out, adj, strict=True):
        o["p_adj"] = a
    return out


def _acc(x, others):
    return sum(x == o for o in others) / len(others)


def test_hand_computation_categorical():
    df = _long(LABELS)
    per = alt_test(df, judges=["J"], epsilon=0.1, per_annotator=True).set_index("annotator")
    hand = _hand(LABELS, "J", ["A", "B", "C", "D"], 0.1, _acc)
    # the library agrees with the loops, and with scipy's / statsmodels' own numbers
    for h in hand:
        r = per.loc[h["annotator"]]
        assert r["rho_judge"] == pytest.approx(h["rho_judge"])
        assert r["rho_annotator"] == pytest.approx(h["rho_annotator"])
        assert r["t"] == pytest.approx(h["t"])
        assert r["p_value"] == pytest.approx(h["p"])
        assert r["p_adjusted"] == pytest.approx(h["p_adj"])
        assert r["items"] == 10
    sm = multipletests([h["p"] for h in hand], alpha=0.05, method="fdr_by")
    assert list(per.loc[[h["annotator"] for h in hand], "rejected"]) == list(sm[0])
    # annotator A left out, counted by hand (others B, C, D): J and A tie on eight items; J loses q5 (J=1 agrees
    # with C only, A=0 with B and D) and q8 (J=0 agrees with none, A=2 with C and D)
    assert per.loc["A", "rho_judge"] == pytest.approx(8 / 10)
    assert per.loc["A", "rho_annotator"] == pytest.approx(10 / 10)
    summ = alt_test(df, judges=["J"], epsilon=0.1).iloc[0]
    rejected = int(sm[0].sum())
    assert summ["winning_rate"] == pytest.approx(rejected / 4)
    assert summ["passes"] == (rejected / 4 >= 0.5)
    assert summ["advantage_probability"] == pytest.approx(np.mean([h["rho_judge"] for h in hand]))
    assert summ["annotators"] == 4 and summ["items"] == 10


def test_hand_computation_scale():
    ratings = {"A": [1, 2, 3, 4, 5, 3, 2, 4], "B": [2, 2, 3, 5, 4, 3, 1, 4], "C": [1, 3, 4, 4, 5, 2, 2, 5],
               "J": [1, 2, 3, 4, 5, 3, 2, 4]}

    def neg_rmse(x, others):
        return -math.sqrt(sum((x - o) ** 2 for o in others) / len(others))

    per = alt_test(_long(ratings), judges=["J"], scoring="neg_rmse", epsilon=0.2,
                   per_annotator=True).set_index("annotator")
    for h in _hand(ratings, "J", ["A", "B", "C"], 0.2, neg_rmse):
        if h["annotator"] == "A":  # J copies A: every item a tie, d = 0 < ε with no variance → p = 0
            assert per.loc["A", "p_value"] == 0.0 and per.loc["A", "rho_judge"] == 1.0
            continue
        assert per.loc[h["annotator"], "t"] == pytest.approx(h["t"])
        assert per.loc[h["annotator"], "p_value"] == pytest.approx(h["p"])


def test_fewer_than_three_annotators_refused():
    two = {k: LABELS[k] for k in ("A", "B", "J")}
    with pytest.raises(DesignError, match=r"item 'q0' has 2 annotator label\(s\).*at least 3"):
        alt_test(_long(two), judges=["J"])
    gap = {k: list(v) for k, v in LABELS.items() if k != "D"}
    gap["C"][4] = None  # q4 keeps two annotators
    with pytest.raises(DesignError, match="item 'q4'"):
        alt_test(_long(gap), judges=["J"])


def _simulate(rng, n_items: int, n_annotators: int, annotator_acc: float, judge_accs: dict, k: int = 4):
    """Labels from a true category: each rater is right with its accuracy, else a uniformly wrong category."""
    truth = rng.integers(0, k, n_items)

    def rate(acc):
        wrong = (truth + rng.integers(1, k, n_items)) % k
        return np.where(rng.random(n_items) < acc, truth, wrong)

    labels = {f"h{a}": rate(annotator_acc) for a in range(n_annotators)}
    labels.update({name: rate(acc) for name, acc in judge_accs.items()})
    return _long({r: list(v) for r, v in labels.items()})


def test_simulation_passes_as_accuracy_says():
    """Annotators right 70% of the time on 4 categories; a judge right 95% of the time represents the others at
    least as well as any annotator and passes at ε = 0.2, one right 30% of the time fails, and ρ orders them."""
    rng = np.random.default_rng(7)
    passed = {"good": 0, "bad": 0}
    for _ in range(10):
        df = _simulate(rng, 150, 5, 0.7, {"good": 0.95, "bad": 0.3})
        r = alt_test(df, judges=["good", "bad"], epsilon=0.2).set_index("judge")
        passed["good"] += bool(r.loc["good", "passes"])
        passed["bad"] += bool(r.loc["bad", "passes"])
        assert r.loc["good", "advantage_probability"] > r.loc["bad", "advantage_probability"]
        assert r.loc["good", "min_epsilon"] < 0.2 < r.loc["bad", "min_epsilon"]
    assert passed == {"good": 10, "bad": 0}


def test_smallest_epsilon_is_the_boundary():
    rng = np.random.default_rng(3)
    df = _simulate(rng, 120, 4, 0.7, {"same": 0.7})
    e = alt_test(df, judges=["same"]).iloc[0]["min_epsilon"]
    assert 0 < e < 1
    assert alt_test(df, judges=["same"], epsilon=min(e + 1e-3, 1)).iloc[0]["passes"]
    assert not alt_test(df, judges=["same"], epsilon=e - 1e-3).iloc[0]["passes"]


def test_groups_are_tested_apart_and_render():
    rng = np.random.default_rng(11)
    a = _simulate(rng, 60, 3, 0.7, {"llm": 0.9}).assign(criterion="RE")
    b = _simulate(rng, 60, 3, 0.7, {"llm": 0.4}).assign(criterion="CH")
    both = alt_test(pd.concat([a, b]), ["criterion"], judges=["llm"]).set_index("criterion")
    for name, part in (("RE", a), ("CH", b)):
        alone = alt_test(part, judges=["llm"]).iloc[0]
        assert both.loc[name, "winning_rate"] == alone["winning_rate"]
        assert both.loc[name, "advantage_probability"] == pytest.approx(alone["advantage_probability"])
    r = alt_test(a, judges=["llm"])
    assert r.keys == ["judge"] and "3 annotators" in str(r.estimate("winning_rate"))


def test_smallest_epsilon_is_exact_with_an_annotator_on_one_item():
    """The smallest ε is solved from the t quantiles, not searched: just above it the judge passes, just below it
    fails — also when one annotator labelled a single item (no p-value: left out of the BY adjustment, still in
    the winning rate's denominator)."""
    rng = np.random.default_rng(5)
    df = _simulate(rng, 80, 3, 0.7, {"llm": 0.75})
    lone = df[df["judge"] == df["judge"].iloc[0]].iloc[:1].assign(judge="late")
    for table in (df, pd.concat([df, lone])):
        e = alt_test(table, judges=["llm"]).iloc[0]["min_epsilon"]
        assert 0 < e < 1
        assert alt_test(table, judges=["llm"], epsilon=min(e + 1e-9, 1)).iloc[0]["passes"]
        assert not alt_test(table, judges=["llm"], epsilon=e - 1e-6).iloc[0]["passes"]
