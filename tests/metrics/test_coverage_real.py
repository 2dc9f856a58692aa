"""Coverage on real data, reduced (the full check is ``make coverage``, issue 26): gold hidden on random subsets of
LLMBar's tables, each interval counted against the value on the table's full gold. The full-gold values are
recomputed here with pandas from the tidy table, never taken from what the benchmark printed."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import coverage as C
from evallab.datasets import load_llmbar
from evallab.paths import data_dir

REPS = 12


@pytest.fixture(scope="module")
def rows():
    return C.run(C._real_names(), reps=REPS, n_resamples=50, jobs=1, chunk=6)


@pytest.fixture(scope="module")
def llmbar():
    return load_llmbar(subsets=["LLMBar"], strategies=["Vanilla"]).verdicts


def _scenario(name):
    return C._get([name])[0]


def test_one_line_per_interval_with_a_coverage(rows):
    got = {(r["scenario"], r["key"]) for r in rows}
    want = {(C._real_name(j, o), k) for j, o in C.REAL_JUDGES for k in C.REAL_KEYS}
    want.add((C._real_names()[-1], "flip_rate"))
    assert got == want
    for r in rows:
        assert r["reps"] == REPS and r["population"] == 419 and r["sample"] == C.REAL_GOLD
        assert 0.0 <= r["coverage"] <= 1.0 and 0.0 <= r["fpc_coverage"] <= 1.0
        assert r["fpc"] == pytest.approx(np.sqrt(1 - C.REAL_GOLD / 419))
        text = C.line(r)
        assert text.startswith(r["label"])
        if r.get("not_computable"):
            assert r["nan"] == REPS and "nan" not in text and text.endswith(r["not_computable"])
        else:
            assert text.endswith(f"coverage {r['coverage']:.3f}") and "finite population: 100 of 419 items" in text
    # the judge below chance on LLMBar: Rogan–Gladen refuses, with the reason its Results give
    rg = next(r for r in rows if r["scenario"] == C._real_name("ChatGPT", ("ab", "ba")) and r["key"] == "rg")
    assert "no better than chance" in rg["not_computable"]
    # the interval's method on the line is the one its estimator reported
    acc = next(r for r in rows if r["scenario"] == C._real_name("GPT-4", ("ab",)) and r["key"] == "accuracy")
    assert "(Wilson score;" in acc["label"]


def test_full_gold_values_recomputed_with_pandas(llmbar):
    g4 = llmbar[llmbar["judge"] == "GPT-4"]
    sc = _scenario(C._real_name("GPT-4", ("ab", "ba")))
    parsed = g4[g4["verdict"].notna()]
    assert sc.truth["accuracy"] == pytest.approx((parsed["verdict"] == parsed["gold"]).mean(), abs=1e-12)
    # PPI++ and Rogan–Gladen target the gold rate of output 2 over the items with a parsed verdict
    items = parsed.drop_duplicates("item_id")
    assert sc.truth["ppi"] == sc.truth["rg"] == pytest.approx((items["gold"] == "2").mean(), abs=1e-12)
    # the flip rate between the two judges' parsed replies of the same item and order, on every item
    b, c = (llmbar[llmbar["judge"] == j][["item_id", "order", "verdict"]] for j in C.REAL_DRIFT)
    m = b.merge(c, on=["item_id", "order"]).dropna()
    assert _scenario(C._real_names()[-1]).truth["flip_rate"] == pytest.approx(
        (m["verdict_x"] != m["verdict_y"]).mean(), abs=1e-12)


def test_one_subset_hides_gold_and_accuracy_is_that_of_its_gold_items(llmbar):
    sc = _scenario(C._real_name("GPT-4", ("ab", "ba")))
    full = llmbar[llmbar["judge"] == "GPT-4"].reset_index(drop=True)
    sub = sc.simulate(12345)
    kept = sub.loc[sub["gold"].notna(), "item_id"].unique()
    assert len(kept) == C.REAL_GOLD
    assert sub["gold"].notna().sum() == full["item_id"].isin(kept).sum()  # every reply of a kept item keeps gold
    assert (sub.loc[sub["gold"].notna(), "gold"] == full.loc[sub["gold"].notna(), "gold"]).all()
    rows = full[full["item_id"].isin(kept) & full["verdict"].notna()]
    est, low, high = sc.estimate(sub, 0, 50)["accuracy"]
    assert est == pytest.approx((rows["verdict"] == rows["gold"]).mean(), abs=1e-12)
    assert low < est < high


def test_finite_population_explains_over_coverage_only():
    # four intervals about estimates 0.5 with half-width 0.1; the truth 0.58: covered, but not once shrunk by 0.7
    est, lo, hi = np.full(4, 0.5), np.full(4, 0.4), np.full(4, 0.6)
    assert C._covers(est, lo, hi, 0.58).all() and not C._covers(est, lo, hi, 0.58, 0.7).any()
    assert not C._covers(est, np.array([np.nan] * 4), hi, 0.5).any()  # NaN: a miss
    r = dict(reference=False, population=419, sample=100, conservative=None)
    assert C._gated_ok(dict(r, coverage=0.985, fpc_coverage=0.951))
    assert not C._gated_ok(dict(r, coverage=0.985, fpc_coverage=0.99))
    assert not C._gated_ok(dict(r, coverage=0.90, fpc_coverage=0.95))  # under-coverage is never excused
    assert C._gated_ok(dict(r, coverage=1.0, fpc_coverage=0.99, conservative="by construction"))
    assert not C._gated_ok(dict(reference=False, coverage=0.985))  # simulated: the band alone


def test_every_format_file_is_listed_with_its_gold_count():
    files = sorted(p for p in data_dir("formats").rglob("*")
                   if p.suffix in (".json", ".jsonl", ".eval") and p.name != "question.jsonl")  # not a verdict file
    got = C.formats_without_gold()
    assert [f["path"] for f in got] == [f"data/formats/{p.relative_to(data_dir('formats')).as_posix()}"
                                        for p in files]
    assert all(f["with_gold"] == 0 and f["replies"] > 0 for f in got)
    pair = next(f for f in got if f["path"].endswith("mt_bench/gpt-4_pair.jsonl"))
    lines = [x for x in (data_dir("formats") / "mt_bench" / "gpt-4_pair.jsonl").read_text().splitlines() if x]
    assert pair["replies"] == 2 * len(lines)  # both presentation orders of each FastChat line
