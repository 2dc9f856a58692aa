"""evallab.metrics._drift: LLMBar 0301 → 0613 drift figures against hand counts, the tolerance gate on a synthetic 8% drift,
AlpacaEval evaluator metrics on hand-made cases, Kendall's tau against scipy, calibration replay and re-verify
through fake in-memory judges, and the ``evallab drift`` command's exit codes."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from evallab import verdicts as V
from evallab.datasets import _calibration as calibration
from evallab.datasets import load_alpaca_eval, load_alpaca_eval_leaderboards, load_llmbar
from evallab.errors import DataError, EvallabError
from evallab.experiments import _drift as drift_exp
from evallab.judges import JudgeReply
from evallab.judges._parsing import parse_reply
from evallab.metrics import _drift as drift
from evallab.metrics import _evaluators as evaluators
from evallab.metrics._agreement import cohen_kappa, judge_agreement
from evallab.paths import REPO_ROOT, data_dir

HERE = Path(__file__).parents[1] / "data" / "drift"
BASE, CAND = "ChatGPT-0301", "ChatGPT"

# Hand count (the csv module over data/llmbar/verdicts.csv, re-done in test_hand_count_matches_csv below):
# LLMBar/Natural + LLMBar/Adversarial/*, strategy "Vanilla", gpt-3.5-turbo-0301 vs -0613, every reply parsed.
HAND = dict(items=419, same_ab=348, same_ba=350, same_both_orders=291, base_correct=403, cand_correct=335,
            replies=838, b=93, c=31, ab_1_to_2=40, ab_2_to_1=31)
# McNemar pairs ITEMS: b = items with more replies right under the baseline than under the candidate, c = the reverse


@pytest.fixture(scope="module")
def vanilla():
    bar = load_llmbar(subsets=["LLMBar/Natural", "LLMBar/Adversarial"], judges=[BASE, CAND], strategies=["Vanilla"])
    return bar.verdicts


@pytest.fixture(scope="module")
def report(vanilla):
    return drift.compare_judges(vanilla, BASE, CAND, by=["subset"], n_resamples=500)


def test_hand_count_matches_csv():
    rows = {}
    with open(data_dir("llmbar") / "verdicts.csv", newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["strategy"] == "Vanilla" and r["subset"].startswith("LLMBar/") and r["judge"] in (BASE, CAND):
                rows.setdefault((r["subset"], r["idx"]), {})[r["judge"]] = r
    pairs = list(rows.values())
    assert len(pairs) == HAND["items"]
    assert sum(p[BASE]["winner_order_12"] == p[CAND]["winner_order_12"] for p in pairs) == HAND["same_ab"]
    assert sum(p[BASE]["winner_order_21"] == p[CAND]["winner_order_21"] for p in pairs) == HAND["same_ba"]
    assert sum(p[BASE]["winner_order_12"] == p[CAND]["winner_order_12"]
               and p[BASE]["winner_order_21"] == p[CAND]["winner_order_21"] for p in pairs) == HAND["same_both_orders"]
    def right(p, j):
        return (p[j]["winner_order_12"] == p[j]["label"]) + (p[j]["winner_order_21"] == p[j]["label"])
    for j, key in ((BASE, "base_correct"), (CAND, "cand_correct")):
        assert sum(right(p, j) for p in pairs) == HAND[key]
    assert sum(right(p, BASE) > right(p, CAND) for p in pairs) == HAND["b"]
    assert sum(right(p, CAND) > right(p, BASE) for p in pairs) == HAND["c"]


def test_llmbar_drift_figures_match_hand_count(report):
    o = report.overall.iloc[0]
    assert o["items"] == HAND["items"] and o["replies"] == HAND["replies"] == o["both_parsed"]
    assert o["same_ab"] == HAND["same_ab"] and o["both_parsed_ab"] == HAND["items"]
    assert o["same_ba"] == HAND["same_ba"]
    assert o["items_unchanged"] == HAND["same_both_orders"]
    assert o["same"] == HAND["same_ab"] + HAND["same_ba"]
    assert o["agreement"] == pytest.approx((HAND["same_ab"] + HAND["same_ba"]) / HAND["replies"])
    assert o["baseline_correct"] == HAND["base_correct"] and o["candidate_correct"] == HAND["cand_correct"]
    assert o["delta_accuracy"] == pytest.approx((HAND["cand_correct"] - HAND["base_correct"]) / HAND["replies"])
    assert o["delta_low"] <= o["delta_accuracy"] <= o["delta_high"] < 0
    assert (o["mcnemar_b"], o["mcnemar_c"]) == (HAND["b"], HAND["c"])
    ref = sm_mcnemar([[0, HAND["b"]], [HAND["c"], 0]], exact=False, correction=True)
    assert o["mcnemar_p"] == pytest.approx(float(ref.pvalue))
    flips = report.flips.groupby(["verdict_baseline", "verdict_candidate"])["count"].sum()
    pairs = report.pairs[report.pairs["order"] == "ab"]
    assert ((pairs["verdict_baseline"] == "1") & (pairs["verdict_candidate"] == "2")).sum() == HAND["ab_1_to_2"]
    assert ((pairs["verdict_baseline"] == "2") & (pairs["verdict_candidate"] == "1")).sum() == HAND["ab_2_to_1"]
    assert flips.sum() == HAND["replies"] and flips[("1", "1")] + flips[("2", "2")] == o["same"]
    # the two subsets add up to the whole
    assert report.groups["items"].sum() == HAND["items"]
    assert len(report.moved()) == HAND["replies"] - o["same"]


def test_kappa_matches_sklearn_and_agreement_module(report):
    p = report.pairs[report.pairs["both_parsed"]]
    o = report.overall.iloc[0]
    assert o["kappa"] == pytest.approx(cohen_kappa_score(p["verdict_baseline"].astype(str),
                                                         p["verdict_candidate"].astype(str)))
    k, lo, hi = cohen_kappa(p["verdict_baseline"], p["verdict_candidate"],
                            clusters=p["dataset"].astype(str) + "|" + p["item_id"].astype(str), n_resamples=500)
    assert (o["kappa"], o["kappa_low"], o["kappa_high"]) == pytest.approx((k, lo, hi))
    assert -1 <= lo <= k <= hi <= 1


def test_drift_depth2_same_verdict_counts(vanilla):
    cut = drift.subset_level(vanilla, 2)
    assert sorted(cut["subset"].unique()) == ["LLMBar/Adversarial", "LLMBar/Natural"]
    rep = drift.compare_judges(cut, BASE, CAND, n_resamples=0)
    o = rep.overall.iloc[0]
    assert (o["same_ab"], o["same_ba"], o["items_unchanged"]) == (HAND["same_ab"], HAND["same_ba"],
                                                                  HAND["same_both_orders"]) == (348, 350, 291)
    assert rep.groups["items"].sum() == HAND["items"]


def test_gate_flags_casestudy_base10_swap():
    # hand count from the raw CSV: replies both judges parsed, and of them those whose winner differs
    rows = {}
    with open(data_dir("llmbar") / "verdicts.csv", newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["subset"] == "CaseStudy/Base_10" and r["strategy"] == "Swap" and r["judge"] in (BASE, CAND):
                rows.setdefault(r["idx"], {})[r["judge"]] = r
    both = changed = 0
    for p in rows.values():
        for col in ("winner_order_12", "winner_order_21"):
            a, b = p[BASE][col], p[CAND][col]
            if a and b:
                both += 1
                changed += a != b
    assert changed / both == pytest.approx(0.537, abs=0.005)
    rep = drift.compare_judges(load_llmbar(judges=[BASE, CAND]).verdicts, BASE, CAND, by=["subset", "strategy"],
                               n_resamples=200)
    g = rep.groups.set_index(["subset", "strategy"]).loc[("CaseStudy/Base_10", "Swap")]
    assert (g["changed"], g["both_parsed"]) == (changed, both)
    assert g["flip_rate"] == pytest.approx(changed / both)
    assert g["status"] == "drift" and g["flagged"]
    assert "subset=CaseStudy/Base_10, strategy=Swap" in rep.gate.names
    assert rep.overall.iloc[0]["status"] in drift.STATUSES and rep.gate.overall["status"] == \
        rep.overall.iloc[0]["status"]
    assert not rep.passed


def _drifted(df: pd.DataFrame, subset: str, n_items: int) -> pd.DataFrame:
    """A copy of df where n_items fully-correct items of `subset` are answered wrongly in both orders."""
    out = df.copy()
    ok = out.assign(c=out["verdict"] == out["gold"]).groupby("item_id")["c"].all()
    chosen = sorted(i for i in ok[ok].index if i.startswith(subset + "#"))[:n_items]
    m = out["item_id"].isin(chosen)
    out.loc[m, "verdict"] = out.loc[m, "gold"].map({"1": "2", "2": "1"})
    out["judge"] = "synthetic"
    return out


def _flip_test(base, cand, subset, tolerance=0.05):
    """One-sided p of H0 flip rate <= tolerance, by hand: the exact binomial test on the n items with k = n · flip
    rate successes (here every changed item changed in both orders, so k is whole: scipy's binomtest)."""
    j = base.merge(cand, on=["item_id", "order"], suffixes=("_b", "_c"))
    j = j[j["subset_b"] == subset]
    per = j.assign(ch=(j["verdict_b"] != j["verdict_c"]).astype(float), n=1.0).groupby("item_id")[["ch", "n"]].sum()
    num, den = per["ch"].to_numpy(), per["n"].to_numpy()
    r, n = num.sum() / den.sum(), len(num)
    k = r * n
    assert k == round(k)
    return r, float(sps.binomtest(round(k), n, tolerance, alternative="greater").pvalue) if k else 1.0


def test_gate_flags_synthetic_drift_and_passes_identical_copy(vanilla):
    base = drift.subset_level(vanilla[vanilla["judge"] == BASE], 2)
    assert sorted(base["subset"].unique()) == ["LLMBar/Adversarial", "LLMBar/Natural"]
    natural_items = base.loc[base["subset"] == "LLMBar/Natural", "item_id"].nunique()
    assert natural_items == 100
    drifted = _drifted(base, "LLMBar/Natural", 20)  # 20 of 100 items flipped in both orders: 20% of verdicts
    assert (drifted["verdict"] != base["verdict"]).sum() == 40
    rep = drift.compare(base, drifted, tolerance=0.05, n_resamples=200)
    g = rep.groups.set_index("subset")
    assert g.loc["LLMBar/Natural", "flip_rate"] == pytest.approx(0.20)
    assert g.loc["LLMBar/Natural", "delta_accuracy"] == pytest.approx(-0.20)
    assert g.loc["LLMBar/Adversarial", "flip_rate"] == 0
    r, p = _flip_test(base, drifted, "LLMBar/Natural")
    _, p_adv = _flip_test(base, drifted, "LLMBar/Adversarial")
    assert r == pytest.approx(0.2) and g.loc["LLMBar/Natural", "flip_p"] == pytest.approx(p)
    holm = multipletests([p_adv, p], method="holm")[1]  # groups sorted: Adversarial, Natural
    assert list(rep.groups["flip_p_adjusted"]) == pytest.approx(list(holm))
    assert g.loc["LLMBar/Natural", "status"] == "drift" and g.loc["LLMBar/Adversarial", "status"] == "within"
    assert not rep.passed
    assert rep.gate.names == ["subset=LLMBar/Natural, strategy=Vanilla"]
    assert "DRIFT subset=LLMBar/Natural, strategy=Vanilla: 20.0%" in rep.gate.summary()
    copy = base.assign(judge="copy")
    same = drift.compare(base, copy, tolerance=0.05, n_resamples=200)
    assert same.passed and same.gate.flagged.empty and same.gate.groups == 2
    assert (same.groups["status"] == "within").all()
    assert (same.groups["agreement"] == 1).all()
    # no change anywhere: the accuracy difference is 0 and its interval a Wilson-based bound, never [0, 0]
    assert (same.groups["delta_accuracy"] == 0).all()
    assert (same.groups["delta_low"] == -same.groups["delta_high"]).all() and (same.groups["delta_high"] > 0).all()
    # kappa 1 on every item: no interval (a point), and the note says why
    assert same.groups["kappa"].eq(1).all() and same.groups["kappa_low"].isna().all()
    assert same.groups["note"].str.contains("every item gives the same value").all()


def test_gate_boundary_exactly_tolerance_is_not_drift(vanilla):
    base = drift.subset_level(vanilla[vanilla["judge"] == BASE], 2)
    five = drift.compare(base, _drifted(base, "LLMBar/Natural", 5), n_resamples=200)
    g = five.groups.set_index("subset").loc["LLMBar/Natural"]
    assert g["flip_rate"] == pytest.approx(0.05)
    # 5 of 100 items changed: P(X >= 5) for X ~ Bin(100, 0.05); exactly the tolerance is not "more than" it
    assert g["flip_p"] == pytest.approx(sps.binomtest(5, 100, 0.05, alternative="greater").pvalue)
    assert g["status"] == "inconclusive" and five.passed  # 100 items cannot show it is within 5% either
    assert five.gate.inconclusive == ["subset=LLMBar/Natural, strategy=Vanilla"]
    with pytest.raises(EvallabError, match="alpha"):
        drift.compare(base, base.assign(judge="x"), alpha=1.5)
    with pytest.raises(EvallabError, match="adjust"):
        drift.compare(base, base.assign(judge="x"), adjust="bonferroni-ish")


def test_flip_rate_gate_without_gold(vanilla):
    nogold = vanilla.assign(gold=pd.NA)
    rep = drift.compare_judges(nogold, BASE, CAND, by=[], n_resamples=0)
    o = rep.overall.iloc[0]
    assert o["flip_rate"] == pytest.approx(1 - (HAND["same_ab"] + HAND["same_ba"]) / HAND["replies"])
    assert np.isnan(o["delta_accuracy"]) and np.isnan(o["mcnemar_p"]) and not rep.passed
    assert rep.gate.flagged["value"].iloc[0] == pytest.approx(o["flip_rate"])
    assert rep.gate.overall["status"] == "drift"


def test_unparsed_counted_not_scored():
    base = V.coerce(pd.DataFrame({"item_id": ["a", "b", "c", "d"], "judge": "old", "order": "ab",
                                  "verdict": ["1", "1", "2", "1"], "gold": ["1", "1", "2", "2"]}))
    cand = base.assign(judge="new", verdict=["1", pd.NA, "2", "2"])
    rep = drift.compare(base, cand, by=[], n_resamples=0)
    o = rep.overall.iloc[0]
    assert (o["unparsed_candidate"], o["both_parsed"], o["same"], o["changed"]) == (1, 3, 2, 1)
    assert o["baseline_accuracy"] == pytest.approx(3 / 4) and o["candidate_accuracy"] == pytest.approx(3 / 3)
    assert rep.flip_table().loc["1", "unparsed"] == 1


def test_pairing_errors(vanilla):
    both = vanilla
    with pytest.raises(DataError, match="more than one reply"):
        drift.compare(both, vanilla[vanilla["judge"] == CAND])
    a = vanilla[vanilla["judge"] == BASE]
    b = vanilla[vanilla["judge"] == CAND].assign(strategy="Other")
    with pytest.raises(DataError, match="no reply in common"):
        drift.compare(a, b)
    rep = drift.compare(a, b, by=["subset"], match_on=("dataset", "item_id", "anchor_set", "order", "sample"),
                        n_resamples=0)
    assert rep.overall.iloc[0]["same"] == HAND["same_ab"] + HAND["same_ba"]
    flipped_gold = vanilla[vanilla["judge"] == CAND].assign(gold=lambda d: d["gold"].map({"1": "2", "2": "1"}))
    with pytest.raises(DataError, match="gold differs"):
        drift.compare(a, flipped_gold)
    with pytest.raises(DataError, match="cannot pair or group by 'judge'"):
        drift.compare(a, vanilla[vanilla["judge"] == CAND], by=["judge"])
    with pytest.raises(DataError, match="judge 'GPT-5'"):
        drift.compare_judges(vanilla, BASE, "GPT-5")
    with pytest.raises(EvallabError, match="tolerance"):
        drift.compare(a, vanilla[vanilla["judge"] == CAND], tolerance=5)


# ------------------------------------------------------------------------------------ AlpacaEval-style metrics
def test_p_prefer_longer_hand_made_case():
    items = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4", "q5", "q6"],
                          "len_1": [100, 500, 200, 300, 90, 10], "len_2": [400, 100, 210, 50, 400, 500]})
    # longer output: q1 2, q2 1, q3 within 30 chars (left out), q4 1, q5 2, q6 2 (tie verdict: left out)
    df = V.coerce(pd.DataFrame({"item_id": items["item_id"], "judge": "J", "order": "",
                                "verdict": ["2", "1", "2", "2", "1", "tie"]}))
    m = evaluators.evaluator_metrics(df, items).iloc[0]
    assert m["longer_pairs"] == 4  # q1, q2, q4, q5
    assert m["p_prefer_longer"] == pytest.approx(2 / 4)  # q1 and q2 picked the longer output
    assert m["p_prefer_output_1"] == pytest.approx((2 + 0.5) / 6)  # q2, q5 and half of q6
    assert m["ties"] == 1 and m["shown_known"] == 0 and np.isnan(m["p_prefer_shown_first"])


