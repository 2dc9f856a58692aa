"""Report 07's sections (evallab.reporting.sections.corrected) against computations made here: the bundled LLMBar
CSV read with the csv module, ppi_py and statsmodels on arrays built by hand, and small hand-made tables shaped
unlike LLMBar (pointwise, several samples per item, one anchor set, a thin subset, no gold at all)."""

from __future__ import annotations

import csv
import math
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import ppi_py
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evallab import simulation as S
from evallab.datasets import load_llmbar
from evallab.metrics import _corrected as corrected
from evallab.paths import data_dir
from evallab.reporting._context import Shown
from evallab.reporting._params import ParameterError
from evallab.reporting.sections import corrected as sections
from evallab.testing import SimulatedJudge

SUBSETS = ["LLMBar/Natural", "LLMBar/Adversarial/Neighbor"]
Z95 = stats.norm.ppf(0.975)


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def interval(lo: float, hi: float) -> str:
    return f"[{100 * lo:.1f}, {100 * hi:.1f}]"


def sentences(sec) -> list[str]:
    return [f.sentence for f in sec.findings]


def texts(sec) -> list[str]:
    return [x for x in sec.items if isinstance(x, str)]


@pytest.fixture(scope="module")
def llmbar_csv():
    """judge -> {item: (verdict in order ab, gold)} for the test's subsets, Vanilla, read with the csv module."""
    out = defaultdict(dict)
    with open(data_dir("llmbar") / "verdicts.csv", newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["subset"] in SUBSETS and r["strategy"] == "Vanilla":
                out[r["judge"]][f"{r['subset']}#{r['idx']}"] = (r["winner_order_12"], r["label"])
    return out


@pytest.fixture(scope="module")
def llmbar():
    full = load_llmbar(subsets=SUBSETS, strategies=["Vanilla"]).verdicts
    full = full[full["order"] == "ab"]
    hidden = corrected.hide_gold(full, 60, seed=1)
    rates = corrected.corrected_rates(hidden, ["judge"], min_gold=20, n_resamples=0)
    return full, hidden, rates


# -- judge only, corrected, and the truth -------------------------------------------------------------------------
def test_headline_is_the_judge_farthest_from_the_truth_with_ppi_py_numbers(llmbar, llmbar_csv):
    full, hidden, rates = llmbar
    seen = set(hidden.dropna(subset=["gold"])["item_id"].astype(str))  # the loader's ids are the CSV's subset#idx
    assert len(seen) == 60
    sec = sections.judge_only_corrected_and_truth(full, hidden, rates)
    rows = {}
    for judge, items in llmbar_csv.items():
        ids = sorted(i for i, (v, _) in items.items() if v)  # parsed in order ab
        f = np.array([items[i][0] == "2" for i in ids], float)
        y = np.array([items[i][1] == "2" for i in ids], float)
        lab = np.array([i in seen for i in ids])
        truth = np.mean([g == "2" for _, g in items.values()])
        est = float(np.ravel(ppi_py.ppi_mean_pointestimate(y[lab], f[lab], f[~lab]))[0])
        rows[judge] = (f, truth, est, int(lab.sum()))
    best = max(rows, key=lambda j: abs(rows[j][0].mean() - rows[j][1]))  # every judge has 60 gold pairs ≥ 20
    f, truth, est, n_lab = rows[best]
    lo, hi = proportion_confint(int(f.sum()), len(f), 0.05, "wilson")
    head = sentences(sec)[0]
    assert head.startswith(f"{best}: its own win rate of output 2 is {pct(f.mean())} {interval(lo, hi)} "
                           f"(95% CI, Wilson score, n = {len(f):,} items); ")
    assert f"PPI++ from {n_lab} gold pairs gives {pct(est)}" in head and f"against a truth of {pct(truth)};" in head
    assert sec.conclusions == [f"With 60 random gold pairs, PPI++ moves {best}'s win rate of output 2 from its own "
                               f"{pct(f.mean())} to {pct(est)} {head.split(' gives ')[1].split(' (')[0].split(' ', 1)[1]}"
                               f"; the truth is {pct(truth)}."]
    assert sec.metrics["n_gold"] == 60 and sec.metrics["pairs"] == len({i for it in llmbar_csv.values() for i in it})
    assert sec.metrics["strategy"] == "Vanilla" and sec.metrics["orders"] == ["ab"]
    assert texts(sec)[0] == (f"{len(full):,} replies of {len(rows)} judges to {sec.metrics['pairs']:,} LLMBar pairs "
                             "(Vanilla, order ab); gold kept on 60 random pairs, hidden on the rest.")
    shown = sec.tables[0]
    assert len(shown.table) == 4 * len(rows) and shown.table.measures["estimate"].label == "Win rate of output 2"
    assert len(sec.items) == len(sec.findings) + 3  # the data sentence, the table, the figure


def test_ppi_of_the_headline_equals_ppi_py_on_the_csv(llmbar, llmbar_csv):
    full, hidden, rates = llmbar
    sec = sections.judge_only_corrected_and_truth(full, hidden, rates)
    judge = sentences(sec)[0].split(":")[0]
    g = hidden[hidden["judge"] == judge]
    gold_ids = set(g.dropna(subset=["gold"])["item_id"])
    items = llmbar_csv[judge]
    # the loader's item ids are "<subset>/<idx>"-like keys; rebuild y and f per parsed item from the table's own rows
    parsed = g[g["verdict"].notna()]
    f = (parsed["verdict"] == "2").to_numpy(float)
    lab = parsed["item_id"].isin(gold_ids).to_numpy()
    y = (parsed["gold"] == "2").to_numpy(float)
    est = float(np.ravel(ppi_py.ppi_mean_pointestimate(y[lab], f[lab], f[~lab]))[0])
    lo, hi = (float(np.ravel(x)[0]) for x in ppi_py.ppi_mean_ci(y[lab], f[lab], f[~lab], alpha=0.05))
    assert len(parsed) == sum(1 for v, _ in items.values() if v)
    assert f"gives {pct(est)} {interval(lo, hi)} (95% CI, {corrected.PPI_METHOD}" in sentences(sec)[0]
    # how many judges' PPI++ intervals hold the truth, counted here
    held = 0
    for j, t in full.groupby("judge"):
        h = hidden[hidden["judge"] == j]
        p = h[h["verdict"].notna()]
        fj, yj = (p["verdict"] == "2").to_numpy(float), (p["gold"] == "2").to_numpy(float)
        lj = p["gold"].notna().to_numpy()
        a, b = (float(np.ravel(x)[0]) for x in ppi_py.ppi_mean_ci(yj[lj], fj[lj], fj[~lj], alpha=0.05))
        truth = (t.drop_duplicates("item_id")["gold"] == "2").mean()
        held += a <= truth <= b
    n = full["judge"].nunique()
    assert f"{held} of {n} judges (PPI++)" in sentences(sec)[1]


def test_a_pointwise_table_with_too_few_gold_items_is_not_corrected_and_says_so():
    d, j = S.LabellingDesign(n_items=120, n_gold=120, prevalence=0.4), S.MisclassifyingJudge(0.8, 0.7, samples=3)
    full = S.simulate_labelled(d, j, 5).drop(columns=["strategy"])
    hidden = corrected.hide_gold(full, 10, seed=0)
    rates = corrected.corrected_rates(hidden, ["judge"], n_resamples=0)  # min_gold 30 > 10
    sec = sections.judge_only_corrected_and_truth(full, hidden, rates, source="sim")
    assert texts(sec)[0] == "360 replies of 1 judge to 120 sim items; gold kept on 10 random items, hidden on the rest."
    assert texts(sec)[1] == "No judge is corrected: 10 gold items with a verdict, fewer than min_gold=30."
    # only the gold-only interval exists (no bootstrap asked, several samples per item): Wilson of the 10 gold items
    gold = hidden.dropna(subset=["gold"]).drop_duplicates("item_id")["gold"].eq("pass")
    lo, hi = proportion_confint(int(gold.sum()), 10, 0.05, "wilson")
    truth = full.drop_duplicates("item_id")["gold"].eq("pass").mean()
    assert sentences(sec) == [f"The interval holds the truth for {int(lo <= truth <= hi)} of 1 judge (gold labels "
                              "only)."]
    assert sec.conclusions == []
    assert sec.caveats[0].startswith("The corrections assume the gold items are a random sample of the items")
    assert sec.tables[0].table.measures["estimate"].label == "Pass rate"


# -- per subset ---------------------------------------------------------------------------------------------------
def test_per_subset_counts_corrected_significant_and_thin_subsets():
    d, j = S.LabellingDesign(n_items=900, n_gold=300, prevalence=0.8), S.MisclassifyingJudge(0.9, 0.8)
    df = S.simulate_labelled(d, j, 3)
    k = df["item_id"].str[1:].astype(int)
    df["subset"] = np.where(k < 850, np.where(k % 2 == 0, "A/x", "B/y"), "C/thin")
    sec = sections.per_subset(df, judge="judge", depth=1, null=0.5, n_resamples=0)
    gold = df.dropna(subset=["gold"]).assign(top=lambda x: x["subset"].str.split("/").str[0])
    counts = gold.groupby("top")["item_id"].nunique()
    thin = int((counts < 30).sum())
    assert thin == 1 and counts["C"] < 30
    # PPI++ p-values on A and B by hand (ppi_py at its own λ equals evallab's), then Holm across the two
    ps = []
    for top in ("A", "B"):
        g = df[df["subset"].str.startswith(top)]
        f, lab = (g["verdict"] == "pass").to_numpy(float), g["gold"].notna().to_numpy()
        y = (g["gold"] == "pass").to_numpy(float)
        lam = corrected.power_tuning(y[lab], f[lab], f[~lab])
        ps.append(float(np.ravel(ppi_py.ppi_mean_pval(y[lab], f[lab], f[~lab], null=0.5, lam=lam))[0]))
    holm = sorted(ps)
    adj = [min(1, 2 * holm[0]), min(1, max(2 * holm[0], holm[1]))]
    sig = sum(p < 0.05 for p in adj)
    assert sentences(sec) == [f"For judge, 2 of 3 subsets have at least 30 gold items and are corrected; {sig} differ "
                              "from a 50% pass rate at the 5% level after Holm adjustment; 1 is refused as too thin."]
    assert list(sec.tables[0].table["subset"]) == ["A", "B", "C"]
    with pytest.raises(ParameterError, match="judge 'GPT-4' is not in the table"):
        sections.per_subset(df, judge="GPT-4", n_resamples=0)


# -- paired difference -------------------------------------------------------------------------------------------
def test_paired_difference_states_the_judge_only_and_ppi_differences_computed_here():
    t = S.TwoSystems(n_items=400, n_gold=120)
    df = S.simulate_two_systems(t, S.MisclassifyingJudge(0.85, 0.75, samples=2), 6)
    truth = S.true_two_systems_difference(t)
    sec = sections.paired_difference(df, "system", "A", "B", truth=truth, simulated=True, n_resamples=100)
    w = df.assign(v=(df["verdict"] == "pass").astype(float), g=df["gold"].map({"pass": 1.0, "fail": 0.0}))
    per = w.groupby(["system", "item_id"]).agg(f=("v", "mean"), y=("g", "first")).unstack("system")
    d_f = (per[("f", "A")] - per[("f", "B")]).to_numpy()
    d_y = (per[("y", "A")] - per[("y", "B")]).to_numpy()
    lab = ~np.isnan(d_y)
    est = float(np.ravel(ppi_py.ppi_mean_pointestimate(d_y[lab], d_f[lab], d_f[~lab]))[0])
    s = sentences(sec)[0]
    assert s.startswith(f"A − B: the judge alone says {100 * d_f.mean():+.1f} pp [")
    assert f"PPI++ from {lab.sum()} gold items gives {100 * est:+.1f} pp [" in s
    assert f"against a true {100 * truth:+.1f} pp (paired, p" in s
    assert sec.caveats == [sections.SIMULATED_DIFFERENCE_CAVEAT] and sec.metrics["difference_truth"] == truth
    bare = sections.paired_difference(df, "system", "A", "B", n_resamples=0)
    assert "against a true" not in sentences(bare)[0] and bare.caveats == []
    assert "truth" not in bare.tables[0].columns


# -- the plan ---------------------------------------------------------------------------------------------------
def test_plan_states_gold_labels_with_and_without_the_judge_by_the_textbook(llmbar):
    _, _, rates = llmbar
    sec = sections.next_round_plan(rates, judge="GPT-4", items=2000, half_width=0.03, flip_rate=0.1,
                                   tolerance=0.05, delta=0.05, discordance=0.2, repetition_flip_rate=0.1)
    r = rates.set_index("judge").loc["GPT-4"]
    p, se, sp = r["ppi"], r["rg_sensitivity"], r["rg_specificity"]
    n0 = math.ceil(Z95**2 * p * (1 - p) / 0.03**2)
    q = p * se + (1 - p) * (1 - sp)  # the judge's pass rate; ρ = Cov(Y, verdict) / sd·sd
    rho = (p * se - p * q) / math.sqrt(p * (1 - p) * q * (1 - q))
    n = np.arange(1, n0 + 1)
    hw = Z95 * np.sqrt(p * (1 - p) / n * (1 - rho**2 / (1 + n / (2000 - n))))
    n1 = int(n[np.flatnonzero(hw <= 0.03)[0]])
    assert sentences(sec) == [f"For ±3% on 2,000 items the next round needs {n0:,} gold labels alone, or {n1:,} with "
                              f"GPT-4's verdicts on the rest (sensitivity {pct(se)}, specificity {pct(sp)} on this "
                              "round's gold)."]
    assert sec.metrics["plan_judge"] == "GPT-4" and sec.metrics["plan"][0]["answer"] == n0


def test_no_plan_without_a_corrected_rate():
    d, j = S.LabellingDesign(n_items=100, n_gold=10), S.MisclassifyingJudge()
    rates = corrected.corrected_rates(S.simulate_labelled(d, j, 0), ["judge"], n_resamples=0)
    sec = sections.next_round_plan(rates, judge="judge", items=500, half_width=0.05, flip_rate=0.1, tolerance=0.05,
                                   delta=0.05, discordance=0.2, repetition_flip_rate=0.1)
    assert texts(sec) == ["No plan for the next round from judge: not computable: 10 gold items with a verdict, "
                          "fewer than min_gold=30."]
    assert sec.metrics["plan"] is None and sec.tables == []


def test_an_unreachable_plan_says_why():
    d, j = S.LabellingDesign(n_items=200, n_gold=100, prevalence=0.5), S.MisclassifyingJudge(0.9, 0.9)
    rates = corrected.corrected_rates(S.simulate_labelled(d, j, 1), ["judge"], n_resamples=0)
    sec = sections.next_round_plan(rates, judge="judge", items=200, half_width=0.02, flip_rate=0.1,
                                   tolerance=0.05, delta=0.05, discordance=0.2, repetition_flip_rate=0.1)
    # ±2% needs about 1.96² · 0.25 / 0.02² ≈ 2,400 gold labels: more than the 200 items
    assert sentences(sec)[0].startswith("For ±2% on 200 items the plan cannot be met: more gold labels are needed "
                                        "than the 200 items hold")
    assert sec.conclusions == []


# -- selective judging --------------------------------------------------------------------------------------------
def test_trust_or_escalate_on_llmbar_states_the_overall_agreement_counted_here():
    strategies = ["Vanilla", "CoT", "Swap"]
    table = load_llmbar(subsets=SUBSETS, strategies=strategies).verdicts
    sec = sections.trust_or_escalate(table, over=["strategy"], alpha=0.2, delta=0.1, splits=5)
    votes, gold = defaultdict(Counter), {}
    with open(data_dir("llmbar") / "verdicts.csv", newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["subset"] in SUBSETS and r["strategy"] in strategies:
                key = (r["judge"], r["subset"], r["idx"])
                gold[key] = r["label"]
                for c in ("winner_order_12", "winner_order_21"):
                    if r[c]:
                        votes[key][r[c]] += 1
    agree = defaultdict(list)
    for key, g in gold.items():
        c = votes[key].most_common()
        if c and (len(c) == 1 or c[0][1] > c[1][1]):
            agree[key[0]].append(c[0][0] == g)
    sel = sec.tables[0].table.set_index("judge")
    s = sentences(sec)[0]
    judge = s.split(": a threshold")[0]
    assert judge in agree and s.endswith(f"against {pct(np.mean(agree[judge]))} without abstaining.")
    assert sel.loc[judge, "mean_coverage"] == sel["mean_coverage"][sel["certified_splits"] > 0].max()
    k = int(sel.loc[judge, "certified_splits"])
    assert s.startswith(f"{judge}: a threshold is certified in {k} of 5 calibration splits ({pct(k / 5)}; ")
    # the coverage stated is the mean over the certifying splits: the mean over every split divided by their share
    assert sel.loc[judge, "certified_coverage"] == pytest.approx(sel.loc[judge, "mean_coverage"] * 5 / k)
    assert f"trusted alone on {pct(sel.loc[judge, 'certified_coverage'])} of the held-out pairs" in s
    assert sel["items"].to_dict() == {j: len(a) for j, a in agree.items()}
    assert sec.caveats == [sections.SELECTIVE_CAVEAT] and sec.metrics["alpha"] == 0.2


def test_every_item_escalated_when_no_threshold_passes():
    df = S.simulate_repeated(S.RepeatedJudgeDesign(n_items=200, samples=3, beta_a=1.0, beta_b=1.0), 0)
    df["strategy"] = ""
    sec = sections.trust_or_escalate(df, over=[], alpha=0.01, delta=0.01, splits=3)
    assert sentences(sec) == ["No judge reaches 99% agreement on any confident subset of items in any of 3 "
                              "calibration splits: every item is escalated."]


# -- anchor calibration -------------------------------------------------------------------------------------------
def _pointwise(anchor_sets: dict[str, tuple[int, int]], answers: int = 20, gold: bool = True) -> pd.DataFrame:
    """Per anchor set: (probe passes of 10 replies, answers passed of ``answers``); gold FAIL on odd answers."""
    rows = []
    for a, (probe_passes, passed) in anchor_sets.items():
        for s in range(10):
            rows.append(dict(dataset="d", item_id=f"p{s % 2}/content-free", kind="content-free", judge="j",
                             anchor_set=a, sample=s // 2, order="", verdict="pass" if s < probe_passes else "fail",
                             gold=None))
        for i in range(answers):
            rows.append(dict(dataset="d", item_id=f"x{i}", kind="answer", judge="j", anchor_set=a, sample=0,
                             order="", verdict="pass" if i < passed else "fail",
                             gold=("fail" if i % 2 else "pass") if gold else None))
    return pd.DataFrame(rows)


def test_anchor_calibration_on_one_anchor_set_with_the_injected_rate():
    df = _pointwise({"pass-only": (7, 12)})
    sim = SimulatedJudge(pass_rate=0.3, pass_only_inflation=1.0)  # injected under PASS-only: 0.3 × 2 = 0.6
    sec = sections.anchor_calibration(df, sim, n_resamples=0)
    lo, hi = proportion_confint(7, 10, 0.05, "wilson")
    fails = [i for i in range(20) if i % 2]
    fp = np.mean([i < 12 for i in fails])
    assert sentences(sec) == [
        f"Under pass-only anchors the content-free probe passes 70.0% {interval(lo, hi)} (95% CI, Wilson score, "
        f"n = 10 replies) (injected 60.0%); calibrating against it leaves the false-pass rate on gold-FAIL answers "
        f"at {pct(fp)} {interval(*proportion_confint(6, 10, 0.05, 'wilson'))} (95% CI, Wilson score, n = 10 items)."]
    assert sec.conclusions == ["The content-free probe recovers the injected pass-only leniency: 70.0% vs 60.0% "
                               "injected."]
    assert [s.caption for s in sec.tables] == ["Content-free probe per anchor set (simulated judge)",
                                               "Before and after contextual calibration (simulated judge)"]
    assert sec.tables[0].table["injected"].tolist() == [0.6]
    with pytest.raises(ParameterError, match="anchor 'balanced' is not an anchor set"):
        sections.anchor_calibration(df, sim, anchor="balanced", n_resamples=0)


# -- live recordings ----------------------------------------------------------------------------------------------
def test_live_recordings_absent():
    sec = sections.live_recordings(None, live_dir="data/live/x")
    # the section opens with its own heading (a section left out of a user's report leaves none behind)
    assert texts(sec) == [sections.LIVE_HEADING, "No live SmolLM2 recordings in data/live/x: this section is skipped "
                          "(the simulated judge above stands in)."]
    assert sec.metrics == {"live": None} and sec.tables == []


def test_live_recordings_with_probes_and_gold_on_part_of_the_answers():
    df = _pointwise({"balanced": (3, 10), "pass-only": (8, 16)}, answers=40)
    df.loc[df["item_id"].isin([f"x{i}" for i in range(20, 40)]), "gold"] = None
    df["study"] = np.where(df["kind"] == "content-free", "probe", "inflation")
    sec = sections.live_recordings(df, live_dir="rec", min_gold=10, n_resamples=0)
    assert texts(sec)[:2] == [sections.LIVE_HEADING, "100 live replies from the probe and inflation studies in rec."]
    lo = proportion_confint(3, 10, 0.05, "wilson")
    hi = proportion_confint(8, 10, 0.05, "wilson")
    assert sentences(sec)[0] == (f"j passes the content-free answer in 80.0% {interval(*hi)} (95% CI, Wilson score, "
                                 f"n = 10 replies) under the pass-only anchors, against 30.0% {interval(*lo)} (95% CI, "
                                 "Wilson score, n = 10 replies) under the balanced anchors.")
    # corrected pass rate under "balanced": 10 of 40 answers pass; PPI++ from the 20 gold answers
    f = np.array([i < 10 for i in range(40)], float)
    y = np.array([i % 2 == 0 for i in range(20)], float)
    est = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, f[:20], f[20:]))[0])
    s = sentences(sec)[1]
    assert s.startswith(f"j under the balanced anchors: its own pass rate is {pct(f.mean())} ")
    # on the gold answers Cov(Y, f) = 0 (5 of the 10 passed answers are gold PASS): λ = 0, the judge adds nothing
    assert np.mean((y - y.mean()) * (f[:20] - f[:20].mean())) == 0
    assert f"so j adds nothing: the figure is the gold-only estimate, {pct(est)} [" in s and est == y.mean()
    live = sec.metrics["live"]
    assert live["studies"] == ["probe", "inflation"] and live["replies"] == 100
    assert [r["p_cf"] for r in live["probe"]] == [pytest.approx(0.3), pytest.approx(0.8)]
    assert len(live["rates"]) == 2 and isinstance(sec.tables[-1], Shown)


