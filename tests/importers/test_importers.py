"""Importers on the real shared files (data/formats) and on fixtures in the upstream layouts.

Every expected count is recounted here from the raw file with the json / zipfile modules, never taken from what the
importer or the CLI printed.
"""

from __future__ import annotations

import collections
import hashlib
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from cli_helper import run_cli

from evallab import importers as I
from evallab.datasets import load_verdicts
from evallab.errors import DataError
from evallab.importers._alpaca_eval import import_alpaca_eval
from evallab.importers._files import detect_format
from evallab.importers._inspect_ai import import_inspect_log
from evallab.importers._mt_bench import (
    import_mt_bench_human,
    import_mt_bench_pair,
    import_mt_bench_single,
    mt_bench_human_gold,
)
from evallab.importers._pairwise_labels import import_arena_hard, import_judgebench
from evallab.importers._promptfoo import import_promptfoo
from evallab.importers._table import import_table
from evallab.paths import data_dir

FORMATS = data_dir("formats")
PAIR = FORMATS / "mt_bench" / "gpt-4_pair.jsonl"
SINGLE = FORMATS / "mt_bench" / "gpt-4_single.jsonl"
AE1 = FORMATS / "alpaca_eval" / "alpaca-7b__alpaca_eval_gpt4__annotations.json"
AE2 = FORMATS / "alpaca_eval" / "alpaca-7b__weighted_alpaca_eval_gpt4_turbo__annotations.first400.json"
INSPECT_JSON = FORMATS / "inspect_ai" / "2025-05-12T20-28-26-04-00_security-guide.json"
INSPECT_EVAL = sorted((FORMATS / "inspect_ai").glob("*.eval"))
PROMPTFOO = FORMATS / "promptfoo" / "sample-export.json"
FIX = Path(__file__).parents[1] / "data" / "importers"
ARENA = FIX / "arena_hard" / "model_judgment" / "gpt-4-1106-preview" / "llama-3-8b-instruct.jsonl"
JUDGEBENCH = next((FIX / "judgebench").glob("*.jsonl"))
HUMAN = FIX / "mt_bench" / "human_judgments.jsonl"
INSPECT_MIXED = FIX / "inspect" / "mixed-grades.json"
PROMPTFOO_ERR = FIX / "promptfoo" / "provider-error.json"
VOTES = FIX / "table" / "votes.csv"


