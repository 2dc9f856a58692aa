"""The batch on Dask distributed: a real `dask scheduler` and `dask worker` processes on 127.0.0.1 (free ports,
stopped after each use), a grid of report runs through --scheduler, a worker killed mid-batch, --ship-data,
--local-cluster, and an unreachable scheduler."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from statsmodels.stats.proportion import proportion_confint

pytest.importorskip("distributed")

HERE = Path(__file__).parents[1] / "data" / "report"
DASK = Path(sys.executable).parent / "dask"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen, sig=signal.SIGTERM) -> None:
    """Stop a process and everything it started (the worker under a nanny, the kernels under a worker)."""
    try:
        tree = [proc.pid] + [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        tree = [proc.pid]
    for pid in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        stop(proc, signal.SIGKILL)
    for pid in tree[1:]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def dask_cluster(n_workers: int, logs: Path):
    """A `dask scheduler` and ``n_workers`` `dask worker` processes (one thread each) on 127.0.0.1; yields
    (scheduler address, {worker address: process}); every process is stopped on exit."""
    from distributed import Client

    logs.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DASK_TEMPORARY_DIRECTORY": str(logs)}  # scratch space inside the test's folder
    procs = []
    try:
        port = free_port()
        addr = f"tcp://127.0.0.1:{port}"
        procs.append(subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                       "--no-dashboard"], stdout=open(logs / "scheduler.log", "wb"),
                                      stderr=subprocess.STDOUT, start_new_session=True, env=env))
        workers = {}
        for i in range(n_workers):
            wport = free_port()
            p = subprocess.Popen([DASK, "worker", addr, "--host", "127.0.0.1", "--worker-port", str(wport),
                                  "--nthreads", "1", "--no-dashboard", "--local-directory", str(logs / f"w{i}"),
                                  "--death-timeout", "60"], stdout=open(logs / f"worker{i}.log", "wb"),
                                 stderr=subprocess.STDOUT, start_new_session=True, env=env)
            procs.append(p)
            workers[f"tcp://127.0.0.1:{wport}"] = p
        with Client(addr, timeout="60s") as c:
            c.wait_for_workers(n_workers, timeout=120)
        yield addr, workers
    finally:
        for p in reversed(procs):
            stop(p)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with dask_cluster(2, tmp_path_factory.mktemp("dask-logs")) as c:
        yield c


def project(tmp_path: Path, grid: str, extra: str = "") -> Path:
    """A project folder: the sweep notebook in nb/ and a reports.yaml with one grid entry."""
    proj = tmp_path / "proj"
    (proj / "nb").mkdir(parents=True)
    shutil.copy(HERE / "sweep.ipynb", proj / "nb" / "sweep.ipynb")
    (proj / "reports.yaml").write_text(
        "reports:\n  - name: sw\n    notebook: nb/sweep.ipynb\n"
        f"    grid: {grid}\n    compare: {{metric: rate, label: Success rate, unit: '%'}}\n{extra}")
    return proj


def evallab(args, cwd: Path, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evallab.cli", "report", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "MPLBACKEND": "Agg", **(env or {})})


def snapshot(root: Path, skip: Path) -> dict:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_relative_to(skip)}


def wilson(k: int, n: int) -> tuple[float, float, float]:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return k / n, lo, hi


@pytest.mark.slow
def test_a_grid_of_four_runs_on_a_running_scheduler(cluster, tmp_path):
    addr, workers = cluster
    proj = project(tmp_path, "{k: [2, 5], n: [10, 20]}")
    out = proj / "out"
    before = snapshot(tmp_path, out)
    r = evallab(["--config", "reports.yaml", "--scheduler", addr, "--out", "out"], proj)
    assert r.returncode == 0, r.stderr
    assert snapshot(tmp_path, out) == before  # nothing written outside --out (the notebook's folder included)
    names = ["sw-2-10", "sw-2-20", "sw-5-10", "sw-5-20"]
    index = (out / "index.html").read_text()
    assert "Sweep test: a grid of 4 runs" in index
    for name in names:
        k, n = map(int, name.split("-")[1:])
        assert (out / f"{name}.html").stat().st_size > 1000 and (out / f"{name}.ipynb").exists()
        m = json.loads((out / f"{name}.metrics.json").read_text())["metrics"]
        rate, lo, hi = wilson(k, n)
        assert (m["rate"], m["rate_low"], m["rate_high"]) == pytest.approx((rate, lo, hi))
        assert f"{100 * rate:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]" in index  # the comparison row
        assert f"href='{name}.html'" in index
    assert (out / "sw.compare.png").stat().st_size > 1000 and "<img class='compare' src='sw.compare.png'" in index
    batch = json.loads((out / "batch.json").read_text())
    assert sorted(b["name"] for b in batch) == names
    assert {b["worker"] for b in batch} <= set(workers) and all(b["status"] == "ok" for b in batch)
    assert all(b["html"] == str(out / f"{b['name']}.html") for b in batch)  # the client's paths, not a worker's
    assert "4 of 4 ran to the end" in index


@pytest.mark.slow
def test_ship_data_and_a_failing_run(cluster, tmp_path):
    addr, _ = cluster
    proj = project(tmp_path, "{n: [4, 0]}", "    parameters: {k: 1, data_path: ../data/lines.txt, "
                                            "data_file: x.txt}\n    reads: [bundled/x.txt]\n")
    (proj / "data").mkdir()
    (proj / "data" / "lines.txt").write_text("a\nb\nc\n")
    (proj / "bundled").mkdir()
    (proj / "bundled" / "x.txt").write_text("1\n2\n3\n4\n5\n")
    env = {"EVALLAB_DATA": str(proj / "bundled")}
    r = evallab(["--config", "reports.yaml", "--scheduler", addr, "--out", "shipped", "--ship-data"], proj, env)
    assert r.returncode == 1  # one run failed; the other finished
    assert "sw-0" in r.stderr and "(cell 3)" in r.stderr and "ZeroDivisionError" in r.stderr
    m = json.loads((proj / "shipped" / "sw-4.metrics.json").read_text())["metrics"]
    assert m["data_path_lines"] == 3 and m["data_file_lines"] == 5
    for key in ("data_path_real", "data_file_real", "cwd"):  # the worker read its own copies ...
        assert not Path(m[key]).is_relative_to(tmp_path) and "evallab-run-" in m[key], m[key]
    assert not Path(m["cwd"]).exists()  # ... in a temporary folder deleted after the task
    batch = {b["name"]: b for b in json.loads((proj / "shipped" / "batch.json").read_text())}
    assert batch["sw-0"]["status"] == "failed" and batch["sw-0"]["cell"] == 3
    assert batch["sw-4"]["parameters"]["data_path"] == "../data/lines.txt"  # shown as the user gave it
    # without --ship-data the worker reads the same files by path
    r = evallab(["--config", "reports.yaml", "--scheduler", addr, "--out", "by_path", "--only", "sw-4"], proj, env)
    assert r.returncode == 0, r.stderr
    m = json.loads((proj / "by_path" / "sw-4.metrics.json").read_text())["metrics"]
    assert m["data_path_real"] == str((proj / "data" / "lines.txt").resolve())
    assert m["data_file_real"] == str((proj / "bundled" / "x.txt").resolve())
    assert m["cwd"] == str((proj / "nb").resolve())


@pytest.mark.slow
def test_a_worker_killed_mid_run_is_replaced_and_the_batch_completes(tmp_path_factory, tmp_path):
    with dask_cluster(2, tmp_path_factory.mktemp("dask-kill")) as (addr, workers):
        proj = project(tmp_path, "{k: [1, 2], n: [10, 20]}", "    parameters: {sleep_s: 3.0}\n")
        cli = subprocess.Popen([sys.executable, "-m", "evallab.cli", "report", "--config", "reports.yaml",
                                "--scheduler", addr, "--out", "out"], cwd=proj, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "MPLBACKEND": "Agg"})
        try:
            victim, survivor = list(workers)
            proc = psutil.Process(workers[victim].pid)
            deadline = time.monotonic() + 120
            while not any("ipykernel" in " ".join(c.cmdline()) for c in proc.children(recursive=True)):
                assert time.monotonic() < deadline and cli.poll() is None, "no kernel started on the worker"
                time.sleep(0.1)
            stop(workers[victim], signal.SIGKILL)  # the machine is gone: nanny, worker and kernel
            stdout, stderr = cli.communicate(timeout=600)
        finally:
            if cli.poll() is None:
                cli.kill()
        assert cli.returncode == 0, stderr
        batch = json.loads((proj / "out" / "batch.json").read_text())
        names = sorted(b["name"] for b in batch)
        assert names == ["sw-1-10", "sw-1-20", "sw-2-10", "sw-2-20"]  # every run present once
        assert {b["worker"] for b in batch} == {survivor}  # the killed run was retried on the other worker
        assert all(b["status"] == "ok" for b in batch)
        for n in names:
            assert (proj / "out" / f"{n}.html").exists() and (proj / "out" / f"{n}.metrics.json").exists()
        assert sorted(p.name for p in (proj / "out").glob("*.metrics.json")) == [f"{n}.metrics.json" for n in names]


@pytest.mark.slow
def test_local_cluster_runs_the_grid_and_closes(tmp_path):
    import tempfile

    proj = project(tmp_path, "{k: [3], n: [6, 12]}")
    scratch = Path(tempfile.gettempdir()) / "dask-scratch-space"  # Dask's default scratch space
    existed = scratch.exists()
    r = evallab(["--config", "reports.yaml", "--local-cluster", "2", "--out", "out"], proj)
    assert r.returncode == 0, r.stderr
    for name, (k, n) in {"sw-3-6": (3, 6), "sw-3-12": (3, 12)}.items():
        m = json.loads((proj / "out" / f"{name}.metrics.json").read_text())["metrics"]
        assert m["rate"] == pytest.approx(k / n)
    assert "a grid of 2 runs" in (proj / "out" / "index.html").read_text()
    assert "reports: 100%" in r.stderr  # the progress bar
    assert existed or not scratch.exists()  # the cluster's scratch space was a temporary folder, removed
    assert sorted(p.name for p in (proj / "out").iterdir()) == [
        "batch.json", "index.html", "sw-3-12.html", "sw-3-12.ipynb", "sw-3-12.metrics.json", "sw-3-6.html",
        "sw-3-6.ipynb", "sw-3-6.metrics.json", "sw.compare.csv", "sw.compare.png"]


def test_an_unreachable_scheduler_is_one_line_naming_it(tmp_path):
    proj = project(tmp_path, "{n: [4, 8]}")
    addr = f"tcp://127.0.0.1:{free_port()}"
    t0 = time.monotonic()
    r = evallab(["--config", "reports.yaml", "--scheduler", addr, "--out", "out"], proj,
                {"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"})
    assert r.returncode == 2 and time.monotonic() - t0 < 60
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot reach the Dask scheduler at {addr}"), r.stderr
    assert "Traceback" not in r.stderr and not (proj / "out").exists()


# ------------------------------------------------------------------------ the pieces, without a cluster
def test_returned_files_outside_out_are_refused_and_nothing_is_written(tmp_path):
    from evallab.reporting._cluster import ClusterError, write_files

    out = tmp_path / "out"
    for bad in ("../x.html", "/etc/x.html", "a/../../x.html", "."):
        with pytest.raises(ClusterError, match="not inside the output folder"):
            write_files(out, {"ok.html": b"fine", bad: b"evil"})
    assert not out.exists() and not (tmp_path / "x.html").exists()
    written = write_files(out, {"r.html": b"<html>", "r.tables/01-t.csv": b"a\n1\n"})
    assert sorted(p.relative_to(out).as_posix() for p in written) == ["r.html", "r.tables/01-t.csv"]
    assert (out / "r.tables" / "01-t.csv").read_bytes() == b"a\n1\n"
    assert sorted(p.name for p in out.rglob("*")) == ["01-t.csv", "r.html", "r.tables"]  # no temporary files left


def test_files_to_ship_are_the_notebook_its_reads_and_path_parameters(tmp_path):
    from evallab.reporting._batch import load_config
    from evallab.reporting._cluster import ClusterError, files_to_ship

    proj = project(tmp_path, "{n: [4, 8]}", "    parameters: {data_path: ../data/lines.txt, data_file: x.txt}\n"
                                            "    reads: [bundled/]\n")
    (proj / "data").mkdir()
    (proj / "data" / "lines.txt").write_text("a\n")
    (proj / "bundled" / "sub").mkdir(parents=True)
    (proj / "bundled" / "sub" / "x.txt").write_text("1\n")
    spec = load_config(proj / "reports.yaml")[0]
    assert [p.relative_to(proj).as_posix() for p in files_to_ship(spec)] == [
        "bundled/sub/x.txt", "data/lines.txt", "nb/sweep.ipynb"]  # data_file is not a path from the notebook
    spec.reads = [str(proj / "missing.csv")]
    with pytest.raises(ClusterError, match="'reads' names .*missing.csv, which does not exist"):
        files_to_ship(spec)


def test_a_task_without_the_notebook_on_its_file_system_says_so(tmp_path):
    from evallab.reporting._batch import ReportSpec
    from evallab.reporting._cluster import run_task

    res, files = run_task(ReportSpec("r", tmp_path / "elsewhere" / "nb.ipynb"))
    assert res.status == "failed" and files == {}
    assert "is not on the file system of worker" in res.error and "--ship-data" in res.error


@pytest.mark.slow
def test_a_task_runs_from_its_shipped_copies(tmp_path):
    from evallab.reporting._batch import load_config
    from evallab.reporting._cluster import absolute_path_parameters, bundle_key, files_to_ship, run_task

    proj = project(tmp_path, "{n: [4]}", f"    parameters: {{k: 2, data_path: {tmp_path / 'lines.txt'}}}\n")
    (tmp_path / "lines.txt").write_text("a\nb\n")
    spec = load_config(proj / "reports.yaml")[0]
    bundle = {bundle_key(p): p.read_bytes() for p in files_to_ship(spec)}
    (tmp_path / "lines.txt").write_text("changed after shipping\n")  # the task must read its copy
    assert absolute_path_parameters(spec) == {"data_path": bundle_key(tmp_path / "lines.txt")}
    res, files = run_task(spec, bundle=bundle, moved=absolute_path_parameters(spec))
    assert res.status == "ok", res.error
    assert set(files) == {"sw-4.ipynb", "sw-4.html", "sw-4.metrics.json"}
    m = json.loads(files["sw-4.metrics.json"])["metrics"]
    assert m["data_path_lines"] == 2 and m["rate"] == 0.5


@pytest.mark.slow
def test_runs_in_threads_of_one_worker_keep_their_own_folder_and_environment(tmp_path):
    """A Dask worker with --nthreads 2 runs two notebooks at once in one process: neither may change the process's
    working folder or environment under the other (the kernel gets its folder and variables at start)."""
    from concurrent.futures import ThreadPoolExecutor

    from evallab.reporting._batch import ReportSpec, run_one

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        shutil.copy(HERE / "sweep.ipynb", tmp_path / d / "sweep.ipynb")
        (tmp_path / d / "data.txt").write_text("x\n" * (3 if d == "a" else 5))
    cwd, env = os.getcwd(), dict(os.environ)
    specs = [ReportSpec(f"{d}{k}", tmp_path / d / "sweep.ipynb", {"k": k, "n": 8, "sleep_s": 0.5,
                                                                   "data_path": "data.txt"})
             for k in (1, 2) for d in ("a", "b")]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda s: run_one(s, tmp_path / "out", env={"EVALLAB_DATA": str(tmp_path)}), specs))
    assert os.getcwd() == cwd and dict(os.environ) == env
    for s, r in zip(specs, results, strict=True):
        assert r.status == "ok", r.error
        m = json.loads((tmp_path / "out" / f"{s.name}.metrics.json").read_text())["metrics"]
        assert m["cwd"] == str(s.notebook.parent) and m["rate"] == s.parameters["k"] / 8
        assert m["data_path_lines"] == (3 if s.name.startswith("a") else 5)
