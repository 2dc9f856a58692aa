"""Trigger scorer speed: vectorised leave-one-out vs a naive per-probe rebuild, and linear-time stripping.

- ``loo_speedup_<catalog>``: full leave-one-out trigger accuracy of every probe, vectorised path
  (:func:`evallab.skills.leave_one_out`) vs the naive path that rebuilds, re-tokenizes and re-scores the whole
  catalog for every probe as keryx does (``method="naive"``), both from cold caches, in the same run. Target ≥ 20×
  on the 559-skill catalog.
- ``strip_adversarial_ratio``: :func:`evallab.skills.strip_exclusions` on 200 KB crafted to make a backtracking
  pattern blow up (unclosed "(not" asides, "use a-a-a…" without "instead", "not" + long whitespace, runs of
  "e.g.", unclosed backticks, one endless sentence) vs 200 KB of real catalog descriptions; the worst family's
  time ratio. Target ≤ 3 (linear time).
"""

from __future__ import annotations

import json
import time

from evallab import skills as T
from evallab.paths import data_dir
from evallab.skills import _tokenize
from evallab.skills._tokenize import strip_exclusions
from evallab.skills._trigger_loo import make_probes

SIZE = 200_000


def _clear() -> None:
    for f in (_tokenize.token_set, _tokenize._part_tokens, _tokenize._part_token_list):
        f.cache_clear()


def _best(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _loo(name: str) -> dict:
    cat = T.load_catalog(name)
    probes = make_probes(cat)
    _clear()
    t0 = time.perf_counter()
    fast = T.leave_one_out(cat, probes)
    tv = time.perf_counter() - t0
    _clear()
    t0 = time.perf_counter()
    slow = T.leave_one_out(cat, probes, method="naive")
    tn = time.perf_counter() - t0
    same = bool((fast.selected.to_numpy() == slow.selected.to_numpy()).all())
    ratio = tn / tv
    return {"name": f"loo_speedup_{name} ({len(cat)} skills, {len(probes)} probes)", "value": ratio,
            "target": ">= 20", "ok": ratio >= 20 and same,
            "detail": f"vectorised {tv * 1000:.0f} ms, naive {tn:.2f} s, accuracy {fast.selected.mean():.3f}, "
                      f"same verdicts: {same}"}


def _fill(unit: str) -> str:
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


def _strip() -> list[dict]:
    path = data_dir("catalogs") / "sickn33_antigravity-awesome-skills.jsonl"
    descs = [json.loads(line)["description"] for line in path.read_text(encoding="utf-8").splitlines()]
    ordinary = ""
    while len(ordinary) < SIZE:
        ordinary += " ".join(descs) + " "
    ordinary = ordinary[:SIZE]
    families = {
        "unclosed asides": _fill("(not (see (never x "),
        "aside without close": "(not " + _fill("word ")[:-5],
        "use a-a-a without instead": "use " + _fill("a-"),
        "not + whitespace": _fill("not" + " " * 997),
        "e.g. runs": _fill("e.g. i.e. "),
        "unclosed backtick": _fill("use `xyz "),
        "one endless sentence": _fill("does not never not for do not use for "),
        "never openers": _fill("Never x. "),
    }
    t_ord = _best(lambda: strip_exclusions(ordinary))
    rows, worst, worst_name = [], 0.0, ""
    for name, text in families.items():
        t = _best(lambda text=text: strip_exclusions(text))
        if t / t_ord > worst:
            worst, worst_name = t / t_ord, name
        rows.append(f"{name} {t * 1000:.1f} ms")
    return [{"name": "strip_adversarial_ratio (200 KB)", "value": worst, "target": "<= 3", "ok": worst <= 3,
             "detail": f"ordinary {t_ord * 1000:.1f} ms; worst: {worst_name}; " + ", ".join(rows)}]


def run() -> list[dict]:
    return [_loo("sickn33"), _loo("keryx"), *_strip()]


if __name__ == "__main__":
    for r in run():
        print(r)
