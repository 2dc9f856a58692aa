"""evallab.reporting.sections.gaming (report 06) and the estimators behind it: every sentence states numbers
computed here independently — hand counts from the raw JSON with the json module, statsmodels' Wilson interval and
Fleiss' kappa, scipy's bootstrap — on the bundled keryx data and on small hand-made recordings and eval reports
shaped unlike it (one request, two presentation orders, no trial records, no failing check)."""

from __future__ import annotations

import glob
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from section_helper import section_text as _text
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss
from statsmodels.stats.proportion import proportion_confint

from evallab import skills
from evallab._results import WILSON, Results
from evallab.experiments import _judge_check as judge_check
from evallab.judges import to_verdicts
from evallab.judges._recordings import KINDS, load_recording
from evallab.metrics import _agreement as agreement
from evallab.paths import REPO_ROOT, data_dir
from evallab.reporting.sections import gaming as G
from evallab.skills._anti_gaming import ag_matrix, ag_overall, ag_summary
from evallab.skills._integrity import findings_summary
from evallab.skills._manifests import history
from evallab.skills._pack_gate import gate_verdicts, pass_rates
from evallab.skills._trials import trial_disagreements, trial_outputs

KERYX = data_dir("keryx")
TD = REPO_ROOT / "tests" / "data" / "scenarios"
EVAL = KERYX / "stacks/go/governance/eval.json"
B = 200  # bootstrap resamples in these tests
NAN = re.compile(r"\bnan\b", re.I)  # a missing number printed as such ("non-unanimous" is a word)


def _wilson(k: int, n: int) -> tuple[float, float]:
    return proportion_confint(k, n, alpha=0.05, method="wilson")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


@pytest.fixture(scope="module")
def raw():
    return {Path(p).stem: json.loads(Path(p).read_text()) for p in glob.glob(str(KERYX / "judge-recordings/*.json"))}


@pytest.fixture(scope="module")
def raw_eval():
    return json.loads(EVAL.read_text())


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def _recording(tmp_path, entries, name="one.json"):
    """A keryx recording file with the given entries ``(scenario, kind, [verdicts])``."""
    doc = {"judgePromptVersion": "2026-09-25.1", "judge": "deepseek", "judgeModel": "deepseek-chat",
           "recordedAt": "2026-09-25T00:00:00.000Z",
           "entries": [{"scenarioId": s, "kind": k, "requestDigest": f"{i:064x}",
                        "samples": [{"verdict": v, "reason": f"r{j}"} for j, v in enumerate(vs)]}
                       for i, (s, k, vs) in enumerate(entries)]}
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return load_recording(p)


# ------------------------------------------------------------------------------------------- the estimators
def test_ag_tables_carry_count_and_share_measures(ag, raw):
    assert isinstance(ag, Results) and ag.measures["samples"].unit == "count"
    u = ag.measures["unanimity"]
    assert (u.unit, u.n, u.n_unit, u.has_interval) == ("proportion", "samples", "samples", False)
    summ = ag_summary(ag)
    assert isinstance(summ, Results) and {m.unit for m in summ.measures.values()} == {"count"}
    ov = ag_overall(ag)
    # hand count: 34 judge scenarios × 8 canned answers; go-code-review's old recording fails its 2 × 7 judged cells
    old = [k for k, d in raw.items() if d["judgePromptVersion"] != "2026-09-25.1"]
    assert old == ["go__go-code-review"]
    e = ov.estimate("ok_share")
    assert (e.value, e.n, e.n_unit, e.low) == ((272 - 14) / 272, 272, "checks", None)
    r = ov.iloc[0]
    assert (r["checks"], r["ok"], r["failing"], r["recordings"], r["recordings_failing"],
            r["recordings_unverified"]) == (272, 258, 14, len(raw), 1, len(raw) - 1)
    assert r["not_recomputable"] == sum(len(d["entries"]) for d in raw.values())


def test_an_empty_ag_matrix_says_not_computable():
    ov = ag_overall(ag_matrix({}, {}))
    assert str(ov.estimate("ok_share")).startswith("not computable: no judge scenario")


