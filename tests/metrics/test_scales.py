"""Issue 28: the scale estimators against independent computations on HANNA's columns — weighted kappa equal to
scikit-learn's, Krippendorff's alpha equal to the krippendorff package, ICC equal to a two-way ANOVA computed here,
correlations equal to scipy's; bias, MAE and agreement shares counted here; intervals and their methods named."""

from __future__ import annotations

import ast
import csv
import itertools

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from evallab.datasets import load_hanna
from evallab.errors import DesignError
from evallab.metrics import _scales as S
from evallab.metrics import human_ceiling, rater_reliability, score_agreement
from evallab.paths import data_dir

CODES = {"Relevance": "RE", "Coherence": "CH", "Surprise": "SU"}
CRITERIA = list(CODES)
JUDGES = ["ChatGPT", "Mistral-7B"]


@pytest.fixture(scope="module")
def raw():
    """Column → the 1,056 values, read from the CSV with the csv and ast modules; and each story's generator."""
    csv.field_size_limit(10**9)
    with open(data_dir("hanna") / "hanna_metric_scores_llm.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    cols = {c: np.concatenate([np.array(ast.literal_eval(r[c]), float) for r in rows]) for c in rows[0]
            if c.startswith(("Human ", "ChatGPT", "Mistral-7B"))}
    gens = np.repeat([r["Model"] for r in rows], 96)
    return cols, gens


@pytest.fixture(scope="module")
def table():
    return load_hanna(criteria=CRITERIA, judges=JUDGES, prompts=[1, 2, 3])


@pytest.fixture(scope="module")
def agreement(table):
    return score_agreement(table, n_resamples=100)


def _humans(cols, code):
    return np.column_stack([cols[f"Human {h} {code}"] for h in (1, 2, 3)])


def _round(x):
    return np.floor(x + 0.5)


@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("rater", ["ChatGPT 1", "Mistral-7B 2", "ChatGPT 3"])
def test_judge_figures_equal_the_libraries(raw, agreement, criterion, rater):
    cols, gens = raw
    judge, k = rater.split(" ")
    x = cols[f"{judge} {CODES[criterion]} {k}"]
    y = _humans(cols, CODES[criterion]).mean(1)
    ok = x >= 1  # HANNA's means below 1 hold an unparsed sample: NA in the table
    x, y, g = x[ok], y[ok], gens[ok]
    row = agreement[(agreement["criterion"] == criterion) & (agreement["rater"] == f"{judge} · prompt {k}")].iloc[0]
    assert row["items"] == ok.sum()
    assert row["pearson"] == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
    assert row["spearman"] == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)
    assert row["kendall"] == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-12)
    mx = pd.Series(x).groupby(g).mean().round(12)
    # the human mean per system from the integer ratings, divided once: generators with equal totals over equal
    # counts (Surprise: Fusion, RoBERTa and HINT, 497 / 288 each) get the same float, so scipy sees their tie
    hs = pd.Series(_humans(cols, CODES[criterion])[ok].sum(1)).groupby(g)
    my = hs.sum() / (3 * hs.count())
    assert row["systems"] == 11
    assert row["sys_pearson"] == pytest.approx(stats.pearsonr(mx, my)[0], abs=1e-12)
    assert row["sys_spearman"] == pytest.approx(stats.spearmanr(mx, my)[0], abs=1e-12)
    assert row["sys_kendall"] == pytest.approx(stats.kendalltau(mx, my)[0], abs=1e-12)
    for w in ("linear", "quadratic"):
        ref = cohen_kappa_score(_round(x), _round(y), weights=w, labels=[1, 2, 3, 4, 5])
        assert row[f"kappa_{w}"] == pytest.approx(ref, abs=1e-12)
    assert row["bias"] == pytest.approx(np.mean(x - y), abs=1e-12)
    assert row["mae"] == pytest.approx(np.mean(np.abs(x - y)), abs=1e-12)
    assert row["exact"] == pytest.approx(np.mean(_round(x) == _round(y)), abs=1e-12)
    assert row["within_one"] == pytest.approx(np.mean(np.abs(_round(x) - _round(y)) <= 1), abs=1e-12)
    assert row["icc2_1"] == pytest.approx(_anova_icc(np.column_stack([x, y]))["icc2_1"], abs=1e-12)
    for f in ("spearman", "bias", "sys_kendall", "kappa_quadratic"):
        assert row[f"{f}_low"] < row[f] < row[f"{f}_high"], f


