"""Issue 28: every public estimator that takes a verdict table refuses a score table (ratings in ``score``, every
verdict empty) in one line naming what it got and where to go instead, and the scale estimators refuse a verdict
table the same way; a verdict table that also carries scores (MT-Bench single grading cut by thresholds) is
still taken."""

from __future__ import annotations

import inspect

import pandas as pd
import pytest

import evallab.metrics as M
from evallab import verdicts as V
from evallab.errors import DataError, DesignError
from evallab.paths import data_dir

#: a tiny score table: two raters, five items, on a declared 1–5 scale, no verdict
SCORES = V.coerce(pd.DataFrame({
    "item_id": [f"s{i}" for i in range(5)] * 2, "judge": ["J"] * 5 + ["H"] * 5, "verdict": None,
    "score": [1, 2, 3, 4, 5, 2, 2, 3, 5, 5], "scale_min": 1.0, "scale_max": 5.0, "scale_step": 1.0,
    "scale_level": "ordinal", "role": ["judge"] * 5 + ["human"] * 5}))
#: a tiny verdict table: pass/fail with gold, no score
VERDICTS = V.coerce(pd.DataFrame({
    "item_id": [f"q{i}" for i in range(6)], "judge": "A", "verdict": ["pass", "fail"] * 3,
    "gold": ["pass", "pass", "fail", "fail", "pass", "fail"]}))

SCALE = "score_agreement"
RELIABILITY = "rater_reliability"
NONE = None  # no counterpart on a scale: the refusal names the scale estimators and the import thresholds

#: every public estimator that needs verdicts: (name, how to call it on a table t, the alternative it must name)
CALLS = [
    ("accuracy", lambda t: M.accuracy(t), SCALE),
    ("cohen_kappa_vs_gold", lambda t: M.cohen_kappa_vs_gold(t), SCALE),
    ("judge_agreement", lambda t: M.judge_agreement(t), RELIABILITY),
    ("fleiss_kappa", lambda t: M.fleiss_kappa(t), RELIABILITY),
    ("krippendorff_alpha", lambda t: M.krippendorff_alpha(t), RELIABILITY),
    ("repetition_stability", lambda t: M.repetition_stability(t), NONE),
    ("majority_vote", lambda t: M.majority_vote(t), NONE),
    ("pairwise_statistics", lambda t: M.pairwise_statistics(t), NONE),
    ("published_check", lambda t: M.published_check(t, pd.DataFrame()), NONE),
    ("position_consistency", lambda t: M.position_consistency(t), NONE),
    ("position_bias", lambda t: M.position_bias(t), NONE),
    ("balanced_position_accuracy", lambda t: M.balanced_position_accuracy(t), NONE),
    ("anchor_effect", lambda t: M.anchor_effect(t), NONE),
    ("first_slot_lean", lambda t: M.first_slot_lean(t), NONE),
    ("compare_judges", lambda t: M.compare_judges(t, "J", "H"), NONE),
    ("drift_summary", lambda t: M.drift_summary(t, t), NONE),
    ("pass_rate", lambda t: M.pass_rate(t), NONE),
    ("inflation_table", lambda t: M.inflation_table(t), NONE),
    ("inflation_tables", lambda t: M.inflation_tables(t), NONE),
    ("position_priming", lambda t: M.position_priming(t), NONE),
    ("win_rates", lambda t: M.win_rates(t), NONE),
    ("length_controlled_win_rates", lambda t: M.length_controlled_win_rates(t, pd.DataFrame()), NONE),
    ("evaluator_metrics", lambda t: M.evaluator_metrics(t), NONE),
    ("model_leaderboard", lambda t: M.model_leaderboard(t), NONE),
    ("win_rate_rank_agreement", lambda t: M.win_rate_rank_agreement(t), NONE),
    ("corrected_rates", lambda t: M.corrected_rates(t), NONE),
    ("corrected_difference", lambda t: M.corrected_difference(t, "system", "a", "b"), NONE),
    ("hide_gold", lambda t: M.hide_gold(t, 1), NONE),
    ("selective_judging", lambda t: M.selective_judging(t), NONE),
    ("content_free_probe", lambda t: M.content_free_probe(t), NONE),
    ("calibrated_rates", lambda t: M.calibrated_rates(t), NONE),
    ("paired_design", lambda t: M.paired_design(t), NONE),
    ("jury_verdicts", lambda t: M.jury_verdicts(t, ["J", "H"]), NONE),
    ("jury_comparison", lambda t: M.jury_comparison(t, ["J", "H"]), NONE),
    ("alt_test", lambda t: M.alt_test(t, judges=["J"]), "value=\"score\""),
    ("compare_configurations", lambda t: M.compare_configurations(t, n_resamples=0), NONE),
    ("select_items", lambda t: M.select_items(t, 2), NONE),
    ("selection_plan", lambda t: M.selection_plan(t, 2), NONE),
    ("selected_rate", lambda t: M.selected_rate(t, t), NONE),
]
#: the scale estimators: they refuse a verdict table, naming their verdict counterpart
SCALE_CALLS = [
    ("score_agreement", lambda t: M.score_agreement(t, n_resamples=0), "cohen_kappa_vs_gold"),
    ("human_ceiling", lambda t: M.human_ceiling(t, n_resamples=0), "alt_test"),
    ("rater_reliability", lambda t: M.rater_reliability(t, n_resamples=0), "krippendorff_alpha"),
    ("score_shift", lambda t: M.score_shift(t, n_resamples=0), "anchor_effect"),
    ("score_stability", lambda t: M.score_stability(t, n_resamples=0), "repetition_stability"),
    ("score_drift", lambda t: M.score_drift(t, "J", "H", n_resamples=0), "compare_judges"),
    ("score_cut", lambda t: M.score_cut(t, n_resamples=0), "pass_rate"),
]
#: public names that take no verdict table (planning from numbers, arrays, Results, series) or any table
#: (describe: what a table holds; subset_level: relabels a column)
NOT_VERDICT_TABLES = {
    "DesignError", "describe", "subset_level", "drift_gate", "leaderboard_rank_agreement", "calibrate", "gold_for_half_width", "items_for_accuracy_change",
    "items_for_flip_rate", "next_round", "samples_for_stable_majority"}


