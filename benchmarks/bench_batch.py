"""The report batch against its floor, in one run.

- batch: ``evallab report`` on ``reports.yaml`` (the real notebooks, default parameters, 2 jobs).
- floor: for each report, a notebook with the same parameters cell, the import lines of that report notebook plus
  the scientific stack the issue names for the floor (pandas, scikit-learn, statsmodels, matplotlib — and
  scipy.stats), which evallab imports lazily inside the calls a notebook makes, reading the same data files
  (``reads:`` in reports.yaml) and writing a metrics file — what no implementation can avoid — run through the same
  runner with the same jobs.
- empty: for each report, a notebook with only a parameters cell and ``save_metrics`` — for reference.

Reports wall(batch)/wall(floor) (target ≤ 1.5), wall(batch)/wall(empty), and the batch's peak memory (resident
set of the runner and all its kernels, sampled every 50 ms; target ≤ 1.5 GB). The three runs are interleaved over
``ROUNDS`` rounds and each side's fastest round is compared (timeit's rule: interference from the rest of the
machine only adds time). On this kind of shared 2-core machine one batch run varied between 23 and 35 s within an
hour (the floor between 14 and 21 s), more than the target's margin: one round each made the ratio a draw of that
noise.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import psutil
import yaml
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
#: interleaved rounds of batch, floor and empty
ROUNDS = 3


def _run(cfg: Path, out: Path, jobs: int = 2) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (bytes) of the process tree, exit code of `evallab report`."""
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "evallab.cli", "report", "--config", str(cfg), "--out", str(out),
                          "--jobs", str(jobs)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env={**__import__("os").environ, "MPLBACKEND": "Agg"})
    proc = psutil.Process(p.pid)
    peak = 0
    while p.poll() is None:
        try:
            total = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))
            peak = max(peak, total)
        except psutil.Error:
            pass
        time.sleep(0.05)
    return time.perf_counter() - t0, peak, p.returncode


#: the libraries every report loads (directly or through evallab's lazy imports); the issue's floor imports them
STACK = ["import pandas", "import matplotlib.pyplot", "import scipy.stats", "import sklearn.metrics",
         "import statsmodels.stats.proportion"]


def _imports(nb_path: Path) -> str:
    nb = nbformat.read(str(nb_path), as_version=4)
    lines = list(STACK)
    for c in nb.cells:
        if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", []):
            lines += [ln for ln in c.source.splitlines() if ln.startswith(("import ", "from "))]
    return "\n".join(dict.fromkeys(lines))


def _reads(files: list[str]) -> str:
    code = ["import json, pandas as pd", "from evallab.paths import REPO_ROOT"]
    for f in files:
        p = f"REPO_ROOT / {f!r}"
        if f.endswith(".csv"):
            code.append(f"pd.read_csv({p})")
        elif f.endswith(".jsonl"):
            code.append(f"pd.read_json({p}, lines=True)")
        elif f.endswith("/"):
            code.append(f"[q.read_bytes() for q in sorted(({p}).rglob('*')) if q.is_file()]")
        else:
            code.append(f"({p}).read_bytes()")
    return "\n".join(code)


def _params(nb_path: Path) -> str:
    nb = nbformat.read(str(nb_path), as_version=4)
    return next(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))


def _write(path: Path, cells) -> None:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = cells
    nbformat.write(nb, str(path))


def run() -> list[dict]:
    cfg = yaml.safe_load((ROOT / "reports.yaml").read_text())["reports"]
    with tempfile.TemporaryDirectory() as td:
        td = Path(td)
        floor_cfg, empty_cfg = [], []
        for e in cfg:
            nb = ROOT / e["notebook"]
            params = new_code_cell(_params(nb))
            params.metadata["tags"] = ["parameters"]
            save = new_code_cell("from evallab.reporting._batch import save_metrics\n"
                                 "save_metrics(report_name, {'floor': 1}, reports_dir_=reports_dir)")
            _write(td / f"floor_{e['name']}.ipynb", [new_markdown_cell("# floor"), params,
                                                     new_code_cell(_imports(nb)),
                                                     new_code_cell(_reads(e.get("reads", []))), save])
            _write(td / f"empty_{e['name']}.ipynb", [new_markdown_cell("# empty"), params, save])
            floor_cfg.append({"name": e["name"], "notebook": str(td / f"floor_{e['name']}.ipynb")})
            empty_cfg.append({"name": e["name"], "notebook": str(td / f"empty_{e['name']}.ipynb")})
        (td / "floor.yaml").write_text(yaml.safe_dump({"reports": floor_cfg}))
        (td / "empty.yaml").write_text(yaml.safe_dump({"reports": empty_cfg}))
        # warm the file cache and the kernel spec once, so none of the runs pays for it alone
        _run(td / "empty.yaml", td / "warm")
        batch, floor, empty, peaks, rcs = [], [], [], [], []
        for i in range(ROUNDS):  # interleaved: a slow spell of the machine falls on both sides of the ratio
            b_s, peak, rc = _run(ROOT / "reports.yaml", td / f"batch{i}")
            f_s, _, rc_f = _run(td / "floor.yaml", td / f"floor{i}")
            e_s, _, _ = _run(td / "empty.yaml", td / f"empty{i}")
            batch.append(b_s), floor.append(f_s), empty.append(e_s), peaks.append(peak)
            rcs += [rc, rc_f]
    n = len(cfg)
    ratio = min(batch) / min(floor)
    each = ", ".join(f"{b:.1f}/{f:.1f}" for b, f in zip(batch, floor, strict=True))
    return [
        {"name": "batch wall / floor wall", "value": ratio, "target": "<= 1.5",
         "ok": ratio <= 1.5 and not any(rcs),
         "detail": f"{n} reports, fastest of {ROUNDS} interleaved rounds: batch {min(batch):.1f}s, floor "
                   f"{min(floor):.1f}s (each round batch/floor: {each}; exit codes {sorted(set(rcs))})"},
        {"name": "batch wall / empty-notebook wall (reference)", "value": min(batch) / min(empty), "target": "",
         "ok": None, "detail": f"empty {min(empty):.1f}s"},
        {"name": "batch peak memory (GB, runner + kernels)", "value": max(peaks) / 1e9, "target": "<= 1.5",
         "ok": max(peaks) / 1e9 <= 1.5, "detail": f"the largest of {ROUNDS} rounds"},
    ]
