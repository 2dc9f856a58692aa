"""A grid on Dask distributed against the local runner, in one run.

The batch: a grid entry of 8 runs of a small notebook (``tests/data/report/sweep.ipynb``: imports statsmodels and
evallab, a Wilson interval, a finding, ``save_metrics``), run by ``evallab report`` three times each way, interleaved:

- local: the default runner with ``--jobs 2`` (a process pool, one kernel per run);
- dask: ``--local-cluster 2`` (a ``distributed.LocalCluster`` of 2 worker processes started for the batch and
  closed after; each run a task whose files come back to the client).

Both include everything the command does (start-up, grid expansion and checks, HTML export, index with the
comparison figure). Reports wall(dask)/wall(local), the fastest of the three of each (target ≤ 1.15: the engine's
overhead on one machine; the fastest run is the one least disturbed by other load on the machine), and the ratio of
the medians for reference.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "tests" / "data" / "report" / "sweep.ipynb"
RUNS = 8
REPS = 3


def _run(cfg: Path, out: Path, args: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "evallab.cli", "report", "--config", str(cfg), "--out", str(out),
                        *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env={**os.environ, "MPLBACKEND": "Agg"})
    return time.perf_counter() - t0, p.returncode


def run() -> list[dict]:
    with tempfile.TemporaryDirectory() as td:
        td = Path(td)
        cfg = td / "sweep.yaml"
        cfg.write_text(f"reports:\n  - name: sweep\n    notebook: {NOTEBOOK}\n    parameters: {{n: 40}}\n"
                       f"    grid: {{k: {list(range(1, RUNS + 1))}}}\n"
                       "    compare: {metric: rate, label: Success rate, unit: '%'}\n")
        _run(cfg, td / "warm", ["--jobs", "2"])  # file cache and kernel spec warm for both
        local, dask, codes = [], [], []
        for i in range(REPS):
            s, rc = _run(cfg, td / f"local{i}", ["--jobs", "2"])
            local.append(s)
            codes.append(rc)
            s, rc = _run(cfg, td / f"dask{i}", ["--local-cluster", "2"])
            dask.append(s)
            codes.append(rc)
    ratio = min(dask) / min(local)
    ok = all(c == 0 for c in codes)
    return [
        {"name": f"{RUNS} runs: --local-cluster 2 wall / local --jobs 2 wall", "value": ratio, "target": "<= 1.15",
         "ok": ratio <= 1.15 and ok,
         "detail": f"fastest of {REPS}: dask {min(dask):.1f}s, local {min(local):.1f}s (exit codes {codes})"},
        {"name": "same, medians (reference)", "value": statistics.median(dask) / statistics.median(local),
         "target": "", "ok": None,
         "detail": f"dask {', '.join(f'{x:.1f}' for x in dask)}s; local {', '.join(f'{x:.1f}' for x in local)}s"},
    ]
