"""Issue 30 item 3: the one-run-per-output lock leaves no ``<out>.lock`` after a finished, failed or refused run,
and still admits one holder at a time (also when a waiter had opened the file before the holder removed it)."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys

import pytest

from evallab.judges._outlock import LockTimeout, OutputLock


def test_release_removes_the_file_and_a_second_holder_is_refused_meanwhile(tmp_path):
    path = tmp_path / "v.csv.lock"
    a, b = OutputLock(path), OutputLock(path)
    a.acquire(timeout=0)
    assert path.exists() and a.is_locked
    with pytest.raises(LockTimeout):
        b.acquire(timeout=0)
    with pytest.raises(LockTimeout):
        b.acquire(timeout=0.2, poll_interval=0.02)
    a.release()
    assert not path.exists() and not a.is_locked
    b.acquire(timeout=0)
    b.release()
    assert not path.exists()
    a.release()  # idempotent


def test_a_waiter_that_locks_the_removed_file_does_not_count_as_holder(tmp_path):
    path = tmp_path / "v.jsonl.lock"
    a = OutputLock(path)
    a.acquire(timeout=0)
    stale = os.open(path, os.O_RDWR)  # a waiter opened the file before the holder released it
    a.release()
    fcntl.flock(stale, fcntl.LOCK_EX | fcntl.LOCK_NB)  # it can lock the removed inode ...
    c = OutputLock(path)
    c.acquire(timeout=0)  # ... but the lock is the file at the path, which c now holds
    assert os.fstat(stale).st_ino != os.stat(path).st_ino
    with pytest.raises(LockTimeout):
        OutputLock(path).acquire(timeout=0)
    os.close(stale)
    c.release()
    assert not path.exists()


def test_a_killed_holders_file_is_taken_over_and_then_removed(tmp_path):
    path = tmp_path / "v.parquet.lock"
    path.write_text("")  # left by a run killed with SIGKILL (the kernel dropped its flock)
    lock = OutputLock(path)
    lock.acquire(timeout=0)
    lock.release()
    assert not path.exists()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_finished_and_a_refused_connection_run_leave_no_lock_beside_the_output(tmp_path):
    from evallab.testing import LocalJudgeServer, SimulatedJudge

    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item_id": f"it{i}", "rubric": "Wraps the error.", "pass_criteria": ["%w"],
                                        "answer": f"a {i}"})
                             + "\n" for i in range(3)), encoding="utf-8")

    def judge(url, out):
        return subprocess.run([sys.executable, "-m", "evallab.cli", "judge", str(items), "--judge",
                               f"sim-judge@{url}", "--out", str(out), "--no-cache", "--no-progress",
                               "--retries", "0", "--timeout", "5"], capture_output=True, text=True, timeout=120)

    with LocalJudgeServer(SimulatedJudge(seed=1)) as srv:
        done = judge(srv.base_url, tmp_path / "good.csv")
    assert done.returncode == 0, done.stderr
    bad = judge(f"http://127.0.0.1:{_closed_port()}/v1", tmp_path / "bad.csv")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert "good.csv" in left and not [n for n in left if ".lock" in n], (left, bad.stderr)
