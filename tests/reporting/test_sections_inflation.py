"""evallab.reporting.sections.inflation (report 03): every sentence states numbers computed here independently —
plain pandas, scipy's bootstrap, statsmodels' Wilson interval — on the bundled data and on small hand-made tables
shaped unlike it (one presentation order, several samples per item, no judge)."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from section_helper import section_text as _text
from statsmodels.stats.proportion import proportion_confint

from evallab.metrics import _position as position
from evallab.paths import REPO_ROOT, data_dir
from evallab.reporting._context import Shown
from evallab.reporting.sections import inflation as S

B = 200  # bootstrap resamples in these tests


def _pp(x: float) -> str:
    return f"{100 * x:+.1f}".replace("+0.0", "0.0").replace("-0.0", "0.0")


@pytest.fixture(scope="module")
def natural():
    return S.load_few_shot(subsets=["LLMBar/Natural"])


def _first_slot_counts(d: pd.DataFrame) -> pd.DataFrame:
    """Per item (sorted by dataset, item_id as text): first-slot picks and decisive replies, by hand."""
    first = ((d["order"] == "ab") & (d["verdict"] == "1")) | ((d["order"] == "ba") & (d["verdict"] == "2"))
    dec = d["verdict"].isin(["1", "2"])
    x = pd.DataFrame({"key": d["dataset"].astype(str) + "/" + d["item_id"].astype(str),
                      "fs": (first & dec).astype(int), "dec": dec.astype(int)})
    return x.groupby("key").sum().sort_index()


# ------------------------------------------------------------------------------------------ few-shot section
def test_few_shot_headline_is_the_largest_shift_with_its_paired_bootstrap(natural, tmp_path):
    sec = S.few_shot_section(natural, n_resamples=B)
    # the largest |Δ first-slot| over judge × few-shot strategy, by hand on the items every strategy judged
    deltas = {}
    for judge, g in natural.groupby("judge"):
        have = sorted(set(g["strategy"]))
        per = {s: _first_slot_counts(g[g["strategy"] == s]) for s in have}
        common = sorted(set.intersection(*(set(p.index) for p in per.values())))
        base = per["Vanilla"].loc[common]
        for s in have:
            if s != "Vanilla":
                x = per[s].loc[common]
                deltas[(judge, s)] = (x, base, x["fs"].sum() / x["dec"].sum() - base["fs"].sum() / base["dec"].sum())
    (judge, s), (x, base, d) = max(deltas.items(), key=lambda kv: abs(kv[1][2]))
    ref = sps.bootstrap((x["fs"].to_numpy(float), x["dec"].to_numpy(float), base["fs"].to_numpy(float),
                         base["dec"].to_numpy(float)),
                        lambda a, b, c, e, axis=-1: a.sum(axis) / b.sum(axis) - c.sum(axis) / e.sum(axis),
                        paired=True, vectorized=True, n_resamples=B, method="percentile",
                        random_state=np.random.default_rng(0)).confidence_interval
    head = sec.findings[0]
    assert f"most for {judge} with {s}: {_pp(d)} pp [{_pp(ref.low)}, {_pp(ref.high)}]" in head.sentence
    assert f"paired item bootstrap (percentile, {B} resamples), n = {len(x)} items" in head.sentence
    assert head.method == f"paired item bootstrap (percentile, {B} resamples)"
    one = [v for (j, st), v in deltas.items() if st == "Vanilla_1shot"]
    m = sec.metrics
    assert m["llmbar_judges"] == natural["judge"].nunique() and m["llmbar_pairs"] == natural["item_id"].nunique()
    assert m["max_abs_first_slot_shift_pp"] == pytest.approx(100 * max(abs(v[2]) for v in one))
    text = _text(sec, tmp_path)
    assert "nan" not in text.lower() and "Wilson" not in text  # every interval here resamples items


def test_few_shot_table_is_position_anchor_effect_with_the_methods_it_named(natural):
    sec = S.few_shot_section(natural, n_resamples=B)
    (shown,) = sec.tables
    ours = shown.table
    theirs = position.anchor_effect(natural, n_resamples=B)  # the estimator, called here on its own
    for c in ("first_slot_preference", "accuracy", "delta_first_slot", "delta_accuracy"):
        for b in ("_low", "_high", "_method"):
            pd.testing.assert_series_equal(ours[c + b].reset_index(drop=True), theirs[c + b].reset_index(drop=True))
    # both orders of an item are two replies of one unit: never a Wilson interval of independent replies
    assert set(ours["first_slot_preference_method"]) == {f"item bootstrap (percentile, {B} resamples)"}
    base = ours["strategy"] == "Vanilla"
    assert set(ours.loc[base, "delta_first_slot_method"]) == {""}
    assert ours.measures["delta_first_slot"].unit == "pp" and ours.measures["accuracy"].n_unit == "items"


def _one_order(n=30, seed=1):
    """One presentation order, one sample: a judge under two strategies, gold known."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        gold = "1" if i % 2 else "2"
        for s, p in (("Vanilla", 0.7), ("Vanilla_1shot", 0.6)):
            rows.append({"item_id": f"q{i}", "dataset": "mine", "subset": "mine", "judge": "j", "strategy": s,
                         "order": "ab", "sample": 0, "gold": gold,
                         "verdict": gold if rng.random() < p else ("2" if gold == "1" else "1")})
    return pd.DataFrame(rows)


