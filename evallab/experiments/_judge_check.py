"""keryx's live ``judge-check``: the anti-gaming set of a skill's judge scenarios graded by a live (or replay)
judge, recorded in the keryx format and checked like the bundled recordings (spec 000, "Recording the
calibration" and rule AG).

The checks come back as :func:`evallab.skills.ag_matrix`'s :class:`~evallab.Results` (its counts and the unanimity
of each cell carry their :class:`~evallab.Measure`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evallab._results import Results
from evallab.errors import ArgumentError, EvalSpecError
from evallab.judges import build_pointwise, run_jobs
from evallab.judges._prompts import PROMPT_VERSION, request_digest
from evallab.judges._recordings import EXPECTED, KINDS, Entry, Recording, Sample, load_recording
from evallab.skills._anti_gaming import ag_matrix
from evallab.skills._grading import canned_answers
from evallab.skills._scenario_schema import EvalSpec, Scenario


def build_judge_request(scenario: Scenario, kind: str, *, sample: int = 0, **kw):
    """The pointwise judge request for one canned answer (:func:`evallab.judges.build_pointwise`):
    rubric = the judge expectation's rubric plus the task prompt, pass/fail criteria, the canned answer.
    Metadata carries ``scenario_id``, ``kind``, ``item_id`` = ``<scenario>/<kind>``, ``gold``, ``sample``."""
    j = scenario.judge
    if j is None:
        raise EvalSpecError("no judge expectation; expected a judge scenario", scenario=scenario.id, field="judge")
    rubric = f"{j.rubric}\n\nTask prompt the answer responds to:\n{scenario.prompt}"
    md = {"item_id": f"{scenario.id}/{kind}", "scenario_id": scenario.id, "kind": kind, "answer_kind": kind,
          "gold": EXPECTED[kind], "sample": sample, "subset": scenario.skill_id, "dataset": "scenarios"}
    return build_pointwise(rubric=rubric, pass_criteria=list(j.pass_criteria), fail_criteria=list(j.fail_criteria),
                           answer=canned_answers(scenario)[kind], metadata=md, **kw)


def scenario_digest(scenario: Scenario, kind: str) -> str:
    """The request digest a fresh evallab request for one canned answer carries
    (:func:`evallab.judges.request_digest` of :func:`build_judge_request`); pass it to
    :func:`evallab.skills.ag_matrix` as ``digest`` to check evallab-made recordings."""
    return request_digest(build_judge_request(scenario, kind))


def judge_check_requests(spec: EvalSpec, *, samples: int = 3, **kw) -> list:
    """The judge requests of ``keryx skills judge-check``: every non-empty canned answer of every judge
    scenario × ``samples`` (``metadata["sample"]`` 0..samples-1)."""
    if samples < 1:
        raise ArgumentError(f"samples {samples!r}; expected >= 1")
    return [build_judge_request(s, kind, sample=j, **kw) for s in spec.scenarios if s.judge
            for kind in KINDS if kind != "empty" for j in range(samples)]


def judge_check(spec: EvalSpec, judge, *, samples: int = 3, record: str | Path | None = None,
                progress: bool = False) -> tuple[Results, Recording | None]:
    """Run the anti-gaming set of one skill through a live (or replay) judge and check it (``judge-check``).

    Parameters
    ----------
    spec : EvalSpec
        The skill's evals.
    judge : Judge
        An :class:`evallab.judges.Judge` (e.g. from :func:`evallab.judges.make_judge`).
    samples : int, default 3
        How many times each non-empty canned answer is graded (keryx's default).
    record : str or Path, optional
        A folder (the recording is ``<folder>/<pack>__<skill>.json``) or a ``.json`` path; the recording is
        written by :func:`evallab.judges.run_jobs` and read back for the AG check.
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    (matrix, recording)
        ``matrix``: the :func:`~evallab.skills.ag_matrix` rows of this skill, a :class:`~evallab.Results`
        (status ``ok`` only when every sample agrees, none errored and the verdict is what the canned answer
        expects; ``samples`` and ``errors`` counts, ``unanimity`` a proportion of samples); ``recording``: the
        written recording (``None`` when ``record`` is not given; the matrix is then built from the returned
        verdict table).
    """
    reqs = judge_check_requests(spec, samples=samples)
    path = None
    if record is not None:
        path = Path(record)
        if path.suffix != ".json":
            path = path / f"{spec.recording_name}.json"
    df = run_jobs(judge, reqs, progress=progress, record=str(path) if path else None)
    if path is not None:
        rec = load_recording(path)
    else:
        dig = {(r.metadata["scenario_id"], r.metadata["kind"]): request_digest(r) for r in reqs}
        entries = []
        for (sid, kind), g in df.groupby(["scenario_id", "kind"], sort=False):
            g = g.sort_values("sample")
            entries.append(Entry(sid, kind, dig[(sid, kind)],
                                 [Sample(None if pd.isna(v) else v, str(rs) if not pd.isna(rs) else "",
                                         None if pd.isna(e) else str(e))
                                  for v, rs, e in zip(g["verdict"], g.get("reason", [""] * len(g)), g["error"],
                                                      strict=False)]))
        rec = Recording(PROMPT_VERSION, getattr(judge, "label", ""), getattr(judge, "model", ""), "", entries,
                        extra={"evallab": {"source": "judge_check"}})
    m = ag_matrix({spec.recording_name: spec}, {spec.recording_name: rec},
                  record_dir=str(path.parent) if path else "<DIR>", digest=scenario_digest,
                  evallab_prompt_version=PROMPT_VERSION)
    return m, (rec if path is not None else None)


def check_recordings(specs, recordings, **kw) -> Results:
    """:func:`evallab.skills.ag_matrix` with evallab's digest recomputation switched on: evallab-made
    recordings are checked against a freshly built request (:func:`scenario_digest`) and the current
    :data:`evallab.judges.PROMPT_VERSION`; keryx-made ones as before.

    Parameters
    ----------
    specs : Mapping[str, EvalSpec]
        Recording name → the skill's evals (:func:`evallab.skills.load_tree`).
    recordings : Mapping[str, Recording]
        Recording name → recording (:func:`evallab.judges.load_recordings`).
    **kw
        Passed to ``ag_matrix`` (``keryx_prompt_version``, ``record_dir``).

    Returns
    -------
    Results
        ``ag_matrix``'s table: one row per judge scenario × canned answer, measures ``samples`` (count),
        ``unanimity`` (proportion of samples) and ``errors`` (count).
    """
    return ag_matrix(specs, recordings, digest=scenario_digest, evallab_prompt_version=PROMPT_VERSION, **kw)


def judge_check_path(path: str | Path, judge, *, samples: int = 3, record: str | Path | None = None,
                     progress: bool = False) -> pd.DataFrame:
    """:func:`judge_check` of one skill's ``evals.json``, or of every skill under a folder of
    ``stacks/*/skills/*/`` (``evallab judge-check``).

    Parameters
    ----------
    path : str or Path
        An ``evals.json``, or a folder (:func:`evallab.skills.load_tree`).
    judge : Judge
        e.g. from :func:`evallab.judges.make_judge`.
    samples : int, default 3
        How many times each non-empty canned answer is graded.
    record : str or Path, optional
        A folder for the recordings (one per skill) or a ``.json`` path.
    progress : bool, default False
        Progress bars.

    Returns
    -------
    DataFrame
        The :func:`evallab.skills.ag_matrix` rows of every skill, in the order of the skills; a row
        passes when its ``status`` is ``ok``.

    Raises
    ------
    EvallabError
        A folder without any ``evals.json``; and every error of :func:`judge_check`.
    """
    from evallab.errors import EvallabError
    from evallab.skills import load_evals, load_tree

    path = Path(path)
    specs = list(load_tree(path).values()) if path.is_dir() else [load_evals(path)]
    if not specs:
        raise EvallabError(f"{path}: no evals.json found")
    return pd.concat([judge_check(spec, judge, samples=samples, record=record, progress=progress)[0]
                      for spec in specs], ignore_index=True)