def test_live_recordings_without_graded_answers_or_gold():
    probes = _pointwise({"balanced": (5, 0)}, answers=0).assign(study="probe")
    sec = sections.live_recordings(probes, live_dir="rec", n_resamples=0)
    assert texts(sec)[-1] == "The live recordings hold no graded answers: no pass rate for them."
    graded = _pointwise({"balanced": (5, 4)}, gold=False)
    graded = graded[graded["kind"] == "answer"].assign(study="inflation")
    sec = sections.live_recordings(graded, live_dir="rec", n_resamples=0)
    assert texts(sec)[2:] == ["The live recordings hold no content-free probe replies: no anchor calibration for "
                              "them.", "The live recordings have no gold labels: no corrected rate for them."]
    assert sec.metrics["live"]["probe"] is None and sec.metrics["live"]["rates"] is None


def test_selective_judging_needs_several_replies_per_item():
    d, j = S.LabellingDesign(n_items=120, n_gold=120), S.MisclassifyingJudge(0.8, 0.7)
    sec = sections.trust_or_escalate(S.simulate_labelled(d, j, 0), over=[], splits=3, source="mine.csv")
    assert texts(sec) == ["Every item has at most one parsed reply per judge, so every confidence is the same: "
                          "selective judging needs several replies per item (samples, both orders or several "
                          "prompts) to rank items by confidence, and is not run."]
    assert sec.findings == [] and sec.tables == [] and not sec.bundled and sec.metrics["selective"] is None


