"""A 2,000,000-row pairwise table through evallab against plain pandas on the same file, in the same run.

The table: 50,000 items × 5 judges × 2 presentation orders × 4 samples (Parquet, written to a temporary folder),
with ties, unparsed replies, a position bias that differs by judge and gold on 99% of the items.

- evallab: ``load_verdicts`` + ``pairwise_statistics`` + ``position_bias`` (by subset, judge, strategy; 200
  resamples each), each estimator preparing its own paired design; and again with one
  :func:`evallab.metrics.paired_design` passed to both (reported, no target).
- plain pandas: ``read_parquet``, then per judge the accuracy in each order, position consistency (the two orders of
  each (item, sample) side by side) and an item bootstrap of accuracy (200 resamples) — the floor: what no
  implementation of those figures can avoid.

Each runs in a fresh interpreter (the libraries imported before the clock starts), so its peak resident set is its
own (``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of that child, the libraries included). Best wall of 2 runs each,
interleaved; the CPU time of each is printed beside it (on a loaded machine the wall times of both sides stretch).
Targets: evallab's peak ≤ 1 GiB; wall(evallab) / wall(pandas) ≤ 3.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ITEMS, JUDGES, ORDERS, SAMPLES = 50_000, 5, 2, 4
RESAMPLES = 200
ROOT = Path(__file__).resolve().parents[1]
GIB = 2**30


def write_table(path: Path, items: int = ITEMS, seed: int = 0) -> int:
    """Write the pairwise table to ``path`` (Parquet); return its row count."""
    rng = np.random.default_rng(seed)
    n = items * JUDGES * ORDERS * SAMPLES
    # row layout: item-major, then judge, order, sample
    item = np.repeat(np.arange(items), JUDGES * ORDERS * SAMPLES)
    judge = np.tile(np.repeat(np.arange(JUDGES), ORDERS * SAMPLES), items)
    order = np.tile(np.repeat(np.arange(ORDERS), SAMPLES), items * JUDGES)
    sample = np.tile(np.arange(SAMPLES), items * JUDGES * ORDERS)
    gold_item = rng.integers(1, 3, items)
    gold = gold_item[item]
    skill = np.array([0.9, 0.8, 0.7, 0.65, 0.6])[judge]
    first = np.array([0.05, 0.1, 0.2, 0.3, 0.4])[judge]  # chance the judge just picks the output shown first
    u = rng.random(n)
    right = rng.random(n) < skill
    verdict = np.where(right, gold, 3 - gold)
    shown_first = np.where(order == 0, 1, 2)
    verdict = np.where(u < first, shown_first, verdict).astype(object)
    verdict = np.where(verdict == 1, "1", "2").astype(object)
    verdict[rng.random(n) < 0.05] = "tie"
    verdict[rng.random(n) < 0.02] = None
    gold_s = np.where(gold == 1, "1", "2").astype(object)
    gold_s[np.isin(item, rng.choice(items, items // 100, replace=False))] = None
    df = pd.DataFrame({
        "item_id": pd.array(np.char.add("item-", item.astype(str)), dtype="string"),
        "dataset": "scale", "subset": "synthetic", "judge": np.array([f"judge-{j}" for j in range(JUDGES)])[judge],
        "strategy": "Vanilla", "order": np.array(["ab", "ba"])[order], "sample": sample,
        "verdict": verdict, "gold": gold_s,
    })
    df.to_parquet(path, index=False)
    return n


_CHILD = r"""
import json, resource, sys, time
kind, path, resamples = sys.argv[1], sys.argv[2], int(sys.argv[3])
import numpy as np, pandas as pd
if kind.startswith("evallab"):
    from evallab.datasets import load_verdicts
    from evallab.metrics import paired_design, pairwise_statistics, position_bias
    from evallab.metrics._design import DEFAULT_BY
    import evallab.metrics._intervals, scipy.stats, statsmodels.stats.contingency_tables  # imports off the clock
    t0, c0 = time.perf_counter(), time.process_time()
    df = load_verdicts(path)
    table = paired_design(df, DEFAULT_BY) if kind == "evallab-design" else df  # one design for both calls
    st = pairwise_statistics(table, n_resamples=resamples)
    pb = position_bias(table, n_resamples=resamples)
    wall = time.perf_counter() - t0
    out = {"acc_ab": st["acc_ab"].round(6).tolist(), "acc_ba": st["acc_ba"].round(6).tolist(),
           "consistency": st["position_consistency"].round(6).tolist(),
           "first_slot": pb["first_slot_preference"].round(6).tolist()}
