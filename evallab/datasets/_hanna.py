"""HANNA (Chhun et al., COLING 2022; LLM ratings from Chhun, Suchanek & Clavel, TACL 2024): 1,056 generated
stories rated 1–5 on six criteria by three human raters and by five LLM judges under four prompt variants.

Bundled in ``data/hanna`` (see its SOURCE.md): ``hanna_metric_scores_llm.csv``, one row per story generator whose
cells are Python-literal lists of 96 ratings, one per story.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from evallab import _fileio as F
from evallab import verdicts as V
from evallab.errors import DataError
from evallab.paths import data_dir

FILE = "hanna_metric_scores_llm.csv"
#: criterion code in the file → the criterion's name (COLING 2022, §3.2)
CRITERIA = {"RE": "Relevance", "CH": "Coherence", "EM": "Empathy", "SU": "Surprise", "EG": "Engagement",
            "CX": "Complexity"}
HUMANS = ("Human 1", "Human 2", "Human 3")
JUDGES = ("Beluga-13B", "OrcaPlatypus", "Mistral-7B", "Llama-13B", "ChatGPT")
PROMPTS = (1, 2, 3, 4)
STORIES_PER_GENERATOR = 96
SCORE_ONLY = "score-only: HANNA gives 1–5 ratings (in score), no pass/warn/fail verdict"
BELOW_SCALE = ("the judge's averaged rating {value:.3g} is below 1: at least one of its samples was unparsed "
               "(HANNA encodes it as -1 or 0), so the mean is not a rating")


def _cells(raw: pd.DataFrame, column: str, path: Path) -> np.ndarray:
    """The column's per-generator lists as one float array (generators in file order, 96 stories each)."""
    out = []
    for r, (model, cell) in enumerate(zip(raw["Model"], raw[column], strict=True), start=1):
        try:
            v = json.loads(str(cell).replace("nan", "NaN"))
        except ValueError:
            try:
                v = ast.literal_eval(str(cell))
            except (ValueError, SyntaxError):
                v = None
        if not isinstance(v, list) or len(v) != STORIES_PER_GENERATOR:
            raise DataError(f"generator {model!r}: expected a list of {STORIES_PER_GENERATOR} ratings, got "
                            f"{str(cell)[:40]!r} (file line {r + 1})", path=str(path), row=r, column=column)
        try:
            out.append(np.asarray(v, dtype=float))
        except (TypeError, ValueError):
            raise DataError(f"generator {model!r}: a rating that is not a number (file line {r + 1})",
                            path=str(path), row=r, column=column) from None
    return np.concatenate(out)


