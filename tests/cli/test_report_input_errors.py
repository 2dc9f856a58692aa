"""A report run that fails on bad input (``evallab run`` / ``evallab report``): a malformed user table raises one of
evallab's input errors in the kernel (:data:`evallab.errors.INPUT_ERRORS`) — the command prints that error's one
line (its path as the user typed it) and exits 2, as every command refusing its input does; the failed report's
partial HTML stays written. Any other notebook failure keeps exit 1.

The expected row is counted from the lines this test writes, never from what the command printed.
"""

from __future__ import annotations

import csv

import pytest
from cli_helper import run_cli

from evallab.paths import REPO_ROOT
from evallab.reporting._batch_run import is_input_error

NB01 = REPO_ROOT / "notebooks" / "01_judge_agreement.ipynb"
FAILS = REPO_ROOT / "tests" / "data" / "report" / "fails.ipynb"


def _bad_table(path) -> int:
    """A tidy verdict table of 80 rows whose one bad verdict ('A') is on data row 58; returns that row, counted
    here from the rows written (the header is not a data row)."""
    rows = [{"item_id": f"q{i}", "judge": "judge_a" if i % 2 else "judge_b", "verdict": "pass" if i % 3 else "fail"}
            for i in range(1, 81)]
    rows[57]["verdict"] = "A"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, ["item_id", "judge", "verdict"])
        w.writeheader()
        w.writerows(rows)
    return next(i for i, r in enumerate(rows, start=1) if r["verdict"] == "A")


def test_the_input_error_classes():
    """DataError and its subclasses (table, design, import), and ParameterError, are input errors; anything else
    (a bug, a judge that refused, an unknown class name) is not."""
    for name in ("VerdictTableError", "DesignError", "DataError", "ImportDataError", "ParameterError",
                 "ManifestError"):
        assert is_input_error(name), name
    for name in ("ValueError", "ZeroDivisionError", "JudgeFatalError", "StateError", "EvallabError", "KeyError",
                 "INPUT_ERRORS", "nope"):
        assert not is_input_error(name), name


def test_run_on_a_malformed_table_prints_one_line_and_exits_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    row = _bad_table(tmp_path / "bad.csv")
    assert row == 58
    code, text = run_cli(["run", NB01, "-p", "verdicts_path", "bad.csv", "--out", tmp_path / "o", "--name", "bad"],
                         capsys)
    assert code == 2, text
    errors = [ln for ln in text.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, text
    # the error's own message, the path as typed (not made absolute), no class name, no cell, no traceback
    assert errors[0].startswith(f"error: bad.csv, row {row}, column 'verdict': unknown verdict 'A'; expected one of")
    assert str(tmp_path) not in errors[0]
    assert "Traceback" not in text and "VerdictTableError" not in text and "failed bad" not in text
    # nothing already computed is lost: the partial report is written
    assert (tmp_path / "o" / "bad.html").exists() and (tmp_path / "o" / "bad.ipynb").exists()


def test_report_batch_of_bad_input_exits_2(tmp_path, capsys):
    row = _bad_table(tmp_path / "bad.csv")
    cfg = tmp_path / "reports.yaml"
    cfg.write_text(f"reports:\n  - {{name: bad, notebook: {NB01}, parameters: {{verdicts_path: {tmp_path / 'bad.csv'}}}}}\n")
    code, text = run_cli(["report", "--config", cfg, "--out", tmp_path / "o", "--jobs", "1"], capsys)
    assert code == 2, text
    line = next(ln for ln in text.splitlines() if ln.startswith("failed"))
    assert f"error: {tmp_path / 'bad.csv'}, row {row}, column 'verdict': unknown verdict 'A'" in line
    assert "VerdictTableError" not in line and (tmp_path / "o" / "bad.html").exists()


@pytest.mark.parametrize("command", ["run", "report"])
def test_any_other_notebook_failure_keeps_exit_1(tmp_path, capsys, command):
    if command == "run":
        args = ["run", FAILS, "--out", tmp_path / "o"]
    else:
        cfg = tmp_path / "reports.yaml"
        cfg.write_text(f"reports:\n  - {{name: fails, notebook: {FAILS}}}\n")
        args = ["report", "--config", cfg, "--out", tmp_path / "o", "--jobs", "1"]
    code, text = run_cli(args, capsys)
    assert code == 1, text
    assert "cell 3" in text and "ValueError: deliberate failure in cell 3" in text and "error:" not in text
