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


# ------------------------------------------------------------------------------- one label, several snapshots
TWO_SNAPSHOTS = ("item_id,judge,model,verdict,gold\n"
                 "a,gpt-4o,gpt-4o-2024-05-13,pass,pass\nb,gpt-4o,gpt-4o-2024-05-13,fail,pass\n"
                 "c,gpt-4o,gpt-4o-2024-08-06,pass,pass\nd,gpt-4o,gpt-4o-2024-08-06,pass,pass\n"
                 "e,gpt-4o,gpt-4o-2024-08-06,pass,fail\na,mini,mini-1,pass,pass\nb,mini,,pass,pass\n")


def test_two_snapshot_judge_is_warned_in_the_loader_and_the_report_and_can_be_grouped(tmp_path):
    from evallab.metrics import _agreement as agreement
    from evallab.metrics import _design as design

    p = write(tmp_path, "mixed.csv", TWO_SNAPSHOTS)
    with pytest.warns(V.SnapshotWarning) as rec:
        df = load_verdicts(p)
    msg = str(rec[0].message)
    assert len(rec) == 1 and str(p) in msg and "'gpt-4o' carries 2 model snapshots" in msg
    assert "gpt-4o-2024-05-13: 2 replies" in msg and "gpt-4o-2024-08-06: 3 replies" in msg
    assert "mini" not in msg.replace("mini-1", "")  # one snapshot (and an unknown one) is not a mix
    snap = V.snapshots(df)  # hand count: 2 and 3 replies, on 2 and 3 items
    assert snap[["judge", "model", "replies", "items"]].values.tolist() == [
        ["gpt-4o", "gpt-4o-2024-05-13", 2, 2], ["gpt-4o", "gpt-4o-2024-08-06", 3, 3]]
    assert snap["share"].tolist() == pytest.approx([2 / 5, 3 / 5])
    # the report's shape line says it, in words
    assert "WARNING: judge 'gpt-4o' carries 2 model snapshots" in design.describe(df)["text"]
    # the snapshot is a design column: grouping by it separates what by=["judge"] pools (hand counts: 1/2, 2/3)
    pooled = agreement.accuracy(df, ["judge"]).set_index("judge").loc["gpt-4o"]
    assert (pooled["correct"], pooled["parsed"]) == (3, 5)
    split = agreement.accuracy(df, ["judge", "model"]).set_index(["judge", "model"])
    assert split.loc[("gpt-4o", "gpt-4o-2024-05-13"), "accuracy"] == pytest.approx(1 / 2)
    assert split.loc[("gpt-4o", "gpt-4o-2024-08-06"), "accuracy"] == pytest.approx(2 / 3)


def test_one_snapshot_per_judge_is_silent(tmp_path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", V.SnapshotWarning)
        df = load_verdicts(write(tmp_path, "v.csv", GOOD))
    assert V.snapshots(df).empty and V.snapshot_note(df) == ""


def test_recordings_of_one_judge_label_with_two_judge_models_are_warned(tmp_path):
    import json

    from evallab.judges import load_recordings, to_verdicts
    from evallab.paths import REPO_ROOT

    src = json.loads((REPO_ROOT / "tests/data/scenarios/recordings/good.json").read_text())
    for name, model in (("p__a", "deepseek-chat"), ("p__b", "deepseek-chat-0324")):
        entries = [{**e, "scenarioId": f"{e['scenarioId']}-{name}"} for e in src["entries"]]
        (tmp_path / f"{name}.json").write_text(json.dumps({**src, "judgeModel": model, "entries": entries}))
    with pytest.warns(V.SnapshotWarning, match="carries 2 model snapshots"):
        to_verdicts(load_recordings(tmp_path))


def test_import_cli_warns_about_two_snapshots_in_one_line(tmp_path, capsys):
    from cli_helper import run_cli

    src = write(tmp_path, "mixed.csv", TWO_SNAPSHOTS)
    code, text = run_cli(["import", src, "--format", "table", "--out", tmp_path / "out.csv"], capsys)
    assert code == 0
    line = next(x for x in text.splitlines() if "snapshots" in x)
    assert line.startswith(f"warning: {src}: judge 'gpt-4o' carries 2 model snapshots")
    assert "_import.py" not in text and "Traceback" not in text


def test_select_says_what_its_filters_leave_out_and_describe_repeats_it():
    """A user's table with two strategies, filtered to one: the other strategy's replies are named and counted
    (hand count: 3 CoT rows), never dropped silently, and the report's design sentence says so."""
    import pandas as pd

    from evallab import verdicts as V
    from evallab.metrics import _design as design

    df = pd.DataFrame({"item_id": ["a", "b", "c", "a", "b", "c"], "dataset": "d", "subset": "s", "judge": "j",
                       "strategy": ["Vanilla"] * 3 + ["CoT"] * 3, "anchor_set": "none", "order": "ab", "sample": 0,
                       "verdict": ["1", "2", "1", "1", "1", "2"], "gold": None})
    out = V.select(df, strategies=["Vanilla"])
    assert len(out) == 3 and out.attrs["left_out"] == ["strategy CoT: 3 replies left out by the strategies filter"]
    assert "strategy CoT: 3 replies left out by the strategies filter" in design.describe(out)["text"]
    assert V.select(df).attrs["left_out"] == []  # no filter, nothing left out


def test_pass_verdict_on_a_pairwise_row_is_refused_naming_its_row(tmp_path):
    # a row with a shown order (ab/ba) compares two outputs: a pass/warn/fail grade there was scored wrong before
    p = tmp_path / "mixed.csv"
    p.write_text("item_id,judge,order,verdict,gold\nq1,A,ab,1,1\nq1,A,ba,2,1\nq2,A,ab,pass,1\n", encoding="utf-8")
    with pytest.raises(VerdictTableError) as e:
        load_verdicts(p)
    assert (e.value.row, e.value.column) == (3, "verdict")
    assert "'pass' on a pairwise row (order 'ab')" in str(e.value)
    p.write_text("item_id,judge,order,verdict,gold\nq1,A,ab,1,fail\n", encoding="utf-8")
    with pytest.raises(VerdictTableError) as e:
        load_verdicts(p)
    assert (e.value.row, e.value.column) == (1, "gold")
    # the same grade with order '' is a pointwise row and loads
    p.write_text("item_id,judge,order,verdict,gold\nq1,A,,pass,fail\n", encoding="utf-8")
    assert list(load_verdicts(p)["verdict"]) == ["pass"]
