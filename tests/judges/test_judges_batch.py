"""Issue 13: the OpenAI Batch API against the local server's /v1/files and /v1/batches (offline)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from evallab.judges import OpenAICompatibleJudge, build_pointwise, run_jobs
from evallab.testing import LocalJudgeServer, SimulatedJudge

RUBRIC = {"rubric": "Wraps the error.", "pass_criteria": ["Uses %w."]}


def test_batch_run_parses_every_reply_at_half_price(tmp_path):
    sim = SimulatedJudge(seed=6, pass_rate=0.5)
    reqs = [build_pointwise(**RUBRIC, answer=f"a{i}", metadata={"item_id": f"i{i}", "sample": i % 2})
            for i in range(30)]
    prices = {"sim-judge": [2.0, 8.0]}
    with LocalJudgeServer(sim, batch_seconds=0.2) as srv:
        j = OpenAICompatibleJudge(srv.base_url, "sim-judge", prices=prices, cache=tmp_path / "c.sqlite")
        df = run_jobs(j, reqs, out=tmp_path / "v.parquet", batch=True, poll_interval=0.05, progress=False)
        st = srv.stats()
        live = run_jobs(OpenAICompatibleJudge(srv.base_url, "sim-judge", prices=prices), reqs, progress=False)
    assert st["batches_created"] == 1 and st["batch_lines"] == 30 and st["requests"] == 0  # no live call
    assert df["verdict"].tolist() == [sim.decide(r.system, r.user, r.metadata["sample"])[0] for r in reqs]
    assert not df["failed"].any() and not (tmp_path / "v.parquet.batch.json").exists()
    # same tokens as a live call, half the price
    assert df["input_tokens"].tolist() == live["input_tokens"].tolist()
    assert df["cost_usd"].astype(float).tolist() == pytest.approx((live["cost_usd"].astype(float) / 2).tolist())
    assert len(pd.read_parquet(tmp_path / "v.parquet")) == 30
    assert df.attrs["run"]["batch_replies"] == 30 and df.attrs["run"]["calls"] == 0
    from evallab.judges._runner import cost_text

    assert cost_text(df.attrs["run"]).startswith("$")  # paid through the batch, not "nothing"


def test_batch_of_2000_resumes_once_after_a_kill(tmp_path):
    """2,000 requests through `evallab judge --batch`; the client is killed while it polls; the rerun polls the
    same batch (none created twice) and every reply is parsed."""
    n = 2000
    items = tmp_path / "items.jsonl"
    with open(items, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"item_id": f"it{i:04d}", **RUBRIC, "answer": f"answer {i}"}) + "\n")
    out = tmp_path / "v.parquet"
    state = tmp_path / "v.parquet.batch.json"
    sim = SimulatedJudge(seed=8)
    with LocalJudgeServer(sim, batch_seconds=6.0) as srv:
        cmd = [sys.executable, "-m", "evallab.cli", "judge", str(items), "--judge", f"sim-judge@{srv.base_url}",
               "--out", str(out), "--no-cache", "--batch", "--poll", "0.1", "--no-progress"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not state.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state.exists()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        batch_id = json.loads(state.read_text())["batch_id"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        st = srv.stats()
    assert st["batches_created"] == 1 and st["batch_lines"] == n and st["requests"] == 0
    assert batch_id == "batch_sim_1" and not state.exists()
    table = pd.read_parquet(out)
    assert len(table) == n and table["item_id"].is_unique and table["verdict"].notna().all()
    from evallab.datasets._generic import read_table
    from evallab.judges._items import requests_from_items

    reqs = requests_from_items(read_table(items), kind="auto", orders=["ab"], samples=1, temperature=0.0,
                               seed=None, max_tokens=None, path=items)
    want = {r.metadata["item_id"]: sim.decide(r.system, r.user, 0)[0] for r in reqs}
    assert dict(zip(table["item_id"], table["verdict"], strict=True)) == want


def test_batch_input_file_is_one_openai_request_line_per_body_and_sample():
    """The Batch API's input format (platform.openai.com/docs/guides/batch: one JSON object per line with
    ``custom_id``, ``method``, ``url`` and ``body``); the same body and sample twice is sent once."""
    from evallab.judges._batch import request_lines

    j = OpenAICompatibleJudge("http://127.0.0.1:9/v1", "m", api_key_env="")
    reqs = [build_pointwise(**RUBRIC, answer="an answer", metadata={"sample": s}) for s in (0, 1, 1)]
    lines = [json.loads(x) for x in request_lines(j, reqs).decode().splitlines()]
    assert len(lines) == 2 and {x["method"] for x in lines} == {"POST"}
    assert {x["url"] for x in lines} == {"/v1/chat/completions"}
    assert lines[0]["custom_id"].endswith("-s0") and lines[1]["custom_id"].endswith("-s1")
    assert lines[0]["body"]["model"] == "m" and lines[0]["body"]["messages"][-1]["content"]
