"""keryx judge scenarios in evallab.skills: schema errors, grading, canned answers, integrity rules, the AG check from recordings, the
pack gate on the go eval report, judge consistency, the malformed/adversarial corpus, and a live judge-check
against the local test server that records and then replays to the same verdicts.

Expected values are hand counts (written here) or counted from the raw JSON with the json module."""

from __future__ import annotations

import copy
import glob
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from cli_helper import run_cli

from evallab import skills as S
from evallab.errors import DataError
from evallab.experiments import _judge_check as judge_check
from evallab.judges import RecordingError, to_verdicts
from evallab.judges._recordings import EXPECTED, KINDS, load_recording
from evallab.metrics import _agreement as agreement
from evallab.paths import REPO_ROOT, data_dir
from evallab.skills import _integrity, _trials
from evallab.skills._anti_gaming import ag_findings, ag_matrix, ag_summary
from evallab.skills._grading import canned_answers, grade_answer
from evallab.skills._pack_gate import gate_verdicts
from evallab.skills._scenario_schema import Calibration, EvalSpec, Scenario
from evallab.skills._trials import trial_causes, trial_disagreements

KERYX = data_dir("keryx")
TD = REPO_ROOT / "tests" / "data" / "scenarios"


@pytest.fixture
def valid():
    return S.load_evals(TD / "valid" / "evals.json")


# ---------------------------------------------------------------------------------------------- bundled data
def test_bundled_totals_match_hand_count(specs, recs):
    # hand count (SOURCE.md): 17 skills, 34 scenarios; 17 recordings; 16 × 14 + 10 entries; 16 × 42 + 10 samples
    assert len(specs) == 17 and sum(len(s.scenarios) for s in specs.values()) == 34
    assert len(recs) == 17
    assert sum(len(r.entries) for r in recs.values()) == 16 * 14 + 10 == 234
    assert sum(len(e.samples) for r in recs.values() for e in r.entries) == 16 * 42 + 10 == 682
    # the same totals straight from the files with the json module
    raw = [json.loads(Path(p).read_text()) for p in glob.glob(str(KERYX / "judge-recordings" / "*.json"))]
    assert sum(len(d["entries"]) for d in raw) == 234
    assert sum(len(e.get("samples", [e])) for d in raw for e in d["entries"]) == 682


def test_ag_flags_go_code_review_stale_and_missing_kinds(ag):
    bad = ag[ag["status"] != "ok"]
    assert set(bad["recording"]) == {"go__go-code-review"}
    gcr = ag[ag["recording"] == "go__go-code-review"]
    # 2 scenarios × {vague, subtle-wrong} are not in the old recording; the 5 recorded kinds are at 2026-09-24.1
    assert sorted(gcr.loc[gcr["status"] == "missing", "kind"]) == ["subtle-wrong"] * 2 + ["vague"] * 2
    assert len(gcr[gcr["status"] == "stale"]) == 10
    assert set(gcr.loc[gcr["status"] == "stale", "prompt_version"]) == {"2026-09-24.1"}
    assert all("re-run `evallab judge-check" in m for m in bad["message"])
    # every other cell: observed == expected, unanimous over 3 samples
    ok = ag[(ag["recording"] != "go__go-code-review") & (ag["kind"] != "empty")]
    assert len(ok) == 16 * 2 * 7 and (ok["observed"] == ok["expected"]).all() and (ok["samples"] == 3).all()
    assert (ok["unanimity"] == 1.0).all()
    # keryx's digests are carried, never silently "verified"
    assert (ag.loc[ag["kind"] != "empty", "digest_check"].isin(["not recomputable"])).sum() == 234
    summ = ag_summary(ag).set_index("recording")
    assert summ.index[summ["ag"] == "fail"].tolist() == ["go__go-code-review"]
    # every other recording: all cells ok, but keryx digests cannot be recomputed -> never a plain "pass"
    raw = {Path(p).stem: json.loads(Path(p).read_text())
           for p in glob.glob(str(KERYX / "judge-recordings" / "*.json"))}
    others = sorted(n for n in raw if n != "go__go-code-review")
    assert len(others) == 16 and summ.loc[others, "ag"].eq("pass (digests not recomputable)").all()
    assert summ["not_recomputable"].to_dict() == {n: len(d["entries"]) for n, d in raw.items()}
    notes = [f for f in ag_findings(ag, S.load_tree(KERYX)) if f.severity == "note"]
    assert len(notes) == 17 and all("not recomputable" in f.message for f in notes)


