"""Notebook 01 on two small hand-made user tables (issue 26 leftovers), read as a user reads its HTML: a pointwise
table (pass/fail with gold, 40 items, one judge, one sample, a model column) and a one-order pairwise table sampled
3 times with ties. No NaN, no "-0.00", no parenthesis inside a parenthesis, no heading without content under it; the
majority section only on the sampled table; the per-model pass rate from hand counts."""

from __future__ import annotations

import csv
import html.parser
import json
import re

import pytest
from statsmodels.stats.proportion import proportion_confint

from evallab.paths import REPO_ROOT
from evallab.reporting._batch import ReportSpec, run_report_batch

NB = REPO_ROOT / "notebooks" / "01_judge_agreement.ipynb"


class _Text(html.parser.HTMLParser):
    """The text of an exported report, one block per line, headings marked with '#'."""

    BLOCKS = ("p", "div", "tr", "h1", "h2", "h3", "li", "caption", "table")

    def __init__(self) -> None:
        super().__init__()
        self.out: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "script"):
            self.skip += 1
        if tag in self.BLOCKS:
            self.out.append("\n")
        if tag in ("h1", "h2", "h3"):
            self.out.append("#" * int(tag[1]) + " ")

    def handle_endtag(self, tag):
        if tag in ("style", "script"):
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data)


def _lines(path) -> list[str]:
    p = _Text()
    p.feed(path.read_text(encoding="utf-8"))
    return [x.strip() for x in "".join(p.out).replace("¶", "").split("\n") if x.strip()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("user_tables01")
    point, pair = tmp / "point.csv", tmp / "pair.csv"
    with point.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "judge", "verdict", "gold", "generator"])
        for i in range(40):
            gold = "pass" if i % 5 else "fail"
            w.writerow([f"q{i}", "judge-a", gold if i % 4 else ("fail" if gold == "pass" else "pass"), gold,
                        "m-a" if i % 2 else "m-b"])
    with pair.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "judge", "order", "sample", "verdict", "gold"])
        for i in range(12):
            gold = "1" if i % 3 else "2"
            for s in range(3):
                w.writerow([f"p{i}", "judge-t", "ab", s, gold if (i + s) % 3 else "tie", gold])
    specs = [ReportSpec(name, NB, {"verdicts_path": str(path), "n_resamples": 50})
             for name, path in (("point", point), ("pair", pair))]
    out = tmp / "reports"
    res = {r.name: r for r in run_report_batch(specs, out, jobs=1, progress=False)}
    return res, out


@pytest.mark.parametrize("name", ["point", "pair"])
def test_the_report_reads_clean(runs, name):
    res, out = runs
    assert res[name].status == "ok", f"cell {res[name].cell}: {res[name].error}"
    lines = _lines(out / f"{name}.html")
    text = "\n".join(lines)
    assert not re.search(r"\bnan\b", text, re.I) and "[nan" not in text
    assert "-0.00" not in text and "−0.00" not in text
    # a number is never followed by its own parenthesis inside a parenthesis ("(1.2% (n = 240 replies))"); a
    # method's name may hold one ("item bootstrap (percentile, 50 resamples)")
    for line in lines:
        assert not re.search(r"\([^()]*\d%?\s\(", line), line
    # every section heading has something under it before the next heading
    heads = [i for i, x in enumerate(lines) if x.startswith("## ")]
    for a, b in zip(heads, heads[1:] + [len(lines)], strict=True):
        assert b - a > 1, f"empty heading {lines[a]!r}"
    assert ("## Majority vote over samples" in lines) == (name == "pair")


def test_pointwise_report_gives_the_pass_rate_per_model_and_kappa_without_minus_zero(runs):
    res, out = runs
    doc = json.loads((out / "point.metrics.json").read_text(encoding="utf-8"))
    lb = {r["generator"]: r for r in doc["metrics"]["leaderboard"]}
    # by hand: i odd → m-a, i even → m-b; a wrong verdict when i % 4 == 0 (i even: m-b only)
    assert lb["m-a"]["pass_rate"] == pytest.approx(sum(1 for i in range(1, 40, 2) if i % 5) / 20)
    passes_b = sum(1 for i in range(0, 40, 2) if (i % 5 != 0) == (i % 4 != 0))
    assert lb["m-b"]["pass_rate"] == pytest.approx(passes_b / 20)
    lo, hi = proportion_confint(passes_b, 20, method="wilson")
    assert (lb["m-b"]["pass_rate_low"], lb["m-b"]["pass_rate_high"]) == pytest.approx((lo, hi))
    text = "\n".join(_lines(out / "point.html"))
    assert "## Per-model leaderboard from each judge" in text and "Per-model pass rate from each judge" in text