def test_every_public_estimator_is_listed():
    """The lists above are the whole face: a new estimator must say which kind of table it takes."""
    listed = {n for n, _, _ in CALLS} | {n for n, _, _ in SCALE_CALLS} | NOT_VERDICT_TABLES
    assert sorted(set(M.__all__) - listed) == []
    assert sorted(listed - set(M.__all__)) == []


@pytest.mark.parametrize("name,call,instead", CALLS, ids=[c[0] for c in CALLS])
def test_a_verdict_estimator_refuses_a_score_table_in_one_line(name, call, instead):
    with pytest.raises(DesignError) as e:
        call(SCORES)
    msg = str(e.value)
    assert "\n" not in msg and isinstance(e.value, DataError)
    assert "this is a score table" in msg and "column 'score', 1–5" in msg  # what it got, the declared scale
    assert "needs verdicts" in msg  # what it expected
    if instead is None:  # no scale counterpart: the scale report and the import thresholds are named
        assert "report 08" in msg and "--thresholds" in msg
    else:
        assert instead in msg


@pytest.mark.parametrize("name,call,instead", SCALE_CALLS, ids=[c[0] for c in SCALE_CALLS])
def test_a_scale_estimator_refuses_a_verdict_table_in_one_line(name, call, instead):
    with pytest.raises(DesignError) as e:
        call(VERDICTS)
    msg = str(e.value)
    assert "\n" not in msg
    assert "this is a verdict table" in msg and "column 'verdict': fail/pass" in msg
    assert "needs scores" in msg and instead in msg


def test_the_refusal_happens_before_the_estimator_reads_anything():
    """A score table missing every column a verdict estimator reads (order, gold …) is still refused for its
    kind, not for a missing column: the check comes first."""
    bare = pd.DataFrame({"item_id": ["s1", "s2"], "judge": "J", "score": [3.0, 4.0]})  # no verdict column at all
    with pytest.raises(DesignError, match="this is a score table .*column 'score', 3–4"):
        M.position_bias(bare)


def test_the_drift_gate_names_the_table_at_fault():
    with pytest.raises(DesignError) as e:
        M.drift_summary(VERDICTS, SCORES)
    assert str(e.value).startswith("candidate, column 'verdict': this is a score table")


def test_a_verdict_table_with_scores_is_taken():
    """MT-Bench single grading cut by thresholds keeps its 1–10 score beside a pass/warn/fail verdict: a verdict
    table, so the verdict estimators take it (the pass rate equals the count of ratings >= 7 by hand)."""
    from evallab.importers._mt_bench import import_mt_bench_single

    path = data_dir("formats") / "mt_bench" / "gpt-4_single.jsonl"
    t = import_mt_bench_single(path, thresholds=(4, 7))
    assert not V.is_score_table(t) and V.is_score_table(import_mt_bench_single(path))
    import json

    raw = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    r = M.pass_rate(t, n_resamples=0)
    assert int(r.loc[0, "replies"]) == len(raw)
    assert float(r.loc[0, "pass_rate"]) == pytest.approx(sum(x["score"] >= 7 for x in raw) / len(raw))


def test_an_all_unparsed_verdict_table_is_not_a_score_table():
    """Every verdict NA and no score: unparsed replies (the estimators count them), not a score table."""
    t = VERDICTS.assign(verdict=pd.NA)
    assert not V.is_score_table(t)
    assert not V.is_score_table(t.assign(score=pd.NA))
    assert V.is_score_table(t.assign(score=4.0))
    assert V.is_score_table(t.assign(verdict="", score=4.0))  # blank verdicts in an in-memory table


def test_the_wrapped_estimators_keep_their_signature_and_docstring():
    for name, _, _ in CALLS:
        fn = getattr(M, name)
        first = next(iter(inspect.signature(fn).parameters))
        assert fn.__doc__ and first in ("df", "verdicts", "baseline", "table"), name


def test_evallab_drift_names_the_score_file_in_one_line(tmp_path, capsys):
    from cli_helper import run_cli

    base, cand = tmp_path / "base.csv", tmp_path / "ratings.csv"
    VERDICTS.to_csv(base, index=False)
    SCORES.drop(columns=["role"]).to_csv(cand, index=False)
    code, out = run_cli(["drift", "--baseline", base, "--candidate", cand], capsys)
    assert code == 2
    assert out.strip().count("\n") == 0 and out.startswith(f"error: {cand}, column 'verdict': this is a score table")
