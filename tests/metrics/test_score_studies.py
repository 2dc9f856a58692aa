"""Issue 28 item 4: scales in the existing studies, against computations made here — the paired shift by pandas,
Spearman by scipy, weighted kappa by scikit-learn's cohen_kappa_score, AUC by roc_auc_score, the Youden cut by
roc_curve, the within-item SD and ICC(1) by numpy; refusals in one line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score, roc_auc_score, roc_curve

from evallab.datasets import load_hanna
from evallab.errors import DataError
from evallab.metrics import _score_studies as M
from evallab.metrics import score_cut, score_drift, score_shift, score_stability


@pytest.fixture(scope="module")
def hanna():
    return load_hanna(criteria=["Coherence", "Surprise"], judges=["ChatGPT", "Mistral-7B"], prompts=[1, 3])


def _wide(t: pd.DataFrame, criterion: str) -> pd.DataFrame:
    """items × (judge, strategy) of one criterion, by pandas' pivot_table."""
    g = t[t["criterion"] == criterion]
    return g.assign(score=g["score"].astype(float)).pivot_table(index="item_id", columns=["judge", "strategy"],
                                                                values="score", aggfunc="mean")


def _rounded(x: np.ndarray) -> np.ndarray:
    return np.floor(x + 0.5 + 1e-9).astype(int)


def test_shift_is_the_paired_mean_difference_and_the_agreement_change_is_scipy_and_sklearn(hanna):
    r = score_shift(hanna, n_resamples=60)
    assert set(r["configuration"]) == {"prompt 3"} and set(r["baseline"]) == {"prompt 1"} and len(r) == 4
    for crit in ("Coherence", "Surprise"):
        p = _wide(hanna, crit)
        hm = p[[("Human 1", ""), ("Human 2", ""), ("Human 3", "")]].mean(axis=1)
        for judge in ("ChatGPT", "Mistral-7B"):
            b, c = p[(judge, "prompt 1")], p[(judge, "prompt 3")]
            ok = b.notna() & c.notna() & hm.notna()
            row = r[(r["criterion"] == crit) & (r["judge"] == judge)].iloc[0]
            assert row["items"] == ok.sum()
            assert row["shift"] == pytest.approx((c[ok] - b[ok]).mean(), abs=1e-12)
            rho_b = stats.spearmanr(b[ok], hm[ok])[0]
            rho_c = stats.spearmanr(c[ok], hm[ok])[0]
            assert row["spearman_baseline"] == pytest.approx(rho_b, abs=1e-10)
            assert row["d_spearman"] == pytest.approx(rho_c - rho_b, abs=1e-10)
            kb = cohen_kappa_score(_rounded(b[ok].to_numpy()), _rounded(hm[ok].to_numpy()), weights="quadratic")
            kc = cohen_kappa_score(_rounded(c[ok].to_numpy()), _rounded(hm[ok].to_numpy()), weights="quadratic")
            assert row["d_kappa_quadratic"] == pytest.approx(kc - kb, abs=1e-10)
            for f in ("shift", "d_spearman", "d_kappa_quadratic"):
                assert row[f"{f}_low"] <= row[f] <= row[f"{f}_high"]
    assert "paired item bootstrap (percentile, 60 resamples)" == r.measures["shift"].method


def test_shift_on_an_anchor_column_and_the_refusals():
    t = pd.DataFrame({"item_id": list("abcdab"), "judge": "J", "anchors": ["A"] * 4 + ["B"] * 2,
                      "score": [1.0, 2, 3, 4, 2, 4]})
    r = score_shift(t, between="anchors", by=(), n_resamples=0)
    assert r.loc[0, "shift"] == pytest.approx(np.mean([2 - 1, 4 - 2]))  # items a, b only
    assert r.loc[0, "items"] == 2
    apart = t.assign(item_id=list("abcdxy"))
    with pytest.raises(DataError) as e:
        score_shift(apart, between="anchors", by=(), n_resamples=0)
    assert "share no item" in str(e.value) and "\n" not in str(e.value)
    two = pd.concat([t.assign(criterion="x"), t.assign(criterion="y")])
    with pytest.raises(DataError, match="by=\\['criterion'\\]"):
        score_shift(two, between="anchors", by=(), n_resamples=0)
    with pytest.raises(DataError, match="this is a verdict table.*use anchor_effect"):
        score_shift(pd.DataFrame({"item_id": ["a"], "judge": ["J"], "verdict": ["pass"]}))


def test_drift_figures_are_numpy_and_sklearns_weighted_kappa(hanna):
    r = score_drift(hanna, "ChatGPT · prompt 1", "Mistral-7B · prompt 3", n_resamples=60)
    assert list(r["criterion"]) == ["Coherence", "Surprise"]
    for crit in ("Coherence", "Surprise"):
        p = _wide(hanna, crit)
        b, c = p[("ChatGPT", "prompt 1")], p[("Mistral-7B", "prompt 3")]
        ok = b.notna() & c.notna()
        xb, xc = b[ok].to_numpy(), c[ok].to_numpy()
        row = r[r["criterion"] == crit].iloc[0]
        assert row["shift"] == pytest.approx(np.mean(xc - xb), abs=1e-12)
        assert row["mae"] == pytest.approx(np.mean(np.abs(xc - xb)), abs=1e-12)
        assert row["changed"] == pytest.approx(np.mean(_rounded(xb) != _rounded(xc)), abs=1e-12)
        assert row["kappa_quadratic"] == pytest.approx(
            cohen_kappa_score(_rounded(xb), _rounded(xc), weights="quadratic"), abs=1e-10)
        assert row["mae_low"] < row["mae"] < row["mae_high"]
    with pytest.raises(DataError) as e:
        score_drift(hanna, "ChatGPT · prompt 9", "Mistral-7B · prompt 3")
    assert "not a rater of this table" in str(e.value) and "\n" not in str(e.value)