def test_pass_rates_are_wilson_intervals_of_the_trial_records(reports, raw_eval):
    rates = pass_rates(reports)
    assert rates.measures["pass_rate"].n_unit == "trials" and rates.level == 0.95
    got = rates.set_index(["skill", "scenario"])
    n_rows = 0
    for r in raw_eval["reports"]:
        for s in r["scenarios"]:
            if s.get("kind") != "behavior" or not s.get("trialRecords"):
                continue
            n_rows += 1
            t = s["trialRecords"]
            k = sum(all(d is True for d in x.get("deterministic") or []) and x["judge"]["verdict"] == "pass"
                    for x in t)
            row = got.loc[(r["skillId"], s["id"])]
            assert (row["trials"], row["passes"], row["pass_rate"]) == (len(t), k, k / len(t))
            assert (row["pass_rate_low"], row["pass_rate_high"]) == pytest.approx(_wilson(k, len(t)))
            assert row["pass_rate_method"] == WILSON
    assert n_rows == len(rates) == 8


def test_a_scenario_without_trial_records_has_no_pass_rate_and_says_why():
    rep = [{"skillId": "p/s", "scenarios": [{"id": "x", "kind": "behavior"}]}]
    r = pass_rates(rep)
    e = r.estimate("pass_rate")
    assert e.value is None and str(e) == "not computable: no trial records" and r.at[0, "pass_rate_method"] == ""


def test_gate_trials_integrity_and_manifest_tables_carry_counts(reports, specs):
    v = gate_verdicts(skills.pack_gate(reports))
    assert isinstance(v, Results) and v.measures["failed_checks"].unit == "count"
    d = trial_disagreements(reports, specs)
    assert isinstance(d, Results) and d.measures["answers"].n_unit == "trials"
    found = skills.integrity_findings(specs)
    summ = findings_summary(found)
    got = {(r.rule, r.severity): r.findings for r in summ.itertuples()}
    assert got == dict(Counter((f.rule, f.severity) for f in found))
    assert summ.measures["findings"].unit == "count"
    _, last = history(skills.load_manifest(REPO_ROOT / "notebooks/06_gaming_gate.manifest.yaml"),
                             trial_outputs(reports))
    assert isinstance(last.skills, Results) and last.skills.measures["failed"].n == "assertions"


