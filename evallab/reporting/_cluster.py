"""The report batch as tasks on Dask distributed: a running scheduler (``scheduler="tcp://host:8786"``) or a
``distributed.LocalCluster`` started for the batch and closed after (``local_cluster=N`` worker processes).

Each run is one task (:func:`run_task`): on a worker it executes the notebook with
:func:`evallab.reporting._batch.run_one` into a private temporary folder, exports the HTML there, and returns the
:class:`~evallab.reporting._batch.ReportResult` with the files the run wrote (executed notebook, HTML, metrics,
tables); the folder is deleted when the task ends. The client writes those files under ``--out`` only
(:func:`write_files` refuses any path that would leave it). The scheduler does the rest: a task whose worker dies
mid-run is run again on another worker (up to Dask's ``distributed.scheduler.allowed-failures``, 3 by default),
and the client keeps the one result each run finally returns.

Data reach the workers in one of two ways:

- by path (the default): workers see the client's files at the same paths (a shared file system); the kernel
  reads the notebook, the data and ``EVALLAB_DATA`` (the client's bundled-data folder) where the client has them.
- shipped (``ship_data=True``): the client reads the notebook, every file or folder in the entry's ``reads:`` and
  every string parameter naming an existing file or folder, sends them once per distinct set to the cluster
  (``Client.scatter``), and each task unpacks them into its temporary folder (keeping their absolute paths under
  it), runs the notebook from there and points ``EVALLAB_DATA`` and absolute path parameters at the copies.

Every worker needs the same pinned environment as the client (a checkout installed with ``pip install -c
constraints.txt -e ".[dask]"`` and the ``python3`` Jupyter kernel, as ``make venv`` builds it); a task returns the
notebook's failure (cell and error) like the local runner.
"""

from __future__ import annotations

import ast
import contextlib
import logging
import multiprocessing
import os
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from evallab.errors import ClusterError
from evallab.paths import _is_checkout, data_dir
from evallab.reporting._batch_config import ReportSpec
from evallab.reporting._batch_export import tidy_paths
from evallab.reporting._batch_run import ReportResult, record_parameters, run_one
from evallab.reporting._params import RUNNER_PARAMETERS, notebook_parameters


def _distributed():
    try:
        import distributed
    except ImportError:  # pragma: no cover - the dask extra is installed by make
        raise ClusterError("--scheduler and --local-cluster need Dask distributed: pip install 'evallab[dask]' "
                           "(the same pinned environment on every worker)") from None
    return distributed


#: what every run needs on a worker, imported once by the fork server local workers are forked from
PRELOAD = ["distributed", "papermill", "nbconvert", "evallab.reporting._cluster"]


def _local_start_method() -> str:
    """How local workers are started: Dask's ``distributed.worker.multiprocessing-method`` (read without importing
    distributed: a value the user configured, else its default ``spawn``), except that ``spawn`` becomes
    ``forkserver`` where the platform has one."""
    try:
        import dask
    except ImportError:  # pragma: no cover - the dask extra is installed by make
        _distributed()
    method = dask.config.get("distributed.worker.multiprocessing-method", default="spawn")
    if method == "spawn" and "forkserver" in multiprocessing.get_all_start_methods():
        return "forkserver"
    return method


def _preload() -> list[str]:
    """:data:`PRELOAD`, and the main module: every process multiprocessing starts runs the main module again
    (``evallab``'s command line imports every subcommand's module, ~2 s); loaded once in the fork server, the
    workers find it there (a script by path: ``__main__``, which the fork server runs once as multiprocessing's
    ``__mp_main__``; ``python -m NAME``: the module, so its imports are loaded)."""
    import sys

    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name:  # multiprocessing does not run a package's __main__ again (python -m pytest): nothing to load
        return list(PRELOAD) if name.endswith("__main__") else [*PRELOAD, name]
    return [*PRELOAD, "__main__"] if getattr(main, "__file__", None) else list(PRELOAD)


def warm_up_local_workers() -> None:
    """Start the fork server that local Dask workers will be forked from, importing :data:`PRELOAD` in it — in its
    own process, while the caller goes on (e.g. reads and checks the batch file). Workers forked from it start with
    papermill, nbconvert and evallab loaded instead of importing them at their first run (~3 s each on a 2-core
    machine). Does nothing where workers are not started by a fork server, or when it already runs; imports
    neither distributed nor evallab's reporting stack in this process."""
    if _local_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    # the list is read when the server starts, here (Dask's own list, set later, then finds it running)
    multiprocessing.get_context("forkserver").set_forkserver_preload(_preload())
    forkserver.ensure_running()


