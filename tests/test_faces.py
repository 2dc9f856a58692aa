"""The public faces of ``evallab.judges``, ``evallab.datasets``, ``evallab.importers``, ``evallab.experiments`` and
``evallab.skills`` (issue 25 item 1): the modules behind each face are private, every name of ``__all__`` resolves,
``dir()`` is ``__all__``, importing a face imports none of its modules, and nothing outside a package — the rest of
the library, the benchmarks, the notebooks — imports one of its private modules (tests of internals may)."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FACES = ("judges", "datasets", "importers", "experiments", "skills")
#: benchmarks that time private functions themselves (as a test of internals would test them)
TIMES_INTERNALS = {"benchmarks/bench_triggers.py": "the tokenizer's inner functions",
                   "benchmarks/bench_manifests.py": "the manifest parser's header and item regexes"}


def _fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=ROOT).stdout.strip()


@pytest.mark.parametrize("face", FACES)
def test_the_modules_behind_a_face_are_private(face):
    modules = sorted(p.name for p in (ROOT / "evallab" / face).glob("*.py") if p.name != "__init__.py")
    assert modules and all(name.startswith("_") for name in modules), modules


@pytest.mark.parametrize("face", FACES)
def test_every_public_name_resolves_from_a_private_module(face):
    mod = importlib.import_module(f"evallab.{face}")
    assert mod.__all__ == sorted(set(mod.__all__))
    assert dir(mod) == mod.__all__
    for name in mod.__all__:
        obj = getattr(mod, name)
        home = getattr(obj, "__module__", None)
        if callable(obj) and home is not None:
            assert home.startswith(f"evallab.{face}._") or home == "evallab.errors", (name, home)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        mod.no_such_name  # noqa: B018


def test_importing_the_faces_imports_none_of_their_modules():
    """Names load on first use: ``import evallab.judges`` (and the command line) stays light."""
    code = ("import sys\nimport evallab.judges, evallab.datasets, evallab.importers, evallab.experiments\n"
            "print(sorted(m for m in sys.modules if m.split('.')[1:2] in (['judges'], ['datasets'], ['importers'],"
            " ['experiments']) and m.count('.') > 1), 'pandas' in sys.modules, 'httpx' in sys.modules)")
    assert _fresh(code) == "[] False False"


def _sources():
    """(path, source) of every library module, benchmark and notebook (code cells)."""
    for p in sorted([*(ROOT / "evallab").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]):
        yield p, p.read_text(encoding="utf-8")
    for p in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(p.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        yield p, "\n".join(ln for ln in code.splitlines() if not ln.lstrip().startswith(("%", "!")))


def _private_imports(path: Path, source: str) -> list[str]:
    """The private modules of a face that ``source`` imports from outside the face's package."""
    rel = path.relative_to(ROOT).as_posix()
    out = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_"))]
        for name in names:
            parts = name.split(".")
            if (len(parts) >= 3 and parts[0] == "evallab" and parts[1] in FACES and parts[2].startswith("_")
                    and not rel.startswith(f"evallab/{parts[1]}/")):
                out.append(name)
    return out


def test_nothing_outside_a_package_imports_its_private_modules():
    bad = {rel: found for p, src in _sources() if (found := _private_imports(p, src))
           and (rel := p.relative_to(ROOT).as_posix()) not in TIMES_INTERNALS}
    assert bad == {}


def test_the_private_import_check_sees_one():
    here = ROOT / "evallab" / "reporting" / "x.py"
    assert _private_imports(here, "from evallab.judges._client import redact\nfrom evallab.judges import run_jobs\n"
                                  "from evallab.judges import _cache\n") == [
        "evallab.judges._client", "evallab.judges._cache"]
    assert _private_imports(ROOT / "evallab" / "judges" / "_x.py", "from evallab.judges._client import a\n") == []


def test_a_lazy_face_loads_a_name_on_first_use_renames_and_refuses_unknown_names():
    import sys
    import types

    from evallab._face import lazy_face

    pkg = types.ModuleType("evallab._probe_face")
    sys.modules[pkg.__name__] = pkg
    try:
        get, names = lazy_face(pkg.__name__, {"wilson_interval": ("evallab.metrics._intervals", "wilson"),
                                              "errors": ("evallab.errors", None)})
        from evallab.metrics._intervals import wilson

        assert get("wilson_interval") is wilson and pkg.wilson_interval is wilson  # stored after the first use
        assert get("errors") is sys.modules["evallab.errors"]
        assert names() == ["errors", "wilson_interval"]
        with pytest.raises(AttributeError, match="no attribute 'nope'"):
            get("nope")
    finally:
        del sys.modules[pkg.__name__]
