"""The public faces of ``evallab.judges``, ``evallab.datasets``, ``evallab.importers``, ``evallab.experiments`` and
``evallab.skills`` (issue 25 item 1): the modules behind each face are private, every name of ``__all__`` resolves,
``dir()`` is ``__all__``, and importing a face imports none of its modules.

The rule is scikit-learn's: a face is for users, so what users read and run — the notebooks, the README and the
user docs, and the benchmarks (which time what a user calls) — imports only through faces, while library code
inside evallab may import another evallab package's private modules (as ``sklearn/linear_model/_logistic.py``
does ``from ..utils._param_validation import ...``); tests of internals import the private modules they test."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FACES = ("judges", "datasets", "importers", "experiments", "skills")
#: benchmarks that time private functions themselves (as a test of internals would test them)
TIMES_INTERNALS = {"benchmarks/bench_triggers.py": "the tokenizer's inner functions, the probes and the stripper",
                   "benchmarks/bench_manifests.py": "the manifest parser's header and item regexes",
                   "benchmarks/bench_local.py": "the server options and the structured-verdict body fields",
                   "benchmarks/llama_builds.py": "the live position study's items and requests",
                   "benchmarks/bench_judges.py": "the reply cache",
                   "benchmarks/bench_import.py": "the mapped-table importer"}


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


def _user_sources():
    """(path, source) of what users read and run: benchmarks, notebooks (code cells), and the Python blocks of the
    README and the user docs (``docs/api.md`` is generated from the faces)."""
    for p in sorted((ROOT / "benchmarks").rglob("*.py")):
        yield p, p.read_text(encoding="utf-8")
    for p in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(p.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        yield p, "\n".join(ln for ln in code.splitlines() if not ln.lstrip().startswith(("%", "!")))
    for p in [ROOT / "README.md", *sorted(q for q in (ROOT / "docs").rglob("*.md") if q.name != "api.md")]:
        blocks = re.findall(r"^[ \t]*```python\n(.*?)^[ \t]*```", p.read_text(encoding="utf-8"), re.S | re.M)
        yield p, "\n".join(textwrap.dedent(b) for b in blocks)


def _private_imports(path: Path, source: str) -> list[str]:
    """The private modules of a face that ``source`` imports (from outside the face's own package)."""
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


def test_users_import_only_through_the_faces():
    """Notebooks, the README, the user docs and the benchmarks (bar the allowlist) import no private module."""
    sources = list(_user_sources())
    assert {p.name for p, _ in sources} >= {"README.md", "01_judge_agreement.ipynb", "coverage.py"}
    bad = {rel: found for p, src in sources if (found := _private_imports(p, src))
           and (rel := p.relative_to(ROOT).as_posix()) not in TIMES_INTERNALS}
    assert bad == {}


def test_library_code_may_import_private_modules_of_other_packages():
    """The rule for the library is scikit-learn's: a report section imports the skills internals it builds on."""
    src = (ROOT / "evallab" / "reporting" / "sections" / "gaming.py").read_text(encoding="utf-8")
    assert _private_imports(ROOT / "evallab" / "reporting" / "sections" / "gaming.py", src)


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
