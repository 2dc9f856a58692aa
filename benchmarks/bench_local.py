"""A real local judge (issue 14): evallab against llama.cpp's server vs the same model in-process ("make bench").

The same 100 requests — LLMBar Natural, the first 50 pairs in both orders, greedy, a 64-token cap, the structured
verdict of the llama.cpp dialect (``response_format: {type: json_object, schema}``) — go

- through evallab (:func:`evallab.judges.run_jobs`, :class:`~evallab.judges.OpenAICompatibleJudge`, no cache)
  to ``python -m llama_cpp.server`` serving SmolLM2-135M-Instruct (:class:`evallab.judges.LocalLlamaServer`);
- sequentially through ``llama_cpp.Llama.create_chat_completion`` (no HTTP; in a child process started in its own
  session like the server, so that Linux's autogroup scheduler gives both the same share of the CPU) with the same
  messages, the same model file, the same options (context, threads, batch, seed) and the server's sampling
  defaults (top_p 0.95, top_k 40, min_p 0.05, repeat_penalty 1.1 — llama_cpp.server.types).

A third path splits the cost: the same bytes evallab sends (``judge.encoded(r).payload``) posted one at a time
with a bare ``httpx.Client`` to the same server — the server's own cost over in-process, and evallab's over a
bare HTTP loop.

The paths alternate in blocks of 25 requests (in-process, bare HTTP, evallab), so load from other work on the two
cores falls on all alike. Reported: wall time through evallab / in-process (target <= 1.15: the HTTP server, JSON
and evallab's client cost at most 15% over calling llama.cpp directly), the two parts of that ratio (bare HTTP /
in-process: llama.cpp's server; evallab / bare HTTP: evallab's client), and how many of the 100 verdicts agree
between evallab and in-process (greedy decoding: all should).
"""

from __future__ import annotations

import json
import time

N_PAIRS = 50
BLOCK = 25
MAX_TOKENS = 64


def run() -> list[dict]:
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None:
        return [{"name": "local judge: evallab via server / in-process llama_cpp", "value": float("nan"),
                 "target": "<= 1.15", "ok": None, "detail": "llama-cpp-python not installed (the local extra)"}]
    import os
    import subprocess
    import sys

    from evallab.experiments._live import llmbar_pairs, pair_requests
    from evallab.judges import LocalLlamaServer, default_model, run_jobs
    from evallab.judges._client import format_fields
    from evallab.judges._local import DEFAULT_OPTIONS
    from evallab.judges._parsing import parse_reply

    reqs = pair_requests(llmbar_pairs(N_PAIRS), temperature=0.0, max_tokens=MAX_TOKENS)
    opts = dict(DEFAULT_OPTIONS)
    fmt = format_fields("llamacpp", "pairwise")["response_format"]
    child = subprocess.Popen(
        [sys.executable, "-m", "benchmarks._inproc_llama", json.dumps({"model": str(default_model()), **opts})],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert json.loads(child.stdout.readline()).get("ready")
    import httpx

    t_inproc = t_server = t_bare = 0.0
    same = parsed_in = parsed_srv = 0
    try:
        with LocalLlamaServer(options=opts) as srv:
            judge = srv.judge(structured="llamacpp", cache=None)
            bare = httpx.Client(timeout=600, headers={"content-type": "application/json"})
            url = srv.base_url + "/chat/completions"
            for start in range(0, len(reqs), BLOCK):
                block = reqs[start:start + BLOCK]
                # the server's own sampling defaults (llama_cpp.server.types), sent explicitly in-process
                job = {"requests": [{"messages": [{"role": m.role, "content": m.content} for m in r.messages],
                                     "temperature": r.temperature, "seed": r.seed, "max_tokens": r.max_tokens,
                                     "top_p": 0.95, "top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1}
                                    for r in block], "response_format": fmt}
                child.stdin.write(json.dumps(job) + "\n")
                child.stdin.flush()
                done = json.loads(child.stdout.readline())
                t_inproc += done["seconds"]
                local = [parse_reply(t, r)[0] for t, r in zip(done["texts"], block, strict=True)]
                t0 = time.perf_counter()
                for r in block:
                    bare.post(url, content=judge.encoded(r).payload).raise_for_status()
                t_bare += time.perf_counter() - t0
                t0 = time.perf_counter()
                df = run_jobs(judge, block, progress=False)
                t_server += time.perf_counter() - t0
                served = df["verdict"].astype("object").where(df["verdict"].notna(), None).tolist()
                same += sum(a == b for a, b in zip(local, served, strict=True))
                parsed_in += sum(v is not None for v in local)
                parsed_srv += sum(v is not None for v in served)
    finally:
        child.stdin.close()
        child.wait(60)
    ratio = t_server / t_inproc
    n = len(reqs)
    return [
        {"name": "local judge: evallab via llama.cpp server / in-process llama_cpp", "value": ratio,
         "target": "<= 1.15", "ok": ratio <= 1.15,
         "detail": f"{n} requests (LLMBar Natural, {N_PAIRS} pairs x 2 orders, greedy, <= {MAX_TOKENS} tokens, "
                   f"structured): {t_server:.1f} s vs {t_inproc:.1f} s, {t_inproc / n:.2f} s/request in-process; "
                   f"blocks of {BLOCK} alternated"},
        {"name": "local judge: bare HTTP via server / in-process (llama.cpp's server)", "value": t_bare / t_inproc,
         "target": "", "ok": None, "detail": f"{t_bare:.1f} s: the same bytes posted with a bare httpx.Client"},
        {"name": "local judge: evallab / bare HTTP via the same server (evallab's client)",
         "value": t_server / t_bare, "target": "", "ok": None, "detail": "same server, same bytes"},
        {"name": "local judge: same verdict in-process and via server", "value": float(same), "target": f"== {n}",
         "ok": same == n, "detail": f"parsed {parsed_in} in-process, {parsed_srv} via the server "
                                    f"({json.dumps(opts)})"},
    ]