def _lines(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _counts(df):
    return df["verdict"].value_counts(dropna=False).to_dict()


# ---------------------------------------------------------------- the shared files: copied, checksummed

def test_shared_files_copied_with_source_license_and_checksums():
    sums = {}
    for line in (data_dir() / "SHA256SUMS").read_text().splitlines():
        h, p = line.split("  ", 1)
        sums[p] = h
    for folder in ("mt_bench", "alpaca_eval", "inspect_ai", "promptfoo"):
        assert (FORMATS / folder / "SOURCE.md").is_file() and (FORMATS / folder / "LICENSE").is_file()
    files = [p for p in FORMATS.rglob("*") if p.is_file()]
    assert len(files) == 20  # 18 copied files + this folder's own SOURCE.md and LICENSE
    for p in files:
        rel = "./" + p.relative_to(data_dir()).as_posix()
        assert sums[rel] == hashlib.sha256(p.read_bytes()).hexdigest(), rel


# ---------------------------------------------------------------- MT-Bench

def _mt_expected(rows):
    """Recount: per line two games; the winner as a model name, its original index by alphabetical order."""
    out = collections.Counter()
    orders = collections.Counter()
    for r in rows:
        o1 = min(r["model_1"], r["model_2"])
        for game, w in ((1, r["g1_winner"]), (2, r["g2_winner"])):
            shown_first = r["model_1"] if game == 1 else r["model_2"]
            orders["ab" if shown_first == o1 else "ba"] += 1
            if w == "error":
                out[None] += 1
            elif w == "tie":
                out["tie"] += 1
            else:
                out["1" if r[w] == o1 else "2"] += 1
    return out, orders


def test_mt_bench_pair_counts_match_a_recount():
    rows = _lines(PAIR)
    assert len(rows) == 75 and len({(r["question_id"], r["turn"]) for r in rows}) == 75
    df = import_mt_bench_pair(PAIR)
    expected, orders = _mt_expected(rows)
    assert len(df) == 2 * len(rows) == 150
    assert int(df["verdict"].isna().sum()) == expected[None]
    for v in ("1", "2", "tie"):
        assert int((df["verdict"] == v).sum()) == expected[v]
    assert df["order"].value_counts().to_dict() == dict(orders)
    # every NA verdict has its reason; the error games are exactly the 'error' winners
    assert df.loc[df["verdict"].isna(), "error"].notna().all()
    assert df.loc[df["verdict"].notna(), "error"].isna().all()
    n_err = sum((r["g1_winner"] == "error") + (r["g2_winner"] == "error") for r in rows)
    assert int(df["verdict"].isna().sum()) == n_err


def test_mt_bench_pair_swapped_game_maps_back_to_original_index():
    rows = _lines(PAIR)
    df = import_mt_bench_pair(PAIR).set_index(["question_id", "order"])
    # a line where both games name the same model: both rows carry the same original index
    r = next(r for r in rows if r["g1_winner"] == r["g2_winner"] == "model_2")
    o1 = min(r["model_1"], r["model_2"])
    want = "1" if r["model_2"] == o1 else "2"
    assert df.loc[(str(r["question_id"]), "ab"), "verdict"] == want
    assert df.loc[(str(r["question_id"]), "ba"), "verdict"] == want


def test_mt_bench_single_scores_and_thresholds():
    rows = _lines(SINGLE)
    df = import_mt_bench_single(SINGLE)
    assert len(df) == len(rows) == 160
    assert int(df["score"].notna().sum()) == sum(r["score"] != -1 for r in rows)
    assert df["verdict"].isna().all() and df["error"].notna().all()  # no pass/fail verdict without thresholds
    assert sorted(df["score"].dropna().astype(float)) == sorted(float(r["score"]) for r in rows if r["score"] != -1)
    t = import_mt_bench_single(SINGLE, thresholds=(4, 7))
    assert int((t["verdict"] == "pass").sum()) == sum(r["score"] >= 7 for r in rows)
    assert int((t["verdict"] == "fail").sum()) == sum(1 <= r["score"] <= 4 for r in rows)
    assert int((t["verdict"] == "warn").sum()) == sum(4 < r["score"] < 7 for r in rows)


def test_mt_bench_single_minus_one_is_na_with_reason(tmp_path):
    rows = _lines(SINGLE)[:3]
    rows[1]["score"] = -1
    p = tmp_path / "x_single.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    df = import_mt_bench_single(p, thresholds=(4, 7))
    assert df["verdict"].isna().tolist() == [False, True, False]
    assert pd.isna(df["score"].iloc[1]) and "score = -1" in df["error"].iloc[1]


def test_mt_bench_human_as_judges_and_as_gold():
    rows = _lines(HUMAN)
    df = import_mt_bench_human(HUMAN)
    assert len(df) == len(rows)
    for r, (_, row) in zip(rows, df.iterrows(), strict=True):
        o1 = min(r["model_a"], r["model_b"])
        w = r["winner"]
        want = "tie" if w.startswith("tie") else ("1" if r[w] == o1 else "2")
        assert row["verdict"] == want and row["judge"] == r["judge"] and row["order"] == ""
    g = mt_bench_human_gold(HUMAN, rule="majority")
    # recount: per (question, turn, pair) the labels of every annotator
    items = collections.defaultdict(list)
    for r in rows:
        o1, o2 = sorted([r["model_a"], r["model_b"]])
        w = r["winner"]
        items[(r["question_id"], r["turn"], o1, o2)].append("tie" if w.startswith("tie") else
                                                            "1" if r[w] == o1 else "2")
    majority = {k: collections.Counter(v).most_common(1)[0] for k, v in items.items()}
    with_gold = sum(n * 2 > len(items[k]) for k, (_, n) in majority.items())
    multi = [k for k, v in items.items() if len(v) >= 2]
    unanimous = sum(len(set(items[k])) == 1 for k in multi)
    assert g.summary["items"] == len(items)
    assert g.summary["with_gold"] == with_gold
    assert g.summary["no_majority"] == len(items) - with_gold
    assert g.summary["unanimous_pct"] == pytest.approx(100 * unanimous / len(multi))
    t = g.table.set_index("item_id")
    assert t.loc["81-t1-alpaca-13b-vs-gpt-3.5-turbo", "gold"] == "2"
    assert pd.isna(t.loc["83-t1-gpt-4-vs-llama-13b", "gold"])


# ---------------------------------------------------------------- AlpacaEval

def test_alpaca_eval_v1_counts_805_584_205_16():
    raw = json.loads(AE1.read_text(encoding="utf-8"))
    c = collections.Counter(r["preference"] for r in raw)
    assert len(raw) == 805 and (c[1], c[2], c[0]) == (584, 205, 16)
    df = import_alpaca_eval(AE1)
    assert len(df) == len(raw)
    assert int((df["verdict"] == "1").sum()) == c[1]
    assert int((df["verdict"] == "2").sum()) == c[2]
    assert int((df["verdict"] == "tie").sum()) == c[0]
    assert int(df["verdict"].isna().sum()) == 0
    # item id stable from the instruction text
    assert df["item_id"].iloc[0] == hashlib.sha256(raw[0]["instruction"].encode()).hexdigest()[:16]
    assert df["item_id"].is_unique
    assert df["judge"].unique().tolist() == ["alpaca_eval_gpt4"]
    assert df["cost_usd"].astype(float).sum() == pytest.approx(
        sum(r["price_per_example"] for r in raw if r["price_per_example"] is not None))


def test_alpaca_eval_v2_weighted_keeps_continuous_preference():
    raw = json.loads(AE2.read_text(encoding="utf-8"))
    df = import_alpaca_eval(AE2)
    prefs = [r["preference"] for r in raw]
    assert len(df) == len(raw) == 400
    assert int((df["verdict"] == "1").sum()) == sum(p is not None and p < 1.5 for p in prefs)
    assert int((df["verdict"] == "2").sum()) == sum(p is not None and p > 1.5 for p in prefs)
    assert int((df["verdict"] == "tie").sum()) == sum(p == 1.5 for p in prefs)
    assert df["score"].astype(float).tolist() == pytest.approx(prefs)
    # the same instructions give the same item ids in v1 and v2
    v1 = import_alpaca_eval(AE1)
    assert set(df["item_id"]) <= set(v1["item_id"])


def test_alpaca_eval_null_preference_is_na_with_reason(tmp_path):
    raw = json.loads(AE2.read_text(encoding="utf-8"))[:5]
    raw[2]["preference"] = None
    p = tmp_path / "annotations.json"
    p.write_text(json.dumps(raw))
    df = I.import_file(p)
    assert len(df) == 5 and df["verdict"].isna().tolist() == [False, False, True, False, False]
    assert "no preference parsed" in df["error"].iloc[2]


# ---------------------------------------------------------------- Arena-Hard and JudgeBench (fixtures)

def test_arena_hard_games_map_back_to_original_index():
    rows = _lines(ARENA)
    df = import_arena_hard(ARENA, baseline="gpt-4-0314")
    assert len(df) == sum(len(r["games"]) for r in rows)
    # recount: game 1 baseline (output 1) shown as A, game 2 swapped
    want = []
    for r in rows:
        for k, g in enumerate(r["games"]):
            s = g["score"]
            if s is None:
                want.append(None)
            elif s == "A=B":
                want.append("tie")
            else:
                a_won = s.startswith("A>")
                want.append(("1" if a_won else "2") if k == 0 else ("2" if a_won else "1"))
    got = [None if pd.isna(v) else v for v in df["verdict"]]
    assert got == want
    assert df["order"].tolist() == ["ab", "ba"] * len(rows)
    assert df.loc[df["raw_verdict"] == "A>>B", "score"].astype(float).tolist() == [-2.0, 2.0]
    assert (df["output_1_model"] == "gpt-4-0314").all()


def test_judgebench_second_judgment_mapped_back_and_gold_from_label():
    rows = _lines(JUDGEBENCH)
    df = import_judgebench(JUDGEBENCH)
    flip = {"A>B": "2", "B>A": "1", "A=B": "tie"}
    same = {"A>B": "1", "B>A": "2", "A=B": "tie"}
    want = []
    for r in rows:
        for k, j in enumerate(r["judgments"]):
            d = None if j is None else j["decision"]
            want.append(None if d is None else (same if k == 0 else flip)[d])
    assert [None if pd.isna(v) else v for v in df["verdict"]] == want
    assert df["gold"].tolist() == [same[r["label"]] for r in rows for _ in r["judgments"]]
    assert (df.loc[df["verdict"].isna(), "error"].notna()).all()
    assert df["judge"].unique().tolist() == ["arena_hard/gpt-4o-mini"]


# ---------------------------------------------------------------- inspect_ai

def _inspect_recount(path):
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as z:
            samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    else:
        samples = json.loads(path.read_text(encoding="utf-8"))["samples"]
    return samples, collections.Counter(s["scores"]["model_graded_fact"]["value"] for s in samples)


@pytest.mark.parametrize("path", [INSPECT_JSON, *INSPECT_EVAL], ids=lambda p: p.suffix + ":" + p.name[:40])
def test_inspect_logs_counts_match_a_recount(path):
    samples, c = _inspect_recount(path)
    df = import_inspect_log(path)
    assert len(df) == len(samples)
    assert int((df["verdict"] == "pass").sum()) == c["C"]
    assert int((df["verdict"] == "fail").sum()) == c["I"]
    assert int(df["verdict"].isna().sum()) == len(samples) - c["C"] - c["I"]
    graders = {s["scores"]["model_graded_fact"]["metadata"]["grading"][-1]["model"] for s in samples}
    assert set(df["model"]) == graders
    assert set(df["strategy"]) == {"model_graded_fact"}


def test_inspect_counts_stated_in_source_md():
    assert _inspect_recount(INSPECT_JSON)[1] == {"C": 3}
    got = {p.name.split("_")[1]: dict(_inspect_recount(p)[1]) for p in INSPECT_EVAL}
    assert got == {"security-guide": {"C": 11, "I": 5}, "theory-of-mind": {"C": 83, "I": 17}}


def test_inspect_grades_and_unscored_samples():
    log = json.loads(INSPECT_MIXED.read_text())
    df = import_inspect_log(INSPECT_MIXED)
    assert len(df) == len(log["samples"])
    m = {"C": "pass", "I": "fail", "P": "warn"}
    for s, (_, row) in zip(log["samples"], df.iterrows(), strict=True):
        v = (s.get("scores") or {}).get("model_graded_qa", {}).get("value")
        if v in m:
            assert row["verdict"] == m[v] and pd.isna(row["error"])
        else:
            assert pd.isna(row["verdict"]) and isinstance(row["error"], str)
    assert "model timed out" in df["error"].iloc[5]
    assert "Grade not found" in df["error"].iloc[4]
    assert df["judge"].unique().tolist() == ["openai/gpt-4o"]  # the grader role


# ---------------------------------------------------------------- promptfoo

def test_promptfoo_llm_rubric_components_match_a_recount():
    ex = json.loads(PROMPTFOO.read_text(encoding="utf-8"))
    comps = [c for r in ex["results"]["results"] for c in r["gradingResult"]["componentResults"]]
    rubric = [c for c in comps if c["assertion"]["type"] == "llm-rubric"]
    assert len(ex["results"]["results"]) == 4 and len(rubric) == 4
    df = import_promptfoo(PROMPTFOO)
    assert len(df) == len(rubric)
    assert int((df["verdict"] == "pass").sum()) == sum(c["pass"] is True for c in rubric)
    assert int((df["verdict"] == "fail").sum()) == sum(c["pass"] is False for c in rubric)
    assert df["input_tokens"].astype(int).tolist() == [c["tokensUsed"]["prompt"] for c in rubric]
    everything = import_promptfoo(PROMPTFOO, types=sorted({c["assertion"]["type"] for c in comps}))
    assert len(everything) == len(comps)
    assert int((everything["verdict"] == "pass").sum()) == sum(c["pass"] for c in comps)


def test_promptfoo_provider_error_kept_as_na():
    ex = json.loads(PROMPTFOO_ERR.read_text())
    df = import_promptfoo(PROMPTFOO_ERR)
    assert len(df) == 2
    assert df["verdict"].iloc[0] == "fail" and pd.isna(df["verdict"].iloc[1])
    assert ex["results"]["results"][1]["error"] in df["error"].iloc[1]
    assert df["judge"].unique().tolist() == ["openai:gpt-4.1"]


# ---------------------------------------------------------------- mapped tables

def test_mapped_table_values_and_na_reasons():
    raw = pd.read_csv(VOTES, dtype=str, keep_default_na=False)
    df = import_table(VOTES, columns="item_id=question,judge=rater,verdict=winner,order=shown",
                        values={"model_a": "1", "model_b": "2", "tie": "tie", "skip": ""})
    m = {"model_a": "1", "model_b": "2", "tie": "tie"}
    assert [None if pd.isna(v) else v for v in df["verdict"]] == [m.get(w) for w in raw["winner"]]
    assert df["error"].notna().sum() == sum(w not in m for w in raw["winner"])
    assert df["order"].tolist() == raw["shown"].tolist()


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".parquet", ".tsv"])
def test_mapped_table_other_containers_give_the_same_rows(tmp_path, suffix):
    raw = pd.read_csv(VOTES, dtype=str, keep_default_na=False)
    p = tmp_path / f"votes{suffix}"
    if suffix == ".jsonl":
        raw.to_json(p, orient="records", lines=True)
    elif suffix == ".json":
        raw.to_json(p, orient="records")
    elif suffix == ".parquet":
        raw.to_parquet(p)
    else:
        raw.to_csv(p, sep="\t", index=False)
    kw = dict(columns="item_id=question,judge=rater,verdict=winner,order=shown",
              values="model_a=1,model_b=2,tie=tie,skip=")
    a = import_table(VOTES, **kw)
    b = import_table(p, **kw)
    cols = ["item_id", "judge", "order", "verdict", "error"]
    pd.testing.assert_frame_equal(a[cols], b[cols])


