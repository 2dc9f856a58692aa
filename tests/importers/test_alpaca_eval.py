"""evallab.datasets._alpaca_eval: AlpacaEval's preferences, outputs, leaderboards and evaluator leaderboard into
tidy tables, checked against the files read with the csv/json modules (independent of evallab)."""

from __future__ import annotations

import csv
import json
import shutil
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from evallab.datasets import load_alpaca_eval, load_alpaca_eval_leaderboards
from evallab.datasets._alpaca_eval import (
    MISSING_PREFERENCE,
    load_alpaca_eval_annotators,
    load_alpaca_eval_evaluators,
    load_alpaca_eval_outputs,
    preference_to_verdict,
)
from evallab.errors import DataError
from evallab.paths import data_dir

FOLDER = data_dir("alpaca_eval")


@pytest.fixture(scope="module")
def raw():
    with open(FOLDER / "multi_annotator_preferences.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def ae():
    return load_alpaca_eval()


def test_verdicts_follow_preferences(raw, ae):
    v = ae.verdicts
    assert len(v) == len(raw) == 10465
    assert v.duplicated(["dataset", "item_id", "judge", "strategy", "anchor_set", "order", "sample"]).sum() == 0
    expect = Counter("NA" if r["preference"] == "" else "tie" if float(r["preference"]) == 1.5
                     else "1" if float(r["preference"]) < 1.5 else "2" for r in raw)
    got = Counter(v["verdict"].fillna("NA"))
    assert got == expect and got["tie"] == 23 and got["NA"] == 1
    na = v[v["verdict"].isna()].iloc[0]
    r_na = next(r for r in raw if r["preference"] == "")
    assert na["error"] == MISSING_PREFERENCE  # kept, never dropped
    assert (na["item_id"], na["judge"]) == (f"{r_na['generator_2']}#{r_na['instruction_idx']}", r_na["annotator"])
    # the weighted annotator's continuous preference is kept in score
    w = v[v["judge"] == "weighted_alpaca_eval_gpt4_turbo"]
    raw_w = [float(r["preference"]) for r in raw if r["annotator"] == "weighted_alpaca_eval_gpt4_turbo"]
    assert w["score"].astype(float).sum() == pytest.approx(sum(raw_w))
    assert ((w["score"] > 1) & (w["score"] < 2) & (w["score"] != 1.5)).sum() > 2000
    assert set(v["gold"].isna()) == {True} and set(v["order"]) == {""}
    assert set(v["model"]) == {"gpt-4-1106-preview"}
    r0 = raw[0]
    first = v[(v["judge"] == r0["annotator"]) & (v["item_id"] == f"{r0['generator_2']}#{r0['instruction_idx']}")]
    assert first["subset"].iloc[0] == r0["dataset"] == "helpful_base"
    # referenced_models {"m": "output_2", ...}: output 2 was shown first (as model "m")
    assert json.loads(r0["referenced_models"])["m"] == "output_2" and first["shown_first"].iloc[0] == "2"


def test_shown_first_counts(raw, ae):
    cot = ae.verdicts[ae.verdicts["judge"] == "alpaca_eval_cot_gpt4_turbo_fn"]
    refs = [json.loads(r["referenced_models"]) for r in raw
            if r["annotator"] == "alpaca_eval_cot_gpt4_turbo_fn" and r["referenced_models"]]
    expect = Counter(d["m"] for d in refs if "m" in d)  # "m" is shown first; 4 rows name only "M" (unknown)
    assert sum(expect.values()) == 4814 and sum("m" not in d for d in refs) == 4
    assert (cot["shown_first"] == "1").sum() == expect["output_1"]
    assert (cot["shown_first"] == "2").sum() == expect["output_2"]
    assert ae.verdicts.loc[ae.verdicts["judge"] != "alpaca_eval_cot_gpt4_turbo_fn", "shown_first"].isna().all()


def test_items_have_output_lengths(ae):
    outputs = {}
    with open(FOLDER / "outputs.jsonl", encoding="utf-8") as fh:
        for line in fh:
            o = json.loads(line)
            outputs[(o["generator"], o["instruction_idx"])] = o["output"]
    it = ae.items
    assert len(it) == 6 * 805 and it["item_id"].is_unique
    for r in it.sample(25, random_state=0).itertuples():
        assert r.len_1 == len(outputs[("gpt4_1106_preview", r.instruction_idx)])
        assert r.len_2 == len(outputs[(r.generator_2, r.instruction_idx)])
    assert set(ae.verdicts["item_id"]) == set(it["item_id"])


def test_filters_text_and_errors(tmp_path):
    small = load_alpaca_eval(annotators=["weighted_alpaca_eval_gpt4_turbo"], generators=["alpaca-7b"],
                             with_text=True)
    assert len(small.verdicts) == 805 and len(small.items) == 805
    assert small.items["instruction"].notna().all() and small.items["output_2"].str.len().eq(
        small.items["len_2"]).all()
    with pytest.raises(DataError, match="selects no rows; available"):
        load_alpaca_eval(annotators=["gpt-5"])
    with pytest.raises(DataError, match="multi_annotator_preferences.csv"):
        load_alpaca_eval(tmp_path)
    bad = tmp_path / "ae"
    shutil.copytree(FOLDER, bad)
    lines = (bad / "multi_annotator_preferences.csv").read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace(",1.0,", ",3.0,", 1)
    (bad / "multi_annotator_preferences.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as e:
        load_alpaca_eval(bad)
    assert e.value.row == 3 and e.value.column == "preference" and "outside [1, 2]" in str(e.value)


def test_preference_to_verdict_boundaries():
    v = preference_to_verdict(pd.Series([1.0, 1.4999, 1.5, 1.5001, 2.0, np.nan]))
    assert list(v.fillna("NA")) == ["1", "1", "tie", "2", "2", "NA"]


def test_leaderboards_long_table():
    lb = load_alpaca_eval_leaderboards()
    files = sorted((FOLDER / "leaderboards").glob("*/*_leaderboard.csv"))
    for f in files:
        with open(f, newline="") as fh:
            rows = list(csv.DictReader(fh))
        board = f"{f.parent.name.removeprefix('data_')}/{f.stem.removesuffix('_leaderboard')}"
        got = lb[lb["leaderboard"] == board]
        assert len(got) == len(rows)
        assert got["win_rate"].sum() == pytest.approx(sum(float(r["win_rate"]) for r in rows))
        assert got["is_baseline"].sum() == sum(r["n_draws"] not in ("", "0", "0.0") and float(r["n_draws"])
                                               == float(r["n_total"]) for r in rows)
    assert set(lb["version"]) == {"AlpacaEval", "AlpacaEval_2"}


def test_evaluator_leaderboard_and_annotators():
    ev = load_alpaca_eval_evaluators()
    assert len(ev) == 32
    sus = ev[ev["human_agreement_suspect"]]
    assert list(sus["evaluator"]) == ["weighted_alpaca_eval_gpt-4o-mini-2024-07-18"]
    assert sus["human_agreement"].iloc[0] == pytest.approx(0.3367, abs=1e-4)
    ann = load_alpaca_eval_annotators().set_index("annotator")
    assert ann.loc["weighted_alpaca_eval_gpt4_turbo", "strategy"] == "alpaca_eval_clf_gpt4_turbo"
    assert ann.loc["weighted_alpaca_eval_gpt4_turbo", "parser"] == "logprob_parser"
    assert ann.loc["alpaca_eval_gpt4", "model"] == "gpt-4"


def test_outputs_loader():
    out = load_alpaca_eval_outputs()
    assert len(out) == 5635 and (out["length"] == out["output"].str.len()).all()


def test_weighted_annotator_win_rates_from_continuous_preference(raw, ae):
    from evallab.metrics._evaluators import win_rates

    judge = "weighted_alpaca_eval_gpt4_turbo"
    hand = {}
    for r in raw:
        if r["annotator"] == judge and r["preference"] != "":
            hand.setdefault(r["generator_2"], []).append(float(r["preference"]) - 1)
    w = win_rates(ae.verdicts[ae.verdicts["judge"] == judge], n_resamples=200).set_index("generator_2")
    for gen, published in (("alpaca-7b", 2.59), ("claude-2.1", 15.73), ("gpt-3.5-turbo-0301", 9.62)):
        mean = sum(hand[gen]) / len(hand[gen])
        assert round(100 * mean, 2) == published
        assert w.loc[gen, "win_rate"] == pytest.approx(mean)
        assert w.loc[gen, "parsed"] == len(hand[gen]) == 805
        assert w.loc[gen, "continuous"] == 805
        assert w.loc[gen, "win_rate_low"] <= w.loc[gen, "win_rate"] <= w.loc[gen, "win_rate_high"]
    # the discrete verdicts alone give another figure: the continuous preference is what is used
    disc = win_rates(ae.verdicts[ae.verdicts["judge"] == judge], preference=None, n_resamples=0)
    assert not np.isclose(disc.set_index("generator_2").loc["claude-2.1", "win_rate"], w.loc["claude-2.1",
                                                                                               "win_rate"])


# ----------------------------------------------------------------- the legacy draw code 0 (issue 32, alpaca_eval#290)
def _alpaca_win_rate(prefs) -> float:
    """AlpacaEval's own win rate (``metrics/helpers.py`` / ``get_winrate``), written out here: 0 is read as 1.5 "for
    backward compatibility", then the mean of ``preference - 1`` — a draw counts half."""
    p = [1.5 if float(x) == 0 else float(x) for x in prefs]
    return sum(x - 1 for x in p) / len(p)


def test_the_loader_reads_preference_0_as_a_draw(tmp_path, raw):
    from evallab.metrics import win_rates

    folder = tmp_path / "ae"
    shutil.copytree(FOLDER, folder)
    rows = [dict(r) for r in raw]
    key = (rows[0]["annotator"], rows[0]["generator_2"])
    group = [i for i, r in enumerate(rows) if (r["annotator"], r["generator_2"]) == key and r["preference"]]
    for i in group[:7]:  # seven of the group's preferences written with the legacy draw code
        rows[i]["preference"] = "0"
    with open(folder / "multi_annotator_preferences.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(raw[0]))
        w.writeheader()
        w.writerows(rows)
    ae = load_alpaca_eval(folder)
    v = ae.verdicts
    g = v[(v["judge"] == key[0]) & (v["generator_2"] == key[1])]
    zero = {rows[i]["instruction_idx"] for i in group[:7]}
    drawn = g[g["instruction_idx"].astype(str).isin(zero)]
    assert len(drawn) == 7 and (drawn["verdict"] == "tie").all() and (drawn["score"] == 1.5).all()
    prefs = [rows[i]["preference"] for i in group]
    got = win_rates(v, n_resamples=0)
    got = got[(got["judge"] == key[0]) & (got["generator_2"] == key[1])]["win_rate"].iloc[0]
    assert got == pytest.approx(_alpaca_win_rate(prefs))


def test_the_importer_reads_preference_0_as_a_draw_with_the_same_win_rate(tmp_path):
    from evallab.importers import import_file
    from evallab.metrics import win_rates

    prefs = [1, 2, 0, 2, 0, 1.5, 2]
    entries = [{"instruction": f"q{i}", "output_1": "a", "generator_1": "base", "output_2": "b",
                "generator_2": "model", "annotator": "legacy_gpt4", "preference": p} for i, p in enumerate(prefs)]
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    df = import_file(path)
    assert df["verdict"].tolist() == ["1", "2", "tie", "2", "tie", "tie", "2"]
    assert df["score"].tolist() == [1.0, 2.0, 1.5, 2.0, 1.5, 1.5, 2.0]
    w = win_rates(df, n_resamples=0)["win_rate"].iloc[0]
    assert w == pytest.approx(_alpaca_win_rate(prefs)) and w == pytest.approx((3 + 0.5 * 3) / 7)
