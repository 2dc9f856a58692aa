"""Positive-bias inflation across anchor sets: the experiment (calls a judge).

The MeowKit rubric rules (spec "Rubric Library", rules 1, 4, 5; ``calibration-guide.md``) claim that PASS-only
anchors inflate an evaluator's pass rate by 40–60% and that FAIL-last anchors prime FAIL. This module measures
both for a user's own judge.

Experiment
----------
:func:`build_requests` / :func:`run_experiment`: judge × items × anchor variants × samples → tidy verdict table
(:mod:`evallab.verdicts`) through :func:`evallab.judges.run_jobs` (any Judge: live, replay, or the local simulated
server). Items are the keryx calibration answers (:func:`evallab.skills.load_calibration_items`: 136 items,
known-right = pass, the other three kinds = fail), each graded against its own scenario's rubric; the anchors of an
item are calibration answers drawn only from OTHER scenarios (no leakage), the same drawn examples for every
variant of the item (so variants differ only in which labels are shown and in what order). Each variant's examples
are a named anchor set (:func:`variant_anchor_set`, :class:`evallab.judges._anchor_sets.AnchorSet`) rendered by
the built-in pointwise template: the balanced / PASS-only / FAIL-last study is one instance of "your anchor sets"
(``evallab judge --anchors FILE``). For a MeowKit rubric
use :func:`evallab.skills.rubric_anchor_set` and :func:`rubric_requests`.

The estimators are :mod:`evallab.metrics._inflation`.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from evallab.errors import DataError
from evallab.judges import Anchor, run_jobs
from evallab.judges._prompts import PROMPT_VERSION
from evallab.judges._templates import builtin_template
from evallab.metrics._contextual import PROBE_PREFIX
from evallab.skills import load_calibration_items
from evallab.skills._rubrics import (
    AnchorExample,
    Rubric,
    anchor_set,
    check_mixed_k,
    is_mixed,
    rubric_anchor_set,
)

#: the default variants of the experiment: the two the issue compares plus the position-priming one
DEFAULT_VARIANTS = ("balanced", "pass-only", "fail-last")
NAN = float("nan")
#: files written by :func:`run_experiment` in ``record_dir``
VERDICTS_FILE = "verdicts.jsonl"
RECORDING_FILE = "anchor-inflation.json"


# --------------------------------------------------------------------------------------------- experiment
def _scenario_rng(seed: int, scenario_id: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(scenario_id.encode("utf-8"))])


def anchor_text(row) -> str:
    """How a labelled calibration answer is shown as an anchor: its task prompt, then the answer."""
    return f"Task prompt: {row['prompt']}\n\nAnswer:\n{row['answer']}"


def draw_anchors(items: pd.DataFrame, scenario_id: str, *, k: int = 4, seed: int = 0
                 ) -> tuple[list[AnchorExample], list[AnchorExample]]:
    """The PASS and FAIL examples available to the items of one scenario, drawn from OTHER scenarios.

    ``k`` PASS examples (gold ``pass`` answers) and ``k`` FAIL examples (one gold ``fail`` answer each), from
    ``k`` distinct other scenarios per verdict, drawn with ``numpy.random.default_rng([seed, crc32(scenario_id)])``.
    ``source`` is the anchor's ``item_id``.

    Raises
    ------
    DataError
        When fewer than ``k`` other scenarios carry an answer of a verdict.
    """
    rng = _scenario_rng(seed, scenario_id)
    # row positions instead of frame selections: the function runs once per scenario over the whole items table
    scenario = items["scenario_id"].to_numpy(dtype=object)
    other = scenario != scenario_id
    out = []
    for verdict in ("pass", "fail"):
        pool = np.flatnonzero(other & (items["gold"] == verdict).to_numpy(dtype=bool, na_value=False))
        scen = sorted(set(scenario[pool]))
        if len(scen) < k:
            raise DataError(f"scenario {scenario_id!r}: only {len(scen)} other scenario(s) have a gold-{verdict} "
                            f"answer; {k} anchors of each verdict need {k}", column="gold")
        chosen = rng.choice(len(scen), size=k, replace=False)
        ex = []
        for c in chosen:
            rows = pool[scenario[pool] == scen[c]]
            r = items.iloc[rows[int(rng.integers(len(rows)))]]
            ex.append(AnchorExample(anchor_text(r), verdict, str(r["item_id"])))
        out.append(ex)
    return out[0], out[1]


def variant_anchor_set(variant: str, chosen: Sequence[AnchorExample]):
    """The examples ``chosen`` for an anchor-set variant (:func:`evallab.skills.anchor_set`: balanced, PASS-only,
    FAIL-last ...) as a named :class:`~evallab.judges._anchor_sets.AnchorSet` (``name`` = the variant, fixed
    order: the variant's arrangement) — the same kind of set ``evallab judge --anchors FILE`` reads; ``None`` for
    no examples (``none``)."""
    from evallab.judges._anchor_sets import anchor_set as named_set

    if not chosen:
        return None
    return named_set(variant, [Anchor(a.text, a.verdict) for a in chosen], kind="pointwise")


def _render(template, aset, md: dict, **kw):
    """One pointwise request from the built-in template with the variant's anchor set (``anchor_set`` = its name)."""
    from evallab.judges._templates import render_pointwise

    return render_pointwise(template, anchors=aset.ordered() if aset else (),
                            metadata={**md, **(aset.metadata() if aset else {})}, **kw)


def _rubric_text(row) -> str:
    return f"{row['rubric']}\n\nTask prompt the answer responds to:\n{row['prompt']}"


def build_requests(items: pd.DataFrame, variants: Sequence[str] = DEFAULT_VARIANTS, *, samples: int = 1, k: int = 4,
                   seed: int = 0, temperature: float = 0.0, judge_seed: int | None = None,
                   max_tokens: int | None = None, content_free: str | None = None,
                   scenarios: Sequence[str] | None = None) -> list:
    """Pointwise judge requests: every item × anchor variant × sample.

    Parameters
    ----------
    items : the keryx items table (:func:`evallab.skills.load_calibration_items`): item_id, dataset, subset,
        scenario_id, kind, gold, answer, prompt, rubric, pass_criteria, fail_criteria.
    variants : anchor-set variant ids (:func:`evallab.skills.anchor_set`).
    samples : repeats per (item, variant), ``sample`` = 0..samples−1.
    k : anchors per set; every variant but ``none`` shows ``k`` (``pass-only``: k PASS; mixed variants: k/2 PASS and
        k/2 FAIL), so ``k`` must be even and ≥ 2 when any mixed variant is requested.
    seed : seed of the anchor draw. ``shuffled-<seed>`` orders use their own seed salted with crc32(item_id), so
        the order varies across items.
    temperature, judge_seed, max_tokens : model parameters passed to the prompt builder.
    content_free : when given, the content-free probe instead (Zhao et al. 2021, "Calibrate Before Use", §5): one
        request per scenario × variant × sample grading this text (e.g. ``""``) against the scenario's rubric with
        the SAME anchors its real answers get; item_id ``content-free:<scenario_id>:<text or "empty">``
        (:data:`evallab.metrics._contextual.PROBE_PREFIX`), kind ``content-free``, gold NA.
    scenarios : build requests only for the items of these scenarios (anchors are still drawn from every scenario
        of ``items``, so a request is the same as in the full build); ``None`` = all.

    Returns
    -------
    list of JudgeRequest, rendered from the built-in ``pointwise`` template with each variant's examples as a named
    anchor set (:func:`variant_anchor_set`) — the text of :func:`evallab.judges.build_pointwise` byte for byte, so
    recordings replay; metadata: item_id, dataset, subset, strategy (the prompt version), anchor_set (the variant),
    order "", sample, gold, scenario_id, kind, anchor_sources (the anchors' item ids, ";"-joined, in presentation
    order), prompt, prompt_sha256.

    Raises
    ------
    DataError
        When ``samples < 1``, ``k < 1``, ``k`` is odd or < 2 with a mixed variant, or a scenario has too few
        other scenarios to draw anchors from.
    """
    if samples < 1:
        raise DataError(f"samples={samples}; expected 1 or more", column="samples")
    if k < 1:
        raise DataError(f"k={k}; expected 1 or more anchors per set", column="k")
    for v in variants:
        if is_mixed(v):
            check_mixed_k(k, v)
    need = {"item_id", "scenario_id", "gold", "answer", "prompt", "rubric", "pass_criteria"}
    missing = sorted(need - set(items.columns))
    if missing:
        raise DataError(f"items table lacks column(s) {missing}; expected load_calibration_items()'s columns",
                        column=missing[0])
    rows = items if scenarios is None else items[items["scenario_id"].isin(list(scenarios))]
    draws = {sid: draw_anchors(items, sid, k=k, seed=seed) for sid in rows["scenario_id"].unique()}
    if content_free is not None:  # one content-free answer per scenario, anchors as drawn above
        first = rows.groupby("scenario_id", sort=False).head(1)
        rows = first.assign(item_id=[f"{PROBE_PREFIX}:{sid}:{content_free or 'empty'}" for sid in first["scenario_id"]],
                            kind="content-free", gold=pd.NA, answer=str(content_free), probe_input=str(content_free))
    template = builtin_template("pointwise")
    reqs = []
    for _, row in rows.iterrows():
        passes, fails = draws[row["scenario_id"]]
        for v in variants:
            chosen = anchor_set(v, passes, fails, k=k, salt=zlib.crc32(str(row["item_id"]).encode("utf-8")))
            aset = variant_anchor_set(v, chosen)
            for s in range(samples):
                md = {"item_id": row["item_id"], "dataset": row.get("dataset", "keryx"),
                      "subset": row.get("subset", ""), "strategy": PROMPT_VERSION, "anchor_set": v, "order": "",
                      "sample": s, "gold": row["gold"], "scenario_id": row["scenario_id"],
                      "kind": row.get("kind", ""), "anchor_sources": ";".join(a.source for a in chosen)}
                reqs.append(_render(template, aset, md, rubric=_rubric_text(row),
                                    pass_criteria=list(row["pass_criteria"]),
                                    fail_criteria=list(row.get("fail_criteria") or []), answer=row["answer"],
                                    temperature=temperature, seed=judge_seed, max_tokens=max_tokens))
    return reqs


def rubric_requests(rubric: Rubric, answers: pd.DataFrame, variants: Sequence[str] = DEFAULT_VARIANTS, *,
                    samples: int = 1, temperature: float = 0.0) -> list:
    """Requests grading ``answers`` (columns item_id, answer, optional gold) against a MeowKit rubric, anchors
    from the rubric's own few-shot examples (:func:`evallab.skills.rubric_anchor_set`; k = what the rubric has).

    The rubric text is its Intent and Criteria, the pass criterion its Grading PASS row, the fail criteria its
    Grading FAIL row and its anti-patterns (rule 7: any one fails).
    """
    text = (rubric.sections.get("Intent", "").strip() + "\n\nCriteria:\n" +
            "\n".join(f"- {c}" for c in rubric.criteria())).strip()
    passes = [rubric.grading.get("PASS", "")] if rubric.grading.get("PASS") else rubric.criteria()
    fails = ([rubric.grading["FAIL"]] if rubric.grading.get("FAIL") else []) + list(rubric.anti_patterns)
    template = builtin_template("pointwise")
    reqs = []
    for v in variants:
        chosen = rubric_anchor_set(rubric, v)
        aset = variant_anchor_set(v, chosen)
        for _, row in answers.iterrows():
            for s in range(samples):
                md = {"item_id": row["item_id"], "dataset": f"meowkit/{rubric.name}", "strategy": PROMPT_VERSION,
                      "anchor_set": v, "order": "", "sample": s, "gold": row.get("gold", pd.NA),
                      "anchor_sources": ";".join(a.source for a in chosen)}
                reqs.append(_render(template, aset, md, rubric=text, pass_criteria=passes, fail_criteria=fails,
                                    answer=row["answer"], temperature=temperature))
    return reqs


def run_experiment(judge, items: pd.DataFrame | str | Path | None = None, variants: Sequence[str] = DEFAULT_VARIANTS, *,
                   samples: int = 1, k: int = 4, seed: int = 0, temperature: float = 0.0,
                   max_items: int | None = None, record_dir: str | Path | None = None,
                   progress: bool = False) -> pd.DataFrame:
    """Run the anchor-set experiment with ``judge`` and return the tidy verdict table.

    Parameters
    ----------
    judge : any :class:`evallab.judges.Judge` (live, replay, or pointed at the local simulated server).
    items : keryx items (default :func:`evallab.skills.load_calibration_items`, 136 items), or a folder
        with ``stacks/*/skills/*/evals.json`` to load them from.
    variants, samples, k, seed, temperature : see :func:`build_requests`.
    max_items : keep the first ``max_items`` scenarios' items (all 4 answers each; anchors are still drawn from
        every other scenario of ``items``); ``None`` or 0 = all.
    record_dir : when set, the replies are appended to ``<record_dir>/verdicts.jsonl`` as they arrive (a rerun
        resumes) and the run is written as a keryx-format recording ``<record_dir>/anchor-inflation.json`` (one entry
        per request digest, kind ``<answer kind>@<anchor set>``) — replay it offline with
        ``evallab.judges.make_judge(replay_dir=record_dir)``.

    Returns
    -------
    DataFrame: the tidy verdict table, plus columns scenario_id, kind, anchor_sources.

    Raises
    ------
    DataError
        A mixed variant (``balanced`` ...) with an odd ``k`` or ``k`` < 2 (:func:`evallab.skills.check_mixed_k`),
        before the items are read or the judge is asked anything.
    """
    for v in variants:
        if is_mixed(v):
            check_mixed_k(k, v)
    if not isinstance(items, pd.DataFrame):
        items = load_calibration_items(items)
    if max_items:
        keep = list(dict.fromkeys(items["scenario_id"]))[:int(max_items)]
        sub = items[items["scenario_id"].isin(keep)]
    else:
        sub = items
    reqs = build_requests(items, variants, samples=samples, k=k, seed=seed, temperature=temperature)
    wanted = set(sub["item_id"])
    reqs = [r for r in reqs if r.metadata["item_id"] in wanted]
    if record_dir:
        rd = Path(record_dir)
        rd.mkdir(parents=True, exist_ok=True)
        return run_jobs(judge, reqs, out=rd / VERDICTS_FILE, progress=progress, record=rd / RECORDING_FILE)
    return run_jobs(judge, reqs, progress=progress)


