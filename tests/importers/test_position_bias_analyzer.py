"""The Position-Bias-Analyzer record importer (``--format position_bias_analyzer``): a hand-written record file
read row by row, the swapped order found by the names exchanged in ``cmp_index``, both extractions, detection,
``evallab import`` and one-line errors; then one real record file recounted with the csv module and a regex."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd
import pytest
from cli_helper import run_cli

from evallab.importers import ImportDataError, import_file
from evallab.importers._files import detect_format
from evallab.importers._position_bias_analyzer import authors_choice, import_position_bias_analyzer
from evallab.paths import data_dir

FIELDS = ["cmp_index", "question_1", "question_2", "answer1_1", "answer1_2", "answer2_1", "answer2_2", "A", "B",
          "reference_answer_1", "reference_answer_2", "evaluating_guidance", "task"]
REAL = (data_dir("position_bias_analyzer") / "data_MTBench_repetition"
        / "Repetition2-MTBench_3q-4m-vicuna13b-v1_record0_gemini-pro_3" / "record_gemini-pro_3.tsv")


def _values(s) -> list:
    """A string column as Python values, NA as None."""
    return [None if pd.isna(v) else v for v in s.astype(object).tolist()]


def _write(path: Path, rows: list[tuple[str, str, str, str, str]], judge: str = "judge-x") -> Path:
    """rows: (question id, A, B, task, reply) → a record TSV as the authors write it (all fields quoted)."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_ALL)
        w.writerow([*FIELDS, judge])
        for q, a, b, task, reply in rows:
            w.writerow([f"{q};{a};{b}", "q1", "q2", "a11", "a12", "a21", "a22", a, b, "", "", "", task, reply])
    return path


@pytest.fixture
def record(tmp_path):
    d = tmp_path / "Repetition3-MTBench_x" / "record"
    d.mkdir(parents=True)
    return _write(d / "record_judge-x_3.tsv", [
        ("81", "base", "rival", "writing", "Assistant A is fine. [[A]]"),          # base shown first, base wins
        ("81", "rival", "base", "writing", "I first thought [[B]].\n\nFinal verdict: [[A]]"),  # authors: B (base); evallab: ?
        ("82", "base", "rival", "math", "It is a tie. [[C]]"),
        ("82", "rival", "base", "math", "no verdict given"),
    ])


def test_rows_orders_and_both_extractions(record):
    df = import_position_bias_analyzer(record, baseline="base")
    assert len(df) == 4
    assert df["item_id"].tolist() == ["81;base;rival", "81;base;rival", "82;base;rival", "82;base;rival"]
    assert df["order"].tolist() == ["ab", "ba", "ab", "ba"]  # the swapped row = the names exchanged
    assert df["sample"].tolist() == [2] * 4  # Repetition3 → sample 2
    assert df["subset"].tolist() == ["writing", "writing", "math", "math"]
    assert df["judge"].unique().tolist() == ["judge-x"]
    # authors: the FIRST [[X]] as shown; in order ba, A is output 2 (rival)
    assert _values(df["authors_choice"]) == ["A", "B", "C", None]
    assert _values(df["authors_verdict"]) == ["1", "1", "tie", None]
    # evallab: row 2 names [[B]] and then [[A]]; its final statement is [[A]] (shown first in ba = output 2)
    assert _values(df["verdict"])[:3] == ["1", "2", "tie"]
    assert df["verdict"].isna().tolist() == [False, False, False, True]
    assert df["error"].notna().tolist() == [False, False, False, True]
    assert df["verdict_marks"].tolist()[1] == "[[B]] [[A]]"
    assert df["output_1_model"].unique().tolist() == ["base"] and df["output_2_model"].unique().tolist() == ["rival"]


def test_default_output_1_is_the_name_sorted_first_and_sample_option(record):
    df = import_position_bias_analyzer(record, sample=0)
    assert df["output_1_model"].unique().tolist() == ["base"]  # "base" < "rival"
    assert df["sample"].unique().tolist() == [0]
    assert "reply" not in df and import_position_bias_analyzer(record, replies=True)["reply"].iloc[0].endswith("[[A]]")


def test_detected_and_imported_by_the_cli(record, tmp_path, capsys):
    assert detect_format(record) == "position_bias_analyzer"
    assert len(import_file(record, baseline="base")) == 4
    out = tmp_path / "t.csv"
    code, text = run_cli(["import", record, "--format", "position_bias_analyzer", "--baseline", "base", "--out", out],
                         capsys)
    assert code == 0, text
    assert "position_bias_analyzer, 4 rows" in text and out.is_file()


def test_bad_input_one_line(tmp_path, capsys):
    bad = _write(tmp_path / "r.tsv", [("81", "a", "b", "writing", "[[A]]")])
    bad.write_text(bad.read_text().replace('"81;a;b"', '"81;a;c"'))
    with pytest.raises(ImportDataError, match=r"row 2, field 'cmp_index': '81;a;c' is not '<question_id>;a;b'"):
        import_position_bias_analyzer(bad)
    empty = _write(tmp_path / "e.tsv", [("81", "a", "b", "writing", "  ")])
    with pytest.raises(ImportDataError, match=r"row 2, field 'judge-x': is empty; expected the judge's reply"):
        import_position_bias_analyzer(empty)
    cols = tmp_path / "c.tsv"
    cols.write_text("cmp_index\tA\tB\n1;a;b\ta\tb\n")
    code, text = run_cli(["import", cols, "--format", "position_bias_analyzer", "--out", tmp_path / "o.csv"], capsys)
    assert code == 2 and "Traceback" not in text and len(text.strip().splitlines()) == 1
    assert "field 'question_1'" in text


def test_a_real_record_file_recounted():
    with REAL.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    df = import_position_bias_analyzer(REAL, baseline="vicuna-13b-v1.3")
    assert len(df) == len(rows) == 192
    assert df["sample"].unique().tolist() == [1]
    # the authors' extraction: the first [[A-D]] (a regex here), mapped by which model was shown as A
    first = [re.findall(r"\[\[([ABCD])\]\]", r["gemini-pro"]) for r in rows]
    expect = []
    for r, f in zip(rows, first, strict=True):
        if not f:
            expect.append(None)
        elif f[0] == "C":
            expect.append("tie")
        else:
            shown = r["A"] if f[0] == "A" else r["B"]
            expect.append("1" if shown == "vicuna-13b-v1.3" else "2")
    assert _values(df["authors_verdict"]) == expect
    # every comparison appears in both orders: 96 items
    assert all(sorted(g) == ["ab", "ba"] for _, g in df.groupby("item_id")["order"])
    assert df["item_id"].nunique() == 96


def test_authors_choice_is_the_first_mark():
    assert authors_choice("x [[C]] y [[A]]") == "C"
    assert authors_choice("[[ A ]] or [[E]]") is None
