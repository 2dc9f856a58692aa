"""Notebook 06 under papermill on the bundled keryx data (default, offline) and with the trial floor lowered to 5;
metrics checked against counts taken from the raw JSON files with the json module."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

from evallab.paths import REPO_ROOT, data_dir
from evallab.reporting._batch import ReportSpec, run_report_batch

NB = REPO_ROOT / "notebooks" / "06_gaming_gate.ipynb"
KERYX = data_dir("keryx")


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    out = tmp_path_factory.mktemp("nb06")
    specs = [ReportSpec("06_gaming_gate", NB, {}), ReportSpec("06_floor5", NB, {"min_trials": 5})]
    res = {r.name: r for r in run_report_batch(specs, out, jobs=2, progress=False)}
    return res, out


def _metrics(out, name):
    return json.loads((out / f"{name}.metrics.json").read_text())["metrics"]


def test_default_run_matches_raw_counts(batch):
    res, out = batch
    assert res["06_gaming_gate"].status == "ok", res["06_gaming_gate"].error
    m = _metrics(out, "06_gaming_gate")
    raw = {Path(p).stem: json.loads(Path(p).read_text()) for p in glob.glob(str(KERYX / "judge-recordings/*.json"))}
    assert m["recordings"] == len(raw) == 17
    assert m["entries"] == sum(len(d["entries"]) for d in raw.values()) == 234
    assert m["samples"] == sum(len(e.get("samples", [e])) for d in raw.values() for e in d["entries"]) == 682
    old = sorted(k for k, d in raw.items() if d["judgePromptVersion"] != "2026-09-25.1")
    assert m["stale_recordings"] == old == ["go__go-code-review"]
    assert m["ag_failing_skills"] == ["go/go-code-review"]
    # go-code-review: 2 scenarios × 7 judged kinds = 14 failing checks (10 stale + 4 missing)
    assert m["ag_failing_checks"] == 14 and m["ag_status_counts"] == {"ok": 17 * 2 * 8 - 14, "stale": 10,
                                                                      "missing": 4}
    # 16 recordings pass with digests that cannot be recomputed (keryx-made), 1 fails; none is a plain "pass"
    assert m["ag_verdicts"] == {"pass (digests not recomputable)": len(raw) - 1, "fail": 1}
    assert m["digests_not_recomputable"] == m["entries"]
    assert m["gate_ag_not_checkable"] == ["go/go-build-fix", "go/go-implementation", "go/go-testing"]
    # every multi-sample entry of the bundled recordings is unanimous (counted from the raw JSON)
    multi = [e for d in raw.values() for e in d["entries"] if len(e.get("samples", [])) >= 2]
    assert m["units"] == len(multi) == 224
    assert m["unanimous_units"] == sum(len({s["verdict"] for s in e["samples"]}) == 1 for e in multi)
    assert m["flip_rate"] == 0.0
    assert m["gate"] == {s: "fail" for s in ("go/go-build-fix", "go/go-code-review", "go/go-implementation",
                                             "go/go-testing")}
    assert m["gate_trial_floor_failed"] == sorted(m["gate"])
    rep = json.loads((KERYX / "stacks/go/governance/eval.json").read_text())
    for r in rep["reports"]:
        for s in r["scenarios"]:
            if s.get("trialRecords"):
                passes = sum(t["judge"]["verdict"] == "pass" for t in s["trialRecords"])
                assert m["gate_pass_rates"][f"{r['skillId']}/{s['id']}"] == passes / len(s["trialRecords"])
    assert m["gate_pass_rates"]["go/go-testing/table-driven-subtests"] == 0.4
    assert m["gate_pass_rates"]["go/go-testing/no-sleep-sync"] == 0.6
    # table-driven-subtests' failing trials 1, 4, 5 are tool-call markup (no answer): runner failures, not the
    # judge's; only no-sleep-sync is a judge disagreement
    markup = [i for i, t in enumerate(next(s for r in rep["reports"] for s in r["scenarios"]
                                           if s["id"] == "table-driven-subtests")["trialRecords"], 1)
              if "DSML" in t["output"]]
    assert m["trial_runner_failures"] == {"go/go-testing/table-driven-subtests": markup} and markup == [1, 4, 5]
    assert m["trial_disagreement_causes"] == {"go/go-testing/table-driven-subtests": "runner failure",
                                              "go/go-testing/no-sleep-sync": "judge disagreement"}
    assert m["judge_inconsistent_scenarios"] == ["go/go-testing/no-sleep-sync"]
    assert m["integrity_fail_findings"] == 0 and m["integrity_not_checkable"] == 34 + 34 + 17
    assert len(m["manifest_coverage_gaps"]) == 4
    assert (out / "06_gaming_gate.html").exists()


def test_lower_trial_floor_leaves_go_testing_and_the_stale_recording(batch):
    res, out = batch
    assert res["06_floor5"].status == "ok", res["06_floor5"].error
    m = _metrics(out, "06_floor5")
    assert m["gate_trial_floor_failed"] == []
    # go-testing fails its pass floor; go-code-review fails "on top of" the gate: its AG recording is stale
    assert m["gate"] == {"go/go-build-fix": "pass", "go/go-code-review": "fail", "go/go-implementation": "pass",
                         "go/go-testing": "fail"}
    assert m["gate_ag_failed"] == ["go/go-code-review"]
