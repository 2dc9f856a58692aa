"""Notebook 05 (drift) under papermill with small parameters; its metrics checked against counts read from the
LLMBar and AlpacaEval CSV files with the csv module (independent of evallab)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from evallab.paths import REPO_ROOT, data_dir
from evallab.reporting._batch import ReportSpec, run_one

BASE, CAND = "ChatGPT-0301", "ChatGPT"
STRATEGIES = ["Vanilla", "CoT"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("nb05")
    spec = ReportSpec("05_drift", REPO_ROOT / "notebooks" / "05_drift.ipynb",
                      {"strategies": STRATEGIES, "n_resamples": 50})
    res = run_one(spec, out)
    return res, json.loads((out / "05_drift.metrics.json").read_text())["metrics"] if res.status == "ok" else None


@pytest.fixture(scope="module")
def pairs():
    """(subset, idx, strategy) → {judge: row} for both judges, from verdicts.csv."""
    out = {}
    with open(data_dir("llmbar") / "verdicts.csv", newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["judge"] in (BASE, CAND) and r["strategy"] in STRATEGIES:
                out.setdefault((r["subset"], r["idx"], r["strategy"]), {})[r["judge"]] = r
    return {k: v for k, v in out.items() if len(v) == 2}


def test_notebook_runs_offline(run):
    res, m = run
    assert res.status == "ok", f"cell {res.cell}: {res.error}"
    assert m is not None and res.html and Path(res.html).exists()


def test_headline_llmbar_counts(run, pairs):
    _, m = run
    head = [v for (s, _, st), v in pairs.items() if st == "Vanilla" and s.startswith("LLMBar/")]
    assert m["llmbar_headline_items"] == len(head) == 419
    assert m["llmbar_headline_same_ab"] == sum(v[BASE]["winner_order_12"] == v[CAND]["winner_order_12"] for v in head)
    assert m["llmbar_headline_same_ba"] == sum(v[BASE]["winner_order_21"] == v[CAND]["winner_order_21"] for v in head)
    assert m["llmbar_headline_same_both_orders"] == sum(
        (v[BASE]["winner_order_12"], v[BASE]["winner_order_21"]) == (v[CAND]["winner_order_12"],
                                                                     v[CAND]["winner_order_21"]) for v in head)
    for j, key in ((BASE, "llmbar_headline_baseline_accuracy"), (CAND, "llmbar_headline_candidate_accuracy")):
        correct = sum((v[j]["winner_order_12"] == v[j]["label"]) + (v[j]["winner_order_21"] == v[j]["label"])
                      for v in head)
        assert m[key] == pytest.approx(correct / 838)




def _flip_rate(rows):
    """MeowKit's drift: share of verdicts both judges parsed that changed."""
    both = changed = 0
    for v in rows:
        for col in ("winner_order_12", "winner_order_21"):
            a, b = v[BASE][col], v[CAND][col]
            if a and b:
                both += 1
                changed += a != b
    return changed / both


def test_gate_flags_match_csv(run, pairs):
    _, m = run
    groups = {}
    for (s, _, st), v in pairs.items():
        groups.setdefault(("/".join(s.split("/")[:2]), st), []).append(v)
    assert m["gate_groups"] == len(groups)
    rates = {f"subset={s}, strategy={st}": _flip_rate(rows) for (s, st), rows in groups.items()}
    flagged = set(m["gate_flagged_groups"])
    assert flagged and m["gate_flagged"] == len(flagged)
    # a group drifts only when its flip rate exceeds the 5% tolerance; one well within it is never flagged
    assert all(rates[g] > 0.05 for g in flagged)
    assert not {g for g, r in rates.items() if r <= 0.05} & flagged
    # a group that changes a third or more of its verdicts is flagged, whatever its accuracy did
    big = {g for g, r in rates.items() if r > 1 / 3}
    assert big and big <= flagged
    assert m["gate_overall_status"] == "drift" and m["gate_passed"] is False


def test_alpaca_metrics_match_csv(run):
    _, m = run
    pref = {}
    with open(data_dir("alpaca_eval") / "multi_annotator_preferences.csv", newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            pref.setdefault((r["generator_2"], r["instruction_idx"]), {})[r["annotator"]] = r["preference"]
    base, cot = "alpaca_eval_gpt4_turbo_fn", "alpaca_eval_cot_gpt4_turbo_fn"

    def label(p):
        return "1" if float(p) < 1.5 else "2" if float(p) > 1.5 else "tie"
    both = [(label(v[base]), label(v[cot])) for v in pref.values() if v.get(base) and v.get(cot)]
    flips = sum(a != b for a, b in both) / len(both)
    assert m["alpaca_prompt_drift_flip_rate"][cot] == pytest.approx(flips)
    row = next(r for r in m["alpaca_pair_agreement"] if {r["judge_a"], r["judge_b"]} == {base, cot})
    assert row["n"] == len(both) and row["agreement"] == pytest.approx(1 - flips)
    # the rank headline is the lowest tau among leaderboard pairs sharing at least 5 models, with its n and p;
    # the 4-model pairs (p >= 2/4! = 0.083 even at tau = 1) are never headlined
    boards = m["alpaca_leaderboard_rank_agreement"]
    big = [b for b in boards if b["n"] >= m["alpaca_rank_min_models"] == 5]
    low = min(big, key=lambda b: b["tau"])
    assert m["alpaca_min_leaderboard_tau"] == pytest.approx(low["tau"])
    assert m["alpaca_min_leaderboard_tau_n"] == low["n"] >= 5
    assert m["alpaca_min_leaderboard_tau_p"] == pytest.approx(low["pvalue"])
    assert m["alpaca_leaderboard_pairs_below_min"] == sum(b["n"] < 5 for b in boards) == 3
    # P(prefer output 1) = 2 - mean(preference) over parsed rows, the continuous preference used as is
    prefs: dict = {}
    for v in pref.values():
        for a, p in v.items():
            if p != "":
                prefs.setdefault(a, []).append(float(p))
    ev = {r["judge"]: r for r in m["alpaca_evaluator_metrics"]}
    assert set(ev) == set(prefs)
    for a, ps in prefs.items():
        assert ev[a]["p_prefer_output_1"] == pytest.approx(2 - sum(ps) / len(ps))
