"""Items tables → judge requests (what ``evallab judge ITEMS`` sends).

An items table (CSV, TSV, JSONL or Parquet; read by :func:`evallab.datasets.read_table`) has one row
per judged unit:

- pairwise: ``item_id, instruction, output_1, output_2`` (``input`` is accepted for ``instruction``, LLMBar style);
- pointwise: ``item_id, rubric, pass_criteria, answer`` and optionally ``fail_criteria`` (criteria as a JSON list or
  one per line);
- optional everywhere: ``dataset, subset, gold, strategy, anchor_set`` (copied to the verdict table) and ``anchors``
  (a JSON list of ``{"text": ..., "verdict": ...}``; pairwise verdicts ``"1"``/``"2"``).

The prompt is the built-in one of the kind (``vanilla`` / ``pointwise``), or a Jinja2 template file
(``evallab judge --prompt FILE``, :mod:`evallab.judges._templates`); one anchor-set file may be shown to every
item instead of an ``anchors`` column (``--anchors FILE``, :mod:`evallab.judges._anchor_sets`).

Any other column is carried into the verdict table as metadata.

:func:`requests_from_items` builds the requests; :func:`judge_items` reads an items file and runs them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from evallab import verdicts as V
from evallab.errors import DataError
from evallab.judges._prompts import Anchor
from evallab.judges._templates import render_pairwise, render_pointwise
from evallab.judges._types import JudgeRequest

PAIRWISE_COLUMNS = ("item_id", "instruction", "output_1", "output_2")
POINTWISE_COLUMNS = ("item_id", "rubric", "pass_criteria", "answer")
_TEXT = {"instruction", "input", "output_1", "output_2", "rubric", "pass_criteria", "fail_criteria", "answer",
         "anchors"}


def detect_kind(items: pd.DataFrame) -> str:
    """``"pairwise"`` when the table has ``output_1``/``output_2``, ``"pointwise"`` when it has ``answer``."""
    if {"output_1", "output_2"} <= set(items.columns):
        return "pairwise"
    if "answer" in items.columns:
        return "pointwise"
    cols = set(items.columns)
    missing = [c for c in ("output_1", "output_2") if c not in cols] if cols & {"output_1", "output_2"} else []
    raise DataError("cannot tell the judging kind: expected output_1 and output_2 columns (pairwise) or an answer "
                    "column (pointwise)" + (f"; missing {missing}" if missing else ""),
                    column=missing[0] if missing else "answer")


def _criteria(v) -> list[str]:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return []
    if isinstance(v, (list, tuple)) or hasattr(v, "tolist"):
        return [str(x) for x in (v.tolist() if hasattr(v, "tolist") else v)]
    s = str(v).strip()
    if s.startswith("["):
        try:
            return [str(x) for x in json.loads(s)]
        except ValueError:
            pass
    return [line.strip() for line in s.splitlines() if line.strip()]


def _anchors(v, path, row) -> list[Anchor]:
    if v is None or (isinstance(v, float) and pd.isna(v)) or v == "":
        return []
    try:
        items = json.loads(v) if isinstance(v, str) else list(v)
        return [Anchor(str(a["text"]), str(a["verdict"])) for a in items]
    except (ValueError, TypeError, KeyError):
        raise DataError("anchors must be a JSON list of {\"text\": ..., \"verdict\": ...}", path=path, row=row,
                        column="anchors") from None


def _design(items: pd.DataFrame, kind: str, prompt, anchors, path: str | None):
    """The template and the anchor set of a run (:func:`requests_from_items`), checked against the items."""
    from evallab.judges._anchor_sets import AnchorSet, load_anchor_set
    from evallab.judges._templates import builtin_template, prompt_template

    template = prompt_template(prompt) if prompt is not None else builtin_template(
        "vanilla" if kind == "pairwise" else "pointwise")
    if template.kind != kind:
        raise DataError(f"is a {template.kind} template; the items are {kind}", template.path or template.name,
                        column="prompt")
    if template.prompt_version.startswith("template:") and "strategy" in items.columns:
        raise DataError(f"has a strategy column and the prompt {template.identity} names the strategy too; drop the "
                        "column (the rows' strategy is the template's name@sha256)", path, column="strategy")
    aset = None
    if anchors is not None:
        aset = anchors if isinstance(anchors, AnchorSet) else load_anchor_set(anchors)
        if aset.kind != kind:
            raise DataError(f"anchor set {aset.name!r} is {aset.kind}; the items are {kind}", str(anchors)
                            if not isinstance(anchors, AnchorSet) else None, column="kind")
        for c in ("anchors", "anchor_set"):
            if c in items.columns:
                raise DataError(f"has an {c} column and an anchor set ({aset.name}) is given for every item; "
                                "expected one of the two", path, column=c)
    return template, aset


def requests_from_items(items: pd.DataFrame, *, kind: str = "auto", orders: Sequence[str] = ("ab", "ba"),
                        samples: int = 1, temperature: float = 0.0, seed: int | None = None,
                        max_tokens: int | None = None, path: str | Path | None = None, prompt=None,
                        anchors=None) -> list[JudgeRequest]:
    """One request per (item, order, sample) — pairwise — or per (item, sample) — pointwise.

    Parameters
    ----------
    items : DataFrame
        See the module docstring.
    kind : {"auto", "pairwise", "pointwise"}
    orders : sequence of {"ab", "ba"}
        Pairwise orders to ask (both by default, for position-bias estimates).
    samples : int
        Repeats per request (``sample`` 0 … samples−1), for self-agreement.
    temperature, seed, max_tokens : model parameters.
    path : path, optional
        The items file, named in errors.
    prompt : PromptTemplate, str or Path, optional
        The prompt (:func:`evallab.judges._templates.prompt_template`: a template file or a built-in name);
        default the built-in one of the kind (``vanilla`` / ``pointwise``). Every request carries ``prompt``
        (``name@sha256[:12]``) and ``prompt_sha256``; a template FILE's rows get ``strategy`` = ``name@sha256[:12]``
        (:func:`evallab.judges._runner.default_strategy`), a built-in's keep their prompt version.
    anchors : AnchorSet, str or Path, optional
        An anchor-set file or :class:`~evallab.judges._anchor_sets.AnchorSet` shown to every item (its order: fixed
        or shuffled with its seed), its name in ``anchor_set``.

    Raises
    ------
    DataError
        A missing column, an empty required cell, a duplicated ``item_id`` or a ``gold`` label outside the kind's
        verdicts (``1``/``2``/``tie`` pairwise, ``pass``/``warn``/``fail`` pointwise) — file, row and column named,
        before any request is sent; a prompt or anchor set of the other kind, or beside an items column that names
        the same thing (``strategy`` with a template file; ``anchors``/``anchor_set`` with an anchor set).
    """
    p = str(path) if path else None
    if kind == "auto":
        try:
            kind = detect_kind(items)
        except DataError as exc:
            raise DataError(exc.message, path=p, column=exc.column) from None
    if "instruction" not in items.columns and "input" in items.columns:
        items = items.rename(columns={"input": "instruction"})
    need = PAIRWISE_COLUMNS if kind == "pairwise" else POINTWISE_COLUMNS
    missing = [c for c in need if c not in items.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}; a {kind} items table needs {list(need)}", path=p,
                        column=missing[0])
    if samples < 1:
        raise DataError(f"samples={samples}; expected 1 or more")
    bad = [o for o in orders if o not in ("ab", "ba")]
    if bad or not orders:
        raise DataError(f"orders {list(orders)}; expected 'ab' and/or 'ba'")
    template, aset = _design(items, kind, prompt, anchors, p)
    ids = items["item_id"].astype("string")
    dup = ids.duplicated()
    if dup.any():
        r = int(dup.to_numpy().nonzero()[0][0]) + 1
        raise DataError(f"duplicated item_id {ids[dup].iloc[0]!r}; expected one row per item", path=p, row=r,
                        column="item_id")
    out: list[JudgeRequest] = []
    for r, rec in enumerate(items.to_dict("records"), start=1):
        for c in need:
            v = rec[c]
            if v is None or (isinstance(v, float) and pd.isna(v)) or (isinstance(v, str) and not v.strip()):
                raise DataError(f"empty {c}; every {kind} item needs one", path=p, row=r, column=c)
        meta = {k: v for k, v in rec.items() if k not in _TEXT and not (isinstance(v, float) and pd.isna(v))}
        meta["item_id"] = str(rec["item_id"])
        if "gold" in meta:  # checked before anything is sent: a bad label would fail the run's table
            g = V.norm_label(meta["gold"])
            allowed = V.PAIRWISE_VERDICTS if kind == "pairwise" else V.POINTWISE_VERDICTS
            if g is None:
                meta.pop("gold")
            elif g not in allowed:
                raise DataError(f"gold {meta['gold']!r}; expected one of {list(allowed)} for a {kind} item, or empty",
                                path=p, row=r, column="gold")
        shown = aset.ordered() if aset is not None else _anchors(rec.get("anchors"), p, r)
        if aset is not None:
            meta.update(aset.metadata())
        try:
            for j in range(samples):
                if kind == "pairwise":
                    for o in orders:
                        out.append(render_pairwise(template, str(rec["instruction"]), str(rec["output_1"]),
                                                   str(rec["output_2"]), order=o, anchors=shown,
                                                   metadata={**meta, "sample": j}, temperature=temperature,
                                                   seed=seed, max_tokens=max_tokens))
                else:
                    out.append(render_pointwise(template, rubric=str(rec["rubric"]),
                                                pass_criteria=_criteria(rec["pass_criteria"]),
                                                fail_criteria=_criteria(rec.get("fail_criteria")),
                                                answer=str(rec["answer"]), anchors=shown,
                                                metadata={**meta, "sample": j}, temperature=temperature,
                                                seed=seed, max_tokens=max_tokens))
        except DataError:
            raise
        except Exception as exc:  # builder errors (bad anchor verdict, no pass criterion)
            raise DataError(str(exc), path=p, row=r) from None
    return out


def _judge_prompt(judge):
    """``judge.prompt`` when :func:`~evallab.judges.make_judge` set one (a template), else ``None``."""
    from evallab.judges._templates import PromptTemplate

    t = getattr(judge, "prompt", None)
    return t if isinstance(t, PromptTemplate) else None


def judge_items(items: str | Path, judge, *, out: str | Path | None = None, kind: str = "auto",
                orders: Sequence[str] = ("ab", "ba"), samples: int = 1, temperature: float = 0.0,
                seed: int | None = None, max_tokens: int | None = None, limit: int = 0,
                reasoning_effort: str | Sequence[str] | None = None, thinking_budget: int | None = None,
                prompt=None, anchors=None, **run) -> pd.DataFrame:
    """Judge every item of an items file (``evallab judge ITEMS``): read it, build the requests
    (:func:`requests_from_items`) and run them (:func:`evallab.judges.run_jobs`: resumable, cached, recorded).

    Parameters
    ----------
    items : str or Path
        The items table (``.csv``, ``.tsv``, ``.jsonl`` or ``.parquet``; see the module docstring).
    judge : Judge
        e.g. from :func:`evallab.judges.make_judge`.
    out : str or Path, optional
        The verdict table appended to as replies arrive (``.parquet``, ``.jsonl`` or ``.csv``; rerun to resume).
    kind : {"auto", "pairwise", "pointwise"}, default "auto"
    orders : sequence of {"ab", "ba"}, default ("ab", "ba")
        Pairwise orders to ask.
    samples : int, default 1
        Repeats per request (self-agreement).
    temperature, seed, max_tokens : model parameters of every request.
    limit : int, default 0
        Only the first ``limit`` items (0: all).
    reasoning_effort : str or sequence of str, optional
        Sent as ``reasoning_effort`` (``"low"``, ``"medium"``, ``"high"`` ...); several (``["low", "high"]`` or
        ``"low,high"``) ask every request at each effort — a design factor: the rows' ``strategy`` ends
        ``@<effort>`` and their ``reasoning_effort`` column names it.
    thinking_budget : int, optional
        Thinking tokens allowed (:attr:`~evallab.judges.JudgeRequest.thinking_budget`).
    prompt : str, Path or PromptTemplate, optional
        A Jinja2 template file or a built-in name (``evallab judge --prompt``); default ``judge.prompt`` (set by
        :func:`~evallab.judges.make_judge` ``prompt=``), else the built-in prompt of the kind. See
        :func:`requests_from_items`.
    anchors : str, Path or AnchorSet, optional
        An anchor-set file shown to every item (``evallab judge --anchors``), recorded as ``anchor_set``.
    **run
        Passed to :func:`evallab.judges.run_jobs`: ``progress``, ``record``, ``wait``, ``batch``,
        ``poll_interval``, ``max_in_flight``.

    Returns
    -------
    DataFrame
        The tidy verdict table of every reply in ``out`` (this run's and earlier ones'), with the run's counters
        in ``df.attrs["run"]`` (:func:`evallab.judges._runner.describe_run` says them in one sentence).

    Raises
    ------
    DataError
        A bad items table (file, row and column named) before any request is sent; and every error of
        :func:`evallab.judges.run_jobs`.
    """
    from evallab.datasets._generic import read_table
    from evallab.judges._runner import run_jobs

    table = read_table(items)
    if limit:
        table = table.head(limit)
    reqs = requests_from_items(table, kind=kind, orders=orders, samples=samples, temperature=temperature,
                               seed=seed, max_tokens=max_tokens, path=items,
                               prompt=prompt if prompt is not None else _judge_prompt(judge),
                               anchors=anchors)
    efforts = reasoning_effort.split(",") if isinstance(reasoning_effort, str) else list(reasoning_effort or [])
    efforts = [e.strip() for e in efforts if e and e.strip()]
    if efforts or thinking_budget is not None:
        from dataclasses import replace

        reqs = [replace(r, reasoning_effort=e, thinking_budget=thinking_budget) for e in (efforts or [None])
                for r in reqs]
    return run_jobs(judge, reqs, out=out, **run)