def test_p_prefer_output_1_uses_continuous_preference():
    # AlpacaEval: P(prefer 1) = 2 - mean(preference). Hand-made: preferences 1.2, 1.9, 1.5 (tie), and a reply
    # without a preference whose discrete verdict is "1" (counts 1); an unparsed reply is left out.
    df = V.coerce(pd.DataFrame({"item_id": ["a", "b", "c", "d", "e"], "judge": "W", "order": "",
                                "verdict": ["1", "2", "tie", "1", pd.NA],
                                "score": [1.2, 1.9, 1.5, np.nan, np.nan]}))
    m = evaluators.evaluator_metrics(df).iloc[0]
    assert m["p_prefer_output_1"] == pytest.approx((0.8 + 0.1 + 0.5 + 1.0) / 4)  # 0.6
    assert m["continuous"] == 3 and m["unparsed"] == 1
    # discrete only: 1, 0, 0.5, 1
    assert evaluators.evaluator_metrics(df, preference=None).iloc[0]["p_prefer_output_1"] == pytest.approx(2.5 / 4)
    with pytest.raises(DataError, match="not a preference in \\[1, 2\\]"):
        evaluators.evaluator_metrics(df.assign(score=[3.0, 1.9, 1.5, np.nan, np.nan]))


def test_p_prefer_shown_first_from_orders_and_shown_first_column():
    df = V.coerce(pd.DataFrame({"item_id": ["a", "a", "b", "b", "c"], "judge": "J",
                                "order": ["ab", "ba", "ab", "ba", ""], "verdict": ["1", "2", "1", "1", "2"]}))
    df["shown_first"] = [pd.NA, pd.NA, pd.NA, pd.NA, "2"]
    m = evaluators.evaluator_metrics(df).iloc[0]
    # first-shown picked: a/ab (1), a/ba (2), b/ab (1), c (shown first 2, picked 2); b/ba picked the second
    assert (m["shown_known"], m["p_prefer_shown_first"]) == (5, pytest.approx(4 / 5))


