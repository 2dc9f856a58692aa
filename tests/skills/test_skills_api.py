"""The public face of evallab.skills: every name of ``__all__`` resolves to an object defined in a private module of
the package, the modules behind it are private, names load on first use, and the judge layer (which owns the keryx
recording format) never imports the skill-pack layer."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import evallab.skills as skills
from evallab import judges
from evallab.skills._integrity import IntegrityFinding

PACKAGE = Path(skills.__file__).parent


def _fresh(code: str) -> str:
    """stdout of ``code`` run by a fresh interpreter (nothing imported yet)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_every_module_behind_the_face_is_private():
    modules = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert modules and all(name.startswith("_") for name in modules), modules


def test_all_names_resolve_to_private_modules():
    assert len(skills.__all__) == len(set(skills.__all__))
    assert skills.__all__ == sorted(skills.__all__)
    for name in skills.__all__:
        obj = getattr(skills, name)
        home = getattr(obj, "__module__", None)
        if home is not None and callable(obj):  # functions and classes say where they are defined
            assert home.startswith("evallab.skills._") or home == "evallab.errors", (name, home)
    assert set(dir(skills)) == set(skills.__all__)


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'triggers'"):
        skills.triggers  # noqa: B018 — the old module path is gone
    with pytest.raises(ImportError):
        importlib.import_module("evallab.skills.scenarios")


def test_the_two_findings_are_distinct_classes():
    from evallab.skills._rubrics import RubricFinding

    assert IntegrityFinding is not RubricFinding
    assert {f.name for f in IntegrityFinding.__dataclass_fields__.values()} == {
        "skill", "scenario", "rule", "severity", "message", "path"}
    assert list(RubricFinding.__dataclass_fields__) == ["path", "line", "code", "rule", "message"]


def test_recording_format_lives_in_the_judge_layer():
    from evallab.judges import _recordings

    for name in ("RecordingError", "load_recordings", "to_verdicts"):  # the face: what a user calls
        assert name in judges.__all__ and name not in skills.__all__
        obj = getattr(judges, name)
        assert obj.__module__ == ("evallab.errors" if name == "RecordingError" else "evallab.judges._recordings")
    for name in ("Recording", "Entry", "Sample", "load_recording", "KINDS", "EXPECTED"):  # private, same layer
        assert hasattr(_recordings, name) and name not in judges.__all__ and name not in skills.__all__
    assert _fresh("import sys, evallab.judges; print(sorted(m for m in sys.modules if m.startswith('evallab.skills')))") \
        == "[]"


def test_names_load_on_first_use():
    out = _fresh("import sys, evallab.skills as s; a = 'sklearn' in sys.modules or 'bm25s' in sys.modules; "
                 "s.load_library; b = 'sklearn' in sys.modules or 'bm25s' in sys.modules; "
                 "s.leave_one_out; c = 'bm25s' in sys.modules; print(a, b, c)")
    assert out == "False False True"
