"""Manifest text checks stay linear on adversarial output: the section-header and list-item scanners on worst-case
texts of 100 KB and 200 KB. Linear time doubles (growth 2); quadratic would quadruple. Reports the largest growth
(target ≤ 2.5), and the 200 KB worst case against 200 KB of ordinary prose for reference."""

from __future__ import annotations

import time


def _time(fn, text: str, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - t0)
    return best


def _adversarial(size: int) -> dict[str, str]:
    return {
        "header then blanks": "# a" + " " * (size - 4) + "b",
        "blank lines": "\n" * size,
        "blank-prefixed lines": " \n" * (size // 2),
        "item then blanks": "- " + " " * (size - 3) + "x",
        "many hashes": "# " + "#" * (size - 2),
    }


def run() -> list[dict]:
    from evallab.skills._manifests import _ITEM, _headers

    def scan(t: str) -> None:
        _headers(t)
        _ITEM.findall(t)

    small, large = _adversarial(100_000), _adversarial(200_000)
    growth = {k: _time(scan, large[k]) / max(_time(scan, small[k]), 1e-9) for k in small}
    worst = max(growth, key=growth.get)
    ordinary = ("## Findings\n\nThe handler wraps the error with %w and returns it. " * 4000)[:200_000]
    base = _time(scan, ordinary)
    slowest = max(_time(scan, v) for v in large.values())
    return [
        {"name": "manifest scanners: time(200 KB) / time(100 KB), worst case", "value": growth[worst],
         "target": "<= 2.5", "ok": growth[worst] <= 2.5, "detail": f"worst '{worst}'; linear = 2, quadratic = 4"},
        {"name": "manifest scanners: slowest adversarial / ordinary prose (200 KB)", "value": slowest / base,
         "target": "", "ok": None, "detail": f"ordinary {1e3 * base:.1f} ms (newline-dense text has more lines)"},
    ]
