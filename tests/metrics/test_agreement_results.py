"""evallab.metrics._agreement returns Results whose measures carry each estimate's meaning: label, unit, interval
columns, level, the method that computed each row's interval, n and its unit. Values are checked against
scikit-learn's cohen_kappa_score, statsmodels' fleiss_kappa / cohens_kappa / Wilson interval, the krippendorff
package and hand counts — never against what the code printed."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

from evallab import verdicts as V
from evallab._results import WILSON, Results, bootstrap_method
from evallab.errors import DesignError
from evallab.metrics import _agreement as A

B = 100
BOOT = bootstrap_method(B)
assert BOOT == f"item bootstrap (percentile, {B} resamples)"


def _table(orders=("ab", "ba"), judges=("A", "B", "C"), n=24, seed=3, gold=True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        g = "1" if i % 2 else "2"
        for j, skill in zip(judges, (0.9, 0.7, 0.6), strict=False):
            for o in orders:
                v = g if rng.random() < skill else ("2" if g == "1" else "1")
                rows.append(dict(item_id=f"q{i:02d}", judge=j, order=o, verdict=v, gold=g if gold else ""))
    return V.coerce(pd.DataFrame(rows))


def _interval_measure(res: Results, col: str, n: str, n_unit: str, unit: str):
    m = res.measures[col]
    assert (m.low, m.high, m.method_column, m.n, m.n_unit, m.unit, m.note) == (
        f"{col}_low", f"{col}_high", f"{col}_method", n, n_unit, unit, "note")
    assert res.level == 0.95
    return m


# ------------------------------------------------------------------------------------------ pairwise_statistics
def test_pairwise_statistics_names_each_interval_and_its_unit():
    t = _table()
    res = A.pairwise_statistics(t, ["judge"], n_resamples=B)
    assert isinstance(res, Results) and res.keys == ["judge"]
    for c in ("ab", "ba"):  # n of a per-order accuracy: the replies parsed with gold in that order (its Wilson n)
        _interval_measure(res, f"acc_{c}", f"parsed_{c}", "parsed replies", "proportion")
    _interval_measure(res, "acc", "n", "items", "proportion")
    _interval_measure(res, "position_consistency", "both_parsed", "pairs", "proportion")
    assert res.measures["n"].unit == "count"
    # one reply per item and order: the per-order accuracies and consistency are Wilson intervals of the counts
    a = res[res["judge"] == "A"].index[0]
    ga = t[(t["judge"] == "A") & (t["order"] == "ab")]
    k = int((ga["verdict"] == ga["gold"]).sum())
    assert res.at[a, "acc_ab"] == pytest.approx(k / len(ga))
    assert res.at[a, "acc_ab_method"] == WILSON
    assert (res.at[a, "acc_ab_low"], res.at[a, "acc_ab_high"]) == pytest.approx(
        proportion_confint(k, len(ga), method="wilson"))
    assert res.estimate("acc_ab", a).n == len(ga) == res.at[a, "parsed_ab"]
    assert res.at[a, "position_consistency_method"] == WILSON
    # Acc. = mean of the two orders with an item bootstrap (both orders of an item move together)
    assert res.at[a, "acc_method"] == BOOT
    e = res.estimate("acc", a)
    assert e.method == BOOT and e.n == 24 and e.n_unit == "items" and e.level == 0.95
    assert f"{BOOT}, n = 24 items" in str(e)


def test_pairwise_statistics_without_resamples_has_no_bootstrap_interval():
    res = A.pairwise_statistics(_table(), ["judge"], n_resamples=0)
    assert res["acc_low"].isna().all() and res["acc_method"].eq("").all()
    assert not res.estimate("acc", 0).has_interval
    # the Wilson interval needs no resampling and stays, named
    assert res["acc_ab_method"].eq(WILSON).all() and res["acc_ab_low"].notna().all()


def test_acc_interval_of_a_partly_parsed_item_is_named_as_the_pooled_accuracy():
    t = _table(judges=("A",))
    t.loc[t.index[1], "verdict"] = pd.NA  # item q00 order ba unparsed: not every item has both orders parsed
    res = A.pairwise_statistics(t, ["judge"], n_resamples=B)
    assert res.at[0, "acc_method"] == f"{BOOT} of the pooled accuracy (correct / parsed over both orders)"
    assert np.isfinite(res.at[0, "acc_low"])


def test_one_order_table_says_acc_is_not_computable():
    res = A.pairwise_statistics(_table(orders=("ab",)), ["judge"], n_resamples=B)
    e = res.estimate("acc", 0)
    assert e.value is None and "the table records only order ab" in str(e) and "not computable" in str(e)
    assert res.at[0, "acc_method"] == ""


# --------------------------------------------------------------------------------------------------- accuracy
def test_accuracy_measures_and_wilson_or_bootstrap_per_row():
    one = A.accuracy(_table(orders=("ab",)), ["judge"], n_resamples=B)
    _interval_measure(one, "accuracy", "parsed", "replies", "proportion")
    assert one["accuracy_method"].eq(WILSON).all()  # one reply per item
    both = A.accuracy(_table(), ["judge"], n_resamples=B)
    assert both["accuracy_method"].eq(BOOT).all()  # two replies per item: the item is resampled
    off = A.accuracy(_table(), ["judge"], n_resamples=0)
    assert off["accuracy_method"].eq("").all() and off["accuracy_low"].isna().all()
    nog = A.accuracy(_table(gold=False), ["judge"], n_resamples=B)
    assert str(nog.estimate("accuracy", 0)) == "not computable: no gold labels"


# ---------------------------------------------------------------------------------------------- Cohen's kappa
def test_cohen_kappa_method_asymptotic_on_independent_units_bootstrap_on_clusters():
    y1 = list("1121221211221121")
    y2 = list("1122221111221221")
    k, lo, hi, m = A.cohen_kappa_method(y1, y2)
    assert k == pytest.approx(cohen_kappa_score(y1, y2)) and m == A.KAPPA_ASYMPTOTIC
    tab = pd.crosstab(pd.Series(y1), pd.Series(y2)).to_numpy(float)
    ref = cohens_kappa(tab, return_results=True)
    z = 1.959963984540054  # the normal 97.5% quantile; bounds clipped to [-1, 1]
    assert (lo, hi) == pytest.approx((max(-1, ref["kappa"] - z * ref["std_kappa"]),
                                      min(1, ref["kappa"] + z * ref["std_kappa"])))
    clusters = np.repeat(np.arange(8), 2)
    _, lo_b, _, mb = A.cohen_kappa_method(y1, y2, clusters=clusters, n_resamples=B)
    assert mb == BOOT and np.isfinite(lo_b)
    assert A.cohen_kappa_method(y1, y2, clusters=clusters, n_resamples=0)[3] == ""
    assert A.cohen_kappa(y1, y2) == (k, lo, hi)


def test_cohen_kappa_vs_gold_matches_sklearn_with_its_method():
    t = _table()
    res = A.cohen_kappa_vs_gold(t, ["judge"], n_resamples=B)
    _interval_measure(res, "kappa", "n", "replies", "coefficient")
    for _, r in res.iterrows():
        g = t[t["judge"] == r["judge"]]
        assert r["kappa"] == pytest.approx(cohen_kappa_score(g["gold"].astype(str), g["verdict"].astype(str)))
        assert r["n"] == len(g) and r["kappa_method"] == BOOT
    one = A.cohen_kappa_vs_gold(_table(orders=("ab",)), ["judge"], n_resamples=B)
    assert one["kappa_method"].eq(A.KAPPA_ASYMPTOTIC).all()


# ------------------------------------------------------------------------------------------- judge × judge
def test_judge_agreement_measures_and_values():
    t = _table(orders=("ab",))
    res = A.judge_agreement(t, n_resamples=B)
    # n counts the (item, order, sample) units both judges parsed: one reply of each judge per unit
    _interval_measure(res, "agreement", "n", "units (item, order, sample) both judges parsed", "proportion")
    _interval_measure(res, "kappa", "n", "units (item, order, sample) both judges parsed", "coefficient")
    r = res[(res["judge_a"] == "A") & (res["judge_b"] == "B")].iloc[0]
    a = t[t["judge"] == "A"].set_index("item_id")["verdict"].astype(str)
    b = t[t["judge"] == "B"].set_index("item_id")["verdict"].astype(str)
    same = int((a == b.loc[a.index]).sum())
    assert r["agreement"] == pytest.approx(same / len(a)) and r["n"] == len(a)
    assert r["agreement_method"] == WILSON  # one unit per item
    assert (r["agreement_low"], r["agreement_high"]) == pytest.approx(proportion_confint(same, len(a), method="wilson"))
    assert r["kappa"] == pytest.approx(cohen_kappa_score(a, b.loc[a.index]))
    assert r["kappa_method"] == A.KAPPA_ASYMPTOTIC
    diag = res[res["judge_a"] == res["judge_b"]]
    assert diag["agreement_method"].eq("").all() and diag["kappa_method"].eq("").all()
    two = A.judge_agreement(_table(), n_resamples=B)
    off = two[two["judge_a"] != two["judge_b"]]
    assert off["agreement_method"].eq(BOOT).all() and off["kappa_method"].eq(BOOT).all()


# ---------------------------------------------------------------------------------------- Fleiss, alpha
def test_fleiss_and_alpha_match_their_libraries_with_the_bootstrap_named():
    t = _table()
    fk = A.fleiss_kappa(t, n_resamples=B)
    ka = A.krippendorff_alpha(t, n_resamples=B)
    _interval_measure(fk, "kappa", "units", "units", "coefficient")
    _interval_measure(ka, "alpha", "units", "units", "coefficient")
    w = t.pivot_table(index=["item_id", "order"], columns="judge", values="verdict", aggfunc="first")
    codes = (w == "2").astype(int).to_numpy()
    assert fk.at[0, "kappa"] == pytest.approx(fleiss_kappa(aggregate_raters(codes)[0], method="fleiss"))
    assert ka.at[0, "alpha"] == pytest.approx(krippendorff.alpha(reliability_data=codes.T.astype(float),
                                                                 level_of_measurement="nominal"))
    assert fk.at[0, "kappa_method"] == BOOT and ka.at[0, "alpha_method"] == BOOT
    assert fk.at[0, "units"] == len(w)
    off = A.fleiss_kappa(t, n_resamples=0)
    assert off.at[0, "kappa_method"] == "" and np.isnan(off.at[0, "kappa_low"])
    one = A.fleiss_kappa(t[t["judge"] == "A"], n_resamples=B)
    assert str(one.estimate("kappa")).startswith("not computable: needs two or more raters")
    # the samples as raters: a unit is a request
    s = t[t["judge"] == "A"].assign(sample=lambda d: (d["order"] == "ba").astype(int), order="ab")
    assert A.fleiss_kappa(s, raters="sample", n_resamples=B).measures["kappa"].n_unit == "requests"


def test_fleiss_from_one_unit_is_not_computable():
    t = _table(n=1, orders=("ab",))
    fk = A.fleiss_kappa(t, n_resamples=B)
    assert fk.at[0, "units"] == 1 and np.isnan(fk.at[0, "kappa"])
    assert str(fk.estimate("kappa")).startswith("not computable: 1 unit with every judge parsed")


# ---------------------------------------------------------------------------------------- repetition
def test_repetition_stability_measures_and_hand_counts():
    rows = []
    for i, votes in enumerate((["1", "1", "1"], ["1", "2", "1"], ["2", "2", "2"], ["2", "1", "1"])):
        rows += [dict(item_id=f"q{i}", judge="J", order="ab", sample=s, verdict=v) for s, v in enumerate(votes)]
    t = V.coerce(pd.DataFrame(rows))
    res = A.repetition_stability(t, n_resamples=B)
    _interval_measure(res, "unanimity", "units", "requests", "proportion")
    _interval_measure(res, "flip_rate", "units", "requests", "proportion")
    assert res.at[0, "unanimity"] == pytest.approx(2 / 4) and res.at[0, "unanimous"] == 2
    assert res.at[0, "repetition_stability"] == pytest.approx((1 + 2 / 3 + 1 + 2 / 3) / 4)
    assert res.at[0, "flip_rate"] == pytest.approx(4 / 12)  # two requests with 2 of 3 differing pairs
    assert res.at[0, "unanimity_method"] == WILSON  # one request per item, 0/1
    assert (res.at[0, "unanimity_low"], res.at[0, "unanimity_high"]) == pytest.approx(
        proportion_confint(2, 4, method="wilson"))
    assert res.at[0, "flip_rate_method"] == BOOT


# ------------------------------------------------------------------------------------------- LLMBar's table
def test_published_check_measures_name_published_and_recomputed_columns():
    from evallab.datasets import load_llmbar_statistics, load_study

    v = load_study("", "", subsets=["LLMBar/Natural"], strategies=["Vanilla"])
    res = A.published_check(v, load_llmbar_statistics())
    assert res.measures["correct_average_pct"].unit == "percent"
    assert res.measures["correct_average_pct_ours"].label == "Acc. (recomputed)"
    assert not any(m.has_interval for m in res.measures.values())
    row = res[res["judge"] == "GPT-4"].iloc[0]
    assert row["match"] and row["correct_average_pct_ours"] == pytest.approx(95.5)


def test_a_per_order_accuracy_states_the_n_of_its_interval_when_a_reply_is_unparsed():
    """The fresh-user case: 15 items with gold, one reply unparsed → Wilson on 11 of 14, and n says 14."""
    rows = [{"item_id": f"q{i}", "judge": "B", "order": "ab", "gold": "1",
             "verdict": None if i == 14 else ("1" if i < 11 else "2")} for i in range(15)]
    res = A.pairwise_statistics(V.coerce(pd.DataFrame(rows)), ["judge"], n_resamples=0)
    e = res.estimate("acc_ab", 0)
    assert (e.value, e.n, e.n_unit) == (pytest.approx(11 / 14), 14, "parsed replies")
    assert (e.low, e.high) == pytest.approx(proportion_confint(11, 14, method="wilson"))
    assert res.at[0, "n"] == 15  # the items with gold, one of them with no parsed reply


def test_repetition_stability_refuses_to_pool_two_strategies():
    rows = [{"item_id": "q1", "judge": "A", "order": "ab", "sample": s, "strategy": st, "verdict": v}
            for st, vs in (("plain", "12"), ("cot", "11")) for s, v in enumerate(vs)]
    t = V.coerce(pd.DataFrame(rows))
    with pytest.raises(DesignError, match=r"\['strategy'\] vary"):
        A.repetition_stability(t, ["judge"], n_resamples=0)
    res = A.repetition_stability(t, ["judge", "strategy"], n_resamples=0).set_index("strategy")
    assert (res.at["plain", "repetition_stability"], res.at["cot", "repetition_stability"]) == (0.5, 1.0)