def test_one_order_table_says_first_slot_cannot_be_computed_and_shows_accuracy_with_wilson(tmp_path):
    d = _one_order()
    sec = S.few_shot_section(d, n_resamples=B)
    said = [x for x in sec.items if isinstance(x, str) and "First-slot preference is not computable" in x]
    assert len(said) == 1 and "both presentation orders" in said[0]
    (shown,) = sec.tables
    assert not any("first_slot" in c for c in shown.columns)
    acc = shown.table.set_index("strategy")
    for s in ("Vanilla", "Vanilla_1shot"):
        g = d[d["strategy"] == s]
        k = int((g["verdict"] == g["gold"]).sum())
        assert acc.loc[s, "accuracy_method"] == "Wilson score"  # one reply per item: independent units
        assert (acc.loc[s, "accuracy_low"], acc.loc[s, "accuracy_high"]) == pytest.approx(
            proportion_confint(k, len(g), alpha=0.05, method="wilson"))
    k0 = int((d[d["strategy"] == "Vanilla"]["verdict"] == d[d["strategy"] == "Vanilla"]["gold"]).sum())
    k1 = int((d[d["strategy"] == "Vanilla_1shot"]["verdict"] == d[d["strategy"] == "Vanilla_1shot"]["gold"]).sum())
    assert f"is {_pp((k1 - k0) / 30)} pp [" in sec.findings[0].sentence
    assert sec.metrics["max_abs_first_slot_shift_pp"] is None and sec.metrics["judges_first_slot_shift_ci_excludes_0"] == 0
    assert "nan" not in _text(sec, tmp_path).lower()


def test_a_table_without_the_strategies_gets_one_sentence_and_no_table():
    d = _one_order().assign(strategy="my-prompt")
    sec = S.few_shot_section(d, n_resamples=B)
    assert sec.tables == [] and sec.findings == []
    (said,) = [x for x in sec.items if isinstance(x, str)]
    assert "needs strategy Vanilla" in said and "my-prompt" in said
    assert sec.metrics["llmbar_judges"] == 0 and sec.metrics["anchor_effect"] == []