@contextlib.contextmanager
def connect(scheduler: str | None = None, local_cluster: int = 0) -> Iterator:
    """A ``distributed.Client`` for the batch: connected to ``scheduler`` (waiting at most Dask's
    ``distributed.comm.timeouts.connect``, 30 s unless configured), or to a ``LocalCluster`` of ``local_cluster``
    worker processes (one thread each, on 127.0.0.1, no dashboard, their scratch space in a temporary folder, their
    log lines silenced: a failed run is reported by the client) that is closed on exit, its folder removed. The local workers are forked from a fork server where the
    platform has one (:func:`warm_up_local_workers`; Dask's ``distributed.worker.multiprocessing-method`` is
    ``spawn`` by default — any other configured method is kept), instead of each starting a new interpreter.

    Raises :class:`ClusterError` naming the address when the scheduler cannot be reached, or when the local
    cluster does not start.
    """
    distributed = _distributed()
    if local_cluster:
        import dask

        warm_up_local_workers()  # at once when the caller has not done it earlier
        with tempfile.TemporaryDirectory(prefix="evallab-dask-") as scratch:  # the workers' space, removed after
            try:
                with dask.config.set({"distributed.worker.multiprocessing-method": _local_start_method(),
                                      "temporary-directory": scratch}):  # the scheduler's and nannies' too
                    cluster = distributed.LocalCluster(n_workers=int(local_cluster), threads_per_worker=1,
                                                       processes=True, host="127.0.0.1", dashboard_address=None,
                                                       local_directory=scratch, silence_logs=logging.CRITICAL)
            except Exception as exc:  # noqa: BLE001 - any start-up failure is one line for the user
                raise ClusterError(f"could not start a local Dask cluster of {local_cluster} workers: "
                                   f"{type(exc).__name__}: {exc}") from None
            try:
                with distributed.Client(cluster) as client:
                    yield client
            finally:
                cluster.close()
        return
    try:
        client = distributed.Client(scheduler)
    except (OSError, ValueError, TypeError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    try:
        yield client
    finally:
        client.close()


# ------------------------------------------------------------------------------------------------- shipping
def _path_parameters(spec: ReportSpec, extra_parameters: Mapping | None) -> dict[str, Path]:
    """Parameters whose string value names an existing file or folder, as the kernel would resolve them (relative
    to the notebook's folder): name → absolute path. The notebook's folder itself and its ancestors never count."""
    nb_dir = spec.notebook.parent.resolve()
    values = {}
    for name, p in notebook_parameters(spec.notebook).items():
        if name not in RUNNER_PARAMETERS:
            try:
                values[name] = ast.literal_eval(p.default)
            except (ValueError, SyntaxError):
                values[name] = None
    values.update({**spec.parameters, **(extra_parameters or {})})
    found = {}
    for name, v in values.items():
        if not isinstance(v, str) or not v.strip():
            continue
        p = Path(v).expanduser()
        p = (p if p.is_absolute() else nb_dir / p).resolve()
        if p.exists() and p != Path(p.anchor) and p not in (nb_dir, *nb_dir.parents):
            found[name] = p
    return found


def files_to_ship(spec: ReportSpec, extra_parameters: Mapping | None = None) -> list[Path]:
    """The files a run needs on a worker without the shared file system: the notebook, everything under each
    path in ``reads:``, and every parameter naming an existing file or folder (folders expanded), sorted.

    Raises :class:`ClusterError` when a path in ``reads:`` does not exist."""
    roots = [spec.notebook.resolve()]
    for r in spec.reads:
        p = Path(r)
        if not p.exists():
            raise ClusterError(f"{spec.name}: 'reads' names {r}, which does not exist; --ship-data cannot send it")
        roots.append(p.resolve())
    roots += list(_path_parameters(spec, extra_parameters).values())
    files = set()
    for p in roots:
        if p.is_dir():
            files.update(q for q in p.rglob("*") if q.is_file())
        elif p.is_file():
            files.add(p)
    return sorted(files)


def bundle_key(path: Path) -> str:
    """A file's place in a shipped bundle: its absolute path without the leading ``/``."""
    return Path(path).resolve().as_posix().lstrip("/")


def _unpack(bundle: Mapping[str, bytes], root: Path) -> None:
    for key, data in bundle.items():
        target = root / key
        if ".." in Path(key).parts or Path(key).is_absolute():  # the client built the keys; never trust blindly
            raise ClusterError(f"refusing to unpack {key!r}: not a relative path inside the bundle")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def absolute_path_parameters(spec: ReportSpec, extra_parameters: Mapping | None = None) -> dict[str, str]:
    """The parameters given as absolute paths (or ``~/...``) that :func:`files_to_ship` sends: name → their key in
    the bundle (:func:`bundle_key`), so that the worker points them at its copies."""
    params = {**spec.parameters, **(extra_parameters or {})}
    return {name: bundle_key(p) for name, p in _path_parameters(spec, extra_parameters).items()
            if Path(str(params.get(name, ""))).expanduser().is_absolute()}


def _relocate(spec: ReportSpec, root: Path, extra_parameters: Mapping | None,
              moved: Mapping[str, str]) -> tuple[ReportSpec, dict]:
    """The spec as seen from the unpacked bundle under ``root``: the notebook's copy, and each shipped absolute path
    parameter (``moved``: name → bundle key) pointing at its copy; relative ones resolve from the notebook copy's
    folder as before, and any other parameter is left as it is."""
    copies = {name: str(root / key) for name, key in moved.items()}
    nb = root / bundle_key(spec.notebook)
    return replace(spec, notebook=nb, parameters={**spec.parameters, **copies}), {
        k: v for k, v in (extra_parameters or {}).items() if k not in copies}


def _worker() -> tuple[str, str | None]:
    """(address, scratch folder) of the Dask worker running this task; ``("", None)`` outside a worker. A run's
    temporary folder goes into the worker's scratch folder, which Dask removes when the worker closes (and purges
    at the next start when a worker was killed)."""
    try:
        from distributed import get_worker

        w = get_worker()
        return w.address, w.local_directory
    except (ImportError, ValueError):
        return "", None


def run_task(spec: ReportSpec, *, extra_parameters: Mapping | None = None, bundle: Mapping[str, bytes] | None = None,
             moved: Mapping[str, str] | None = None, client_data: str = "", kernel: str = "python3",
             timeout: int = 1800) -> tuple[ReportResult, dict]:
    """One run on a worker: ``(result, files)`` where ``files`` maps each path the run wrote, relative to its
    output folder, to its bytes. Never raises for a notebook error (the result says ``failed`` with the cell).

    ``bundle`` (``--ship-data``) holds the run's files keyed by :func:`bundle_key`, and ``moved`` the absolute path
    parameters to point at their copies (:func:`absolute_path_parameters`); without a bundle the notebook and data
    are read by path. ``client_data`` (the client's bundled-data folder) becomes the kernel's ``EVALLAB_DATA`` —
    under the bundle's root when shipped.
    """
    worker, scratch = _worker()
    with tempfile.TemporaryDirectory(prefix="evallab-run-", dir=scratch) as td:
        td = Path(td)
        out = td / "out"
        env = {}
        if bundle is not None:
            root = td / "files"
            _unpack(bundle, root)
            spec, extra_parameters = _relocate(spec, root, extra_parameters, moved or {})
            if client_data:
                env["EVALLAB_DATA"] = str(root / client_data.lstrip("/"))
        else:
            if not spec.notebook.exists():
                res = ReportResult(spec.name, "failed", 0.0, group=spec.group, varying=dict(spec.varying),
                                   error=f"notebook {tidy_paths(str(spec.notebook))} is not on the file system of "
                                         f"worker {worker or '?'}; share the folder at the same path or run with "
                                         "--ship-data")
                res.worker = worker
                return res, {}
            if client_data:
                env["EVALLAB_DATA"] = client_data
        res = run_one(spec, out, kernel=kernel, timeout=timeout, extra_parameters=extra_parameters, env=env)
        files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} \
            if out.exists() else {}
    res.worker = worker
    return res, files