def _two_orders():
    """Two presentation orders per item, 4 samples per request, some splits: items hold several requests."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(12):
        for order in ("ab", "ba"):
            for s in range(4):
                v = "pass" if rng.random() < (0.9 if i % 3 else 0.5) else "fail"
                rows.append(dict(item_id=f"q{i}", dataset="mine", subset="mine", judge="j", model="m",
                                 strategy="s", anchor_set="none", order=order, sample=s, verdict=v,
                                 scenario_id=f"q{i}", kind="echo" if i % 2 else "vague"))
    return pd.DataFrame(rows)


def _ratio_bootstrap(num, den):
    ci = sps.bootstrap((np.asarray(num, float), np.asarray(den, float)),
                       lambda a, b, axis=-1: a.sum(axis) / b.sum(axis), paired=True, vectorized=True,
                       n_resamples=B, method="percentile", random_state=np.random.default_rng(0)).confidence_interval
    return ci.low, ci.high


def test_repetition_stability_names_the_method_that_computed_each_interval(recs):
    # bundled: every request is its own item with a 0/1 unanimity -> Wilson of 224 of 224
    bundled = agreement.repetition_stability(to_verdicts(recs), [], n_resamples=B)
    assert bundled.at[0, "unanimity_method"] == WILSON
    assert (bundled.at[0, "unanimity_low"], bundled.at[0, "unanimity_high"]) == pytest.approx(_wilson(224, 224))
    # no pair differs in any item: the bootstrap would collapse, the Wilson fallback says so
    assert bundled.at[0, "flip_rate_method"] == "Wilson score on 224 items (every item has the same share)"
    # two orders: an item holds two requests, so the intervals resample items — scipy's bootstrap, by hand
    t = _two_orders()
    two = agreement.repetition_stability(t, [], n_resamples=B)
    assert two.at[0, "unanimity_method"] == f"item bootstrap (percentile, {B} resamples)"
    per = t.groupby(["item_id", "order"])["verdict"].agg(lambda v: v.nunique() == 1).groupby("item_id")
    lo, hi = _ratio_bootstrap(per.sum().sort_index(), per.size().sort_index())
    assert (two.at[0, "unanimity_low"], two.at[0, "unanimity_high"]) == pytest.approx((lo, hi))


def test_fleiss_kappa_from_one_request_is_not_computable(tmp_path):
    # the defect (issue 26, item 20): one request of 3 samples split 2–1 gave kappa −0.5
    one = to_verdicts({"x": _recording(tmp_path, [("s", "echo", ["fail", "pass", "fail"])])})
    assert sm_fleiss(aggregate_raters(np.array([[0, 1, 0]]))[0]) == pytest.approx(-0.5)
    fk = G.fleiss_kappa_samples(one, n_resamples=B)
    e = fk.estimate("kappa")
    assert e.value is None and str(e).startswith("not computable: 1 request with every sample parsed")
    assert "-0.5" not in str(e) and "−0.5" not in str(e)
    sec = G.repetition(one, n_resamples=B, kappa_resamples=B)
    said = [x for x in sec.items if isinstance(x, str) and x.startswith("Fleiss' kappa")]
    assert said == [f"Fleiss' kappa with the samples as raters is {e}."]
    assert sec.metrics["fleiss_kappa_samples"] is None
    # beside requests asked once (no second rater), the one request sampled three times is still a single unit
    mixed = to_verdicts({"x": _recording(tmp_path, [("s", "echo", ["fail", "pass", "fail"]), ("s", "vague", ["fail"]),
                                                    ("t", "echo", ["pass"])], name="mixed.json")})
    fk = G.fleiss_kappa_samples(mixed, n_resamples=B)
    assert (fk.at[0, "units"], fk.at[0, "raters"], fk.at[0, "units_dropped"]) == (1, 3, 2)
    assert str(fk.estimate("kappa")).startswith("not computable: 1 request with every sample parsed")


def test_fleiss_kappa_on_several_requests_is_statsmodels_with_its_bootstrap_named(tmp_path):
    entries = [("s", "echo", ["fail", "pass", "fail"]), ("s", "vague", ["fail", "fail", "fail"]),
               ("t", "echo", ["pass", "pass", "pass"]), ("t", "vague", ["pass", "fail", "pass"]),
               ("u", "echo", ["fail", "fail", "fail"])]
    v = to_verdicts({"x": _recording(tmp_path, entries)})
    fk = G.fleiss_kappa_samples(v, n_resamples=B)
    codes = np.array([[{"fail": 0, "pass": 1}[x] for x in vs] for _, _, vs in entries])
    assert fk.at[0, "kappa"] == pytest.approx(sm_fleiss(aggregate_raters(codes)[0]))
    assert fk.at[0, "kappa_method"] == f"item bootstrap (percentile, {B} resamples)"
    assert np.isfinite(fk.at[0, "kappa_low"]) and fk.measures["kappa"].n_unit == "requests"


# ---------------------------------------------------------------------------------------- the bundled data
def test_overview_counts_the_raw_files(specs, recs, reports, raw, raw_eval):
    sec = G.overview(specs, recs, reports)
    n_entries = sum(len(d["entries"]) for d in raw.values())
    n_samples = sum(len(e.get("samples", [e])) for d in raw.values() for e in d["entries"])
    assert sec.items == [f"17 skills with 34 scenarios; {len(raw)} judge recordings with {n_entries} entries and "
                         f"{n_samples} samples; {len(raw_eval['reports'])} skill reports in the eval report."]
    assert sec.metrics == {"skills": 17, "scenarios": 34, "recordings": 17, "entries": 234, "samples": 682}


def test_anti_gaming_section_on_the_bundled_recordings(ag, raw, tmp_path):
    sec = G.anti_gaming(ag)
    head, fails = sec.findings
    assert head.sentence == ("258 of 272 anti-gaming checks match their expected verdict: 94.9% (n = 272 checks); "
                             "of 17 recordings, 16 pass only with request digests that cannot be recomputed and 1 "
                             "fails.")
    assert (head.value, head.n, head.n_unit) == (258 / 272, 272, "checks")
    # go-code-review's old recording holds 5 of the 7 judged kinds per scenario: 2 × 5 stale, 2 × 2 missing
    gcr = raw["go__go-code-review"]
    kinds = Counter(e["scenarioId"] for e in gcr["entries"])
    assert set(kinds.values()) == {5}
    assert fails.sentence == "14 of 272 anti-gaming checks fail — 10 stale, 4 missing — in go/go-code-review."
    m = sec.metrics
    assert m["ag_checks"] == 272 and m["ag_failing_checks"] == 14 and m["stale_recordings"] == ["go__go-code-review"]
    assert m["ag_verdicts"] == {"pass (digests not recomputable)": 16, "fail": 1}
    assert m["digests_not_recomputable"] == sum(len(d["entries"]) for d in raw.values())
    assert any(hasattr(x, "savefig") for x in sec.items)  # the status grid
    text = _text(sec, tmp_path)
    assert "FAIL 100% †" in text and "MISS [missing]" in text and "FAIL (not judged)" in text
    assert not NAN.search(text)
    assert sec.caveats[0].startswith("234 recorded request digests cannot be recomputed")


def test_anti_gaming_section_without_a_failing_check_says_so(tmp_path):
    valid = skills.load_evals(TD / "valid" / "evals.json")
    m = judge_check.check_recordings({"x": valid}, {"x": load_recording(TD / "recordings" / "good.json")})
    sec = G.anti_gaming(m)
    n = len(valid.scenarios) * len(KINDS)
    assert len(sec.findings) == 1 and sec.findings[0].sentence.startswith(f"{n} of {n} anti-gaming checks match")
    assert f"No anti-gaming check fails: every one of the {n} cells grades to its expected verdict." in sec.items
    assert not any(t.caption == "Failing anti-gaming checks" for t in sec.tables)


def test_anti_gaming_section_without_judge_scenarios_is_one_sentence():
    sec = G.anti_gaming(ag_matrix({}, {}))
    assert sec.items == ["The AG check is not computable: no judge scenario, so no anti-gaming check."]


def test_integrity_section_counts_findings(specs, tmp_path):
    found = skills.integrity_findings(specs)
    c = Counter((f.rule, f.severity) for f in found)
    sec = G.integrity(found, specs)
    nc = {r: n for (r, s), n in sorted(c.items()) if s == "not-checkable"}
    n_fail = sum(n for (r, s), n in c.items() if s == "fail")
    assert sec.findings[0].sentence == (
        f"Integrity rules I1–I10 give {n_fail} failing findings and {sum(nc.values())} not checkable over 17 skills "
        f"(34 scenarios); not checkable: " + ", ".join(f"{r} ({n})" for r, n in nc.items()) + ".")
    assert sec.metrics == {"integrity_fail_findings": n_fail, "integrity_not_checkable": 34 + 34 + 17}
    assert "No integrity rule fails." in sec.items


def test_repetition_section_on_the_bundled_recordings(recs, raw, tmp_path):
    sec = G.repetition(to_verdicts(recs), n_resamples=B, kappa_resamples=B)
    multi = [e for d in raw.values() for e in d["entries"] if len(e.get("samples", [])) >= 2]
    k = sum(len({s["verdict"] for s in e["samples"]}) == 1 for e in multi)
    lo, hi = _wilson(k, len(multi))
    u, flip, kappa = sec.findings
    assert u.sentence.startswith(f"The recorded judge gives the same verdict in every sample on {_pct(k / len(multi))}% "
                                 f"[{_pct(lo)}, {_pct(hi)}] (95% CI, Wilson score, n = {len(multi)} requests)")
    assert f"({k} of {len(multi)})" in u.sentence
    # no sample pair differs: 0 of 224 items, the Wilson bound on items
    f_hi = _wilson(0, len(multi))[1]
    assert flip.sentence == (f"Two samples of the same request differ in 0.0% [0.0, {_pct(f_hi)}] (95% CI, Wilson "
                             f"score on {len(multi)} items (every item has the same share), n = {len(multi)} "
                             "requests) of sample pairs.")
    assert kappa.sentence.startswith("Fleiss' kappa with the 3 samples of each request as raters is 1.00 (n = 224 "
                                     "requests) — no interval: every one of the 224 units is unanimous")
    single = [e for d in raw.values() for e in d["entries"] if len(e.get("samples", [e])) < 2]
    assert kappa.sentence.endswith(f"; {len(single)} requests with fewer samples parsed left out.")
    assert sec.metrics["units"] == 224 and sec.metrics["unanimous_units"] == k and sec.metrics["flip_rate"] == 0
    assert set(sec.metrics["unanimity_by_kind"]) == set(KINDS) - {"empty"}
    assert "Every one of the 32 scenarios with repeated samples is unanimous on every request, so no scenario is " \
           "less unanimous than another." in sec.items
    text = _text(sec, tmp_path)
    assert not NAN.search(text)
    # per kind: 32 requests, each its own item; no pair differs, so the flip rate's Wilson fallback on items
    assert ("Intervals (95%): Repetition stability: Wilson score; Unanimity: Wilson score; Pairwise flip rate: "
            "Wilson score on 32 items (every item has the same share).") in text


def test_repetition_section_with_splits_shows_the_least_unanimous_scenarios(tmp_path):
    t = _two_orders()
    sec = G.repetition(t, n_resamples=B, kappa_resamples=B)
    (least,) = [x for x in sec.tables if "least unanimous" in x.caption]
    # by hand: per scenario, the share of (item, order) requests whose 4 samples agree
    per = t.groupby(["scenario_id", "order"])["verdict"].agg(lambda v: v.nunique() == 1).groupby("scenario_id")
    want = per.mean().sort_values(kind="stable")
    assert least.table["unanimity"].tolist()[:3] == pytest.approx(want.to_numpy()[:3])
    assert not NAN.search(_text(sec, tmp_path))


def test_repetition_section_without_repeated_samples_is_one_sentence():
    t = _two_orders()
    sec = G.repetition(t[t["sample"] == 0], n_resamples=B)
    assert sec.items == ["Repetition stability is not computable: no request with two or more parsed samples, so "
                         "this section is skipped."]


def test_gate_section_on_the_go_eval_report(reports, ag, specs, raw_eval, tmp_path):
    integrity = skills.integrity_findings(specs)
    sec = G.stable_pack_gate(reports, ag=ag, integrity=integrity)
    head, rates = sec.findings
    assert head.sentence.startswith("The stable-pack gate passes 0 of 4 skills")
    behaviour = {(r["skillId"], s["id"]): s["trialRecords"] for r in raw_eval["reports"] for s in r["scenarios"]
                 if s.get("trialRecords")}
    share = {k: sum(x["judge"]["verdict"] == "pass" for x in t) / len(t) for k, t in behaviour.items()}
    below = {k: v for k, v in share.items() if v < 0.8}
    (sk, sc), low = min(share.items(), key=lambda kv: kv[1])
    n = len(behaviour[(sk, sc)])
    lo, hi = _wilson(round(low * n), n)
    wholly = sum(_wilson(round(v * n), n)[1] < 0.8 for v in below.values())
    assert rates.sentence == (f"{len(below)} of {len(behaviour)} behaviour scenarios with trial records are below the "
                              f"pass floor of 80% ({wholly} with the whole interval below it); the lowest is "
                              f"{sk}/{sc} at {_pct(low)}% [{_pct(lo)}, {_pct(hi)}] (95% CI, Wilson score, n = {n} "
                              "trials).")
    assert sec.metrics["gate_pass_rates"] == {f"{a}/{b}": v for (a, b), v in share.items()}
    assert sec.metrics["gate_ag_not_checkable"] == ["go/go-build-fix", "go/go-implementation", "go/go-testing"]
    text = _text(sec, tmp_path)
    assert "Intervals: 95%, Wilson score." in text and "not checkable" in text and not NAN.search(text)


def test_gate_section_without_trial_records(tmp_path):
    rep = [{"skillId": "p/s", "strictness": "high", "trials": 10, "scope": "bundled", "runner": "deepseek",
            "model": "deepseek-chat", "scenarios": [{"id": "x", "kind": "behavior"}]}]
    sec = G.stable_pack_gate(rep)
    assert "No behaviour scenario has trial records, so no pass rate can be re-derived." in sec.items
    assert sec.metrics["gate_pass_rates"] == {} and not sec.caveats
    assert not NAN.search(_text(sec, tmp_path))
    t = G.trial_verdicts(rep)
    assert t.items == ["The eval report holds no behaviour trial records, so no trial verdicts can be compared."]
    m = G.assertion_manifests({"s/x": {"min_words": 1}}, rep)
    assert m.items == ["No behaviour scenario has trial outputs to replay, so no assertion was evaluated."]


def test_trial_section_on_the_go_eval_report(reports, specs, raw_eval, tmp_path):
    sec = G.trial_verdicts(reports, specs)
    trials = [(r["skillId"], s["id"], t) for r in raw_eval["reports"] for s in r["scenarios"]
              for t in s.get("trialRecords") or []]
    split = {(a, b) for a, b, _ in trials
             if len({t["judge"]["verdict"] for x, y, t in trials if (x, y) == (a, b)}) > 1}
    markup = [(a, b) for a, b, t in trials if "DSML" in t["output"]]
    scen = {(a, b) for a, b, _ in trials}
    assert sec.findings[0].sentence == (
        f"{len(split)} of {len(scen)} scenarios with trial records got different verdicts across trials; 1 of them by "
        f"judge disagreement on comparable answers (go/go-testing/no-sleep-sync). {len(markup)} of {len(trials)} "
        f"trials are runner failures with no answer to grade (go/go-testing/table-driven-subtests).")
    assert sec.caveats == [f"The gate's pass rates count runner failures as failed trials, as keryx's gate does "
                           f"({len(markup)} such trials)."]
    assert not NAN.search(_text(sec, tmp_path))


def test_trial_section_when_every_scenario_agrees(tmp_path):
    t = [{"output": "use wg.Wait()", "judge": {"verdict": "pass", "reason": "ok"}, "passed": True,
          "deterministic": []}] * 3
    rep = [{"skillId": "p/s", "scenarios": [{"id": "x", "kind": "behavior", "trialRecords": t}]}]
    sec = G.trial_verdicts(rep)
    assert sec.findings[0].sentence == ("0 of 1 scenario with trial records got different verdicts across trials; 0 "
                                        "of them by judge disagreement on comparable answers (none). 0 of 3 trials "
                                        "are runner failures with no answer to grade.")
    assert "Every scenario's trials got the same verdict." in sec.items and not sec.tables and not sec.caveats


def test_manifest_section_on_the_replayed_trials(reports, raw_eval, tmp_path):
    path = REPO_ROOT / "notebooks/06_gaming_gate.manifest.yaml"
    manifest = skills.load_manifest(path)
    sec = G.assertion_manifests(manifest, reports)
    # by hand: an assertion per scalar key, one per pattern / section listed
    n = {k: sum(len(v) if isinstance(v, list) else 1 for v in a.values()) for k, a in manifest.items()}
    # the last trial of table-driven-subtests is tool-call markup: its 5 assertions fail; the others pass
    tds = next(s for r in raw_eval["reports"] for s in r["scenarios"] if s["id"] == "table-driven-subtests")
    assert "DSML" in tds["trialRecords"][-1]["output"]
    n_runs = max(len(s.get("trialRecords") or []) for r in raw_eval["reports"] for s in r["scenarios"])
    fail = n["go-testing/table-driven-subtests"]
    with_runs = {f"{r['skillId'].split('/')[-1]}/{s['id']}" for r in raw_eval["reports"] for s in r["scenarios"]
                 if s.get("trialRecords")}
    gaps = len(with_runs - set(manifest))
    assert sec.findings[0].sentence == (
        f"At the last of {n_runs} replayed runs, {sum(n.values())} assertions were evaluated: "
        f"{sum(n.values()) - fail} PASS, {fail} FAIL (failing: go-testing/table-driven-subtests); {gaps} scenarios "
        "with outputs have no manifest entry.")
    assert sec.metrics["manifest_states_last_run"] == {"PASS": sum(n.values()) - fail, "FAIL": fail}
    assert len(sec.metrics["manifest_coverage_gaps"]) == gaps == 4
    text = _text(sec, tmp_path)
    assert "Run 5" in text and not NAN.search(text)
