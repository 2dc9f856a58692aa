"""Issue 30: where evallab reads its bundled files (the checkout, or the installed package's ``_bundled/``) and
where it writes reports and the reply cache (the project the current folder is in, else the user's folders)."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest

import evallab
from evallab import paths
from evallab.errors import EvallabError


def test_a_checkout_reads_its_own_folders():
    assert paths._is_checkout()
    root = Path(evallab.__file__).resolve().parents[1]
    assert paths._bundle("data") == root / "data" == paths.data_dir()
    assert paths._bundle("notebooks") == root / "notebooks"
    assert paths._bundle("reports.yaml") == root / "reports.yaml"
    assert paths.data_dir("llmbar") == root / "data" / "llmbar"
    with pytest.raises(EvallabError, match="expected a path under one of"):
        paths._bundle("evallab")


def test_an_installed_package_reads_its_bundled_copy(monkeypatch):
    monkeypatch.setattr(paths, "_is_checkout", lambda: False)
    pkg = Path(evallab.__file__).resolve().parent
    assert paths._bundle("data", "llmbar") == pkg / "_bundled" / "data" / "llmbar"
    assert paths.data_dir() == pkg / "_bundled" / "data"
    monkeypatch.setenv("EVALLAB_DATA", "/elsewhere")
    assert paths.data_dir("llmbar") == Path("/elsewhere/llmbar")


def test_reports_and_cache_go_to_the_study_folder_the_current_folder_is_in(tmp_path, monkeypatch):
    for var in ("EVALLAB_REPORTS", "EVALLAB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    study = tmp_path / "study"
    (study / "notebooks").mkdir(parents=True)
    (study / "reports.yaml").write_text("reports: []\n")
    monkeypatch.chdir(study / "notebooks")  # where JupyterLab runs a study's notebook
    assert paths._project_dir() == study.resolve()
    assert paths.reports_dir() == study.resolve() / "reports"
    assert paths._cache_dir() == study.resolve() / ".evallab-cache"
    monkeypatch.setenv("EVALLAB_REPORTS", str(tmp_path / "r"))
    monkeypatch.setenv("EVALLAB_CACHE", str(tmp_path / "c"))
    assert paths.reports_dir() == tmp_path / "r" and paths._cache_dir() == tmp_path / "c"


def test_outside_any_project_the_cache_is_the_users(tmp_path, monkeypatch):
    for var in ("EVALLAB_REPORTS", "EVALLAB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    assert paths._project_dir() is None
    assert paths._cache_dir() == Path(platformdirs.user_cache_dir("evallab")) == tmp_path / "xdg" / "evallab"
    assert paths.reports_dir() == (tmp_path / "empty").resolve() / "reports"
    assert not any(paths.REPO_ROOT in p.parents for p in (paths._cache_dir(), paths.reports_dir()))


def test_a_data_parameter_default_is_read_from_the_bundled_data_outside_the_checkout(tmp_path, monkeypatch):
    monkeypatch.delenv("EVALLAB_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    assert paths._resolve("data/live/smollm2") == paths.data_dir() / "live" / "smollm2"
    (tmp_path / "reports.yaml").write_text("reports: []\n")
    (tmp_path / "data" / "live" / "smollm2").mkdir(parents=True)  # the study's own copy wins
    assert paths._resolve("data/live/smollm2") == tmp_path.resolve() / "data" / "live" / "smollm2"
    assert paths._resolve("/abs/x") == Path("/abs/x")
