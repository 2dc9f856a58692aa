"""keryx's stable-pack gate (``checkSkillReportForPackGate``) on a recorded eval report, with every count
re-derived from the trial records.

Source: spec 000, "How the stable-pack gate uses this".

- :func:`load_eval_report` — read ``governance/eval.json`` (:class:`EvalReportError` names the file and field).
- :func:`rederive` / :func:`pack_gate` / :func:`gate_verdicts` — the checks, and one verdict per skill.
- :func:`pass_rates` — each behaviour scenario's re-derived pass rate with its interval.

:func:`pack_gate` is a plain table of checks (required and observed values as text); :func:`gate_verdicts` and
:func:`pass_rates` are :class:`~evallab.Results` whose counts and pass rates carry their
:class:`~evallab.Measure`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from evallab._results import Measure, Results, results
from evallab.errors import EvalReportError
from evallab.metrics._intervals import ratio_interval_method
from evallab.skills._anti_gaming import KERYX_JUDGE_PROMPT_VERSION
from evallab.skills._integrity import IntegrityFinding
from evallab.skills._scenario_schema import _read_json

#: gate constants (spec 000, "How the stable-pack gate uses this")
PACK_MIN_TRIALS = 10
PACK_BEHAVIOR_PASS_FLOOR = 0.8
#: STACK_PACK_GATE_POLICY: (provider, model) pairs allowed as runner and as judge
GATE_POLICY = (("deepseek", "deepseek-chat"),)


def load_eval_report(path: str | Path) -> list[dict]:
    """The skill reports of an eval report file ``{schemaVersion, reports: [...]}`` (or a single report).

    Raises
    ------
    EvalReportError
        Naming the file and field: a missing path or one that is not a regular file (refused before opening), bad
        UTF-8 or JSON (line named; a byte-order mark is accepted), a repeated key, or a wrong shape.
    """
    path = Path(path)
    doc = _read_json(path, EvalReportError, "an eval report {schemaVersion, reports: [...]}")
    reports = doc.get("reports") if isinstance(doc, dict) and "reports" in doc else [doc]
    if not isinstance(reports, list):
        raise EvalReportError("expected a list of reports", path=str(path), column="reports")
    for i, r in enumerate(reports, start=1):
        if not isinstance(r, dict):
            raise EvalReportError(f"report {i} is {type(r).__name__}; expected an object", path=str(path), row=i)
        if not isinstance(r.get("skillId"), str):
            raise EvalReportError(f"report {i}: missing string 'skillId'", path=str(path), row=i, column="skillId")
        if not isinstance(r.get("scenarios"), list):
            raise EvalReportError(f"report {i}: 'scenarios' is not a list", path=str(path), row=i,
                                  column="scenarios")
        for j, s in enumerate(r["scenarios"]):
            if not isinstance(s, dict):
                raise EvalReportError(f"report {i}: scenarios[{j}] is {type(s).__name__}; expected an object",
                                      path=str(path), row=i, column="scenarios")
            tr = s.get("trialRecords", [])
            if not isinstance(tr, list) or not all(isinstance(t, dict) for t in tr):
                bad = tr if not isinstance(tr, list) else next(t for t in tr if not isinstance(t, dict))
                raise EvalReportError(f"report {i}: scenarios[{j}] ({s.get('id', '?')}): 'trialRecords' holds a "
                                      f"{type(bad).__name__}; expected a list of trial objects", path=str(path),
                                      row=i, column="trialRecords")
    return reports


def _judge_graded(scenario: dict) -> bool:
    """True when a recorded scenario's grader includes the judge ("judge", "regex+judge", "contains+judge" ...)."""
    return "judge" in str(scenario.get("grader", "")).split("+")


