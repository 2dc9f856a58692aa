"""The papermill batch: notebooks → executed notebooks → HTML reports → ``index.html``.

``reports.yaml`` lists the batch::

    reports:
      - name: 01_judge_agreement            # report name: reports/<name>.html, <name>.metrics.json
        notebook: notebooks/01_judge_agreement.ipynb
        parameters: {n_resamples: 1000}     # papermill parameters (literals)
        reads: [data/llmbar/verdicts.csv]   # data files the report reads (shipped with --ship-data)
      - name: trigger_sweep                 # a grid: one run per combination (evallab.reporting.grid)
        notebook: notebooks/04_trigger_thresholds.ipynb
        grid: {scorer: [keryx, bm25], strip_exclusions: [true, false]}
        compare: {metric: loo_trigger_accuracy, unit: "%"}   # the headline metric the index plots across the grid

:func:`run_report_batch` runs every run through papermill (in parallel, one kernel per worker process — or,
with ``scheduler=``/``local_cluster=``, as tasks on Dask distributed, see :mod:`evallab.reporting.cluster`), exports
HTML without input cells (nbconvert), and writes ``index.html`` with each report's headline numbers (read from the
``<name>.metrics.json`` the notebook wrote through :func:`save_metrics`) and a link; a grid entry is shown as a
comparison (:mod:`evallab.reporting.compare`). A failing notebook is reported with its cell and error while the
others finish.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import yaml

from evallab.errors import DataError, EvallabError
from evallab.paths import REPO_ROOT, reports_dir
from evallab.reporting.params import ParameterError, check_parameters, check_report_name


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


@dataclass
class ReportResult:
    """What happened to one report of the batch."""

    name: str
    status: str  # "ok" or "failed"
    seconds: float
    html: str | None = None
    notebook: str | None = None
    cell: int | None = None  # failing code cell, 1-based, counted in the source notebook
    error: str | None = None
    metrics: dict = field(default_factory=dict)
    title: str = ""
    question: str = ""  # the notebook's first heading: the question the report answers
    findings: list = field(default_factory=list)  # structured findings (see evallab.reporting.tables.finding)
    parameters: dict = field(default_factory=dict)  # every declared parameter's value in this run
    changed: list = field(default_factory=list)  # the parameters the run set (not the notebook's default)
    parameter_help: dict = field(default_factory=dict)  # parameter → its one-line description
    source: str = ""  # the notebook, relative to the project root
    finished_at: str = ""
    group: str = ""  # the grid entry this run belongs to
    varying: dict = field(default_factory=dict)  # the grid's values of this run
    compare: dict = field(default_factory=dict)  # the grid entry's ``compare:``
    worker: str = ""  # the Dask worker that ran it ("" for the local runner)


def load_config(path: str | Path) -> list[ReportSpec]:
    """Read and check ``reports.yaml``: one :class:`ReportSpec` per run, a grid entry expanded into one run per
    combination (named ``<entry>-<slug of its values>``, :func:`evallab.reporting.grid.expand`).

    Every grid combination's parameters are checked against the notebook before anything runs; plain entries'
    parameters are checked when the run starts (a bad one fails that report only). ``reads`` (paths relative to
    the file's folder) and a grid's ``compare`` are kept on the specs.

    Raises
    ------
    DataError
        Missing file, invalid YAML, a missing ``reports`` list, an entry without ``name``/``notebook``, a
        duplicated name (also among grid runs), a notebook that does not exist, ``parameters`` that are not a
        mapping, ``reads`` that is not a list of strings, ``compare`` without ``grid``, or a grid that does not fit
        the notebook (:func:`evallab.reporting.grid.check_grid`, naming the combination).
    """
    from evallab.reporting.grid import check_grid

    path = Path(path)
    if not path.exists():
        raise DataError("no such file; expected a reports.yaml listing the batch", path=str(path))
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DataError(f"not valid YAML ({exc})", path=str(path)) from None
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


def _jsonable(x):
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    try:
        import pandas as pd

        if x is pd.NA or x is pd.NaT:
            return None
    except ImportError:  # pragma: no cover
        pass
    return str(x)


def _finding_dict(f) -> dict:
    from evallab.reporting.tables import Finding

    if isinstance(f, Finding):
        return f.as_dict()
    if isinstance(f, str):
        return Finding(f).as_dict()
    if isinstance(f, Mapping):
        return Finding(**{k: f.get(k) for k in ("sentence", "value", "low", "high", "n")},
                       level=f.get("level", 0.95), unit=f.get("unit") or "").as_dict()
    raise TypeError(f"a finding is a Finding, a sentence or a mapping, not {type(f).__name__}")


def save_metrics(report_name: str, metrics: Mapping, *, title: str = "", reports_dir_: str | Path = "",
                 headline: Sequence[str] | None = None, findings: Sequence | None = None) -> Path:
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
    findings : the report's findings for the index, each a :class:`evallab.reporting.tables.Finding`, a mapping
        with ``sentence, value, low, high, level, n, unit`` or a plain sentence (default: every finding stated with
        :func:`evallab.reporting.tables.finding` in this kernel).

    Returns the path written. The file is ``{"report", "title", "written_at", "headline", "findings",
    "metrics"}``.
    """
    import sys

    if findings is None:
        tables = sys.modules.get("evallab.reporting.tables")
        findings = list(tables.FINDINGS) if tables is not None else []
    found = list({d["sentence"]: d for d in map(_finding_dict, findings)}.values())  # a cell re-run: once
    check_report_name(report_name)
    out = Path(reports_dir_) if reports_dir_ else reports_dir() / "adhoc"
    out.mkdir(parents=True, exist_ok=True)
    m = _jsonable(dict(metrics))
    if headline is None:
        headline = [k for k, v in m.items() if isinstance(v, (int, float, str, bool)) or v is None]
    doc = {"report": report_name, "title": title,
           "written_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
           "headline": list(headline), "findings": found, "metrics": m}
    path = out / f"{report_name}.metrics.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def _title(nb_path: Path) -> str:
    try:
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for c in nb.get("cells", []):
            if c.get("cell_type") == "markdown":
                for line in "".join(c.get("source", "")).splitlines():
                    if line.startswith("#"):
                        return line.lstrip("#").strip()
    except (OSError, ValueError):
        pass
    return nb_path.stem


#: the report kernel's set-up (figure style, publication tables for ``display(df)``), run before the first cell
KERNEL_SETUP = "--IPKernelApp.exec_lines=import evallab.reporting.kernel"

_WARNING_LINE = re.compile(r"^(?P<path>\S+?):(?P<line>\d+): (?P<cat>\w*(?:Warning|Error))\b: ?(?P<msg>.*)$")
_ABS_PATH = re.compile(r"(?<![\w.~:/+=-])/(?:home|root|tmp|work|Users|usr|opt|var|private|mnt|srv|nix|Library)"
                       r"/(?:[\w.+@-]+/)*[\w.+@-]*")


def tidy_paths(text: str, out_dir: Path | None = None) -> str:
    """Absolute paths made relative: to the output folder, then to the project root; anything else under a
    Python installation shortened to its package path; other absolute paths reduced to their last two parts."""
    if out_dir is not None:
        text = text.replace(str(out_dir) + "/", "")
    root = str(REPO_ROOT)
    text = text.replace(root + "/", "").replace(root, ".")

    def short(m):
        p = m.group(0)
        if "site-packages/" in p:
            return p.split("site-packages/", 1)[1]
        parts = [x for x in p.split("/") if x]
        return ".../" + "/".join(parts[-2:]) if len(parts) > 2 else ".../" + parts[-1]
    return _ABS_PATH.sub(short, text)


_tidy_paths = tidy_paths  # the name it had before it was used outside this module


def run_notes(nb, out_dir: Path | None = None):
    """Move stderr stream outputs (warnings, progress bars) of an executed notebook into one short "Run notes"
    section at its end, and make paths in every output relative. Returns the notebook (changed in place)."""
    import nbformat

    notes: list[str] = []
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        kept = []
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream" and o.get("name") == "stderr":
                for ln in tidy_paths(o.get("text", ""), out_dir).replace("\r", "\n").splitlines():
                    ln = ln.strip()
                    m = _WARNING_LINE.match(ln)
                    if m:
                        src = m["path"].rsplit("/", 1)[-1]
                        where = "" if re.fullmatch(r"\d+\.py", src) else f" ({src}:{m['line']})"  # a kernel cell
                        notes.append(f"{m['cat']}: {m['msg']}{where}")
                    elif ln and not ln.startswith(("warnings.warn", "from ", "import ")) and "it/s]" not in ln \
                            and not re.match(r"^[\w\s]*:?\s*\d+%\|", ln):
                        notes.append(ln)
                continue
            if o.get("output_type") == "stream":
                o["text"] = tidy_paths(o.get("text", ""), out_dir)
            for key in ("text/plain", "text/html", "text/markdown"):
                data = o.get("data", {})
                if key in data:
                    data[key] = tidy_paths(data[key] if isinstance(data[key], str) else "".join(data[key]),
                                            out_dir)
            if o.get("output_type") == "error":
                o["evalue"] = tidy_paths(o.get("evalue", ""), out_dir)
                o["traceback"] = [tidy_paths(t, out_dir) for t in o.get("traceback", [])]
            kept.append(o)
        c["outputs"] = kept
    notes = list(dict.fromkeys(n[:300] for n in notes))
    if notes:
        body = "\n".join(f"- {html.escape(n)}" for n in notes[:30])
        more = f"\n- … and {len(notes) - 30} more (see the executed notebook)" if len(notes) > 30 else ""
        nb.cells.append(nbformat.v4.new_markdown_cell(
            "## Run notes\nMessages the run printed to its error stream (warnings, progress), kept here so the "
            "report itself stays clean. They do not change the numbers above.\n\n" + body + more))
    return nb


def export_html(ipynb: Path, html_path: Path) -> None:
    """Export an executed notebook to HTML without input cells or prompts (nbconvert), with stderr output moved
    to a "Run notes" section and paths relative to the output folder or project root."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = run_notes(nbformat.read(str(ipynb), as_version=4), html_path.parent.resolve())
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb)
    html_path.write_text(body, encoding="utf-8")


def record_parameters(res: ReportResult, notebook: Path, user_params: Mapping) -> None:
    """The run's parameters (declared defaults overridden by the run's values) for the index."""
    import ast

    from evallab.reporting.params import RUNNER_PARAMETERS, notebook_parameters

    try:
        declared = notebook_parameters(notebook)
    except Exception:  # an unreadable notebook is reported by the run itself
        declared = {}
    for name, p in declared.items():
        if name in RUNNER_PARAMETERS:
            continue
        try:
            default = ast.literal_eval(p.default)
        except (ValueError, SyntaxError):
            default = p.default
        res.parameters[name] = _jsonable(user_params.get(name, default))
        res.parameter_help[name] = p.help
        if name in user_params and user_params[name] != default:
            res.changed.append(name)


def _code_cell_number(ipynb: Path, cell_index: int) -> int:
    """1-based number of the failing code cell in the SOURCE notebook (papermill's injected cell not counted)."""
    try:
        cells = [c for c in json.loads(ipynb.read_text(encoding="utf-8"))["cells"]
                 if "papermill-error-cell-tag" not in c.get("metadata", {}).get("tags", [])]
    except (OSError, ValueError, KeyError):
        return cell_index
    n = 0
    for c in cells[: cell_index + 1]:
        if c.get("cell_type") == "code" and "injected-parameters" not in c.get("metadata", {}).get("tags", []):
            n += 1
    return n


def _kernel_manager(env: Mapping[str, str], cwd: Path):
    """A jupyter kernel manager that starts the kernel in ``cwd`` with ``env`` added to the environment — instead
    of changing this process's working folder and environment, so that runs in several threads of one process
    (a Dask worker) do not disturb each other."""
    from jupyter_client.manager import AsyncKernelManager

    class ReportKernelManager(AsyncKernelManager):
        async def start_kernel(self, **kw):
            kw["env"] = {**os.environ, **(kw.get("env") or {}), **env}
            kw.setdefault("cwd", str(cwd))
            return await super().start_kernel(**kw)

    return ReportKernelManager


def run_one(spec: ReportSpec, out_dir: str | Path, *, kernel: str = "python3", timeout: int = 1800,
            extra_parameters: Mapping | None = None, env: Mapping[str, str] | None = None) -> ReportResult:
    """Execute one report notebook with papermill and export it; never raises for a notebook error.

    The kernel runs in the notebook's folder; ``env`` is added to its environment (e.g. ``EVALLAB_DATA``).
    """
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    out = Path(out_dir).resolve()
    t0 = time.perf_counter()
    res = ReportResult(spec.name, "ok", 0.0, title=spec.title or _title(spec.notebook), group=spec.group,
                       varying=dict(spec.varying), compare=dict(spec.compare))
    res.question = _title(spec.notebook)
    res.source = tidy_paths(str(spec.notebook))
    user_params = {**spec.parameters, **(extra_parameters or {})}
    record_parameters(res, spec.notebook, user_params)
    try:  # before anything is written or deleted, and before a kernel starts
        check_report_name(spec.name)
        check_parameters(spec.notebook, user_params, where=spec.name)
    except ParameterError as exc:
        res.status, res.error = "failed", str(exc)
        return res
    out.mkdir(parents=True, exist_ok=True)
    ipynb, html_path = out / f"{spec.name}.ipynb", out / f"{spec.name}.html"
    assert ipynb.parent == out and html_path.parent == out
    (out / f"{spec.name}.metrics.json").unlink(missing_ok=True)
    params = {**user_params, "report_name": spec.name, "reports_dir": str(out)}
    res.notebook = str(ipynb)
    # kernels draw with matplotlib's inline backend (Agg-based, headless) so figures land in the report, whatever
    # MPLBACKEND the caller set for itself (e.g. Agg in tests)
    kernel_env = {"MPLBACKEND": "module://matplotlib_inline.backend_inline", **(env or {})}
    try:
        pm.execute_notebook(str(spec.notebook), str(ipynb), parameters=params, kernel_name=kernel,
                            progress_bar=False, log_output=False, execution_timeout=timeout,
                            kernel_manager_class=_kernel_manager(kernel_env, spec.notebook.parent),
                            # the kernel's own log lines ("running over TCP", a shutdown KeyboardInterrupt) are noise
                            extra_arguments=["--IPKernelApp.log_level=CRITICAL", KERNEL_SETUP])
    except PapermillExecutionError as exc:
        res.status, res.cell = "failed", _code_cell_number(ipynb, int(exc.cell_index))
        first = next((ln for ln in str(exc.source).splitlines() if ln.strip()), "")
        res.error = f"{exc.ename}: {exc.evalue} [in: {first[:80]}]"
    except Exception as exc:  # kernel death, bad parameters, unreadable notebook: report, do not stop the batch
        res.status, res.error = "failed", f"{type(exc).__name__}: {exc}"
    if ipynb.exists():
        try:
            export_html(ipynb, html_path)
            res.html = str(html_path)
        except Exception as exc:  # pragma: no cover - nbconvert failure is reported like a notebook failure
            res.status = "failed"
            res.error = (res.error + "; " if res.error else "") + f"HTML export failed: {exc}"
    mpath = out / f"{spec.name}.metrics.json"
    if mpath.exists():
        try:
            doc = json.loads(mpath.read_text(encoding="utf-8"))
            res.metrics = {k: doc["metrics"].get(k) for k in doc.get("headline", [])}
            res.findings = list(doc.get("findings") or [])
            res.title = doc.get("title") or res.title
        except (ValueError, KeyError):
            res.metrics = {}
    elif res.status == "ok":
        res.status, res.error = "failed", f"the notebook wrote no {mpath.name}"
    res.seconds = time.perf_counter() - t0
    res.finished_at = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return res


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


def run_report(config: str | Path, out_dir: str | Path, *, jobs: int = 2, only: Sequence[str] | None = None,
               scheduler: str | None = None, local_cluster: int = 0, ship_data: bool = False) -> list[ReportResult]:
    """``evallab report``: read and check the batch file (every grid combination before anything runs), keep the
    runs ``only`` names (:func:`select_runs`), run them (:func:`run_report_batch`) and write the index, keeping the
    other runs' previous entries. With ``local_cluster`` the fork server the local workers come from starts first and
    imports what runs need while the file is checked (:func:`evallab.reporting.cluster.warm_up_local_workers`);
    a bad file still stops everything before any run starts or any file is written.

    Raises :class:`evallab.errors.EvallabError` for both ``scheduler`` and ``local_cluster``, for ``ship_data``
    without either, for a bad batch file (:class:`DataError`) or an unknown ``only`` name, and
    :class:`evallab.reporting.cluster.ClusterError` when the scheduler cannot be reached.
    """
    if scheduler and local_cluster:
        raise EvallabError("give either --scheduler or --local-cluster, not both")
    if ship_data and not (scheduler or local_cluster):
        raise EvallabError("--ship-data sends data to Dask workers; give --scheduler or --local-cluster too")
    if local_cluster:
        from evallab.reporting.cluster import warm_up_local_workers

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
    tasks on Dask distributed (:func:`evallab.reporting.cluster.run_on_dask`; ``ship_data`` sends the notebook and
    its data with each task instead of relying on a shared file system).

    Returns the results in the order of ``specs``; failed notebooks have ``status="failed"`` with the cell index
    and error. ``index.html`` is written even when some fail. ``index_names`` (the whole batch, when only some
    reports are re-run) keeps the other reports' previous entries (from ``batch.json``) in the index, in that
    order. Raises :class:`evallab.reporting.cluster.ClusterError` before anything is written when the scheduler
    cannot be reached.
    """
    from tqdm.auto import tqdm

    out = Path(out_dir) if out_dir else reports_dir()
    if scheduler or local_cluster:
        from evallab.reporting.cluster import run_on_dask

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
            futs = {pool.submit(run_one, s, out, kernel=kernel, extra_parameters=extra_parameters): s
                    for s in specs}
            for f in as_completed(futs):
                s = futs[f]
                try:
                    results[s.name] = f.result()
                except Exception as exc:  # worker died
                    results[s.name] = ReportResult(s.name, "failed", 0.0, error=f"{type(exc).__name__}: {exc}")
                bar.set_postfix_str(f"{s.name}: {results[s.name].status}")
                bar.update()
    bar.close()
    return _finish(specs, results, out, index_names)


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


_INDEX_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;
 color:#1a1a1a;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.25rem}
.card{border:1px solid #d0d7de;border-radius:8px;padding:.8rem 1.1rem;margin:1.1rem 0;background:#fff}
.card h2{font-size:1.2rem;margin:.1rem 0 .3rem 0}
.question{font-style:italic;margin:.2rem 0 .5rem 0;color:#333}
.status{font-size:.9rem;color:#444;margin:.2rem 0}
.status .ok{color:#1b5e20;font-weight:600}.status .failed{color:#b00020;font-weight:600}
.findings{margin:.4rem 0 .6rem 1.1rem;padding:0}.findings li{margin:.25rem 0}
.est{color:#333;white-space:nowrap}
.meta{font-size:.9rem;color:#333;margin:.3rem 0}
details{margin:.3rem 0}summary{cursor:pointer;color:#0b5394}
table{border-collapse:collapse;max-width:100%}td,th{border-bottom:1px solid #ddd;padding:.2rem .5rem;text-align:left;
 vertical-align:top;overflow-wrap:anywhere}
pre.failed{white-space:pre-wrap;overflow-wrap:anywhere;color:#b00020;background:#fff5f5;padding:.5rem}
.compare table{font-size:.92rem}.compare td.failed{color:#b00020;font-weight:600}.compare .findings{margin:0 0 0 1rem}
.compare th{border-bottom:2px solid #555}.notes{font-size:.85rem;color:#444}
.compare td,.compare th{overflow-wrap:normal;word-break:normal}.compare td.est{white-space:nowrap}
.compare td.run{overflow-wrap:anywhere;min-width:8ch}
img.compare{max-width:100%;height:auto}
.finding{border-left:4px solid #0072B2;background:#eef5fb;padding:.35rem .7rem;margin:.5rem 0}
"""

#: parameter names that say which data a report read
_DATA_PARAM = re.compile(r"^(?!record_dir$|cache_dir$)(.*path|.*_dir|catalog|.*report|.*recordings.*)$")


def _value_text(v) -> str:
    from evallab.reporting.tables import fmt_value

    if v == "" or v == []:
        return "default"
    return fmt_value(v)


def _finding_html(f: Mapping) -> str:
    from evallab.reporting.tables import format_estimate

    est = format_estimate(f.get("value"), f.get("low"), f.get("high"), f.get("unit") or "", f.get("level"),
                          f.get("n"), method=f.get("method"), n_unit=f.get("n_unit") or "")
    sentence = html.escape(str(f.get("sentence", "")))
    return f"<li>{sentence}" + (f" <span class='est'>— {html.escape(est)}</span>" if est else "") + "</li>"


def _headline_html(metrics: Mapping) -> str:
    """Old-style headline metrics, readably: words for names, numbers in plain notation, lists joined."""
    import pandas as pd

    from evallab.reporting.tables import UNITS, fmt_number, fmt_value, guess_unit, humanize

    def text(k, v):
        if isinstance(v, float):
            u = guess_unit(k, pd.Series([v], dtype=float))
            if u == "count":
                u = ""
            suffix = UNITS.get(u, (1, "", None))[1]
            return fmt_number(v, u, None, u in ("pp", "pp_pct")) + ("%" if suffix == "%" else f" {suffix}"
                                                                     if suffix else "")
        return fmt_value(v)
    rows = "".join(f"<tr><th>{html.escape(humanize(k))}</th><td>{html.escape(text(k, v))}</td></tr>"
                   for k, v in metrics.items())
    return f"<table>{rows}</table>"


def _all_metrics_html(path: Path) -> str:
    from evallab.reporting.tables import fmt_value, humanize, to_html

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    m = doc.get("metrics") or {}
    scalars, tables = [], []
    for k, v in m.items():
        if isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            import pandas as pd

            tables.append(f"<h4>{html.escape(humanize(k))}</h4>" + to_html(pd.DataFrame(v), max_rows=10**6,
                                                                           max_cols=6).html)
        else:
            scalars.append(f"<tr><th>{html.escape(humanize(k))}</th><td>{html.escape(fmt_value(v))}</td></tr>")
    body = (f"<table>{''.join(scalars)}</table>" if scalars else "") + "".join(tables)
    return (f"<details><summary>All metrics ({len(m)}) · <a href='{html.escape(path.name)}'>as a file</a></summary>"
            f"{body}</details>")


def _card(r: ReportResult, out: Path) -> str:
    from evallab.reporting.tables import humanize

    title = html.escape(r.title or humanize(r.name))
    link = f"<a href='{html.escape(Path(r.html).name)}'>{title}</a>" if r.html else title
    parts = [f"<section class='card' id='{html.escape(r.name)}'><h2>{link}</h2>"]
    if r.question and r.question != r.title:
        parts.append(f"<p class='question'>{html.escape(r.question)}</p>")
    when = f" · finished {html.escape(r.finished_at)}" if r.finished_at else ""
    parts.append(f"<p class='status'>Status: <span class='{html.escape(r.status)}'>{html.escape(r.status)}</span>"
                 f" · {r.seconds:.1f} s{when}</p>")
    if r.status == "failed":
        cell = f"cell {r.cell}: " if r.cell is not None else ""
        parts.append(f"<pre class='failed'>{html.escape(tidy_paths(cell + (r.error or ''), out.resolve()))}</pre>")
    if r.findings:
        parts.append("<ul class='findings'>" + "".join(_finding_html(f) for f in r.findings[:5]) + "</ul>")
    elif r.metrics:
        parts.append(_headline_html(r.metrics))
    if r.parameters:
        data = [k for k in r.parameters if _DATA_PARAM.search(k)]
        def item(k):
            changed = " (set for this run)" if k in r.changed else ""
            tip = html.escape(r.parameter_help.get(k, ""), quote=True)
            return (f"<span title='{tip}'>{html.escape(humanize(k))}: "
                    f"<b>{html.escape(tidy_paths(_value_text(r.parameters[k]), out.resolve()))}</b>{changed}</span>")
        src = f"Notebook {html.escape(r.source)}. " if r.source else ""
        if data:
            parts.append(f"<p class='meta'>{src}Data: " + "; ".join(item(k) for k in data)
                         + " (“default”: the bundled data set).</p>")
        rest = [k for k in r.parameters if k not in data]
        if rest:
            rows = "".join(f"<tr><th>{html.escape(humanize(k))}</th><td>"
                           f"{html.escape(tidy_paths(_value_text(r.parameters[k]), out.resolve()))}"
                           f"{' (set for this run)' if k in r.changed else ''}</td>"
                           f"<td>{html.escape(r.parameter_help.get(k, ''))}</td></tr>" for k in rest)
            changed = [humanize(k) for k in rest if k in r.changed]
            summ = f"Parameters ({len(rest)}; set for this run: {', '.join(changed)})" if changed else \
                f"Parameters ({len(rest)}, all defaults)"
            parts.append(f"<details><summary>{html.escape(summ)}</summary><table>{rows}</table></details>")
    mpath = out / f"{r.name}.metrics.json"
    if mpath.exists():
        parts.append(_all_metrics_html(mpath))
    parts.append("</section>")
    return "".join(parts)


def write_index(results: Sequence[ReportResult], out_dir: str | Path) -> Path:
    """Write ``index.html``: one card per report — the question, its findings with intervals and n (or, for a
    notebook that still passes ``headline=``, those metrics readably), the data and parameters of the run, status
    and time — with the full metrics folded away."""
    from evallab.reporting.compare import comparison_html

    out = Path(out_dir)
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    ok = sum(r.status == "ok" for r in results)
    groups = list(dict.fromkeys(r.group for r in results if r.group))
    in_grids = sum(bool(r.group) for r in results)
    grids = (f" ({'all' if in_grids == len(results) else in_grids} of them runs of {len(groups)} parameter "
             f"{'grid, shown' if len(groups) == 1 else 'grids, each shown'} as one comparison)") if groups else ""
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>evallab calibration reports</title><style>{_INDEX_CSS}</style></head><body>",
        "<h1>evallab calibration reports</h1>",
        f"<p>{len(results)} report{'' if len(results) == 1 else 's'}{grids}, {ok} ran to the end; generated {now} "
        "by <code>evallab report</code>. "
        "Each report is a run of a notebook in <code>notebooks/</code>; click a title to read it. Intervals are 95% "
        "confidence intervals unless stated; n is the number of units behind a number.</p>",
    ]
    for r in results:
        if not r.group:
            parts.append(_card(r, out))
        elif r.group in groups:  # a grid's card where its first run is
            groups.remove(r.group)
            runs = [x for x in results if x.group == r.group]
            parts.append(comparison_html(r.group, runs, out, [_card(x, out) for x in runs]))
    parts.append("</body></html>")
    path = out / "index.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    (out / "batch.json").write_text(json.dumps([asdict(r) for r in results], indent=2, default=str),
                                    encoding="utf-8")
    return path


DEFAULT_CONFIG = REPO_ROOT / "reports.yaml"
