"""evallab.metrics._inflation: experiment requests (no leakage, variant layouts), estimators on hand-made tables, and the
parameter-recovery check against the local simulated judge."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from evallab.errors import DataError
from evallab.experiments import _inflation as X
from evallab.judges import _prompts as prompts
from evallab.metrics import _inflation as I
from evallab.skills import load_calibration_items


def _table(rows):
    """rows: (item_id, anchor_set, sample, verdict, gold)."""
    return pd.DataFrame(rows, columns=["item_id", "anchor_set", "sample", "verdict", "gold"]).assign(judge="j")


# hand-made: 5 items, gold i1 pass, i2..i5 fail; one unparsed pass-only reply (i5)
HAND = _table([
    ("i1", "balanced", 0, "pass", "pass"), ("i2", "balanced", 0, "fail", "fail"),
    ("i3", "balanced", 0, "fail", "fail"), ("i4", "balanced", 0, "pass", "fail"),
    ("i5", "balanced", 0, "fail", "fail"),
    ("i1", "pass-only", 0, "pass", "pass"), ("i2", "pass-only", 0, "pass", "fail"),
    ("i3", "pass-only", 0, "fail", "fail"), ("i4", "pass-only", 0, "pass", "fail"),
    ("i5", "pass-only", 0, None, "fail"),
])


def test_inflation_table_hand_counts():
    t = I.inflation_table(HAND, n_resamples=200).set_index("anchor_set")
    b, p = t.loc["balanced"], t.loc["pass-only"]
    assert (b["items"], b["replies"], b["unparsed"]) == (5, 5, 0)
    assert (p["items"], p["replies"], p["unparsed"]) == (5, 5, 1)
    assert b["pass_rate"] == pytest.approx(2 / 5) and p["pass_rate"] == pytest.approx(3 / 4)
    assert p["inflation"] == pytest.approx((3 / 4) / (2 / 5) - 1)  # 0.875
    assert np.isnan(b["inflation"])
    assert b["false_pass_rate"] == pytest.approx(1 / 4) and p["false_pass_rate"] == pytest.approx(2 / 3)
    assert p["delta_false_pass"] == pytest.approx(2 / 3 - 1 / 4)
    assert b["agreement"] == pytest.approx(4 / 5) and p["agreement"] == pytest.approx(2 / 4)
    # paired by (item, sample), both parsed: i2 fail -> pass is the only discordant pair
    assert (p["mcnemar_b"], p["mcnemar_c"]) == (1, 0) and p["mcnemar_p"] == pytest.approx(1.0)
    for c in ("pass_rate", "inflation", "false_pass_rate", "agreement"):
        assert p[f"{c}_low"] <= p[c] <= p[f"{c}_high"]


def test_inflation_split_by_gold_hand_counts():
    # gold PASS: i1 (pass, pass), i2 (fail, pass); gold FAIL: i3 (fail, pass), i4 (fail, fail)  [balanced, pass-only]
    df = _table([("i1", "balanced", 0, "pass", "pass"), ("i2", "balanced", 0, "fail", "pass"),
                 ("i3", "balanced", 0, "fail", "fail"), ("i4", "balanced", 0, "fail", "fail"),
                 ("i1", "pass-only", 0, "pass", "pass"), ("i2", "pass-only", 0, "pass", "pass"),
                 ("i3", "pass-only", 0, "pass", "fail"), ("i4", "pass-only", 0, "fail", "fail")])
    t = I.inflation_table(df, n_resamples=0).set_index("anchor_set")
    b, p = t.loc["balanced"], t.loc["pass-only"]
    assert b["true_pass_rate"] == 0.5 and p["true_pass_rate"] == 1.0 and p["delta_true_pass"] == pytest.approx(0.5)
    assert b["false_pass_rate"] == 0.0 and p["false_pass_rate"] == 0.5 and p["delta_false_pass"] == pytest.approx(0.5)
    assert p["inflation"] == pytest.approx((3 / 4) / (1 / 4) - 1)
    assert p["delta_agreement"] == pytest.approx(3 / 4 - 3 / 4)


def test_pass_rate_interval_matches_scipy_reference():
    rng = np.random.default_rng(3)
    n = 40
    rows = [(f"i{i}", "balanced", s, "pass" if rng.random() < 0.4 else "fail", "fail") for i in range(n)
            for s in range(3)]
    df = _table(rows)
    t = I.pass_rate(df, n_resamples=500, seed=0)
    per = df.assign(p=df["verdict"].eq("pass")).groupby("item_id", sort=True)["p"].agg(["sum", "size"])
    ref = sps.bootstrap((per["sum"].to_numpy(float), per["size"].to_numpy(float)),
                        lambda x, y, axis=-1: x.sum(axis) / y.sum(axis), paired=True, vectorized=True,
                        n_resamples=500, method="percentile", random_state=np.random.default_rng(0))
    row = t.iloc[0]
    assert row["pass_rate"] == pytest.approx(per["sum"].sum() / per["size"].sum())
    assert row["pass_rate_low"] == pytest.approx(ref.confidence_interval.low)
    assert row["pass_rate_high"] == pytest.approx(ref.confidence_interval.high)


def test_identical_variants_give_zero_inflation_without_a_point_interval():
    rows = [(f"i{i}", v, 0, "pass" if i % 3 == 0 else "fail", "fail") for i in range(30)
            for v in ("balanced", "pass-only")]
    p = I.inflation_table(_table(rows), n_resamples=300).set_index("anchor_set").loc["pass-only"]
    # every resample gives a ratio of exactly 1: the interval would be the point [0, 0] — none, and the note says why
    assert p["inflation"] == 0 and np.isnan(p["inflation_low"]) and np.isnan(p["inflation_high"])
    assert "every item gives the same value" in p["note"]
    # the paired differences get the bound of 0 of 30 items differing (Wilson upper bound, statsmodels), not [0, 0]
    u = proportion_confint(0, 30, method="wilson")[1]
    assert p["delta_false_pass"] == 0 and p["delta_false_pass_high"] == pytest.approx(u)
    assert p["delta_false_pass_low"] == pytest.approx(-u)
    assert (p["mcnemar_b"], p["mcnemar_c"], p["mcnemar_p"]) == (0, 0, 1.0)


def test_mcnemar_against_statsmodels():
    # 40 items: 12 flip fail->pass, 2 flip pass->fail, the rest agree
    rows = []
    for i in range(40):
        base, var = ("fail", "pass") if i < 12 else ("pass", "fail") if i < 14 else ("pass", "pass")
        rows += [(f"i{i}", "balanced", 0, base, "fail"), (f"i{i}", "pass-only", 0, var, "fail")]
    p = I.inflation_table(_table(rows), n_resamples=100).set_index("anchor_set").loc["pass-only"]
    assert (p["mcnemar_b"], p["mcnemar_c"]) == (12, 2)
    assert p["mcnemar_p"] == pytest.approx(sm_mcnemar([[0, 12], [2, 0]], exact=True).pvalue)


# samples=3: McNemar gets ONE pair per item (majority of its parsed samples); even splits dropped and counted
_S3 = {  # item: (baseline samples, variant samples)
    "i1": (["fail", "fail", "fail"], ["pass", "pass", "fail"]),  # fail -> pass
    "i2": (["fail", "fail", "pass"], ["pass", "pass", "pass"]),  # fail -> pass
    "i3": (["pass", "pass", "pass"], ["fail", "fail", "pass"]),  # pass -> fail
    "i4": (["pass", "fail", None], ["pass", "pass", "pass"]),    # baseline 1 pass of 2 parsed: tie, dropped
    "i5": (["pass", "pass", "pass"], ["pass", "pass", "pass"]),  # concordant
    "i6": (["fail", "pass", "fail"], ["pass", "fail", "fail"]),  # fail, fail: concordant (2 discordant samples)
}


def _s3_table(variant):
    return _table([(i, a, s, v, "fail") for i, (bs, vs) in _S3.items()
                   for a, seq in (("balanced", bs), (variant, vs)) for s, v in enumerate(seq)])


def test_mcnemar_one_pair_per_item_with_samples():
    p = I.inflation_table(_s3_table("pass-only"), n_resamples=100).set_index("anchor_set").loc["pass-only"]
    # hand count per item: b = i1, i2; c = i3; i4 tie (per (item, sample) pairing would give b=6, c=3)
    assert (p["mcnemar_b"], p["mcnemar_c"], p["mcnemar_ties"]) == (2, 1, 1)
    assert p["mcnemar_p"] == pytest.approx(sm_mcnemar([[0, 2], [1, 0]], exact=True).pvalue)
    r = I.position_priming(_s3_table("fail-last"), n_resamples=100).iloc[0]
    assert (r["pairs"], r["ties"], r["to_pass"], r["to_fail"]) == (5, 1, 2, 1)
    assert r["flip_rate"] == pytest.approx(3 / 5)
    assert r["mcnemar_p"] == pytest.approx(sm_mcnemar([[0, 2], [1, 0]], exact=True).pvalue)


def test_position_priming_hand_counts():
    # 6 items; fail-last flips i0, i1 pass->fail and i5 fail->pass
    bal = ["pass", "pass", "pass", "fail", "fail", "fail"]
    fl = ["fail", "fail", "pass", "fail", "fail", "pass"]
    rows = [(f"i{i}", "balanced", 0, v, "fail") for i, v in enumerate(bal)] + \
           [(f"i{i}", "fail-last", 0, v, "fail") for i, v in enumerate(fl)]
    r = I.position_priming(_table(rows), n_resamples=200).iloc[0]
    assert r["pairs"] == 6 and r["pass_rate_baseline"] == pytest.approx(3 / 6)
    assert r["pass_rate_primed"] == pytest.approx(2 / 6) and r["shift"] == pytest.approx(-1 / 6)
    assert (r["to_fail"], r["to_pass"]) == (2, 1) and r["flip_rate"] == pytest.approx(3 / 6)
    assert r["shift_low"] <= r["shift"] <= r["shift_high"]


def test_estimator_errors():
    with pytest.raises(DataError, match="baseline anchor set 'balanced' is absent"):
        I.inflation_table(HAND[HAND["anchor_set"] == "pass-only"])
    with pytest.raises(DataError, match="'fail-last' is absent"):
        I.position_priming(HAND)
    with pytest.raises(DataError, match="lacks column"):
        I.pass_rate(HAND.drop(columns="anchor_set"))


# ------------------------------------------------------------------------------------------ experiment requests
@pytest.fixture(scope="module")
def items():
    return load_calibration_items()


def test_keryx_items(items):
    assert len(items) == 136 and items["scenario_id"].nunique() == 34
    assert items.groupby("kind")["gold"].agg(set).to_dict() == {
        "known-right": {"pass"}, "known-wrong": {"fail"}, "vague": {"fail"}, "subtle-wrong": {"fail"}}
    assert items["item_id"].is_unique


def test_requests_no_leakage_and_variant_layouts(items):
    variants = ("none", "balanced", "balanced-fail-first", "pass-only", "fail-only", "fail-last", "shuffled-3")
    reqs = X.build_requests(items, variants, samples=2, k=4, seed=1)
    assert len(reqs) == 136 * len(variants) * 2
    heads = {"none": [], "balanced": ["PASS", "FAIL", "PASS", "FAIL"], "balanced-fail-first": ["FAIL", "PASS", "FAIL",
             "PASS"], "pass-only": ["PASS"] * 4, "fail-only": ["FAIL"] * 4, "fail-last": ["PASS", "PASS", "FAIL",
                                                                                        "FAIL"]}
    gold = dict(zip(items["item_id"], items["gold"], strict=True))
    by_item: dict = {}
    for r in reqs:
        m = r.metadata
        src = [s for s in m["anchor_sources"].split(";") if s]
        # anchors come only from OTHER scenarios, with their gold verdict as the heading
        assert all(s.split("/")[0] != m["scenario_id"] for s in src)
        h = prompts.anchor_headings(r.user)
        assert h == [gold[s].upper() for s in src]
        if m["anchor_set"] in heads:
            assert h == heads[m["anchor_set"]]
        else:
            assert sorted(h) == ["FAIL", "FAIL", "PASS", "PASS"]
        assert prompts.answer_text(r.user) == items.set_index("item_id").loc[m["item_id"], "answer"]
        by_item.setdefault(m["item_id"], {})[m["anchor_set"]] = set(src)
    # the mixed variants of an item show the same examples; pass-only extends balanced's PASS examples
    for v in by_item.values():
        assert v["balanced"] == v["balanced-fail-first"] == v["fail-last"] == v["shuffled-3"]
        assert {s for s in v["balanced"] if gold[s] == "pass"} <= v["pass-only"]


def test_requests_metadata(items):
    r = X.build_requests(items, ("pass-only",), samples=2, k=2)
    assert len(r) == 272
    m = r[1].metadata
    assert (m["item_id"], m["anchor_set"], m["sample"], m["gold"], m["order"]) == \
        ("no-dollar-any-template-escape/known-right", "pass-only", 1, "pass", "")
    assert m["dataset"] == "keryx" and m["strategy"] == prompts.PROMPT_VERSION and m["kind"] == "known-right"
    assert r[1].kind == "pointwise" and "Task prompt the answer responds to:" in r[1].user


@pytest.mark.parametrize("k", [1, 3])
def test_requests_reject_odd_k_for_mixed_variants(items, k):
    with pytest.raises(DataError, match=f"'balanced' needs an even number of anchors k >= 2.*got k={k}"):
        X.build_requests(items, ("balanced", "pass-only"), k=k)
    with pytest.raises(DataError, match="even number of anchors"):
        X.run_experiment(_RuleJudge({}), items, ("pass-only", "fail-last"), k=k)
    assert len(X.build_requests(items, ("pass-only",), k=k)) == 136  # one-sided: any k


def test_cli_inflation_run_rejects_odd_k(monkeypatch, capsys):
    import sys

    from evallab.cli import main

    # checked before any judge is built or called (port 9 would refuse the connection anyway)
    monkeypatch.setattr(sys, "argv", ["evallab", "inflation", "run", "--k", "1", "--judge-base-url",
                                      "http://127.0.0.1:9/v1", "--judge-model", "m"])
    with pytest.raises(SystemExit) as e:
        main()
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and "even number of anchors k >= 2" in err and "got k=1" in err


def test_requests_need_other_scenarios(items):
    with pytest.raises(DataError, match="other scenario"):
        X.build_requests(items[items["scenario_id"].isin(items["scenario_id"].unique()[:2])], ("balanced",), k=4)


# ------------------------------------------------------------------------------------------ parameter recovery
HAVE_SIM = importlib.util.find_spec("evallab.testing") is not None and \
    importlib.util.find_spec("evallab.judges._runner") is not None


@pytest.mark.skipif(not HAVE_SIM, reason="needs evallab.testing.LocalJudgeServer/SimulatedJudge and "
                                         "evallab.judges.run_jobs (judges helper)")
@pytest.mark.parametrize("injected", [0.0, 0.2, 0.5])
def test_parameter_recovery_against_local_simulated_judge(items, injected):
    from evallab.judges import make_judge
    from evallab.testing import LocalJudgeServer, SimulatedJudge

    sim = SimulatedJudge(seed=11, pass_rate=0.4, pass_only_inflation=injected, fail_last_priming=0.15)
    with LocalJudgeServer(sim=sim) as srv:
        judge = make_judge(srv.base_url, "sim-judge", label="sim", cache=None)
        df = X.run_experiment(judge, items, ("balanced", "pass-only", "fail-last"), samples=3, k=4, seed=0)
    assert len(df) == 136 * 3 * 3 and df["verdict"].notna().all()
    t = I.inflation_table(df, n_resamples=1000).set_index("anchor_set")
    row = t.loc["pass-only"]
    assert row["inflation_low"] <= injected <= row["inflation_high"], row[["inflation", "inflation_low",
                                                                           "inflation_high"]]
    assert abs(row["inflation"] - injected) < 0.2
    assert t.loc["balanced", "pass_rate"] == pytest.approx(0.4, abs=0.08)
    # position priming: FAIL-last lowers P(pass) by the injected 0.15 whatever the inflation
    pr = I.position_priming(df, n_resamples=1000).iloc[0]
    assert pr["shift_low"] <= -0.15 <= pr["shift_high"] and pr["shift_high"] < 0


# ------------------------------------------------------------------------------------------ run, record, replay
class _RuleJudge:
    """In-process judge: says PASS whenever every anchor shown is PASS, else the gold verdict of the answer."""

    label, model = "rule", "rule-1"

    def __init__(self, gold_by_answer):
        self.gold = gold_by_answer

    async def judge(self, request):
        from evallab.judges import JudgeReply

        heads = prompts.anchor_headings(request.user)
        ans = prompts.answer_text(request.user)
        v = "pass" if heads and all(h == "PASS" for h in heads) else self.gold[ans]
        return JudgeReply(raw=f'{{"verdict": "{v}"}}', verdict=v, reason="rule", model=self.model)


def test_run_experiment_records_and_replays(items, tmp_path):
    from evallab.judges import make_judge

    judge = _RuleJudge(dict(zip(items["answer"], items["gold"], strict=True)))
    df = X.run_experiment(judge, items, ("balanced", "pass-only"), samples=1, record_dir=tmp_path)
    assert len(df) == 272 and set(df["anchor_set"]) == {"balanced", "pass-only"}
    assert {"scenario_id", "kind", "anchor_sources"} <= set(df.columns)
    t = I.inflation_table(df, n_resamples=200).set_index("anchor_set")
    # hand count: balanced = gold (34 pass of 136); pass-only = all pass -> inflation 136/34 - 1 = 3
    assert t.loc["balanced", "pass_rate"] == pytest.approx(34 / 136) and t.loc["balanced", "agreement"] == 1.0
    assert t.loc["pass-only", "inflation"] == pytest.approx(3.0)
    assert t.loc["pass-only", "false_pass_rate"] == 1.0 and t.loc["pass-only", "mcnemar_b"] == 102
    assert (tmp_path / X.VERDICTS_FILE).exists() and (tmp_path / X.RECORDING_FILE).exists()
    replay = make_judge(replay_dir=tmp_path)
    again = X.run_experiment(replay, items, ("balanced", "pass-only"), samples=1)
    key = ["item_id", "anchor_set", "sample"]
    a = df.sort_values(key)[key + ["verdict"]].reset_index(drop=True)
    b = again.sort_values(key)[key + ["verdict"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


def test_max_items_keeps_whole_scenarios(items):
    judge = _RuleJudge(dict(zip(items["answer"], items["gold"], strict=True)))
    df = X.run_experiment(judge, items, ("balanced",), max_items=3)
    assert len(df) == 12 and df["scenario_id"].nunique() == 3


def test_cli_inflation_table(tmp_path):
    from typer.testing import CliRunner

    from evallab.cli import app

    p = tmp_path / "v.csv"
    HAND.to_csv(p, index=False)
    r = CliRunner().invoke(app, ["inflation", "table", str(p)])
    assert r.exit_code == 0, r.output
    row = next(ln.split() for ln in r.stdout.splitlines() if ln.split()[:2] == ["j", "pass-only"])
    assert float(row[4]) == pytest.approx(0.75, abs=5e-4) and float(row[5]) == pytest.approx(0.875, abs=5e-4)


def test_rubric_requests_use_meowkit_anchors():
    from evallab.paths import data_dir
    from evallab.skills._rubrics import parse_rubric

    r = parse_rubric(data_dir("meowkit") / "rubrics" / "functionality.md")
    answers = pd.DataFrame({"item_id": ["a1", "a2"], "answer": ["curl returns 200 ...", "tests pass, not run"],
                            "gold": ["pass", "fail"]})
    reqs = X.rubric_requests(r, answers, ("balanced", "pass-only", "none"))
    assert len(reqs) == 6
    heads = {q.metadata["anchor_set"]: prompts.anchor_headings(q.user) for q in reqs}
    assert heads == {"balanced": ["PASS", "FAIL"], "pass-only": ["PASS"], "none": []}
    assert reqs[0].metadata["anchor_sources"] == "functionality#Example 1;functionality#Example 2"
    assert "Whitelisting console errors" in reqs[0].user  # anti-patterns are fail criteria (rule 7)


def test_keryx_loader_names_the_bad_file(tmp_path):
    import json as _json
    import shutil

    from evallab.paths import data_dir
    from evallab.skills import EvalSpecError

    src = data_dir("keryx") / "stacks" / "go" / "skills" / "go-testing" / "evals.json"
    dst = tmp_path / "stacks" / "go" / "skills" / "go-testing" / "evals.json"
    dst.parent.mkdir(parents=True)
    shutil.copy(src, dst)
    assert len(load_calibration_items(tmp_path)) == 8
    doc = _json.loads(dst.read_text())
    doc["scenarios"][1]["calibration"]["vague"] = ""
    dst.write_text(_json.dumps(doc))
    with pytest.raises(EvalSpecError) as e:
        load_calibration_items(tmp_path)
    assert str(dst) in str(e.value) and "vague" in str(e.value)


# ------------------------------------------------------------------------------------------ measures and methods
def test_inflation_table_measures_say_what_each_column_is():
    from evallab._results import Results

    t = I.inflation_table(HAND, n_resamples=200, confidence=0.9)
    assert isinstance(t, Results) and t.level == 0.9 and t.keys == ["judge", "anchor_set"]
    m = t.measures
    assert (m["delta_false_pass"].unit, m["delta_false_pass"].n, m["delta_false_pass"].n_unit) == \
        ("pp", "gold_fail_items", "items")
    assert (m["false_pass_rate"].unit, m["true_pass_rate"].n, m["agreement"].n) == \
        ("proportion", "gold_pass_items", "gold_items")
    assert m["mcnemar_p"].unit == "p-value" and "flips" in m["mcnemar_p"].label
    assert all(m[c].unit == "count" for c in ("items", "replies", "unparsed", "mcnemar_b", "mcnemar_ties"))
    assert all(m[c].method_column == f"{c}_method" for c in ("pass_rate", "inflation", "delta_true_pass"))
    # hand counts of HAND: gold i1 pass, i2..i5 fail
    row = t.set_index("anchor_set").loc["pass-only"]
    assert (row["gold_fail_items"], row["gold_pass_items"], row["gold_items"]) == (4, 1, 5)
    assert t.set_index("anchor_set").loc["balanced", "note"].startswith("baseline")


def test_one_reply_per_item_rates_are_wilson_and_say_so():
    from evallab._results import WILSON

    rng = np.random.default_rng(5)
    rows = [(f"i{i}", v, 0, "pass" if rng.random() < 0.5 else "fail", "fail" if i < 30 else "pass")
            for i in range(40) for v in ("balanced", "pass-only")]
    t = I.inflation_table(_table(rows), n_resamples=300)
    p = t.set_index("anchor_set").loc["pass-only"]
    df = _table(rows)
    k = int(((df["anchor_set"] == "pass-only") & (df["gold"] == "fail") & (df["verdict"] == "pass")).sum())
    assert p["false_pass_rate_method"] == WILSON
    assert (p["false_pass_rate_low"], p["false_pass_rate_high"]) == pytest.approx(
        proportion_confint(k, 30, alpha=0.05, method="wilson"))
    e = t.estimate("false_pass_rate", 1)
    assert e.method == WILSON and e.n == 30 and e.n_unit == "items" and "Wilson score, n = 30 items" in str(e)
    # the differences and the ratio are paired item bootstraps
    assert p["delta_false_pass_method"] == "paired item bootstrap (percentile, 300 resamples)"
    assert p["inflation_method"] == "paired item bootstrap (percentile, 300 resamples)"


def test_a_difference_where_no_item_changed_names_its_wilson_bound():
    # gold-PASS items identical in both sets, gold-FAIL items differ: two methods in one row
    rows = [(f"p{i}", v, 0, "pass", "pass") for i in range(34) for v in ("balanced", "fail-last")]
    rows += [(f"f{i}", "balanced", 0, "pass" if i % 2 else "fail", "fail") for i in range(20)]
    rows += [(f"f{i}", "fail-last", 0, "pass" if i % 3 else "fail", "fail") for i in range(20)]
    t = I.inflation_table(_table(rows), n_resamples=200)
    r = t.set_index("anchor_set").loc["fail-last"]
    u = proportion_confint(0, 34, alpha=0.05, method="wilson")[1]  # ≈ 0.102: the ±10.2 of report 03
    assert r["delta_true_pass"] == 0 and r["delta_true_pass_high"] == pytest.approx(u)
    assert r["delta_true_pass_method"] == "bound from the Wilson score interval of 0 of 34 items changed"
    assert "bound from the Wilson score interval of 0 of 34 items changed" in str(t.estimate("delta_true_pass", 1))
    assert r["delta_false_pass_method"] == "paired item bootstrap (percentile, 200 resamples)"


def test_several_samples_per_item_are_an_item_bootstrap():
    p = I.pass_rate(_s3_table("pass-only"), n_resamples=250)
    assert set(p["pass_rate_method"]) == {"item bootstrap (percentile, 250 resamples)"}
    assert p.measures["pass_rate"].n == "items" and p.keys == ["judge", "anchor_set"]
    one = I.pass_rate(HAND, n_resamples=250).set_index("anchor_set").loc["balanced"]
    assert one["pass_rate_method"] == "Wilson score"
    assert (one["pass_rate_low"], one["pass_rate_high"]) == pytest.approx(
        proportion_confint(2, 5, alpha=0.05, method="wilson"))


def test_position_priming_measures_and_flip_rate_interval():
    r = I.position_priming(_s3_table("fail-last"), n_resamples=100)
    assert r.measures["flip_rate"].method == "Wilson score" and r.measures["shift"].unit == "pp"
    row = r.iloc[0]
    # 3 of the 5 paired items flip (hand count in test_mcnemar_one_pair_per_item_with_samples)
    assert (row["flip_rate_low"], row["flip_rate_high"]) == pytest.approx(
        proportion_confint(3, 5, alpha=0.05, method="wilson"))
    assert row["shift_method"] == "paired item bootstrap (percentile, 100 resamples)"
    assert str(r.estimate("flip_rate", 0)).startswith("60.0% [")


def test_agreement_mcnemar_tests_right_wrong_changes_not_pass_fail_flips():
    """Issue 26 defect 19: the McNemar beside agreement tests the changes in agreement with gold. i1 (gold fail)
    turns from a right fail to a wrong pass and i2 (gold pass) from a wrong fail to a right pass: two pass/fail flips
    both to pass (b 2, c 0), but one item turned right and one wrong (b 1, c 1); i3 turns wrong by a flip to fail."""
    t = _table([
        ("i1", "balanced", 0, "fail", "fail"), ("i2", "balanced", 0, "fail", "pass"),
        ("i3", "balanced", 0, "pass", "pass"), ("i4", "balanced", 0, "fail", "fail"),
        ("i1", "pass-only", 0, "pass", "fail"), ("i2", "pass-only", 0, "pass", "pass"),
        ("i3", "pass-only", 0, "fail", "pass"), ("i4", "pass-only", 0, "fail", "fail"),
    ])
    r = I.inflation_table(t, n_resamples=0).set_index("anchor_set").loc["pass-only"]
    assert (r["mcnemar_b"], r["mcnemar_c"]) == (2, 1)  # to pass: i1, i2; to fail: i3
    assert (r["agreement_mcnemar_b"], r["agreement_mcnemar_c"]) == (1, 2)  # right: i2; wrong: i1, i3
    assert r["mcnemar_p"] == pytest.approx(sps.binomtest(2, 3).pvalue)
    assert r["agreement_mcnemar_p"] == pytest.approx(sps.binomtest(1, 3).pvalue)
    m = I.inflation_table(t, n_resamples=0).measures
    assert m["mcnemar_p"].label == "Pass/fail flips, McNemar p"
    assert m["agreement_mcnemar_p"].label == "Right/wrong changes against gold, McNemar p"