def rederive(scenario: dict) -> dict:
    """Re-derive a behaviour scenario's counts from its trial records (never from its declared fields).

    A trial passes when every recorded deterministic result is true and the recorded judge verdict (when
    present) is ``pass``. Returns trials, passes, pass_rate, and the discrepancies: trials whose recorded
    ``passed`` differs from the re-derivation, and trials whose ``outputSha256`` does not hash the output.
    """
    recs = scenario.get("trialRecords") or []
    regraded, flag_diff, sha_bad = [], [], []
    for i, t in enumerate(recs, start=1):
        det = t.get("deterministic") or []
        j = t.get("judge")
        ok = all(d is True for d in det) and (j is None or (isinstance(j, dict) and j.get("verdict") == "pass"))
        if _judge_graded(scenario) and not isinstance(j, dict):
            ok = False
        regraded.append(ok)
        if bool(t.get("passed")) != ok:
            flag_diff.append(i)
        out = t.get("output")
        if isinstance(out, str) and t.get("outputSha256") and \
                hashlib.sha256(out.encode()).hexdigest() != t["outputSha256"]:
            sha_bad.append(i)
    n = len(recs)
    return {"trials": n, "passes": sum(regraded), "pass_rate": sum(regraded) / n if n else float("nan"),
            "passed_mismatch": flag_diff, "sha_mismatch": sha_bad}


GATE_COLUMNS = ["skill", "scenario", "check", "required", "observed", "ok"]