def _anova_icc(m: np.ndarray) -> dict[str, float]:
    """Shrout & Fleiss (1979) from the two-way ANOVA table, written out with explicit means."""
    n, k = m.shape
    grand = m.mean()
    ss_rows = k * sum((m[i].mean() - grand) ** 2 for i in range(n))
    ss_cols = n * sum((m[:, j].mean() - grand) ** 2 for j in range(k))
    ss_err = ((m - grand) ** 2).sum() - ss_rows - ss_cols
    msr, msc, mse = ss_rows / (n - 1), ss_cols / (k - 1), ss_err / ((n - 1) * (k - 1))
    return {"icc2_1": (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n),
            "icc3_1": (msr - mse) / (msr + (k - 1) * mse),
            "icc2_k": (msr - mse) / (msr + (msc - mse) / n)}


@pytest.mark.parametrize("criterion", CRITERIA)
def test_human_agreement_equals_krippendorff_sklearn_and_anova(raw, table, criterion):
    cols, _ = raw
    m = _humans(cols, CODES[criterion])
    r = rater_reliability(table[table["criterion"] == criterion], n_resamples=50).iloc[0]
    assert r["items"] == 1056 and r["raters"] == 3
    for level in ("ordinal", "interval"):
        ref = krippendorff.alpha(reliability_data=m.T, level_of_measurement=level)
        assert r[f"alpha_{level}"] == pytest.approx(ref, abs=1e-12)
    icc = _anova_icc(m)
    for f in ("icc2_1", "icc3_1", "icc2_k"):
        assert r[f] == pytest.approx(icc[f], abs=1e-12)
    for w in ("linear", "quadratic"):
        ref = np.mean([cohen_kappa_score(m[:, a], m[:, b], weights=w) for a, b in itertools.combinations(range(3), 2)])
        assert r[f"kappa_{w}"] == pytest.approx(ref, abs=1e-12)


def test_icc_equals_pingouin_when_installed(raw):
    pg = pytest.importorskip("pingouin")
    cols, _ = raw
    m = _humans(cols, "RE")
    long = pd.DataFrame({"item": np.repeat(np.arange(len(m)), 3), "rater": np.tile([1, 2, 3], len(m)),
                         "score": m.ravel()})
    ref = pg.intraclass_corr(long, targets="item", raters="rater", ratings="score").set_index("Type")["ICC"]
    got = S.reliability_statistics(m, n_resamples=0)
    assert got["icc2_1"][0] == pytest.approx(ref["ICC2"]) and got["icc2_k"][0] == pytest.approx(ref["ICC2k"])


def test_leave_one_rater_out_is_one_human_against_the_mean_of_the_others(raw, table):
    cols, _ = raw
    m = _humans(cols, "SU")
    c = human_ceiling(table[table["criterion"] == "Surprise"], n_resamples=0)
    assert list(c["rater"]) == ["Human 1", "Human 2", "Human 3"]
    for h in range(3):
        others = m[:, [o for o in range(3) if o != h]].mean(1)
        assert c.iloc[h]["spearman"] == pytest.approx(stats.spearmanr(m[:, h], others)[0], abs=1e-12)
        assert c.iloc[h]["reference"] == "mean of the other humans"


def test_estimates_name_their_method_and_unit(agreement):
    e = agreement.estimate("spearman", 0)
    assert e.method.startswith("item bootstrap (percentile, 100 resamples)") and e.n_unit == "items"
    b = agreement.estimate("bias", 0)
    assert b.unit == "scale points" and b.method.startswith("paired item bootstrap")
    assert "within each system" in agreement.estimate("sys_kendall", 0).method
    assert "within each system" in agreement.estimate("spearman", 0).method


def test_a_verdict_table_is_refused_in_one_line():
    verdicts = pd.DataFrame({"item_id": ["q1", "q2"], "judge": "A", "verdict": ["pass", "fail"],
                             "score": [None, None]})
    for fn in (score_agreement, human_ceiling, rater_reliability):
        with pytest.raises(DesignError) as e:
            fn(verdicts, n_resamples=0)
        assert "\n" not in str(e.value) and "verdicts only" in str(e.value)


def test_a_score_table_is_refused_by_a_verdict_estimator_check(table):
    with pytest.raises(DesignError) as e:
        S.require_verdicts(table, what="accuracy")
    assert "\n" not in str(e.value) and "scores only" in str(e.value)
