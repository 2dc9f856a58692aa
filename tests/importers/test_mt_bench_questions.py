"""Issue 28: MT-Bench single-answer ratings joined to their questions (FastChat's question.jsonl): each rating gets
its question's category and the text of the rated turn, so agreement can be broken down by category. Every
expected value is recounted here from the raw files with the json module."""

from __future__ import annotations

import collections
import json
import shutil

import pytest

from evallab import metrics as M
from evallab.errors import DataError
from evallab.importers import import_file
from evallab.importers._mt_bench import import_mt_bench_single
from evallab.paths import data_dir

MT = data_dir("formats") / "mt_bench"
SINGLE, QUESTIONS = MT / "gpt-4_single.jsonl", MT / "question.jsonl"


def _lines(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_each_rating_gets_its_questions_category_and_turn_text():
    ratings, questions = _lines(SINGLE), {q["question_id"]: q for q in _lines(QUESTIONS)}
    df = import_mt_bench_single(SINGLE)  # question.jsonl beside the file: joined by default
    want = collections.Counter(questions[r["question_id"]]["category"] for r in ratings)
    assert df.groupby("category").size().to_dict() == dict(want)
    assert len(want) == 8  # the eight MT-Bench categories, 80 questions x 2 turns
    keys = zip(df["question_id"], df["turn"].astype(int), strict=True)
    got = dict(zip(keys, df["turn_text"], strict=True))
    assert got == {(str(r["question_id"]), r["turn"]): questions[r["question_id"]]["turns"][r["turn"] - 1]
                   for r in ratings}


def test_a_breakdown_by_category_matches_a_hand_count():
    """Cut at 4 / 7, the pass rate per category equals the share of ratings >= 7 among that category's."""
    ratings, questions = _lines(SINGLE), {q["question_id"]: q["category"] for q in _lines(QUESTIONS)}
    per = collections.defaultdict(list)
    for r in ratings:
        per[questions[r["question_id"]]].append(r["score"] >= 7)
    r = M.pass_rate(import_mt_bench_single(SINGLE, thresholds=(4, 7)), by=["category"], n_resamples=0)
    assert dict(zip(r["category"], r["pass_rate"].astype(float), strict=True)) == pytest.approx(
        {c: sum(v) / len(v) for c, v in per.items()})


def test_fastchat_layout_explicit_file_and_no_file(tmp_path):
    judged = tmp_path / "mt_bench" / "model_judgment"  # FastChat: data/mt_bench/{question.jsonl, model_judgment/}
    judged.mkdir(parents=True)
    shutil.copy(SINGLE, judged / SINGLE.name)
    shutil.copy(QUESTIONS, tmp_path / "mt_bench" / "question.jsonl")
    assert import_file(judged / SINGLE.name)["category"].notna().all()  # found in the parent folder
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(SINGLE, alone / SINGLE.name)
    assert "category" not in import_mt_bench_single(alone / SINGLE.name).columns  # no questions: no join
    t = import_mt_bench_single(alone / SINGLE.name, questions=QUESTIONS)
    assert t["category"].notna().all() and t["turn_text"].notna().all()


def test_a_rating_without_its_question_is_refused_naming_the_line(tmp_path):
    qs = [q for q in _lines(QUESTIONS) if q["question_id"] != 81]
    (tmp_path / "question.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs), encoding="utf-8")
    first = next(i for i, r in enumerate(_lines(SINGLE), start=1) if r["question_id"] == 81)
    with pytest.raises(DataError) as e:
        import_mt_bench_single(SINGLE, questions=tmp_path / "question.jsonl")
    msg = str(e.value)
    assert "\n" not in msg and f"line {first}" in msg and "question 81 is not in question.jsonl" in msg


def test_the_cli_takes_the_questions_file(tmp_path, capsys):
    from cli_helper import run_cli

    from evallab.datasets import load_verdicts

    alone = tmp_path / SINGLE.name
    shutil.copy(SINGLE, alone)
    code, out = run_cli(["import", alone, "--questions", QUESTIONS, "--out", tmp_path / "t.csv"], capsys)
    assert code == 0, out
    t = load_verdicts(tmp_path / "t.csv")
    questions = {str(q["question_id"]): q["category"] for q in _lines(QUESTIONS)}
    assert t["category"].tolist() == [questions[str(r["question_id"])] for r in _lines(SINGLE)]