def test_win_rates_hand_case():
    df = V.coerce(pd.DataFrame({"item_id": list("abcde"), "judge": "J", "verdict": ["2", "2", "1", "tie", pd.NA]}))
    df["generator_2"] = "m"
    w = evaluators.win_rates(df).iloc[0]
    assert (w["parsed"], w["wins"], w["losses"], w["ties"]) == (4, 2, 1, 1)
    assert w["win_rate"] == pytest.approx(2.5 / 4)
    x = np.array([1, 1, 0, 0.5])
    ref = sps.bootstrap((x, np.ones(4)), lambda a, b, axis: a.sum(axis) / b.sum(axis), paired=True,
                        vectorized=True, n_resamples=1000, method="percentile", random_state=np.random.default_rng(0))
    assert (w["win_rate_low"], w["win_rate_high"]) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))


def test_kendall_tau_matches_scipy():
    rng = np.random.default_rng(3)
    a = pd.Series(rng.normal(size=12), index=[f"m{i}" for i in range(12)])
    b = pd.Series(a.to_numpy() + rng.normal(scale=0.7, size=12), index=a.index)[::-1]  # other index order
    b.iloc[0] = b.iloc[1]  # a tie, to exercise tau-b
    r = evaluators.rank_correlation(a, b.iloc[:-1])  # one model missing from b
    common = a.index.intersection(b.iloc[:-1].index)
    ref = kendalltau(a[common].to_numpy(), b[common].to_numpy())
    assert r["n"] == 11 and r["tau"] == pytest.approx(ref.statistic) and r["pvalue"] == pytest.approx(ref.pvalue)


