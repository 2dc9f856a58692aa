"""The docstring examples of evallab run as doctests (issue 25, item 11), and the modules whose public face is
documented scikit-learn style keep an ``Examples`` section on every public function and class."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import os
import pkgutil
import re

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

import evallab  # noqa: E402

#: modules whose every public function and class (module level, no leading underscore, defined there) must carry
#: an ``Examples`` section; extend as more modules get examples
COVERED = [
    "evallab._results",
    "evallab.verdicts",
    "evallab.metrics._agreement",
    "evallab.metrics._alt_test",
    "evallab.metrics._contextual",
    "evallab.metrics._corrected",
    "evallab.metrics._design",
    "evallab.metrics._drift",
    "evallab.metrics._evaluators",
    "evallab.metrics._inflation",
    "evallab.metrics._intervals",
    "evallab.metrics._position",
    "evallab.metrics._power",
    "evallab.metrics._selective",
]

#: packages of optional extras: a module that fails to import because one of these is missing is skipped
OPTIONAL = {"openai", "anthropic", "papermill", "nbformat", "nbconvert", "matplotlib", "ipykernel", "jupyter",
            "datasets", "huggingface_hub", "tiktoken", "httpx", "scikit-learn", "sklearn"}

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module_names() -> list[str]:
    names = [evallab.__name__]
    for info in pkgutil.walk_packages(evallab.__path__, prefix="evallab."):
        names.append(info.name)
    return sorted(names)


def _import(name: str):
    """The module, or a pytest skip when an optional extra it needs is missing (any other error fails)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top in OPTIONAL:
            pytest.skip(f"{name} needs the optional package {top!r}, which is not installed")
        raise


def _has_examples(name: str) -> bool:
    """Whether the module's source holds a doctest prompt (cheap: no import)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return False
    with open(spec.origin, encoding="utf-8") as fh:
        return ">>> " in fh.read()


MODULES_WITH_EXAMPLES = [n for n in _module_names() if _has_examples(n)]


def test_some_modules_have_examples():
    assert set(COVERED) <= set(MODULES_WITH_EXAMPLES), sorted(set(COVERED) - set(MODULES_WITH_EXAMPLES))


@pytest.mark.parametrize("name", MODULES_WITH_EXAMPLES)
def test_doctests(name):
    module = _import(name)
    tests = [t for t in doctest.DocTestFinder(exclude_empty=True).find(module, name) if t.examples]
    assert tests, f"{name} has '>>> ' in its source but no doctest was found"
    out = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for t in tests:
        runner.run(t, out=out.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}:\n" + "".join(out)


def _public(module) -> list[str]:
    """Functions and classes defined in ``module`` whose names have no leading underscore."""
    return sorted(n for n, obj in vars(module).items()
                  if not n.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
                  and getattr(obj, "__module__", None) == module.__name__)


EXAMPLES = re.compile(r"^\s*Examples\n\s*-{8,}\n(?:.*\n)*?\s*>>> ", re.MULTILINE)


@pytest.mark.parametrize("name", COVERED)
def test_public_names_have_examples(name):
    module = importlib.import_module(name)
    missing = [n for n in _public(module) if not EXAMPLES.search(inspect.getdoc(getattr(module, n)) or "")]
    assert not missing, f"{name}: no 'Examples' section with a doctest in {missing}"