def write_files(out: Path, files: Mapping[str, bytes]) -> list[Path]:
    """Write a task's files under ``out`` (atomically, each through a temporary file beside it).

    Raises :class:`ClusterError` for a path that is absolute, contains ``..`` or would land outside ``out``;
    nothing is written then."""
    out = Path(out).resolve()
    targets = []
    for rel in files:
        p = Path(rel)
        target = (out / p).resolve()
        if p.is_absolute() or ".." in p.parts or not target.is_relative_to(out) or target == out:
            raise ClusterError(f"a task returned the file {rel!r}, which is not inside the output folder; "
                               "nothing of that run was written")
        targets.append(target)
    for target, data in zip(targets, files.values(), strict=True):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
    return targets


def _failed(spec: ReportSpec, exc: BaseException) -> ReportResult:
    name = type(exc).__name__
    msg = str(exc).strip()
    if name == "KilledWorker":
        msg = f"every worker that ran it died ({msg}); see the workers' logs"
    elif isinstance(exc, ModuleNotFoundError):
        msg += "; install the same pinned environment (evallab[dask]) on every worker"
    return ReportResult(spec.name, "failed", 0.0, error=f"{name}: {msg}", group=spec.group,
                        varying=dict(spec.varying), compare=dict(spec.compare), source=tidy_paths(str(spec.notebook)))


