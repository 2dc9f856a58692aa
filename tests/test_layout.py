"""Issue 25, item 10: the tests mirror the package, and every module is reached by a test.

"Reached" is checked statically, from the test files' text: a test names the module, or one of its public
functions or classes, or — for a command-line module — runs one of the commands it registers. A module no test
reaches fails here with its name.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import evallab

PACKAGE = Path(evallab.__file__).parent
TESTS = Path(__file__).parent
#: what each test folder holds (the package it mirrors)
FOLDERS = {"metrics", "judges", "importers", "datasets", "skills", "reporting", "cli", "notebooks"}


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = ("evallab", *p.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _test_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in TESTS.rglob("*.py") if p.name != "test_layout.py") + "\n".join(
        p.read_text(encoding="utf-8") for p in (TESTS / "data").rglob("*.ipynb"))


def _public_defs(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and not n.name.startswith("_")]


def _commands(path: Path) -> list[str]:
    return re.findall(r'(?:command\(|name=)"([a-z][a-z-]*)"', path.read_text(encoding="utf-8"))


def test_test_files_live_in_the_folder_of_the_package_they_test():
    top = sorted(p.name for p in TESTS.glob("test_*.py"))
    # package-wide checks stay at the top: faces, errors, cycles, doctests, the API page, the docs site (the CLI
    # page, the examples of the README and docs), this layout, and the two top-level modules (the verdict table and
    # the estimate type)
    assert set(top) <= {"test_api_page.py", "test_docs_examples.py", "test_docs_site.py", "test_doctests.py",
                        "test_errors.py", "test_faces.py", "test_import_cycles.py", "test_layout.py",
                        "test_results.py", "test_verdicts.py"}, top
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name not in ("data", "__pycache__")}
    assert folders <= FOLDERS, sorted(folders - FOLDERS)
    names = [p.name for p in TESTS.rglob("test_*.py")]
    assert len(names) == len(set(names)), "test basenames must be unique (tests/ is not a package)"


def test_every_module_is_reached_by_a_test():
    text = _test_text()
    missed = []
    for mod, path in _modules().items():
        if mod in text or any(re.search(rf"\b{re.escape(n)}\b", text) for n in _public_defs(path)):
            continue
        cmds = _commands(path) if mod.startswith("evallab.cli.") else []
        if any(re.search(rf'\[\s*"{re.escape(c)}"', text) for c in cmds):
            continue
        missed.append(mod)
    assert not missed, f"modules no test reaches: {missed}"
