"""Drift experiments that call a judge: a calibration set replayed through any :class:`evallab.judges.Judge`, the
MeowKit rule-6 check on it, and keryx's re-verify mode (re-judge a seeded sample of recorded verdicts); and the
drift gate between two verdict files (:func:`compare_files`, ``evallab drift``).

The estimators are :mod:`evallab.metrics._drift`; the calibration-set format is
:func:`evallab.datasets.load_gold_set`. Prompts are built with :func:`evallab.judges.build_pairwise` /
:func:`~evallab.judges.build_pointwise` unless a ``build_request`` callable is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evallab import verdicts as V
from evallab.errors import DataError, EvallabError
from evallab.judges import JudgeRequest, build_pairwise, build_pointwise, run_jobs
from evallab.judges._types import Message
from evallab.metrics._drift import DEFAULT_TOLERANCE, DriftReport, check_table, compare


def _plan(gold_set: pd.DataFrame, orders: Sequence[str], samples: int) -> list[dict]:
    """One dict per request to make: item row + order + sample."""
    if samples < 1:
        raise EvallabError(f"samples={samples}; expected >= 1")
    bad = [o for o in orders if o not in ("ab", "ba")]
    if bad or not orders:
        raise EvallabError(f"orders={list(orders)}; expected a non-empty subset of ['ab', 'ba']")
    plan = []
    for item in gold_set.to_dict("records"):
        item = {k: v for k, v in item.items() if not (np.isscalar(v) and pd.isna(v))}
        if item["kind"] == "pointwise":
            item_orders = [""]
        elif item.get("messages") is not None:
            item_orders = [item["order"]]
        else:
            item_orders = list(orders)
        for o in item_orders:
            for s in range(samples):
                plan.append({**item, "order": o, "sample": s})
    return plan


def default_request(job: dict):
    """The request for one planned reply: the item's own ``messages`` when given, else the prompt builders of
    :func:`evallab.judges.build_pairwise` / :func:`~evallab.judges.build_pointwise` (LLMBar-shaped pairwise;
    keryx-shaped pointwise). The request metadata carries the reply's identity (item_id, dataset, subset, rubric,
    strategy, anchor_set, order, sample, gold)."""
    meta = {k: job.get(k) for k in ("item_id", "dataset", "subset", "rubric", "strategy", "gold", "order",
                                    "sample")}
    meta["anchor_set"] = job.get("anchor_set") or "none"
    if job.get("messages") is not None:
        return JudgeRequest([Message(m["role"], m["content"]) for m in job["messages"]], kind=job["kind"],
                            metadata=meta, prompt_version=str(job.get("prompt_version", "")))
    if job["kind"] == "pairwise":
        return build_pairwise(job["instruction"], job["output_1"], job["output_2"], order=job["order"],
                              metadata=meta)
    return build_pointwise(rubric=job["rubric_text"], pass_criteria=job["pass_criteria"],
                           fail_criteria=job.get("fail_criteria") or (), answer=job["answer"],
                           metadata=meta)


def _verdict_rows(plan: list[dict], *, judge: str, strategy: str) -> pd.DataFrame:
    """The gold labels as verdict rows of the planned requests."""
    rows = [{"item_id": j["item_id"], "dataset": j.get("dataset", "calibration"), "subset": j.get("subset", ""),
             "judge": judge, "model": judge, "strategy": j.get("strategy") or strategy,
             "anchor_set": j.get("anchor_set", "none"), "order": j["order"], "sample": j["sample"],
             "verdict": j["gold"], "gold": j["gold"], "rubric": j.get("rubric", "")} for j in plan]
    return V.coerce(pd.DataFrame(rows))


def _run_plan(judge, plan: list[dict], build_request, **run_kw) -> pd.DataFrame:


    build = build_request or default_request
    return run_jobs(judge, [build(j) for j in plan], **run_kw)


def replay(judge, gold_set: pd.DataFrame, *, orders: Sequence[str] = ("ab", "ba"), samples: int = 1,
           strategy: str = "calibration", build_request: Callable[[dict], object] | None = None,
           out: str | Path | None = None, record: str | Path | None = None, progress: bool = False,
           max_in_flight: int | None = None) -> pd.DataFrame:
    """Replay a calibration set through any :class:`evallab.judges.Judge` (live, replay, local server, fake).

    Parameters
    ----------
    judge : object with ``label``, ``model`` and ``async judge(request) -> JudgeReply``.
    gold_set : items table of :func:`load_gold_set` / :func:`gold_set_frame`.
    orders : pairwise orders to ask (each item is judged in each; items with their own ``messages`` once).
    samples : repeats per request (``sample`` 0..samples−1 in the request metadata).
    strategy : the ``strategy`` label of the rows (unless an item sets its own).
    build_request : ``job dict → JudgeRequest`` (default :func:`default_request`); the job holds the item's
        fields plus ``order``, ``sample`` and ``strategy``.
    out, record, progress, max_in_flight : passed to :func:`evallab.judges.run_jobs` (append-as-you-go output
        with resume, a keryx-format recording of the run, a progress bar, concurrency).

    Returns
    -------
    DataFrame — the tidy verdict table of the replies (``gold`` from the set, extra column ``rubric``, plus the
    runner's columns); an unparsed reply is an NA verdict with ``error`` set, counted, never scored as wrong.

    Raises
    ------
    EvallabError
        Bad ``orders``/``samples``; errors of the runner (a fatal HTTP error, a replay miss) stop the run.
    """
    plan = [{**j, "strategy": j.get("strategy") or strategy} for j in _plan(gold_set, orders, samples)]
    return _run_plan(judge, plan, build_request, out=out, record=record, progress=progress,
                     max_in_flight=max_in_flight)


def gold_verdicts(gold_set: pd.DataFrame, *, orders: Sequence[str] = ("ab", "ba"), samples: int = 1,
                  judge: str = "gold") -> pd.DataFrame:
    """The gold labels as a perfect judge's verdict table (same requests as :func:`replay`): the baseline of a
    calibration replay when no recorded baseline run exists — the gate then bounds the candidate's
    disagreement with gold itself."""
    return _verdict_rows(_plan(gold_set, orders, samples), judge=judge, strategy="calibration")


def compare_files(baseline: str | Path, candidate: str | Path, **kwargs) -> DriftReport:
    """The drift gate between two verdict files (``evallab drift``): both loaded
    (:func:`evallab.datasets.load_verdicts`) and compared (:func:`evallab.metrics._drift.compare`).

    Parameters
    ----------
    baseline, candidate : str or Path
        The baseline judge's and the candidate judge's verdict tables on the same requests (``.csv``, ``.jsonl``
        or ``.parquet``, tidy schema).
    **kwargs
        ``by``, ``match_on``, ``tolerance``, ``alpha``, ``adjust``, ``confidence``, ``n_resamples``, ``seed``
        of :func:`evallab.metrics._drift.compare`.

    Returns
    -------
    DriftReport

    Raises
    ------
    DataError
        A file that cannot be loaded, or a table the comparison refuses — naming the file (not "baseline" or
        "candidate").
    """
    from evallab.datasets import load_verdicts

    b, c = load_verdicts(baseline), load_verdicts(candidate)
    try:
        return compare(b, c, **kwargs)
    except EvallabError as exc:
        if getattr(exc, "path", None) in ("baseline", "candidate"):
            exc.path = str(baseline if exc.path == "baseline" else candidate)
        raise


def calibration_drift(judge, gold_set: pd.DataFrame | str | Path, *,
                      baseline: pd.DataFrame | str | Path | None = None,
                      tolerance: float = DEFAULT_TOLERANCE, by: Sequence[str] = ("subset", "rubric"),
                      orders: Sequence[str] = ("ab", "ba"), samples: int = 1,
                      build_request: Callable[[dict], object] | None = None, n_resamples: int = 1000,
                      seed: int = 0, **run_kw) -> tuple[pd.DataFrame, DriftReport]:
    """MeowKit rule 6: replay the calibration set with the new judge and gate its agreement with gold.

    Parameters
    ----------
    gold_set : the calibration set (:func:`evallab.datasets.load_gold_set`), or its JSONL file.
    baseline : the recorded verdicts of the current judge on the same set (e.g. an earlier :func:`replay`
        saved to CSV), or their file (:func:`evallab.datasets.load_verdicts`). ``None``: the gold labels
        themselves (:func:`gold_verdicts`), so the gate flags every group where the new judge disagrees with gold
        on more than ``tolerance`` of its replies.
    by : grouping (those present in both tables are used; default subset and rubric).
    run_kw : ``out``, ``record``, ``progress``, ``max_in_flight`` for the runner.
    Other parameters as in :func:`replay` and :func:`compare`.

    Returns
    -------
    (candidate verdict table, DriftReport) — paired on (item_id, order, sample).
    """
    if isinstance(gold_set, (str, Path)):
        from evallab.datasets import load_gold_set

        gold_set = load_gold_set(gold_set)
    if isinstance(baseline, (str, Path)):
        from evallab.datasets import load_verdicts

        baseline = load_verdicts(baseline)
    cand = replay(judge, gold_set, orders=orders, samples=samples, build_request=build_request, **run_kw)
    base = baseline if baseline is not None else gold_verdicts(gold_set, orders=orders, samples=samples)
    base = check_table(base, "baseline")
    by = [c for c in by if c in cand.columns and c in base.columns]
    rep = compare(base, cand, by=by, match_on=("item_id", "order", "sample"), tolerance=tolerance,
                  n_resamples=n_resamples, seed=seed)
    return cand, rep


@dataclass
class ReverifyResult:
    """Re-verify mode: a seeded sample of recorded verdicts re-judged by a new judge.

    Attributes
    ----------
    sample : DataFrame, one row per re-judged reply: the key, ``verdict_recorded``, ``verdict_new``, ``gold``,
        ``error_new``, ``both_parsed``, ``changed``, ``agrees`` (NA when either reply is unparsed).
    disagreements : the rows of ``sample`` where both parsed and the verdicts differ.
    report : DriftReport of recorded (baseline) vs new (candidate) on the sample.
    items : the sampled item ids, in sampling order.
    """

    sample: pd.DataFrame
    disagreements: pd.DataFrame
    report: DriftReport
    items: list[str]


def reverify(judge, recorded: pd.DataFrame, items: pd.DataFrame, *, n_items: int = 50, seed: int = 0,
             by: Sequence[str] = ("subset",), build_request: Callable[[dict], object] | None = None,
             tolerance: float = DEFAULT_TOLERANCE, n_resamples: int = 1000, **run_kw) -> ReverifyResult:
    """Re-judge a random (seeded) sample of recorded verdicts with ``judge`` and report where it disagrees.

    Parameters
    ----------
    recorded : tidy verdict table of ONE judge (the recorded verdicts).
    items : the texts, keyed by ``item_id``, in the calibration-set fields (``instruction``/``output_1``/
        ``output_2`` for pairwise; ``answer``/``rubric_text``/``pass_criteria`` for pointwise; or ``messages``).
        LLMBar's ``load_llmbar(with_text=True).items`` works as is (``input`` is read as ``instruction``).
    n_items : items to sample (without replacement; all when fewer); every recorded reply of a sampled item
        (each strategy, order and sample) is re-judged with the same order and sample index.
    seed : ``numpy.random.default_rng(seed)`` draws the sample from the sorted item ids.
    run_kw : ``out``, ``record``, ``progress``, ``max_in_flight`` for :func:`evallab.judges.run_jobs`.

    Returns
    -------
    ReverifyResult

    Raises
    ------
    DataError
        More than one judge in ``recorded``, or sampled items without texts in ``items``.
    """
    recorded = check_table(recorded, "recorded")
    judges = recorded["judge"].dropna().unique()
    if len(judges) != 1:
        raise DataError(f"recorded holds {len(judges)} judges {sorted(judges)[:5]}; expected one", path="recorded",
                        column="judge")
    ids = np.array(sorted(recorded["item_id"].unique()))
    rng = np.random.default_rng(seed)
    chosen = [str(i) for i in rng.choice(ids, size=min(n_items, len(ids)), replace=False)] if len(ids) else []
    it = items.copy()
    if "input" in it.columns and "instruction" not in it.columns:
        it = it.rename(columns={"input": "instruction"})
    it = it.drop_duplicates("item_id").set_index("item_id")
    missing = [i for i in chosen if i not in it.index]
    if missing:
        raise DataError(f"{len(missing)} sampled item(s) have no text in items, e.g. {missing[0]!r}",
                        path="items", column="item_id")
    rec = recorded[recorded["item_id"].isin(chosen)].copy()
    pairwise = (rec["order"].isin(["ab", "ba"]) | rec["verdict"].isin(V.PAIRWISE_VERDICTS)
                | rec["gold"].isin(V.PAIRWISE_VERDICTS)).fillna(False)
    pointwise = ~pairwise
    rec.loc[~pointwise & (rec["order"] == ""), "order"] = "ab"  # a pairwise reply of unknown order: ask as shown
    plan = []
    for r, pw in zip(rec.to_dict("records"), pointwise, strict=True):
        src = {k: v for k, v in it.loc[r["item_id"]].to_dict().items() if not (np.isscalar(v) and pd.isna(v))}
        plan.append({**src, "item_id": r["item_id"], "kind": "pointwise" if pw else "pairwise",
                     "gold": None if pd.isna(r["gold"]) else r["gold"], "dataset": r["dataset"],
                     "subset": r["subset"], "strategy": r["strategy"], "anchor_set": r["anchor_set"],
                     "order": r["order"], "sample": int(r["sample"])})
    run_kw.setdefault("progress", False)
    new = _run_plan(judge, plan, build_request, **run_kw).reset_index(drop=True)
    if len(new) == len(rec) and (new["item_id"].to_numpy() == rec["item_id"].to_numpy()).all():
        # the runner labels an empty strategy with the prompt version: keep the recorded label to pair replies
        new["strategy"] = rec["strategy"].to_numpy()
    match = ["dataset", "item_id", "strategy", "anchor_set", "order", "sample"]
    by = [c for c in by if c in rec.columns and c in new.columns]
    rep = compare(rec, new[list(V.COLUMNS)], by=by,
                  match_on=match, tolerance=tolerance, n_resamples=n_resamples, seed=seed)
    s = rep.pairs.rename(columns={"verdict_baseline": "verdict_recorded", "verdict_candidate": "verdict_new"})
    s = s.merge(new[match + ["error"]].rename(columns={"error": "error_new"}), on=match, how="left")
    s["agrees"] = pd.array(np.where(s["both_parsed"], ~s["changed"], None), dtype="boolean")
    s = s.drop(columns=["judge_baseline", "judge_candidate"], errors="ignore")
    dis = s[s["changed"]].reset_index(drop=True)
    return ReverifyResult(sample=s, disagreements=dis, report=rep, items=chosen)


