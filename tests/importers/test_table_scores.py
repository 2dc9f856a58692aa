"""Issue 28, the table importer on score tables: ``thresholds`` for any score column, a wide table (one column per
judge or rater) reshaped to the tidy rows, a numeric human score kept as ``gold_score``; every count made here."""

from __future__ import annotations

import pandas as pd
import pytest
from cli_helper import run_cli

from evallab.datasets import load_verdicts
from evallab.errors import ImportDataError
from evallab.importers import import_file


@pytest.fixture
def wide(tmp_path):
    p = tmp_path / "ratings.csv"
    pd.DataFrame({"qid": ["a", "b", "c", "d"], "gpt": [9, 3, 5, None], "claude": [7, 2, 8, 6],
                  "human": [8, 4, 6, 1]}).to_csv(p, index=False)
    return p


def test_thresholds_cut_any_score_column(tmp_path):
    p = tmp_path / "s.csv"
    pd.DataFrame({"q": ["a", "b", "c", "d"], "rating": [2, 5, 7, ""], "who": "j"}).to_csv(p, index=False)
    t = import_file(p, "table", columns="item_id=q,score=rating,judge=who", thresholds=(4, 7))
    assert t["verdict"].tolist()[:3] == ["fail", "warn", "pass"] and pd.isna(t["verdict"].iloc[3])
    assert t["score"].tolist()[:3] == [2.0, 5.0, 7.0]
    plain = import_file(p, "table", columns="item_id=q,score=rating,judge=who")
    assert plain["verdict"].isna().all()  # a score without a verdict is no error; the row without a score says so
    assert plain["error"].isna().tolist() == [True, True, True, False] and "'rating'" in plain["error"].iloc[3]
    with pytest.raises(ImportDataError, match="fail_max < pass_min"):
        import_file(p, "table", columns="item_id=q,score=rating,judge=who", thresholds=(7, 4))


def test_a_wide_table_becomes_one_row_per_judge_and_the_human_score_is_gold(wide):
    t = import_file(wide, "table", columns="item_id=qid,gold_score=human", wide="gpt,claude", thresholds=(4, 7))
    assert len(t) == 4 + 3  # gpt has no score for d
    assert sorted(t["judge"].unique()) == ["claude", "gpt"]
    got = {(r.item_id, r.judge): (r.score, r.verdict, r.gold_score, r.gold) for r in t.itertuples()}
    assert got[("a", "gpt")] == (9.0, "pass", 8.0, "pass")
    assert got[("b", "claude")] == (2.0, "fail", 4.0, "fail")
    assert got[("c", "claude")] == (8.0, "pass", 6.0, "warn")
    assert str(t["gold_score"].dtype) == "Float64"


def test_bad_scores_and_wide_columns_are_one_line(tmp_path, wide):
    p = tmp_path / "bad.csv"
    pd.DataFrame({"q": ["a", "b"], "rating": ["3", "high"], "judge": "j"}).to_csv(p, index=False)
    with pytest.raises(ImportDataError) as e:
        import_file(p, "table", columns="item_id=q,score=rating")
    assert "\n" not in str(e.value) and "'high'" in str(e.value) and "row 2" in str(e.value)
    with pytest.raises(ImportDataError, match="wide column 'gemini'"):
        import_file(wide, "table", columns="item_id=qid", wide="gpt,gemini")


def test_cli_wide_with_thresholds(tmp_path, wide, capsys):
    out = tmp_path / "t.csv"
    code, text = run_cli(["import", wide, "--map", "item_id=qid,gold_score=human", "--wide", "gpt,claude",
                          "--thresholds", "4,7", "--out", out], capsys)
    assert code == 0, text
    back = load_verdicts(out)
    assert len(back) == 7 and back["gold_score"].notna().all()
    assert "verdicts: pass=3, warn=2, fail=2" in text
