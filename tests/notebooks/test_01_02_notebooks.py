"""Notebooks 01 and 02 under papermill with small parameters; metrics checked against counts read from the CSV
with the csv module (independent of evallab), plus a notebook pointed at a bad verdict table in the same batch."""

from __future__ import annotations

import csv
import json
from collections import Counter

import pytest

from evallab.paths import REPO_ROOT, data_dir
from evallab.reporting._batch import ReportSpec, run_report_batch

NB = REPO_ROOT / "notebooks"
SMALL = {"subsets": ["LLMBar/Natural"], "strategies": ["Vanilla"], "n_resamples": 50}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nb")
    bad = tmp / "bad_verdicts.csv"
    bad.write_text("item_id,judge,order,verdict\nq1,J,ab,1\nq1,J,ab,2\n")  # duplicated key on row 2
    specs = [
        ReportSpec("01_judge_agreement", NB / "01_judge_agreement.ipynb", SMALL),
        ReportSpec("02_position_bias", NB / "02_position_bias.ipynb",
                   {**SMALL, "anchor_variants": ["Vanilla_1shot"]}),
        ReportSpec("01_bad_input", NB / "01_judge_agreement.ipynb", {**SMALL, "verdicts_path": str(bad)}),
    ]
    out = tmp / "reports"
    results = {r.name: r for r in run_report_batch(specs, out, jobs=2, progress=False)}
    return results, out


def metrics(out, name):
    return json.loads((out / f"{name}.metrics.json").read_text())["metrics"]


@pytest.fixture(scope="module")
def csv_rows():
    with open(data_dir("llmbar") / "verdicts.csv", newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["subset"] == "LLMBar/Natural" and r["strategy"] == "Vanilla"]


def test_agreement_notebook_metrics(batch, csv_rows):
    results, out = batch
    assert results["01_judge_agreement"].status == "ok", results["01_judge_agreement"].error
    m = metrics(out, "01_judge_agreement")
    assert m["replies"] == 2 * len(csv_rows) == 1200
    unparsed = sum((r["winner_order_12"] == "") + (r["winner_order_21"] == "") for r in csv_rows)
    assert m["unparsed_replies"] == unparsed
    assert m["published_rows_reproduced"] == m["published_rows"] == 499
    assert m["natural_vanilla_gpt4_acc_published"] == 95.5 and m["natural_vanilla_gpt4_agr_published"] == 95
    # LLMBar's Acc. = mean of the two order accuracies over parsed replies; pooled accuracy under its own name
    for row in m["accuracy"]:
        rs = [r for r in csv_rows if r["judge"] == row["judge"]]
        acc = []
        for col in ("winner_order_12", "winner_order_21"):
            parsed = [(r[col], r["label"]) for r in rs if r[col]]
            acc.append(sum(w == g for w, g in parsed) / len(parsed))
        assert row["acc"] == pytest.approx(sum(acc) / 2)
        assert row["acc_low"] <= row["acc"] <= row["acc_high"]
    for row in m["accuracy_pooled"]:
        rs = [r for r in csv_rows if r["judge"] == row["judge"]]
        parsed = [(w, r["label"]) for r in rs for w in (r["winner_order_12"], r["winner_order_21"]) if w]
        assert row["accuracy"] == pytest.approx(sum(w == g for w, g in parsed) / len(parsed))
    assert (out / "01_judge_agreement.html").exists()


def test_position_notebook_metrics(batch, csv_rows):
    results, out = batch
    assert results["02_position_bias"].status == "ok", results["02_position_bias"].error
    m = metrics(out, "02_position_bias")
    for row in m["position_bias"]:
        rs = [r for r in csv_rows if r["judge"] == row["judge"]]
        both = [r for r in rs if r["winner_order_12"] and r["winner_order_21"]]
        assert row["both_parsed"] == len(both)
        assert row["consistent"] == sum(r["winner_order_12"] == r["winner_order_21"] for r in both)
        # MT-Bench's breakdown: the winners are the ORIGINAL output index in both columns
        assert row["biased_first"] == sum(r["winner_order_12"] == "1" and r["winner_order_21"] == "2" for r in both)
        assert row["biased_second"] == sum(r["winner_order_12"] == "2" and r["winner_order_21"] == "1" for r in both)
        firsts = Counter()
        for r in rs:
            firsts["first"] += (r["winner_order_12"] == "1") + (r["winner_order_21"] == "2")
            firsts["decisive"] += (r["winner_order_12"] != "") + (r["winner_order_21"] != "")
        assert (row["first_slot"], row["decisive"]) == (firsts["first"], firsts["decisive"])
    gpt4 = next(r for r in m["position_bias"] if r["judge"] == "GPT-4")
    assert gpt4["consistent"] == 95
    assert {r["strategy"] for r in m["anchor_effect"]} == {"Vanilla", "Vanilla_1shot"}
    # nine real judges (Shi et al. 2024): the 27 printed figures reproduced; family preference stated
    assert m["real_judges_reproduced"] == m["real_judges_files"] == 27
    assert m["family_preference_low"] <= m["family_preference_difference"] <= m["family_preference_high"]


def test_bad_input_fails_its_notebook_only(batch):
    results, out = batch
    bad = results["01_bad_input"]
    assert bad.status == "failed"
    assert "bad_verdicts.csv" in bad.error and "duplicated key" in bad.error and "row 2" in bad.error
    assert bad.cell == 2  # the load cell, right after the parameters cell
    index = (out / "index.html").read_text()
    assert "duplicated key" in index and "02_position_bias.html" in index
