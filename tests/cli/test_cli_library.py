"""The library functions behind the ``evallab`` commands (the command line only parses arguments and prints).

Each test states its expected values from the inputs it builds (hand counts, published figures, the file written
read back with pandas or json), not from what a command printed.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from evallab import verdicts as V
from evallab.errors import DataError, EvallabError, VerdictTableError
from evallab.paths import REPO_ROOT, data_dir

FIX = Path(__file__).parents[1] / "data"
ARENA = FIX / "importers" / "arena_hard" / "model_judgment" / "gpt-4-1106-preview" / "llama-3-8b-instruct.jsonl"
HUMAN = FIX / "importers" / "mt_bench" / "human_judgments.jsonl"


class NeverCalled:
    """A judge that fails the test if anything is asked of it."""

    label = model = "never"

    async def judge(self, request):  # pragma: no cover - reaching it is the failure
        raise AssertionError("a request was sent")


def _verdicts(rows, **const):
    return pd.DataFrame(rows, columns=["item_id", "verdict"]).assign(**{"judge": "j", **const})


# ------------------------------------------------------------------------------------------- the entry point
def test_the_entry_point_is_the_cli_packages_main():
    doc = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    target = doc["project"]["scripts"]["evallab"]
    assert target == "evallab.cli:main"
    module, name = target.split(":")
    import importlib

    assert callable(getattr(importlib.import_module(module), name))
    assert (REPO_ROOT / "evallab" / "cli" / "__main__.py").exists()  # python -m evallab.cli


def test_no_top_level_cli_modules_are_left():
    assert not (REPO_ROOT / "evallab" / "cli.py").exists()
    assert sorted(p.name for p in (REPO_ROOT / "evallab").glob("*_cli.py")) == []


# ----------------------------------------------------------------------------------------------- tables
@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".ndjson", ".parquet"])
def test_write_table_writes_what_pandas_reads_back(tmp_path, suffix):
    from evallab.datasets._generic import write_table

    df = pd.DataFrame({"a": ["x", "é"], "n": [1, 2]})
    path = write_table(df, tmp_path / "sub" / f"t{suffix}")
    assert path == tmp_path / "sub" / f"t{suffix}"
    if suffix == ".csv":
        back = pd.read_csv(path)
    elif suffix == ".parquet":
        back = pd.read_parquet(path)
    else:
        back = pd.DataFrame([json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()])
        assert "é" in path.read_text(encoding="utf-8")  # UTF-8 text as is, not \\u00e9
    assert back["a"].tolist() == ["x", "é"] and back["n"].tolist() == [1, 2]


def test_write_table_refuses_an_unknown_type_before_writing(tmp_path):
    from evallab.datasets._generic import check_output_path, write_table

    with pytest.raises(DataError, match=r"unknown output type '\.txt'; expected \.csv, \.jsonl or \.parquet"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "new" / "t.txt")
    assert not (tmp_path / "new").exists()
    assert check_output_path(tmp_path / "T.CSV") == tmp_path / "T.CSV"


def test_concat_keeps_every_row_and_extra_columns():
    a = _verdicts([("i1", "1"), ("i2", "2")], source_file="a.jsonl")
    b = _verdicts([("i3", "tie")], judge="k").assign(note="x")
    out = V.concat([a, b])
    assert out["item_id"].tolist() == ["i1", "i2", "i3"]
    assert out["judge"].tolist() == ["j", "j", "k"]
    assert out["note"].isna().tolist() == [True, True, False]
    assert V.concat([]).empty and list(V.concat([]).columns) == list(V.COLUMNS)


def test_concat_names_both_places_of_a_repeated_reply():
    a = _verdicts([("i1", "1"), ("i2", "2")]).assign(source_file="a.jsonl", source_ref=["line 1", "line 2"])
    b = _verdicts([("i2", "1")]).assign(source_file="b.jsonl", source_ref=["line 7"])
    with pytest.raises(VerdictTableError) as e:
        V.concat([a, b])
    msg = str(e.value)
    assert msg.startswith("b.jsonl: line 7: repeats the judge reply of a.jsonl: line 2 (same key")
    # without source columns: the table and the row, 1-based
    with pytest.raises(VerdictTableError, match=r"^table 2, row 1: repeats the judge reply of table 1, row 2 "):
        V.concat([_verdicts([("i1", "1"), ("i2", "2")]), _verdicts([("i2", "1")])])


def test_summary_lines_hand_counts():
    df = V.coerce(pd.DataFrame({"item_id": [f"i{k}" for k in range(7)], "judge": "j",
                                "verdict": ["1", "1", "1", "2", None, None, None],
                                "error": [None, None, None, None, "no JSON", "no JSON", None],
                                "gold": ["1", None, None, None, None, None, None]}))
    assert V.summary_lines(df) == ["rows: 7", "verdicts: 1=3, 2=1", "NA: 3", "        2  no JSON",
                                   "        1  (no reason)", "gold: 1 rows with gold"]
    assert V.summary_lines(df, reasons=1)[-2:] == ["  ... 1 more reasons", "gold: 1 rows with gold"]


# --------------------------------------------------------------------------------------------- importers
def _lines(path):
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def test_import_files_concatenates_names_files_and_writes(tmp_path):
    from evallab.importers import import_files

    other = tmp_path / "mistral-7b.jsonl"
    other.write_text(ARENA.read_text().replace("llama-3-8b-instruct", "mistral-7b"))
    res = import_files([ARENA, other], out=tmp_path / "t.parquet")
    n = 2 * 2 * len(_lines(ARENA))  # two games per judgment line, both orders' verdicts (the importer's test)
    assert [(f, fmt, rows) for f, fmt, rows in res.files] == [(str(ARENA), "arena_hard", n // 2),
                                                               (str(other), "arena_hard", n // 2)]
    back = pd.read_parquet(tmp_path / "t.parquet")
    assert len(back) == len(res.table) == n
    assert back["source_file"].value_counts().to_dict() == {str(ARENA): n // 2, str(other): n // 2}
    assert res.gold is None


def test_import_files_refuses_a_file_twice_and_a_bad_output_first(tmp_path):
    from evallab.importers import import_files

    with pytest.raises(VerdictTableError, match="repeats the judge reply of"):
        import_files([ARENA, ARENA])
    with pytest.raises(DataError, match="unknown output type"):
        import_files([tmp_path / "missing.jsonl"], out=tmp_path / "t.txt")  # the output is checked first


def test_import_files_attaches_gold_by_majority(tmp_path):
    from evallab.importers import import_files, load_gold

    # the humans' own judgments of one pair: 81-t1 has gold "2" (majority), 83-t1 none (hand-read, test_importers)
    res = import_files([HUMAN], gold=HUMAN)
    g = res.table
    assert g.loc[g["item_id"] == "81-t1-alpaca-13b-vs-gpt-3.5-turbo", "gold"].eq("2").all()
    assert g.loc[g["item_id"] == "83-t1-gpt-4-vs-llama-13b", "gold"].isna().all()
    assert res.gold.summary["rule"] == "majority"
    table = tmp_path / "gold.csv"
    table.write_text("item_id,gold\na,1\n")
    plain = load_gold(table)
    assert plain.summary == {} and plain.table["gold"].tolist() == ["1"]


# ------------------------------------------------------------------------------------------------ judges
def test_make_judge_from_a_spec_and_its_cache(tmp_path):
    from evallab.judges import OpenAICompatibleJudge, make_judge
    from evallab.judges._cache import Cache
    from evallab.judges._replay import ReplayJudge

    j = make_judge(spec="org/model@v2@https://api.example.com/v1", cache=False)
    assert isinstance(j, OpenAICompatibleJudge)
    assert (j.model, j.base_url.rstrip("/"), j.cache) == ("org/model@v2", "https://api.example.com/v1", None)
    fresh = make_judge(spec="m@http://127.0.0.1:9/v1", cache=tmp_path / "c.sqlite", refresh_cache=True)
    assert isinstance(fresh.cache, Cache) and fresh.cache.path == tmp_path / "c.sqlite"
    assert (fresh.cache.read, fresh.cache.write) == (False, True)
    rec = next(data_dir("keryx").rglob("judge-recordings"))
    assert isinstance(make_judge(spec=f"replay:{rec}"), ReplayJudge)
    with pytest.raises(EvallabError, match="expected MODEL@BASE_URL"):
        make_judge(spec="just-a-model")


def test_default_cache_follows_evallab_cache(tmp_path, monkeypatch):
    from evallab.judges import make_judge

    monkeypatch.setenv("EVALLAB_CACHE", str(tmp_path / "cachedir"))
    j = make_judge("http://127.0.0.1:9/v1", "m")
    assert j.cache.path == tmp_path / "cachedir" / "judges.sqlite" and j.cache.read


def test_cost_and_run_in_words():
    from evallab.judges._runner import cost_text, describe_run

    assert cost_text({"calls": 3, "cost_usd": 12.3456, "unpriced": 0}) == "$12.35"
    assert cost_text({"calls": 0, "batch_replies": 4, "cost_usd": 0.5, "unpriced": 0}) == "$0.5000"
    assert cost_text({"calls": 1, "cost_usd": None, "unpriced": 1}) == \
        "unknown (1 reply without a price; pass --prices)"
    run = {"skipped": 2, "reasked": 1, "calls": 5, "batch_replies": 0, "cache_hits": 3, "unparsed": 1, "failed": 0,
           "cost_usd": 0.0123, "unpriced": 0}
    assert describe_run(run) == ("2 rows already there, 1 asked again (request changed), 5 HTTP calls (retries "
                                 "included), 3 cache hits, 1 unparsed, 0 failed, cost $0.0123")
    assert "7 replies through the Batch API, " in describe_run({**run, "batch_replies": 7})


def test_judge_items_reads_limits_and_runs(tmp_path):
    from evallab.judges import OpenAICompatibleJudge, judge_items
    from evallab.testing import LocalJudgeServer

    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item_id": f"p{k}", "instruction": "Pick one.", "output_1": f"A{k}",
                                         "output_2": f"B{k}", "gold": "1"}) + "\n" for k in range(3)))
    with LocalJudgeServer() as srv:
        df = judge_items(items, OpenAICompatibleJudge(srv.base_url, "sim-judge"), out=tmp_path / "v.jsonl",
                         orders=["ab"], limit=2, progress=False)
        assert srv.stats()["requests"] == 2
    assert sorted(df["item_id"]) == ["p0", "p1"] and set(df["order"]) == {"ab"}
    assert len(_lines(tmp_path / "v.jsonl")) == 2
    assert df.attrs["run"]["calls"] == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"item_id": "x", "instruction": "i", "output_1": "a"}) + "\n")
    with pytest.raises(DataError, match=r"missing column\(s\) \['output_2'\]"):
        judge_items(bad, NeverCalled(), kind="pairwise", progress=False)


# ------------------------------------------------------------------------------------------------- drift
def test_compare_files_names_the_file_not_the_role(tmp_path):
    from evallab.experiments import compare_files

    rows = [(f"i{k}", "1" if k % 3 else "2") for k in range(30)]
    base = _verdicts(rows, subset="s")
    base.to_csv(tmp_path / "base.csv", index=False)
    cand = base.assign(judge="k")
    cand.loc[:5, "verdict"] = "tie"  # 6 of 30 verdicts changed
    cand.to_csv(tmp_path / "cand.csv", index=False)
    rep = compare_files(tmp_path / "base.csv", tmp_path / "cand.csv", by=["subset"], n_resamples=0)
    g = rep.groups.iloc[0]
    assert (g["items"], g["changed"]) == (30, 6) and g["flip_rate"] == pytest.approx(6 / 30)
    assert not rep.passed  # 20% changed against a 5% tolerance
    with pytest.raises(DataError) as e:
        compare_files(tmp_path / "base.csv", tmp_path / "cand.csv", by=["judge"])
    assert e.value.path == str(tmp_path / "cand.csv")


# --------------------------------------------------------------------------------------------- inflation
def test_run_experiment_checks_k_before_reading_items_or_asking():
    from evallab.experiments import run_experiment

    with pytest.raises(DataError, match="even number of anchors k >= 2"):
        run_experiment(NeverCalled(), "/no/such/keryx/folder", ("balanced",), k=3)


def test_inflation_tables_add_priming_only_when_both_sets_are_there():
    from evallab.metrics._inflation import inflation_tables

    rows = [("i1", "pass", "pass"), ("i2", "fail", "fail"), ("i3", "pass", "fail"), ("i4", "fail", "fail")]
    bal = pd.DataFrame(rows, columns=["item_id", "verdict", "gold"]).assign(judge="j", anchor_set="balanced")
    last = bal.assign(anchor_set="fail-last", verdict=["fail", "fail", "fail", "fail"])
    t, priming = inflation_tables(bal)
    assert priming is None and t["pass_rate"].tolist() == [pytest.approx(2 / 4)]
    t, priming = inflation_tables(pd.concat([bal, last], ignore_index=True))
    p = priming.iloc[0]
    # hand count: pass rate 0/4 under fail-last against 2/4 balanced; i1 and i3 flip to fail
    assert p["shift"] == pytest.approx(-0.5) and (p["to_fail"], p["to_pass"]) == (2, 0)
    assert t.set_index("anchor_set").loc["fail-last", "pass_rate"] == pytest.approx(0.0)


# ----------------------------------------------------------------------------------------------- rubrics
def test_validate_files_mixes_rubrics_presets_and_folders():
    from evallab.skills import validate_files

    rub = FIX / "rubrics" / "only-pass-anchors.md"
    pre = FIX / "rubrics" / "composition-presets" / "unknown-rubric.md"
    found = validate_files([rub, pre], rubrics_dir=data_dir("meowkit") / "rubrics")
    # hand-read from the fixtures (test_rubrics): rule 1 at line 39; 'performance' has no rubric file, line 11
    assert ("anchor-verdicts", 39) in [(f.code, f.line) for f in found if f.path == str(rub)]
    assert [(f.code, f.line) for f in found if f.path == str(pre)] == [("unknown-rubric", 11)]
    assert validate_files() == [] == validate_files([data_dir("meowkit") / "rubrics"])  # the bundled library


def test_score_preset_by_name_and_refused_with_findings():
    from evallab.skills import load_library, score_preset

    weights = load_library().presets["backend-api"].weights
    every_pass = score_preset("backend-api", dict.fromkeys(weights, "PASS"))
    # every rubric PASS: weighted score 1 whatever the weights, no hard fail
    assert every_pass.findings == [] and every_pass.verdict.score == pytest.approx(1.0)
    assert (every_pass.verdict.verdict, every_pass.verdict.hard_failed) == ("PASS", [])
    names = ["product-depth", "functionality", "code-quality"]
    ok = score_preset(FIX / "rubrics" / "composition-presets" / "lean-functionality.md",
                      {"product-depth": "PASS", "functionality": "WARN", "code-quality": "PASS"})
    # hand count (test_rubrics): weights 0.35, 0.15, 0.50; WARN scores 0.5
    assert ok.findings == [] and sorted(ok.preset.weights) == sorted(names)
    assert ok.verdict.score == pytest.approx(0.35 + 0.15 * 0.5 + 0.50) and ok.verdict.verdict == "PASS"
    bad = score_preset(FIX / "rubrics" / "composition-presets" / "unknown-rubric.md", dict.fromkeys(names, "PASS"))
    assert bad.verdict is None and [(f.code, f.line) for f in bad.findings] == [("unknown-rubric", 11)]
    with pytest.raises(EvallabError, match="unknown preset 'nope'; known: "):
        score_preset("nope", {})


# --------------------------------------------------------------------------------------------- manifests
def test_eval_outputs_and_bootstrap_outputs(tmp_path):
    from evallab.skills import ManifestError, bootstrap_outputs, eval_outputs

    out = tmp_path / "out"
    (out / "paper-pick").mkdir(parents=True)
    for i in range(3):
        (out / "paper-pick" / f"run{i}.md").write_text(f"# Central claim\n{'x ' * (10 * (i + 1))}")
    import yaml

    doc = yaml.safe_load(bootstrap_outputs(out, "paper-pick"))
    # 13, 23 and 33 words ("#", "Central", "claim" and 10, 20, 30 x's); their 25th percentile (linear) is
    # 13 + 0.5 * (23 - 13) = 18
    assert doc["paper-pick"]["required_sections"] == ["Central claim"]
    assert doc["paper-pick"]["min_words"] == 18
    with pytest.raises(ManifestError, match=r"no outputs for skill 'other'; found \['paper-pick'\]"):
        bootstrap_outputs(out, "other")
    manifest = tmp_path / "m.yaml"
    manifest.write_text("paper-pick:\n  min_words: 25\n")
    state = tmp_path / "state.json"
    run = eval_outputs(manifest, out, state_path=state)
    # the latest output (run2.md) has 33 words: min_words 25 passes
    assert run.results[["skill", "assertion", "passed"]].values.tolist() == [["paper-pick", "min_words", True]]
    assert run.results["output"].tolist() == [str(out / "paper-pick" / "run2.md")] and state.exists()


# ------------------------------------------------------------------------------------------ skill files
def test_file_kind_by_name_then_by_content(tmp_path):
    from evallab.experiments._validate import file_kind

    def j(name, doc):
        p = tmp_path / name
        p.write_text(json.dumps(doc))
        return p

    assert file_kind(tmp_path / "evals.json") == "evals"  # the name decides: not even opened
    assert file_kind(tmp_path / "x.evals-state.json") == "state"
    assert file_kind(tmp_path / "m.yml") == "manifest"
    assert file_kind(tmp_path) == "folder"
    assert file_kind(j("a.json", {"entries": []})) == "recording"
    assert file_kind(j("b.json", {"reports": []})) == "eval-report"
    assert file_kind(j("c.json", {"skills": {}, "version": 1})) == "state"
    assert file_kind(j("d.json", {"scenarios": []})) == "evals"
    assert file_kind(j("e.json", {"token-movers": {"min_words": 1}})) == "manifest"
    assert file_kind(j("f.json", [1, 2])) == "unknown-json"


def test_validate_paths_lines_and_failures(tmp_path):
    from evallab.experiments._validate import FileCheck, expand_paths, validate_paths

    valid = FIX / "scenarios" / "valid" / "evals.json"
    lines = validate_paths([valid, tmp_path / "missing.json", valid])
    assert [ln.status for ln in lines] == ["ok", "unreadable"]  # a file given twice is checked once
    assert str(lines[0]).startswith(f"ok   {valid}: ") and " 0 integrity finding(s)" in lines[0].message
    assert str(lines[1]) == f"ERROR {tmp_path / 'missing.json'}: no such file or folder"
    assert sum(ln.failed for ln in lines) == 1
    assert FileCheck("note", "x").failed is False and str(FileCheck("fail", "y")) == "FAIL y"
    assert expand_paths([FIX / "scenarios" / "valid"]) == [valid]


def test_judge_check_path_needs_an_evals_file(tmp_path):
    from evallab.experiments import judge_check_path

    with pytest.raises(EvallabError, match="no evals.json found"):
        judge_check_path(tmp_path, NeverCalled())


# ----------------------------------------------------------------------------------------------- triggers
def test_tune_catalog_reproduces_keryx_leave_one_out():
    from evallab.skills import tune_catalog

    res = tune_catalog("keryx", targets=["select"], n_resamples=0, folds=2)
    # keryx's catalog: 279 triggers; 217 of them select their skill with the trigger left out (SOURCE.md recount)
    assert res.summary["trigger_probes"] == 279
    assert res.summary["loo_trigger_accuracy"] == pytest.approx(217 / 279)
    assert set(res.thresholds["target"]) == {"select"}


def test_tune_catalog_checks_its_options_before_loading():
    from evallab.skills import tune_catalog

    with pytest.raises(EvallabError, match="target must be one of select, use, support; got 'nope'"):
        tune_catalog("/no/such/catalog.jsonl", targets=["nope"])
    with pytest.raises(EvallabError, match="scorer must be one of keryx, tfidf, bm25; got 'x'"):
        tune_catalog("/no/such/catalog.jsonl", scorer="x")


def test_score_query_ranks_and_checks_selection():
    from evallab.skills import score_query
    from evallab.skills._catalogs import catalog_from_records

    cat = catalog_from_records([
        {"name": "pdf-merge", "description": "Merge PDF files into one document.", "triggers": ["merge pdf"],
         "catalog_id": "docs/pdf-merge"},
        {"name": "git-blame", "description": "Show who changed each line of a git file.", "triggers": ["git blame"],
         "catalog_id": "dev/git-blame"},
    ])
    r = score_query("merge these pdf files", cat, skill="docs/pdf-merge", top=None)
    # the query shares "merge" and "pdf" with the first skill and nothing with the second
    assert r.matches["skill_id"].tolist() == ["docs/pdf-merge", "dev/git-blame"]
    assert r.matches["score"].iloc[1] == 0 and r.selection.rank == 1 and r.selection.outranked_by is None
    assert len(score_query("merge these pdf files", cat, top=1).matches) == 1
    assert score_query("merge these pdf files", cat).selection is None


# ----------------------------------------------------------------------------------------------- reports
def test_run_notebook_refuses_bad_input_before_anything_is_written(tmp_path):
    from evallab.reporting._batch import run_notebook
    from evallab.reporting._params import ParameterError, notebook_parameters

    ok = FIX / "report" / "ok.ipynb"
    with pytest.raises(ParameterError, match="no such notebook"):
        run_notebook(tmp_path / "none.ipynb")
    with pytest.raises(ParameterError, match="unknown parameter 'valeu'"):
        run_notebook(ok, {"valeu": "4"}, out_dir=tmp_path / "o", from_text=True)
    with pytest.raises(ParameterError, match="expects int"):
        run_notebook(ok, {"value": "four"}, out_dir=tmp_path / "o", from_text=True)
    with pytest.raises(ParameterError, match="report name"):
        run_notebook(ok, out_dir=tmp_path / "o", name="../x")
    assert not (tmp_path / "o").exists()
    p = notebook_parameters(ok)["value"]
    assert str(p).startswith(f"value: int = {p.default}")


class _FakeServer:
    """What :func:`evallab.judges.serve` uses of a LocalLlamaServer; dies after ``dies_after`` checks."""

    dies_after: int | None = None
    made: list = []

    def __init__(self, model=None, *, port=None, options=None):
        self.model, self.port, self.options, self.checks, self.stopped = model, port, options, 0, False
        _FakeServer.made.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stopped = True

    def death(self):
        self.checks += 1
        return "the server died" if self.dies_after is not None and self.checks > self.dies_after else None


def test_serve_stops_on_sigterm_and_restores_the_handler(monkeypatch):
    import signal

    from evallab.judges import _local as local

    monkeypatch.setattr(local, "LocalLlamaServer", _FakeServer)
    before = signal.getsignal(signal.SIGTERM)
    local.serve("m.gguf", port=1234, options={"n_ctx": "512"},
                on_ready=lambda srv: os.kill(os.getpid(), signal.SIGTERM), poll=0.01)
    srv = _FakeServer.made[-1]
    assert (srv.model, srv.port, srv.options, srv.stopped) == ("m.gguf", 1234, {"n_ctx": "512"}, True)
    assert signal.getsignal(signal.SIGTERM) == before


def test_serve_raises_when_the_server_dies(monkeypatch):
    from evallab.judges import _local as local

    class Dies(_FakeServer):
        dies_after = 2

    monkeypatch.setattr(local, "LocalLlamaServer", Dies)
    ready = []
    with pytest.raises(local.LocalServerError, match="^the server died$"):
        local.serve(on_ready=ready.append, poll=0.01)
    assert ready == [_FakeServer.made[-1]] and ready[0].stopped and ready[0].checks == 3


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_import_attaches_a_plain_item_id_gold_table(tmp_path, capsys, suffix):
    """Issue 26 defect 10: ``evallab import FILE --gold gold.csv`` with the plain table its --help describes."""
    import csv as csv_module

    from cli_helper import run_cli

    src = data_dir("formats") / "mt_bench" / "gpt-4_pair.jsonl"
    out = tmp_path / "t.csv"
    code, text = run_cli(["import", src, "--out", out], capsys)
    assert code == 0, text
    with out.open(newline="", encoding="utf-8") as fh:
        ids = sorted({r["item_id"] for r in csv_module.DictReader(fh)})
    gold = tmp_path / f"gold{suffix}"
    labels = {ids[0]: "1", ids[1]: "2"}
    if suffix == ".csv":
        gold.write_text("item_id,gold\n" + "".join(f"{k},{v}\n" for k, v in labels.items()))
    else:
        gold.write_text("".join(json.dumps({"item_id": k, "gold": v}) + "\n" for k, v in labels.items()))
    code, text = run_cli(["import", src, "--gold", gold, "--out", tmp_path / "g.csv"], capsys)
    assert code == 0, text
    with (tmp_path / "g.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv_module.DictReader(fh))
    assert {r["item_id"]: r["gold"] for r in rows if r["gold"]} == labels
