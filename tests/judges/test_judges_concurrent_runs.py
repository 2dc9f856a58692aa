"""Issue 13: two `evallab judge` processes on one output (and one cache) — every key exactly once, no paid call
made twice, the second run told who holds the output; credentials in a URL refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from evallab.testing import LocalJudgeServer, SimulatedJudge

N = 40


def _items(path):
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(N):
            fh.write(json.dumps({"item_id": f"it{i:03d}", "rubric": "Wraps the error.", "pass_criteria": ["%w"],
                                 "answer": f"answer {i}"}) + "\n")
    return path


def _cmd(items, srv, out, cache, *extra):
    return [sys.executable, "-m", "evallab.cli", "judge", str(items), "--judge", f"sim-judge@{srv.base_url}",
            "--out", str(out), "--cache", str(cache), "--concurrency", "4", "--no-progress", *extra]


def _rows(out):
    if out.suffix == ".jsonl":
        return [json.loads(line) for line in out.read_text().splitlines()]
    return pd.read_parquet(out).to_dict("records")


def _wait_for_rows(journal, n, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if journal.exists() and journal.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.02)
    raise AssertionError(f"{journal}: fewer than {n} rows after {timeout} s")


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_second_run_without_wait_stops_at_once_naming_the_holder(tmp_path, fmt):
    items, out = _items(tmp_path / "items.jsonl"), tmp_path / f"v.{fmt}"
    journal = out if fmt == "jsonl" else tmp_path / f"v.{fmt}.journal.jsonl"
    # slow replies keep the first run holding the lock while the second process starts (a loaded CI machine takes
    # seconds to start Python), so "stops at once" is what is tested, not a race
    with LocalJudgeServer(SimulatedJudge(seed=1), latency=2.0) as srv:
        first = subprocess.Popen(_cmd(items, srv, out, tmp_path / "c.sqlite"), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        _wait_for_rows(journal, 5)
        second = subprocess.run(_cmd(items, srv, out, tmp_path / "c.sqlite"), capture_output=True, text=True,
                                timeout=60)
        assert first.wait(120) == 0, first.stderr.read()
        asked = srv.stats()["requests"]
    assert second.returncode == 2 and "Traceback" not in second.stderr
    err = second.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and f"pid {first.pid}" in err[0] and "--wait" in err[0]
    rows = _rows(out)
    assert sorted(r["item_id"] for r in rows) == [f"it{i:03d}" for i in range(N)]  # every key exactly once
    assert asked == N  # the second run asked nothing


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_two_runs_with_wait_answer_every_key_once_and_pay_once(tmp_path, fmt):
    """Interleavings: both started together (either may win the lock); the second started mid-run."""
    items = _items(tmp_path / "items.jsonl")
    for start_after in (0, 8):
        out, cache = tmp_path / f"v{start_after}.{fmt}", tmp_path / f"c{start_after}.sqlite"
        journal = out if fmt == "jsonl" else tmp_path / f"v{start_after}.{fmt}.journal.jsonl"
        with LocalJudgeServer(SimulatedJudge(seed=1), latency=0.2) as srv:
            a = subprocess.Popen(_cmd(items, srv, out, cache, "--wait"), stderr=subprocess.PIPE, text=True,
                                 stdout=subprocess.DEVNULL)
            if start_after:
                _wait_for_rows(journal, start_after)
            b = subprocess.Popen(_cmd(items, srv, out, cache, "--wait"), stderr=subprocess.PIPE, text=True,
                                 stdout=subprocess.DEVNULL)
            assert a.wait(120) == 0, a.stderr.read()
            assert b.wait(120) == 0, b.stderr.read()
            asked = srv.stats()["requests"]
        rows = _rows(out)
        assert sorted(r["item_id"] for r in rows) == [f"it{i:03d}" for i in range(N)], start_after
        assert asked == N, start_after  # no paid call made twice
        assert not journal.exists() or fmt == "jsonl"


def test_a_run_killed_holding_the_lock_frees_it_and_the_next_resumes(tmp_path):
    items, out = _items(tmp_path / "items.jsonl"), tmp_path / "v.parquet"
    journal = tmp_path / "v.parquet.journal.jsonl"
    with LocalJudgeServer(SimulatedJudge(seed=1), latency=0.05) as srv:
        a = subprocess.Popen(_cmd(items, srv, out, tmp_path / "c.sqlite"), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        _wait_for_rows(journal, 10)
        os.kill(a.pid, signal.SIGKILL)
        a.wait()
        before = sum(1 for line in journal.read_text().splitlines() if line.endswith("}"))
        b = subprocess.run(_cmd(items, srv, out, tmp_path / "c.sqlite"), capture_output=True, text=True,
                           timeout=120)
        asked = srv.stats()["requests"]
    assert b.returncode == 0, b.stderr
    rows = _rows(out)
    assert sorted(r["item_id"] for r in rows) == [f"it{i:03d}" for i in range(N)]
    # replies written before the kill are not asked again; at most the 4 in flight at the kill are asked twice
    assert asked <= N + 4 and asked - (N - before) <= 4 + before


def test_credentials_in_the_base_url_are_refused_in_one_line_and_stored_nowhere(tmp_path, capsys):
    from cli_helper import run_cli

    items = _items(tmp_path / "items.jsonl")
    secret = "sk-evallab-url-secret-77aa"
    for spec in (["--judge", f"m@http://user:{secret}@127.0.0.1:9/v1"],
                 ["--base-url", f"http://{secret}@127.0.0.1:9/v1", "--model", "m"]):
        code, text = run_cli(["judge", str(items), *spec, "--out", str(tmp_path / "v.jsonl"), "--cache",
                              str(tmp_path / "c.sqlite"), "--record", str(tmp_path / "rec.json")], capsys)
        assert code == 2 and "Traceback" not in text
        lines = text.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "credentials" in lines[0]
        assert secret not in text
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert secret.encode() not in p.read_bytes(), p
