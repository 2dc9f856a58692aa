"""Report 08's score-study sections (evallab.reporting.sections.score_studies) on a slice of HANNA: the most lenient
prompt change against a pandas hand mean, the best ROC AUC against scikit-learn's roc_auc_score, the drift pair's
MAE against numpy, and the stability section's one sentence on a table with one sample per item."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from section_helper import section_text
from sklearn.metrics import roc_auc_score

from evallab.datasets import load_hanna
from evallab.metrics import score_cut, score_shift
from evallab.reporting.sections import score_studies as sections


@pytest.fixture(scope="module")
def hanna():
    return load_hanna(criteria=["Coherence"], judges=["ChatGPT", "Mistral-7B"], prompts=[1, 2, 4])


def _wide(t):
    lab = t["judge"].where(t["strategy"] == "", t["judge"] + " · " + t["strategy"])
    return t.assign(r=lab, score=t["score"].astype(float)).pivot_table(index="item_id", columns="r", values="score")


def test_prompt_shifts_names_the_most_lenient_change(hanna, tmp_path):
    sec = sections.prompt_shifts(score_shift(hanna, n_resamples=40))
    w = _wide(hanna)
    hm = w[["Human 1", "Human 2", "Human 3"]].mean(axis=1)
    shifts = {}
    for j in ("ChatGPT", "Mistral-7B"):
        cols = [f"{j} · prompt {k}" for k in (1, 2, 4)]
        ok = w[cols].notna().all(axis=1) & hm.notna()
        for k in (2, 4):
            shifts[(j, k)] = (w.loc[ok, f"{j} · prompt {k}"] - w.loc[ok, f"{j} · prompt 1"]).mean()
    j, k = max(shifts, key=shifts.get)
    f = next(f for f in sec.findings if "most lenient" in f.sentence)
    assert f"{j} with prompt {k} instead of prompt 1" in f.sentence
    assert f.value == pytest.approx(shifts[(j, k)], abs=1e-12)
    assert f.low < f.value < f.high and "paired item bootstrap" in f.method
    text = section_text(sec, tmp_path)
    assert "Of 4 comparisons with the baseline (prompt 1)" in text and "nan" not in text.lower()


def test_pass_cut_names_the_best_auc_and_its_cut(hanna, tmp_path):
    sec = sections.pass_cut(score_cut(hanna, threshold=3.0, n_resamples=40), threshold=3.0)
    w = _wide(hanna)
    y = (w[["Human 1", "Human 2", "Human 3"]].mean(axis=1) >= 3).astype(int)
    auc = {c: roc_auc_score(y[w[c].notna()], w[c].dropna()) for c in w.columns if "·" in c}
    best = max(auc, key=auc.get)
    f = sec.findings[0]
    assert best in f.sentence and f.value == pytest.approx(auc[best], abs=1e-12)
    assert "Youden" in sec.findings[1].sentence and sec.findings[1].low <= sec.findings[1].value
    assert "conservative by construction" in " ".join(sec.caveats)
    assert "nan" not in section_text(sec, tmp_path).lower()


def test_judge_drift_on_the_pair_and_a_pair_not_in_the_table(hanna, tmp_path):
    sec = sections.judge_drift(hanna, ["ChatGPT · prompt 1", "Mistral-7B · prompt 4"], n_resamples=40)
    w = _wide(hanna)
    ok = w["ChatGPT · prompt 1"].notna() & w["Mistral-7B · prompt 4"].notna()
    mae = np.mean(np.abs(w.loc[ok, "Mistral-7B · prompt 4"] - w.loc[ok, "ChatGPT · prompt 1"]))
    assert sec.findings[0].value == pytest.approx(mae, abs=1e-12)
    other = sections.judge_drift(hanna, ["Llama-13B · prompt 1", "ChatGPT · prompt 1"], n_resamples=0)
    text = section_text(other, tmp_path)
    assert "is not in this table; shown instead: Mistral-7B · prompt 4 against ChatGPT · prompt 1" in text


def test_stability_says_one_sample_per_item_and_measures_repeated_samples(hanna, tmp_path):
    sec = sections.stability(hanna, n_resamples=0)
    assert not sec.findings and len(sec.items) == 1 and "one sample per item" in sec.items[0]
    rep = pd.DataFrame({"item_id": np.repeat(["a", "b", "c"], 2), "judge": "J", "sample": [0, 1] * 3,
                        "score": [1.0, 3, 2, 2, 4, 5]})
    sec = sections.stability(rep, by=(), n_resamples=30)
    sd = np.mean([np.std([1, 3], ddof=1), 0.0, np.std([4, 5], ddof=1)])
    assert sec.findings[0].value == pytest.approx(sd, abs=1e-12)
