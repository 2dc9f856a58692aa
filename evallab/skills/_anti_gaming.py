"""Rule AG offline: the judge's recorded verdicts on the canned anti-gaming answers of every judge scenario,
checked for staleness (prompt version, request digest), unanimity and the expected outcome.

Source: spec 000, "Recording the calibration" and rule AG; recordings in the keryx format
(:class:`evallab.judges.Recording`).

- :func:`ag_matrix` — one row per judge scenario × canned answer kind.
- :func:`ag_findings` / :func:`ag_summary` — findings per failing cell; one verdict per recording.
- :func:`ag_overall` — the whole pack in one row: checks, how many are ok, failing, unverifiable.

The tables are :class:`~evallab.Results`: their counts and shares carry a :class:`~evallab.Measure` (label,
unit, n and what n counts), so a report states them without retyping labels or units. None of them has an
interval: the checks are a census of the pack's canned answers, not a sample of anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from evallab._results import Measure, Results, results
from evallab.judges._recordings import EXPECTED, KINDS, Recording
from evallab.skills._grading import grade_answer
from evallab.skills._integrity import IntegrityFinding
from evallab.skills._scenario_schema import EvalSpec, Scenario

#: keryx's current judge prompt version (spec 000: ``JUDGE_PROMPT_VERSION 2026-09-25.1``)
KERYX_JUDGE_PROMPT_VERSION = "2026-09-25.1"
_FIX = "re-run `evallab judge-check {evals} --judge ... --samples 3 --record {record}`"


def is_evallab_recording(rec: Recording) -> bool:
    """A recording evallab wrote (its digest can be recomputed): ``evallab`` metadata or an evallab version."""
    return "evallab" in rec.extra or rec.judge_prompt_version.startswith("evallab")


AG_COLUMNS = ["skill", "recording", "scenario", "kind", "expected", "observed", "judged", "samples", "unanimity",
              "unanimous", "errors", "prompt_version", "version_current", "digest", "digest_check", "status",
              "message"]
#: the rows of :func:`ag_matrix` are named by these columns
AG_KEYS = ["skill", "recording", "scenario", "kind"]
#: the measures of :func:`ag_matrix`: per cell, the recorded samples, the share that gave the modal verdict (no
#: interval: three samples of one request) and the samples that carry an error
AG_MEASURES = [
    Measure("samples", "Samples", "count", note=None),
    Measure("unanimity", "Unanimity", "proportion", n="samples", n_unit="samples", note=None),
    Measure("errors", "Errors", "count", n="samples", n_unit="samples", note=None),
]


def ag_matrix(specs: Mapping[str, EvalSpec], recordings: Mapping[str, Recording], *,
              keryx_prompt_version: str = KERYX_JUDGE_PROMPT_VERSION, record_dir: str = "<DIR>",
              digest: Callable[[Scenario, str], str] | None = None, evallab_prompt_version: str = "") -> Results:
    """The AG check offline (spec 000, "Recording the calibration" and rule AG): one row per judge scenario ×
    canned answer kind.

    Parameters
    ----------
    specs : Mapping[str, EvalSpec]
        Recording name (``<pack>__<skill>``) → the skill's evals (:func:`~evallab.skills.load_tree`).
    recordings : Mapping[str, Recording]
        Recording name → :class:`~evallab.judges.Recording` (:func:`~evallab.judges.load_recordings`).
    keryx_prompt_version : str, default :data:`KERYX_JUDGE_PROMPT_VERSION`
        The current keryx ``JUDGE_PROMPT_VERSION`` for keryx-made recordings.
    record_dir : str, default "<DIR>"
        The folder the fix in ``message`` records to.
    digest : callable (Scenario, kind) -> str, optional
        For evallab-made recordings, the function that recomputes a canned answer's request digest from a freshly
        built request (:func:`evallab.experiments.scenario_digest`); without it an evallab
        recording's digests are "not recomputable".
    evallab_prompt_version : str, default ""
        The current evallab prompt version (:data:`evallab.judges.PROMPT_VERSION`) for evallab-made recordings.

    Returns
    -------
    Results
        :data:`AG_COLUMNS`, one row per judge scenario × canned answer kind (named by :data:`AG_KEYS`):
        ``expected``/``observed`` verdicts (``observed`` = the unanimous verdict, ``mixed``, ``error`` or
        ``missing``), ``judged`` (False for ``empty``), ``samples`` (count), ``unanimity`` = share of samples
        equal to the modal verdict (proportion in [0, 1], n: samples; NaN when no sample was parsed),
        ``unanimous``, ``errors`` (count of samples with an error), ``digest_check`` in {match, mismatch, not
        recomputable, duplicate, n/a}, ``status`` in {ok, wrong, stale, missing, non-unanimous, error} and
        ``message`` naming the fix (re-record). Measures :data:`AG_MEASURES`; no interval. ``empty`` never reaches
        the judge (spec 000: ``gradeScenarioAnswer`` short-circuits it): it is graded by :func:`grade_answer`, is
        ``ok`` when it fails, and carries no judge statistic — 0 samples, unanimity and ``unanimous`` missing.
    """
    rows = []
    digest_seen: dict[str, tuple[str, str, str]] = {}
    for name, spec in specs.items():
        rec = recordings.get(name)
        fix = _FIX.format(evals=spec.path, record=record_dir)
        ev = rec is not None and is_evallab_recording(rec)
        cur_v = keryx_prompt_version
        if ev:
            cur_v = evallab_prompt_version
        for s in spec.scenarios:
            if s.judge is None:
                continue
            for kind in KINDS:
                r = dict(skill=spec.skill_id, recording=name, scenario=s.id, kind=kind, expected=EXPECTED[kind],
                         observed="missing", judged=kind != "empty", samples=0, unanimity=float("nan"),
                         unanimous=pd.NA, errors=0, prompt_version=rec.judge_prompt_version if rec else None,
                         version_current=None, digest="", digest_check="n/a", status="ok", message="")
                if kind == "empty":  # never sent to the judge: no samples, so no unanimity or other judge figure
                    g = grade_answer(s, "")
                    r.update(observed="fail" if not g.passed else "pass", version_current=True,
                             message="graded without the judge (empty answer): not a judge verdict")
                    if g.passed:
                        r.update(status="wrong", message="the empty answer passes")
                    rows.append(r)
                    continue
                if rec is None:
                    r.update(status="missing", message=f"no recording {name}.json for a judge scenario; {fix}")
                    rows.append(r)
                    continue
                r["version_current"] = rec.judge_prompt_version == cur_v
                e = rec.entry(s.id, kind)
                if e is None:
                    r.update(status="missing", message=f"recording has no entry for {s.id}/{kind}; {fix}")
                    rows.append(r)
                    continue
                verdicts = [x.verdict for x in e.samples]
                errors = sum(x.error is not None for x in e.samples)
                ok = [v for v in verdicts if v]
                modal = max(set(ok), key=ok.count) if ok else None
                r.update(samples=len(e.samples), errors=errors, digest=e.request_digest,
                         unanimity=(ok.count(modal) / len(e.samples)) if modal else float("nan"),
                         unanimous=e.unanimous,
                         observed=modal if e.unanimous else ("error" if errors else "mixed"))
                if ev:
                    dg = digest(s, kind) if digest is not None else None
                    r["digest_check"] = "match" if dg == e.request_digest else \
                        ("not recomputable" if dg is None else "mismatch")
                else:
                    r["digest_check"] = "not recomputable"
                prev = digest_seen.get(e.request_digest)
                if prev and prev != (name, s.id, kind):
                    r["digest_check"] = "duplicate"
                digest_seen.setdefault(e.request_digest, (name, s.id, kind))
                problems = []
                if not r["version_current"]:
                    problems.append(("stale", f"judgePromptVersion {rec.judge_prompt_version} is not the current "
                                              f"{cur_v}"))
                if r["digest_check"] == "mismatch":
                    problems.append(("stale", "requestDigest no longer matches a freshly built request (rubric, "
                                              "criteria, prompt or answer changed)"))
                if r["digest_check"] == "duplicate":
                    problems.append(("stale", f"requestDigest repeats {prev[0]}:{prev[1]}/{prev[2]} (two different "
                                              "canned answers cannot share a request)"))
                if errors:
                    problems.append(("error", f"{errors} sample(s) carry an error"))
                elif not e.unanimous:
                    problems.append(("non-unanimous", f"samples disagree ({verdicts})"))
                elif modal != EXPECTED[kind]:
                    problems.append(("wrong", f"judge says {modal}, expected {EXPECTED[kind]}"))
                if problems:
                    r.update(status=problems[0][0], message="; ".join(m for _, m in problems) + f"; {fix}")
                elif r["digest_check"] == "not recomputable":
                    r["message"] = "verdicts match; digest carried but not recomputed (keryx's judge prompt " \
                                   "text is not public)"
                rows.append(r)
    return results(pd.DataFrame(rows, columns=AG_COLUMNS), AG_MEASURES, keys=AG_KEYS)


def ag_findings(matrix: pd.DataFrame, specs: Mapping[str, EvalSpec] | None = None,
                recordings: Mapping[str, Recording] | None = None) -> list[IntegrityFinding]:
    """Findings of rule AG from :func:`ag_matrix` (one per failing scenario × kind), plus a ``note`` per
    recording whose digests could not be recomputed and per recorded scenario the evals no longer contain."""
    out = []
    paths = {n: s.path for n, s in (specs or {}).items()}
    for r in matrix[matrix["status"] != "ok"].itertuples():
        out.append(IntegrityFinding(r.skill, f"{r.scenario}/{r.kind}", "AG", "fail", f"{r.status}: {r.message}",
                           paths.get(r.recording, "")))
    nr = matrix[matrix["digest_check"] == "not recomputable"].groupby(["skill", "recording"]).size()
    for (skill, name), n in nr.items():
        out.append(IntegrityFinding(skill, "*", "AG", "note", f"{n} request digests carried but not recomputable "
                                                      "(keryx's judge prompt text is not public)", paths.get(name, "")))
    for name, rec in (recordings or {}).items():
        spec = (specs or {}).get(name)
        known = {s.id for s in spec.scenarios} if spec else set()
        for sid in sorted({e.scenario_id for e in rec.entries} - known):
            out.append(IntegrityFinding(spec.skill_id if spec else name, sid, "AG", "note",
                               "recorded scenario not present in evals.json (orphan entry)", rec.path or ""))
    return out


#: :func:`ag_summary` verdict when every cell is ok but some request digests could not be recomputed
AG_PASS_UNVERIFIED = "pass (digests not recomputable)"


#: the measures of :func:`ag_summary`: counts of the recording's cells (scenario × canned answer)
SUMMARY_MEASURES = [
    Measure("scenarios", "Scenarios", "count", note=None),
    Measure("checks", "Checks", "count", note=None),
    Measure("ok", "OK", "count", n="checks", n_unit="checks", note=None),
    Measure("missing", "Missing", "count", n="checks", n_unit="checks", note=None),
    Measure("non_unanimous", "Non-unanimous", "count", n="checks", n_unit="checks", note=None),
    Measure("wrong", "Wrong", "count", n="checks", n_unit="checks", note=None),
    Measure("not_recomputable", "Digests not recomputable", "count", n="checks", n_unit="checks", note=None),
]


def ag_summary(matrix: pd.DataFrame) -> Results:
    """Per recording: scenarios, kinds checked, ok/failing counts, stale flag and AG verdict.

    Parameters
    ----------
    matrix : DataFrame
        From :func:`ag_matrix`.

    Returns
    -------
    Results
        One row per (skill, recording): ``scenarios``, ``checks``, ``ok``, ``missing``, ``non_unanimous``,
        ``wrong``, ``not_recomputable`` (counts; the last: cells whose request digest could not be recomputed, so
        the recording cannot be shown to answer the CURRENT request), ``stale`` (bool), ``prompt_version`` and
        ``ag``: ``fail`` when any cell is not ok; :data:`AG_PASS_UNVERIFIED` when all are ok but any digest is not
        recomputable (the verdicts match, yet the recording may predate a change of the rubric or canned answers);
        ``pass`` otherwise. Measures :data:`SUMMARY_MEASURES` (counts; n: checks).
    """
    g = pd.DataFrame(matrix).groupby(["skill", "recording"], sort=True)
    out = g.agg(scenarios=("scenario", "nunique"), checks=("kind", "size"),
                ok=("status", lambda x: int((x == "ok").sum())),
                stale=("status", lambda x: bool((x == "stale").any())),
                missing=("status", lambda x: int((x == "missing").sum())),
                non_unanimous=("status", lambda x: int(x.isin(["non-unanimous", "error"]).sum())),
                wrong=("status", lambda x: int((x == "wrong").sum())),
                not_recomputable=("digest_check", lambda x: int((x == "not recomputable").sum())),
                prompt_version=("prompt_version", "first")).reset_index()
    out["ag"] = np.where(out["ok"] != out["checks"], "fail",
                         np.where(out["not_recomputable"] > 0, AG_PASS_UNVERIFIED, "pass"))
    return results(out, SUMMARY_MEASURES, keys=["skill", "recording"])


#: the measures of :func:`ag_overall`
OVERALL_MEASURES = [
    Measure("checks", "Checks", "count", note=None),
    Measure("ok", "OK", "count", n="checks", n_unit="checks", note=None),
    Measure("ok_share", "Checks that match their expected verdict", "proportion", n="checks", n_unit="checks"),
    Measure("failing", "Failing checks", "count", n="checks", n_unit="checks", note=None),
    Measure("not_recomputable", "Digests not recomputable", "count", n="checks", n_unit="checks", note=None),
    Measure("recordings", "Recordings", "count", note=None),
    Measure("recordings_failing", "Failing recordings", "count", n="recordings", n_unit="recordings", note=None),
    Measure("recordings_unverified", "Recordings passing only with digests not recomputable", "count",
            n="recordings", n_unit="recordings", note=None),
]


def ag_overall(matrix: pd.DataFrame) -> Results:
    """The AG check of the whole pack in one row (spec 000, rule AG): every cell of :func:`ag_matrix` counted.

    Parameters
    ----------
    matrix : DataFrame
        From :func:`ag_matrix`.

    Returns
    -------
    Results
        One row: ``checks`` (scenario × canned answer cells), ``ok``, ``failing`` (counts), ``ok_share`` = ok /
        checks (proportion, n: checks; no interval — the cells are the pack's whole anti-gaming set, a census;
        NaN with a ``note`` when there is no judge scenario), ``not_recomputable`` (cells whose request digest
        could not be recomputed), ``recordings``, ``recordings_failing`` (AG verdict ``fail``) and
        ``recordings_unverified`` (:data:`AG_PASS_UNVERIFIED`), counts of :func:`ag_summary`'s rows. Measures
        :data:`OVERALL_MEASURES`.
    """
    m = pd.DataFrame(matrix)
    summ = ag_summary(m)
    n, ok = len(m), int((m["status"] == "ok").sum())
    row = dict(checks=n, ok=ok, failing=n - ok, ok_share=ok / n if n else np.nan,
               not_recomputable=int((m["digest_check"] == "not recomputable").sum()), recordings=len(summ),
               recordings_failing=int((summ["ag"] == "fail").sum()),
               recordings_unverified=int((summ["ag"] == AG_PASS_UNVERIFIED).sum()),
               note="" if n else "not computable: no judge scenario, so no anti-gaming check")
    return results(pd.DataFrame([row]), OVERALL_MEASURES)