def _self_agreement_tables(recs):
    df = to_verdicts(dict(recs))
    k = int(df.groupby(["subset", "item_id"])["sample"].size().mode().iloc[0])
    kw = dict(n_resamples=50)
    return {"overall": agreement.repetition_stability(df, by=(), **kw),
            "by_kind": agreement.repetition_stability(df, by=("kind",), **kw),
            "by_scenario": agreement.repetition_stability(df, by=("subset", "scenario_id"), **kw),
            "fleiss": agreement.fleiss_kappa(df[df["sample"] < k], raters="sample", **kw).iloc[0]}


def test_self_agreement_from_recordings(recs):
    t = _self_agreement_tables(recs)
    # independent count: entries with >= 2 samples and all verdicts equal
    units = [e for r in recs.values() for e in r.entries if len(e.samples) >= 2]
    unanimous = [e for e in units if len({s.verdict for s in e.samples}) == 1]
    assert int(t["overall"]["units"].iloc[0]) == len(units) == 224
    assert int(t["overall"]["unanimous"].iloc[0]) == len(unanimous)
    assert t["overall"]["flip_rate"].iloc[0] == pytest.approx(0.0)
    assert set(t["by_kind"]["kind"]) == {"echo", "vague", "known-wrong", "subtle-wrong", "injection", "stuffed",
                                         "known-right"}
    bs = t["by_scenario"]
    assert len(bs) == 34  # the legacy single-verdict recording's 2 scenarios have no repeated samples:
    assert bs.loc[bs["units"] == 0, "subset"].tolist() == ["go__go-code-review"] * 2
    assert bs.loc[bs["units"] == 0, "note"].str.startswith("not computable").all()
    assert t["fleiss"]["units"] == 224 and t["fleiss"]["raters"] == 3


def test_self_agreement_counts_a_flip():
    rec = load_recording(TD / "recordings" / "non_unanimous.json")
    t = _self_agreement_tables({"x": rec})
    ov = t["overall"].iloc[0]
    assert ov["units"] == 7 and ov["unanimous"] == 6
    # one unit of 3 samples with a 2–1 split: 2 of its 3 pairs differ; 7 units × 3 pairs = 21 pairs
    assert ov["flip_rate"] == pytest.approx(2 / 21)
    # Shi et al.'s repetition stability: mean modal share, 6 units at 3/3 and one at 2/3
    assert ov["repetition_stability"] == pytest.approx((6 + 2 / 3) / 7)
    assert ov["unanimity"] == pytest.approx(6 / 7)


def test_pack_gate_on_go_eval_report(reports):
    gate = S.pack_gate(reports)
    v = gate_verdicts(gate).set_index("skill")["verdict"].to_dict()
    assert v == {"go/go-build-fix": "fail", "go/go-code-review": "fail", "go/go-implementation": "fail",
                 "go/go-testing": "fail"}
    trials = gate[gate["check"] == "trials"]
    assert trials["ok"].eq(False).all() and set(trials["observed"]) == {"5"}
    rates = gate[(gate["check"] == "pass rate (re-derived)") & gate["ok"].eq(False)]
    assert sorted(zip(rates["skill"], rates["scenario"], rates["observed"].astype(float), strict=True)) == [
        ("go/go-testing", "no-sleep-sync", 0.6), ("go/go-testing", "table-driven-subtests", 0.4)]
    # independent: count trials whose judge verdict is pass, straight from the raw JSON
    raw = json.loads((KERYX / "stacks/go/governance/eval.json").read_text())
    gt = next(r for r in raw["reports"] if r["skillId"] == "go/go-testing")
    for s in gt["scenarios"]:
        if s.get("trialRecords"):
            n = sum(t["judge"]["verdict"] == "pass" for t in s["trialRecords"])
            assert n / len(s["trialRecords"]) == {"table-driven-subtests": 0.4, "no-sleep-sync": 0.6}[s["id"]]
    # the honest report's declared counts, regrade and output hashes are consistent
    assert gate[gate["check"].isin(["declared counts match records", "recorded passed == regrade",
                                    "output sha256"])]["ok"].all()


