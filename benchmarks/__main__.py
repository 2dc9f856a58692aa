"""``python -m benchmarks [NAME ...]``: run every ``benchmarks/bench_*.py`` (or those named) and print a table.

Exit status is 0 even when a target is missed: benchmarks report, tests assert. Results also go to
``benchmarks/results/latest.json``.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    rows = []
    for n in names:
        mod = importlib.import_module(f"benchmarks.bench_{n}")
        t0 = time.perf_counter()
        print(f"== {n}", flush=True)
        for r in mod.run():
            r = {"bench": n, **r}
            rows.append(r)
            ok = {True: "ok", False: "MISSED", None: "-"}[r.get("ok")]
            print(f"  {r['name']:<58} {r['value']:>10.3f}  target {r.get('target', ''):<8} {ok:6}  "
                  f"{r.get('detail', '')}", flush=True)
        print(f"   ({time.perf_counter() - t0:.1f} s)", flush=True)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps(rows, indent=2, default=str))
    missed = [r for r in rows if r.get("ok") is False]
    print(f"{len(rows)} checks, {len(missed)} missed target", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
