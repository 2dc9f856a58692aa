"""The batch runner's kernels (:mod:`evallab.reporting._batch_run`): their share of the cores."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

import evallab.reporting._batch as batch
from evallab.reporting._batch_config import ReportSpec
from evallab.reporting._batch_run import THREAD_VARIABLES, ReportResult, thread_limits


def _cores(monkeypatch, n: int) -> None:
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(n)), raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: n)
    for v in THREAD_VARIABLES:
        monkeypatch.delenv(v, raising=False)


def test_each_kernel_gets_its_share_of_the_cores(monkeypatch):
    _cores(monkeypatch, 8)
    assert thread_limits(2) == {v: "4" for v in THREAD_VARIABLES}
    assert thread_limits(3) == {v: "2" for v in THREAD_VARIABLES}  # 8 // 3
    assert thread_limits(16) == {v: "1" for v in THREAD_VARIABLES}  # never 0
    assert thread_limits(1) == {}  # one kernel: the libraries' own default (every core)


def test_a_limit_the_user_set_is_kept(monkeypatch):
    _cores(monkeypatch, 2)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert thread_limits(2) == {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class _Inline:
    """A stand-in for the process pool: runs each task at once, in this process."""

    def __init__(self, max_workers: int):
        self.max_workers = max_workers

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, fn, *args, **kw):
        f = Future()
        f.set_result(fn(*args, **kw))
        return f


def test_a_parallel_batch_starts_its_kernels_with_the_limits(monkeypatch, tmp_path):
    _cores(monkeypatch, 2)
    seen = {}

    def run_one(spec, out, *, kernel, extra_parameters, env=None):
        seen[spec.name] = env
        return ReportResult(spec.name, "ok", 1.0)

    monkeypatch.setenv("EVALLAB_STATE", str(tmp_path / "state"))  # the batch records its seconds there
    monkeypatch.setattr(batch, "ProcessPoolExecutor", _Inline)
    monkeypatch.setattr(batch, "run_one", run_one)
    specs = [ReportSpec(name=n, notebook=Path(f"/nowhere/{n}.ipynb"), parameters={}) for n in ("a", "b")]
    batch.run_report_batch(specs, tmp_path, jobs=2, progress=False)
    assert seen == {"a": {v: "1" for v in THREAD_VARIABLES}, "b": {v: "1" for v in THREAD_VARIABLES}}
