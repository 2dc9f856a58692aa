"""Every exception class of evallab is defined in ``evallab/errors.py``, and no raw ``ValueError`` /
``RuntimeError`` is raised anywhere else (issue 25 item 7): a user catches one documented family
(:class:`evallab.errors.EvallabError`, :class:`~evallab.errors.DataError` …) and reads where the input is wrong.

Both checks read the source with :mod:`ast` (every module under ``evallab/``, imported or not). The private
``_NotPlain`` of the judge cache (raised and caught inside one function, never seen by a caller) is the one
exception class allowed elsewhere.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import evallab.errors as errors

PACKAGE = Path(errors.__file__).parent
ERRORS = PACKAGE / "errors.py"
#: private exception classes raised and caught inside their own module
ALLOWED = {("judges/_cache.py", "_NotPlain")}
RAW = ("ValueError", "RuntimeError")


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _exception_classes(tree: ast.AST, known: set[str]) -> list[str]:
    """Classes whose bases name an exception: a builtin one (``*Error``, ``*Exception``, ``Exception``) or a class
    of ``known`` (evallab's own)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                     for b in node.bases}
            if any(n.endswith(("Error", "Exception", "Warning")) or n in known for n in names):
                out.append(node.name)
    return out


def _raw_raises(tree: ast.AST) -> list[int]:
    """Lines of ``raise ValueError(...)`` / ``raise RuntimeError`` (called or bare)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in RAW:
                lines.append(node.lineno)
    return lines


def test_every_exception_class_lives_in_errors_py():
    mods = dict(_modules())
    known = set(_exception_classes(mods["errors.py"], set()))
    assert {"EvallabError", "DataError", "JudgeFatalError", "ImportDataError", "DesignError"} <= known
    elsewhere = sorted((rel, name) for rel, tree in mods.items() if rel != "errors.py"
                       for name in _exception_classes(tree, known) if (rel, name) not in ALLOWED)
    assert elsewhere == [], f"exception classes outside evallab/errors.py: {elsewhere}"


def test_no_raw_value_or_runtime_error_outside_errors_py():
    raw = [(rel, line) for rel, tree in _modules() if rel != "errors.py" for line in _raw_raises(tree)]
    assert raw == [], f"raise ValueError/RuntimeError (use a class of evallab/errors.py): {raw}"


def test_the_checks_see_what_they_look_for():
    """The two walks above find a class and a raise where there is one (so their empty lists mean something)."""
    tree = ast.parse("class A(ValueError):\n    pass\nclass B(A):\n    pass\nclass C:\n    pass\n"
                     "def f():\n    raise ValueError('x')\ndef g():\n    raise RuntimeError\n"
                     "def h():\n    raise KeyError('k')\n")
    assert _exception_classes(tree, {"A"}) == ["A", "B"]
    assert _raw_raises(tree) == [8, 10]


@pytest.mark.parametrize("face, name", [
    ("evallab.judges", "JudgeFatalError"), ("evallab.judges", "RecordingError"), ("evallab.judges", "ReplayMissError"),
    ("evallab.judges", "OutputBusyError"), ("evallab.judges", "LocalServerError"),
    ("evallab.importers", "ImportDataError"), ("evallab.skills", "RubricError"), ("evallab.skills", "EvalSpecError"),
    ("evallab.skills", "ManifestError"), ("evallab.skills", "EvalReportError"), ("evallab.metrics", "DesignError"),
])
def test_each_error_is_caught_from_its_package_face(face, name):
    import importlib

    assert getattr(importlib.import_module(face), name) is getattr(errors, name)


def test_user_input_errors_are_still_value_errors():
    """``except ValueError`` around a loader or an argument check keeps working."""
    for name in ("DataError", "ArgumentError", "ImportDataError", "RecordingError", "DesignError", "RubricError",
                 "EvalSpecError", "ManifestError", "EvalReportError", "ParameterError"):
        assert issubclass(getattr(errors, name), ValueError), name
    assert issubclass(errors.StateError, RuntimeError)
