"""Issue 26 defects 1 and 7: every notebook taking ``verdicts_path`` runs on a small user table with no other
parameter (the bundled data's subset/strategy selection does not apply to it) and shows that table alone — no
SmolLM2 live run, no bundled AlpacaEval, no rubric library — in what its cells show and its metrics.json."""

from __future__ import annotations

import csv
import json

import pytest

from evallab.paths import REPO_ROOT
from evallab.reporting._batch import ReportSpec, run_report_batch

NB = REPO_ROOT / "notebooks"
NOTEBOOKS = ["01_judge_agreement", "02_position_bias", "03_anchor_inflation", "05_drift"]
BUNDLED_WORDS = ("SmolLM2", "alpaca_eval_gpt4", "llama.cpp", "presets_hard_failed", "rubric_findings", "real_judges",
                 "family_preference")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("user_table")
    table = tmp / "mine.csv"
    with table.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "judge", "strategy", "order", "verdict", "gold"])
        for i in range(30):
            gold = "1" if i % 3 else "2"
            for judge, wrong in (("judge-a", 5), ("judge-b", 4)):
                for order in ("ab", "ba"):
                    w.writerow([f"q{i}", judge, "my-prompt", order, gold if i % wrong else "tie", gold])
    specs = [ReportSpec(nb, NB / f"{nb}.ipynb", {"verdicts_path": str(table), "n_resamples": 20})
             for nb in NOTEBOOKS]
    out = tmp / "reports"
    return {r.name: r for r in run_report_batch(specs, out, jobs=1, progress=False)}, out


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_a_users_table_shows_that_table_alone(runs, nb):
    results, out = runs
    assert results[nb].status == "ok", f"cell {results[nb].cell}: {results[nb].error}"
    executed = json.loads((out / f"{nb}.ipynb").read_text(encoding="utf-8"))
    shown = json.dumps([c.get("outputs", []) for c in executed["cells"] if c["cell_type"] == "code"])
    metrics = (out / f"{nb}.metrics.json").read_text(encoding="utf-8")
    for word in BUNDLED_WORDS:
        assert word not in metrics, (nb, word)
    assert "SmolLM2" not in shown and "alpaca_eval_gpt4" not in shown  # the outputs, not the intro's words
    assert "Nine real judges reproduced" not in shown and "claude-v1" not in shown
    doc = json.loads(metrics)
    assert "live" not in doc["metrics"] and "alpaca_pair_agreement" not in doc["metrics"]


@pytest.mark.parametrize("nb", ["02_position_bias", "03_anchor_inflation", "05_drift"])
def test_no_notebook_heading_stands_above_a_bundled_section(nb):
    """A bundled section (SmolLM2 live run, rubric library, bundled AlpacaEval) holds its own heading, so a report on
    the user's table, which skips it, shows no heading left over: no markdown cell of the notebook names one."""
    cells = json.loads((NB / f"{nb}.ipynb").read_text(encoding="utf-8"))["cells"]
    headings = ["".join(c["source"]).split("\n", 1)[0] for c in cells if c["cell_type"] == "markdown"]
    for h in headings[1:]:  # the title's intro may name what the report can show
        assert not any(w in h for w in ("Live judge", "SmolLM2", "rubric library", "AlpacaEval", "Win rates")), h
