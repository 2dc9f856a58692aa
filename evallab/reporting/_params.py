"""A report run's parameters, checked before any kernel starts, and safe report names.

Each notebook's ``parameters`` cell declares its parameters in the form papermill reads, so that
``papermill --help-notebook`` lists them::

    n_resamples: int = 1000  # bootstrap resamples over items; 0 skips the bootstrap

(``name = value  # type: T  description`` is read the same way). A description may start with a constraint that
:func:`check_parameters` enforces before any kernel starts, ended by ``:``::

    confidence: float = 0.95  # in (0, 1): confidence level of every interval
    n_resamples: int = 1000  # >= 0: bootstrap resamples over items
    live_dir: str = ""  # existing path: the committed live run; empty: data/live/smollm2
    subsets: list[str] = []  # at most 50 items: ...

(``in (a, b)`` / ``in [a, b]`` / half-open, ``inf`` allowed; ``>= a``, ``> a``, ``<= b``, ``< b``; ``existing
path`` — also implied by a name ending in ``_path``, an empty value meaning "the default"; ``at most N items`` —
every list is bounded by :data:`MAX_LIST_ITEMS` otherwise).

:func:`notebook_parameters` reads the cell with papermill's own inspection (its warnings silenced; a line the
inspection cannot parse, such as papermill#864's ``=`` inside a string default, is read from the cell's syntax with
its description, in the cell's order); :func:`check_parameters` refuses an unknown name (naming the closest valid
one), a value of the wrong type (naming the parameter and the expected type), a value outside its declared range, a
path that does not exist and a list longer than its bound — every value quoted cut to a fixed length
(:func:`evallab._fileio.quote`). :func:`check_report_name` refuses a report name that is not a plain file stem, so
nothing is written or deleted outside the output folder.
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
#: the longest list a parameter may hold unless its description says ``at most N items``
MAX_LIST_ITEMS = 1000
_NUM = r"[-+]?(?:inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?|\.\d+)"
_CONSTRAINT = re.compile(
    rf"^\s*(?:in\s*(?P<lo_b>[\[(])\s*(?P<lo>{_NUM})\s*,\s*(?P<hi>{_NUM})\s*(?P<hi_b>[\])])"
    rf"|(?P<op>>=|<=|>|<)\s*(?P<bound>{_NUM})"
    r"|(?P<exists>existing path)"
    r"|at most (?P<most>\d[\d,]*) items)\s*:\s*", re.I)


@dataclass(frozen=True)
class Parameter:
    """One declared notebook parameter."""

    name: str
    type: str  # the declared type ("str", "int", "float", "bool", "list[str]", ...) or "" when undeclared
    default: str  # the default's source text
    help: str

    @property
    def constraint(self) -> dict:
        """The constraint the description starts with (see the module docstring): ``{"range": (lo, lo_open, hi,
        hi_open)}``, ``{"exists": True}``, ``{"most": N}`` or ``{}``."""
        m = _CONSTRAINT.match(self.help or "")
        if not m:
            return {}
        if m["lo_b"]:
            return {"range": (float(m["lo"]), m["lo_b"] == "(", float(m["hi"]), m["hi_b"] == ")")}
        if m["op"]:
            b = float(m["bound"])
            inf = float("inf")
            return {"range": {">=": (b, False, inf, True), ">": (b, True, inf, True), "<=": (-inf, True, b, False),
                              "<": (-inf, True, b, True)}[m["op"]]}
        if m["exists"]:
            return {"exists": True}
        return {"most": int(m["most"].replace(",", ""))}

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
    import logging

    log = logging.getLogger("papermill")
    quiet = log.level < logging.ERROR
    old_level = log.level
    if quiet:
        log.setLevel(logging.ERROR)  # "Unable to parse line ..." (papermill#864): the syntax below reads the line
    try:
        inspected = {p.name: Parameter(p.name, "" if p.inferred_type_name == "None" else p.inferred_type_name,
                                       p.default, p.help)
                     for p in PythonTranslator.inspect(nbformat.v4.new_code_cell(src))}
    finally:
        if quiet:
            log.setLevel(old_level)
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return inspected
    lines = src.splitlines()
    found: dict[str, Parameter] = {}
    for node in tree.body:  # the cell's order; what papermill could not read, read from the syntax
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if not isinstance(target, ast.Name):
            continue
        if target.id in inspected:
            found[target.id] = inspected[target.id]
            continue
        value = getattr(node, "value", None)
        ann = ast.unparse(node.annotation) if isinstance(node, ast.AnnAssign) else ""
        help_ = _comment(lines, node)
        m = re.match(r"type:\s*(\S+)\s*(.*)", help_)
        if m and not ann:  # ``name = value  # type: T  description``
            ann, help_ = m.group(1), m.group(2)
        default = (ast.get_source_segment(src, value) or ast.unparse(value)) if value is not None else ""
        found[target.id] = Parameter(target.id, ann, default, help_.strip())
    for name, p in inspected.items():
        found.setdefault(name, p)
    return found


def _comment(lines: list[str], node) -> str:
    """The ``# comment`` at the end of a statement's last line (tokenised, so a ``#`` inside a string is not one)."""
    import io
    import tokenize

    text = "\n".join(lines[node.lineno - 1: node.end_lineno])
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                return tok.string.lstrip("#").strip()
    except (tokenize.TokenError, SyntaxError):
        return ""
    return ""


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

    try:  # libyaml's safe loader when built (a 12,000-item list in 0.05 s instead of 0.9 s)
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return text


