"""The trigger estimators return evallab.Results (issue 25): each estimate column carries its label, unit, interval
columns, the method that computed its interval (per row where it varies) and its n. Expected intervals are computed
here independently — statsmodels' Wilson interval, scipy.stats.bootstrap, scikit-learn's average precision and ROC
AUC with sample weights — never read back from the code under test."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score
from statsmodels.stats.proportion import proportion_confint

from evallab import Results
from evallab import skills as T
from evallab._results import WILSON
from evallab.errors import EvallabError
from evallab.paths import data_dir
from evallab.skills import _thresholds, load_catalog
from evallab.skills._catalogs import catalog_from_records
from evallab.skills._scorer_comparison import compare_scorers
from evallab.skills._thresholds import pair_scores, roc_pr_summary, tune_thresholds
from evallab.skills._trigger_loo import (
    loo_summary,
    make_probes,
    skill_accuracy_summary,
    stripping_summary,
    trigger_accuracy,
)

KERYX = data_dir("catalogs") / "keryx_bundled_core.jsonl"
GRID = np.round(np.linspace(0, 1, 21), 10)


@pytest.fixture(scope="module")
def keryx():
    return load_catalog(KERYX)


@pytest.fixture(scope="module")
def keryx_pairs(keryx):
    return pair_scores(keryx, make_probes(keryx, source="triggers"))


def _percentile(dist, confidence=0.95):
    dist = np.asarray(dist, float)
    dist = dist[np.isfinite(dist)]
    a = (1 - confidence) / 2
    return tuple(float(x) for x in np.quantile(dist, [a, 1 - a]))


def _scipy_indices(n, n_resamples, seed):
    """The resample indices scipy.stats.bootstrap draws for one sample of n (recorded by the statistic)."""
    seen = []

    def stat(x, axis=-1):
        seen.append(np.atleast_2d(x).copy())
        return np.zeros(np.atleast_2d(x).shape[0])

    stats.bootstrap((np.arange(n),), stat, vectorized=True, n_resamples=n_resamples, batch=100,
                    method="percentile", random_state=np.random.default_rng(seed))
    return np.vstack(seen)[-n_resamples:]


# ---------------------------------------------------------------------------------------- leave-one-out summary
def test_loo_summary_measures_and_per_row_methods(keryx):
    s = loo_summary(T.leave_one_out(keryx, make_probes(keryx)), n_resamples=1000, seed=0)
    assert isinstance(s, Results) and s.level == 0.95 and s.keys == ["kind"]
    m = s.measures["accuracy"]
    assert (m.label, m.unit, m.low, m.high, m.method_column, m.n, m.n_unit) == (
        "Leave-one-out accuracy", "proportion", "accuracy_low", "accuracy_high", "accuracy_method", "probes",
        "probes")
    assert {c: s.measures[c].unit for c in ("probes", "skills", "selected")} == dict.fromkeys(
        ("probes", "skills", "selected"), "count")
    tr, uw = s.set_index("kind").loc["trigger"], s.set_index("kind").loc["use_when"]
    # the 279 trigger probes of 46 skills: a percentile bootstrap over skills of selected / probes, recomputed here
    loo = T.leave_one_out(keryx, make_probes(keryx, source="triggers"))
    per = loo.assign(s=loo.selected.astype(float), n=1.0).groupby("skill_id")[["s", "n"]].sum()
    ref = stats.bootstrap((per.s.to_numpy(), per.n.to_numpy()), lambda a, b, axis=-1: a.sum(axis) / b.sum(axis),
                          paired=True, vectorized=True, n_resamples=1000, method="percentile",
                          random_state=np.random.default_rng(0)).confidence_interval
    assert tr["accuracy_method"] == "skill bootstrap (percentile, 1,000 resamples)"
    assert (tr["accuracy_low"], tr["accuracy_high"]) == pytest.approx((ref.low, ref.high))
    # the 18 "Use when" probes, one per skill: independent units, the Wilson interval (statsmodels), named so
    assert uw["accuracy_method"] == WILSON
    assert (uw["accuracy_low"], uw["accuracy_high"]) == pytest.approx(proportion_confint(18, 18, method="wilson"))
    e = s.estimate("accuracy", 1)
    assert e.method == WILSON and e.n == 18 and e.n_unit == "probes"
    assert s.estimate("accuracy", 0).method.startswith("skill bootstrap")


def test_loo_summary_without_bootstrap_and_with_equal_shares_says_which_interval():
    # 4 skills, 2 probes each, 1 of 2 selected in every skill: every skill has the same share, so a bootstrap would
    # collapse to a point; the Wilson interval on the 4 skills (2 of 4) is used and named as such
    loo = pd.DataFrame({"skill_id": list("aabbccdd"), "kind": "trigger", "selected": [True, False] * 4})
    s = loo_summary(loo)
    assert s.at[0, "accuracy_method"] == f"{WILSON} on 4 skills (every skill has the same share)"
    assert (s.at[0, "accuracy_low"], s.at[0, "accuracy_high"]) == pytest.approx(
        proportion_confint(2, 4, method="wilson"))
    # bootstrap switched off with several probes per skill: no interval, the note says why
    loo2 = loo.assign(selected=[True, False, True, True, False, False, True, True])
    off = loo_summary(loo2, n_resamples=0)
    assert np.isnan(off.at[0, "accuracy_low"]) and off.at[0, "accuracy_method"] == ""
    assert off.at[0, "note"] == "no interval: the bootstrap was switched off (n_resamples = 0)"
    assert str(off.estimate("accuracy")) == "62.5% (n = 8 probes)"


def test_loo_and_per_skill_tables_are_results(keryx):
    cat = catalog_from_records([
        {"catalog_id": "web/alpha", "name": "alpha", "description": "Build react page.",
         "triggers": ["react page", "react form"]},
        {"catalog_id": "data/gamma", "name": "gamma", "description": "Load sql table.", "triggers": ["sql table"]},
    ])
    loo = T.leave_one_out(cat)
    assert isinstance(loo, Results) and loo.measures["score"].unit == "coefficient"
    assert loo.measures["rank"].unit == "count"
    per, _ = trigger_accuracy(cat, n_negatives=1)
    assert isinstance(per, Results)
    assert (per["probes"] == per["n_pos"] + per["n_neg"]).all()
    assert per.measures["accuracy"].n == "probes" and per.measures["tp"].n_unit == "positive probes"


# ------------------------------------------------------------------------------------------ per-skill summary
def test_skill_accuracy_summary_bootstrap_wilson_and_equal_shares():
    per = pd.DataFrame({"skill_id": list("abcd"), "accuracy": [1.0, 0.5, 0.75, 1.0]})
    s = skill_accuracy_summary(per, n_resamples=500, seed=3)
    assert s.at[0, "mean_accuracy"] == pytest.approx(0.8125) and s.at[0, "perfect"] == 2 and s.at[0, "skills"] == 4
    ref = stats.bootstrap((per.accuracy.to_numpy(), np.ones(4)), lambda a, b, axis=-1: a.sum(axis) / b.sum(axis),
                          paired=True, vectorized=True, n_resamples=500, method="percentile",
                          random_state=np.random.default_rng(3)).confidence_interval
    assert s.at[0, "mean_accuracy_method"] == "skill bootstrap (percentile, 500 resamples)"
    assert (s.at[0, "mean_accuracy_low"], s.at[0, "mean_accuracy_high"]) == pytest.approx((ref.low, ref.high))
    assert s.estimate("mean_accuracy").n_unit == "skills"
    # every accuracy 0 or 1: independent binary units, Wilson (statsmodels)
    b = skill_accuracy_summary(pd.DataFrame({"accuracy": [1.0, 0.0, 1.0, 1.0, 1.0]}))
    assert b.at[0, "mean_accuracy_method"] == WILSON
    assert (b.at[0, "mean_accuracy_low"], b.at[0, "mean_accuracy_high"]) == pytest.approx(
        proportion_confint(4, 5, method="wilson"))
    # every skill at 0.5: the Wilson fallback on the skill count, named as such
    e = skill_accuracy_summary(pd.DataFrame({"accuracy": [0.5] * 4}))
    assert e.at[0, "mean_accuracy_method"] == f"{WILSON} on 4 skills (every skill has the same share)"
    assert (e.at[0, "mean_accuracy_low"], e.at[0, "mean_accuracy_high"]) == pytest.approx(
        proportion_confint(2, 4, method="wilson"))
    none = skill_accuracy_summary(pd.DataFrame({"accuracy": [np.nan]}))
    assert str(none.estimate("mean_accuracy")) == "not computable: no skill has a probe"


# ------------------------------------------------------------------------------------------------- stripping
def _effect(before, after, skills):
    return pd.DataFrame({"kind": "positive", "skill_id": skills, "prompt": [f"p{i}" for i in range(len(skills))],
                         "correct_before": before, "correct_after": after,
                         "changed": np.asarray(before) != np.asarray(after)})


def test_stripping_summary_paired_bootstrap_and_wilson_bound():
    skills = list("aaabbbcccddd")
    before = [1, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1]
    after = [1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1]
    s = stripping_summary(_effect(np.array(before, bool), np.array(after, bool), skills), n_resamples=400, seed=1)
    assert s.at[0, "changed"] == 4 and s.at[0, "probes"] == 12
    assert s.at[0, "delta_correct"] == pytest.approx((sum(after) - sum(before)) / 12)
    per = pd.DataFrame({"k": skills, "b": before, "a": after, "n": 1}).groupby("k").sum()
    ref = stats.bootstrap(tuple(per[c].to_numpy(float) for c in ("a", "n", "b", "n")),
                          lambda a, n, b, m, axis=-1: a.sum(axis) / n.sum(axis) - b.sum(axis) / m.sum(axis),
                          paired=True, vectorized=True, n_resamples=400, method="percentile",
                          random_state=np.random.default_rng(1)).confidence_interval
    assert s.at[0, "delta_correct_method"] == "paired skill bootstrap (percentile, 400 resamples)"
    assert (s.at[0, "delta_correct_low"], s.at[0, "delta_correct_high"]) == pytest.approx((ref.low, ref.high))
    m = s.measures["delta_correct"]
    assert (m.unit, m.method_column, m.n_unit) == ("pp", "delta_correct_method", "probes")
    # nothing changes: not the point [0, 0] of a bootstrap but the bound from the Wilson interval of 0 of 4 skills
    same = stripping_summary(_effect(np.array(before, bool), np.array(before, bool), skills))
    u = proportion_confint(0, 4, method="wilson")[1]
    assert same.at[0, "delta_correct_method"] == f"bound from the {WILSON} interval of 0 of 4 skills changed"
    assert same.at[0, "delta_correct_high"] == pytest.approx(u * 4 * 3 / 12)
    assert same.estimate("delta_correct").method.startswith("bound from the Wilson")


# ------------------------------------------------------------------------------------------------ thresholds
def test_resamples_are_scipys_draws():
    w = _thresholds.skill_resample_weights(46, 250, 7)
    idx = _scipy_indices(46, 250, 7)
    assert idx.shape == (250, 46)
    counts = np.stack([np.bincount(r, minlength=46) for r in idx])
    np.testing.assert_array_equal(w, counts)


def test_tune_thresholds_table_measures_method_and_interval(keryx_pairs):
    res = tune_thresholds(keryx_pairs, "select", grid=GRID, n_resamples=120, seed=4, n_splits=3)
    tab = res.table
    assert isinstance(tab, Results) and tab.level == 0.95 and tab.keys == ["target", "objective"]
    m = tab.measures["threshold"]
    assert (m.low, m.high, m.method, m.n, m.n_unit, m.digits) == (
        "threshold_low", "threshold_high", "skill bootstrap (percentile, 120 resamples)", "pairs", "pairs", 2)
    assert tab.measures["fp"].unit == "count" and tab.measures["cv_value"].n_unit == "folds"
    assert (tab["pairs"] == len(keryx_pairs)).all() and (tab["skills"] == 46).all()
    # the F1 value interval recomputed: scipy's draws over the 46 skills, F1 by scikit-learn at every grid point
    f1 = tab.set_index("objective").loc["f1"]
    codes = pd.factorize(keryx_pairs.sort_values("probe_id", kind="mergesort").drop_duplicates("probe_id")
                         .probe_skill)[1]
    unit = pd.Series(np.arange(len(codes)), index=codes).loc[keryx_pairs.probe_skill].to_numpy()
    y, d = keryx_pairs.label.to_numpy(), keryx_pairs.d_select.to_numpy()
    pred = (d[:, None] >= GRID[None, :]).astype(float)  # pairs x thresholds
    best = []
    for k, r in enumerate(_scipy_indices(46, 120, 4)):
        w = np.bincount(r, minlength=46)[unit].astype(float)
        tp, fp = (w * y) @ pred, (w * (1 - y)) @ pred
        fn = (w * y).sum() - tp
        f1s = 2 * tp / (2 * tp + fp + fn)
        if k == 0:  # the plain formula is scikit-learn's F1 with sample weights
            assert f1s == pytest.approx([f1_score(y, d >= t, sample_weight=w) for t in GRID])
        best.append(f1s.max())
    assert (f1["value_low"], f1["value_high"]) == pytest.approx(_percentile(best))
    assert tab.estimate("value", 0).method == "skill bootstrap (percentile, 120 resamples)"


def test_tune_thresholds_without_bootstrap_names_no_method(keryx_pairs):
    tab = tune_thresholds(keryx_pairs, "support", grid=GRID, n_resamples=0, n_splits=2).table
    assert tab.measures["threshold"].method is None and tab.level is None
    f1 = tab.set_index("objective").loc["f1"]
    assert np.isnan(f1["threshold_low"])
    assert "no interval: the bootstrap was switched off (n_resamples = 0)" in f1["note"]


def test_roc_pr_summary_by_hand():
    # the toy pairs of tests/skills/test_triggers.py: 4 positives of 12, ROC AUC 29/32 by hand
    d = {0: (0.9, 0.2, 0.1), 1: (0.6, 0.5, 0.0), 2: (0.4, 0.7, 0.1), 3: (0.8, 0.3, 0.35)}
    rows = [{"probe_id": p, "probe_skill": f"s{p}", "skill_id": f"s{(p + k) % 4}", "label": lab, "d_select": v,
             "d_support": v, "d_use": v}
            for p, (own, o1, o2) in d.items() for k, (v, lab) in enumerate(((own, 1), (o1, 0), (o2, 0)))]
    pairs = pd.DataFrame(rows)
    s = roc_pr_summary(pairs, ["select"])
    assert s.at[0, "roc_auc"] == pytest.approx(29 / 32) and s.at[0, "base_rate"] == pytest.approx(4 / 12)
    assert s.at[0, "average_precision"] == pytest.approx(average_precision_score(pairs.label, pairs.d_select))
    assert s.measures["base_rate"].unit == "proportion" and s.measures["roc_auc"].unit == "coefficient"
    one = roc_pr_summary(pairs[pairs.label == 1], ["select"])
    assert str(one.estimate("roc_auc")) == "not computable: every pair is positive (the curves need both classes)"


def test_weighted_curves_equal_scikit_learn_with_sample_weights():
    rng = np.random.default_rng(5)
    y = (rng.random(400) < 0.1).astype(int)
    d = np.round(rng.random(400), 1)  # many ties
    d[y == 1] += 0.2
    w = rng.integers(0, 3, (6, 400)).astype(float)
    ap, auc = _thresholds.weighted_curves(y, d, w)
    for k in range(6):
        assert ap[k] == pytest.approx(average_precision_score(y, d, sample_weight=w[k]))
        assert auc[k] == pytest.approx(roc_auc_score(y, d, sample_weight=w[k]))
    # weights given per group of pairs (a resampled skill): the same curves as the same weights given per pair
    groups = rng.integers(0, 7, 400)
    wg = rng.integers(0, 4, (5, 7)).astype(float)
    ap_g, auc_g = _thresholds.weighted_curves(y, d, wg, groups=groups)
    for k in range(5):
        assert ap_g[k] == pytest.approx(average_precision_score(y, d, sample_weight=wg[k, groups]))
        assert auc_g[k] == pytest.approx(roc_auc_score(y, d, sample_weight=wg[k, groups]))


# ---------------------------------------------------------------------------------------- scorer comparison
def test_compare_scorers_intervals_and_paired_differences(keryx, keryx_pairs):
    trig = make_probes(keryx, source="triggers")
    table, curves = compare_scorers(keryx, ("keryx", "bm25"), probes=trig, grid=GRID, n_resamples=40, seed=2)
    assert isinstance(table, Results) and list(table.scorer) == ["keryx", "bm25"]
    # pairs counted by hand from the JSONL: each probe against its own skill and every skill of another category
    recs = [json.loads(x) for x in KERYX.read_text(encoding="utf-8").splitlines() if x.strip()]
    cat_of = [r["catalog_id"].split("/")[0] for r in recs]
    n_pairs = sum(1 + sum(c != cat_of[i] for c in cat_of) for i, r in enumerate(recs) for _ in r.get("triggers", []))
    assert (table["pairs"] == n_pairs).all() and (table["positive_pairs"] == 279).all()
    assert table.at[0, "base_rate"] == pytest.approx(279 / n_pairs)
    bm25 = pair_scores(keryx, trig, scorer="bm25")
    aps = {"keryx": average_precision_score(keryx_pairs.label, keryx_pairs.d_select),
           "bm25": average_precision_score(bm25.label, bm25.d_select)}
    assert list(table.average_precision) == pytest.approx([aps["keryx"], aps["bm25"]])
    # intervals: scipy's draws over the 46 skills, scikit-learn's average precision with sample weights
    uniq = pd.unique(keryx_pairs.sort_values("probe_id", kind="mergesort").drop_duplicates("probe_id").probe_skill)
    pos = pd.Series(np.arange(len(uniq)), index=uniq)
    dist = {"keryx": [], "bm25": []}
    for r in _scipy_indices(len(uniq), 40, 2):
        cnt = np.bincount(r, minlength=len(uniq))
        for name, p in (("keryx", keryx_pairs), ("bm25", bm25)):
            dist[name].append(average_precision_score(p.label, p.d_select,
                                                      sample_weight=cnt[pos.loc[p.probe_skill].to_numpy()]))
    assert (table.at[1, "average_precision_low"], table.at[1, "average_precision_high"]) == pytest.approx(
        _percentile(dist["bm25"]))
    assert table.at[1, "delta_average_precision"] == pytest.approx(aps["bm25"] - aps["keryx"])
    assert (table.at[1, "delta_average_precision_low"], table.at[1, "delta_average_precision_high"]) == \
        pytest.approx(_percentile(np.subtract(dist["bm25"], dist["keryx"])))
    ms = table.measures
    assert ms["average_precision"].method == "skill bootstrap (percentile, 40 resamples)"
    assert ms["delta_average_precision"].method == "paired skill bootstrap (percentile, 40 resamples)"
    assert ms["delta_f1"].label == "Δ F1 vs keryx" and ms["base_rate"].unit == "proportion"
    assert ms["loo_trigger_accuracy_at_keryx_thresholds"].n_unit == "trigger probes"
    # the reference's own difference is not a comparison: missing, and the note says why
    assert np.isnan(table.at[0, "delta_f1"])
    assert str(table.estimate("delta_f1", 0)) == \
        "not computable: keryx is the reference scorer the differences are taken against"
    # keryx's F1 interval is the tuned table's (the same draws with the same seed)
    tuned = tune_thresholds(keryx_pairs, "select", grid=GRID, n_resamples=40, seed=2, n_splits=2).table
    f1 = tuned.set_index("objective").loc["f1"]
    assert (table.at[0, "f1_low"], table.at[0, "f1_high"]) == pytest.approx((f1["value_low"], f1["value_high"]))
    assert set(curves) == {"keryx", "bm25"}


def test_compare_scorers_without_bootstrap_and_bad_reference():
    cat = catalog_from_records([
        {"catalog_id": "web/alpha", "name": "alpha", "description": "Build react page.",
         "triggers": ["react page", "react form"]},
        {"catalog_id": "data/gamma", "name": "gamma", "description": "Load sql table.", "triggers": ["sql table"]},
        {"catalog_id": "ops/delta", "name": "delta", "description": "Deploy docker image.", "triggers": ["build page"]},
    ])
    table, _ = compare_scorers(cat, ("keryx",))
    assert table.measures["average_precision"].method is None and np.isnan(table.at[0, "average_precision_low"])
    assert "the bootstrap was switched off" in table.at[0, "note"]
    with pytest.raises(EvallabError, match="reference 'tfidf' is not one of the scorers"):
        compare_scorers(cat, ("keryx", "bm25"), reference="tfidf")
