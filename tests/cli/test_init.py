"""Issue 30: ``evallab init DIR`` scaffolds a study folder, refuses to overwrite (naming the files) unless --force;
``evallab --version``; a study's relative ``*_path`` parameters are read from its folder."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import yaml
from cli_helper import run_cli

import evallab
from evallab import verdicts as V
from evallab.paths import REPO_ROOT

NOTEBOOKS = sorted(p.name for p in (REPO_ROOT / "notebooks").iterdir() if p.suffix in (".ipynb", ".yaml"))


def test_init_writes_the_study_folder(tmp_path, capsys):
    study = tmp_path / "my study"
    code, out = run_cli(["init", study], capsys)
    assert code == 0, out
    assert sorted(p.name for p in (study / "notebooks").iterdir()) == NOTEBOOKS
    for nb in NOTEBOOKS:  # byte copies of the bundled notebooks
        assert (study / "notebooks" / nb).read_bytes() == (REPO_ROOT / "notebooks" / nb).read_bytes()
    ours = yaml.safe_load((REPO_ROOT / "reports.yaml").read_text())["reports"]
    theirs = yaml.safe_load((study / "reports.yaml").read_text())["reports"]
    assert [(e["name"], e["notebook"], e["parameters"]) for e in theirs] == \
        [(e["name"], e["notebook"], e["parameters"]) for e in ours]
    assert all(not r.startswith("data/") for e in theirs for r in e.get("reads", []))  # bundled: in the package
    assert (study / "sweeps.yaml").is_file() and (study / "README.md").is_file()
    schema = (study / "data" / "README.md").read_text()
    assert all(f"\n{c} " in schema for c in V.SCHEMA) and all(f"`{c}`" in schema for c in V.REQUIRED)
    assert [p.name for p in (study / "data").iterdir()] == ["README.md"]
    ignored = (study / ".gitignore").read_text().splitlines()
    assert {"reports/", ".evallab-cache/", "*.lock", "*.lock.owner"} <= set(ignored)
    from evallab.reporting._batch import load_config

    specs = load_config(study / "reports.yaml")
    assert [s.notebook for s in specs] == [(study / e["notebook"]).resolve() for e in ours]


def test_init_refuses_to_overwrite_naming_the_files_unless_forced(tmp_path, capsys):
    study = tmp_path / "s"
    (study / "notebooks").mkdir(parents=True)
    (study / "reports.yaml").write_text("mine\n")
    (study / "notebooks" / "05_drift.ipynb").write_text("{}")
    code, out = run_cli(["init", study], capsys)
    lines = out.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ")
    assert "notebooks/05_drift.ipynb" in lines[0] and "reports.yaml" in lines[0] and "--force" in lines[0]
    assert "01_judge_agreement" not in lines[0]
    assert sorted(p.relative_to(study).as_posix() for p in study.rglob("*")) == \
        ["notebooks", "notebooks/05_drift.ipynb", "reports.yaml"]  # nothing written
    assert (study / "reports.yaml").read_text() == "mine\n"
    code, out = run_cli(["init", study, "--force"], capsys)
    assert code == 0 and "replaced" in out and (study / "reports.yaml").read_text() != "mine\n"


def test_init_on_a_file_is_refused(tmp_path, capsys):
    f = tmp_path / "f"
    f.write_text("x")
    code, out = run_cli(["init", f], capsys)
    assert code == 2 and "is a file" in out


def test_version_is_the_packages_single_version(capsys):
    code, out = run_cli(["--version"], capsys)
    assert code == 0 and out.strip() == f"evallab {evallab.__version__}"
    assert importlib.metadata.version("evallab") == evallab.__version__


def test_a_relative_path_parameter_is_read_from_the_batch_files_folder(tmp_path, capsys):
    from evallab.reporting._batch import load_config

    study = tmp_path / "s"
    run_cli(["init", study], capsys)
    (study / "data" / "verdicts.csv").write_text("item_id,judge,verdict\n1,j,1\n")
    doc = yaml.safe_load((study / "reports.yaml").read_text())
    doc["reports"][0]["parameters"] = {"verdicts_path": "data/verdicts.csv", "subsets": []}
    (study / "reports.yaml").write_text(yaml.safe_dump(doc))
    spec = load_config(study / "reports.yaml")[0]
    assert spec.parameters == {"verdicts_path": str((study / "data" / "verdicts.csv").resolve()), "subsets": []}
    assert Path(spec.parameters["verdicts_path"]).is_file()


def test_init_study_reports_what_it_wrote_and_replaced(tmp_path):
    from evallab._scaffold import init_study

    first = init_study(tmp_path / "s")
    on_disk = sorted(p.relative_to(tmp_path / "s").as_posix() for p in (tmp_path / "s").rglob("*") if p.is_file())
    assert sorted(first.written) == on_disk and first.overwritten == []
    again = init_study(tmp_path / "s", force=True)
    assert again.written == [] and sorted(again.overwritten) == on_disk
