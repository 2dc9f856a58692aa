"""Child process of ``bench_local``: llama_cpp.Llama in-process, sequential, no HTTP. Reads one JSON line per block
(``{"requests": [{"messages", "temperature", "seed", "max_tokens"}], "response_format": {...}}``) from stdin and
writes one JSON line ``{"seconds", "texts"}`` per block. Started in its own session, like the server, so the two
get the same share of the CPU from the scheduler (Linux autogroups)."""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    from llama_cpp import Llama

    opts = json.loads(sys.argv[1])
    llm = Llama(model_path=opts.pop("model"), verbose=False, **opts)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        job = json.loads(line)
        t0 = time.perf_counter()
        texts = []
        for r in job["requests"]:
            out = llm.create_chat_completion(response_format=job["response_format"], **r)
            texts.append(out["choices"][0]["message"]["content"])
        print(json.dumps({"seconds": time.perf_counter() - t0, "texts": texts}), flush=True)


if __name__ == "__main__":
    main()
