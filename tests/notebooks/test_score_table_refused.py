"""Issue 28: every notebook taking a verdict table (``verdicts_path``) refuses a score-only table — a rating table
whose verdicts are all empty — in one line naming the file, before any estimate (report 08 takes it instead; its
own test checks the other way round)."""

from __future__ import annotations

import pytest

from evallab.paths import REPO_ROOT
from evallab.reporting._batch import ReportSpec, run_report_batch

NOTEBOOKS = ["01_judge_agreement", "02_position_bias", "05_drift", "07_corrected_rates"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("score_table")
    table = tmp / "ratings.csv"
    table.write_text("item_id,judge,verdict,score\n" + "".join(f"q{i},A,,{1 + i % 5}\n" for i in range(20)),
                     encoding="utf-8")
    specs = [ReportSpec(nb, REPO_ROOT / "notebooks" / f"{nb}.ipynb", {"verdicts_path": str(table),
                                                                      "n_resamples": 0}) for nb in NOTEBOOKS]
    return {r.name: r for r in run_report_batch(specs, tmp / "reports", jobs=1, progress=False)}


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_a_score_table_is_refused_in_one_line(runs, nb):
    r = runs[nb]
    assert r.status == "failed"
    assert "ratings.csv" in r.error and "scores only" in r.error and "\n" not in r.error.strip()