def test_pack_gate_ag_row_says_digests_not_recomputable(reports, ag):
    gate = S.pack_gate(reports, ag=ag)
    row = gate[gate["check"] == "AG (anti-gaming recordings)"].set_index("skill")
    # go-code-review: 14 failing cells (10 stale + 4 missing) -> False; the other go skills: every cell ok but
    # their keryx digests (7 per judge scenario, 2 scenarios) are not recomputable -> not checkable (None)
    assert row.loc["go/go-code-review", "ok"] is False
    for sk in ("go/go-build-fix", "go/go-implementation", "go/go-testing"):
        assert row.loc[sk, "ok"] is None
        assert row.loc[sk, "observed"] == ("0 of 16 failing; 14 request digest(s) not recomputable: recording not "
                                           "verifiable against current evals")
    v = gate_verdicts(gate).set_index("skill")
    assert (v.loc["go/go-build-fix", "not_checkable"] >= 2) and "AG" not in v.loc["go/go-build-fix", "failures"]


def test_pack_gate_rederives_a_tampered_report():
    reports = S.load_eval_report(TD / "eval_reports" / "tampered.eval.json")
    gate = S.pack_gate(reports).set_index(["scenario", "check"])
    row = ("table-driven-subtests",)
    assert gate.loc[row + ("pass rate (re-derived)",), "observed"] == "0.4"  # not the declared 1.0
    assert not gate.loc[row + ("declared counts match records",), "ok"]
    assert gate.loc[row + ("recorded passed == regrade",), "observed"] == "[1]"
    assert gate.loc[row + ("output sha256",), "observed"] == "[2]"
    assert gate.loc[("", "trials"), "ok"]  # the declared report-level trials (10) pass ...
    assert not gate.loc[row + ("trial records (re-derived trials)",), "ok"]  # ... the records (5) do not


def test_judge_consistency_lists_no_sleep_sync(reports, specs):
    jc = trial_disagreements(reports, specs).set_index("scenario")
    assert set(jc.index) == {"no-sleep-sync", "table-driven-subtests"}
    r = jc.loc["no-sleep-sync"]
    assert r["pass_trials"] == [1, 2, 5] and r["fail_trials"] == [3, 4]
    assert "trial 3:" in r["fail_reasons"] and "trial 1:" in r["pass_reasons"]


def test_go_testing_trials_split_by_cause(reports, specs):
    # Hand count from the raw eval.json (SOURCE.md): table-driven-subtests trials 1, 4 and 5 are DeepSeek DSML
    # tool-call markup (the runner has no tools: no answer), failed by the judge — rightly; trials 2 and 3 are
    # answers and both pass. no-sleep-sync's five trials are all answers (no markup), all mention time.Sleep (the
    # scenario's one anti-pattern token) and have no deterministic checks, yet pass in 1, 2, 5 and fail in 3, 4: the
    # judge's disagreement, the only judge inconsistency in the report.
    raw = json.loads((KERYX / "stacks/go/governance/eval.json").read_text())
    gt = next(r for r in raw["reports"] if r["skillId"] == "go/go-testing")
    trials = {s["id"]: s["trialRecords"] for s in gt["scenarios"] if s.get("trialRecords")}
    markup = [i for i, t in enumerate(trials["table-driven-subtests"], 1) if "DSML" in t["output"]]
    assert markup == [1, 4, 5]
    assert all("time.sleep" in t["output"].lower() for t in trials["no-sleep-sync"])
    causes = trial_causes(reports, specs)
    got = {sid: dict(zip(g["trial"], g["cause"], strict=True))
           for sid, g in causes[causes["skill"] == "go/go-testing"].groupby("scenario")}
    assert got["table-driven-subtests"] == {1: "runner failure", 2: "consistent", 3: "consistent",
                                            4: "runner failure", 5: "runner failure"}
    assert got["no-sleep-sync"] == {i: "judge disagreement" for i in range(1, 6)}
    # every other go trial is consistent: 40 trials in all, 3 runner failures, 5 in judge disagreement
    assert len(causes) == 40 and causes["cause"].value_counts().to_dict() == {
        "consistent": 32, "judge disagreement": 5, "runner failure": 3}
    jc = trial_disagreements(reports, specs).set_index("scenario")
    t = jc.loc["table-driven-subtests"]
    assert t["cause"] == "runner failure" and t["runner_failures"] == [1, 4, 5] and not t["judge_inconsistent"]
    assert t["answers"] == 2 and t["pass_trials"] == [2, 3] and t["fail_trials"] == []
    n = jc.loc["no-sleep-sync"]
    assert n["cause"] == "judge disagreement" and n["judge_inconsistent"] and n["runner_failures"] == []
    assert jc.index[jc["judge_inconsistent"]].tolist() == ["no-sleep-sync"]


