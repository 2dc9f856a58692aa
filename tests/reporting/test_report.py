"""The papermill batch: config errors, a failing notebook reported with its cell while others finish, index.html."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evallab.errors import DataError
from evallab.reporting._batch import load_config, run_report_batch, save_metrics

HERE = Path(__file__).parents[1] / "data" / "report"


def write_cfg(tmp_path, body: str) -> Path:
    p = tmp_path / "reports.yaml"
    p.write_text(body)
    return p


def test_config_errors_name_the_entry(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load_config(tmp_path / "none.yaml")
    with pytest.raises(DataError, match="'reports' list"):
        load_config(write_cfg(tmp_path, "x: 1\n"))
    with pytest.raises(DataError, match="entry 1 has no 'notebook'"):
        load_config(write_cfg(tmp_path, "reports:\n  - name: a\n"))
    with pytest.raises(DataError, match="does not exist"):
        load_config(write_cfg(tmp_path, "reports:\n  - name: a\n    notebook: nope.ipynb\n"))
    ok = HERE / "ok.ipynb"
    with pytest.raises(DataError, match="duplicated report name"):
        load_config(write_cfg(tmp_path, f"reports:\n  - {{name: a, notebook: {ok}}}\n  - {{name: a, notebook: {ok}}}\n"))


def test_save_metrics_converts_numpy_and_nan(tmp_path):
    p = save_metrics("r", {"a": np.int64(3), "b": np.float64("nan"), "c": [np.float32(0.5)], "d": {"e": 1}},
                     title="T", reports_dir_=tmp_path)
    doc = json.loads(p.read_text())
    assert doc["metrics"] == {"a": 3, "b": None, "c": [0.5], "d": {"e": 1}}
    assert doc["headline"] == ["a", "b"] and doc["title"] == "T"


def test_batch_reports_failure_with_cell_and_finishes_the_others(tmp_path):
    cfg = write_cfg(tmp_path, f"reports:\n  - {{name: good, notebook: {HERE / 'ok.ipynb'}, parameters: {{value: 21}}}}\n"
                              f"  - {{name: bad, notebook: {HERE / 'fails.ipynb'}}}\n")
    out = tmp_path / "out"
    res = {r.name: r for r in run_report_batch(load_config(cfg), out, jobs=2, progress=False)}
    assert res["good"].status == "ok" and res["good"].metrics == {"value": 21, "twice": 42}
    assert res["bad"].status == "failed" and res["bad"].cell == 3
    assert "deliberate failure in cell 3" in res["bad"].error
    index = (out / "index.html").read_text()
    assert "good.html" in index and "bad.html" in index and "deliberate failure" in index and ">42<" in index
    html = (out / "good.html").read_text()
    assert "save_metrics(" not in html  # input cells are not exported
    bad = (out / "bad.html").read_text()
    # the failed report shows one line naming the error where it stopped, never a traceback; the .ipynb keeps it
    assert "The report stopped here." in bad and "deliberate failure in cell 3" in bad
    assert "Traceback" not in bad and "most recent call last" not in bad and "raise ValueError(" not in bad
    assert "Traceback" in (out / "bad.ipynb").read_text() or "traceback" in (out / "bad.ipynb").read_text()


def test_cli_exit_status_nonzero_when_a_notebook_fails(tmp_path):
    cfg = write_cfg(tmp_path, f"reports:\n  - {{name: bad, notebook: {HERE / 'fails.ipynb'}}}\n")
    r = subprocess.run([sys.executable, "-m", "evallab.cli", "report", "--config", str(cfg), "--out",
                        str(tmp_path / "o"), "--jobs", "1"], capture_output=True, text=True)
    assert r.returncode == 1
    assert "failed" in r.stderr and "cell 3" in r.stderr
    assert (tmp_path / "o" / "index.html").exists()


def test_rerunning_one_report_keeps_the_others_in_the_index(tmp_path):
    ok = HERE / "ok.ipynb"
    specs = load_config(write_cfg(tmp_path, f"reports:\n  - {{name: first, notebook: {ok}}}\n"
                                            f"  - {{name: second, notebook: {ok}, parameters: {{value: 5}}}}\n"))
    out = tmp_path / "out"
    run_report_batch(specs, out, jobs=1, progress=False)
    run_report_batch([specs[1]], out, jobs=1, progress=False, index_names=["first", "second"])
    index = (out / "index.html").read_text()
    assert index.index("first.html") < index.index("second.html")


def test_hand_run_metrics_go_to_adhoc(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALLAB_REPORTS", str(tmp_path))
    p = save_metrics("r", {"a": 1})
    assert p == tmp_path / "adhoc" / "r.metrics.json"


def test_report_kernels_run_the_collector_less_often_and_user_kernels_keep_the_default(tmp_path):
    import gc

    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[
        new_code_cell("report_name = 'x'\nreports_dir = ''", metadata={"tags": ["parameters"]}),
        new_code_cell("import gc\nfrom evallab.reporting._batch import save_metrics\n"
                      "t0, t1, t2 = gc.get_threshold()\n"
                      "save_metrics(report_name, {'t0': t0, 't1': t1, 't2': t2}, reports_dir_=reports_dir)"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                 "language_info": {"name": "python"}})
    nbformat.write(nb, str(tmp_path / "gc.ipynb"))
    cfg = write_cfg(tmp_path, f"reports:\n  - {{name: gc, notebook: {tmp_path / 'gc.ipynb'}}}\n")
    (res,) = run_report_batch(load_config(cfg), tmp_path / "out", jobs=1, progress=False)
    assert res.status == "ok", res.error
    assert res.metrics == {"t0": 50_000, "t1": 20, "t2": 100}
    # importing the set-up module in one's own kernel (Jupyter) changes the style, not the collector
    before = gc.get_threshold()
    import evallab.reporting._kernel  # noqa: F401

    assert gc.get_threshold() == before


def test_a_kernel_that_dies_before_its_first_reply_is_started_again(tmp_path, monkeypatch):
    """A port race at kernel start (jupyter_client's free ports taken before the kernel binds) is retried: the
    first attempt fails as jupyter_client reports it, the second runs the notebook."""
    import papermill as pm

    from evallab.reporting import _batch_run

    real, calls = pm.execute_notebook, []

    def flaky(*a, **k):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError(_batch_run.KERNEL_START_FAILURE)
        return real(*a, **k)

    monkeypatch.setattr(pm, "execute_notebook", flaky)
    cfg = write_cfg(tmp_path, f"reports:\n  - {{name: good, notebook: {HERE / 'ok.ipynb'}, parameters: {{value: 2}}}}\n")
    (res,) = run_report_batch(load_config(cfg), tmp_path / "out", jobs=1, progress=False)
    assert len(calls) == 2 and res.status == "ok" and res.metrics == {"value": 2, "twice": 4}


def test_a_parallel_batch_starts_the_longest_reports_first_and_untimed_ones_before_them(tmp_path, monkeypatch):
    """Longest-processing-time-first: reports never timed first in batch order, then by last run's seconds,
    longest first; the seconds recorded are those of reports that finished ok, and deleted notebooks are dropped."""
    from evallab.reporting._batch import DURATIONS, ReportResult, ReportSpec, longest_first, remember_seconds

    monkeypatch.setenv("EVALLAB_STATE", str(tmp_path / "state"))
    nbs = {n: tmp_path / f"{n}.ipynb" for n in "abcde"}
    for p in nbs.values():
        p.write_text("{}")
    specs = [ReportSpec(n, p) for n, p in nbs.items()]
    assert [s.name for s in longest_first(specs)] == list("abcde")  # nothing timed yet: batch order
    remember_seconds([ReportResult("a", "ok", 2.0), ReportResult("b", "ok", 9.5), ReportResult("c", "failed", 30.0),
                      ReportResult("d", "ok", 4.25)], specs)
    # e and the failed c were never timed: first, in batch order; then b 9.5 s, d 4.25 s, a 2.0 s
    assert [s.name for s in longest_first(specs)] == ["c", "e", "b", "d", "a"]
    nbs["b"].unlink()
    remember_seconds([ReportResult("e", "ok", 1.0)], specs)
    saved = json.loads((tmp_path / "state" / DURATIONS).read_text())
    assert saved == {str(nbs["a"].resolve()): 2.0, str(nbs["d"].resolve()): 4.25, str(nbs["e"].resolve()): 1.0}


@pytest.mark.parametrize("save_every", [0.0, 3600.0])
def test_the_runner_writes_the_executed_notebook_every_save_every_seconds_and_always_at_the_end(
        tmp_path, monkeypatch, save_every):
    """papermill writes the whole notebook at each cell's start and end; the batch's engine writes it at the start,
    then only when ``SAVE_EVERY`` seconds have passed since the last write, and once at the end — the same final
    notebook."""
    import nbformat
    import papermill.engines

    from evallab.reporting import _batch_run

    writes = []
    real = papermill.engines.write_ipynb
    monkeypatch.setattr(papermill.engines, "write_ipynb", lambda nb, path: (writes.append(path), real(nb, path)))
    monkeypatch.setattr(_batch_run, "SAVE_EVERY", save_every)
    cfg = write_cfg(tmp_path, f"reports:\n  - {{name: good, notebook: {HERE / 'ok.ipynb'}, parameters: {{value: 3}}}}\n")
    (res,) = run_report_batch(load_config(cfg), tmp_path / "out", jobs=1, progress=False)
    assert res.status == "ok" and res.metrics == {"value": 3, "twice": 6}
    cells = len(nbformat.read(str(tmp_path / "out" / "good.ipynb"), as_version=4).cells)
    # papermill's own rhythm (SAVE_EVERY 0): the start, each cell's start and end, the end; else the start and end
    assert len(writes) == (2 + 2 * cells if save_every == 0 else 2)
    out = nbformat.read(str(tmp_path / "out" / "good.ipynb"), as_version=4)
    assert all(c.get("execution_count") for c in out.cells if c.cell_type == "code")
    assert out.metadata.papermill["exception"] is None