# ---------------------------------------------------------------- detection, BOM, non-regular files

@pytest.mark.parametrize("path,fmt", [
    (PAIR, "mt_bench_pair"), (SINGLE, "mt_bench_single"), (AE1, "alpaca_eval"), (AE2, "alpaca_eval"),
    (INSPECT_JSON, "inspect"), *((p, "inspect") for p in INSPECT_EVAL), (PROMPTFOO, "promptfoo"),
    (ARENA, "arena_hard"), (JUDGEBENCH, "judgebench"), (HUMAN, "mt_bench_human"), (INSPECT_MIXED, "inspect"),
], ids=lambda x: x.name[:30] if isinstance(x, Path) else x)
def test_detect_format(path, fmt):
    assert detect_format(path) == fmt


@pytest.mark.parametrize("path", [PAIR, AE1, PROMPTFOO, INSPECT_JSON, ARENA], ids=lambda p: p.name[:30])
def test_byte_order_mark_loads_the_same_rows(tmp_path, path):
    p = tmp_path / path.name
    p.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    a, b = I.import_file(path), I.import_file(p)
    cols = ["item_id", "judge", "order", "verdict", "score", "error"]
    pd.testing.assert_frame_equal(a[cols], b[cols])


def test_csv_with_byte_order_mark(tmp_path):
    p = tmp_path / "votes.csv"
    p.write_bytes(b"\xef\xbb\xbf" + VOTES.read_bytes())
    kw = dict(columns="item_id=question,judge=rater,verdict=winner,order=shown",
              values="model_a=1,model_b=2,tie=tie,skip=")
    pd.testing.assert_frame_equal(import_table(VOTES, **kw)[["item_id", "order", "verdict"]],
                                  import_table(p, **kw)[["item_id", "order", "verdict"]])


