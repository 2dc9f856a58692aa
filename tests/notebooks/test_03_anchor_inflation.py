"""Notebook 03 under papermill: offline (LLMBar few-shot evidence, rubric library), against the local simulated
judge server (the PASS-only vs balanced experiment, recorded), and replayed from that recording. Metrics are
checked against counts read with the csv/json modules and against hand counts from the preset files."""

from __future__ import annotations

import csv
import json
from collections import defaultdict

import nbformat
import pytest

from evallab.paths import REPO_ROOT, data_dir
from evallab.reporting._batch import ReportSpec, run_one, run_report_batch

NB = REPO_ROOT / "notebooks" / "03_anchor_inflation.ipynb"
SMALL = {"subsets": ["LLMBar/Natural"], "n_resamples": 100}
VARIANTS = ["balanced", "pass-only", "fail-last"]


def _metrics(out, name):
    return json.loads((out / f"{name}.metrics.json").read_text())["metrics"]


def test_parameters_cell_and_stripped_outputs():
    nb = nbformat.read(str(NB), as_version=4)
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1
    src = params[0].source
    for p in ('report_name = "03_anchor_inflation"', 'reports_dir = ""', 'judge_base_url = ""', 'judge_model = ""',
              'judge_api_key_env = ""', "samples = ", 'record_dir = ""'):
        assert p in src
    assert all(c.get("outputs", []) == [] and c.get("execution_count") is None for c in nb.cells
               if c.cell_type == "code")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from evallab.testing import LocalJudgeServer, SimulatedJudge

    tmp = tmp_path_factory.mktemp("nb03")
    out, rec = tmp / "reports", tmp / "run"
    sim = SimulatedJudge(seed=5, pass_rate=0.4, pass_only_inflation=0.5, fail_last_priming=0.2)
    with LocalJudgeServer(sim=sim) as srv:
        live = {**SMALL, "judge_base_url": srv.base_url, "judge_model": "sim-judge", "judge_label": "sim",
                "variants": VARIANTS, "samples": 1, "record_dir": str(rec), "cache_dir": str(tmp / "cache")}
        specs = [ReportSpec("03_offline", NB, SMALL), ReportSpec("03_live", NB, live)]
        results = {r.name: r for r in run_report_batch(specs, out, jobs=2, progress=False)}
    # the server is gone: the replay must answer from the recording alone
    replay = {**SMALL, "replay_dir": str(rec), "variants": VARIANTS, "samples": 1}
    results["03_replay"] = run_one(ReportSpec("03_replay", NB, replay), out)
    return results, out, rec


@pytest.fixture(scope="module")
def csv_rows():
    with open(data_dir("llmbar") / "verdicts.csv", newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["subset"] == "LLMBar/Natural"
                and r["strategy"] in ("Vanilla", "Vanilla_1shot", "Vanilla_2shot")]


def test_offline_llmbar_anchor_effect(runs, csv_rows):
    results, out, _ = runs
    assert results["03_offline"].status == "ok", results["03_offline"].error
    m = _metrics(out, "03_offline")
    assert m["judge_configured"] is False and "inflation" not in m
    by = defaultdict(list)
    for r in csv_rows:
        by[(r["judge"], r["strategy"])].append(r)
    rows = m["anchor_effect"]
    assert {r["strategy"] for r in rows} == {"Vanilla", "Vanilla_1shot", "Vanilla_2shot"}
    for row in rows:
        rs = by[(row["judge"], row["strategy"])]
        common = set.intersection(*({r["idx"] for r in by[(row["judge"], s)]}
                                    for s in ("Vanilla", "Vanilla_1shot", "Vanilla_2shot")
                                    if by[(row["judge"], s)]))
        rs = [r for r in rs if r["idx"] in common]
        first = sum((r["winner_order_12"] == "1") + (r["winner_order_21"] == "2") for r in rs)
        decisive = sum((r["winner_order_12"] in ("1", "2")) + (r["winner_order_21"] in ("1", "2")) for r in rs)
        parsed = [(w, r["label"]) for r in rs for w in (r["winner_order_12"], r["winner_order_21"]) if w]
        assert row["items"] == len(common)
        assert row["first_slot_preference"] == pytest.approx(first / decisive)
        assert row["accuracy"] == pytest.approx(sum(w == g for w, g in parsed) / len(parsed))
        if row["strategy"] != "Vanilla":
            assert row["delta_first_slot_low"] <= row["delta_first_slot"] <= row["delta_first_slot_high"]
    # the bundled rubric library is clean; each preset hard-fails on functionality whatever its average
    assert m["rubric_findings"] == 0
    want = {"backend-api": 1 - 0.45, "cli-tool": 1 - 0.40, "frontend-app": 1 - 0.30, "fullstack-product": 1 - 0.20}
    assert {h["preset"]: pytest.approx(h["weighted_score"]) for h in m["hard_fail"]} == want
    assert all(h["verdict"] == "FAIL" and h["hard_failed"] == "functionality" for h in m["hard_fail"])
    assert (out / "03_offline.html").exists()


def _counts(rec):
    """Per anchor set: [passes, parsed, gold-fail passes, gold-fail parsed], read from the run's journal."""
    c = defaultdict(lambda: [0, 0, 0, 0])
    with open(rec / "verdicts.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["verdict"] is None:
                continue
            x = c[r["anchor_set"]]
            x[0] += r["verdict"] == "pass"
            x[1] += 1
            x[2] += r["gold"] == "fail" and r["verdict"] == "pass"
            x[3] += r["gold"] == "fail"
    return c


def test_live_run_against_local_server(runs):
    results, out, rec = runs
    assert results["03_live"].status == "ok", results["03_live"].error
    m = _metrics(out, "03_live")
    assert m["judge_configured"] is True
    assert m["experiment_replies"] == 136 * len(VARIANTS) and m["experiment_unparsed"] == 0
    c = _counts(rec)
    assert sum(x[1] for x in c.values()) == 136 * len(VARIANTS)
    infl = {r["anchor_set"]: r for r in m["inflation"]}
    for v in VARIANTS:
        assert infl[v]["pass_rate"] == pytest.approx(c[v][0] / c[v][1])
        assert infl[v]["false_pass_rate"] == pytest.approx(c[v][2] / c[v][3])
    hand = (c["pass-only"][0] / c["pass-only"][1]) / (c["balanced"][0] / c["balanced"][1]) - 1
    assert m["pass_only_inflation"] == pytest.approx(hand)
    # the simulated judge injects +50% under PASS-only anchors and -0.2 P(pass) under FAIL-last
    assert m["pass_only_inflation_low"] <= 0.5 <= m["pass_only_inflation_high"]
    fp = {v: c[v][2] / c[v][3] for v in VARIANTS}
    assert m["pass_only_delta_false_pass"] == pytest.approx(fp["pass-only"] - fp["balanced"])
    assert m["pass_only_delta_false_pass_low"] <= m["pass_only_delta_false_pass"] <= m["pass_only_delta_false_pass_high"]
    assert m["fail_last_shift"] == pytest.approx(c["fail-last"][0] / c["fail-last"][1]
                                                 - c["balanced"][0] / c["balanced"][1])
    assert (rec / "anchor-inflation.json").exists()


def test_replay_reproduces_the_recorded_run(runs):
    results, out, _ = runs
    assert results["03_replay"].status == "ok", results["03_replay"].error
    live, replay = _metrics(out, "03_live"), _metrics(out, "03_replay")
    for k in ("experiment_replies", "pass_only_inflation", "pass_only_false_pass_rate", "fail_last_shift"):
        assert replay[k] == pytest.approx(live[k])