def load_hanna(path: str | Path | None = None, *, criteria: Sequence[str] | None = None,
               judges: Sequence[str] | None = None, prompts: Sequence[int] | None = None) -> pd.DataFrame:
    """HANNA as a tidy score table: one row per (story, rater, criterion).

    Parameters
    ----------
    path : str or Path, optional
        Folder holding ``hanna_metric_scores_llm.csv``; default the bundled ``data/hanna``.
    criteria : sequence of str, optional
        Criterion names to keep (``Relevance``, ``Coherence``, ``Empathy``, ``Surprise``, ``Engagement``,
        ``Complexity``); None = all six.
    judges : sequence of str, optional
        LLM judges to keep (``Beluga-13B``, ``OrcaPlatypus``, ``Mistral-7B``, ``Llama-13B``, ``ChatGPT``);
        None = all five. The three human raters are always kept.
    prompts : sequence of int, optional
        Prompt variants 1–4 to keep; None = all four.

    Returns
    -------
    DataFrame
        The tidy table (:mod:`evallab.verdicts`), 1,056 stories × 6 criteria × 23 raters = 145,728 rows by
        default: ``item_id`` = ``<generator>#<prompt index 0-95>`` (the story), ``dataset`` = ``hanna``,
        ``subset`` = the story generator, ``judge`` = ``Human 1``…``Human 3`` or the LLM judge, ``model`` = the
        judge, ``strategy`` = ``prompt 1``…``prompt 4`` (humans: ""), ``score`` = the rating (humans: integer 1–5;
        judges: the mean over their samples), ``verdict`` NA with ``error`` saying the table is score-only — or,
        for the 1,051 judge means below 1 (an unparsed sample averaged in), ``score`` NA with ``error`` saying
        so. Extra columns: ``criterion`` (part of the key, :data:`evallab.verdicts.KEY_EXTRAS`), ``role``
        (``human``/``judge``), ``raw_score`` (the value in the file) and the declared scale (``scale_min`` 1,
        ``scale_max`` 5; humans ``scale_step`` 1, ``scale_level`` ordinal; judges step NA — any value — and
        interval), checked on load.

    Raises
    ------
    DataError
        A missing folder or file, a missing column (named), a cell that is not a list of 96 numbers (file line
        and column named), a filter value that is not in HANNA.

    Examples
    --------
    >>> t = load_hanna(criteria=["Coherence"], judges=["ChatGPT"], prompts=[1])
    >>> len(t), sorted(t["judge"].unique())
    (4224, ['ChatGPT', 'Human 1', 'Human 2', 'Human 3'])
    """
    folder = F.check_folder(Path(path) if path else data_dir("hanna"),
                            "HANNA's folder with hanna_metric_scores_llm.csv (see data/hanna/SOURCE.md)")
    p = folder / FILE
    names = {v: k for k, v in CRITERIA.items()}
    wanted_cols = {"Model", *(f"{h} {k}" for h in HUMANS for k in CRITERIA),
                   *(f"{j} {k} {i}" for j in JUDGES for k in CRITERIA for i in PROMPTS)}
    raw = F.read_csv(p, f"HANNA's {FILE} (see data/hanna/SOURCE.md)", dtype=object,
                     usecols=lambda c: c in wanted_cols)
    crit = list(criteria) if criteria else list(CRITERIA.values())
    for name, wanted, allowed in (("criteria", crit, list(CRITERIA.values())),
                                  ("judges", list(judges or JUDGES), list(JUDGES)),
                                  ("prompts", [int(x) for x in (prompts or PROMPTS)], list(PROMPTS))):
        bad = [w for w in wanted if w not in allowed]
        if bad:
            raise DataError(f"{name}={bad}: not in HANNA; expected some of {allowed}", path=str(p), column=name)
    if "Model" not in raw.columns:
        raise DataError("missing column 'Model' (the story generator); expected HANNA's layout", path=str(p),
                        column="Model")
    generators = np.repeat(raw["Model"].to_numpy(dtype=object), STORIES_PER_GENERATOR)
    story = np.tile(np.arange(STORIES_PER_GENERATOR), len(raw))
    item_ids = pd.array([f"{g}#{i:02d}" for g, i in zip(generators, story, strict=True)], dtype="string")
    raters = [(h, "", h + " {c}", "human") for h in HUMANS]
    raters += [(j, f"prompt {k}", f"{j} {{c}} {k}", "judge") for j in (judges or JUDGES)
               for k in (prompts or PROMPTS)]
    keys, values = [], []
    for c in crit:
        for judge, strategy, pattern, role in raters:
            col = pattern.format(c=names[c])
            if col not in raw.columns:
                raise DataError(f"missing column {col!r}; expected HANNA's layout (see data/hanna/SOURCE.md)",
                                path=str(p), column=col)
            keys.append((judge, strategy, c, role))
            values.append(_cells(raw, col, p))
    n = len(item_ids)
    v = np.concatenate(values)
    part = np.repeat(np.arange(len(keys)), n)

    def spread(i: int, dtype: str = "string"):  # one value per part, spread over its rows
        return pd.array(np.array([k[i] for k in keys], dtype=object)[part], dtype=dtype)

    human = np.array([k[3] == "human" for k in keys])[part]
    below = ~np.isnan(v) & (v < 1)
    error = np.full(len(v), SCORE_ONLY, dtype=object)
    for i in np.flatnonzero(below):
        error[i] = BELOW_SCALE.format(value=v[i])
    judge = spread(0)
    tidy = pd.DataFrame({
        "item_id": pd.array(np.tile(np.asarray(item_ids, dtype=object), len(keys)), dtype="string"),
        "dataset": "hanna", "subset": pd.array(np.tile(generators, len(keys)), dtype="string"),
        "judge": judge, "model": pd.array(np.where(human, None, judge.to_numpy(dtype=object)), dtype="string"), "strategy": spread(1), "order": "",
        "sample": 0, "verdict": pd.NA, "score": pd.array(np.where(below, np.nan, v), dtype="Float64"),
        "error": pd.array(error, dtype="string"), "criterion": spread(2), "role": spread(3), "raw_score": v,
        "scale_min": 1.0, "scale_max": 5.0,
        "scale_step": pd.array(np.where(human, 1.0, np.nan), dtype="Float64"),
        "scale_level": pd.array(np.where(human, "ordinal", "interval"), dtype="string"),
    })
    return V.coerce(tidy, path=str(p))
