"""Parameter grids in ``reports.yaml``: one entry, one run per combination of parameter values.

An entry may give ``grid:`` — a list of values per parameter — beside ``parameters:`` (the values every run
shares)::

    - name: trigger_sweep
      notebook: notebooks/04_trigger_thresholds.ipynb
      parameters: {n_resamples: 50}
      grid:
        scorer: [keryx, tfidf, bm25]
        strip_exclusions: [true, false]
      compare: {metric: loo_trigger_accuracy, label: Leave-one-out trigger accuracy, unit: "%"}

:func:`expand` makes the cartesian product (the first parameter varies slowest, as in :func:`itertools.product`)
and names each run by the entry's name and a slug of its varying values (``trigger_sweep-keryx-true``, ...).
:func:`check_grid` checks the grid's shape and every combination's parameters against the notebook's
``parameters`` cell (:func:`evallab.reporting._params.check_parameters`) before anything runs. ``compare:`` chooses
the headline metric the index plots across the grid (:mod:`evallab.reporting._compare`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Mapping
from pathlib import Path

from evallab.reporting._params import ParameterError, check_parameters, check_report_name, notebook_parameters

#: the longest report name :func:`evallab.reporting._params.check_report_name` accepts
MAX_NAME = 128
#: the keys ``compare:`` takes
COMPARE_KEYS = {"metric": str, "label": str, "unit": str, "low": str, "high": str, "level": float,
                "units": dict}


def value_slug(value) -> str:
    """A parameter value as a file-name slug: letters, digits, ``.`` and ``_`` (``True`` → ``true``, ``0.5`` →
    ``0.5``, ``["LLMBar/Natural"]`` → ``LLMBar_Natural``, ``[]`` → ``none``, ``""`` → ``empty``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return "_".join(value_slug(v) for v in value) if value else "none"
    if isinstance(value, Mapping):
        return "_".join(f"{value_slug(k)}_{value_slug(v)}" for k, v in value.items()) if value else "none"
    text = str(value)
    if text == "":
        return "empty"
    s = re.sub(r"[^A-Za-z0-9.]+", "_", text)
    s = re.sub(r"\.{2,}", ".", s).strip("._")
    return s or "x"


def run_name(entry: str, varying: Mapping) -> str:
    """``<entry>-<slug of value 1>-<slug of value 2>...``; cut to 128 characters with an 8-digit hash of the values
    when longer."""
    name = "-".join([entry, *(value_slug(v) for v in varying.values())])
    if len(name) > MAX_NAME:
        digest = hashlib.sha1(json.dumps(list(varying.items()), sort_keys=False, default=str).encode()).hexdigest()
        name = name[: MAX_NAME - 9].rstrip("-._") + "-" + digest[:8]
    return name


def expand(entry: str, grid: Mapping[str, list], parameters: Mapping | None = None) -> list[tuple[str, dict, dict]]:
    """Every combination of ``grid``: ``(run name, parameters, varying values)`` per run, in product order.

    ``parameters`` are the values every run shares; ``varying`` holds only the grid's values of that run. Two
    combinations whose slugs coincide get ``-2``, ``-3``, ... appended in order, so each run keeps its own files.
    """
    keys = list(grid)
    runs, seen = [], {}
    for combo in itertools.product(*(grid[k] for k in keys)):
        varying = dict(zip(keys, combo, strict=True))
        name = run_name(entry, varying)
        if name in seen:
            seen[name] += 1
            name = f"{name[: MAX_NAME - 4]}-{seen[name]}"
        seen.setdefault(name, 1)
        runs.append((name, {**(parameters or {}), **varying}, varying))
    return runs


def _where(varying: Mapping) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in varying.items())


def check_grid(entry: str, notebook: str | Path, grid, parameters: Mapping | None = None,
               compare=None) -> list[tuple[str, dict, dict]]:
    """Check a grid entry and expand it (see :func:`expand`).

    Raises
    ------
    ParameterError
        ``grid`` is not a mapping of non-empty lists; a grid parameter is also in ``parameters``; ``compare`` is
        not a mapping of the keys ``metric, label, unit, low, high, level, units``; a run name is not a slug; or a
        combination's parameters do not fit the notebook (an unknown name with the closest declared one, a value of
        the wrong type), named with that combination's values.
    """
    if not isinstance(grid, Mapping) or not grid:
        raise ParameterError("'grid' must be a mapping of parameter name → list of values, e.g. "
                             "{scorer: [keryx, bm25]}")
    for k, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ParameterError(f"grid parameter {k!r} must be a non-empty list of values, got "
                                 f"{type(values).__name__} {values!r}")
        if len(values) != len({json.dumps(v, sort_keys=True, default=str) for v in values}):
            raise ParameterError(f"grid parameter {k!r} repeats a value: {values!r}")
    both = sorted(set(grid) & set(parameters or {}))
    if both:
        raise ParameterError(f"{', '.join(map(repr, both))} given both in 'parameters' and in 'grid'; give each "
                             "parameter once")
    if compare is not None:
        if not isinstance(compare, Mapping):
            raise ParameterError("'compare' must be a mapping such as {metric: loo_trigger_accuracy, unit: '%'}")
        for k, v in compare.items():
            kind = COMPARE_KEYS.get(k)
            if kind is None:
                raise ParameterError(f"unknown 'compare' key {k!r}; expected {', '.join(COMPARE_KEYS)}")
            if not isinstance(v, (int, float) if kind is float else kind) or isinstance(v, bool):
                raise ParameterError(f"'compare' key {k!r} expects {kind.__name__}, got {type(v).__name__} {v!r}")
        level = compare.get("level")
        if level is not None and not 0 < float(level) < 1:
            raise ParameterError(f"'compare' level must lie in (0, 1), got {level!r}")
    runs = expand(entry, grid, parameters)
    declared = notebook_parameters(notebook)
    problems = []
    for name, params, varying in runs:
        try:
            check_report_name(name)
            check_parameters(notebook, params, declared=declared)
        except ParameterError as exc:
            problems.append(f"combination {_where(varying)}: {exc}")
    if problems:
        more = f" (and {len(problems) - 3} more combinations)" if len(problems) > 3 else ""
        raise ParameterError("; ".join(problems[:3]) + more)
    return runs
