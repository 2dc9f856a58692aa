"""Every report notebook's parameters cell parses under papermill's own inspection (papermill.inspect_notebook):
each parameter the runner declares (evallab.reporting._params.notebook_parameters, from Python's ast) is listed by
papermill, with no "Unable to parse line" warning — a line papermill cannot parse (e.g. a second ``=`` in its
comment, such as ``>=``) is dropped, and setting that parameter then warns "Passed unknown parameter"."""

from __future__ import annotations

import ast
import json
import logging

import papermill
import pytest

from evallab.paths import REPO_ROOT

NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("0[1-8]_*.ipynb"))


def _declared(nb) -> list[str]:
    cell = next(c for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]
                if "parameters" in c.get("metadata", {}).get("tags", []))
    tree = ast.parse("".join(cell["source"]))
    return [n.target.id if isinstance(n, ast.AnnAssign) else n.targets[0].id for n in tree.body
            if isinstance(n, ast.AnnAssign | ast.Assign)]


def test_the_eight_notebooks_are_checked():
    assert [nb.name[:2] for nb in NOTEBOOKS] == [f"0{i}" for i in range(1, 9)]


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_papermill_lists_every_parameter_without_a_warning(nb, caplog):
    with caplog.at_level(logging.WARNING):
        found = papermill.inspect_notebook(str(nb))
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert not warnings, warnings
    assert list(found) == _declared(nb)


#: the range every notebook declaring these parameters gives them (checked before a kernel starts)
RANGES = {"confidence": (0.0, True, 1.0, True), "n_resamples": (0.0, False, float("inf"), True)}


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_confidence_and_resamples_declare_their_range(nb):
    """``confidence`` in (0, 1) and ``n_resamples`` in [0, inf) in every notebook that has them (08 had neither)."""
    from evallab.reporting._params import notebook_parameters

    declared = notebook_parameters(nb)
    for name, rng in RANGES.items():
        if name in declared:
            assert declared[name].constraint == {"range": rng}, (nb.name, declared[name].help)


def test_08_refuses_a_confidence_of_95_before_a_kernel_starts(tmp_path, capsys):
    from cli_helper import run_cli

    nb = REPO_ROOT / "notebooks" / "08_scales.ipynb"
    for name, value, expected in (("confidence", "95", "in (0, 1)"), ("n_resamples", "-5", ">= 0")):
        code, text = run_cli(["run", nb, "-p", name, value, "--out", tmp_path / "o"], capsys)
        assert code == 2 and text.strip() == (f"error: parameter '{name}' of 08_scales.ipynb is {value}; expected "
                                              f"a value {expected}"), text
        assert not (tmp_path / "o").exists()  # refused before anything ran or was written