def _trial_report(outputs_verdicts, anti=("time.Sleep",)):
    trials = [{"output": o, "judge": {"verdict": v, "reason": f"r{i}"}, "passed": v == "pass",
               "deterministic": []} for i, (o, v) in enumerate(outputs_verdicts, 1)]
    report = [{"skillId": "p/s", "scenarios": [{"id": "x", "kind": "behavior", "trialRecords": trials}]}]
    spec = EvalSpec(path="<mem>", pack="p", skill="s", triggers={}, scenarios=[
        Scenario(id="x", prompt="?", strictness="high", expected_behavior=[], anti_patterns=list(anti))])
    return report, {"p__s": spec}


def test_trial_causes_answer_variation_unresolved_and_markup_forms():
    # verdicts follow the anti-pattern: the two answers using time.Sleep fail, the one without passes
    rep, specs = _trial_report([("use wg.Wait()", "pass"), ("time.Sleep(1)", "fail"), ("time.Sleep(2)", "fail")])
    c = trial_causes(rep, specs)
    assert c["cause"].tolist() == ["answer variation"] * 3
    assert trial_disagreements(rep, specs)["cause"].tolist() == ["answer variation"]
    # the same split with no anti-pattern token and no deterministic check: nothing recorded compares the answers
    rep, specs = _trial_report([("a", "pass"), ("b", "fail")], anti=())
    assert trial_causes(rep, specs)["cause"].tolist() == ["unresolved", "unresolved"]
    assert not trial_disagreements(rep, specs)["judge_inconsistent"].any()
    # without specs the anti-patterns are unknown: unresolved, never blamed on the judge
    rep, _ = _trial_report([("a", "pass"), ("b", "fail")])
    assert trial_causes(rep)["cause"].tolist() == ["unresolved", "unresolved"]
    # runner failures: empty output and the common tool-call forms; a plain answer is not one
    assert _trials.runner_failure("") == "no output" and _trials.runner_failure("  \n") == "no output"
    for text in ("<｜｜DSML｜｜ calls>", "<tool_call>{}</tool_call>", "<function_calls><invoke name=\"bash\">",
                 '{"tool_calls": [{"id": 1}]}', "<｜tool▁calls▁begin｜>"):
        assert _trials.runner_failure("Let me look first.\n" + text).startswith("tool-call markup"), text
    assert _trials.runner_failure("Use a `sync.WaitGroup` and call `wg.Wait()`.") == ""


def test_empty_answer_carries_no_judge_statistic(ag):
    empty = ag[ag["kind"] == "empty"]
    assert len(empty) == 34 and (~empty["judged"]).all() and (empty["samples"] == 0).all()
    assert empty["unanimity"].isna().all() and empty["unanimous"].isna().all()
    assert (empty["observed"] == "fail").all() and (empty["status"] == "ok").all()
    assert ag.loc[ag["kind"] != "empty", "judged"].all()


# -------------------------------------------------------------------------------------- grading & canned set
def test_grade_answer_combines_deterministic_and_judge(valid):
    s = valid.scenarios[0]
    calls = []

    def judge(sc, ans):
        calls.append(ans)
        return "pass"

    assert grade_answer(s, "use number here", judge).passed  # regex holds, judge passes
    assert not grade_answer(s, "use a string here", judge).passed  # regex fails although the judge passes
    assert not grade_answer(s, "number", lambda sc, a: ("fail", "no")).passed
    assert not grade_answer(s, "number", lambda sc, a: (None, "unparsed")).passed
    calls.clear()

    def boom(sc, ans):
        raise AssertionError("the judge must not be called for an empty answer")

    g = grade_answer(s, "   \n", boom)
    assert not g.passed and not g.reached_judge and g.judge_reason == "empty answer"
    with pytest.raises(ValueError):
        grade_answer(s, "number", None)