def test_one_order_without_gold_gets_the_reason_and_no_table_of_dashes(tmp_path):
    """One presentation order and no gold: neither figure can be compared — one sentence with both reasons, no
    table, no figure (a new user's table: two strategies of their own)."""
    d = _one_order().assign(gold=pd.NA, strategy=lambda x: x["strategy"].map({"Vanilla": "rubric-v1",
                                                                             "Vanilla_1shot": "rubric-v2"}))
    sec = S.few_shot_section(d, baseline="rubric-v1", variants=["rubric-v2"], n_resamples=B)
    assert sec.tables == [] and sec.findings == [] and not any(hasattr(x, "savefig") for x in sec.items)
    said = " ".join(x for x in sec.items if isinstance(x, str))
    assert "Neither first-slot preference nor accuracy" in said
    assert "both presentation orders" in said and "no parsed reply with gold" in said
    assert "shows accuracy only" not in said
    assert sec.conclusions and "rubric-v2 against rubric-v1" in sec.conclusions[0]
    assert "nan" not in _text(sec, tmp_path).lower()


def test_both_orders_without_gold_shows_first_slot_preference_only(natural):
    """Both orders, no gold: first-slot preference is compared (its figures as computed by hand), and the accuracy
    columns are left out with one sentence instead of a column of dashes."""
    d = natural.assign(gold=pd.NA)
    sec = S.few_shot_section(d, n_resamples=B)
    said = " ".join(x for x in sec.items if isinstance(x, str))
    assert "Accuracy is not computable on this table (no parsed reply with gold)" in said
    (shown,) = sec.tables
    assert not any("accuracy" in c for c in shown.columns)
    t = shown.table.set_index(["judge", "strategy"])
    for (judge, strategy), row in t.iterrows():
        c = _first_slot_counts(d[(d["judge"] == judge) & (d["strategy"] == strategy)])
        assert row["first_slot_preference"] == pytest.approx(c["fs"].sum() / c["dec"].sum())


# ------------------------------------------------------------------------------------------ rubric section
def test_rubric_section_on_the_bundled_library():
    sec = S.rubric_section()
    want = {"backend-api": 1 - 0.45, "cli-tool": 1 - 0.40, "frontend-app": 1 - 0.30, "fullstack-product": 1 - 0.20}
    assert sec.findings[0].sentence.startswith("The rubric library passes every validation rule; 4 of 4 presets FAIL")
    assert {r["preset"]: pytest.approx(r["weighted_score"]) for r in sec.metrics["hard_fail"]} == want
    assert sec.metrics["rubric_findings"] == 0 and sec.metrics["presets_hard_failed_on_functionality"] == 4
    assert len(sec.tables) == 1  # no empty findings table


def test_rubric_section_lists_findings_by_file_name(tmp_path):
    from evallab.skills._rubrics import validate_rubric

    lib = tmp_path / "lib"
    shutil.copytree(data_dir("meowkit") / "rubrics", lib)
    bad = REPO_ROOT / "tests" / "data" / "rubrics" / "only-pass-anchors.md"
    shutil.copy(bad, lib / bad.name)
    n = len(validate_rubric(lib / bad.name))
    sec = S.rubric_section(lib)
    assert n > 0 and sec.metrics["rubric_findings"] == n
    assert f"has {n} validation findings" in sec.findings[0].sentence
    found = sec.tables[0].table
    assert set(found["path"]) == {bad.name}  # a file name, never a machine path
    assert str(tmp_path) not in _text(sec, tmp_path / "r")