# -- PPI++ at λ = 0: the judge adds nothing (issue 26, defect 15) ---------------------------------------------------
def _anti_correlated(n_items: int = 100, n_gold: int = 40) -> pd.DataFrame:
    """A pointwise judge that fails every gold-PASS item and passes every gold-FAIL one among the gold items
    (Cov(Y, f) < 0, so PPI++'s tuned λ is clipped to 0), and passes two in three of the rest."""
    rows = []
    for i in range(n_items):
        gold = ("pass" if i % 2 else "fail") if i < n_gold else None
        verdict = ("fail" if gold == "pass" else "pass") if gold else ("pass" if i % 3 else "fail")
        rows.append(dict(item_id=f"q{i}", judge="j", verdict=verdict, gold=gold))
    from evallab import verdicts

    return verdicts.coerce(pd.DataFrame(rows))


def test_a_judge_with_zero_weight_is_stated_as_adding_nothing():
    df = _anti_correlated()
    rates = corrected.corrected_rates(df, ["judge"], n_resamples=0)
    f = np.array([0.0 if i % 2 else 1.0 for i in range(40)])
    y = np.array([1.0 if i % 2 else 0.0 for i in range(40)])
    fu = np.array([1.0 if i % 3 else 0.0 for i in range(40, 100)])
    cov = np.mean((y - y.mean()) * (f - f.mean()))
    assert cov < 0  # so the clipped λ is 0 and PPI++ is mean(y): the gold-only estimate
    est = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, f, fu, lam=0.0))[0])
    lo, hi = (float(np.ravel(x)[0]) for x in ppi_py.ppi_mean_ci(y, f, fu, alpha=0.05, lam=0.0))
    assert est == pytest.approx(y.mean()) and rates["ppi"].iloc[0] == pytest.approx(est)
    assert rates["ppi_n_eff"].iloc[0] == pytest.approx(40)  # worth exactly the 40 gold labels
    sec = sections.judge_only_corrected_and_truth(df, df, rates, user_table="mine.csv")
    assert sentences(sec) == [
        f"j: its own pass rate is {pct(fu.sum() / 100 + f.sum() / 100)} "
        f"{interval(*proportion_confint(int(fu.sum() + f.sum()), 100, 0.05, 'wilson'))} (95% CI, Wilson score, "
        f"n = 100 items); PPI++ tunes the weight λ of its verdicts to 0.00 (the interval is worth 40 gold labels "
        f"against the 40 gold items alone), so j adds nothing: the figure is the gold-only estimate, {pct(est)} "
        f"{interval(lo, hi)} (95% CI, {corrected.PPI_METHOD}, n = 100 items)."]
    assert sec.conclusions == [f"From 40 gold items, j's pass rate is {pct(est)} {interval(lo, hi)} (the gold-only "
                               "estimate: its verdicts add nothing)."]


