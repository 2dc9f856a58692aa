"""A report run's parameters, checked before any kernel starts, and safe report names.

Each notebook's ``parameters`` cell declares its parameters in the form papermill reads, so that
``papermill --help-notebook`` lists them::

    n_resamples: int = 1000  # bootstrap resamples over items; 0 skips the bootstrap

(``name = value  # type: T  description`` is read the same way). :func:`notebook_parameters` reads the cell with
papermill's own inspection; :func:`check_parameters` refuses an unknown name (naming the closest valid one) and a
value of the wrong type (naming the parameter and the expected type). :func:`check_report_name` refuses a report
name that is not a plain file stem, so nothing is written or deleted outside the output folder.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evallab.errors import ParameterError

#: parameters the runner itself injects into every report notebook
RUNNER_PARAMETERS = ("report_name", "reports_dir")

_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


@dataclass(frozen=True)
class Parameter:
    """One declared notebook parameter."""

    name: str
    type: str  # the declared type ("str", "int", "float", "bool", "list[str]", ...) or "" when undeclared
    default: str  # the default's source text
    help: str

    def __str__(self) -> str:
        """``name: type = default  # help`` (the type expected, :func:`expected_type`; ``?`` when unknown)."""
        return f"{self.name}: {expected_type(self) or '?'} = {self.default}" + (f"  # {self.help}" if self.help else "")


def check_report_name(name: str) -> str:
    """Return ``name`` when it is a slug (letters, digits, ``_``, ``-``, ``.``; no path separator, no ``..``, not
    absolute, at most 128 characters); raise :class:`ParameterError` otherwise."""
    if not isinstance(name, str) or not _SLUG.match(name) or ".." in name:
        raise ParameterError(
            f"report name {name!r} is not allowed: use letters, digits, '_', '-' or '.', starting with a letter or "
            "digit (no '/', '\\', '..' or absolute path), so every file stays inside the output folder")
    return name


def _parameters_cell(nb) -> str | None:
    for c in nb.cells:
        if c.cell_type == "code" and "parameters" in c.metadata.get("tags", []):
            return c.source
    return None


def notebook_parameters(notebook: str | Path) -> dict[str, Parameter]:
    """The parameters a notebook declares, read from its ``parameters`` cell with papermill's inspection (names the
    inspection cannot read, e.g. a description containing ``=``, are still found through the cell's syntax).

    Parameters
    ----------
    notebook : str or Path
        The ``.ipynb`` file.

    Returns
    -------
    dict of str to Parameter
        In the cell's order; empty when the notebook has no ``parameters`` cell.

    Raises
    ------
    ParameterError
        The notebook does not exist.
    """
    import nbformat
    from papermill.translators import PythonTranslator

    if not Path(notebook).exists():
        raise ParameterError(f"{notebook}: no such notebook")

    nb = nbformat.read(str(notebook), as_version=4)
    src = _parameters_cell(nb)
    if src is None:
        return {}
    found = {p.name: Parameter(p.name, "" if p.inferred_type_name == "None" else p.inferred_type_name,
                               p.default, p.help)
             for p in PythonTranslator.inspect(nbformat.v4.new_code_cell(src))}
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return found
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id not in found:
            value = getattr(node, "value", None)
            ann = ast.unparse(node.annotation) if isinstance(node, ast.AnnAssign) else ""
            found[target.id] = Parameter(target.id, ann, ast.unparse(value) if value is not None else "", "")
    return found


def _default_value(p: Parameter):
    try:
        return ast.literal_eval(p.default)
    except (ValueError, SyntaxError):
        return None


def expected_type(p: Parameter) -> str:
    """The declared type, or the type of the default when none is declared."""
    if p.type:
        return p.type.replace(" ", "")
    d = _default_value(p)
    return type(d).__name__ if d is not None else ""


_SCALARS = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,), "dict": (dict,)}


def _fits(value, expected: str) -> bool:
    if not expected or expected in ("Any", "object"):
        return True
    if expected in ("NoneType", "None"):
        return value is None
    m = re.fullmatch(r"(list|tuple)(?:\[(\w+)\])?", expected)
    if m:
        if not isinstance(value, (list, tuple)):
            return False
        return m.group(2) is None or all(_fits(v, m.group(2)) for v in value)
    kinds = _SCALARS.get(expected)
    if kinds is None:
        return True  # a type the checker does not know: accept
    if isinstance(value, bool) and bool not in kinds:
        return False  # True is an int to Python, not to a reader
    return isinstance(value, kinds)


def parse_value(text: str, expected: str = ""):
    """A command-line value for a parameter: kept as text for a ``str`` parameter, otherwise read as a Python or
    YAML literal (``3``, ``0.5``, ``true``, ``[a, b]``), falling back to the text."""
    if expected == "str":
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _exists(path: str, notebook: str | Path) -> bool:
    """A ``*_path`` value names something that exists, from the working folder or the notebook's folder (where
    the kernel runs)."""
    p = Path(path).expanduser()
    return p.exists() or (not p.is_absolute() and (Path(notebook).parent / p).exists())


def check_parameters(notebook: str | Path, parameters: Mapping, *, where: str = "",
                     declared: Mapping[str, Parameter] | None = None) -> dict:
    """Check a run's parameters against the notebook's ``parameters`` cell before execution.

    Raises :class:`ParameterError` for an unknown name (with the closest declared name) or a value whose type
    does not match the declared one (naming the parameter and the expected type), and a ``*_path`` parameter
    (``verdicts_path`` …) naming a file or folder that does not exist. ``report_name`` and
    ``reports_dir`` are the runner's; passing them is refused too. ``declared`` (from :func:`notebook_parameters`)
    spares reading the notebook again when many runs of one notebook are checked. Returns the parameters
    unchanged.
    """
    declared = notebook_parameters(notebook) if declared is None else declared
    prefix = f"{where}: " if where else ""
    nb_name = Path(notebook).name
    problems = []
    for name, value in parameters.items():
        if name in RUNNER_PARAMETERS:
            problems.append(f"parameter {name!r} is set by the runner; do not pass it")
            continue
        if name not in declared:
            close = difflib.get_close_matches(name, [n for n in declared if n not in RUNNER_PARAMETERS], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            known = ", ".join(n for n in declared if n not in RUNNER_PARAMETERS)
            problems.append(f"unknown parameter {name!r} for {nb_name}{hint} (parameters: {known})")
            continue
        expected = expected_type(declared[name])
        if not _fits(value, expected):
            problems.append(f"parameter {name!r} of {nb_name} expects {expected}, got {type(value).__name__} "
                            f"{value!r}")
        elif name.endswith("_path") and isinstance(value, str) and value and not _exists(value, notebook):
            problems.append(f"parameter {name!r} of {nb_name}: no such file or folder {value!r}")
    if problems:
        raise ParameterError(prefix + "; ".join(problems))
    return dict(parameters)
