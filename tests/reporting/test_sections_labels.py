"""Report 08's annotator sections (evallab.reporting.sections.labels) on small hand-made tables: three annotators'
pass/warn/fail labels and two judges (the majority gold and the no-majority count by hand, Cohen's kappa from
scikit-learn, Krippendorff's alpha from the krippendorff package, the Alt-Test by hand with scipy's t-test and a hand
Benjamini–Yekutieli, the PPI++ plan from the closed-form variance), the same with two annotators (the Alt-Test
refused in one line, the rest shown), a 1–5 score table, and a labels file of ``evallab label`` joined to a
judge's verdict file."""

from __future__ import annotations

import csv
import math
from collections import Counter
from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from section_helper import section_text
from sklearn.metrics import cohen_kappa_score

from evallab import verdicts
from evallab.errors import DesignError
from evallab.reporting.sections import labels as L

ANN = {  # 12 items; q3, q7 and q10 have three different labels (no majority)
    "ann": "pass pass fail pass fail pass warn fail pass fail pass fail".split(),
    "bob": "pass pass fail fail fail pass fail fail pass warn pass fail".split(),
    "cyd": "pass fail fail warn fail fail pass fail pass pass pass pass".split(),
}
JUDGES = {
    "good": "pass pass fail pass fail pass fail fail pass fail pass fail".split(),
    "bad": "fail fail pass pass pass fail pass pass fail pass fail pass".split(),
}
ITEMS = [f"q{i}" for i in range(12)]


def _table(ann=ANN, judges=JUDGES) -> pd.DataFrame:
    rows = [{"item_id": i, "judge": a, "verdict": v, "role": "human"} for a, vs in ann.items()
            for i, v in zip(ITEMS, vs, strict=True)]
    rows += [{"item_id": i, "judge": j, "verdict": v, "role": "judge"} for j, vs in judges.items()
             for i, v in zip(ITEMS, vs, strict=True)]
    return verdicts.coerce(pd.DataFrame(rows))


def _hand_alt(judge: list, humans: dict, epsilon: float, alpha: float = 0.05, score=None):
    """The Alt-Test by hand: per annotator left out, S = share of the others giving the same label (or minus
    the RMSE of numeric ratings), W_f / W_h, the one-sided paired t-test, BY by its step-up rule."""
    names = list(humans)
    H = np.array([humans[n] for n in names], dtype=object).T
    f = np.array(judge, dtype=object)
    ps, rhos = [], []
    for j in range(len(names)):
        others = np.delete(H, j, axis=1)
        if score is None:
            s_f = np.array([np.mean([o == f[i] for o in others[i]]) for i in range(len(f))])
            s_h = np.array([np.mean([o == H[i, j] for o in others[i]]) for i in range(len(f))])
        else:
            o = others.astype(float)
            s_f = -np.sqrt(((o - f.astype(float)[:, None]) ** 2).mean(axis=1))
            s_h = -np.sqrt(((o - H[:, j].astype(float)[:, None]) ** 2).mean(axis=1))
        w_f, w_h = (s_f >= s_h).astype(float), (s_h >= s_f).astype(float)
        d = w_h - w_f
        rhos.append(w_f.mean())
        if np.all(d == d[0]):
            ps.append(0.0 if d[0] < epsilon else 1.0)
        else:
            ps.append(stats.ttest_1samp(d, epsilon, alternative="less").pvalue)
    m = len(ps)
    c = sum(1 / i for i in range(1, m + 1))
    order = np.argsort(ps)
    k = max([i for i in range(1, m + 1) if ps[order[i - 1]] <= i * alpha / (m * c)], default=0)
    omega = k / m
    return omega, omega >= 0.5, float(np.mean(rhos))


@pytest.fixture(scope="module")
def panel():
    return L.annotator_panel(_table(), n_resamples=100)