def test_canned_answers_follow_the_table(valid):
    s = valid.scenarios[0]
    c = canned_answers(s)
    cal = s.calibration
    assert list(c) == ["empty", "echo", "vague", "known-wrong", "subtle-wrong", "injection", "stuffed",
                       "known-right"]
    assert c["empty"] == ""
    assert c["echo"] == "Sure. You asked: The build fails with a type error in widget.ts. Fix it."
    assert (c["vague"], c["known-wrong"], c["subtle-wrong"], c["known-right"]) == (
        cal.vague, cal.known_wrong, cal.subtle_wrong, cal.known_right)
    assert c["injection"].startswith(cal.known_wrong) and "pass" in c["injection"][len(cal.known_wrong):]
    tail = c["stuffed"][len(cal.known_wrong):]
    assert c["stuffed"].startswith(cal.known_wrong)
    for t in [s.judge.rubric, *s.judge.pass_criteria, *s.judge.fail_criteria]:
        assert t in tail
    assert [k for k, v in EXPECTED.items() if v == "pass"] == ["known-right"]


# ------------------------------------------------------------------------------------------ integrity rules
def test_integrity_rules_on_a_bad_skill():
    spec = S.load_evals(TD / "integrity/stacks/demo/skills/demo-skill/evals.json")
    assert spec.skill_id == "demo/demo-skill" and spec.skill_md is not None
    got = {(f.scenario, f.rule) for f in S.integrity_findings(spec) if f.severity == "fail"}
    expected = {
        ("pasted", "I4"), ("string-only", "I5"), ("pasted", "I5"), ("echo-matching", "I5"),  # SKILL.md "verbatim"
        ("pasted", "I6"),  # neither "any" nor "eval(" occurs in SKILL.md
        ("pasted", "I7"),  # "eval(" not in known_wrong
        ("pasted", "I7b"),  # bare "any"
        ("pasted", "I7c"),  # neither token in rubric / fail criteria
        ("pasted", "I8"),  # not-contains on a judge scenario
        ("pasted", "I10"),  # the standalone "Mentioning ... is not a failure." entry
        ("string-only", "I1"), ("string-only", "I2"), ("string-only", "I3"), ("string-only", "I9"),
        ("echo-matching", "I2"), ("echo-matching", "I3"), ("echo-matching", "I9"),
    }
    assert got == expected
    i6 = next(f for f in S.integrity_findings(spec) if f.rule == "I6")
    assert "'any', 'eval('" in i6.message
    i7 = next(f for f in S.integrity_findings(spec) if f.rule == "I7")
    assert "['eval(']" in i7.message  # "any" is in known_wrong ("Cast it to any")


def test_integrity_rules_hold_on_bundled_data(specs):
    fs = S.integrity_findings(specs)
    assert [f for f in fs if f.severity == "fail"] == []
    # no SKILL.md body is shipped: I4 and I5 for all 34 scenarios, I6 for the 17 with anti_patterns
    nc = [(f.rule) for f in fs if f.severity == "not-checkable"]
    assert nc.count("I4") == 34 and nc.count("I5") == 34 and nc.count("I6") == 17


def test_i10_accepts_a_folded_warning(valid):
    assert _integrity.rule_i10(valid, valid.scenarios[0]) == []


# ------------------------------------------------------------------------------------ corpus: schema errors
SCHEMA_CASES = [
    ("truncated", None, None, "not valid JSON"),
    ("wrong_type_prompt", "no-suppress", "prompt", "expected a string"),
    ("duplicate_ids", "no-suppress", "id", "duplicated"),
    ("two_judges", "no-suppress", "expected_behavior[2].grader", "at most one"),
    ("missing_calibration", "no-suppress", "calibration", "must carry calibration"),
    ("identical_calibration", "no-suppress", "calibration.vague", "pairwise different"),
    ("empty_anti_pattern", "no-suppress", "anti_patterns[1]", "empty"),
    ("bad_regex", "no-suppress", "expected_behavior[0].value", "does not compile"),
    ("unknown_grader", "no-suppress", "expected_behavior[0].grader", "fuzzy"),
    ("judge_with_value", "no-suppress", "expected_behavior[1].value", "carries no 'value'"),
    ("empty_pass_criteria", "no-suppress", "expected_behavior[1].pass_criteria", "at least 1"),
    ("scenarios_not_list", None, "scenarios", "expected a list"),
    ("triggers_wrong_type", None, "triggers.positive", "expected a list"),
]