def test_the_bundled_headline_says_the_judge_adds_nothing_at_zero_weight():
    full = load_llmbar(strategies=["Vanilla"]).verdicts
    full = full[full["order"] == "ab"]
    hidden = corrected.hide_gold(full, 150, seed=0)
    rates = corrected.corrected_rates(hidden, ["judge"], n_resamples=0)
    sec = sections.judge_only_corrected_and_truth(full, hidden, rates)
    head = sentences(sec)[0]
    judge = head.split(":")[0]
    g = hidden[(hidden["judge"] == judge) & hidden["verdict"].notna()]
    f, lab = (g["verdict"] == "2").to_numpy(float), g["gold"].notna().to_numpy()
    y = (g["gold"] == "2").to_numpy(float)
    lam = float(np.ravel(ppi_py.ppi_mean_pointestimate(y[lab], f[lab], f[~lab], lam=0.0))[0])
    # λ computed here as ppi_py does for a mean: Cov(Y, f) / ((1 + n/N) Var(f)), clipped to [0, 1]
    n, N = lab.sum(), (~lab).sum()
    tuned = np.clip(np.mean((y[lab] - y[lab].mean()) * (f[lab] - f[lab].mean()))
                    / ((1 + n / N) * np.var(f, ddof=1)), 0, 1)
    if round(float(tuned), 2) == 0:
        assert f"so {judge} adds nothing: the figure is the gold-only estimate, {pct(y[lab].mean())}" in head
        assert lam == pytest.approx(y[lab].mean())
        assert "adds nothing" in sec.conclusions[0] and "moves" not in sec.conclusions[0]
    else:
        assert "adds nothing" not in head and f"PPI++ from {n} gold pairs gives" in head