def pack_gate(reports: Sequence[dict], *, min_trials: int = PACK_MIN_TRIALS,
              pass_floor: float = PACK_BEHAVIOR_PASS_FLOOR,
              judge_prompt_version: str = KERYX_JUDGE_PROMPT_VERSION, runner_prompt_version: str | None = None,
              policy: Sequence[tuple[str, str]] = GATE_POLICY, ag: pd.DataFrame | None = None,
              integrity: Sequence[IntegrityFinding] | None = None) -> pd.DataFrame:
    """``checkSkillReportForPackGate`` (spec 000, "How the stable-pack gate uses this") on recorded reports.

    Checks per report: strictness high, trials >= ``min_trials``, scope bundled, (runner, model) and (judge,
    judgeModel) in ``policy``, judgePromptVersion current, runnerPromptVersion current (``None`` = keryx's
    current value is not public: reported ``ok=None``, "not checkable"); per ran behaviour scenario: trial
    records present, trial count >= ``min_trials``, re-derived pass rate >= ``pass_floor``, declared
    trials/passes/passRate equal to the re-derived ones, recorded ``passed`` equal to the regrade, output hashes.
    "On top of the integrity checks": with ``ag`` (:func:`~evallab.skills.ag_matrix`) every AG cell of the skill must be ``ok``
    (``ok=False`` otherwise; ``ok=None``, "not recomputable", when every cell is ok but some request digests
    could not be recomputed, so the recording is not verified against the current evals);
    with ``integrity`` (:func:`~evallab.skills.integrity_findings`) the skill must have no ``fail`` finding.

    Parameters
    ----------
    reports : sequence of dict
        From :func:`load_eval_report`.
    min_trials : int, default :data:`PACK_MIN_TRIALS` (10)
        Trials a report and each behaviour scenario need.
    pass_floor : float, default :data:`PACK_BEHAVIOR_PASS_FLOOR` (0.8)
        Lowest re-derived pass rate (0–1) a behaviour scenario may have.
    judge_prompt_version : str, default keryx's current ``JUDGE_PROMPT_VERSION``
    runner_prompt_version : str, optional
        keryx's current runner prompt version; ``None``: not public, the check is "not checkable".
    policy : sequence of (provider, model), default :data:`GATE_POLICY`
        The (runner, model) and (judge, judgeModel) pairs allowed.
    ag : DataFrame, optional
        :func:`~evallab.skills.ag_matrix` of the pack.
    integrity : sequence of IntegrityFinding, optional
        :func:`~evallab.skills.integrity_findings` of the pack.

    Returns
    -------
    DataFrame
        A plain table of checks with :data:`GATE_COLUMNS` (``required`` and ``observed`` as text, ``scenario``
        empty for report-level checks; ``ok`` True/False/None). Use :func:`gate_verdicts` for one verdict per
        skill and :func:`pass_rates` for the pass rates with their intervals.
    """
    rows = []

    def add(skill, scen, check, req, obs, ok):
        rows.append(dict(skill=skill, scenario=scen, check=check, required=str(req), observed=str(obs), ok=ok))

    pol = {tuple(p) for p in policy}
    for r in reports:
        sk = r.get("skillId", "?")
        add(sk, "", "strictness", "high", r.get("strictness"), r.get("strictness") == "high")
        add(sk, "", "trials", f">= {min_trials}", r.get("trials"),
            isinstance(r.get("trials"), int) and r["trials"] >= min_trials)
        add(sk, "", "scope", "bundled", r.get("scope"), r.get("scope") == "bundled")
        add(sk, "", "runner policy", sorted(pol), (r.get("runner"), r.get("model")),
            (r.get("runner"), r.get("model")) in pol)
        behaviour = [s for s in r.get("scenarios", []) if s.get("kind") == "behavior"]
        if any(_judge_graded(s) for s in behaviour):
            add(sk, "", "judge policy", sorted(pol), (r.get("judge"), r.get("judgeModel")),
                (r.get("judge"), r.get("judgeModel")) in pol)
            add(sk, "", "judgePromptVersion", judge_prompt_version, r.get("judgePromptVersion"),
                r.get("judgePromptVersion") == judge_prompt_version)
        if runner_prompt_version is None:
            add(sk, "", "runnerPromptVersion", "not checkable (current value not public)",
                r.get("runnerPromptVersion", "absent"), None)
        else:
            add(sk, "", "runnerPromptVersion", runner_prompt_version, r.get("runnerPromptVersion"),
                r.get("runnerPromptVersion") == runner_prompt_version)
        if ag is not None:
            mine = ag[ag["skill"] == sk]
            bad = mine[mine["status"] != "ok"]
            nr = int((mine["digest_check"] == "not recomputable").sum())
            obs = (f"{len(bad)} of {len(mine)} failing" + (f" ({', '.join(sorted(set(bad['status'])))})"
                                                          if len(bad) else "")) if len(mine) else "no judge scenario"
            ok = len(bad) == 0
            if ok and nr:  # verdicts match, but the recording cannot be shown to answer the current request
                obs += f"; {nr} request digest(s) not recomputable: recording not verifiable against current evals"
                ok = None
            add(sk, "", "AG (anti-gaming recordings)", "every canned answer ok", obs, ok)
        if integrity is not None:
            mine = [f for f in integrity if f.skill == sk]
            bad = [f for f in mine if f.severity == "fail"]
            add(sk, "", "integrity rules I1-I10", "no fail finding",
                f"{len(bad)} fail, {sum(f.severity == 'not-checkable' for f in mine)} not checkable", not bad)
        for s in behaviour:
            if s.get("status", "ran") != "ran":
                continue
            sid = s.get("id", "?")
            if not s.get("trialRecords"):
                add(sk, sid, "trial records", "present", "absent", False)
                continue
            d = rederive(s)
            add(sk, sid, "trial records (re-derived trials)", f">= {min_trials}", d["trials"],
                d["trials"] >= min_trials)
            add(sk, sid, "pass rate (re-derived)", f">= {pass_floor}", round(d["pass_rate"], 4),
                d["pass_rate"] >= pass_floor)
            declared = (s.get("trials"), s.get("passes"), s.get("passRate"))
            same = declared[0] == d["trials"] and declared[1] == d["passes"] and \
                isinstance(declared[2], (int, float)) and abs(declared[2] - d["pass_rate"]) < 1e-9
            add(sk, sid, "declared counts match records", (d["trials"], d["passes"], round(d["pass_rate"], 4)),
                declared, same)
            add(sk, sid, "recorded passed == regrade", "no discrepancy", d["passed_mismatch"] or "none",
                not d["passed_mismatch"])
            add(sk, sid, "output sha256", "matches", d["sha_mismatch"] or "all match", not d["sha_mismatch"])
    return pd.DataFrame(rows, columns=GATE_COLUMNS)


#: the measures of :func:`gate_verdicts`
VERDICT_MEASURES = [
    Measure("failed_checks", "Failed checks", "count", note=None),
    Measure("not_checkable", "Not checkable", "count", note=None),
]


