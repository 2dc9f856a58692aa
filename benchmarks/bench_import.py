"""Mapped-table import speed and memory: ``evallab.importers.import_table`` vs a plain ``pandas.read_csv``.

- ``import_mapped_csv_ratio``: a 1,000,000-row CSV of pairwise votes in a foreign layout (``question_id, model_a,
  model_b, winner, judge, turn, tstamp, comment`` — the winner as ``model_a``/``model_b``/``tie``/``tie
  (bothbad)``, a short judge comment as real exports carry), imported with a column map and a value map into the
  validated tidy table (every check of :func:`evallab.verdicts.validate`: vocabulary, orders, empty ids, the key
  unique) vs ``pandas.read_csv`` of the same file with default options. Best of 5 each, interleaved, in the same
  run.
  Target ≤ 2.
- ``import_narrow_csv_ratio``: without the comment column (less text to parse, so the fixed work of mapping and
  validating weighs more) and with every question judged by 4 judges (the key check cannot stop at unique item
  ids: it combines item and judge codes) — reported, no target.
- ``import_peak_rss_mb`` / ``read_csv_peak_rss_mb``: growth of the peak resident set of a fresh interpreter (sampled
  every 2 ms with psutil) while it imports / reads the file once, beyond what it held after loading the libraries.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

N = 1_000_000
COLUMNS = "item_id=question_id,verdict=winner,judge=judge"
VALUES = "model_a=1,model_b=2,tie=tie,tie (bothbad)=tie"
ROOT = Path(__file__).resolve().parents[1]


def _write(path: Path, comment: bool, repeat: int = 1) -> None:
    rng = np.random.default_rng(0)
    models = np.array(["gpt-4", "claude-v1", "gpt-3.5-turbo", "vicuna-13b-v1.2", "alpaca-13b", "llama-13b"])
    a = rng.integers(0, len(models), N)
    b = (a + rng.integers(1, len(models), N)) % len(models)
    df = pd.DataFrame({
        "question_id": np.char.add("q", (np.arange(N) // repeat).astype(str)),
        "model_a": models[a], "model_b": models[b],
        "winner": rng.choice(np.array(["model_a", "model_b", "tie", "tie (bothbad)"]), N, p=[.4, .4, .15, .05]),
        "judge": (rng.choice(np.array([f"expert_{i}" for i in range(40)]), N) if repeat == 1
                  else np.char.add("expert_", (np.arange(N) % repeat).astype(str))),
        "turn": rng.integers(1, 3, N),
        "tstamp": 1.7e9 + rng.random(N) * 1e7,
    })
    if comment:
        words = np.array(["clear", "accurate", "verbose", "misses the point", "cites the source", "wrong unit",
                          "polite", "follows the format", "too short", "hallucinated detail"])
        w = rng.integers(0, len(words), (N, 3))
        df["comment"] = (np.char.add(np.char.add(np.char.add("Assistant ", np.where(rng.random(N) < .5, "A", "B")),
                                                 " is "), words[w[:, 0]])
                         + ", " + words[w[:, 1]] + " and " + words[w[:, 2]] + ".")
    df.to_csv(path, index=False)


def _best(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


_RSS = """
import sys, threading, time, psutil, pandas as pd
from evallab.importers._table import import_table
proc = psutil.Process()
base = peak = proc.memory_info().rss
done = False
def sample():
    global peak
    while not done:
        peak = max(peak, proc.memory_info().rss)
        time.sleep(0.002)
t = threading.Thread(target=sample, daemon=True)
t.start()
if sys.argv[1] == "import":
    df = import_table(sys.argv[2], columns={columns!r}, values={values!r})
else:
    df = pd.read_csv(sys.argv[2])
peak = max(peak, proc.memory_info().rss)
done = True
t.join()
print(len(df), (peak - base) / 2**20)
"""


def _peak_mb(kind: str, path: Path) -> tuple[int, float]:
    code = _RSS.format(columns=COLUMNS, values=VALUES)
    out = subprocess.run([sys.executable, "-c", code, kind, str(path)], capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout.split()
    return int(out[0]), float(out[1])


def _ratio(path: Path, name: str, target: bool) -> tuple[dict, pd.DataFrame]:
    from evallab.importers._table import import_table

    df = import_table(path, columns=COLUMNS, values=VALUES)  # warm-up (imports, page cache)
    t_read = t_imp = float("inf")
    for _ in range(5):  # interleaved, so both see the same machine load; best of 5 each
        t_read = min(t_read, _best(lambda: pd.read_csv(path), 1))
        t_imp = min(t_imp, _best(lambda: import_table(path, columns=COLUMNS, values=VALUES), 1))
    ratio = t_imp / t_read
    return ({"name": name, "value": ratio, "target": "<= 2" if target else "", "ok": ratio <= 2 if target else None,
             "detail": f"import_table {t_imp:.2f} s, pandas.read_csv {t_read:.2f} s, {len(df):,} rows, "
                       f"{path.stat().st_size / 2**20:.0f} MiB"}, df)


def run() -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        wide, narrow = Path(tmp) / "votes.csv", Path(tmp) / "votes_narrow.csv"
        _write(wide, comment=True)
        _write(narrow, comment=False, repeat=4)
        r, df = _ratio(wide, "import_mapped_csv_ratio (1M rows, vs pandas.read_csv)", target=True)
        counts = df["verdict"].value_counts(dropna=False).to_dict()
        r["detail"] += f", verdicts {json.dumps({str(k): int(v) for k, v in counts.items()})}"
        rows.append(r)
        rows.append(_ratio(narrow, "import_narrow_csv_ratio (no comment, 4 judges/item)", target=False)[0])
        n1, m_imp = _peak_mb("import", wide)
        n2, m_read = _peak_mb("read", wide)
        rows.append({"name": "import_peak_rss_mb (growth while importing)", "value": m_imp, "target": "",
                     "ok": None, "detail": f"{n1:,} rows; pandas.read_csv of the same file: {m_read:.0f} MB "
                                           f"({m_imp / m_read:.2f}x)"})
        rows.append({"name": "read_csv_peak_rss_mb (growth while reading)", "value": m_read, "target": "",
                     "ok": None, "detail": f"{n2:,} rows"})
    return rows
