"""Issue 28: every notebook taking a verdict table (``verdicts_path``: 01, 02, 03, 05, 07; 04 and 06 read no verdict
table) refuses a score-only table — a rating table whose verdicts are all empty — in one line naming the file and
report 08, before any estimate (report 08 takes it instead; its own test checks the other way round); through the
CLI the refusal is one line with the exit status of any other table a report refuses."""

from __future__ import annotations

import pytest
from cli_helper import run_cli

from evallab.paths import REPO_ROOT
from evallab.reporting._batch import ReportSpec, run_report_batch

NOTEBOOKS = ["01_judge_agreement", "02_position_bias", "03_anchor_inflation", "05_drift", "07_corrected_rates"]
ROWS = "".join(f"q{i},A,,{1 + i % 5}\n" for i in range(20))


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    p = tmp_path_factory.mktemp("score_table") / "ratings.csv"
    p.write_text("item_id,judge,verdict,score\n" + ROWS, encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def runs(table):
    specs = [ReportSpec(nb, REPO_ROOT / "notebooks" / f"{nb}.ipynb", {"verdicts_path": str(table),
                                                                      "n_resamples": 0}) for nb in NOTEBOOKS]
    return {r.name: r for r in run_report_batch(specs, table.parent / "reports", jobs=1, progress=False)}


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_a_score_table_is_refused_in_one_line(runs, nb):
    r = runs[nb]
    assert r.status == "failed"
    assert "ratings.csv" in r.error and "scores only" in r.error and "\n" not in r.error.strip()
    assert "column 'score', 1–5" in r.error and "report 08" in r.error  # what it got, where to go instead


def test_the_cli_says_it_in_one_line_with_the_status_of_any_refused_table(table, tmp_path, capsys):
    """``evallab run`` on the score table, and on a verdict table whose judge filter selects nothing (another
    table the report refuses in its kernel): the same exit status, one line each, no traceback."""
    nb = REPO_ROOT / "notebooks" / "01_judge_agreement.ipynb"
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text("item_id,judge,verdict,gold\n" + "".join(f"q{i},A,pass,fail\n" for i in range(20)),
                        encoding="utf-8")
    code, out = run_cli(["run", nb, "-p", "verdicts_path", table, "-p", "n_resamples", "0",
                         "--out", tmp_path / "a"], capsys)
    other, other_out = run_cli(["run", nb, "-p", "verdicts_path", verdicts, "-p", "judges", "[nobody]",
                                "-p", "n_resamples", "0", "--out", tmp_path / "b"], capsys)
    assert "judge filter" in other_out  # the other refusal is the one meant
    assert code == other == 2  # bad input, as every command refusing its input
    failed = [ln for ln in out.splitlines() if ln.startswith("error:")]
    assert len(failed) == 1 and "this is a score table" in failed[0] and "Traceback" not in out
