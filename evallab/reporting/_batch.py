"""The papermill batch: notebooks → executed notebooks → HTML reports → ``index.html``.

``reports.yaml`` lists the batch::

    reports:
      - name: 01_judge_agreement            # report name: reports/<name>.html, <name>.metrics.json
        notebook: notebooks/01_judge_agreement.ipynb
        parameters: {n_resamples: 1000}     # papermill parameters (literals)
        reads: [data/llmbar/verdicts.csv]   # data files the report reads (shipped with --ship-data)
      - name: trigger_sweep                 # a grid: one run per combination (evallab.reporting._grid)
        notebook: notebooks/04_trigger_thresholds.ipynb
        grid: {scorer: [keryx, bm25], strip_exclusions: [true, false]}
        compare: {metric: loo_trigger_accuracy, unit: "%"}   # the headline metric the index plots across the grid

:func:`run_report_batch` runs every run through papermill (in parallel, one kernel per worker process — or,
with ``scheduler=``/``local_cluster=``, as tasks on Dask distributed, see :mod:`evallab.reporting._cluster`), exports
HTML without input cells (nbconvert), and writes ``index.html`` with each report's headline numbers (read from the
``<name>.metrics.json`` the notebook wrote through :func:`save_metrics`) and a link; a grid entry is shown as a
comparison (:mod:`evallab.reporting._compare`). A failing notebook is reported with its cell and error while the
others finish.

This module is the batch's public face; the parts live in private modules, one concept each, imported by this
module, by the Dask runner (:mod:`evallab.reporting._cluster`) and by the comparison (:mod:`evallab.reporting._compare`)
without importing one another in a circle:

- ``_batch_config`` — :class:`ReportSpec`, :func:`load_config`, :func:`select_runs`;
- ``_batch_run`` — :class:`ReportResult`, :func:`run_one` (one notebook: papermill, export, metrics read back);
- ``_batch_export`` — :func:`export_html`, :func:`run_notes`, :func:`tidy_paths`;
- ``_batch_index`` — :func:`write_index` (``index.html`` and ``batch.json``);
- here — :func:`run_report` / :func:`run_report_batch` (the local runner, or the Dask one), :func:`run_notebook`
  (one notebook by hand) and :func:`save_metrics`.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from evallab.errors import EvallabError
from evallab.paths import reports_dir, state_dir
from evallab.reporting._batch_config import DEFAULT_CONFIG, ReportSpec, load_config, select_runs
from evallab.reporting._batch_export import export_html, run_notes, tidy_paths
from evallab.reporting._batch_index import write_index
from evallab.reporting._batch_run import (
    KERNEL_SETUP,
    ReportResult,
    _jsonable,
    record_parameters,
    run_one,
    thread_limits,
)
from evallab.reporting._params import check_report_name


def _finding_dict(f) -> dict:
    from evallab.reporting._tables import Finding

    if isinstance(f, Finding):
        return f.as_dict()
    if isinstance(f, str):
        return Finding(f).as_dict()
    if isinstance(f, Mapping):
        return Finding(**{k: f.get(k) for k in ("sentence", "value", "low", "high", "n")},
                       level=f.get("level", 0.95), unit=f.get("unit") or "").as_dict()
    raise TypeError(f"a finding is a Finding, a sentence or a mapping, not {type(f).__name__}")


def save_metrics(report_name: str, metrics: Mapping, *, title: str = "", reports_dir_: str | Path = "",
                 headline: Sequence[str] | None = None, findings: Sequence | None = None,
                 measures: Mapping | None = None) -> Path:
    """Write a notebook's headline numbers to ``<reports_dir>/<report_name>.metrics.json``.

    Parameters
    ----------
    report_name : the report's name (file stem).
    metrics : mapping of metric name → number/string/list/dict (numpy scalars and NaN are converted; NaN → null).
    title : the report's title for ``index.html``.
    reports_dir_ : folder; ``""`` (a notebook run by hand) means ``<reports>/adhoc`` (see
        :func:`evallab.paths.reports_dir`), so a hand run never overwrites the batch's reports; the batch
        always passes its output folder.
    headline : the metric names to show in ``index.html`` when there are no findings (default: every top-level
        scalar); kept for notebooks that do not state findings yet.
    findings : the report's findings for the index, each a :class:`evallab.reporting._tables.Finding`, a mapping
        with ``sentence, value, low, high, level, n, unit`` or a plain sentence (default: none —
        :meth:`evallab.Report.save` passes the findings stated through the report; nothing is read from module or
        kernel state).
    measures : what the metrics mean, by metric name (:meth:`evallab.Report.save` fills it): a table's
        :meth:`evallab.Results.meta`, or ``{"estimate": {unit, level, method, n, n_unit, label, note}}`` for one
        number. The index renders from these; a metric without one is shown as a plain value (never a guessed
        unit).

    Returns the path written. The file is ``{"report", "title", "written_at", "headline", "findings",
    "metrics", "measures"}``.
    """
    found = list({d["sentence"]: d for d in map(_finding_dict, findings or [])}.values())  # a cell re-run: once
    check_report_name(report_name)
    out = Path(reports_dir_) if reports_dir_ else reports_dir() / "adhoc"
    out.mkdir(parents=True, exist_ok=True)
    m = _jsonable(dict(metrics))
    if headline is None:
        headline = [k for k, v in m.items() if isinstance(v, (int, float, str, bool)) or v is None]
    doc = {"report": report_name, "title": title,
           "written_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
           "headline": list(headline), "findings": found, "metrics": m,
           "measures": _jsonable(dict(measures or {}))}
    path = out / f"{report_name}.metrics.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def run_notebook(notebook: str | Path, parameters: Mapping | None = None, *, out_dir: str | Path | None = None,
                 name: str = "", from_text: bool = False) -> ReportResult:
    """Run one report notebook by hand (``evallab run``): ``OUT/NAME.ipynb``, ``OUT/NAME.html`` and
    ``OUT/NAME.metrics.json``, its parameters checked before the kernel starts.

    Parameters
    ----------
    notebook : str or Path
        The report notebook, e.g. ``notebooks/02_position_bias.ipynb``.
    parameters : mapping, optional
        Parameter name → value (:func:`evallab.reporting._params.notebook_parameters` lists them).
    out_dir : str or Path, optional
        Output folder; default ``<reports>/adhoc`` (:func:`evallab.paths.reports_dir`), so a hand run never
        overwrites the batch's reports.
    name : str, default ""
        The report name, the outputs' file stem (letters, digits, ``_ - .``); default the notebook's stem.
    from_text : bool, default False
        The values are text as typed on a command line: each is read as its parameter's declared type
        (:func:`evallab.reporting._params.parse_value`: a literal such as ``3``, ``0.5``, ``true`` or ``[a, b]``,
        unless the parameter is a ``str``).

    Returns
    -------
    ReportResult
        ``status`` ``"ok"`` or ``"failed"`` (with the failing cell and the error); a notebook error never raises.

    Raises
    ------
    ParameterError
        A missing notebook, a report name that is not a plain file stem, an unknown parameter (the closest valid
        one named) or a value of the wrong type — before anything runs or is written.
    """
    from evallab.reporting._params import check_parameters, expected_type, notebook_parameters, parse_value

    notebook = Path(notebook)
    declared = notebook_parameters(notebook)
    params = dict(parameters or {})
    if from_text:
        params = {k: parse_value(str(v), expected_type(declared[k]) if k in declared else "")
                  for k, v in params.items()}
    report_name = check_report_name(name or notebook.stem)
    check_parameters(notebook, params, declared=declared)
    dest = Path(out_dir) if out_dir is not None else reports_dir() / "adhoc"
    return run_one(ReportSpec(report_name, notebook.resolve(), params), dest)


def run_report(config: str | Path, out_dir: str | Path, *, jobs: int = 2, only: Sequence[str] | None = None,
               scheduler: str | None = None, local_cluster: int = 0, ship_data: bool = False) -> list[ReportResult]:
    """``evallab report``: read and check the batch file (every grid combination before anything runs), keep the
    runs ``only`` names (:func:`select_runs`), run them (:func:`run_report_batch`) and write the index, keeping the
    other runs' previous entries. With ``local_cluster`` the fork server the local workers come from starts first and
    imports what runs need while the file is checked (:func:`evallab.reporting._cluster.warm_up_local_workers`);
    a bad file still stops everything before any run starts or any file is written.

    Raises :class:`evallab.errors.EvallabError` for both ``scheduler`` and ``local_cluster``, for ``ship_data``
    without either, for a bad batch file (:class:`DataError`) or an unknown ``only`` name, and
    :class:`evallab.reporting._cluster.ClusterError` when the scheduler cannot be reached.
    """
    if scheduler and local_cluster:
        raise EvallabError("give either --scheduler or --local-cluster, not both")
    if ship_data and not (scheduler or local_cluster):
        raise EvallabError("--ship-data sends data to Dask workers; give --scheduler or --local-cluster too")
    if local_cluster:
        from evallab.reporting._cluster import warm_up_local_workers

        warm_up_local_workers()
    specs = load_config(config)
    names = [s.name for s in specs]
    specs = select_runs(specs, only, config=config)
    return run_report_batch(specs, out_dir, jobs=jobs, index_names=names, scheduler=scheduler,
                            local_cluster=local_cluster, ship_data=ship_data)


def run_report_batch(specs: Sequence[ReportSpec], out_dir: str | Path = "", *, jobs: int = 2,
                     kernel: str = "python3", progress: bool = True, extra_parameters: Mapping | None = None,
                     index_names: Sequence[str] | None = None, scheduler: str | None = None, local_cluster: int = 0,
                     ship_data: bool = False) -> list[ReportResult]:
    """Run every report and write ``index.html``: ``jobs`` at a time, each in its own process and kernel — or, with
    ``scheduler`` (a Dask scheduler's address) or ``local_cluster`` (a number of local Dask worker processes), as
    tasks on Dask distributed (:func:`evallab.reporting._cluster.run_on_dask`; ``ship_data`` sends the notebook and
    its data with each task instead of relying on a shared file system).

    Each of the ``jobs`` kernels of a parallel run gets its share of the cores for its BLAS and OpenMP threads
    (:func:`evallab.reporting._batch_run.thread_limits`; a limit set in the environment is kept).

    Returns the results in the order of ``specs``; failed notebooks have ``status="failed"`` with the cell index
    and error. ``index.html`` is written even when some fail. ``index_names`` (the whole batch, when only some
    reports are re-run) keeps the other reports' previous entries (from ``batch.json``) in the index, in that
    order. Raises :class:`evallab.reporting._cluster.ClusterError` before anything is written when the scheduler
    cannot be reached.
    """
    from tqdm.auto import tqdm

    out = Path(out_dir) if out_dir else reports_dir()
    if scheduler or local_cluster:
        from evallab.reporting._cluster import run_on_dask

        results = run_on_dask(specs, out, scheduler=scheduler, local_cluster=local_cluster, ship_data=ship_data,
                              kernel=kernel, progress=progress, extra_parameters=extra_parameters)
        return _finish(specs, results, out, index_names)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, ReportResult] = {}
    bar = tqdm(total=len(specs), desc="reports", unit="nb", disable=not progress)
    if jobs <= 1 or len(specs) <= 1:
        for s in specs:
            results[s.name] = run_one(s, out, kernel=kernel, extra_parameters=extra_parameters)
            bar.set_postfix_str(f"{s.name}: {results[s.name].status}")
            bar.update()
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futs = {pool.submit(run_one, s, out, kernel=kernel, extra_parameters=extra_parameters,
                                env=thread_limits(jobs)): s
                    for s in longest_first(specs)}
            for f in as_completed(futs):
                s = futs[f]
                try:
                    results[s.name] = f.result()
                except Exception as exc:  # worker died
                    results[s.name] = ReportResult(s.name, "failed", 0.0, error=f"{type(exc).__name__}: {exc}")
                bar.set_postfix_str(f"{s.name}: {results[s.name].status}")
                bar.update()
    bar.close()
    remember_seconds(results.values(), specs)
    return _finish(specs, results, out, index_names)


#: the seconds each notebook took in its last batch run (notebook path → seconds), in the run-state folder
DURATIONS = "batch-durations.json"


def _durations() -> dict[str, float]:
    try:
        doc = json.loads((state_dir() / DURATIONS).read_text(encoding="utf-8"))
        return {str(k): float(v) for k, v in doc.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def longest_first(specs: Sequence[ReportSpec]) -> list[ReportSpec]:
    """The order a parallel batch starts its reports in: those never timed first (in batch order), then the others
    by the seconds their notebook took in its last run, longest first.

    Started in batch order, a long report that comes last runs alone at the end while the other workers idle;
    longest-processing-time-first list scheduling (Graham 1969) bounds the makespan by 4/3 − 1/(3m) of the
    optimum on m workers. On the bundled batch (2 jobs), per-report seconds 8.0, 8.3, 5.3, 6.2, 8.8, 5.4, 5.8,
    8.4: 30.5 s in batch order, 28.2 s longest first (the optimum is at least 28.1). The results and the index
    keep batch order. The seconds are kept per notebook file in the run-state folder
    (:func:`evallab.paths.state_dir`, ``batch-durations.json``), so a first run on a machine starts in batch
    order."""
    seen = _durations()

    def key(spec: ReportSpec) -> tuple[int, float]:
        t = seen.get(str(Path(spec.notebook).resolve()))
        return (0, 0.0) if t is None else (1, -t)

    return sorted(specs, key=key)  # stable: untimed reports keep batch order


def remember_seconds(results: Iterable[ReportResult], specs: Sequence[ReportSpec]) -> None:
    """Record each finished report's seconds for :func:`longest_first` (best effort: a read-only state folder
    only loses the ordering)."""
    by_name = {s.name: s for s in specs}
    seen = {k: v for k, v in _durations().items() if Path(k).exists()}  # notebooks since deleted are dropped
    for r in results:
        if r.name in by_name and r.status == "ok" and r.seconds > 0:
            seen[str(Path(by_name[r.name].notebook).resolve())] = round(float(r.seconds), 2)
    try:
        state_dir().mkdir(parents=True, exist_ok=True)
        (state_dir() / DURATIONS).write_text(json.dumps(seen, indent=0, sort_keys=True), encoding="utf-8")
    except OSError:
        pass


def _finish(specs: Sequence[ReportSpec], results: Mapping[str, ReportResult], out: Path,
            index_names: Sequence[str] | None) -> list[ReportResult]:
    """The results in batch order, and ``index.html`` written with them (and the previous entries of the runs
    not re-run, when ``index_names`` lists the whole batch)."""
    ordered = [results[s.name] for s in specs]
    index = ordered
    if index_names:
        previous = {}
        try:
            previous = {d["name"]: ReportResult(**d) for d in json.loads((out / "batch.json").read_text())}
        except (OSError, ValueError, TypeError, KeyError):
            pass
        merged = {**{k: v for k, v in previous.items() if v.html and Path(v.html).exists()}, **results}
        index = [merged[n] for n in index_names if n in merged]
    write_index(index, out)
    return ordered


__all__ = ["DEFAULT_CONFIG", "KERNEL_SETUP", "ReportResult", "ReportSpec", "export_html", "load_config",
           "record_parameters", "run_notebook", "run_notes", "run_one", "run_report", "run_report_batch", "save_metrics",
           "select_runs", "tidy_paths", "write_index"]
