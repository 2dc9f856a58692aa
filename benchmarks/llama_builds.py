"""CPU cost of a llama-cpp-python build: ``PYTHON -m benchmarks.llama_builds LABEL`` (issue 24).

Run it with the Python of each build to compare (e.g. the project's ``.venv`` with the portable build the Makefile
makes, and a throw-away venv with a native ``-march=native`` build), alternating, on the same machine. It answers
30 LLMBar Natural requests (15 pairs in both orders, the live study's prompts, greedy, <= 64 tokens) in-process with
SmolLM2-135M-Instruct on ONE thread and prints one JSON line: CPU seconds per request (user + system, which load
from other processes inflates far less than wall time), wall seconds, prompt and completion tokens, and the CPU
features the build uses. Each request starts from an empty KV cache. Not part of ``make bench``: it compares builds,
which one environment cannot hold at once.
"""

from __future__ import annotations

import json
import resource
import sys
import time


def main(label: str) -> dict:
    from llama_cpp import Llama, llama_print_system_info

    from evallab.experiments._live import llmbar_pairs, pair_requests
    from evallab.judges import default_model

    reqs = pair_requests(llmbar_pairs(15), temperature=0.0, max_tokens=64)
    messages = [[{"role": m.role, "content": m.content} for m in r.messages] for r in reqs]
    llm = Llama(model_path=str(default_model()), n_ctx=4096, n_threads=1, n_threads_batch=1, n_batch=512, seed=0,
                verbose=False)

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    llm.create_chat_completion(messages=messages[0], max_tokens=4, temperature=0)  # warm-up
    c0, t0, out_tokens, in_tokens = cpu(), time.perf_counter(), 0, 0
    for m in messages:
        llm.reset()
        out = llm.create_chat_completion(messages=m, max_tokens=64, temperature=0)
        out_tokens += out["usage"]["completion_tokens"]
        in_tokens += out["usage"]["prompt_tokens"]
    n = len(messages)
    return {"build": label, "features": llama_print_system_info().decode().strip(), "requests": n,
            "cpu_s_per_request": (cpu() - c0) / n, "wall_s_per_request": (time.perf_counter() - t0) / n,
            "prompt_tokens": in_tokens, "completion_tokens": out_tokens}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else "build")))
