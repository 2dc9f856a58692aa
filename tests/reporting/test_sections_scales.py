"""Report 08's sections (evallab.reporting.sections.scales) on a slice of HANNA and on a small hand-made table with
no criterion column: the best judge per criterion and its ceiling verdict checked against scipy's Spearman computed
here, leniency against a hand mean, the humans' agreement against the krippendorff package."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from section_helper import section_text

from evallab.datasets import load_hanna
from evallab.metrics import human_ceiling, rater_reliability, score_agreement
from evallab.reporting._params import ParameterError
from evallab.reporting.sections import scales as sections


@pytest.fixture(scope="module")
def hanna():
    t = load_hanna(criteria=["Complexity", "Coherence"], judges=["Beluga-13B", "ChatGPT"], prompts=[1, 2])
    return t, score_agreement(t, n_resamples=50), human_ceiling(t, n_resamples=50), rater_reliability(t, n_resamples=50)


def _wide(t, criterion):
    d = t[t["criterion"] == criterion]
    lab = d["judge"].where(d["strategy"] == "", d["judge"] + " · " + d["strategy"])
    return d.assign(r=lab).pivot_table(index="item_id", columns="r", values="score", aggfunc="first")


def test_best_judge_per_criterion_and_the_ceiling(hanna, tmp_path):
    t, agr, ceil, _ = hanna
    sec = sections.best_by_criterion(agr, ceil)
    text = section_text(sec, tmp_path)
    for crit in ("Complexity", "Coherence"):
        w = _wide(t, crit).astype(float)
        hm = w[["Human 1", "Human 2", "Human 3"]].mean(axis=1)
        rho = {j: stats.spearmanr(w[j][w[j].notna()], hm[w[j].notna()])[0]
               for j in w.columns if "·" in j}
        best = max(rho, key=rho.get)
        loo = np.mean([stats.spearmanr(w[h], w[[o for o in ("Human 1", "Human 2", "Human 3") if o != h]].mean(axis=1))[0]
                       for h in ("Human 1", "Human 2", "Human 3")])
        f = next(f for f in sec.findings if f.sentence.startswith(f"On {crit},"))
        assert best in f.sentence and f"{loo:.2f}" in f.sentence
        assert ("at or above" in f.sentence) == (rho[best] >= loo)
    assert "Every judge × prompt against the human mean" in text
    with pytest.raises(ParameterError):
        sections.best_by_criterion(agr, ceil, measure="accuracy")


def test_leniency_and_human_disagreement(hanna, tmp_path):
    t, agr, _, rel = hanna
    sec = sections.leniency(agr)
    w = _wide(t, "Coherence").astype(float)
    hm = w[["Human 1", "Human 2", "Human 3"]].mean(axis=1)
    biases = {}
    for crit in ("Complexity", "Coherence"):
        w = _wide(t, crit).astype(float)
        hm = w[["Human 1", "Human 2", "Human 3"]].mean(axis=1)
        for j in (c for c in w.columns if "·" in c):
            biases[(crit, j)] = float((w[j] - hm).mean())
    most = max(biases, key=biases.get)
    assert most[1] in sec.findings[0].sentence and sec.findings[0].value == pytest.approx(biases[most])
    sec = sections.human_disagreement(rel)
    alphas = {c: krippendorff.alpha(reliability_data=_wide(t, c)[["Human 1", "Human 2", "Human 3"]].to_numpy(float).T,
                                    level_of_measurement="ordinal") for c in ("Complexity", "Coherence")}
    lo = min(alphas, key=alphas.get)
    assert sec.findings[0].sentence.startswith(f"The humans disagree most on {lo}")
    assert sec.findings[0].value == pytest.approx(alphas[lo])
    assert "Krippendorff" in section_text(sec, tmp_path)


def test_a_table_without_criteria_and_empty_results():
    rng = np.random.default_rng(1)
    truth = rng.integers(1, 6, 60)
    rows = [{"item_id": f"q{i}", "subset": f"s{i % 4}", "judge": r, "role": "human" if r.startswith("h") else "judge",
             "verdict": None, "score": float(np.clip(truth[i] + rng.integers(-1, 2), 1, 5))}
            for i in range(60) for r in ("h1", "h2", "judge-a")]
    t = pd.DataFrame(rows)
    agr = score_agreement(t, by=(), n_resamples=20)
    ceil = human_ceiling(t, by=(), n_resamples=20)
    sec = sections.best_by_criterion(agr, ceil)
    assert sec.findings[0].sentence.startswith("judge-a agrees best")
    empty = agr.iloc[0:0]
    assert "nothing to compare" in sections.best_by_criterion(empty, ceil).items[0]
    assert "no leniency" in sections.leniency(empty).items[0]
