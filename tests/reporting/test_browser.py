"""Every report of a batch run, opened in headless Chromium at 1280 px: no horizontal overflow, nothing in a
stderr output area, no "NaN" in computed output, no "Traceback", no absolute machine path, every image loaded.

Runs the real batch (``reports.yaml``), reports 01 and 02 on a one-order table without gold (an imported AlpacaEval
annotations file), plus ``tests/data/report/messy.ipynb`` (which prints warnings, stderr,
paths, a wide table with NaN and an index, a 62-row table and a heatmap) and a grid of 4 runs of
``tests/data/report/sweep.ipynb`` (the index's comparison card and figure). A negative control checks the checks:
the same messy notebook exported with plain nbconvert (no Run notes, no publication tables) is caught.
Skipped only when Chromium is not installed (``apt-get install -y chromium``; ``.ci/run`` installs it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evallab.paths import REPO_ROOT
from evallab.reporting._shots import chromium_path

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(chromium_path() is None,
                                 reason="Chromium is not installed at /usr/bin/chromium "
                                        "(apt-get install -y chromium; .ci/run installs it)")]

HERE = Path(__file__).parents[1] / "data" / "report"


@pytest.fixture(scope="module")
def browser():
    pw = pytest.importorskip("playwright.sync_api")
    from evallab.reporting._shots import launch

    with pw.sync_playwright() as p:
        b = launch(p)
        page = b.new_page()
        yield page
        b.close()


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    from evallab.importers import import_file
    from evallab.reporting._batch import ReportSpec, load_config, run_report_batch

    tmp = tmp_path_factory.mktemp("browser")
    out = tmp / "reports"
    # reports 01 and 02 on a one-order table without gold: AlpacaEval's annotations (shown order not stored)
    one_order = tmp / "one_order_no_gold.csv"
    import_file(REPO_ROOT / "data" / "formats" / "alpaca_eval" / "alpaca-7b__alpaca_eval_gpt4__annotations.json"
                ).to_csv(one_order, index=False)
    user = {"verdicts_path": str(one_order), "subsets": [], "strategies": [], "n_resamples": 200}
    specs = load_config(REPO_ROOT / "reports.yaml") + [
        ReportSpec("messy", HERE / "messy.ipynb", {}),
        ReportSpec("one_order_01", REPO_ROOT / "notebooks" / "01_judge_agreement.ipynb", user),
        ReportSpec("one_order_02", REPO_ROOT / "notebooks" / "02_position_bias.ipynb", user)]
    grid = tmp / "grid.yaml"  # a grid entry: its comparison card, table and figure in the index
    grid.write_text(f"reports:\n  - name: sweep\n    notebook: {HERE / 'sweep.ipynb'}\n"
                    "    grid: {k: [1, 3], n: [5, 10]}\n    compare: {metric: rate, label: Success rate, unit: '%'}\n")
    specs += load_config(grid)
    results = run_report_batch(specs, out, jobs=2, progress=False)
    return out, results


def test_batch_ran(batch):
    _, results = batch
    assert all(r.status == "ok" for r in results), [(r.name, r.error) for r in results if r.status != "ok"]


def test_every_page_reads_cleanly_at_1280px(batch, browser):
    from evallab.reporting._shots import page_problems, pages

    out, results = batch
    files = pages(out)
    assert {f.stem for f in files} >= {r.name for r in results} | {"index"}
    found = {f.name: page_problems(browser, f.resolve().as_uri()) for f in files}
    assert not {k: v for k, v in found.items() if v}


def test_findings_conclusions_and_run_notes_reach_the_reader(batch):
    import html
    import re

    out, _ = batch
    index = html.unescape(re.sub(r"<[^>]+>", " ", (out / "index.html").read_text()))
    assert "Judge A keeps its verdict in 93% of swapped pairs." in index
    assert "93.0% [90.0, 95.0] (95% CI, n = 419)" in index
    assert "Sweep test: a grid of 4 runs" in index and (out / "sweep.compare.png").exists()
    report = (out / "messy.html").read_text()
    assert "Conclusions" in report and "Caveats" in report
    notes = report[report.index("Run notes"):]
    assert "UserWarning: a deliberate UserWarning from the notebook" in notes and "stderr line from data" in notes


def test_long_table_csv_link_resolves(batch):
    out, _ = batch
    html = (out / "messy.html").read_text()
    assert "messy.tables/" in html
    assert any((out / "messy.tables").glob("*.csv"))


def test_the_checks_catch_a_raw_export(tmp_path, batch, browser):
    import nbformat
    from nbconvert import HTMLExporter

    from evallab.reporting._shots import page_problems

    out, _ = batch
    nb = nbformat.read(str(out / "messy.ipynb"), as_version=4)
    # what a notebook shows without the report kernel's tables: the default DataFrame HTML with NaN
    import pandas as pd

    raw = pd.DataFrame({"a": [1.0, float("nan")] * 3, **{f"col_{i}": [12345.678] * 6 for i in range(30)}})
    nb.cells.append(nbformat.v4.new_code_cell("raw", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/html": raw.to_html(), "text/plain": "raw"})]))
    nb.cells.append(nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
        "stream", name="stderr", text=f"{REPO_ROOT}/x.py:1: UserWarning: raw\n")]))
    # a cell ending in show(...) without ';' (the table again as the cell's result) and a save_metrics path echoed
    twice = '<table><caption>Before and after</caption><tr><td>1</td></tr></table>'
    nb.cells.append(nbformat.v4.new_code_cell("show(t)", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/html": twice, "text/plain": "t"}), nbformat.v4.new_output(
        "execute_result", data={"text/html": twice, "text/plain": "t"}, execution_count=1)]))
    nb.cells.append(nbformat.v4.new_code_cell("save_metrics(...)", outputs=[nbformat.v4.new_output(
        "execute_result", data={"text/plain": "PosixPath('r.metrics.json')"}, execution_count=2)]))
    body, _ = HTMLExporter(exclude_input=True).from_notebook_node(nb)
    page = tmp_path / "raw.html"
    page.write_text(body)
    problems = " | ".join(page_problems(browser, page.as_uri()))
    assert "stderr output" in problems and "'NaN'" in problems and "absolute path" in problems
    assert "scrolls sideways" in problems or "wider than" in problems
    assert "table shown twice: 'Before and after'" in problems and "Python repr in an output" in problems