# -- the user's table (notebook 07 on verdicts_path) ----------------------------------------------------------------
def _user_table(tmp_path, samples: int = 3):
    """Two strategies of one judge on 200 items (two subsets), gold on the first 60; written as a CSV."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(200):
        truth = "pass" if rng.random() < 0.4 else "fail"
        for strategy in ("plain", "cot"):
            for s in range(samples):
                v = truth if rng.random() < 0.8 else ("fail" if truth == "pass" else "pass")
                rows.append(dict(item_id=f"q{i}", subset="math" if i % 2 else "code", judge="mine",
                                 strategy=strategy, sample=s, verdict=v, gold=truth if i < 60 else ""))
    path = tmp_path / "mine.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path), pd.DataFrame(rows)


def test_on_the_users_table_each_strategy_is_corrected_apart_without_a_truth(tmp_path):
    path, raw = _user_table(tmp_path)
    # LLMBar's filters and the simulated labelling round do not apply to the user's table
    full, hidden = sections.load_table(path, subsets=[], strategies=["Vanilla"], orders=["ab"], n_gold=10)
    assert len(full) == len(raw) and corrected.rate_keys(full) == ["judge", "strategy"]
    assert hidden["gold"].notna().sum() == (raw["gold"] != "").sum()  # the user's gold sample, untouched
    rates = corrected.corrected_rates(hidden, n_resamples=0)  # by default: judge and strategy, never pooled
    assert sorted(rates["strategy"]) == ["cot", "plain"] and set(rates["judge"]) == {"mine"}
    sec = sections.judge_only_corrected_and_truth(full, hidden, rates, user_table=path)
    assert texts(sec)[0] == "1,200 replies of 1 judge to 200 items of mine.csv (plain, cot); 60 have gold: the gold " \
                            "sample the corrections use."
    assert sec.metrics["truth"] is None and not any("truth" in x for x in sentences(sec))
    for strategy, line in zip(("cot", "plain"), sentences(sec), strict=True):
        g = raw[raw["strategy"] == strategy].assign(v=lambda d: (d["verdict"] == "pass").astype(float))
        per = g.groupby("item_id", sort=True).agg(f=("v", "mean"), gold=("gold", "first"))
        lab = (per["gold"] != "").to_numpy()
        f, y = per["f"].to_numpy(), (per["gold"] == "pass").to_numpy(float)
        est = float(np.ravel(ppi_py.ppi_mean_pointestimate(y[lab], f[lab], f[~lab]))[0])
        lo, hi = (float(np.ravel(x)[0]) for x in ppi_py.ppi_mean_ci(y[lab], f[lab], f[~lab], alpha=0.05))
        assert line.startswith(f"mine · {strategy}: its own pass rate is {pct(f.mean())} ")
        assert f"PPI++ from 60 gold items gives {pct(est)} {interval(lo, hi)}" in line
    assert sec.tables[0].columns == ["judge", "strategy", "method", "estimate", "n_eff"]  # no truth column


def test_on_the_users_table_the_plan_and_subsets_take_its_own_judge(tmp_path):
    path, raw = _user_table(tmp_path)
    full, _ = sections.load_table(path)
    rates = corrected.corrected_rates(full, n_resamples=0)
    plan = sections.next_round_plan(rates, judge="GPT-4", items=2000, half_width=0.05, flip_rate=0.1,
                                    tolerance=0.05, delta=0.05, discordance=0.2, repetition_flip_rate=0.1,
                                    user_table=path)
    best = rates["ppi_n_eff"].idxmax()
    assert texts(plan) == [f"The plan is for mine · {rates['strategy'].iloc[best]}, the row whose corrected rate is worth "
                           "the most gold labels (plan_judge names a judge the table does not hold)."]
    assert plan.metrics["plan"] is not None
    with pytest.raises(ParameterError):
        sections.next_round_plan(rates, judge="GPT-4", items=2000, half_width=0.05, flip_rate=0.1, tolerance=0.05,
                                 delta=0.05, discordance=0.2, repetition_flip_rate=0.1)
    sub = sections.per_subset(full, judge="GPT-4", min_gold=20, user_table=path, n_resamples=0)
    counts = raw[raw["gold"] != ""].groupby(["strategy", "subset"])["item_id"].nunique()
    assert sentences(sub)[0].startswith(f"For mine, {int((counts >= 20).sum())} of {len(counts)} subsets have at "
                                        "least 20 gold items and are corrected")
    one = sections.per_subset(full.assign(subset="all"), judge="mine", user_table=path, n_resamples=0)
    assert texts(one) == ["The table has one subset: no per-subset breakdown (the rates above are the whole "
                          "table's)."] and one.metrics["by_subset"] is None


def test_uncorrected_rows_of_a_judge_under_two_strategies_are_named_each_with_its_count(tmp_path):
    # gold on 20 items: each strategy's row is below min_gold=30, with its own count of gold items with a verdict
    path, raw = _user_table(tmp_path)
    raw = raw.assign(gold=np.where(raw["item_id"].str[1:].astype(int) < 20, raw["gold"], ""))
    raw.loc[(raw["strategy"] == "cot") & (raw["item_id"] == "q0"), "verdict"] = ""  # q0 unparsed under cot
    raw.to_csv(path, index=False)
    full, _ = sections.load_table(path)
    rates = corrected.corrected_rates(full, n_resamples=0)
    sec = sections.judge_only_corrected_and_truth(full, full, rates, user_table=path)
    assert "No judge is corrected: mine · cot: 19 gold items with a verdict, fewer than min_gold=30; mine · plain: " \
           "20 gold items with a verdict, fewer than min_gold=30." in texts(sec)


def test_a_plan_judge_under_several_strategies_gets_its_best_row_named(tmp_path):
    # the user's judge "mine" under two strategies: the plan is for the row worth the most gold labels (its PPI++
    # effective gold count, the largest of the two), named — never the first row found, unnamed
    path, _ = _user_table(tmp_path)
    full, _ = sections.load_table(path)
    rates = corrected.corrected_rates(full, n_resamples=0)
    assert sorted(rates["strategy"]) == ["cot", "plain"]
    best = rates["strategy"].iloc[int(rates["ppi_n_eff"].to_numpy(float).argmax())]
    plan = sections.next_round_plan(rates, judge="mine", items=2000, half_width=0.05, flip_rate=0.1,
                                    tolerance=0.05, delta=0.05, discordance=0.2, repetition_flip_rate=0.1,
                                    user_table=path)
    rows = ", ".join(f"mine · {s}" for s in rates["strategy"])
    assert texts(plan) == [f"mine has 2 rows ({rows}); the plan is for mine · {best}, the one whose corrected rate "
                           "is worth the most gold labels."]
    assert plan.metrics["plan_judge"] == f"mine · {best}"
    assert f"with mine · {best}'s verdicts on the rest" in sentences(plan)[0]


def test_selective_judging_on_a_table_no_judge_can_calibrate_says_why_per_judge():
    # two judges, 2 samples, gold on 12 items each: 6 calibration items per judge, fewer than min_calibration=30
    rows = [{"item_id": f"q{i}", "judge": j, "sample": s, "verdict": "pass" if (i + s) % 3 else "fail",
             "gold": ("pass" if i % 2 else "fail") if i < 12 else None}
            for i in range(40) for j in ("A", "B") for s in (0, 1)]
    from evallab import verdicts as V

    t = V.coerce(pd.DataFrame(rows))
    sec = sections.trust_or_escalate(t, over=[], alpha=0.15, delta=0.1, calibration_share=0.5, splits=5,
                                     source="mine.csv")
    # items with gold and a majority verdict, counted by hand: an item's 2 samples agree when (i + 0) % 3 and
    # (i + 1) % 3 are both nonzero or both zero
    majority = [i for i in range(12) if bool(i % 3) == bool((i + 1) % 3)]
    n_cal = round(0.5 * len(majority))
    text = [x for x in sec.items if isinstance(x, str)]
    assert text == [f"Selective judging is not run (it calibrates on gold items with a majority verdict): "
                    f"A — {n_cal} calibration items, fewer than min_calibration=30; B — {n_cal} calibration items, "
                    f"fewer than min_calibration=30."]