# ------------------------------------------------------------------------------------------ experiment section
def _runs(n_pass=10, n_fail=20, samples=3, seed=2):
    """A judge's run with several samples per item; gold-PASS items judged the same under every anchor set."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_pass + n_fail):
        gold = "pass" if i < n_pass else "fail"
        for a, p in (("balanced", 0.3), ("pass-only", 0.6), ("fail-last", 0.2)):
            for s in range(samples):
                v = "pass" if gold == "pass" else ("pass" if rng.random() < p else "fail")
                rows.append({"item_id": f"k{i}", "anchor_set": a, "sample": s, "verdict": v, "gold": gold,
                             "judge": "mine", "model": "m-1", "input_tokens": 100, "output_tokens": 5,
                             "latency_s": 0.5, "cost_usd": 0.001})
    return pd.DataFrame(rows)


def _items(runs):
    it = runs.drop_duplicates("item_id")[["item_id", "gold"]]
    return it.assign(scenario_id=[f"s{i // 4}" for i in range(len(it))])


def test_experiment_section_without_a_judge_says_so_once():
    items = _items(_runs())
    sec = S.experiment_section(None, items)
    assert sec.tables == [] and sec.metrics == {"judge_configured": False}
    said = [x for x in sec.items if isinstance(x, str)]
    assert said[0] == "keryx: 30 items from 8 scenarios; gold fail 20, pass 10." and "No judge configured" in said[1]


def test_experiment_section_states_the_changes_with_their_methods(tmp_path):
    runs = _runs()
    sec = S.experiment_section(runs, _items(runs), n_resamples=B)
    fp = {a: (g[g["gold"] == "fail"]["verdict"] == "pass").mean() for a, g in runs.groupby("anchor_set")}
    d = fp["pass-only"] - fp["balanced"]
    head = sec.findings[0].sentence
    assert head.startswith(f"Under pass-only anchors mine's false-pass rate on gold-FAIL answers moves by {_pp(d)} pp [")
    assert f"paired item bootstrap (percentile, {B} resamples), n = 20 items" in head
    # gold-PASS items never change: the bound from the Wilson interval of 0 of 10 items (3 replies each: u·10·3/30)
    u = proportion_confint(0, 10, alpha=0.05, method="wilson")[1]
    assert (f"by 0.0 pp [{_pp(-u)}, {_pp(u)}] (95% CI, bound from the Wilson score interval of 0 of 10 items "
            f"changed, n = 10 items)") in head
    m = sec.metrics
    assert m["judge_configured"] is True and m["experiment_replies"] == len(runs) == 270
    assert m["pass_only_delta_false_pass"] == pytest.approx(d)
    assert m["experiment_cost_usd"] == pytest.approx(0.27) and m["experiment_live_calls"] == 270
    shift = (runs[runs["anchor_set"] == "fail-last"]["verdict"] == "pass").mean() - \
        (runs[runs["anchor_set"] == "balanced"]["verdict"] == "pass").mean()
    assert m["fail_last_shift"] == pytest.approx(shift)
    assert any(f.sentence.startswith(f"FAIL-last anchors change mine's pass rate by {_pp(shift)} pp [")
               for f in sec.findings)
    text = _text(sec, tmp_path)
    assert "nan" not in text.lower() and "Pass/fail flips, McNemar p-value" in text
    assert isinstance(sec.tables[0], Shown) and sec.conclusions == [head]


# ------------------------------------------------------------------------------------------ live section
def test_live_section_names_the_wilson_bound_where_no_answer_changed(tmp_path):
    from evallab.reporting import _live as live

    run = live.load()
    if run is None:
        pytest.skip("no committed live run")
    sec = S.live_section(run, n_resamples=B)
    d = run["inflation"]
    gp = d[d["gold"].str.lower() == "pass"].pivot_table(index="item_id", columns="anchor_set", values="verdict",
                                                       aggfunc="first")
    changed = {v: int((gp[v] != gp["balanced"]).sum()) for v in ("pass-only", "fail-last")}
    n = len(gp)
    assert (n, changed) == (34, {"pass-only": 1, "fail-last": 0})  # the committed run, counted by hand
    fl = next(f.sentence for f in sec.findings if f.sentence.startswith("Under fail-last"))
    u = proportion_confint(0, n, alpha=0.05, method="wilson")[1]  # 0.102: report 03's "[-10.2, +10.2]"
    assert (f"by 0.0 pp [{_pp(-u)}, {_pp(u)}] (95% CI, bound from the Wilson score interval of 0 of {n} items "
            f"changed, n = {n} items)") in fl
    po = next(f.sentence for f in sec.findings if f.sentence.startswith("Under pass-only"))
    assert po.count(f"paired item bootstrap (percentile, {B} resamples)") == 2  # one answer changed: a bootstrap
    probe = run["probe"]
    k = probe.groupby("anchor_set")["verdict"].apply(lambda v: int((v == "pass").sum()))
    top = k.idxmax()
    f = sec.findings[-1]
    assert (f.low, f.high) == pytest.approx(proportion_confint(k[top], int(probe[probe["anchor_set"] == top]
                                                                           ["verdict"].notna().sum()),
                                                               alpha=0.05, method="wilson"))
    assert f.method == "Wilson score"
    text = _text(sec, tmp_path)
    assert "paired item bootstrap" in text and "nan" not in text.lower()
    assert sec.metrics["live_balanced_agreement"] == pytest.approx(
        (d[d["anchor_set"] == "balanced"]["verdict"] == d[d["anchor_set"] == "balanced"]["gold"]).mean())


def test_live_section_without_a_run_is_one_sentence():
    sec = S.live_section(None)
    assert sec.findings == [] and sec.tables == [] and len(sec.items) == 2 and "make live" in sec.items[1]
    assert sec.items[0] == S.LIVE_HEADING and sec.items[0].startswith("## Live judge: SmolLM2-135M")


def test_live_table_labels_each_mcnemar_for_what_it_tests(tmp_path):
    """Issue 26 defect 19: beside the pass rates, McNemar of the pass/fail flips (pass-only: 6 items to pass, 8 to
    fail, p 0.791); beside agreement, McNemar of the right/wrong changes against gold (9 right, 5 wrong, p 0.424)
    — counted here by hand from the committed run."""
    from evallab.reporting import _live as live

    run = live.load()
    if run is None:
        pytest.skip("no committed live run")
    d = run["inflation"]
    w = d.assign(ps=d["verdict"].str.lower() == "pass", ok=d["verdict"].str.lower() == d["gold"].str.lower(),
                 parsed=d["verdict"].notna())
    sec = S.live_section(run, n_resamples=B)
    (t,) = [x for x in sec.tables if x.caption.endswith("against balanced anchors")]
    infl = t.table.set_index("anchor_set")
    for v in ("pass-only", "fail-last"):
        both = set(w[(w["anchor_set"] == v) & w["parsed"]]["item_id"]) & \
            set(w[(w["anchor_set"] == "balanced") & w["parsed"]]["item_id"])
        x = w[w["item_id"].isin(both)].pivot_table(index="item_id", columns="anchor_set", values=["ps", "ok"],
                                                   aggfunc="first")
        for col, pre in (("ps", ""), ("ok", "agreement_")):
            b = int((x[col][v].astype(bool) & ~x[col]["balanced"].astype(bool)).sum())
            c = int((~x[col][v].astype(bool) & x[col]["balanced"].astype(bool)).sum())
            assert (infl.at[v, f"{pre}mcnemar_b"], infl.at[v, f"{pre}mcnemar_c"]) == (b, c)
            assert infl.at[v, f"{pre}mcnemar_p"] == pytest.approx(sps.binomtest(b, b + c).pvalue)
    assert (infl.at["pass-only", "mcnemar_b"], infl.at["pass-only", "mcnemar_c"]) == (6, 8)
    assert (infl.at["pass-only", "agreement_mcnemar_b"], infl.at["pass-only", "agreement_mcnemar_c"]) == (9, 5)
    text = _text(sec, tmp_path)
    assert "Pass/fail flips vs balanced, McNemar p" in text and "Right/wrong changes vs balanced, McNemar p" in text
    assert t.columns["agreement_mcnemar_p"].startswith("Right/wrong") and list(t.columns).index("mcnemar_p") < \
        list(t.columns).index("agreement") < list(t.columns).index("agreement_mcnemar_p")


def test_bundled_sections_carry_their_own_heading():
    """Issue 26 leftover: a bundled section holds its heading, so a report that skips it shows no heading."""
    from evallab.reporting._context import Report

    sec = S.rubric_section()
    assert sec.items[0] == S.RUBRIC_HEADING and S.RUBRIC_HEADING.startswith("## The rubric library")
    assert sec.bundled and Report("t", "/tmp", user_table="mine.csv").skips(sec)
