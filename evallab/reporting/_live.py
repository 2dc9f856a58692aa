"""The committed live run of a local judge (``data/live/smollm2``, written by ``make live``:
:func:`evallab.experiments.run_live`) as the reports read it: :func:`load`, the one line a report shows when the run or
one of its studies is absent (:func:`absent`), the judge's caveat (:data:`CAVEAT`), the run card in one line, and
the parse rate of the live replies (:func:`parse_rates`).

The sections that state what the run shows live with their reports: report 02's
:func:`evallab.reporting.sections.position.live_section`, report 03's
:func:`evallab.reporting.sections.inflation.live_section`, report 05's
:func:`evallab.reporting.sections.drift.live_prompt_drift`. Nothing here calls a judge.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evallab._results import WILSON, Measure, Results, results
from evallab.metrics._intervals import wilson

#: what every live section says about the judge (issue 14: "say plainly that this is a 135M-parameter model")
CAVEAT = ("The live judge is SmolLM2-135M-Instruct (135 million parameters, 4-bit Q4_1 GGUF) on llama.cpp, a model "
          "with about 500 times fewer parameters than LLaMA-2-70B-Chat, the LLaMA2 judge in LLMBar's tables, and "
          "never trained to judge: expect weak verdicts. These sections show what evallab measures on a real judge "
          "running on this machine; they say nothing about how good a judge can be, and no conclusion about larger "
          "models follows from them.")


def load(folder: str | Path | None = None) -> dict | None:
    """The committed live run (:func:`evallab.experiments.load_live`) or ``None`` when absent."""
    from evallab.experiments._live import LIVE_DIR, load_live

    return load_live(folder or LIVE_DIR)


def absent(run: dict | None, study: str) -> str:
    """"" when ``run`` holds ``study``; else the one line a report shows."""
    if run is None:
        return ("No live run is committed (data/live/smollm2/run_card.json is absent): run `make live` to record "
                "SmolLM2-135M on llama.cpp; this section is skipped.")
    if study not in run:
        return f"The committed live run has no {study} study; this section is skipped."
    return ""


def _card_line(run: dict) -> str:
    c = run["card"]
    return (f"{c.get('model_file')} (sha256 {str(c.get('model_sha256'))[:12]}…), llama-cpp-python "
            f"{c.get('llama_cpp_python')} (llama.cpp {c.get('llama_cpp')}), recorded {str(c.get('date'))[:10]}, "
            f"{int(c.get('calls') or 0):,} calls in {c.get('wall_seconds', 0) / 60:.1f} min of wall time")


#: the measures of :func:`parse_rates` (one reply per request: the Wilson score interval)
PARSE_RATE_MEASURES = [Measure("requests", "Requests", "count"), Measure("parsed", "Parsed", "count"),
                       Measure("failed calls", "Failed calls", "count"),
                       Measure("parse_rate", "Parse rate", "proportion", "parse_rate_low", "parse_rate_high",
                               method=WILSON, n="requests", n_unit="requests")]


def parse_rates(run: dict, *, confidence: float = 0.95) -> Results:
    """Parse rate with and without structured verdicts: one row per (study, response format asked for) with
    ``requests``, ``parsed``, ``failed calls`` (no reply after the retries: counted as not parsed) and
    ``parse_rate`` = parsed / requests with its Wilson score interval (one reply per request), then one row per
    response format over all studies (``study`` = ``"all studies"``). Measures :data:`PARSE_RATE_MEASURES`."""
    rows = []
    for study in ("position", "drift", "inflation", "probe", "text"):
        df = run.get(study)
        if df is None or not len(df):
            continue
        fmt = df["structured"] if "structured" in df else pd.Series("text", index=df.index)
        for f, d in df.groupby(fmt):
            failed = int(d["failed"].fillna(False).astype(bool).sum()) if "failed" in d else 0
            rows.append({"study": study, "response format": "structured (json_object + schema)" if f != "text"
                         else "text prompt only", "requests": len(d), "parsed": int(d["verdict"].notna().sum()),
                         "failed calls": failed})
    out = pd.DataFrame(rows, columns=["study", "response format", "requests", "parsed", "failed calls"])
    if len(out):
        total = out.groupby("response format", sort=False)[["requests", "parsed", "failed calls"]].sum()
        out = pd.concat([out, total.reset_index().assign(study="all studies")], ignore_index=True)
    out["parse_rate"] = out["parsed"] / out["requests"]
    bounds = [wilson(k, n, confidence) for k, n in zip(out["parsed"], out["requests"], strict=True)]
    out["parse_rate_low"] = [lo for lo, _ in bounds]
    out["parse_rate_high"] = [hi for _, hi in bounds]
    return results(out, PARSE_RATE_MEASURES, level=confidence, keys=["study", "response format"])


__all__ = ["CAVEAT", "PARSE_RATE_MEASURES", "absent", "load", "parse_rates"]