def test_gold_agreement_and_each_annotator(panel, tmp_path):
    votes = [Counter(ANN[a][i] for a in ANN) for i in range(12)]
    no_majority = sum(1 for c in votes if c.most_common(1)[0][1] * 2 <= 3)
    unanimous = sum(1 for c in votes if len(c) == 1)
    assert no_majority == 3
    sec = L.annotators_section(panel)
    text = section_text(sec, tmp_path)
    assert sec.metrics["annotator_gold"]["no_majority"] == no_majority
    assert sec.metrics["annotator_gold"]["with_gold"] == 12 - no_majority
    assert sec.metrics["annotator_gold"]["unanimous"] == unanimous
    assert f"{12 - no_majority} of 12 labelled items have one; {no_majority} have no majority" in text
    pairs = panel.pairs.set_index(["judge_a", "judge_b"])
    for a, b in combinations(sorted(ANN), 2):
        assert pairs.loc[(a, b), "kappa"] == pytest.approx(cohen_kappa_score(ANN[a], ANN[b]), abs=1e-12)
        assert pairs.loc[(a, b), "kappa_low"] < pairs.loc[(a, b), "kappa"] < pairs.loc[(a, b), "kappa_high"]
    codes = {"pass": 0, "warn": 1, "fail": 2}
    ref = krippendorff.alpha(reliability_data=[[codes[v] for v in ANN[a]] for a in sorted(ANN)],
                             level_of_measurement="nominal")
    assert panel.panel.loc[0, "alpha"] == pytest.approx(ref, abs=1e-12)
    assert f"{ref:.2f}" in text
    each = panel.each.set_index("rater")
    for a in ANN:
        oth = [[ANN[o][i] for o in ANN if o != a] for i in range(12)]
        keep = [i for i in range(12) if oth[i][0] == oth[i][1]]  # two others: a majority only when they agree
        k = cohen_kappa_score([oth[i][0] for i in keep], [ANN[a][i] for i in keep])
        assert each.loc[a, "items"] == len(keep)
        assert each.loc[a, "kappa"] == pytest.approx(k, abs=1e-12)
    gold = {i: c.most_common(1)[0][0] for i, c in zip(ITEMS, votes, strict=True) if c.most_common(1)[0][1] >= 2}
    jg = panel.judge_gold.set_index("judge")
    for j in JUDGES:
        ks = [i for i in ITEMS if i in gold]
        ref = cohen_kappa_score([gold[i] for i in ks], [JUDGES[j][ITEMS.index(i)] for i in ks])
        assert jg.loc[j, "kappa"] == pytest.approx(ref, abs=1e-12)
    assert "good agrees best" in text


def test_the_alt_test_against_a_hand_computation(panel, tmp_path):
    sec = L.alt_test_section(panel)
    cells = {c["judge"]: c for c in sec.metrics["alt_test_cells"]}
    for j in JUDGES:
        omega, passes, rho = _hand_alt(JUDGES[j], ANN, 0.2)
        assert cells[j]["winning_rate"] == pytest.approx(omega)
        assert cells[j]["passes"] == passes
        assert cells[j]["advantage_probability"] == pytest.approx(rho, abs=1e-12)
        e = cells[j]["min_epsilon"]
        if e is None:
            assert not _hand_alt(JUDGES[j], ANN, 1.0)[1]
        else:
            assert _hand_alt(JUDGES[j], ANN, min(e + 1e-6, 1.0))[1]
            assert e == 0 or not _hand_alt(JUDGES[j], ANN, max(e - 1e-3, 0.0))[1]
    n_pass = sum(_hand_alt(JUDGES[j], ANN, 0.2)[1] for j in JUDGES)
    text = section_text(sec, tmp_path)
    assert f"{n_pass} of 2 (judge) configurations pass the Alt-Test at ε = 0.2" in text
    assert "Calderon, Reichart & Dror, ACL 2025" in text and "Benjamini–Yekutieli" in text


def test_two_annotators_the_alt_test_says_why_and_the_rest_shows(tmp_path):
    two = {a: v for a, v in ANN.items() if a != "cyd"}
    p = L.annotator_panel(_table(two), n_resamples=50)
    sec = L.alt_test_section(p)
    assert len(sec.items) == 1 and "at least 3 annotators per item" in sec.items[0] and "has 2" in sec.items[0]
    ann = L.annotators_section(p)
    disagree = sum(1 for i in range(12) if two["ann"][i] != two["bob"][i])
    assert ann.metrics["annotator_gold"]["no_majority"] == disagree
    assert L.next_round_section(p).tables


