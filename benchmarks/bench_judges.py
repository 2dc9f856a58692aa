"""Live-judge throughput against the local OpenAI-compatible server (issue 3, "make bench").

Workload: 2,000 pointwise requests, 50 ms server latency, concurrency 32 — the limit is 32 / 0.05 s = 640
requests/s. The server runs in a separate process (:class:`evallab.testing.LocalJudgeServer`, ``process=True``).
In the same run, the same request bodies go through:

- evallab: :func:`evallab.judges.run_jobs` with :class:`~evallab.judges.OpenAICompatibleJudge` (aiohttp session,
  adaptive concurrency limit, tenacity retries, sqlite cache writes, JSON-lines output, parsing), a new judge
  each run on an endpoint evallab has already run on in the process, so its limit starts where the last run's
  ended;
- evallab again as the FIRST judge on the endpoint (the learnt limits forgotten before each run): its limit
  starts at 2 and grows — the cost of starting low, reported beside it;
- a bare aiohttp loop (``ClientSession`` + semaphore: the practical ceiling on this machine);
- the official ``openai`` SDK's ``AsyncOpenAI`` with a semaphore;
- evallab with httpx's own transport (``transport="httpx"``), for the record of why aiohttp is the default;
- evallab again from its cache: HTTP calls (must be 0) and time.

Issue 13, a server answering ONE request at a time (``LocalJudgeServer(serial=True)``, like llama.cpp's server with
one slot): 30 pairs in both orders = 60 calls at 0.5 s each, timeout 3 s, every other option at its default. The
wall time over the sequential service time (60 × 0.5 s = 30 s) must stay <= 1.3 with 0 failed calls.

Issue 27, several samples in one request (``share_samples=True``: ``n`` choices where the endpoint takes it): 100
items x 5 samples at temperature 0.7 against a server answering ``n`` (50 ms latency), once with one request per
sample and once with one request per item; the prompt tokens the server counted and the wall time of each.

Each live variant runs ``REPEATS`` times, interleaved (a round runs every variant once), each timed from its call
to its return (event loop, session set-up and closing included for every variant, as they are in ``run_jobs``).
The gated ratios against bare aiohttp are PAIRED: the ratio within each round, whose variants ran one after the
other, then the median over rounds with their range — on two cores shared with the server and other work one
lucky or unlucky run of one variant moves a ratio of best times by 10-30 %. The best time of each variant is
reported too. The client CPU per request is reported beside each throughput: on an idle machine
every client reaches the limit; when the two cores are busy (other work, the server), throughput falls with the
CPU a client spends per request — plain httpx and the SDK fall first.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

N = 2000
LATENCY = 0.05
CONCURRENCY = 32
REPEATS = 5
LIMIT = CONCURRENCY / LATENCY  # requests/s


def _cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _requests():
    from evallab.judges import build_pointwise

    return [build_pointwise(rubric="A correct answer wraps the error with %w and returns it.",
                            pass_criteria=["Wraps the error with %w.", "Returns it to the caller."],
                            fail_criteria=["Discards the error."], answer=f"Answer {i}: return fmt.Errorf(...)",
                            metadata={"item_id": f"bench-{i}", "dataset": "bench"}) for i in range(N)]


async def _bare_aiohttp(url: str, bodies: list[bytes]) -> float:
    import aiohttp

    sem = asyncio.Semaphore(CONCURRENCY)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as s:
        async def one(b: bytes) -> None:
            async with sem:
                async with s.post(url, data=b, headers={"Content-Type": "application/json"}) as r:
                    doc = await r.json()
                    assert doc["choices"][0]["message"]["content"]

        t0 = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies))
        return time.perf_counter() - t0


async def _openai_sdk(base_url: str, reqs) -> float:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="bench-not-a-key", max_retries=0)
    sem = asyncio.Semaphore(CONCURRENCY)

    async def one(r) -> None:
        async with sem:
            out = await client.chat.completions.create(
                model="sim-judge", messages=[{"role": m.role, "content": m.content} for m in r.messages],
                temperature=r.temperature)
            assert out.choices[0].message.content

    t0 = time.perf_counter()
    await asyncio.gather(*(one(r) for r in reqs))
    dt = time.perf_counter() - t0
    await client.close()
    return dt


def _evallab(base_url: str, reqs, tmp: Path, tag: str, *, transport: str = "aiohttp", cache_path=None,
             cold: bool = False):
    from evallab.judges import OpenAICompatibleJudge, run_jobs
    from evallab.judges._cache import Cache

    if cold:  # the first judge on this endpoint in the process: its limit starts at 2
        OpenAICompatibleJudge.forget_learnt_limits()
    cache = Cache(cache_path or tmp / f"cache-{tag}.sqlite")
    judge = OpenAICompatibleJudge(base_url, "sim-judge", max_concurrency=CONCURRENCY, cache=cache,
                                  transport=transport)
    t0 = time.perf_counter()
    df = run_jobs(judge, reqs, out=tmp / f"out-{tag}.jsonl", progress=False)
    dt = time.perf_counter() - t0
    assert len(df) == len(reqs) and df["verdict"].notna().all(), "evallab run lost replies"
    return dt, judge.stats.calls


def _serial() -> dict:
    from evallab.judges import OpenAICompatibleJudge, build_pairwise, run_jobs
    from evallab.testing import LocalJudgeServer, SimulatedJudge

    service, n_pairs = 0.5, 30
    reqs = [build_pairwise("Pick the better one", f"first {i}", f"second {i}", order=o,
                           metadata={"item_id": f"p{i}"}) for i in range(n_pairs) for o in ("ab", "ba")]
    with LocalJudgeServer(SimulatedJudge(seed=1), latency=service, serial=True, process=True) as srv:
        judge = OpenAICompatibleJudge(srv.base_url, "sim-judge", timeout=3.0)
        t0 = time.perf_counter()
        df = run_jobs(judge, reqs, progress=False)
        dt = time.perf_counter() - t0
        st = srv.stats()
    failed = int(df["failed"].sum())
    ratio = dt / (len(reqs) * service)
    return {"name": "one-at-a-time server: wall / sequential service time", "value": ratio, "target": "<= 1.3",
            "ok": ratio <= 1.3 and failed == 0,
            "detail": f"{len(reqs)} calls x {service} s, timeout 3 s, defaults: {dt:.1f} s, {failed} failed, "
                      f"{judge.stats.calls} HTTP calls, at most {st['max_in_flight']} at the server at once, "
                      f"limit cut {judge.limiter.cuts} times"}


def run() -> list[dict]:
    import os

    from evallab.judges import OpenAICompatibleJudge
    from evallab.testing import LocalJudgeServer, SimulatedJudge

    load0 = os.getloadavg()[0]
    reqs = _requests()
    probe = OpenAICompatibleJudge("http://127.0.0.1:1/v1", "sim-judge")
    bodies = [json.dumps(probe.body(r)).encode() for r in reqs]
    best: dict[str, float] = {}
    cpu: dict[str, float] = {}  # client CPU seconds (user + system) of the run, best of REPEATS
    rounds: dict[str, list[tuple[float, float]]] = {}  # (seconds, CPU seconds) of each round, per variant
    with tempfile.TemporaryDirectory() as d, LocalJudgeServer(SimulatedJudge(seed=3), latency=LATENCY,
                                                              process=True) as srv:
        tmp = Path(d)
        url = srv.base_url + "/chat/completions"
        asyncio.run(_bare_aiohttp(url, bodies[:200]))  # warm-up (connections, imports)
        _evallab(srv.base_url, reqs[:200], tmp, "warm")  # imports; the endpoint's limit learnt, as after any run
        for rep in range(REPEATS):
            runs = {
                "bare aiohttp": lambda: asyncio.run(_bare_aiohttp(url, bodies)),
                "evallab": lambda rep=rep: _evallab(srv.base_url, reqs, tmp, f"a{rep}")[0],
                "evallab, first judge on the endpoint": lambda rep=rep: _evallab(srv.base_url, reqs, tmp, f"c{rep}",
                                                                               cold=True)[0],
                "openai SDK": lambda: asyncio.run(_openai_sdk(srv.base_url, reqs)),
                "evallab, httpx transport": lambda rep=rep: _evallab(srv.base_url, reqs, tmp, f"h{rep}",
                                                                     transport="httpx")[0],
            }
            for name, fn in runs.items():
                # every variant timed as its caller sees it, from the call to the return: its event loop, its
                # HTTP session's creation and closing included, as they are in evallab's run_jobs
                c0, t0 = _cpu(), time.perf_counter()
                fn()
                dt = time.perf_counter() - t0
                c = _cpu() - c0
                cpu[name] = min(cpu.get(name, float("inf")), c)
                best[name] = min(best.get(name, float("inf")), dt)
                rounds.setdefault(name, []).append((dt, c))
        before = srv.stats()["requests"]
        rerun_s, calls = _evallab(srv.base_url, reqs, tmp, "rerun", cache_path=tmp / "cache-a0.sqlite")
        server_seen = srv.stats()["requests"] - before
    frac = {k: N / v / LIMIT for k, v in best.items()}
    load1 = os.getloadavg()[0]
    rows = [{"name": f"{k}: throughput / limit (32 / 0.05 s)", "value": frac[k], "target": "",
             "ok": None, "detail": f"{N / best[k]:.0f} req/s, best of {REPEATS}: {best[k]:.2f} s; client CPU "
                                    f"{1e6 * cpu[k] / N:.0f} us/request"}
            for k in ("evallab", "evallab, first judge on the endpoint", "bare aiohttp", "openai SDK",
                      "evallab, httpx transport")]
    # the gated ratios are paired: each round runs the variants one after the other, so a round's ratio cancels
    # what slowed that round down (the two cores are shared with the server and whatever else runs); the median
    # over rounds is reported with their range, and the ratio of the best runs beside it
    def paired(name: str, cpu_ratio: bool) -> tuple[float, float, float]:
        rs = sorted((a[1] / b[1]) if cpu_ratio else (b[0] / a[0])
                    for a, b in zip(rounds[name], rounds["bare aiohttp"], strict=True))
        return statistics.median(rs), rs[0], rs[-1]

    r_aio, lo_aio, hi_aio = paired("evallab", False)
    r_cold, lo_cold, hi_cold = paired("evallab, first judge on the endpoint", False)
    r_cpu, lo_cpu, hi_cpu = paired("evallab", True)
    r_sdk = frac["evallab"] / frac["openai SDK"]
    rows += [
        {"name": "evallab / bare aiohttp", "value": r_aio, "target": ">= 0.95", "ok": r_aio >= 0.95,
         "detail": f"throughput, median of {REPEATS} paired rounds (range {lo_aio:.3f}-{hi_aio:.3f}; best / best "
                   f"{frac['evallab'] / frac['bare aiohttp']:.3f}); a judge on an endpoint evallab has run on in "
                   "this process starts from the limit learnt there (bare aiohttp: 32 from the start)"},
        {"name": "evallab, first judge on the endpoint / bare aiohttp", "value": r_cold, "target": "", "ok": None,
         "detail": f"throughput, median of {REPEATS} paired rounds (range {lo_cold:.3f}-{hi_cold:.3f}); its limit "
                   "starts at 2 and grows (slow start: about 3 round trips of 50 ms below 32 in flight)"},
        {"name": "client CPU per request: evallab / bare aiohttp", "value": r_cpu, "target": "<= 1.5",
         "ok": r_cpu <= 1.5, "detail": f"median of {REPEATS} paired rounds (range {lo_cpu:.2f}-{hi_cpu:.2f}); best "
                                      f"of each {1e6 * cpu['evallab'] / N:.0f} vs {1e6 * cpu['bare aiohttp'] / N:.0f} "
                                      "us/request (user + system); evallab also caches, journals and parses every "
                                      "reply"},
        {"name": "evallab / openai SDK AsyncOpenAI", "value": r_sdk, "target": ">= 1.5", "ok": r_sdk >= 1.5,
         "detail": "same workload, same run"},
        {"name": "rerun from cache: HTTP calls", "value": float(max(calls, server_seen)), "target": "== 0",
         "ok": calls == 0 and server_seen == 0, "detail": f"client counted {calls}, server saw {server_seen}"},
        {"name": "machine load (1-min average, before/after)", "value": load1, "target": "", "ok": None,
         "detail": f"{load0:.2f} before; {os.cpu_count()} cores shared with the server and any other work"},
        {"name": "rerun from cache: seconds", "value": rerun_s, "target": "", "ok": None,
         "detail": f"{N} replies from sqlite; live evallab run {best['evallab']:.2f} s"},
    ]
    rows.append(_serial())
    rows += _shared_samples()
    rows.append(_batch_kill())
    return rows


def _shared_samples() -> list[dict]:
    """Issue 27: 100 items x 5 samples, one request per sample vs one request per item (``n`` = 5)."""
    from dataclasses import replace

    from evallab.judges import OpenAICompatibleJudge, run_jobs
    from evallab.testing import LocalJudgeServer, SimulatedJudge

    items, k = 100, 5
    reqs = [replace(r, temperature=0.7, metadata={**r.metadata, "sample": s}) for r in _requests()[:items]
            for s in range(k)]
    got = {}
    with LocalJudgeServer(SimulatedJudge(seed=5), latency=LATENCY, takes_n=True, process=True) as srv:
        for share in (False, True):
            srv.reset()
            judge = OpenAICompatibleJudge(srv.base_url, "sim-judge", max_concurrency=CONCURRENCY,
                                          share_samples=share)
            t0 = time.perf_counter()
            df = run_jobs(judge, reqs, progress=False)
            dt = time.perf_counter() - t0
            assert len(df) == len(reqs) and df["verdict"].notna().all(), "a shared-sample run lost replies"
            got[share] = (dt, srv.stats()["requests"], int(df["input_tokens"].sum()),
                          int(df["output_tokens"].sum()))
    (t1, r1, p1, o1), (t2, r2, p2, o2) = got[False], got[True]
    return [
        {"name": "n samples in one request: prompt tokens, shared / one per sample", "value": p2 / p1,
         "target": "<= 0.25", "ok": p2 / p1 <= 0.25 and r2 == items,
         "detail": f"{items} items x {k} samples: {r1} requests, {p1} prompt + {o1} completion tokens one per "
                   f"sample; {r2} requests, {p2} prompt + {o2} completion tokens shared"},
        {"name": "n samples in one request: wall time, shared / one per sample", "value": t2 / t1, "target": "",
         "ok": None, "detail": f"{t1:.2f} s vs {t2:.2f} s (50 ms server latency, concurrency ceiling 32)"},
    ]


def _batch_kill() -> dict:
    """2,000 requests through ``evallab judge --batch`` against the local server's ``/v1/files`` and
    ``/v1/batches``; the client is SIGKILLed while it polls, rerun once, and must parse every reply from the one
    batch created."""
    import os
    import signal
    import subprocess
    import sys

    import pandas as pd

    from evallab.testing import LocalJudgeServer, SimulatedJudge

    n = 2000
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        items = tmp / "items.jsonl"
        items.write_text("".join(json.dumps({"item_id": f"it{i:04d}", "rubric": "Wraps the error.",
                                             "pass_criteria": ["Uses %w."], "answer": f"answer {i}"}) + "\n"
                                 for i in range(n)), encoding="utf-8")
        out, state = tmp / "v.parquet", tmp / "v.parquet.batch.json"
        t0 = time.perf_counter()
        with LocalJudgeServer(SimulatedJudge(seed=8), batch_seconds=4.0, process=True) as srv:
            cmd = [sys.executable, "-m", "evallab.cli", "judge", str(items), "--judge", f"sim-judge@{srv.base_url}",
                   "--out", str(out), "--no-cache", "--batch", "--poll", "0.1", "--no-progress"]
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 120
            while not state.exists() and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            killed = state.exists() and proc.poll() is None
            if killed:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            st = srv.stats()
        dt = time.perf_counter() - t0
        table = pd.read_parquet(out) if out.exists() else pd.DataFrame({"verdict": []})
    parsed = int(table["verdict"].notna().sum())
    ok = killed and done.returncode == 0 and parsed == n and st["batches_created"] == 1 and st["requests"] == 0
    return {"name": "batch API, 2,000 requests, killed while polling: replies parsed", "value": float(parsed),
            "target": "== 2000", "ok": ok,
            "detail": f"client killed {'once' if killed else 'NOT (batch id never written)'}, rerun exit "
                      f"{done.returncode}; {st['batches_created']} batch created, {st['batch_lines']} lines, "
                      f"{st['requests']} live calls; {dt:.1f} s in all"}
