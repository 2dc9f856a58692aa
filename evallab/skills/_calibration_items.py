"""The four labelled calibration answers of every keryx judge scenario as a flat items table (the inflation
experiment's items).

Source: spec 000, "The schema": ``known_right`` must PASS; ``known_wrong``, ``vague`` and ``subtle_wrong`` must FAIL.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from evallab.errors import DataError
from evallab.paths import data_dir
from evallab.skills._scenario_schema import EvalSpec, load_tree

#: calibration field -> (answer kind as in keryx recordings, gold verdict)
CALIBRATION_KINDS = {"known_right": ("known-right", "pass"), "known_wrong": ("known-wrong", "fail"),
                     "vague": ("vague", "fail"), "subtle_wrong": ("subtle-wrong", "fail")}
CALIBRATION_COLUMNS = ["item_id", "dataset", "subset", "scenario_id", "kind", "gold", "answer", "prompt", "rubric",
           "pass_criteria", "fail_criteria", "path"]


def load_calibration_items(root: str | Path | None = None) -> pd.DataFrame:
    """The calibration answers of every scenario under ``root`` that carries a judge expectation, as a flat table
    of labelled items (:func:`load_tree` then :func:`calibration_items`).

    Source: spec 000, "The schema": a scenario's judge expectation (``grader == "judge"``) carries ``rubric``,
    ``pass_criteria`` and ``fail_criteria``; the scenario's ``calibration`` holds four hand-written answers —
    ``known_right`` must PASS; ``known_wrong``, ``vague`` and ``subtle_wrong`` must FAIL.

    Parameters
    ----------
    root : folder holding ``stacks/<pack>/skills/<skill>/evals.json`` (default the bundled ``data/keryx``).

    Returns
    -------
    DataFrame, one row per answer (the bundled data: 34 scenarios × 4 = 136 rows, 34 gold ``pass``, 102 ``fail``),
    columns: ``item_id`` (``<scenario_id>/<kind>``, the keryx recording naming), ``dataset`` ("keryx"),
    ``subset`` (``<pack>__<skill>``), ``scenario_id``, ``kind`` (known-right, known-wrong, vague, subtle-wrong),
    ``gold`` ("pass" for known-right, else "fail"), ``answer`` (text), ``prompt`` (the scenario's prompt),
    ``rubric`` (str), ``pass_criteria`` / ``fail_criteria`` (lists of str), ``path`` (the evals.json).

    Raises
    ------
    EvalSpecError
        A malformed evals.json (file, scenario and field named).
    DataError
        No evals.json under ``root``, or a scenario id used in two files.
    """
    base = Path(root) if root else data_dir("keryx")
    specs = load_tree(base)
    if not specs:
        raise DataError("no evals.json found; expected stacks/<pack>/skills/<skill>/evals.json", path=str(base))
    return calibration_items(specs)


def calibration_items(specs: Mapping[str, EvalSpec]) -> pd.DataFrame:
    """The calibration answers of the judge scenarios of ``specs`` (see :func:`load_calibration_items`).

    Raises
    ------
    DataError
        A scenario id used in two files.
    """
    rows = []
    seen: dict[str, str] = {}
    for name, spec in specs.items():
        for s in spec.scenarios:
            j = s.judge
            if j is None or s.calibration is None:
                continue
            if s.id in seen:
                raise DataError(f"scenario id {s.id!r} is also used in {seen[s.id]}; item ids must be unique",
                                path=spec.path, column="id")
            seen[s.id] = spec.path
            for key, (kind, gold) in CALIBRATION_KINDS.items():
                rows.append({"item_id": f"{s.id}/{kind}", "dataset": "keryx", "subset": name, "scenario_id": s.id,
                             "kind": kind, "gold": gold, "answer": getattr(s.calibration, key), "prompt": s.prompt,
                             "rubric": j.rubric, "pass_criteria": list(j.pass_criteria),
                             "fail_criteria": list(j.fail_criteria), "path": spec.path})
    return pd.DataFrame(rows, columns=CALIBRATION_COLUMNS)