def _client_side(res: ReportResult, spec: ReportSpec, out: Path, written: Sequence[Path],
                 extra_parameters: Mapping | None) -> ReportResult:
    """A worker's result in the client's terms: its files under ``out``, the notebook and parameters as the client
    gave them (not the worker's copies)."""
    names = {p.name for p in written}
    out = out.resolve()
    res.html = str(out / f"{spec.name}.html") if f"{spec.name}.html" in names else None
    res.notebook = str(out / f"{spec.name}.ipynb") if f"{spec.name}.ipynb" in names else None
    res.source = tidy_paths(str(spec.notebook))
    res.parameters, res.changed, res.parameter_help = {}, [], {}
    record_parameters(res, spec.notebook, {**spec.parameters, **(extra_parameters or {})})
    res.group, res.varying, res.compare = spec.group, dict(spec.varying), dict(spec.compare)
    return res


def run_on_dask(specs: Sequence[ReportSpec], out: Path, *, scheduler: str | None = None, local_cluster: int = 0,
                ship_data: bool = False, kernel: str = "python3", progress: bool = True,
                extra_parameters: Mapping | None = None) -> dict[str, ReportResult]:
    """Run ``specs`` as Dask tasks and write what each returns under ``out``; returns name → result.

    Connects first (a :class:`ClusterError` before anything is written when the scheduler is unreachable), then
    ships the data when asked, submits one task per run and collects them as they finish with a progress bar. A
    task that raised (every worker running it died, a worker without evallab) is a failed result naming the
    error; the others still finish.
    """
    from tqdm.auto import tqdm

    bundles: dict[tuple, dict[str, bytes]] = {}
    per_spec: dict[str, tuple] = {}
    if ship_data:  # read everything before connecting: a missing file stops the batch before it starts
        for s in specs:
            files = files_to_ship(s, extra_parameters)
            key = tuple(bundle_key(f) for f in files)
            per_spec[s.name] = key
            if key not in bundles:
                bundles[key] = {k: f.read_bytes() for k, f in zip(key, files, strict=True)}
    # the client's bundled data (a checkout or EVALLAB_DATA); an installed wheel's own copy is on every worker too
    client_data = str(data_dir().resolve()) if os.environ.get("EVALLAB_DATA") or _is_checkout() else ""
    results: dict[str, ReportResult] = {}
    distributed = _distributed()
    with connect(scheduler, local_cluster) as client:
        out.mkdir(parents=True, exist_ok=True)
        scattered = {k: client.scatter([b], hash=False)[0] for k, b in bundles.items()}
        futures = {}
        for s in specs:
            f = client.submit(run_task, s, extra_parameters=extra_parameters,
                              bundle=scattered.get(per_spec.get(s.name)),
                              moved=absolute_path_parameters(s, extra_parameters) if ship_data else None,
                              client_data=client_data, kernel=kernel,
                              key=f"evallab-report-{s.name}-{uuid.uuid4().hex[:8]}", pure=False)
            futures[f] = s
        bar = tqdm(total=len(specs), desc="reports", unit="nb", disable=not progress)
        if not client.scheduler_info().get("workers"):
            bar.set_postfix_str("waiting for a worker to join the scheduler")
        t0 = time.perf_counter()
        for f in distributed.as_completed(list(futures)):
            s = futures[f]
            try:
                res, files = f.result()
                (out / f"{s.name}.metrics.json").unlink(missing_ok=True)
                written = write_files(out, files)
                res = _client_side(res, s, out, written, extra_parameters)
            except Exception as exc:  # noqa: BLE001 - a task that raised is a failed run, the batch goes on
                res = _failed(s, exc)
                res.seconds = time.perf_counter() - t0
            results[s.name] = res
            bar.set_postfix_str(f"{s.name}: {res.status}")
            bar.update()
            f.release()
        bar.close()
    return results