def test_leaderboard_tau_matches_scipy_on_csv():
    def board(name):
        with open(data_dir("alpaca_eval") / "leaderboards" / "data_AlpacaEval" / f"{name}_leaderboard.csv",
                  newline="") as fh:
            return {r[""]: float(r["win_rate"]) for r in csv.DictReader(fh) if r["n_draws"] != r["n_total"]}
    x, y = board("alpaca_eval_gpt4"), board("claude")
    common = sorted(set(x) & set(y))
    ref = kendalltau([x[m] for m in common], [y[m] for m in common])
    t = evaluators.leaderboard_rank_agreement(load_alpaca_eval_leaderboards())
    row = t[(t["leaderboard_a"] == "AlpacaEval/alpaca_eval_gpt4") & (t["leaderboard_b"] == "AlpacaEval/claude")]
    assert row["n"].iloc[0] == len(common)
    assert row["tau"].iloc[0] == pytest.approx(ref.statistic)
    assert set(t["version"]) == {"AlpacaEval", "AlpacaEval_2"}  # never across versions (different baselines)


def test_rank_agreement_headline_has_n_and_p_and_a_minimum_n():
    import math

    # exact two-sided p of perfect agreement = 2 / n! (by hand): 1/3 for 3, 1/12 for 4, 1/60 for 5
    assert [evaluators.perfect_agreement_pvalue(n) for n in (3, 4, 5)] == pytest.approx([2 / 6, 2 / 24, 2 / 120])
    assert math.isnan(evaluators.perfect_agreement_pvalue(1))
    assert evaluators.min_rank_entities(0.05) == 5 == evaluators.MIN_RANK_ENTITIES
    assert evaluators.min_rank_entities(0.01) == 6  # 2/720 < 0.01 <= 2/120
    t = evaluators.leaderboard_rank_agreement(load_alpaca_eval_leaderboards())
    # the report's old headline was a tau of 0.667 from 4 models (p = 1/3): below the minimum, never headlined
    small = t[t["n"] < 5]
    assert len(small) == 3 and (small["n"] == 4).all()
    assert small["tau"].min() == pytest.approx(4 / 6)  # 5 concordant, 1 discordant pair of 6
    h = evaluators.rank_headline(t)
    ok = t[t["n"] >= 5]
    assert h["pairs"] == len(ok) == 9 and h["pairs_below_min"] == 3 and h["min_n"] == 5
    assert h["tau"] == pytest.approx(ok["tau"].min()) and h["n"] >= 5
    row = ok.sort_values(["tau", "n"], ascending=[True, False]).iloc[0]
    assert (h["leaderboard_a"], h["leaderboard_b"], h["n"]) == (row["leaderboard_a"], row["leaderboard_b"], row["n"])
    assert h["pvalue"] == pytest.approx(row["pvalue"]) and h["p_at_min"] == pytest.approx(2 / 24)
    assert evaluators.rank_headline(small)["tau"] is None


