"""Report 08's sections on a user's own small table (not HANNA): a 1–10 scale, 2 or 4 human raters, no criterion
column, no system — the labels file of ``evallab label`` with kind=scale, the default ``by`` on a table without a
criterion, the wording taken from the table (number of humans, systems), the drift fallback to two judges, and the
findings / conclusions with one cell. Values checked against scikit-learn, scipy and hand counts."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from section_helper import section_text
from sklearn.metrics import cohen_kappa_score

from evallab import verdicts
from evallab.errors import DesignError
from evallab.metrics import human_ceiling, rater_reliability, score_agreement
from evallab.reporting.sections import labels as L
from evallab.reporting.sections import scales as S
from evallab.reporting.sections import score_studies as SS

HUMANS = ["rater_ann", "rater_ben", "rater_cy", "rater_dee"]
JUDGES = ["gpt4o_score", "llama_score"]
N = 24


def _scores(n_humans: int, seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 11, N)
    out = {h: np.clip(truth + rng.integers(-1, 2, N), 1, 10) for h in HUMANS[:n_humans]}
    out |= {j: np.clip(truth + rng.integers(-2, 3, N), 1, 10) for j in JUDGES}
    return out


def _table(n_humans: int, judges=JUDGES) -> pd.DataFrame:
    sc = _scores(n_humans)
    rows = [{"item_id": f"i{i}", "judge": r, "role": "human" if r in HUMANS else "judge", "score": float(v),
             "verdict": None, "scale_min": 1.0, "scale_max": 10.0, "scale_step": 1.0, "scale_level": "ordinal"}
            for r, vs in sc.items() if r in HUMANS or r in judges for i, v in enumerate(vs)]
    return verdicts.coerce(pd.DataFrame(rows))


def _labels_files(tmp_path, n_humans: int, judges_scale: bool = True):
    sc = _scores(n_humans)
    lab, jud = tmp_path / "sl.csv", tmp_path / "score_judges.csv"
    with lab.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "annotator", "kind", "action", "label", "order", "note", "labelled_at"])
        for h in HUMANS[:n_humans]:
            for i, v in enumerate(sc[h]):
                w.writerow([f"i{i}", h.replace("rater_", "ann_"), "scale", "label", int(v), "", "",
                            "2026-01-01T00:00:00Z"])
    with jud.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "judge", "verdict", "score", *(["scale_min", "scale_max", "scale_step", "scale_level"]
                                                    if judges_scale else [])])
        for j in JUDGES:
            for i, v in enumerate(sc[j]):
                w.writerow([f"i{i}", j, "", float(v), *([1, 10, 1, "ordinal"] if judges_scale else [])])
    return sc, str(lab), str(jud)


@pytest.mark.parametrize("judges_scale", [True, False])
def test_scale_labels_file_gives_the_annotator_panel(tmp_path, judges_scale):
    """Item 1: a labels file of kind=scale (1–10) joined to a score table: no KeyError; the pairs' weighted kappa
    is scikit-learn's, the gold is the annotators' mean."""
    sc, lab, jud = _labels_files(tmp_path, 4, judges_scale)
    p = L.annotator_panel(L.load_labels(lab, jud), n_resamples=20)
    anns = [h.replace("rater_", "ann_") for h in HUMANS]
    assert p.kind == "scores" and p.annotators == anns and p.judges == JUDGES
    pr = p.pairs.set_index(["annotator_a", "annotator_b"])
    for a, b in [(anns[0], anns[1]), (anns[2], anns[3])]:
        ka = cohen_kappa_score(sc[a.replace("ann_", "rater_")], sc[b.replace("ann_", "rater_")],
                               weights="quadratic", labels=list(range(1, 11)))
        assert pr.loc[(a, b), "kappa_quadratic"] == pytest.approx(ka, abs=1e-9)
    m = np.array([sc[h] for h in HUMANS], float).T
    assert p.gold.loc[0, "gold_mean"] == pytest.approx(m.mean())
    each = p.each.set_index("rater")
    ref = np.delete(m, 0, axis=1).mean(axis=1)
    assert each.loc[anns[0], "spearman"] == pytest.approx(stats.spearmanr(m[:, 0], ref).statistic, abs=1e-9)
    assert p.alt is not None and len(p.alt) == 2
    text = section_text(L.alt_test_section(p), tmp_path)
    rho = float(p.alt["advantage_probability"].max())
    assert f"ρ = {rho:.1%}" in text and f"ρ = {rho:.3f}" not in text  # one form: the table's percent


def test_the_default_by_without_a_criterion_column_and_an_explicit_missing_column():
    """Item 2: the default ["criterion"] on a table without one → no breakdown, said in one line; another
    explicit column the table lacks is kept, and the estimator refuses it."""
    t = _table(2)
    by, note = S.breakdown(t, ["criterion"])
    assert by == [] and len(note.items) == 1 and "no `criterion` column" in note.items[0]
    by, note = S.breakdown(t, ["topic"])
    assert by == ["topic"] and not note.items
    with pytest.raises(DesignError, match="no column 'topic'"):
        score_agreement(t, by=by, n_resamples=0)
    with_c = t.assign(criterion="Overall")
    assert S.breakdown(with_c, ["criterion"])[0] == ["criterion"]


@pytest.mark.parametrize("n_humans", [2, 4])
def test_the_wording_comes_from_the_table(tmp_path, n_humans):
    """Item 3 and 5: the ceiling caveat names the table's number of humans, the system caveat its one system,
    the intervals say no "within each system"; one cell gives one human-agreement finding and a conclusion by
    the finding's rule (never an empty list)."""
    t = _table(n_humans)
    ag = score_agreement(t, by=[], n_resamples=50)
    ce = human_ceiling(t, by=[], n_resamples=50)
    rel = rater_reliability(t, by=[], n_resamples=50)
    assert "within each system" not in ag.estimate("spearman", 0).method
    assert "within each system" not in ce.estimate("spearman", 0).method
    sec = S.best_by_criterion(ag, ce)
    cav = " ".join(sec.caveats)
    words = {2: "two", 4: "four"}
    assert f"mean of all {words[n_humans]}" in cav and "all three" not in cav and "11" not in cav
    assert ("against the other human;" in cav) if n_humans == 2 else ("the mean of the other three;" in cav)
    assert "other two" not in cav
    assert "one system" in cav
    # the conclusion uses the finding's own rule, with the ceiling computed here
    m = np.array([_scores(n_humans)[h] for h in HUMANS[:n_humans]], float).T
    ceil = np.mean([stats.spearmanr(m[:, k], np.delete(m, k, axis=1).mean(axis=1)).statistic
                    for k in range(n_humans)])
    i = int(ag["spearman"].astype(float).idxmax())
    e = ag.estimate("spearman", i)
    word = "at or above" if e.value >= ceil else "within reach of" if e.high >= ceil else "below"
    assert sec.conclusions == [f"The best judge, {ag.loc[i, 'rater']}, is {word} the human ceiling "
                               f"(Spearman's ρ over stories, {ceil:.2f})."]
    assert f"the judge is {'at or above' if word == 'at or above' else 'within' if word != 'below' else 'below'}" \
        in sec.findings[0].sentence
    hd = S.human_disagreement(rel)
    assert len(hd.findings) == 1 and f"The {words[n_humans]} human raters' agreement" in hd.findings[0].sentence
    st = section_text(SS.stability(t, by=[], n_resamples=0), tmp_path)
    assert "HANNA" not in st and "one sample per item" in st


