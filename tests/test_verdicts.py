"""The tidy verdict table: schema coercion and the errors bad input must produce (one test per kind of bad input)."""

from __future__ import annotations

import pandas as pd
import pytest

from evallab import verdicts as V
from evallab.datasets import load_verdicts
from evallab.errors import DataError, VerdictTableError

GOOD = "item_id,judge,order,verdict,gold\nq1,J,ab,1,1\nq1,J,ba,2,1\nq2,J,ab,,2\n"


def write(tmp_path, name, data: str | bytes):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return p


def test_good_csv_loads_with_schema_and_keeps_unparsed(tmp_path):
    df = load_verdicts(write(tmp_path, "v.csv", GOOD))
    assert list(df.columns[: len(V.COLUMNS)]) == list(V.COLUMNS)
    assert len(df) == 3
    assert df["verdict"].isna().sum() == 1  # the empty verdict is kept as NA, not dropped
    assert df["anchor_set"].tolist() == ["none"] * 3 and df["sample"].tolist() == [0, 0, 0]


def test_jsonl_and_parquet_round_trip(tmp_path):
    df = load_verdicts(write(tmp_path, "v.csv", GOOD))
    pq = tmp_path / "v.parquet"
    df.to_parquet(pq)
    js = tmp_path / "v.jsonl"
    df.to_json(js, orient="records", lines=True)
    for p in (pq, js):
        back = load_verdicts(p)
        assert back["verdict"].tolist()[:2] == ["1", "2"] and pd.isna(back["verdict"].iloc[2])


def test_missing_column_names_file_and_column(tmp_path):
    p = write(tmp_path, "nojudge.csv", "item_id,verdict\nq1,1\n")
    with pytest.raises(VerdictTableError) as e:
        load_verdicts(p)
    msg = str(e.value)
    assert "nojudge.csv" in msg and "judge" in msg and "required" in msg


def test_unknown_verdict_names_row_and_expected_values(tmp_path):
    p = write(tmp_path, "bad.csv", "item_id,judge,verdict\nq1,J,1\nq2,J,maybe\n")
    with pytest.raises(VerdictTableError) as e:
        load_verdicts(p)
    msg = str(e.value)
    assert "bad.csv" in msg and "row 2" in msg and "file line 3" in msg and "'maybe'" in msg
    assert "'pass'" in msg  # the expected vocabulary is listed
    assert e.value.column == "verdict"


def test_duplicated_key_names_the_row(tmp_path):
    p = write(tmp_path, "dup.csv", "item_id,judge,order,verdict\nq1,J,ab,1\nq2,J,ab,1\nq1,J,ab,2\n")
    with pytest.raises(VerdictTableError) as e:
        load_verdicts(p)
    msg = str(e.value)
    assert "dup.csv" in msg and "row 3" in msg and "duplicated key" in msg and "'q1'" in msg


def test_non_utf8_line_is_named(tmp_path):
    p = write(tmp_path, "latin.csv", b"item_id,judge,verdict\nq1,J,1\nq\xe92,J,2\n")
    with pytest.raises(DataError) as e:
        load_verdicts(p)
    msg = str(e.value)
    assert "latin.csv" in msg and "line 3" in msg and "UTF-8" in msg


def test_empty_file(tmp_path):
    for name in ("empty.csv", "empty.jsonl", "empty.parquet"):
        p = write(tmp_path, name, b"")
        with pytest.raises(DataError) as e:
            load_verdicts(p)
        assert name in str(e.value) and "empty" in str(e.value)


def test_header_only_csv_has_no_rows(tmp_path):
    with pytest.raises(VerdictTableError, match="no rows"):
        load_verdicts(write(tmp_path, "h.csv", "item_id,judge,verdict\n"))


def test_bad_jsonl_line_is_named(tmp_path):
    p = write(tmp_path, "v.jsonl", '{"item_id": "a", "judge": "J", "verdict": "1"}\n{"item_id": \n')
    with pytest.raises(DataError, match=r"v\.jsonl.*line 2"):
        load_verdicts(p)


def test_non_numeric_sample_is_named(tmp_path):
    p = write(tmp_path, "s.csv", "item_id,judge,verdict,sample\nq1,J,1,0\nq1,J,1,one\n")
    with pytest.raises(VerdictTableError) as e:
        load_verdicts(p)
    assert "sample" in str(e.value) and "'one'" in str(e.value) and "row 2" in str(e.value)


def test_select_prefix_and_unknown_value():
    df = V.coerce(pd.DataFrame({"item_id": ["a", "b", "c"], "judge": ["J"] * 3, "verdict": ["1", "2", "1"],
                                "subset": ["X/A", "X/B", "Y"]}))
    assert V.select(df, subsets=["X"])["item_id"].tolist() == ["a", "b"]
    with pytest.raises(VerdictTableError, match="available"):
        V.select(df, judges=["nobody"])


def test_parse_rate_counts_unparsed():
    df = V.coerce(pd.DataFrame({"item_id": list("abcd"), "judge": ["J", "J", "K", "K"],
                                "verdict": ["1", None, None, None]}))
    pr = V.parse_rate(df).set_index("judge")
    assert pr.loc["J", "unparsed"] == 1 and pr.loc["K", "unparsed"] == 2 and pr.loc["K", "unparsed_rate"] == 1.0


@pytest.mark.parametrize("value, expected", [
    (None, []), ("", []), (["a", "b"], ["a", "b"]), ('["LLMBar/Natural"]', ["LLMBar/Natural"]),
    ("[]", []), ("LLMBar/Natural", ["LLMBar/Natural"]), ("[a, b]", ["a", "b"]),
])
def test_as_list_accepts_what_papermill_passes(value, expected):
    assert V.as_list(value) == expected
