"""Corrected rates: PPI++ equal to ppi_py's own functions, Rogan–Gladen recomputed by hand, the delta-method
standard error against the spread of estimates over simulated datasets, refusals, Holm across subsets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import ppi_py
import pytest
from statsmodels.stats.multitest import multipletests

from evallab import simulation as S
from evallab.errors import DataError, EvallabError
from evallab.metrics import _corrected as C


def _arrays(seed=0, n=300, N=1700, se=0.85, sp=0.75, prev=0.6):
    rng = np.random.default_rng(seed)
    y_all = (rng.random(n + N) < prev).astype(float)
    f_all = np.where(y_all == 1, rng.random(n + N) < se, rng.random(n + N) > sp).astype(float)
    return y_all[:n], f_all[:n], f_all[n:]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ppi_mean_equals_ppi_py(seed):
    y, f, fu = _arrays(seed)
    r = C.ppi_mean(y, f, fu, confidence=0.9)
    est = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, f, fu))[0])  # lam=None: ppi_py tunes lambda itself
    lo, hi = (float(np.ravel(x)[0]) for x in ppi_py.ppi_mean_ci(y, f, fu, alpha=0.1))
    assert r["estimate"] == pytest.approx(est, abs=1e-12)
    assert (r["low"], r["high"]) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    # lambda: Cov(Y, f) / ((1 + n/N) Var(f over all items)), computed here with numpy
    n, N = len(y), len(fu)
    lam = np.cov(y, f, ddof=0)[0, 1] / ((1 + n / N) * np.var(np.r_[f, fu], ddof=1))
    assert r["lam"] == pytest.approx(np.clip(lam, 0, 1), abs=1e-12)
    # the classical interval with n_eff gold labels is as wide as PPI++'s
    half = (hi - lo) / 2
    assert 1.6448536269514722 * np.sqrt(np.var(y) / r["n_eff"]) == pytest.approx(half, rel=1e-9)


def test_ppi_mean_pvalue_is_ppi_py_at_the_same_lambda():
    y, f, fu = _arrays(4)
    r = C.ppi_mean(y, f, fu, null=0.5)
    p = float(np.ravel(ppi_py.ppi_mean_pval(y, f, fu, null=0.5, lam=r["lam"]))[0])
    assert r["pvalue"] == pytest.approx(p, abs=1e-12)


def test_a_useless_judge_gets_lambda_zero_and_the_classical_interval():
    y, _, _ = _arrays(5)
    f = np.zeros_like(y)
    r = C.ppi_mean(y, f, np.zeros(1000))
    lo, hi = ppi_py.classical_mean_ci(y, alpha=0.05)
    assert r["lam"] == 0.0
    assert (r["low"], r["high"]) == (pytest.approx(float(lo)), pytest.approx(float(hi)))


def test_rogan_gladen_by_hand():
    # 10 gold items: 6 positive (judge passes 5), 4 negative (judge passes 1); 20 items in all, judge passes 12
    y = np.array([1, 1, 1, 1, 1, 1, 0, 0, 0, 0], float)
    f = np.array([1, 1, 1, 1, 1, 0, 1, 0, 0, 0], float)
    f_all = np.r_[f, np.array([1] * 6 + [0] * 4, float)]
    r = C.rogan_gladen(y, f, f_all, min_youden=0.0)
    se, sp, p = 5 / 6, 3 / 4, 12 / 20
    pi = (p + sp - 1) / (se + sp - 1)
    assert (r["sensitivity"], r["specificity"], r["judge_rate"]) == pytest.approx((se, sp, p))
    assert r["estimate"] == pytest.approx(pi)
    J = se + sp - 1
    v1, v0, vf = np.var(f[:6], ddof=1), np.var(f[6:], ddof=1), np.var(f_all, ddof=1)
    var = (vf / 20 + pi**2 * v1 / 6 + (1 - pi) ** 2 * v0 / 4 - 2 * pi * v1 / 20 - 2 * (1 - pi) * v0 / 20) / J**2
    assert r["se"] == pytest.approx(np.sqrt(var))


def test_rogan_gladen_standard_error_matches_the_spread_over_datasets():
    """The delta-method se (with the Se/Sp uncertainty) against the standard deviation of the estimate over 400
    simulated datasets of the same design — independent of the formula."""
    d, j = S.LabellingDesign(n_items=2000, n_gold=300, prevalence=0.6), S.MisclassifyingJudge(0.9, 0.7)
    est, ses = [], []
    for s in range(400):
        df = S.simulate_labelled(d, j, s)
        iv = C.item_values(df)
        lab = iv["y"].notna()
        r = C.rogan_gladen(iv.loc[lab, "y"], iv.loc[lab, "f"], iv["f"])
        est.append(r["estimate"])
        ses.append(r["se"])
    assert np.mean(ses) == pytest.approx(np.std(est), rel=0.1)
    # without the Se/Sp term the se would be the binomial se of the judge's rate / J: far too small
    assert np.mean(ses) > 2 * np.sqrt(0.66 * 0.34 / 2000) / 0.6


def test_rogan_gladen_refuses_ties_one_class_and_a_chance_judge():
    assert "binary" in C.rogan_gladen([0, 0.5, 1], [0, 1, 1], [0, 1, 1])["note"]
    assert "each class" in C.rogan_gladen([1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 0, 0])["note"]
    r = C.rogan_gladen([1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 1, 0])
    assert np.isnan(r["estimate"]) and "no better than chance" in r["note"]


def test_corrected_rates_on_a_tidy_table_equal_the_arrays_built_by_hand():
    d, j = S.LabellingDesign(n_items=600, n_gold=120, prevalence=0.3), S.MisclassifyingJudge(0.8, 0.9, samples=3,
                                                                                            unparsed_rate=0.1)
    df = S.simulate_labelled(d, j, 3)
    r = C.corrected_rates(df, ["judge"], n_resamples=0).iloc[0]
    # by hand: item value = share of parsed replies that pass
    ok = df[df["verdict"].notna()]
    f = ok.assign(p=(ok["verdict"] == "pass").astype(float)).groupby("item_id")["p"].mean()
    gold = df.dropna(subset=["gold"]).groupby("item_id")["gold"].first().eq("pass").astype(float)
    lab = f.index.isin(gold.index)
    y = gold.reindex(f.index[lab]).to_numpy()
    est = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, f[lab].to_numpy(), f[~lab].to_numpy()))[0])
    lo, hi = ppi_py.ppi_mean_ci(y, f[lab].to_numpy(), f[~lab].to_numpy(), alpha=0.05)
    assert r["ppi"] == pytest.approx(est) and r["ppi_low"] == pytest.approx(float(lo[0]))
    assert r["ppi_high"] == pytest.approx(float(hi[0]))
    assert r["items"] == len(f) and r["gold_items"] == lab.sum() and r["unparsed"] == df["verdict"].isna().sum()
    assert r["judge_only"] == pytest.approx(f.mean())
    assert r["gold_only"] == pytest.approx(y.mean())
    pos, neg = f[lab][y == 1], f[lab][y == 0]
    se, sp = pos.mean(), 1 - neg.mean()
    assert r["rg"] == pytest.approx((f.mean() + sp - 1) / (se + sp - 1))


def test_thin_subsets_are_refused_and_the_others_adjusted_with_holm():
    d, j = S.LabellingDesign(n_items=800, n_gold=200, prevalence=0.55), S.MisclassifyingJudge(0.9, 0.8)
    df = S.simulate_labelled(d, j, 8)
    df["subset"] = np.where(df["item_id"].str[1:].astype(int) < 700, np.where(
        df["item_id"].str[1:].astype(int) % 2 == 0, "even", "odd"), "thin")
    r = C.corrected_rates(df, ["subset"], null=0.5, n_resamples=0).set_index("subset")
    thin = r.loc["thin"]
    assert thin["gold_items"] < C.MIN_GOLD and np.isnan(thin["ppi"]) and np.isnan(thin["rg"])
    assert thin["note"] == f"not computable: {thin['gold_items']} gold items with a verdict, fewer than min_gold=30"
    ok = r.loc[["even", "odd"]]
    assert ok["ppi"].notna().all()
    assert ok["ppi_p_adjusted"].to_numpy() == pytest.approx(multipletests(ok["ppi_p"], method="holm")[1])
    assert np.isnan(thin["ppi_p_adjusted"])
    bh = C.corrected_rates(df, ["subset"], null=0.5, adjust="bh", n_resamples=0).set_index("subset")
    assert bh.loc[["even", "odd"], "ppi_p_adjusted"].to_numpy() == pytest.approx(
        multipletests(ok["ppi_p"], method="fdr_bh")[1])


def test_corrected_difference_equals_ppi_py_on_item_differences():
    t = S.TwoSystems(n_items=500, n_gold=100)
    df = S.simulate_two_systems(t, S.MisclassifyingJudge(0.85, 0.8), 2)
    r = C.corrected_difference(df, "system", "A", "B", n_resamples=0).iloc[0]
    w = df.assign(v=(df["verdict"] == "pass").astype(float), g=df["gold"].map({"pass": 1.0, "fail": 0.0}))
    fa, fb = (w[w["system"] == s].set_index("item_id") for s in ("A", "B"))
    dy, df_ = (fa["g"] - fb["g"]), (fa["v"] - fb["v"])
    lab = dy.notna()
    est = float(np.ravel(ppi_py.ppi_mean_pointestimate(dy[lab].to_numpy(), df_[lab].to_numpy(),
                                                        df_[~lab].to_numpy()))[0])
    assert r["pairs"] == 500 and r["gold_pairs"] == 100
    assert r["ppi"] == pytest.approx(est)
    assert r["judge_only"] == pytest.approx(df_.mean())
    assert r["gold_only"] == pytest.approx(dy[lab].mean())
    with pytest.raises(DataError, match="system='C' not in the table"):
        C.corrected_difference(df, "system", "A", "C")


def test_hide_gold_keeps_exactly_n_items_with_all_their_replies():
    df = S.simulate_pairwise(S.PairwiseDesign(n_items=50, samples=2), [S.PairwiseJudge()], 1)
    h = C.hide_gold(df, 12, seed=3)
    kept = h.dropna(subset=["gold"])
    assert kept["item_id"].nunique() == 12 and len(kept) == 12 * 4
    pd.testing.assert_frame_equal(h.drop(columns="gold"), df.drop(columns="gold"))
    assert (kept["gold"].to_numpy() == df.loc[kept.index, "gold"].to_numpy()).all()
    with pytest.raises(EvallabError):
        C.hide_gold(df, -1)


def test_item_values_refuse_two_gold_labels_on_one_item():
    df = S.simulate_pairwise(S.PairwiseDesign(n_items=5), [S.PairwiseJudge()], 1)
    df.loc[0, "gold"] = "2" if df.loc[0, "gold"] == "1" else "1"
    with pytest.raises(DataError, match="different gold labels"):
        C.item_values(df)


# -- the estimate type: measures, units, per-row interval methods (issue 25) ------------------------------------
def _tidy(items: list[tuple[str, list[str], str | None]], judge: str = "j") -> pd.DataFrame:
    """A pointwise tidy table from (item id, verdicts of its samples, gold) rows."""
    rows = [dict(dataset="d", item_id=i, judge=judge, order="", sample=s, verdict=v, gold=g)
            for i, vs, g in items for s, v in enumerate(vs)]
    return pd.DataFrame(rows)


def test_corrected_rates_carry_their_measures_and_each_rows_interval_method():
    from statsmodels.stats.proportion import proportion_confint

    from evallab._results import WILSON, Results, bootstrap_method

    # judge "one": one binary reply per item (Wilson); judge "two": two samples per item, shares vary (bootstrap);
    # judge "all": passes every sample of every item (the Wilson fallback on the item count)
    rng = np.random.default_rng(0)
    gold = ["pass" if x else "fail" for x in rng.random(80) < 0.6]
    one = _tidy([(f"i{k}", ["pass" if rng.random() < 0.7 else "fail"], g if k < 40 else None)
                 for k, g in enumerate(gold)], "one")
    two = _tidy([(f"i{k}", ["pass" if rng.random() < 0.7 else "fail" for _ in range(2)], g if k < 40 else None)
                 for k, g in enumerate(gold)], "two")
    every = _tidy([(f"i{k}", ["pass", "pass"], g if k < 40 else None) for k, g in enumerate(gold)], "all")
    r = C.corrected_rates(pd.concat([one, two, every], ignore_index=True), ["judge"], n_resamples=300, confidence=0.9)
    assert isinstance(r, Results) and r.level == 0.9 and r.keys == ["judge"]
    m = r.measures
    assert (m["judge_only"].label, m["judge_only"].unit, m["judge_only"].n, m["judge_only"].n_unit) == (
        "Pass rate, judge only", "proportion", "items", "items")
    assert (m["ppi"].low, m["ppi"].high, m["ppi"].method) == ("ppi_low", "ppi_high", C.PPI_METHOD)
    assert m["rg"].method == C.RG_METHOD and m["gold_only"].n == "gold_items"
    assert {c: m[c].unit for c in ("items", "gold_items", "ppi_n_eff", "ppi_p", "ppi_lam")} == {
        "items": "count", "gold_items": "count", "ppi_n_eff": "count", "ppi_p": "p-value", "ppi_lam": "coefficient"}
    r = r.set_index("judge", drop=False)
    # one reply per item: the Wilson interval of the passes, as statsmodels computes it
    k = int((one["verdict"] == "pass").sum())
    e = r.estimate("judge_only", "one")
    assert e.method == WILSON and (e.low, e.high) == pytest.approx(proportion_confint(k, 80, 0.1, "wilson"))
    assert e.n == 80 and str(e).endswith("(90% CI, Wilson score, n = 80 items)")
    assert r.estimate("judge_only", "two").method == bootstrap_method(300, "item")
    e = r.estimate("judge_only", "all")
    assert e.method == f"{WILSON} on 80 items (every item has the same share)"
    assert (e.low, e.high) == pytest.approx(proportion_confint(80, 80, 0.1, "wilson"))
    # gold only: binary gold, Wilson on the 40 gold items
    kg = sum(g == "pass" for g in gold[:40])
    e = r.estimate("gold_only", "one")
    assert e.method == WILSON and (e.low, e.high) == pytest.approx(proportion_confint(kg, 40, 0.1, "wilson"))
    assert r.estimate("ppi", "one").method == C.PPI_METHOD


def test_gold_with_ties_names_the_clt_interval_and_a_pairwise_table_names_its_rate():
    from scipy import stats

    rng = np.random.default_rng(1)
    gold = rng.choice(["1", "2", "tie"], 90, p=[0.4, 0.4, 0.2])
    rows = [dict(dataset="d", item_id=f"i{k}", judge="j", order="ab", sample=0,
                 verdict=rng.choice(["1", "2"]), gold=g if k < 45 else None) for k, g in enumerate(gold)]
    r = C.corrected_rates(pd.DataFrame(rows), ["judge"], n_resamples=0)
    assert r.measures["ppi"].label == "Win rate of output 2, PPI++"
    e = r.estimate("gold_only", 0)
    y = pd.Series(gold[:45]).map({"1": 0.0, "2": 1.0, "tie": 0.5}).to_numpy()
    lo, hi = stats.norm.interval(0.95, loc=y.mean(), scale=y.std() / np.sqrt(len(y)))
    assert e.method == C.CLT_METHOD and (e.low, e.high) == pytest.approx((lo, hi))


def test_corrected_difference_names_the_paired_bootstrap_and_the_wilson_bound_of_identical_sides():
    from statsmodels.stats.proportion import proportion_confint

    from evallab._results import WILSON, bootstrap_method

    t = S.TwoSystems(n_items=300, n_gold=60)
    df = S.simulate_two_systems(t, S.MisclassifyingJudge(0.85, 0.8), 4)
    r = C.corrected_difference(df, "system", "A", "B", n_resamples=200)
    assert r.measures["judge_only"].unit == "pp" and r.measures["ppi"].label == "Difference of pass rates, PPI++"
    assert r.estimate("judge_only", 0).method == bootstrap_method(200, "item", paired=True)
    assert r.estimate("gold_only", 0).method == C.CLT_METHOD and r.estimate("ppi", 0).n == 300
    # B graded exactly as A: no item differs, the bound from the Wilson interval of 0 of 300 items
    same = pd.concat([df[df["system"] == "A"], df[df["system"] == "A"].assign(system="B")], ignore_index=True)
    e = C.corrected_difference(same, "system", "A", "B", n_resamples=200).estimate("judge_only", 0)
    assert e.method == f"bound from the {WILSON} interval of 0 of 300 items changed"
    assert e.high == pytest.approx(proportion_confint(0, 300, 0.05, "wilson")[1]) and e.low == -e.high


def test_side_by_side_keeps_each_rows_method_n_and_unit():
    from evallab._results import WILSON

    d, j = S.LabellingDesign(n_items=400, n_gold=100, prevalence=0.5), S.MisclassifyingJudge(0.9, 0.8)
    df = S.simulate_labelled(d, j, 2)
    rates = C.corrected_rates(df, ["judge"], n_resamples=0)
    truth = C.gold_rate(S.simulate_labelled(S.LabellingDesign(n_items=400, n_gold=400, prevalence=0.5), j, 2))
    long = C.side_by_side(rates, ["judge"], truth).set_index("method", drop=False)
    assert long.measures["estimate"].label == "Pass rate" and long.measures["estimate"].unit == "proportion"
    assert [long.estimate("estimate", m).method for m in C.METHODS.values()] == [
        WILSON, WILSON, C.PPI_METHOD, C.RG_METHOD]
    assert long.estimate("estimate", "judge only").n == 400 and long.estimate("estimate", "gold labels only").n == 100
    assert truth.measures["truth"].unit == "proportion" and truth.estimate("truth", 0).n == 400
    assert long["covers"].notna().all()


def test_judge_adds_nothing_where_ppi_gives_it_no_weight():
    # gold items: the judge fails every gold PASS and passes every gold FAIL, Cov(Y, f) < 0: λ is clipped to 0
    y = np.array([1.0, 0.0] * 20)
    f, fu = 1 - y, np.array([1.0, 1.0, 0.0] * 20)
    r = C.ppi_mean(y, f, fu)
    assert r["lam"] == 0.0
    assert r["estimate"] == pytest.approx(float(np.ravel(ppi_py.ppi_mean_pointestimate(y, f, fu, lam=0.0))[0]))
    assert r["estimate"] == pytest.approx(y.mean()) and r["n_eff"] == pytest.approx(len(y))
    assert C.judge_adds_nothing(r["lam"], r["n_eff"], len(y))
    # a judge that agrees with gold on 36 of 40 gets weight and is worth more than the 40 labels
    good = y.copy()
    good[:4] = 1 - good[:4]
    q = C.ppi_mean(y, good, np.array([1.0, 0.0] * 100))
    assert q["lam"] > 0.5 and q["n_eff"] > 41 and not C.judge_adds_nothing(q["lam"], q["n_eff"], len(y))
    assert not C.judge_adds_nothing(float("nan"), 40, 40)