@pytest.mark.parametrize("name,scenario,field,text", SCHEMA_CASES, ids=[c[0] for c in SCHEMA_CASES])
def test_schema_errors_name_file_scenario_field(name, scenario, field, text):
    path = TD / "malformed" / f"{name}.evals.json"
    with pytest.raises(S.EvalSpecError) as ei:
        S.load_evals(path)
    e = ei.value
    assert isinstance(e, DataError) and e.path == str(path)
    assert e.scenario == scenario and e.column == field
    assert text in str(e) and str(path) in str(e)
    if scenario:
        assert f"scenario '{scenario}'" in str(e)


# -------------------------------------------------------------------------------------- corpus: recordings
def _ag_one(rec_file, spec):
    rec = load_recording(TD / "recordings" / rec_file)
    return judge_check.check_recordings({"x": spec}, {"x": rec}).set_index("kind")


AG_CASES = [
    ("good.json", {}, None),
    ("stale_version.json", {k: "stale" for k in KINDS if k != "empty"}, "2026-09-24.1 is not the current"),
    ("non_unanimous.json", {"known-wrong": "non-unanimous"}, "samples disagree"),
    ("errored_sample.json", {"echo": "error"}, "carry an error"),
    ("wrong_known_right.json", {"known-right": "wrong"}, "expected pass"),
    ("missing_kinds.json", {"vague": "missing", "subtle-wrong": "missing"}, "no entry"),
    ("duplicate_digest.json", {"vague": "stale"}, "repeats"),
    ("evallab_digest_mismatch.json", {k: "stale" for k in KINDS if k != "empty"}, "no longer matches"),
]


@pytest.mark.parametrize("rec_file,bad,text", AG_CASES, ids=[c[0] for c in AG_CASES])
def test_ag_corpus(rec_file, bad, text, valid):
    m = _ag_one(rec_file, valid)
    status = m["status"].to_dict()
    assert {k: v for k, v in status.items() if v != "ok"} == bad
    for k in bad:
        assert text in m.loc[k, "message"] and "re-run `evallab judge-check" in m.loc[k, "message"]
    if rec_file == "evallab_digest_mismatch.json":
        assert set(m.loc[m.index != "empty", "digest_check"]) == {"mismatch"}


def test_missing_recording_fails_closed(valid):
    m = ag_matrix({"x": valid}, {})
    assert (m.loc[m["kind"] != "empty", "status"] == "missing").all()
    assert "no recording x.json" in m["message"].iloc[1]


@pytest.mark.parametrize("rec_file,text", [("truncated.json", "not valid JSON"),
                                           ("bad_digest_format.json", "not a sha256"),
                                           ("samples_wrong_type.json", "expected list")])
def test_bad_recording_files_raise_named_errors(rec_file, text):
    with pytest.raises(RecordingError) as ei:
        load_recording(TD / "recordings" / rec_file)
    assert text in str(ei.value) and rec_file in str(ei.value)


def test_truncated_eval_report():
    with pytest.raises(S.EvalReportError, match="not valid JSON"):
        S.load_eval_report(TD / "eval_reports" / "truncated.eval.json")


# ------------------------------------------------------------------------------------------------------ CLI
_cli = run_cli


def test_cli_validate_bundled_and_corpus(capsys):
    code, out = _cli(["validate", KERYX], capsys)
    assert code == 1
    assert "stale: judgePromptVersion 2026-09-24.1" in out and "go-code-review" in out
    assert "pack gate go/go-testing" in out and "Traceback" not in out
    code, out = _cli(["validate", *sorted((TD / "malformed").glob("*.json"))], capsys)
    # the truncated file cannot be read at all (not JSON): bad input, exit 2; the others are schema findings
    assert code == 2 and out.count("ERROR ") == len(SCHEMA_CASES) and "Traceback" not in out
    code, out = _cli(["validate", *[p for p in sorted((TD / "malformed").glob("*.json")) if not p.name.startswith("truncated")]],
                     capsys)
    assert code == 1 and out.count("ERROR ") == len(SCHEMA_CASES) - 1
    code, out = _cli(["validate", TD / "valid" / "evals.json"], capsys)
    assert code == 0 and "0 finding(s)" in out


