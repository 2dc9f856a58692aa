"""Report 02's sections on the nine real judges (Shi et al. 2024) and family preference: the numbers their sentences
state recounted with plain pandas, csv and scipy from the bundled files; the sections are bundled (left out of a
report on the user's table)."""

from __future__ import annotations

import csv
import re
import time
from collections import Counter

import matplotlib.pyplot as plt
import numpy as np
import pytest
from scipy.stats import spearmanr
from section_helper import section_text

from evallab.paths import data_dir
from evallab.reporting.sections import position as S

PBA = data_dir("position_bias_analyzer")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def sec():
    return S.real_judges(n_resamples=200)


@pytest.fixture(scope="module")
def rows():
    with (PBA / "verdicts.csv").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _pairs(rows):
    """(judge, sample, item) → {order: verdict or ""} from the CSV, by hand."""
    out: dict = {}
    for r in rows:
        out.setdefault((r["judge"], r["sample"], r["item_id"]), {})[r["order"]] = r["verdict"]
    return out


def test_real_judges_section_states_hand_counted_figures(sec, rows, tmp_path):
    assert sec.bundled
    assert sec.metrics["real_judges_reproduced"] == sec.metrics["real_judges_files"] == 27
    assert sec.findings[0].sentence.startswith("All 27 of the 27 position-consistency figures")
    # evallab's figure per judge: pairs with both parsed that agree, pooled over the 3 repetitions
    tally: dict = {}
    for (judge, _, _), v in _pairs(rows).items():
        if v.get("ab") and v.get("ba"):
            c = tally.setdefault(judge, Counter())
            c["both"] += 1
            c["same"] += v["ab"] == v["ba"]
    rate = {j: c["same"] / c["both"] for j, c in tally.items()}
    assert sec.metrics["real_judges_consistency"] == pytest.approx(rate)
    best = max(rate, key=rate.get)
    assert best == "gpt-4-0613" and sec.findings[2].sentence.startswith(f"{best} is the most position-consistent")
    # parser differences: evallab's verdict vs the authors' first mark, NA as its own value
    differ = [r for r in rows if r["verdict"] != r["authors_verdict"]]
    assert sec.metrics["real_judges_parser_differences"] == len(differ) == 30
    assert f"disagree on {len(differ)} of 5,184 replies" in sec.findings[1].sentence
    # price vs consistency: Spearman on the prices file and the hand-counted rates
    with (PBA / "prices.csv").open(newline="") as fh:
        price = {r["judge"]: float(r["input_usd_per_mtok"]) for r in csv.DictReader(fh)}
    judges = sorted(rate)
    rho = spearmanr([price[j] for j in judges], [rate[j] for j in judges]).statistic
    assert sec.metrics["real_judges_price_spearman"] == pytest.approx(rho)
    assert f"is {rho:.2f} (n = 9 judges" in section_text(sec, tmp_path)
    # the random judge's stability: enumerate 27 answer triples of A/B/tie
    triples = [(a, b, c) for a in range(3) for b in range(3) for c in range(3)]
    chance = np.mean([max(Counter(t).values()) / 3 for t in triples])
    assert f"against {100 * chance:.1f}% for a judge answering A, B or tie at random" in sec.findings[4].sentence
    text = section_text(sec, tmp_path)
    assert "nan" not in text.lower() and any(hasattr(x, "savefig") for x in sec.items)
    assert "Printed by the authors" in text and "End of the reply" in text


def test_family_preference_section_recounted(sec, rows):
    claude = {"claude-3-opus-20240229", "claude-3-sonnet-20240229", "claude-3-haiku-20240307"}
    credit = {True: [0.0, 0], False: [0.0, 0]}
    for r in rows:
        if r["output_2_model"] != "claude-v1" or not r["verdict"]:
            continue
        c = credit[r["judge"] in claude]
        c[0] += 1.0 if r["verdict"] == "2" else 0.5 if r["verdict"] == "tie" else 0.0
        c[1] += 1
    diff = credit[True][0] / credit[True][1] - credit[False][0] / credit[False][1]
    m = sec.metrics
    assert m["family_preference_difference"] == pytest.approx(diff)
    assert m["family_preference_low"] < m["family_preference_high"] < 0  # the Claude 3 judges are harder on it
    s = sec.findings[-1].sentence
    assert re.search(rf"a difference of {100 * diff:.1f} pp \[", s) and "HARDER on claude-v1" in s
    assert "on the same 24 comparisons" in s
    assert "## Family preference: Claude 3 judges on claude-v1" in " ".join(x for x in sec.items if isinstance(x, str))


def test_added_compute_is_small(sec):
    t = time.perf_counter()
    S.real_judges()
    assert time.perf_counter() - t < 3.0  # ~0.8 s here; generous for a loaded machine