def test_the_conclusion_counts_by_the_findings_rule():
    """Item 5: with criteria, the conclusion names each criterion under the finding's verdict (within reach is not
    counted as reaching)."""
    rows = [{"criterion": "A", "best": "j", "ceiling": 0.9, "verdict": "within reach"},
            {"criterion": "B", "best": "j", "ceiling": 0.8, "verdict": "at or above"}]
    c = S._reach_conclusion(rows, "spearman")
    assert "at or above it on 1 of 2 criteria (B)" in c and "within reach of it on 1 of 2 criteria (A)" in c
    assert "()" not in c and ": ." not in c


def test_the_drift_fallback_picks_two_judges_never_a_human(tmp_path):
    """Item 4: the default pair not in the table → the first and last JUDGE (sorted), not a human even when the
    humans are named by the notebook and the table has no role column; one cell → the single value; fewer than two
    judges → one line saying why."""
    t = _table(2).drop(columns="role")
    sec = SS.judge_drift(t, ["ChatGPT · prompt 1", "Mistral-7B · prompt 1"], by=[], humans=HUMANS[:2],
                         n_resamples=20)
    text = section_text(sec, tmp_path)
    assert "shown instead: llama_score against gpt4o_score" in text and "rater_" not in text
    sc = _scores(2)
    shift = float(np.mean(sc["llama_score"] - sc["gpt4o_score"]))
    assert f"is {shift:+.2f} scale points" in text and "ranges from" not in text and "the 1 cells" not in text
    one = SS.judge_drift(_table(2, judges=JUDGES[:1]), by=[], n_resamples=0)
    assert len(one.items) == 1 and "1 judge beside the human raters (gpt4o_score)" in one.items[0]
