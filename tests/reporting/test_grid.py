"""Grids in reports.yaml (expanded and checked before anything runs) and their comparison in the index."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cli_helper import run_cli

from evallab.errors import DataError, EvallabError
from evallab.reporting._batch import (
    ReportResult,
    load_config,
    run_report_batch,
    save_metrics,
    select_runs,
    write_index,
)
from evallab.reporting._compare import comparison_figure, comparison_sentence, comparison_table
from evallab.reporting._grid import expand, run_name, value_slug
from evallab.reporting._params import check_report_name

HERE = Path(__file__).parents[1] / "data" / "report"
SWEEP = HERE / "sweep.ipynb"


def cfg(tmp_path, body: str) -> Path:
    p = tmp_path / "reports.yaml"
    p.write_text(body)
    return p


def test_expand_is_the_cartesian_product_in_order_with_slug_names():
    runs = expand("sw", {"k": [1, 2], "scorer": ["keryx", "bm25", "tf-idf"]}, {"n": 10})
    assert [r[0] for r in runs] == ["sw-1-keryx", "sw-1-bm25", "sw-1-tf_idf", "sw-2-keryx", "sw-2-bm25", "sw-2-tf_idf"]
    assert runs[4][1] == {"n": 10, "k": 2, "scorer": "bm25"} and runs[4][2] == {"k": 2, "scorer": "bm25"}
    assert [value_slug(v) for v in (True, 0.5, ["LLMBar/Natural", "LLMBar/Adversarial"], [], "", "../x")] == \
        ["true", "0.5", "LLMBar_Natural_LLMBar_Adversarial", "none", "empty", "x"]


def test_colliding_and_long_names_stay_unique_and_safe():
    runs = expand("sw", {"s": ["a b", "a_b", "a/b"]})
    names = [r[0] for r in runs]
    assert names == ["sw-a_b", "sw-a_b-2", "sw-a_b-3"]
    long = run_name("x", {"subsets": ["LLMBar/Adversarial/GPTInst"] * 10})
    assert len(long) == 128 and check_report_name(long) == long
    assert long != run_name("x", {"subsets": ["LLMBar/Adversarial/GPTInst"] * 11})  # the hash tells them apart


def test_config_expands_a_grid_beside_plain_entries(tmp_path):
    specs = load_config(cfg(tmp_path, f"reports:\n  - {{name: one, notebook: {HERE / 'ok.ipynb'}}}\n"
                                      f"  - name: sw\n    notebook: {SWEEP}\n    parameters: {{k: 1}}\n"
                                      "    grid: {n: [10, 20], sleep_s: [0, 0.5]}\n"
                                      "    compare: {metric: rate, unit: '%'}\n"))
    assert [s.name for s in specs] == ["one", "sw-10-0", "sw-10-0.5", "sw-20-0", "sw-20-0.5"]
    assert specs[2].parameters == {"k": 1, "n": 10, "sleep_s": 0.5} and specs[2].group == "sw"
    assert specs[2].varying == {"n": 10, "sleep_s": 0.5} and specs[2].compare == {"metric": "rate", "unit": "%"}
    assert specs[0].group == "" and specs[0].varying == {}
    assert [s.name for s in select_runs(specs, ["sw"])] == [s.name for s in specs[1:]]
    assert [s.name for s in select_runs(specs, ["sw-20-0", "one"])] == ["one", "sw-20-0"]
    with pytest.raises(EvallabError, match=r"unknown report name\(s\) \['nope'\]"):
        select_runs(specs, ["nope"])


@pytest.mark.parametrize("grid, expected", [
    ("{nn: [1, 2]}", r"combination nn=1: unknown parameter 'nn' for sweep.ipynb; did you mean 'n'\?"),
    ("{n: [10, ten]}", r"combination n='ten': parameter 'n' of sweep.ipynb expects int, got str"),
    ("{n: 10}", r"grid parameter 'n' must be a non-empty list of values, got int 10"),
    ("{n: []}", r"grid parameter 'n' must be a non-empty list"),
    ("{n: [1, 1]}", r"grid parameter 'n' repeats a value"),
    ("[1, 2]", r"'grid' must be a mapping"),
    ("{k: [1, 2]}", r"'k' given both in 'parameters' and in 'grid'"),
    ("{report_name: [a, b]}", r"'report_name' is set by the runner"),
])
def test_every_combination_is_checked_before_anything_runs(tmp_path, grid, expected):
    body = f"reports:\n  - name: sw\n    notebook: {SWEEP}\n    parameters: {{k: 1}}\n    grid: {grid}\n"
    with pytest.raises(DataError, match=expected) as ei:
        load_config(cfg(tmp_path, body))
    assert "reports.yaml, row 1, column 'grid'" in str(ei.value)


@pytest.mark.parametrize("extra, expected", [
    ("compare: {metric: rate, colour: red}", r"unknown 'compare' key 'colour'"),
    ("compare: {metric: 3}", r"'compare' key 'metric' expects str, got int"),
    ("compare: {metric: rate, level: 95}", r"level must lie in \(0, 1\)"),
])
def test_compare_is_checked(tmp_path, extra, expected):
    body = f"reports:\n  - name: sw\n    notebook: {SWEEP}\n    grid: {{n: [10, 20]}}\n    {extra}\n"
    with pytest.raises(DataError, match=expected):
        load_config(cfg(tmp_path, body))


def test_compare_without_grid_and_clashing_names_are_refused(tmp_path):
    with pytest.raises(DataError, match="this entry has no 'grid'"):
        load_config(cfg(tmp_path, f"reports:\n  - {{name: a, notebook: {SWEEP}, compare: {{metric: rate}}}}\n"))
    with pytest.raises(DataError, match="duplicated report name 'sw-10'"):
        load_config(cfg(tmp_path, f"reports:\n  - {{name: sw, notebook: {SWEEP}, grid: {{n: [10, 20]}}}}\n"
                                  f"  - {{name: sw-10, notebook: {SWEEP}}}\n"))
    with pytest.raises(DataError, match="grid run 'sw-10' has the name of another report"):
        load_config(cfg(tmp_path, f"reports:\n  - {{name: sw-10, notebook: {SWEEP}}}\n"
                                  f"  - {{name: sw, notebook: {SWEEP}, grid: {{n: [10, 20]}}}}\n"))


def test_cli_refuses_a_bad_grid_before_writing_anything(tmp_path, capsys):
    c = cfg(tmp_path, f"reports:\n  - {{name: ok, notebook: {HERE / 'ok.ipynb'}}}\n"
                      f"  - {{name: sw, notebook: {SWEEP}, grid: {{n: [10, 20], k: [1, 'two']}}}}\n")
    code, text = run_cli(["report", "--config", c, "--out", tmp_path / "out"], capsys)
    assert code == 2 and len(text.strip().splitlines()) == 1
    assert "combination n=10, k='two': parameter 'k' of sweep.ipynb expects int, got str" in text
    assert not (tmp_path / "out").exists()
    code, text = run_cli(["report", "--config", c, "--out", tmp_path / "out", "--ship-data"], capsys)
    assert code == 2 and "give --scheduler or --local-cluster" in text
    code, text = run_cli(["report", "--config", c, "--scheduler", "tcp://127.0.0.1:1", "--local-cluster", "2"],
                         capsys)
    assert code == 2 and "not both" in text


# ----------------------------------------------------------------------------------------- the comparison
def _results(tmp_path, rows):
    """ReportResults of a k × n grid with metrics files written as a notebook would (save_metrics)."""
    out = tmp_path / "out"
    res = []
    for k, n, status in rows:
        name = f"sw-{k}-{n}"
        r = ReportResult(name, status, 1.0, title="Sweep", group="sw", varying={"k": k, "n": n},
                         compare={"metric": "rate", "label": "Success rate", "unit": "%"},
                         html=str(out / f"{name}.html"), parameters={"k": k, "n": n})
        if status == "ok":
            rate = k / n
            save_metrics(name, {"rate": rate, "rate_low": rate - 0.1, "rate_high": rate + 0.1},
                         findings=[{"sentence": f"{k} of {n}.", "value": rate, "low": rate - 0.1,
                                    "high": rate + 0.1, "n": n, "unit": "%"}], reports_dir_=out)
            (out / f"{name}.html").write_text("<html></html>")
        else:
            r.cell, r.error = 3, "ZeroDivisionError: division by zero"
        res.append(r)
    return out, res


def test_comparison_table_reads_each_runs_metric_and_interval(tmp_path):
    out, res = _results(tmp_path, [(2, 10, "ok"), (2, 20, "ok"), (5, 10, "ok"), (5, 20, "failed")])
    t = comparison_table(res, out)
    assert list(t["run"]) == ["sw-2-10", "sw-2-20", "sw-5-10", "sw-5-20"]
    assert list(t["k"]) == [2, 2, 5, 5] and list(t["n"]) == [10, 20, 10, 20]
    assert t["value"].iloc[:3].tolist() == pytest.approx([0.2, 0.1, 0.5])
    assert t["low"].iloc[:3].tolist() == pytest.approx([0.1, 0.0, 0.4])
    assert t["value"].isna().iloc[3] and t["note"].iloc[3] == "the run failed in cell 3"
    assert (t["level"] == 0.95).all()
    # a metric the runs did not write: missing with its reason, never 0
    res2 = [ReportResult(**{**r.__dict__, "compare": {"metric": "nope"}}) for r in res[:1]]
    t2 = comparison_table(res2, out)
    assert t2["value"].isna().all() and t2["note"].iloc[0] == "the run's metrics have no number 'nope'"


def test_comparison_figure_has_title_labels_units_and_the_values(tmp_path):
    out, res = _results(tmp_path, [(2, 10, "ok"), (2, 20, "ok"), (5, 10, "ok"), (5, 20, "failed")])
    t = comparison_table(res, out)
    fig = comparison_figure(t, ["k", "n"], res[0].compare)
    ax = fig.axes[0]
    assert ax.get_title() == "Success rate across K × N"
    assert ax.get_ylabel() == "Success rate (%, 95% CI)" and ax.get_xlabel() == "K"
    assert ax.get_legend().get_title().get_text() == "N"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["10", "20"]
    ys = [float(y) for line in ax.lines for y in line.get_ydata() if line.get_marker() == "o"]
    assert sorted(y for y in ys if math.isfinite(y)) == pytest.approx([10.0, 20.0, 50.0])  # percent
    assert sum(not math.isfinite(y) for y in ys) == 1  # the failed run: no point
    assert any("1 of 4 combinations have no value" in tx.get_text() for tx in ax.texts)
    none = comparison_table(res[3:], out)
    assert comparison_figure(none, ["k", "n"], res[0].compare) is None


def test_comparison_in_words_names_the_extremes_with_their_intervals(tmp_path):
    out, res = _results(tmp_path, [(2, 10, "ok"), (2, 20, "ok"), (5, 10, "ok"), (5, 20, "failed")])
    text = comparison_sentence(comparison_table(res, out), ["k", "n"], res[0].compare)
    assert text == ("Success rate is highest with K 5, N 10 (50.0% [40.0, 60.0]) and lowest with K 2, N 20 "
                    "(10.0% [0.0, 20.0]). The two 95% intervals do not overlap. 1 of 4 combinations have no value "
                    "(see the table).")
    assert comparison_sentence(comparison_table(res[:1], out), ["k", "n"], res[0].compare) == ""


def test_index_shows_a_grid_as_one_comparison(tmp_path):
    out, res = _results(tmp_path, [(2, 10, "ok"), (5, 10, "failed")])
    write_index(res, out)
    index = (out / "index.html").read_text()
    assert index.count("class='card grid'") == 1 and "Sweep: a grid of 2 runs" in index
    assert "<th>Success rate (%, 95% CI)</th>" in index and "20.0% [10.0, 30.0]" in index
    assert "sw-5-10: cell 3: ZeroDivisionError: division by zero" in index
    assert "<img class='compare' src='sw.compare.png'" in index and (out / "sw.compare.png").stat().st_size > 1000
    rows = (out / "sw.compare.csv").read_text().splitlines()
    assert rows[0].startswith("run,k,n,status,value,low,high") and len(rows) == 3
    assert json.loads((out / "batch.json").read_text())[0]["group"] == "sw"


@pytest.mark.slow
def test_local_runner_runs_a_grid(tmp_path):
    c = cfg(tmp_path, f"reports:\n  - name: sw\n    notebook: {SWEEP}\n    grid: {{k: [1, 4], n: [8, 0]}}\n"
                      "    compare: {metric: rate, unit: '%'}\n")
    res = {r.name: r for r in run_report_batch(load_config(c), tmp_path / "out", jobs=2, progress=False)}
    assert set(res) == {"sw-1-8", "sw-1-0", "sw-4-8", "sw-4-0"}
    assert res["sw-4-8"].status == "ok" and res["sw-4-8"].metrics["rate"] == 0.5
    assert res["sw-1-0"].status == "failed" and res["sw-1-0"].cell == 3 and "ZeroDivisionError" in res["sw-1-0"].error
    index = (tmp_path / "out" / "index.html").read_text()
    assert "a grid of 4 runs" in index and "50.0%" in index and "2 of 4 ran to the end" in index
