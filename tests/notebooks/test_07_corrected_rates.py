"""Notebook 07 (corrected rates, plan, selective judging, anchor calibration) under papermill with tiny parameters;
its headline values checked against computations made here from the LLMBar CSV with the csv module and ppi_py,
and against a small live-recording folder written by the test."""

from __future__ import annotations

import csv
import json
import math
from collections import Counter, defaultdict
from pathlib import Path

import nbformat
import numpy as np
import ppi_py
import pytest

from evallab.paths import REPO_ROOT, data_dir
from evallab.reporting._batch import ReportSpec, run_one

NB = REPO_ROOT / "notebooks" / "07_corrected_rates.ipynb"
SUBSETS = ["LLMBar/Natural", "LLMBar/Adversarial/Neighbor"]
SEL = ["Vanilla", "CoT", "Swap"]
SMALL = {"subsets": SUBSETS, "n_gold": 50, "min_gold": 10, "n_resamples": 50, "splits": 5, "sim_scenarios": 2,
         "sim_samples": 4, "selective_strategies": SEL, "alpha": 0.2, "plan_half_width": 0.05}


def _live_dir(tmp: Path) -> Path:
    """A live-recording folder in the layout `make live` writes (run_card.json naming each study part's table):
    2 content-free probes × 5 samples per anchor set, and 40 graded answers × 1 sample per anchor set, gold on the
    first 20."""
    d = tmp / "live"
    d.mkdir()
    probe, graded = [], []
    for a, passes in (("balanced", 3), ("pass-only", 8)):  # passes of 10 probe replies
        for p in range(2):
            for s in range(5):
                probe.append(dict(item_id=f"x{p}/content-free", kind="content-free", judge="smollm2", anchor_set=a,
                                  sample=s, verdict="pass" if p * 5 + s < passes else "fail", gold=None))
        for i in range(40):
            gold = ("pass" if i % 2 else "fail") if i < 20 else None
            graded.append(dict(item_id=f"a{i}", kind="answer", judge="smollm2", anchor_set=a, sample=0,
                               verdict="pass" if (i % 3) or a == "pass-only" else "fail", gold=gold))
    studies = {}
    for name, rows in (("inflation", graded), ("probe", probe)):
        table = f"{name}-v-t0.jsonl"
        with open(d / table, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
        studies[name] = {"parts": [{"table": table, "structured": "llamacpp"}]}
    (d / "run_card.json").write_text(json.dumps({"studies": studies}), encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nb07")
    live = _live_dir(tmp)
    out = tmp / "reports"
    res = run_one(ReportSpec("07_corrected_rates", NB, {**SMALL, "live_dir": str(live)}), out)
    bare = run_one(ReportSpec("07_no_live", NB, {**SMALL, "live_dir": str(tmp / "absent")}), out)
    m = json.loads((out / "07_corrected_rates.metrics.json").read_text())["metrics"] if res.status == "ok" else None
    return res, m, bare, out


@pytest.fixture(scope="module")
def llmbar():
    """(judge, strategy) -> {item_id: row} for the test's subsets, read with the csv module."""
    out = defaultdict(dict)
    with open(data_dir("llmbar") / "verdicts.csv", newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["subset"] in SUBSETS:
                out[(r["judge"], r["strategy"])][f"{r['subset']}#{r['idx']}"] = r
    return out


def test_parameters_cell_and_stripped_outputs():
    nb = nbformat.read(str(NB), as_version=4)
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and 'report_name: str = "07_corrected_rates"' in params[0].source
    assert all(c.get("outputs", []) == [] and c.get("execution_count") is None for c in nb.cells
               if c.cell_type == "code")


def test_notebook_runs_offline(run):
    res, m, bare, out = run
    assert res.status == "ok", f"cell {res.cell}: {res.error}"
    assert bare.status == "ok", f"cell {bare.cell}: {bare.error}"
    assert Path(res.html).exists()
    text = Path(bare.html).read_text(encoding="utf-8")
    assert "No live SmolLM2 recordings in" in text and "this section is skipped" in text
    assert json.loads((out / "07_no_live.metrics.json").read_text())["metrics"]["live"] is None


def test_judge_only_corrected_and_truth_match_ppi_py_on_the_csv(run, llmbar):
    _, m, _, _ = run
    visible = set(m["visible_gold_items"])
    assert len(visible) == 50
    rates = {r["judge"]: r for r in m["rates"]}
    truth = {r["judge"]: r for r in m["truth"]}
    for judge, r in rates.items():
        rows = llmbar[(judge, "Vanilla")]
        ids = sorted(i for i, x in rows.items() if x["winner_order_12"])  # parsed in order ab (the default)
        f = np.array([1.0 if rows[i]["winner_order_12"] == "2" else 0.0 for i in ids])
        y = np.array([1.0 if rows[i]["label"] == "2" else 0.0 for i in ids])
        lab = np.array([i in visible for i in ids])
        assert r["items"] == len(ids) and r["gold_items"] == lab.sum()
        assert r["judge_only"] == pytest.approx(f.mean())
        est = float(np.ravel(ppi_py.ppi_mean_pointestimate(y[lab], f[lab], f[~lab]))[0])
        lo, hi = ppi_py.ppi_mean_ci(y[lab], f[lab], f[~lab], alpha=0.05)
        assert r["ppi"] == pytest.approx(est) and r["ppi_low"] == pytest.approx(float(lo[0]))
        assert r["ppi_high"] == pytest.approx(float(hi[0]))
        all_ids = sorted(rows)
        assert truth[judge]["truth"] == pytest.approx(np.mean([rows[i]["label"] == "2" for i in all_ids]))


def test_plan_matches_the_textbook_gold_only_size(run):
    _, m, _, _ = run
    gpt4 = next(r for r in m["rates"] if r["judge"] == m["plan_judge"])
    p = gpt4["ppi"]
    gold_only = m["plan"][0]
    assert gold_only["answer"] == math.ceil(1.959963984540054**2 * p * (1 - p) / 0.05**2)
    assert m["plan"][1]["answer"] <= gold_only["answer"]


def test_selective_counts_match_the_csv(run, llmbar):
    _, m, _, _ = run
    for r in m["selective"]:
        votes, gold = defaultdict(Counter), {}
        for st in SEL:
            for i, x in llmbar[(r["judge"], st)].items():
                gold[i] = x["label"]
                for col in ("winner_order_12", "winner_order_21"):
                    if x[col]:
                        votes[i][x[col]] += 1
        maj = {}
        for i in gold:
            c = votes[i].most_common()
            maj[i] = c[0][0] if c and (len(c) == 1 or c[0][1] > c[1][1]) else None
        assert r["no_majority"] == sum(v is None for v in maj.values())
        assert r["items"] == sum(v is not None for v in maj.values())
        agree = [maj[i] == gold[i] for i in gold if maj[i] is not None]
        assert r["overall_agreement"] == pytest.approx(np.mean(agree))
        if r["threshold"] is not None:
            assert 0 <= r["mean_coverage"] <= 1


def test_probe_recovers_the_injected_leniency(run):
    _, m, _, _ = run
    probe = {r["anchor_set"]: r for r in m["probe"]}
    for a, injected in (("balanced", 0.5), ("pass-only", 0.9)):
        assert probe[a]["replies"] == 2 * 3 * 4  # scenarios × content-free inputs × samples
        assert probe[a]["p_cf_low"] <= injected <= probe[a]["p_cf_high"]


def test_live_section_counts_by_hand(run):
    _, m, _, _ = run
    live = m["live"]
    assert live["studies"] == ["inflation", "probe"] and live["replies"] == 2 * (10 + 40)
    p = {r["anchor_set"]: r for r in live["probe"]}
    assert p["balanced"]["p_cf"] == pytest.approx(3 / 10) and p["pass-only"]["p_cf"] == pytest.approx(8 / 10)
    r = {x["anchor_set"]: x for x in live["rates"]}
    # balanced: answers with i % 3 != 0 pass -> 26 of 40 (judge only)
    assert r["balanced"]["judge_only"] == pytest.approx(26 / 40) and r["balanced"]["gold_items"] == 20
    assert r["pass-only"]["judge_only"] == 1.0


# -- the user's table (issue 26: notebook 07 on verdicts_path) -----------------------------------------------------
def _user_rows() -> list[dict]:
    """One judge, 3 samples per item on 200 items in two subsets; gold on the first 60 items."""
    rng = np.random.default_rng(7)
    rows = []
    for i in range(200):
        truth = "pass" if rng.random() < 0.35 else "fail"
        for s in range(3):
            v = truth if rng.random() < 0.85 else ("fail" if truth == "pass" else "pass")
            v = "pass" if rng.random() < 0.2 else v  # a lenient judge
            rows.append(dict(item_id=f"q{i}", subset="math" if i % 2 else "code", judge="my-judge", sample=s,
                             verdict=v, gold=truth if i < 60 else ""))
    return rows


@pytest.fixture(scope="module")
def user_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nb07_user")
    rows = _user_rows()
    path = tmp / "mine.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = tmp / "reports"
    res = run_one(ReportSpec("07_user", NB, {"verdicts_path": str(path), "n_resamples": 20, "splits": 5,
                                             "sim_scenarios": 1, "sim_samples": 2}), out)
    return res, rows, out


def test_notebook_07_on_the_users_table_corrects_with_its_gold_sample(user_run):
    res, rows, out = user_run
    assert res.status == "ok", f"cell {res.cell}: {res.error}"
    m = json.loads((out / "07_user.metrics.json").read_text())["metrics"]
    # the judge's value of an item is the mean of its 3 samples; PPI++ from the 60 gold items, by ppi_py
    per = defaultdict(list)
    gold = {}
    for r in rows:
        per[r["item_id"]].append(r["verdict"] == "pass")
        gold[r["item_id"]] = r["gold"]
    ids = sorted(per)
    f = np.array([np.mean(per[i]) for i in ids])
    lab = np.array([gold[i] != "" for i in ids])
    y = np.array([gold[i] == "pass" for i in ids], float)
    est = float(np.ravel(ppi_py.ppi_mean_pointestimate(y[lab], f[lab], f[~lab]))[0])
    lo, hi = ppi_py.ppi_mean_ci(y[lab], f[lab], f[~lab], alpha=0.05)
    (r,) = m["rates"]
    assert (r["judge"], r["items"], r["gold_items"]) == ("my-judge", 200, 60)
    assert r["judge_only"] == pytest.approx(f.mean())
    assert r["ppi"] == pytest.approx(est) and r["ppi_low"] == pytest.approx(float(lo[0]))
    assert r["ppi_high"] == pytest.approx(float(hi[0]))
    assert m["n_gold"] == 60 and m["truth"] is None and len(m["visible_gold_items"]) == 60
    assert m["plan_judge"] == "my-judge" and m["plan"] is not None
    assert m["selective"][0]["items"] == sum(1 for i in ids if gold[i] and Counter(per[i]).most_common(1)[0][1] >= 2)


def test_notebook_07_on_the_users_table_shows_no_bundled_finding(user_run):
    res, _, out = user_run
    doc = json.loads((out / "07_user.metrics.json").read_text())
    for key in ("difference", "difference_truth", "probe", "contextual", "live"):
        assert key not in doc["metrics"], key
    sentences = [f["sentence"] if isinstance(f, dict) else str(f) for f in doc.get("findings", [])]
    assert sentences and all("truth" not in s and "simulated" not in s.lower() for s in sentences)
    assert not any(w in s for s in sentences for w in ("SmolLM2", "A − B", "content-free", "LLMBar"))
    executed = json.loads((out / "07_user.ipynb").read_text(encoding="utf-8"))
    shown = json.dumps([c.get("outputs", []) for c in executed["cells"] if c["cell_type"] == "code"])
    for word in ("SmolLM2", "content-free probe", "Paired difference", "[nan", "NaN"):
        assert word not in shown, word
