"""One report run: a notebook executed with papermill in its own kernel, exported to HTML, its metrics file read
back into a :class:`ReportResult` (:func:`run_one`; never raises for a notebook error). Used by the local batch
runner (:mod:`evallab.reporting._batch`) and by the Dask tasks (:mod:`evallab.reporting._cluster`); re-exported by
:mod:`evallab.reporting._batch`.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evallab.reporting._batch_config import ReportSpec
from evallab.reporting._batch_export import export_html, tidy_paths
from evallab.reporting._params import ParameterError, check_parameters, check_report_name


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
    #: the error's own one-line message when the run failed with one of evallab's bad-input errors
    #: (:data:`evallab.errors.INPUT_ERRORS`: a malformed table, a design it cannot support, a bad parameter), as the
    #: kernel raised it; "" for any other failure (a bug, a dead kernel)
    input_error: str = ""
    metrics: dict = field(default_factory=dict)
    title: str = ""
    question: str = ""  # the notebook's first heading: the question the report answers
    findings: list = field(default_factory=list)  # structured findings (evallab.Report.finding)
    parameters: dict = field(default_factory=dict)  # every declared parameter's value in this run
    changed: list = field(default_factory=list)  # the parameters the run set (not the notebook's default)
    parameter_help: dict = field(default_factory=dict)  # parameter → its one-line description
    source: str = ""  # the notebook, relative to the project root
    finished_at: str = ""
    group: str = ""  # the grid entry this run belongs to
    varying: dict = field(default_factory=dict)  # the grid's values of this run
    compare: dict = field(default_factory=dict)  # the grid entry's ``compare:``
    worker: str = ""  # the Dask worker that ran it ("" for the local runner)


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


def is_input_error(name: str) -> bool:
    """Whether an exception class named ``name`` (a kernel reports only the name, papermill's ``ename``) is one of
    evallab's bad-input errors: a class of :mod:`evallab.errors` derived from :data:`evallab.errors.INPUT_ERRORS`."""
    import evallab.errors as errors

    cls = getattr(errors, name, None)
    return isinstance(cls, type) and issubclass(cls, errors.INPUT_ERRORS)


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
KERNEL_SETUP = "--IPKernelApp.exec_lines=import evallab.reporting._kernel as _k; _k.tune_collector(); del _k"


#: a kernel that dies before its first reply (a port taken between jupyter_client's choice and the kernel's bind)
KERNEL_START_FAILURE = "Kernel died before replying to kernel_info"
KERNEL_START_ATTEMPTS = 3


def record_parameters(res: ReportResult, notebook: Path, user_params: Mapping) -> None:
    """The run's parameters (declared defaults overridden by the run's values) for the index."""
    import ast

    from evallab.reporting._params import RUNNER_PARAMETERS, notebook_parameters

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


#: seconds between two writes of a running report's executed notebook (its ``.ipynb`` beside the HTML)
SAVE_EVERY = 10.0
#: the papermill engine :func:`run_one` executes with (registered by :func:`_engine`)
ENGINE = "evallab"


def _engine() -> str:
    """Register (once) and name papermill's nbclient engine with the executed notebook written when the run starts,
    at most every :data:`SAVE_EVERY` seconds while its cells run, and always when it ends (finished, failed or
    interrupted: papermill's own final write).

    papermill's own manager writes the whole notebook at every cell's start and end: a report of 8 figures and 70
    tables is rewritten about 60 times as it grows (report 08: 57 writes of up to 0.6 MB, about 1 s of the runner's
    CPU, measured with cProfile), on the same two cores as the kernels. The final notebook is the same; only a
    runner killed from outside (SIGKILL) leaves a file up to :data:`SAVE_EVERY` seconds old. Uses papermill's
    engine registry (``papermill.engines.papermill_engines.register``), its documented extension point."""
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.exceptions import PapermillException

    try:
        papermill_engines.get_engine(ENGINE)
        return ENGINE
    except PapermillException:  # not registered yet in this process
        pass

    class ThrottledEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, **kwargs):
            write = nb_man.save

            def save(**kw):
                if (nb_man.now() - nb_man.last_save_time).total_seconds() >= SAVE_EVERY:
                    write(**kw)

            nb_man.save = save  # while the cells run
            try:
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
            finally:
                del nb_man.save  # papermill's own again: its notebook_complete writes the final notebook

    papermill_engines.register(ENGINE, ThrottledEngine)
    return ENGINE


#: the environment variables that size the native thread pools of a kernel's numpy, scipy and scikit-learn
#: (OpenBLAS, OpenMP, MKL)
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def thread_limits(jobs: int) -> dict[str, str]:
    """The environment that gives each of ``jobs`` kernels running at once its share of the cores:
    ``cores // jobs`` threads (at least 1) for the BLAS and OpenMP pools — each variable of
    :data:`THREAD_VARIABLES` the environment does not already set; nothing for one job.

    Every numpy and scipy library starts as many BLAS threads as the machine has cores, so ``jobs`` kernels start
    ``jobs`` × cores threads, which spin while waiting for work: on the bundled batch (2 jobs, 2 cores) they burned
    4–7 of its 36–41 CPU-seconds and about 3 s of its 20–25 s wall (two runs each way), with the same figures at one
    thread (every metric equal). joblib's loky workers limit their workers' thread pools the same way.

    Examples
    --------
    >>> import os
    >>> cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    >>> limits = thread_limits(cores)
    >>> all(limits[v] == "1" for v in THREAD_VARIABLES if v not in os.environ), thread_limits(1)
    (True, {})
    """
    if jobs <= 1:
        return {}
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    share = str(max(1, cores // jobs))
    return {v: share for v in THREAD_VARIABLES if v not in os.environ}


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
        res.input_error = str(exc)
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
        for attempt in range(KERNEL_START_ATTEMPTS):
            try:
                pm.execute_notebook(str(spec.notebook), str(ipynb), parameters=params, kernel_name=kernel,
                                    engine_name=_engine(),
                                    progress_bar=False, log_output=False, execution_timeout=timeout,
                                    kernel_manager_class=_kernel_manager(kernel_env, spec.notebook.parent),
                                    # the kernel's own log lines ("running over TCP", a shutdown
                                    # KeyboardInterrupt) are noise
                                    extra_arguments=["--IPKernelApp.log_level=CRITICAL", KERNEL_SETUP])
                break
            except RuntimeError as exc:
                # jupyter_client picks the kernel's five ports free, then the kernel binds them: a kernel started
                # at the same moment can take one in between ("Address already in use"), and the kernel dies
                # before its first reply. No cell has run, so the report is started again on new ports.
                if not str(exc).startswith(KERNEL_START_FAILURE) or attempt == KERNEL_START_ATTEMPTS - 1:
                    raise
    except PapermillExecutionError as exc:
        res.status, res.cell = "failed", _code_cell_number(ipynb, int(exc.cell_index))
        first = next((ln for ln in str(exc.source).splitlines() if ln.strip()), "")
        res.error = f"{exc.ename}: {exc.evalue} [in: {first[:80]}]"
        if is_input_error(exc.ename):
            res.input_error = str(exc.evalue)
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