def _exists(path: str, notebook: str | Path) -> bool:
    """A ``*_path`` value names something that exists, from the working folder or the notebook's folder (where
    the kernel runs)."""
    p = Path(path).expanduser()
    return p.exists() or (not p.is_absolute() and (Path(notebook).parent / p).exists())


def _in_range(value: float, rng: tuple) -> bool:
    lo, lo_open, hi, hi_open = rng
    return (value > lo if lo_open else value >= lo) and (value < hi if hi_open else value <= hi)


def _range_text(rng: tuple) -> str:
    lo, lo_open, hi, hi_open = rng

    def num(x: float) -> str:
        return "inf" if x == float("inf") else "-inf" if x == -float("inf") else f"{x:g}"

    if lo == -float("inf"):
        return f"{'<' if hi_open else '<='} {num(hi)}"
    if hi == float("inf"):
        return f"{'>' if lo_open else '>='} {num(lo)}"
    return f"in {'(' if lo_open else '['}{num(lo)}, {num(hi)}{')' if hi_open else ']'}"


def check_parameters(notebook: str | Path, parameters: Mapping, *, where: str = "",
                     declared: Mapping[str, Parameter] | None = None) -> dict:
    """Check a run's parameters against the notebook's ``parameters`` cell before execution.

    Raises :class:`ParameterError` for an unknown name (with the closest declared name), a value whose type
    does not match the declared one (naming the parameter and the expected type), a list longer than its bound
    (:data:`MAX_LIST_ITEMS` or the description's ``at most N items``), a number outside the range its description
    declares (``in (0, 1):``), and a ``*_path`` parameter (``verdicts_path`` …) or one declared ``existing path:``
    naming a file or folder that does not exist. ``report_name`` and
    ``reports_dir`` are the runner's; passing them is refused too. ``declared`` (from :func:`notebook_parameters`)
    spares reading the notebook again when many runs of one notebook are checked. Returns the parameters
    unchanged.
    """
    from evallab._fileio import quote

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
        p = declared[name]
        expected = expected_type(p)
        rule = p.constraint
        most = rule.get("most", MAX_LIST_ITEMS)
        if isinstance(value, (list, tuple)) and len(value) > most:  # before anything looks at the items
            problems.append(f"parameter {name!r} of {nb_name} holds {len(value):,} items; expected at most "
                            f"{most:,}")
        elif not _fits(value, expected):
            problems.append(f"parameter {name!r} of {nb_name} expects {expected}, got {type(value).__name__} "
                            f"{quote(value)}")
        elif "range" in rule and isinstance(value, (int, float)) and not isinstance(value, bool) \
                and not _in_range(value, rule["range"]):
            problems.append(f"parameter {name!r} of {nb_name} is {value!r}; expected a value "
                            f"{_range_text(rule['range'])}")
        elif (name.endswith("_path") or rule.get("exists")) and isinstance(value, str) and value \
                and not _exists(value, notebook):
            problems.append(f"parameter {name!r} of {nb_name}: no such file or folder {quote(value, 4096)}")
    if problems:
        raise ParameterError(prefix + "; ".join(problems))
    return dict(parameters)