def test_directory_and_fifo_refused_at_once(tmp_path, capsys):
    import os

    d = tmp_path / "x.csv"
    d.mkdir()
    with pytest.raises(I.ImportDataError) as ei:
        I.import_file(d)
    assert str(ei.value) == f"{d}: is a directory, not a regular file; expected a judge-verdict file"
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    code, out = run_cli(["import", fifo, "--out", tmp_path / "o.csv"], capsys)  # would block if opened
    assert code == 2
    assert out == f"error: {fifo}: is a FIFO (named pipe), not a regular file; expected a judge-verdict file\n"
    code, out = run_cli(["import", d, "--format", "table", "--map", "verdict=w", "--out", tmp_path / "o.csv"],
                        capsys)
    assert code == 2 and out.count("\n") == 1 and "is a directory" in out


# ---------------------------------------------------------------- CLI and round trip

@pytest.mark.parametrize("path", [PAIR, AE1, INSPECT_EVAL[0], PROMPTFOO, ARENA, JUDGEBENCH, INSPECT_MIXED],
                         ids=lambda p: p.name[:30])
@pytest.mark.parametrize("ext", ["csv", "jsonl", "parquet"])
def test_cli_round_trip_through_load_verdicts(tmp_path, capsys, path, ext):
    out = tmp_path / f"t.{ext}"
    code, text = run_cli(["import", path, "--out", out], capsys)
    assert code == 0, text
    direct = I.import_file(path)
    back = load_verdicts(out)
    assert len(back) == len(direct)
    assert _counts(back) == _counts(direct)
    assert back["item_id"].tolist() == direct["item_id"].tolist()
    assert back["order"].tolist() == direct["order"].tolist()
    assert back["error"].isna().tolist() == direct["error"].isna().tolist()


