"""Anchor calibration, the experiment (calls a judge): content-free probes beside the real items, per anchor set.

Zhao et al. (2021), "Calibrate Before Use", §5: ask the judge to grade a CONTENT-FREE answer (``"N/A"``, ``""``,
``"[MASK]"``) under exactly the prompt — rubric and anchor set — its items are graded under; its P(PASS) there is
the anchor set's pull toward PASS before any content is seen. :func:`probe_requests` adds those requests to the
anchor experiment of :mod:`evallab.experiments._inflation` (same rubric, same drawn anchors, same variants);
:func:`run_probe` runs both through any judge. The estimators are :mod:`evallab.metrics._contextual` (probe
p_cf, contextual calibration); the probe replies carry ``item_id`` ``content-free:<scenario>:<input>`` so they are
told apart from the items (:data:`evallab.metrics._contextual.PROBE_PREFIX`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evallab.experiments._inflation import build_requests
from evallab.judges import run_jobs
from evallab.metrics._contextual import CONTENT_FREE


def probe_requests(items: pd.DataFrame, variants: Sequence[str] = ("balanced", "pass-only"), *, samples: int = 1,
                   k: int = 4, seed: int = 0, content_free: Sequence[str] = CONTENT_FREE,
                   temperature: float = 0.0, scenarios: Sequence[str] | None = None,
                   max_tokens: int | None = None) -> list:
    """Content-free probe requests: for each scenario of ``items`` × variant × content-free input × sample, the
    scenario's rubric and the anchors its items get under that variant
    (:func:`evallab.experiments._inflation.build_requests` with ``content_free``); ``scenarios`` restricts the
    probes to those scenarios (``None`` = all).

    Returns
    -------
    list of JudgeRequest; metadata as in ``build_requests`` with ``item_id`` = ``content-free:<scenario>:<input>``,
    ``gold`` NA, ``kind`` = ``content-free``, ``probe_input`` = the content-free text.
    """
    out = []
    for text in content_free:
        for r in build_requests(items, variants, samples=samples, k=k, seed=seed, temperature=temperature,
                                max_tokens=max_tokens, scenarios=scenarios, content_free=text):
            r.metadata["probe_input"] = text
            out.append(r)
    return out


def run_probe(judge, items: pd.DataFrame, variants: Sequence[str] = ("balanced", "pass-only"), *,
              scenarios: int | None = None, samples: int = 8, k: int = 4, seed: int = 0,
              temperature: float = 0.7, progress: bool = False) -> pd.DataFrame:
    """The items of the first ``scenarios`` scenarios (all when ``None``) and their content-free probes, every
    variant × ``samples`` samples, judged by ``judge``; anchors drawn from every scenario of ``items``.

    Returns
    -------
    DataFrame: the tidy verdict table (items and probes; columns scenario_id, kind, anchor_sources, probe_input).
    """
    keep = list(dict.fromkeys(items["scenario_id"]))[:scenarios] if scenarios else list(items["scenario_id"].unique())
    reqs = build_requests(items, variants, samples=samples, k=k, seed=seed, temperature=temperature, scenarios=keep)
    probes = probe_requests(items, variants, samples=samples, k=k, seed=seed, temperature=temperature, scenarios=keep)
    return run_jobs(judge, reqs + probes, progress=progress)


__all__ = ["probe_requests", "run_probe"]