def test_alpaca_annotator_agreement_matches_csv():
    with open(data_dir("alpaca_eval") / "multi_annotator_preferences.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    pref = {}
    for r in rows:
        pref.setdefault((r["generator_2"], r["instruction_idx"]), {})[r["annotator"]] = r["preference"]

    def label(p):
        return None if p == "" else "1" if float(p) < 1.5 else "2" if float(p) > 1.5 else "tie"
    a, b = "alpaca_eval_cot_gpt4_turbo_fn", "alpaca_eval_gpt4_turbo_fn"
    both = [(label(v[a]), label(v[b])) for v in pref.values() if a in v and b in v]
    both = [(x, y) for x, y in both if x and y]
    ae = load_alpaca_eval()
    t = judge_agreement(ae.verdicts, judges=[a, b], n_resamples=0).set_index(["judge_a", "judge_b"])
    assert t.loc[(a, b), "n"] == len(both)
    assert t.loc[(a, b), "agreement"] * len(both) == pytest.approx(sum(x == y for x, y in both))
    rk = evaluators.win_rate_rank_agreement(ae.verdicts).set_index(["judge_a", "judge_b"])
    assert rk.loc[(a, b), "n"] == 4  # Mixtral, cohere, gemini-pro, gpt-3.5-turbo-0301 judged by both


# ----------------------------------------------------------------------------------- calibration set replay
class FirstSlotJudge:
    """A fake in-memory judge that always answers 'Output (a)' / 'pass' (and cannot parse raw-message items)."""

    label = "first-slot"
    model = "fake-first-slot"

    def __init__(self):
        self.requests = []

    async def judge(self, request):
        self.requests.append(request)
        if request.prompt_version == "":  # the item's own messages: reply something unparseable
            return JudgeReply(raw="I cannot decide.", verdict=None, error="unparsed: no verdict found")
        text = '{"verdict": "a", "reason": "first"}' if request.kind == "pairwise" else '{"verdict": "pass"}'
        verdict, reason, err = parse_reply(text, request)
        return JudgeReply(raw=text, verdict=verdict, reason=reason, error=err, model=self.model)


class OracleJudge:
    label = "oracle"
    model = "fake-oracle"

    async def judge(self, request):
        g = request.metadata.get("gold")
        return JudgeReply(raw=str(g), verdict=g, model=self.model)


def test_load_gold_set_and_errors():
    gs = calibration.load_gold_set(HERE / "gold_set.jsonl")
    assert list(gs["item_id"]) == ["nat-1", "nat-2", "adv-1", "adv-2", "fn-pass", "fn-fail", "raw-1"]
    assert list(gs["kind"]) == ["pairwise"] * 4 + ["pointwise"] * 2 + ["pairwise"]
    with pytest.raises(DataError) as e:
        calibration.load_gold_set(HERE / "gold_set_missing_gold.jsonl")
    assert e.value.row == 3 and e.value.column == "gold" and "gold_set_missing_gold.jsonl" in str(e.value)
    with pytest.raises(DataError, match="not a pointwise verdict|unknown gold"):
        calibration.gold_set_frame([{"item_id": "x", "gold": "1", "kind": "pointwise", "answer": "a"}])
    with pytest.raises(DataError, match="missing 'output_2'"):
        calibration.gold_set_frame([{"item_id": "x", "gold": "1", "instruction": "i", "output_1": "o"}])
    with pytest.raises(DataError, match="duplicated item_id"):
        calibration.gold_set_frame([{"item_id": "x", "gold": "pass", "answer": "a", "rubric_text": "r",
                               "pass_criteria": ["c"]}] * 2)


def test_calibration_replay_through_fake_judge(tmp_path):
    gs = calibration.load_gold_set(HERE / "gold_set.jsonl")
    judge = FirstSlotJudge()
    cand, rep = drift_exp.calibration_drift(judge, gs, n_resamples=100, out=tmp_path / "replay.csv")
    # 4 pairwise items × 2 orders + 2 pointwise + 1 raw-message item (its own order only) = 11 requests
    assert len(judge.requests) == 11 and len(cand) == 11 and (tmp_path / "replay.csv").exists()
    shown = {(r.metadata["item_id"], r.metadata["order"]): r for r in judge.requests}
    assert "Cats sleep a lot. Dogs bark." in shown[("adv-1", "ba")].user.split("Output (a)")[1].split("Output (b)")[0]
    # always "Output (a)": right in order ab when gold is 1, in order ba when gold is 2 → 2 of 4 per subset
    g = rep.groups.set_index("group")
    nat, adv = g.loc["subset=LLMBar/Natural, rubric="], g.loc["subset=LLMBar/Adversarial, rubric="]
    fn = g.loc["subset=, rubric=functionality"]
    assert (nat["candidate_parsed"], nat["candidate_correct"], nat["unparsed_candidate"]) == (4, 2, 1)
    assert (adv["candidate_parsed"], adv["candidate_correct"]) == (4, 2)
    assert (fn["candidate_parsed"], fn["candidate_correct"]) == (2, 1)  # always 'pass': wrong on fn-fail
    assert nat["baseline_accuracy"] == 1 and nat["delta_accuracy"] == pytest.approx(-0.5)
    # each group has 2 items (half of each item's verdicts changed): 2 items cannot tell 50% from 5% — the exact
    # test on the items gives p = 1 - 0.95^2 > 0.05 — so every group is inconclusive; the 6 items together drift
    assert sps.binomtest(1, 2, 0.05, alternative="greater").pvalue > 0.05
    assert rep.gate.names == [] and sorted(rep.gate.inconclusive) == [
        "subset=, rubric=functionality", "subset=LLMBar/Adversarial, rubric=", "subset=LLMBar/Natural, rubric="]
    assert rep.gate.overall["status"] == "drift" and not rep.passed
    assert cand.loc[cand["item_id"] == "raw-1", "error"].iloc[0].startswith("unparsed")
    # a recorded baseline identical to the candidate: no drift
    again = drift.compare(cand, cand.assign(judge="again"), by=["subset", "rubric"], n_resamples=0)
    assert again.passed


def test_oracle_judge_passes_calibration_gate():
    gs = calibration.load_gold_set(HERE / "gold_set.jsonl").query("item_id != 'raw-1'")
    cand, rep = drift_exp.calibration_drift(OracleJudge(), gs, n_resamples=0)
    assert rep.passed and (rep.groups["delta_accuracy"] == 0).all()
    assert set(cand["model"]) == {"fake-oracle"}


def test_reverify_reports_disagreements_on_seeded_sample():
    bar = load_llmbar(subsets=["LLMBar/Natural"], judges=[CAND], strategies=["Vanilla"], with_text=True)
    rec = bar.verdicts
    r1 = drift_exp.reverify(OracleJudge(), rec, bar.items, n_items=15, seed=7, n_resamples=0)
    r2 = drift_exp.reverify(OracleJudge(), rec, bar.items, n_items=15, seed=7, n_resamples=0)
    r3 = drift_exp.reverify(OracleJudge(), rec, bar.items, n_items=15, seed=8, n_resamples=0)
    assert r1.items == r2.items and len(set(r1.items)) == 15 and r1.items != r3.items
    sampled = rec[rec["item_id"].isin(r1.items)]
    assert len(r1.sample) == len(sampled) == 30  # both orders of each sampled item
    wrong = sampled[sampled["verdict"].notna() & (sampled["verdict"] != sampled["gold"])]
    assert len(r1.disagreements) == len(wrong)  # the oracle disagrees exactly where the record was wrong
    got = set(zip(r1.disagreements["item_id"], r1.disagreements["order"], strict=True))
    assert got == set(zip(wrong["item_id"], wrong["order"], strict=True))
    assert (r1.disagreements["verdict_new"] == r1.disagreements["gold"]).all()
    with pytest.raises(DataError, match="expected one"):
        drift_exp.reverify(OracleJudge(), load_llmbar(subsets=["LLMBar/Natural"], judges=[BASE, CAND],
                                                  strategies=["Vanilla"]).verdicts, bar.items)


# ------------------------------------------------------------------------------------------------------- CLI
def _cli(*args):
    return subprocess.run([sys.executable, "-m", "evallab.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO_ROOT, timeout=120)


def test_cli_exit_codes(vanilla, tmp_path):
    base = drift.subset_level(vanilla[vanilla["judge"] == BASE], 2)
    base.to_csv(tmp_path / "base.csv", index=False)
    _drifted(base, "LLMBar/Natural", 20).to_json(tmp_path / "drift.jsonl", orient="records", lines=True)
    base.assign(judge="copy").to_csv(tmp_path / "copy.csv", index=False)
    bad = _cli("drift", "--baseline", tmp_path / "base.csv", "--candidate", tmp_path / "drift.jsonl",
               "--tolerance", "0.05", "--out", tmp_path / "groups.csv")
    assert bad.returncode == 1, bad.stderr
    # 20 of Natural's 100 items answered wrongly in both orders: 40 of 200 verdicts changed (20%), well over 5%
    assert "DRIFT subset=LLMBar/Natural, strategy=Vanilla: 20.0% of verdicts changed" in bad.stdout
    groups = pd.read_csv(tmp_path / "groups.csv")
    assert groups["status"].tolist().count("drift") == 1
    ok = _cli("drift", "--baseline", tmp_path / "base.csv", "--candidate", tmp_path / "copy.csv")
    assert ok.returncode == 0, ok.stderr + ok.stdout
    assert "gate PASS" in ok.stdout
    missing = _cli("drift", "--baseline", tmp_path / "base.csv", "--candidate", tmp_path / "nope.csv")
    assert missing.returncode == 2 and "nope.csv" in missing.stderr and "Traceback" not in missing.stderr
    dup = _cli("drift", "--baseline", tmp_path / "base.csv", "--candidate", tmp_path / "base.csv", "--by", "judge")
    assert dup.returncode == 2 and "Traceback" not in dup.stderr and "judge" in dup.stderr


def test_cli_drift_replay_against_local_server(tmp_path):
    from evallab.testing import LocalJudgeServer, SimulatedJudge

    lines = [ln for ln in (HERE / "gold_set.jsonl").read_text().splitlines() if '"raw-1"' not in ln]
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(lines) + "\n")
    env = {**os.environ, "EVALLAB_CACHE": str(tmp_path / "cache")}
    # a judge that always picks the first-shown output and always passes: 2 of 4 right per pairwise subset,
    # 1 of 2 on the functionality rubric — every group drifts from gold by 50 points
    with LocalJudgeServer(sim=SimulatedJudge(seed=0, position_bias=1.0, pass_rate=1.0)) as srv:
        args = [sys.executable, "-m", "evallab.cli", "drift-replay", str(gold), "--base-url", srv.base_url,
                "--model", "sim-judge", "--out", str(tmp_path / "new.csv")]
        res = subprocess.run(args, capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=120)
        assert res.returncode == 1, res.stderr
        # every group changes half its verdicts against gold; with 2 items a group is inconclusive, the overall row
        # (10 replies, 5 changed) drifts
        assert "overall flip rate 50.0%" in res.stdout and ": drift" in res.stdout
        seen = srv.stats()
        again = subprocess.run(args, capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=120)
        assert again.returncode == 1 and srv.stats() == seen  # resumed from --out: no new request
    new = pd.read_csv(tmp_path / "new.csv")
    assert len(new) == 10 and set(new["judge"]) == {"sim-judge"}


def test_reverify_pointwise_items():
    gs = calibration.load_gold_set(HERE / "gold_set.jsonl")
    rec = V.coerce(pd.DataFrame({"item_id": ["fn-pass", "fn-fail"], "judge": "lenient", "subset": "",
                                 "verdict": ["pass", "pass"], "gold": ["pass", "fail"]}))
    judge = FirstSlotJudge()
    res = drift_exp.reverify(judge, rec, gs, n_items=5, n_resamples=0)
    assert sorted(res.items) == ["fn-fail", "fn-pass"]
    assert [r.kind for r in judge.requests] == ["pointwise", "pointwise"]
    assert "Clicking 'Add task' shows a blank page" in next(r.user for r in judge.requests
                                                            if r.metadata["item_id"] == "fn-fail")
    assert res.disagreements.empty and res.sample["agrees"].all()  # the fake also always passes
    oracle = drift_exp.reverify(OracleJudge(), rec, gs, n_items=5, n_resamples=0)
    assert list(oracle.disagreements["item_id"]) == ["fn-fail"]
    assert oracle.disagreements["verdict_new"].iloc[0] == "fail"


def test_evaluator_metrics_say_why_a_figure_is_missing():
    items = pd.DataFrame({"item_id": ["a", "b"], "len_1": [100, 100], "len_2": [110, 120]})  # gaps <= 30
    df = V.coerce(pd.DataFrame({"item_id": ["a", "b"], "judge": "J", "verdict": ["1", "2"]}))
    m = evaluators.evaluator_metrics(df, items, n_resamples=0).iloc[0]
    assert m["longer_pairs"] == 0 and np.isnan(m["p_prefer_longer"])
    assert m["note"].startswith("not computable: ") and "P(prefer longer) needs decisive replies" in m["note"]
    none = evaluators.evaluator_metrics(df.assign(verdict=pd.NA), n_resamples=0).iloc[0]
    assert np.isnan(none["p_prefer_output_1"]) and "not computable: no parsed reply" in none["note"]


def test_judge_agreement_single_category_kappa_has_a_note():
    df = V.coerce(pd.DataFrame({"item_id": ["a", "b", "a", "b"], "judge": ["X", "X", "Y", "Y"],
                                "verdict": ["1", "1", "1", "1"]}))
    r = judge_agreement(df, n_resamples=0).query("judge_a == 'X' and judge_b == 'Y'").iloc[0]
    assert r["agreement"] == 1.0 and np.isnan(r["kappa"])  # sklearn: kappa undefined with one category
    assert r["note"] == "not computable: a single category (kappa undefined)"


# ------------------------------------------------------------------ the gate is monotone in the changed verdicts
_ORDER = {"within": 0, "inconclusive": 1, "drift": 2}


def _gate_status(changed_per_item: list[int], replies: int, tolerance: float = 0.05) -> str:
    """The gate's status for items each with ``replies`` paired replies, ``changed_per_item[i]`` of them changed."""
    rows = []
    for i, c in enumerate(changed_per_item):
        for o in range(replies):
            rows.append(dict(item_id=f"i{i}", sample=o, judge="old", verdict="1"))
            rows.append(dict(item_id=f"i{i}", sample=o, judge="new", verdict="2" if o < c else "1"))
    t = V.coerce(pd.DataFrame(rows))
    rep = drift.compare_judges(t, "old", "new", by=(), n_resamples=0, tolerance=tolerance)
    return str(rep.overall["status"].iloc[0])


@pytest.mark.parametrize("n_items, replies", [(20, 1), (80, 1), (27, 2)])
def test_status_never_improves_when_a_verdict_changes(n_items, replies):
    """Defect 11: at a fixed number of replies, status(k + 1) is never better than status(k), k = 0 .. all replies;
    the flips fill items one reply at a time (the second reply of an item before a new item) and, for two replies
    per item, also one reply per item first — both placements."""
    total = n_items * replies
    placements = [[min(replies, max(0, k - replies * i)) for i in range(n_items)] for k in range(total + 1)]
    if replies > 1:
        spread = [[(k // n_items) + (1 if i < k % n_items else 0) for i in range(n_items)] for k in range(total + 1)]
        placements_all = [placements, spread]
    else:
        placements_all = [placements]
    for plan in placements_all:
        statuses = [_gate_status(c, replies) for c in plan]
        ranks = [_ORDER[s] for s in statuses]
        assert statuses[-1] == "drift"
        assert ranks == sorted(ranks), list(zip(range(len(ranks)), statuses, strict=True))


@pytest.mark.parametrize("n", [20, 108])
def test_gate_bound_and_p_are_the_exact_binomial_of_scipy(n):
    """One verdict per item: the interval is scipy's exact (Clopper–Pearson) interval and the p-value binomtest's,
    at every count including 0; the status follows from them as documented."""
    for k in range(0, min(n, 25) + 1):
        rep = drift.compare_judges(V.coerce(pd.DataFrame(
            [dict(item_id=f"i{i}", judge="old", verdict="1") for i in range(n)]
            + [dict(item_id=f"i{i}", judge="new", verdict="2" if i < k else "1") for i in range(n)])),
            "old", "new", by=(), n_resamples=0)
        o = rep.overall.iloc[0]
        ci = sps.binomtest(k, n).proportion_ci(0.95, method="exact")
        p = sps.binomtest(k, n, 0.05, alternative="greater").pvalue
        assert (o["flip_rate_low"], o["flip_rate_high"]) == pytest.approx((ci.low, ci.high), abs=1e-12)
        assert o["flip_p"] == pytest.approx(p, abs=1e-12)
        want = "drift" if p < 0.05 else "within" if ci.high <= 0.05 else "inconclusive"
        assert o["status"] == want, (n, k)
    # 1 changed of 108: the exact upper bound 5.05% exceeds 5% (inconclusive); 0 of 108: 3.4% (within); 80 items
    # with one verdict start "within" (0 of 80: 4.5%), so the loop above passes through all three statuses
    assert sps.beta.ppf(0.975, 2, 107) > 0.05 > sps.beta.ppf(0.975, 1, 108)
    assert _gate_status([0] * 80, 1) == "within" and _gate_status([1] + [0] * 79, 1) == "inconclusive"