def gate_verdicts(gate: pd.DataFrame) -> Results:
    """One row per skill: ``verdict`` pass/fail (any ``ok == False`` fails) and the failed checks listed.

    Parameters
    ----------
    gate : DataFrame
        From :func:`pack_gate`.

    Returns
    -------
    Results
        ``skill``, ``verdict`` ("pass" or "fail"), ``failed_checks`` (count of ``ok == False``), ``failures`` (each
        failed check with its scenario, observed and required values, joined by "; ") and ``not_checkable``
        (count of ``ok`` None). Measures :data:`VERDICT_MEASURES` (counts).
    """
    rows = []
    for sk, g in gate.groupby("skill", sort=False):
        failed = g[g["ok"].eq(False)]
        rows.append(dict(skill=sk, verdict="fail" if len(failed) else "pass", failed_checks=len(failed),
                         failures="; ".join(f"{r.check}{' [' + r.scenario + ']' if r.scenario else ''}: "
                                            f"{r.observed} (required {r.required})" for r in failed.itertuples()),
                         not_checkable=int(g["ok"].isna().sum())))
    cols = ["skill", "verdict", "failed_checks", "failures", "not_checkable"]
    return results(pd.DataFrame(rows, columns=cols), VERDICT_MEASURES, keys=["skill"])


#: the measures of :func:`pass_rates`
PASS_RATE_MEASURES = [
    Measure("trials", "Trials", "count", note=None),
    Measure("passes", "Passes", "count", n="trials", n_unit="trials", note=None),
    Measure("pass_rate", "Pass rate (re-derived)", "proportion", "pass_rate_low", "pass_rate_high",
            method_column="pass_rate_method", n="trials", n_unit="trials"),
]


def pass_rates(reports: Sequence[dict], *, confidence: float = 0.95) -> Results:
    """Each ran behaviour scenario's pass rate, re-derived from its trial records (:func:`rederive`), with an
    interval.

    A trial passes when every recorded deterministic result is true and the recorded judge verdict is ``pass``
    (spec 000, "How the stable-pack gate uses this"); the gate compares this share with its floor
    (:data:`PACK_BEHAVIOR_PASS_FLOOR`). Each trial is one independent pass/fail outcome, so the interval is the
    Wilson score interval of passes of trials (:func:`evallab.metrics._intervals.ratio_interval_method` on one
    count per trial, which names it).

    Parameters
    ----------
    reports : sequence of dict
        From :func:`load_eval_report`.
    confidence : float, default 0.95
        Level of the intervals.

    Returns
    -------
    Results
        One row per ran behaviour scenario, in report order: ``skill``, ``scenario``, ``trials``, ``passes``
        (counts), ``pass_rate`` = passes / trials (proportion) with ``pass_rate_low``/``pass_rate_high`` and
        ``pass_rate_method`` ("Wilson score"; "" without trials), ``note`` (why a pass rate is missing: no trial
        records). Measures :data:`PASS_RATE_MEASURES` (n: trials); ``level`` = ``confidence``.
    """
    rows = []
    for r in reports:
        for s in r.get("scenarios", []):
            if s.get("kind") != "behavior" or s.get("status", "ran") != "ran":
                continue
            d = rederive(s)
            n, k = d["trials"], d["passes"]
            lo, hi, how = ratio_interval_method(np.r_[np.ones(k), np.zeros(n - k)], np.ones(n),
                                                confidence=confidence) if n else (np.nan, np.nan, "")
            rows.append(dict(skill=r.get("skillId", "?"), scenario=s.get("id", "?"), trials=n, passes=k,
                             pass_rate=d["pass_rate"], pass_rate_low=lo, pass_rate_high=hi, pass_rate_method=how,
                             note="" if n else "not computable: no trial records"))
    cols = ["skill", "scenario", "trials", "passes", "pass_rate", "pass_rate_low", "pass_rate_high",
            "pass_rate_method", "note"]
    return results(pd.DataFrame(rows, columns=cols), PASS_RATE_MEASURES, level=confidence, keys=["skill", "scenario"])
