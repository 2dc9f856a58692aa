"""The batch file: ``reports.yaml`` read and checked into one :class:`ReportSpec` per run (a grid entry expanded
into its combinations), and the runs an ``--only`` list names. The public names are re-exported by
:mod:`evallab.reporting._batch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evallab.errors import DataError, EvallabError
from evallab.paths import _bundle
from evallab.reporting._params import ParameterError, check_parameters, check_report_name


@dataclass
class ReportSpec:
    """One run of the batch: an entry of ``reports.yaml``, or one combination of a grid entry."""

    name: str
    notebook: Path
    parameters: dict = field(default_factory=dict)
    title: str = ""
    group: str = ""  # the grid entry this run belongs to ("" for a plain entry)
    varying: dict = field(default_factory=dict)  # the grid's values of this run
    compare: dict = field(default_factory=dict)  # the grid entry's ``compare:`` (the headline metric to plot)
    reads: list = field(default_factory=list)  # data files/folders the run reads (absolute paths)


def load_config(path: str | Path) -> list[ReportSpec]:
    """Read and check ``reports.yaml``: one :class:`ReportSpec` per run, a grid entry expanded into one run per
    combination (named ``<entry>-<slug of its values>``, :func:`evallab.reporting._grid.expand`).

    Every entry's parameters (each grid combination's too) are checked against the notebook before anything runs
    (:func:`evallab.reporting._params.check_parameters`: names, types, declared ranges, paths that must exist,
    list bounds), so a bad one stops the batch before a kernel starts or a file is written. ``reads`` (paths
    relative to the file's folder) and a grid's ``compare`` are kept on the specs. A relative ``*_path`` parameter
    is read from the notebook's folder, else from the file's folder (made absolute then).

    Raises
    ------
    DataError
        Missing file, invalid YAML (aliases expanding past a small bound refused), a missing ``reports`` list, an entry without ``name``/``notebook``, a
        duplicated name (also among grid runs), a notebook that does not exist, ``parameters`` that are not a
        mapping, ``reads`` that is not a list of strings, ``compare`` without ``grid``, or a grid that does not fit
        the notebook (:func:`evallab.reporting._grid.check_grid`, naming the combination).
    """
    from evallab import _fileio as F
    from evallab.reporting._grid import check_grid

    path = Path(path)
    # the safe loader that refuses duplicated keys and aliases expanding past a small bound ("billion laughs")
    doc = F.load_yaml(path, "a reports.yaml listing the batch", DataError,
                      missing="no such file; expected a reports.yaml listing the batch (`evallab init DIR` starts a "
                              "study folder with one)")
    if not isinstance(doc, dict) or not isinstance(doc.get("reports"), list):
        raise DataError("expected a mapping with a 'reports' list", path=str(path), column="reports")
    specs, seen = [], set()
    for i, e in enumerate(doc["reports"], start=1):
        if not isinstance(e, dict):
            raise DataError(f"entry {i} is a {type(e).__name__}; expected a mapping", path=str(path), row=i)
        for k in ("name", "notebook"):
            if not isinstance(e.get(k), str) or not e[k]:
                raise DataError(f"entry {i} has no '{k}' string", path=str(path), row=i, column=k)
        if e["name"] in seen:
            raise DataError(f"duplicated report name {e['name']!r}", path=str(path), row=i, column="name")
        seen.add(e["name"])
        try:
            check_report_name(e["name"])
        except ParameterError as exc:
            raise DataError(str(exc), path=str(path), row=i, column="name") from None
        nb = Path(e["notebook"])
        nb = nb if nb.is_absolute() else (path.parent / nb)
        if not nb.exists():
            raise DataError(f"notebook {e['notebook']!r} does not exist", path=str(path), row=i, column="notebook")
        params = e.get("parameters") or {}
        if not isinstance(params, dict):
            raise DataError("'parameters' must be a mapping of literals", path=str(path), row=i,
                            column="parameters")
        params = {k: _from_file(v, path, nb) if k.endswith("_path") else v for k, v in params.items()}
        reads = e.get("reads") or []
        if not isinstance(reads, list) or not all(isinstance(r, str) and r for r in reads):
            raise DataError("'reads' must be a list of file or folder paths (relative to this file's folder)",
                            path=str(path), row=i, column="reads")
        reads = [str(Path(r) if Path(r).is_absolute() else (path.parent / r).resolve()) for r in reads]
        title = str(e.get("title", ""))
        if "grid" not in e:
            if "compare" in e:
                raise DataError("'compare' chooses the metric plotted across a grid; this entry has no 'grid'",
                                path=str(path), row=i, column="compare")
            try:  # before anything runs: a bad value (type, range, missing path, list bound) stops the batch
                check_parameters(nb, params)
            except ParameterError as exc:
                raise DataError(f"entry {e['name']!r}: {exc}", path=str(path), row=i, column="parameters") from None
            specs.append(ReportSpec(e["name"], nb.resolve(), params, title, reads=reads))
            continue
        try:
            runs = check_grid(e["name"], nb, e["grid"], params, e.get("compare"))
        except ParameterError as exc:
            raise DataError(f"entry {e['name']!r}: {exc}", path=str(path), row=i, column="grid") from None
        for run, run_params, varying in runs:
            if run in seen:
                raise DataError(f"grid run {run!r} has the name of another report", path=str(path), row=i,
                                column="grid")
            seen.add(run)
            specs.append(ReportSpec(run, nb.resolve(), run_params, title, group=e["name"], varying=varying,
                                    compare=dict(e.get("compare") or {}), reads=reads))
    return specs


def _from_file(value, path: Path, notebook: Path):
    """A relative ``*_path`` parameter that names nothing from the notebook's folder (where the kernel runs) but
    names something from the batch file's folder (``verdicts_path: data/verdicts.csv`` in a study folder): made
    absolute. Anything else unchanged."""
    if not isinstance(value, str) or not value or Path(value).is_absolute() or (notebook.parent / value).exists():
        return value
    here = path.parent / value
    return str(here.resolve()) if here.exists() else value


def select_runs(specs: Sequence[ReportSpec], only: Sequence[str] | None, *, config: str | Path = "") -> list:
    """The runs named in ``only`` — a report's name, or a grid entry's name for all its runs — in batch order
    (all of them when ``only`` is empty). Raises :class:`evallab.errors.EvallabError` for an unknown name."""
    if not only:
        return list(specs)
    known = list(dict.fromkeys([s.group for s in specs if s.group] + [s.name for s in specs]))
    unknown = sorted(set(only) - set(known))
    if unknown:
        raise EvallabError(f"{config or 'the batch'}: unknown report name(s) {unknown}; known: {known}")
    return [s for s in specs if s.name in only or (s.group and s.group in only)]


DEFAULT_CONFIG = _bundle("reports.yaml")