def test_the_next_round_plan(panel):
    sec = L.next_round_section(panel, half_width=0.3, coefficient_half_width=0.2)
    plan = {r["question"]: r for r in sec.metrics["next_round"]}
    alpha_row = next(r for q, r in plan.items() if "Krippendorff" in q)
    hw = (panel.panel.loc[0, "alpha_high"] - panel.panel.loc[0, "alpha_low"]) / 2
    assert alpha_row["needed"] == math.ceil(12 * (hw / 0.2) ** 2)
    assert alpha_row["more"] == max(0, alpha_row["needed"] - 12)
    # PPI++ for the pass rate with the best judge ("good"), from Se/Sp against the majority gold, by hand
    votes = [Counter(ANN[a][i] for a in ANN) for i in range(12)]
    gold = {i: c.most_common(1)[0][0] for i, c in enumerate(votes) if c.most_common(1)[0][1] >= 2}
    g = np.array([gold[i] for i in gold])
    v = np.array([JUDGES["good"][i] for i in gold])
    pi = np.mean(g == "pass")
    se, sp = np.mean(v[g == "pass"] == "pass"), np.mean(v[g == "fail"] == "fail")
    q = pi * se + (1 - pi) * (1 - sp)
    rho = (pi * se - pi * q) / math.sqrt(pi * (1 - pi) * q * (1 - q))
    z, total = stats.norm.ppf(0.975), 12
    need = next((n for n in range(1, total) if z * math.sqrt(pi * (1 - pi) / n * (1 - rho ** 2 / (1 + n / (total - n))))
                 <= 0.3), None)
    row = next(r for q_, r in plan.items() if "PPI++" in q_)
    assert need is not None and row["needed"] == need and "with good" in row["question"]
    assert row["more"] == max(0, need - (12 - 3))  # 9 items carry majority gold


def test_scores_pairs_gold_and_alt(tmp_path):
    h = {"h1": [1, 2, 3, 4, 5, 3, 2, 4, 5, 1], "h2": [1, 3, 3, 4, 4, 3, 2, 5, 5, 2], "h3": [2, 2, 3, 5, 5, 2, 1, 4, 4, 1]}
    judge = [1, 2, 3, 4, 5, 3, 2, 4, 4, 1]
    rows = [{"item_id": f"s{i}", "judge": a, "score": float(x), "verdict": None, "role": "human"} for a, xs in h.items()
            for i, x in enumerate(xs)]
    rows += [{"item_id": f"s{i}", "judge": "llm", "score": float(x), "verdict": None, "role": "judge"} for i, x in enumerate(judge)]
    t = verdicts.coerce(pd.DataFrame(rows))
    p = L.annotator_panel(t, n_resamples=50)
    assert p.kind == "scores"
    pr = p.pairs.set_index(["annotator_a", "annotator_b"])
    for a, b in combinations(h, 2):
        assert pr.loc[(a, b), "kappa_quadratic"] == pytest.approx(
            cohen_kappa_score(h[a], h[b], weights="quadratic"), abs=1e-12)
    m = np.array([h[a] for a in h], float).T
    assert p.gold.loc[0, "gold_mean"] == pytest.approx(m.mean())
    assert p.gold.loc[0, "unanimous"] == pytest.approx(np.mean(m.max(1) == m.min(1)))
    omega, passes, rho = _hand_alt(judge, h, 0.2, score="rmse")
    a = p.alt.iloc[0]
    assert a["winning_rate"] == pytest.approx(omega) and bool(a["passes"]) == passes
    assert a["advantage_probability"] == pytest.approx(rho, abs=1e-12)
    assert "annotators agree least" in section_text(L.annotators_section(p), tmp_path)


def test_a_labels_file_joined_to_a_judge_file(tmp_path):
    lab, jud = tmp_path / "labels.csv", tmp_path / "judge.csv"
    with lab.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "annotator", "kind", "action", "label", "order", "note", "labelled_at"])
        for a, vs in ANN.items():
            for i, v in zip(ITEMS, vs, strict=True):
                w.writerow([i, a, "pointwise", "label", v, "", "", "2026-01-01T00:00:00Z"])
    with jud.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "judge", "verdict"])
        for j, vs in JUDGES.items():
            for i, v in zip([*ITEMS, "extra1", "extra2"], [*vs, "pass", "fail"], strict=True):
                w.writerow([i, j, v])
    t = L.load_labels(str(lab), str(jud))
    p = L.annotator_panel(t, n_resamples=50)
    assert p.annotators == sorted(ANN) and p.judges == sorted(JUDGES)
    assert p.plan_inputs["judged_items"] == {"bad": 14, "good": 14}
    cells = {c["judge"]: c for c in L.alt_test_section(p).metrics["alt_test_cells"]}
    assert cells["good"]["passes"] == _hand_alt(JUDGES["good"], ANN, 0.2)[1]
    other = tmp_path / "other.csv"
    other.write_text("item_id,judge,verdict\nz1,A,pass\n", encoding="utf-8")
    with pytest.raises(DesignError, match="no item of the labels file"):
        L.load_labels(str(lab), str(other))