else:
    t0, c0 = time.perf_counter(), time.process_time()
    df = pd.read_parquet(path)
    judged = df["verdict"].notna() & df["gold"].notna()
    d = df[judged]
    correct = (d["verdict"] == d["gold"]).astype(float)
    acc = correct.groupby([d["judge"], d["order"]]).mean().unstack("order")
    key = ["judge", "item_id", "sample"]
    ab = df.loc[df["order"] == "ab", [*key, "verdict"]].set_index(key)["verdict"]
    ba = df.loc[df["order"] == "ba", [*key, "verdict"]].set_index(key)["verdict"]
    both = pd.concat({"ab": ab, "ba": ba}, axis=1).dropna()
    consistency = (both["ab"] == both["ba"]).groupby(level="judge").mean()
    per = pd.DataFrame({"c": correct, "n": 1.0}).groupby([d["judge"], d["item_id"]]).sum()
    rng = np.random.default_rng(0)
    interval = {}
    for j, p in per.groupby(level="judge"):
        x = p.to_numpy()
        idx = rng.integers(0, len(x), (resamples, len(x)))
        interval[j] = np.quantile(x[idx, 0].sum(1) / x[idx, 1].sum(1), [0.025, 0.975])
    wall = time.perf_counter() - t0
    out = {"acc_ab": acc["ab"].round(6).tolist(), "acc_ba": acc["ba"].round(6).tolist(),
           "consistency": consistency.round(6).tolist()}
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "cpu": time.process_time() - c0, "peak": ru.ru_maxrss * 1024,  # kB on Linux
                  "rows": len(df), **out}))
"""
KINDS = ("evallab", "evallab-design", "pandas")


def _child(kind: str, path: Path) -> dict:
    res = subprocess.run([sys.executable, "-c", _CHILD, kind, str(path), str(RESAMPLES)], capture_output=True,
                         text=True, cwd=ROOT)
    if res.returncode:
        raise RuntimeError(f"{kind} child failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def run(rounds: int = 2) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pairwise_2m.parquet"
        n = write_table(path)
        res = {k: [] for k in KINDS}
        for _ in range(rounds):  # interleaved: each sees the same machine load
            for k in KINDS:
                res[k].append(_child(k, path))
        size = path.stat().st_size / 2**20
    best = {k: min(v, key=lambda r: r["wall"]) for k, v in res.items()}
    peak = {k: max(r["peak"] for r in v) for k, v in res.items()}
    cpu = {k: min(r["cpu"] for r in v) for k, v in res.items()}
    e, d, p = best["evallab"], best["evallab-design"], best["pandas"]
    same = all(np.allclose(x[c], p[c]) for x in (e, d) for c in ("acc_ab", "acc_ba", "consistency")) \
        and e["first_slot"] == d["first_slot"]
    ratio, ratio_d = e["wall"] / p["wall"], d["wall"] / p["wall"]
    where = f"{n:,} rows ({ITEMS:,} items × {JUDGES} judges × 2 orders × {SAMPLES} samples), {size:.0f} MiB Parquet"
    return [
        {"name": "scale_wall_ratio (evallab / plain pandas, 2M rows)", "value": ratio, "target": "<= 3",
         "ok": ratio <= 3, "detail": f"load_verdicts + pairwise_statistics + position_bias {e['wall']:.2f} s "
                                     f"(CPU {cpu['evallab']:.2f} s), plain pandas {p['wall']:.2f} s (CPU "
                                     f"{cpu['pandas']:.2f} s), {RESAMPLES} resamples, best of {rounds}; {where}; "
                                     f"per-order accuracy and consistency {'agree' if same else 'DIFFER'}"},
        {"name": "scale_design_wall_ratio (one paired_design for both)", "value": ratio_d, "target": "",
         "ok": None, "detail": f"{d['wall']:.2f} s (CPU {cpu['evallab-design']:.2f} s); peak "
                               f"{peak['evallab-design'] / GIB:.2f} GiB"},
        {"name": "scale_evallab_peak_gib (load+agreement+position)", "value": peak["evallab"] / GIB,
         "target": "<= 1", "ok": peak["evallab"] <= GIB,
         "detail": f"peak resident set of the child, libraries included; plain pandas {peak['pandas'] / GIB:.2f} GiB "
                   f"({peak['evallab'] / peak['pandas']:.2f}x)"},
        {"name": "scale_pandas_peak_gib (plain computation)", "value": peak["pandas"] / GIB, "target": "", "ok": None,
         "detail": f"first-slot preference by judge (evallab) {json.dumps(e['first_slot'])}"},
    ]