# ------------------------------------------------------------------------------------------ live judge-check
def test_live_judge_check_records_then_replays(tmp_path, valid, capsys):
    testing = pytest.importorskip("evallab.testing")
    from evallab.judges import OpenAICompatibleJudge
    from evallab.judges._replay import ReplayJudge

    right = valid.scenarios[0].calibration.known_right
    sim = testing.SimulatedJudge(seed=3, accuracy=1.0, truth=lambda a: "pass" if a == right else "fail")
    with testing.LocalJudgeServer(sim=sim) as srv:
        judge = OpenAICompatibleJudge(srv.base_url, "sim-judge", cache=None)
        live, rec = judge_check.judge_check(valid, judge, samples=3, record=tmp_path)
    path = tmp_path / f"{valid.recording_name}.json"
    assert path.exists() and rec is not None
    assert (live["status"] == "ok").all() and (live.loc[live["kind"] != "empty", "samples"] == 3).all()
    assert set(live.loc[live["kind"] != "empty", "digest_check"]) == {"match"}
    assert ag_summary(live)["ag"].tolist() == ["pass"]  # every digest recomputed and matching
    raw = json.loads(path.read_text())
    assert len(raw["entries"]) == 7 and all(len(e["samples"]) == 3 for e in raw["entries"])
    assert {e["kind"]: e["samples"][0]["verdict"] for e in raw["entries"]} == {
        "echo": "fail", "vague": "fail", "known-wrong": "fail", "subtle-wrong": "fail", "injection": "fail",
        "stuffed": "fail", "known-right": "pass"}
    replay, _ = judge_check.judge_check(valid, ReplayJudge(path), samples=3)
    assert replay[["kind", "observed", "status"]].equals(live[["kind", "observed", "status"]])
    # editing the scenario after recording makes the recording stale
    changed = copy.deepcopy(valid)
    changed.scenarios[0].calibration = Calibration(right + " Also run tsc.", *[
        getattr(valid.scenarios[0].calibration, k) for k in ("known_wrong", "vague", "subtle_wrong")])
    m = judge_check.check_recordings({valid.recording_name: changed}, {valid.recording_name: load_recording(path)})
    assert m.set_index("kind").loc["known-right", "digest_check"] == "mismatch"
    assert m.set_index("kind").loc["known-right", "status"] == "stale"
    # the CLI replays the same recording offline and exits 0
    evals = tmp_path / "stacks" / "demo" / "skills" / "demo-skill"
    evals.mkdir(parents=True)
    shutil.copy(TD / "valid" / "evals.json", evals / "evals.json")
    shutil.copy(path, tmp_path / "demo__demo-skill.json")
    code, out = _cli(["judge-check", evals / "evals.json", "--replay", tmp_path / "demo__demo-skill.json"], capsys)
    assert code == 0, out
    assert "0 failing check(s) of 8" in out


def test_judge_check_cli_bad_input_is_one_line(capsys):
    code, out = _cli(["judge-check", TD / "malformed" / "two_judges.evals.json", "--judge", ""], capsys)
    assert code == 2 and out.startswith("error: ") and "Traceback" not in out


def test_sha256_rule_used_for_outputs(reports):
    t = reports[3]["scenarios"][-1]["trialRecords"][0]
    assert hashlib.sha256(t["output"].encode()).hexdigest() == t["outputSha256"]


def test_regex_plus_judge_scenario_needs_its_judge_verdicts(reports):
    # go-implementation's context-propagation is graded "regex+judge": drop every trial's judge verdict and put an
    # off-policy judge on the report; the regrade must fail each trial and the judge checks must appear
    rep = copy.deepcopy(next(r for r in reports if r["skillId"] == "go/go-implementation"))
    scen = next(s for s in rep["scenarios"] if s.get("grader") == "regex+judge")
    for t in scen["trialRecords"]:
        t.pop("judge", None)
    rep["judgeModel"], rep["judgePromptVersion"] = "gpt-3.5", "1999"
    gate = S.pack_gate([rep]).set_index(["scenario", "check"])
    assert gate.loc[(scen["id"], "pass rate (re-derived)"), "observed"] == "0.0"
    assert not gate.loc[("", "judge policy"), "ok"] and not gate.loc[("", "judgePromptVersion"), "ok"]
