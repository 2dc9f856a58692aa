"""The behaviour trials of a recorded eval report: one row per trial, and why a scenario's trials got different
verdicts — runner failures (no answer), judge disagreement on answers no recorded check tells apart (the only judge
inconsistency), answer variation, or unresolved.

- :func:`trial_table` / :func:`trial_outputs` — the trials and their outputs.
- :func:`runner_failure` — why an output carries no answer (:data:`TOOL_CALL_MARKUP`).
- :func:`trial_causes` / :func:`trial_disagreements` — the cause of each trial and of each split scenario.

:func:`trial_table` and :func:`trial_causes` are plain tables (one row per trial); :func:`trial_disagreements` is a
:class:`~evallab.Results` whose counts carry their :class:`~evallab.Measure`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import pandas as pd

from evallab._results import Measure, Results, results
from evallab.skills._scenario_schema import EvalSpec


def trial_table(reports: Sequence[dict]) -> pd.DataFrame:
    """One row per behaviour trial: skill, scenario, trial (1-based), judge verdict and reason, recorded passed,
    output length and ``runner_failure`` (:func:`runner_failure`: why the output carries no answer, or "")."""
    rows = []
    for r in reports:
        for s in r.get("scenarios", []):
            for i, t in enumerate(s.get("trialRecords") or [], start=1):
                j = t.get("judge") if isinstance(t.get("judge"), dict) else {}
                out = t.get("output") if isinstance(t.get("output"), str) else ""
                rows.append(dict(skill=r.get("skillId"), scenario=s.get("id"), trial=i, verdict=j.get("verdict"),
                                 reason=j.get("reason", ""), passed=bool(t.get("passed")), output_chars=len(out),
                                 runner_failure=runner_failure(out),
                                 deterministic=tuple(bool(d) for d in (t.get("deterministic") or []))))
    return pd.DataFrame(rows, columns=["skill", "scenario", "trial", "verdict", "reason", "passed", "output_chars",
                                       "runner_failure", "deterministic"])


#: markup of a tool call the single-turn runner cannot execute (spec 000, "How the stable-pack gate uses this":
#: "a model that tries one anyway produces a non-answer"): DeepSeek's DSML and tool-call tokens, and the common
#: XML / JSON tool-call forms. Each pattern is a literal prefix — linear time, no nested quantifier.
TOOL_CALL_MARKUP = {
    "DeepSeek DSML tool call": re.compile(r"<[｜|]{1,2}\s*DSML\s*[｜|]{1,2}"),
    "DeepSeek tool-call token": re.compile(r"<[｜|]tool[▁_ ]calls?[▁_ ]begin[｜|]>"),
    "<tool_call> block": re.compile(r"<tool_call>"),
    "<function_calls> block": re.compile(r"<function_calls>"),
    "<invoke name=...> block": re.compile(r"<invoke\s+name="),
    "JSON tool_calls": re.compile(r"\"tool_calls\"\s*:\s*\["),
}


def runner_failure(output: str) -> str:
    """Why a recorded trial output carries no verdict-bearing answer ("" when it does).

    A runner failure is an output with nothing for a judge to grade: empty (or whitespace), or a tool call the
    single-turn runner has no wiring for (:data:`TOOL_CALL_MARKUP`) — the model asked to run a command instead of
    answering. A judge that fails such an output is right; its verdict says nothing about the judge's consistency.
    """
    if not output or not output.strip():
        return "no output"
    for name, rx in TOOL_CALL_MARKUP.items():
        if rx.search(output):
            return f"tool-call markup ({name}): a request to run a tool, not an answer"
    return ""


#: trial causes of :func:`trial_causes`, in the order a scenario's cause is chosen
TRIAL_CAUSES = ("judge disagreement", "answer variation", "unresolved", "runner failure", "no judge verdict",
                "consistent")


def _signature(output: str, det: tuple, tokens: Sequence[str]) -> tuple:
    low = output.lower()
    return det, tuple(t for t in tokens if t.lower() in low)


def trial_causes(reports: Sequence[dict], specs: Mapping[str, EvalSpec] | None = None) -> pd.DataFrame:
    """Every behaviour trial classified by why its verdict may differ from the scenario's other trials.

    Causes (:data:`TRIAL_CAUSES`), per trial:

    - ``runner failure`` — the output carries no verdict-bearing answer (:func:`runner_failure`: empty, or
      tool-call markup); the judge's verdict on it is not a judgement of an answer.
    - ``no judge verdict`` — an answer without a recorded pass/fail verdict.
    - ``consistent`` — every answer of the scenario (runner failures left out) got the same verdict.
    - ``judge disagreement`` — verdicts differ, and this answer has the same SIGNATURE as an answer that got the
      other verdict: the same recorded deterministic results and the same set of the scenario's ``anti_patterns``
      tokens (spec 000, I7c: "literal constructs the judge can check against the answer") present in it. No
      recorded check tells the two answers apart, so the different verdicts are the judge's: judge inconsistency.
    - ``answer variation`` — verdicts differ, and no answer with the other verdict shares this one's signature:
      the answers differ in a recorded check, and the verdicts follow the answers.
    - ``unresolved`` — verdicts differ but the scenario has neither deterministic checks nor anti-pattern tokens
      (or ``specs`` does not hold it), so nothing recorded compares the answers; never counted as the judge's.

    Token presence is lexical (case-insensitive): an answer that names a construct only to warn against it
    carries it too. The classification says what the RECORDED checks can tell apart, not what a reader would.

    Parameters
    ----------
    reports : sequence of dict
        From :func:`~evallab.skills.load_eval_report`.
    specs : Mapping[str, EvalSpec], optional
        From :func:`~evallab.skills.load_tree`, for each scenario's ``anti_patterns`` (matched by skill id and
        scenario id); without it every split scenario is "unresolved".

    Returns
    -------
    DataFrame
        A plain table, one row per trial: :func:`trial_table` plus ``cause`` (:data:`TRIAL_CAUSES`) and
        ``signature`` (the anti-pattern tokens found, comma-separated).
    """
    t = trial_table(reports)
    tokens = {}
    for spec in (specs or {}).values():
        for s in spec.scenarios:
            tokens[(spec.skill_id, s.id)] = list(s.anti_patterns)
    outputs = {(r.get("skillId"), s.get("id"), i): (tr.get("output") if isinstance(tr.get("output"), str) else "")
               for r in reports for s in r.get("scenarios", []) for i, tr in
               enumerate(s.get("trialRecords") or [], start=1)}
    causes, sigs = {}, {}
    for (sk, sid), g in t.groupby(["skill", "scenario"], sort=False):
        toks = tokens.get((sk, sid), [])
        sig = {x.trial: _signature(outputs[(sk, sid, x.trial)], x.deterministic, toks) for x in g.itertuples()}
        answers = g[(g["runner_failure"] == "") & g["verdict"].isin(["pass", "fail"])]
        split = answers["verdict"].nunique() > 1
        comparable = bool(toks) or any(len(x) for x in answers["deterministic"])
        for x in g.itertuples():
            if x.runner_failure:
                c = "runner failure"
            elif x.verdict not in ("pass", "fail"):
                c = "no judge verdict"
            elif not split:
                c = "consistent"
            elif not comparable:
                c = "unresolved"
            else:
                other = answers[answers["verdict"] != x.verdict]
                c = "judge disagreement" if any(sig[o] == sig[x.trial] for o in other["trial"]) else \
                    "answer variation"
            causes[x.Index] = c
            sigs[x.Index] = ", ".join(sig[x.trial][1])
    return t.assign(cause=pd.Series(causes, index=t.index, dtype=object) if len(t) else pd.Series(dtype=object),
                    signature=pd.Series(sigs, index=t.index, dtype=object) if len(t) else pd.Series(dtype=object))


def _trials(xs) -> str:
    return ", ".join(str(int(x)) for x in xs)


#: the measures of :func:`trial_disagreements`
DISAGREEMENT_MEASURES = [
    Measure("trials", "Trials", "count", note=None),
    Measure("answers", "Verdict-bearing answers", "count", n="trials", n_unit="trials", note=None),
]


def trial_disagreements(reports: Sequence[dict], specs: Mapping[str, EvalSpec] | None = None) -> Results:
    """Scenarios whose trials got different judge verdicts, split by cause (:func:`trial_causes`), with the reasons
    side by side.

    Parameters
    ----------
    reports : sequence of dict
        From :func:`~evallab.skills.load_eval_report`.
    specs : Mapping[str, EvalSpec], optional
        From :func:`~evallab.skills.load_tree` (the scenarios' ``anti_patterns``).

    Returns
    -------
    Results
        One row per such scenario: skill, scenario, ``trials`` (count), ``runner_failures`` (trial numbers whose
        output carries no answer), ``answers`` (count of trials with a verdict-bearing answer and a verdict),
        ``pass_trials`` / ``fail_trials`` (trial numbers, among those answers), ``cause`` — the scenario's cause,
        the first of :data:`TRIAL_CAUSES` among its trials: "judge disagreement" (the only cause that is judge
        inconsistency), "answer variation", "unresolved", or "runner failure" when the answers themselves agree —,
        ``judge_inconsistent`` (cause is judge disagreement), ``explanation`` (one sentence), and ``pass_reasons``
        / ``fail_reasons`` (each ``"trial N: reason"`` joined by newlines; runner failures marked). Measures
        :data:`DISAGREEMENT_MEASURES` (counts); no row when every scenario's trials agree.
    """
    t = trial_causes(reports, specs)
    cols = ["skill", "scenario", "trials", "runner_failures", "answers", "pass_trials", "fail_trials", "cause",
            "judge_inconsistent", "explanation", "pass_reasons", "fail_reasons"]
    rows = []
    for (sk, sid), g in t.groupby(["skill", "scenario"], sort=False):
        if g["verdict"].nunique() < 2:
            continue
        rf = g[g["cause"] == "runner failure"]
        ans = g[g["cause"].isin(["consistent", "judge disagreement", "answer variation", "unresolved"])]
        present = [c for c in TRIAL_CAUSES if c in set(g["cause"])]
        cause = present[0] if present else "consistent"
        p, f = ans[ans["verdict"] == "pass"], ans[ans["verdict"] == "fail"]
        sig = sorted({s for s in ans["signature"]})
        what = (f"the {len(ans)} answers agree ({ans['verdict'].iloc[0] if len(ans) else 'none'})" if
                ans["verdict"].nunique() < 2 else f"pass in trials {_trials(p['trial'])}, fail in trials "
                                                  f"{_trials(f['trial'])}")
        if cause == "runner failure":
            text = (f"{len(rf)} of {len(g)} trials carry no answer (trials {_trials(rf['trial'])}: "
                    f"{rf['runner_failure'].iloc[0]}); {what}: not judge inconsistency")
        elif cause == "judge disagreement":
            text = (f"{what} on answers no recorded check tells apart (same deterministic results, anti-pattern "
                    f"tokens present: {'; '.join(s or 'none' for s in sig)}): the judge's verdicts differ")
        elif cause == "answer variation":
            text = f"{what}; the answers differ in the recorded checks (anti-pattern tokens: " \
                   f"{'; '.join(s or 'none' for s in sig)}) and the verdicts follow them"
        else:
            text = f"{what}; no deterministic check or anti-pattern token is recorded to compare the answers"
        if cause != "runner failure" and len(rf):
            text += f"; trials {_trials(rf['trial'])} carry no answer"

        def reasons(d):
            return "\n".join(f"trial {x.trial}{' (no answer: runner failure)' if x.runner_failure else ''}: "
                             f"{x.reason}" for x in d.itertuples())
        rows.append(dict(skill=sk, scenario=sid, trials=len(g), runner_failures=list(rf["trial"]),
                         answers=len(ans), pass_trials=list(p["trial"]), fail_trials=list(f["trial"]), cause=cause,
                         judge_inconsistent=cause == "judge disagreement", explanation=text,
                         pass_reasons=reasons(g[g["verdict"] == "pass"]),
                         fail_reasons=reasons(g[g["verdict"] == "fail"])))
    return results(pd.DataFrame(rows, columns=cols), DISAGREEMENT_MEASURES, keys=["skill", "scenario"])


def trial_outputs(reports: Sequence[dict]) -> dict[str, list[str]]:
    """Each behaviour scenario's recorded trial outputs in trial order, keyed ``<skill>/<scenario>`` (skill
    without its pack) — usable as successive runs for :func:`evallab.skills.history`."""
    out = {}
    for r in reports:
        sk = str(r.get("skillId", "?")).split("/")[-1]
        for s in r.get("scenarios", []):
            if s.get("trialRecords"):
                out[f"{sk}/{s.get('id')}"] = [str(t.get("output") or "") for t in s["trialRecords"]]
    return out
