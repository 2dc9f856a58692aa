"""Parameters checked before a kernel starts, report names that stay inside --out, readable CLI help."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
import typer
from cli_helper import run_cli

from evallab.paths import REPO_ROOT
from evallab.reporting._batch import ReportSpec, load_config, run_one
from evallab.reporting._params import (
    ParameterError,
    check_parameters,
    check_report_name,
    notebook_parameters,
    parse_value,
)

NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("0*.ipynb"))
OK = Path(__file__).parents[1] / "data" / "report" / "ok.ipynb"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_parameter_has_a_type_and_a_description_papermill_reads(nb):
    from papermill.inspection import inspect_notebook

    inspected = inspect_notebook(str(nb))
    src = next(c.source for c in nbformat.read(str(nb), as_version=4).cells
               if "parameters" in c.metadata.get("tags", []))
    assigned = {line.split("=")[0].split(":")[0].strip() for line in src.splitlines()
                if line.strip() and not line.startswith((" ", "#"))}
    assert set(inspected) == assigned  # nothing the inspection cannot read
    for name, p in inspected.items():
        assert p["inferred_type_name"] not in ("None", ""), name
        assert p["help"], name


def test_unknown_name_is_refused_with_the_closest_valid_name():
    nb = REPO_ROOT / "notebooks" / "02_position_bias.ipynb"
    with pytest.raises(ParameterError, match=r"unknown parameter 'verdict_path'.*did you mean 'verdicts_path'"):
        check_parameters(nb, {"verdict_path": "x.csv"})


@pytest.mark.parametrize("params, expected", [
    ({"n_resamples": "many"}, "'n_resamples' .* expects int, got str"),
    ({"subsets": "LLMBar/Natural"}, r"'subsets' .* expects list\[str\], got str"),
    ({"confidence": True}, "'confidence' .* expects float, got bool"),
    ({"judges": ["GPT-4", 3]}, r"'judges' .* expects list\[str\]"),
    ({"report_name": "x"}, "set by the runner"),
])
def test_wrong_type_names_the_parameter_and_the_type(params, expected):
    with pytest.raises(ParameterError, match=expected):
        check_parameters(REPO_ROOT / "notebooks" / "01_judge_agreement.ipynb", params)


def test_right_types_pass(tmp_path):
    nb = REPO_ROOT / "notebooks" / "01_judge_agreement.ipynb"
    (tmp_path / "a.csv").write_text("item_id,judge,verdict\n")
    ok = {"n_resamples": 10, "confidence": 0.9, "subsets": [], "judges": ["GPT-4"],
          "verdicts_path": str(tmp_path / "a.csv")}
    assert check_parameters(nb, ok) == ok
    nb02 = REPO_ROOT / "notebooks" / "02_position_bias.ipynb"
    assert check_parameters(nb02, {"tie_credit": 1}) == {"tie_credit": 1}  # an int is a float (in [0, 1])
    assert notebook_parameters(nb)["n_resamples"].type == "int"
    assert parse_value("3", "int") == 3 and parse_value("[a, b]", "list[str]") == ["a", "b"]
    assert parse_value("3", "str") == "3" and parse_value("true", "bool") is True


def test_batch_refuses_before_a_kernel_starts(tmp_path):
    res = run_one(ReportSpec("ok", OK, {"valeu": 3}), tmp_path)
    assert res.status == "failed" and "did you mean 'value'" in res.error
    assert not (tmp_path / "ok.ipynb").exists()  # no kernel ran
    res = run_one(ReportSpec("ok", OK, {"value": "three"}), tmp_path)
    assert res.status == "failed" and "'value'" in res.error and "expects int" in res.error


@pytest.mark.parametrize("name", ["../../x", "/tmp/x", "a/b", "..", "a\\b", "", ".hidden", "x/../y", "a..b"])
def test_bad_report_names_are_refused(name):
    with pytest.raises(ParameterError, match="not allowed"):
        check_report_name(name)


def test_config_refuses_a_bad_report_name(tmp_path):
    cfg = tmp_path / "reports.yaml"
    cfg.write_text(f"reports:\n  - {{name: ../x, notebook: {OK}}}\n")
    with pytest.raises(Exception, match="not allowed"):
        load_config(cfg)


def _snapshot(root: Path) -> dict:
    return {str(p): (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("bad", ["../../x", "../sentinel", "/abs/x"])
def test_nothing_outside_out_is_created_or_deleted(tmp_path, capsys, bad):
    outside = tmp_path / "outside"
    (outside / "deeper").mkdir(parents=True)
    out = outside / "deeper" / "out"
    for p in (outside / "x.metrics.json", outside / "sentinel.metrics.json", outside / "x.html",
              tmp_path / "x.metrics.json", outside / "deeper" / "x.metrics.json"):
        p.write_text("sentinel")
    before = _snapshot(tmp_path)
    code, text = run_cli(["run", OK, "--name", bad, "--out", out], capsys)
    assert code == 2 and "not allowed" in text
    res = run_one(ReportSpec(bad, OK, {}), out)
    assert res.status == "failed" and "not allowed" in res.error
    assert _snapshot(tmp_path) == before
    assert not out.exists() or not any(out.iterdir())


def test_run_command_writes_notebook_html_and_metrics(tmp_path, capsys):
    code, text = run_cli(["run", OK, "-p", "value", "4", "--out", tmp_path / "o"], capsys)
    assert code == 0, text
    assert {p.name for p in (tmp_path / "o").iterdir()} >= {"ok.ipynb", "ok.html", "ok.metrics.json"}
    code, text = run_cli(["run", OK, "-p", "valeu", "4", "--out", tmp_path / "o2"], capsys)
    assert code == 2 and "did you mean 'value'" in text and not (tmp_path / "o2").exists()
    code, text = run_cli(["run", OK, "-p", "value", "four", "--out", tmp_path / "o3"], capsys)
    assert code == 2 and "'value'" in text and "expects int" in text
    code, text = run_cli(["run", OK, "--list"], capsys)
    assert code == 0 and "value: int = 1" in text


def test_run_defaults_to_reports_adhoc(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EVALLAB_REPORTS", str(tmp_path))
    code, text = run_cli(["run", OK], capsys)
    assert code == 0, text
    assert (tmp_path / "adhoc" / "ok.html").exists() and (tmp_path / "adhoc" / "ok.metrics.json").exists()


# ---------------------------------------------------------------------------------------------------- CLI help
def _commands():
    from evallab.cli import app

    root = typer.main.get_command(app)

    def walk(cmd, path):
        yield path, cmd
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from walk(sub, [*path, name])

    return list(walk(root, []))


@pytest.mark.parametrize("path, cmd", _commands(), ids=lambda x: " ".join(x) if isinstance(x, list) else "")
def test_help_is_readable_at_80_columns_with_brackets_intact(path, cmd, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, text = run_cli([*path, "--help"], capsys)
    assert code == 0
    lines = text.splitlines()
    assert all(len(ln) <= 80 for ln in lines), [ln for ln in lines if len(ln) > 80]
    assert not [ln for ln in lines if ln.rstrip().endswith(("...", "…")) and "Usage:" not in ln and "}..." not in ln
                and "]..." not in ln]  # nothing cut to fit a line
    flat = " ".join(text.split())
    for p in cmd.params:
        h = getattr(p, "help", None)
        if h:
            for piece in h.replace("\n", " ").split("["):
                if "]" in piece:
                    inside = " ".join(piece.split("]")[0].split())
                    assert f"[{inside}]" in flat or inside in flat, (p.name, inside)


def test_known_bracketed_help_survives(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    texts = []
    for path, _cmd in _commands():
        texts.append(" ".join(run_cli([*path, "--help"], capsys)[1].split()))
    flat = "\n".join(texts)
    assert "[input, output]" in flat
    assert "(file:line: [code/rule])" in flat


def test_the_command_line_loads_without_the_scientific_stack():
    """Every `evallab` command, and every worker process that imports the command line (Dask workers started from
    `evallab report --local-cluster`), would pay for pandas/scipy at import (~1.5 s on this machine) if a
    subcommand module loaded them at its top; they are imported inside the commands that use them."""
    import subprocess
    import sys

    code = ("import sys, evallab.cli\n"
            "heavy = sorted(m for m in ('pandas', 'scipy', 'numpy', 'statsmodels', 'sklearn', 'matplotlib', 'httpx')"
            " if m in sys.modules)\n"
            "print(','.join(heavy))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert r.stdout.strip() == "", r.stdout


def test_a_missing_path_parameter_is_refused_before_a_kernel_starts(tmp_path, capsys):
    nb = REPO_ROOT / "notebooks" / "01_judge_agreement.ipynb"
    missing = tmp_path / "no-such-table.csv"
    with pytest.raises(ParameterError, match="'verdicts_path'.*no such file or folder"):
        check_parameters(nb, {"verdicts_path": str(missing)})
    code, text = run_cli(["run", nb, "-p", "verdicts_path", str(missing), "--out", tmp_path / "o"], capsys)
    assert code == 2 and "verdicts_path" in text and str(missing) in text
    assert not (tmp_path / "o").exists()  # refused before anything ran
    table = tmp_path / "t.csv"
    table.write_text("item_id,judge,verdict\nq1,a,1\n")
    assert check_parameters(nb, {"verdicts_path": str(table), "data_dir": ""})  # existing / empty: accepted


def test_list_keeps_descriptions_and_order_with_an_equals_sign_in_a_string_default(tmp_path, capsys, caplog):
    """papermill#864: papermill's inspection cannot parse ``query: str = "a=b"`` and logs "Unable to parse line";
    ``--list`` still shows every parameter in the cell's order with its description, and no warning."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell('first: int = 1  # the first one\n'
                                     'query: str = "judge=gpt-4, k=2"  # a filter with = inside\n'
                                     'old_style = "x=y"  # type: str  declared in a type comment\n'
                                     'last: float = 0.5  # in (0, 1): the last one\n')
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell]
    path = tmp_path / "eq.ipynb"
    nbformat.write(nb, str(path))
    code, text = run_cli(["run", path, "--list"], capsys)
    assert code == 0
    assert text.splitlines() == ['first: int = 1  # the first one',
                                 'query: str = "judge=gpt-4, k=2"  # a filter with = inside',
                                 'old_style: str = "x=y"  # declared in a type comment',
                                 'last: float = 0.5  # in (0, 1): the last one']
    assert "Unable to parse" not in text and "Unable to parse" not in caplog.text
    assert check_parameters(path, {"query": "a=b", "old_style": "z"}) == {"query": "a=b", "old_style": "z"}
    with pytest.raises(ParameterError, match=r"'last' of eq.ipynb is 1.5; expected a value in \(0, 1\)"):
        check_parameters(path, {"last": 1.5})


@pytest.mark.parametrize("help_, value, ok", [
    ("in (0, 1): x", 0.5, True), ("in (0, 1): x", 1.0, False), ("in [0, 1]: x", 1.0, True),
    ("in [1, inf): x", 0, False), ("in [1, inf): x", 10**9, True), ("in (-inf, 0]: x", -3, True),
    ("at most 3 items: x", [1, 2, 3], True), ("at most 3 items: x", [1, 2, 3, 4], False),
])
def test_declared_constraints(tmp_path, help_, value, ok):
    nb = nbformat.v4.new_notebook()
    typ = "list[int]" if isinstance(value, list) else "float"
    cell = nbformat.v4.new_code_cell(f"v: {typ} = {[] if isinstance(value, list) else 0.5}  # {help_}\n")
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell]
    path = tmp_path / "c.ipynb"
    nbformat.write(nb, str(path))
    if ok:
        assert check_parameters(path, {"v": value}) == {"v": value}
    else:
        with pytest.raises(ParameterError, match="'v' of c.ipynb"):
            check_parameters(path, {"v": value})