def test_cli_prints_rows_verdict_counts_and_na(tmp_path, capsys):
    rows = _lines(PAIR)
    expected, _ = _mt_expected(rows)
    code, out = run_cli(["import", PAIR, "--out", tmp_path / "t.csv"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert f"rows: {2 * len(rows)}" in lines
    assert f"verdicts: 1={expected['1']}, 2={expected['2']}, tie={expected['tie']}" in lines
    assert f"NA: {expected[None]}" in lines


def test_cli_alpaca_eval_counts(tmp_path, capsys):
    raw = json.loads(AE1.read_text(encoding="utf-8"))
    c = collections.Counter(r["preference"] for r in raw)
    code, out = run_cli(["import", AE1, "--out", tmp_path / "t.parquet"], capsys)
    assert code == 0
    assert f"rows: {len(raw)}" in out.splitlines()
    assert f"verdicts: 1={c[1]}, 2={c[2]}, tie={c[0]}" in out.splitlines()
    assert "NA: 0" in out.splitlines()


def test_cli_mapped_table(tmp_path, capsys):
    code, out = run_cli(["import", VOTES, "--map", "verdict=winner", "--map", "item_id=question,judge=rater,"
                         "order=shown", "--values", "model_a=1,model_b=2,tie=tie,skip=", "--out",
                         tmp_path / "t.csv"], capsys)
    assert code == 0, out
    back = load_verdicts(tmp_path / "t.csv")
    raw = pd.read_csv(VOTES, dtype=str, keep_default_na=False)
    assert len(back) == len(raw)
    assert int(back["verdict"].isna().sum()) == sum(w in ("", "skip") for w in raw["winner"])


def test_cli_several_files_and_gold(tmp_path, capsys):
    # two arena-hard files of one judge folder concatenate (item ids carry the model)
    other = tmp_path / "mistral-7b.jsonl"
    other.write_text(ARENA.read_text().replace("llama-3-8b-instruct", "mistral-7b"))
    code, out = run_cli(["import", ARENA, other, "--out", tmp_path / "t.csv"], capsys)
    assert code == 0, out
    assert len(load_verdicts(tmp_path / "t.csv")) == 2 * 2 * len(_lines(ARENA))
    # the same file twice repeats every key: refused, naming both places
    code, out = run_cli(["import", ARENA, ARENA, "--out", tmp_path / "t.csv"], capsys)
    assert code == 2 and "Traceback" not in out
    err = [ln for ln in out.splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and err[0] == out.splitlines()[-1] and "repeats the judge reply of" in err[0]
    # gold from the human judgments attached to the humans' own verdicts
    code, out = run_cli(["import", HUMAN, "--gold", HUMAN, "--out", tmp_path / "g.csv"], capsys)
    assert code == 0, out
    g = load_verdicts(tmp_path / "g.csv")
    assert g.loc[g["item_id"] == "81-t1-alpaca-13b-vs-gpt-3.5-turbo", "gold"].eq("2").all()
    assert g.loc[g["item_id"] == "83-t1-gpt-4-vs-llama-13b", "gold"].isna().all()


def test_importers_import_no_estimator():
    import ast

    pkg = Path(I.__file__).parent
    banned = ("evallab.agreement", "evallab.position", "evallab.drift", "evallab.stats", "evallab.metrics",
              "evallab.inflation")
    for f in [*pkg.glob("*.py"), Path(I.__file__).parents[1] / "cli" / "_import.py"]:
        for node in ast.walk(ast.parse(f.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            assert not [n for n in names if n.startswith(banned)], (f, names)


def test_mapped_csv_fast_path_checks_like_validate(tmp_path):
    """The CSV fast path (Arrow) and the pandas path agree: same rows, and the same refusals."""
    ok = tmp_path / "ok.csv"
    ok.write_text("q,j,w,o,s\n1,a,model_a,ab,0\n1,a,model_b,ba,0\n1,b,model_a,ab,0\n2,a,tie,ab,1\n2,a,,ab,0\n")
    kw = dict(columns="item_id=q,judge=j,verdict=w,order=o,sample=s", values="model_a=1,model_b=2,tie=tie")
    df = import_table(ok, **kw)
    assert df["verdict"].tolist()[:4] == ["1", "2", "1", "tie"] and pd.isna(df["verdict"].iloc[4])
    assert df["sample"].tolist() == [0, 0, 0, 1, 0]
    as_json = tmp_path / "ok.jsonl"
    pd.read_csv(ok, dtype=str, keep_default_na=False).to_json(as_json, orient="records", lines=True)
    slow = import_table(as_json, **kw)  # JSON lines always take the pandas path
    cols = ["item_id", "judge", "order", "sample", "verdict", "error"]
    pd.testing.assert_frame_equal(df[cols], slow[cols])
    for body, msg in [
        ("q,j,w,o,s\n1,a,model_a,ab,0\n1,b,model_a,ab,0\n1,a,model_b,ab,0\n", "row 3, column 'item_id': duplicated key"),
        ("q,j,w,o,s\n1,a,model_a,xy,0\n", "row 1, column 'order': unknown order 'xy'"),
        ("q,j,w,o,s\n1,,model_a,ab,0\n", "row 1, column 'judge': empty judge"),
        ("q,j,w,o,s\n1,a,model_a,ab,-1\n", "row 1, column 'sample': negative sample index"),
    ]:
        bad = tmp_path / "bad.csv"
        bad.write_text(body)
        with pytest.raises(DataError) as ei:
            import_table(bad, **kw)
        assert str(ei.value).startswith(f"{bad}, {msg}"), str(ei.value)


def test_gold_from_annotators_majority_unanimity_and_wide_format():
    labels = {  # item -> labels of annotators x, y, z (None = no label)
        "a": ["1", "1", "2"], "b": ["tie", "2", None], "c": ["pass", "pass", "pass"], "d": [None, None, None],
        "e": ["1", "2", "tie"], "f": ["fail", None, None],
    }
    long = pd.DataFrame([(i, ann, v) for i, vs in labels.items() for ann, v in zip("xyz", vs, strict=True)],
                        columns=["item_id", "annotator", "label"])
    wide = pd.DataFrame([[i, *vs] for i, vs in labels.items()], columns=["item_id", "x", "y", "z"])

    def expect(rule):
        out = {}
        for i, vs in labels.items():
            given = [v for v in vs if v is not None]
            top = collections.Counter(given).most_common(1)
            if rule == "majority":
                out[i] = top[0][0] if top and top[0][1] * 2 > len(given) else None
            else:
                out[i] = given[0] if given and len(set(given)) == 1 else None
        return out

    multi = [i for i, vs in labels.items() if sum(v is not None for v in vs) >= 2]
    unanimous = [i for i in multi if len({v for v in labels[i] if v is not None}) == 1]
    for rule in ("majority", "unanimous"):
        for g in (I.gold_from_annotators(long, rule=rule),
                  I.gold_from_annotators(wide, rule=rule, annotator=None, label=["x", "y", "z"])):
            got = {r.item_id: (None if pd.isna(r.gold) else r.gold) for r in g.table.itertuples()}
            want = expect(rule)
            assert got == want
            assert g.summary["with_gold"] == sum(v is not None for v in want.values())
            assert g.summary["no_majority"] == sum(v is None for v in want.values()) - 1  # "d" has no label
            assert g.summary["unlabelled"] == 1
            assert g.summary["unanimous_pct"] == pytest.approx(100 * len(unanimous) / len(multi))
    with pytest.raises(I.ImportDataError, match=r"row 2, field 'label': unknown label 'maybe'"):
        I.gold_from_annotators(pd.DataFrame({"item_id": ["a", "a"], "annotator": ["x", "y"],
                                             "label": ["1", "maybe"]}))
    # attach: verdicts of a judge get the gold of their item
    v = pd.DataFrame({"item_id": list(labels), "judge": "j", "verdict": "1"})
    out = I.attach_gold(v, I.gold_from_annotators(long).table)
    assert [None if pd.isna(x) else x for x in out["gold"]] == list(expect("majority").values())


def test_tidy_table_detected_and_reimported(tmp_path):
    df = I.import_file(PAIR)
    for ext in ("csv", "parquet", "jsonl"):
        p = tmp_path / f"tidy.{ext}"
        if ext == "csv":
            df.to_csv(p, index=False)
        elif ext == "parquet":
            df.to_parquet(p, index=False)
        else:
            df.to_json(p, orient="records", lines=True)
        assert detect_format(p) == "table"
        again = I.import_file(p)
        assert again["verdict"].isna().sum() == df["verdict"].isna().sum()
        assert again["verdict"].fillna("NA").tolist() == df["verdict"].fillna("NA").tolist()
        assert again["order"].tolist() == df["order"].tolist()


def test_arena_hard_v2_layout_uid_category_null_game(tmp_path):
    lines = [{"uid": "u1", "category": "hard_prompt", "judge": "gpt-4.1", "model": "m",
              "games": [{"user_prompt": "p", "judgment": "j", "score": "A<<B"}, None]},
             {"uid": "u2", "category": "creative_writing", "judge": "gpt-4.1", "model": "m",
              "games": [{"user_prompt": "p", "judgment": "j", "score": "B=A"},
                        {"user_prompt": "p", "judgment": "j", "score": "B<A"}]}]
    p = tmp_path / "m.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert detect_format(p) == "arena_hard"
    df = I.import_file(p)
    # game 1: baseline = A, so A<<B = the model (output 2) much better; game 2: model = A, so B<A = model better
    assert [None if pd.isna(v) else v for v in df["verdict"]] == ["2", None, "tie", "2"]
    assert df["subset"].tolist() == ["hard_prompt", "hard_prompt", "creative_writing", "creative_writing"]
    assert df["item_id"].tolist() == ["m#u1", "m#u1", "m#u2", "m#u2"]