def test_cut_auc_is_roc_auc_score_and_the_cut_is_youdens_from_roc_curve(hanna):
    r = score_cut(hanna, threshold=3.0, n_resamples=60)
    assert len(r) == 2 * 4
    for crit in ("Coherence", "Surprise"):
        p = _wide(hanna, crit)
        hm = p[[("Human 1", ""), ("Human 2", ""), ("Human 3", "")]].mean(axis=1)
        for judge, k in (("ChatGPT", 1), ("Mistral-7B", 3)):
            x = p[(judge, f"prompt {k}")]
            ok = x.notna()
            xs, y = x[ok].to_numpy(), (hm[ok] >= 3).astype(int).to_numpy()
            row = r[(r["criterion"] == crit) & (r["rater"] == f"{judge} · prompt {k}")].iloc[0]
            assert row["auc"] == pytest.approx(roc_auc_score(y, xs), abs=1e-12)
            fpr, tpr, thr = roc_curve(y, xs, drop_intermediate=False)
            cut = thr[1:][np.argmax((tpr - fpr)[1:])]  # the highest among equally good cuts
            assert row["cut"] == pytest.approx(cut)
            passed = (xs >= cut).astype(int)
            assert row["pass_rate"] == pytest.approx(passed.mean())
            assert row["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, passed))
            assert row["kappa"] == pytest.approx(cohen_kappa_score(y, passed))
            assert row["gold_rate"] == pytest.approx(y.mean())
            assert row["cut_low"] <= row["cut"] <= row["cut_high"]
            assert row["auc_low"] < row["auc"] < row["auc_high"]
    assert "cut re-tuned in each resample" in r.measures["cut"].method


def test_the_resampled_auc_is_roc_auc_score_on_the_resampled_items():
    rng = np.random.default_rng(3)
    x = rng.integers(1, 6, 80).astype(float)
    y = (x + rng.normal(0, 1.5, 80) > 3).astype(float)
    idx = M._index(80, 5, seed=1)
    d = M._cut_dists(x, y, idx, "accuracy")
    for i in range(1, 6):
        xi, yi = x[idx[i]], y[idx[i]]
        assert d["auc"][i] == pytest.approx(roc_auc_score(yi, xi), abs=1e-12)
        acc = [np.mean((xi >= c) == yi) for c in np.unique(xi)]
        assert d["accuracy"][i] == pytest.approx(max(acc))


def test_cut_on_a_gold_column_and_refusals():
    t = pd.DataFrame({"item_id": list("abcdef"), "judge": "J", "score": [1.0, 2, 3, 4, 5, 5],
                      "label": ["fail", "fail", "pass", "fail", "pass", "pass"]})
    r = score_cut(t, gold="label", by=(), n_resamples=0)
    y = np.array([0, 0, 1, 0, 1, 1])
    assert r.loc[0, "auc"] == pytest.approx(roc_auc_score(y, t["score"]))
    with pytest.raises(DataError) as e:
        score_cut(t.assign(label="pass"), gold="label", by=(), n_resamples=0)
    assert "both" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(DataError, match="expected pass/fail"):
        score_cut(t.assign(label="maybe"), gold="label", by=(), n_resamples=0)


def test_stability_is_numpys_within_item_sd_and_a_one_way_anova_icc():
    rng = np.random.default_rng(0)
    n, k = 30, 3
    s = np.clip(np.round(rng.normal(3, 1, n)[:, None] + rng.normal(0, 0.6, (n, k))), 1, 5)
    t = pd.DataFrame({"item_id": np.repeat([f"q{i}" for i in range(n)], k), "judge": "J",
                      "sample": np.tile(np.arange(k), n), "score": s.ravel()})
    r = score_stability(t, by=(), n_resamples=50)
    assert r.loc[0, "within_sd"] == pytest.approx(np.std(s, axis=1, ddof=1).mean(), abs=1e-12)
    assert r.loc[0, "all_equal"] == pytest.approx(np.mean(s.max(1) == s.min(1)))
    msb = k * np.var(s.mean(1), ddof=1)
    msw = ((s - s.mean(1, keepdims=True)) ** 2).sum() / (n * (k - 1))
    assert r.loc[0, "icc1"] == pytest.approx((msb - msw) / (msb + (k - 1) * msw), abs=1e-12)
    assert r.loc[0, "within_sd_low"] < r.loc[0, "within_sd"] < r.loc[0, "within_sd_high"]
    assert r.loc[0, "items"] == n and r.loc[0, "samples"] == k


def test_stability_refuses_a_table_with_one_sample_per_item(hanna):
    with pytest.raises(DataError) as e:
        score_stability(hanna, n_resamples=0)
    assert "one sample per item" in str(e.value) and "\n" not in str(e.value)
