"""One entry point for the notebooks: the bundled LLMBar verdicts, or a user's own verdict table."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evallab import verdicts as V
from evallab.datasets._generic import load_verdicts
from evallab.datasets._llmbar import load_llmbar
from evallab.errors import VerdictTableError

#: the bundled LLMBar's headline selection (Zeng et al. 2024, Table 3: LLMBar's Natural and Adversarial sets under
#: Vanilla, their Vanilla+Rules): what empty ``subsets``/``strategies`` mean on the bundled data when a notebook asks
#: for it (``llmbar_selection=True``); on the user's table empty means everything
LLMBAR_SUBSETS = ("LLMBar/Natural", "LLMBar/Adversarial")
LLMBAR_STRATEGIES = ("Vanilla",)
#: the ``DataFrame.attrs`` key naming where :func:`load_study` read a table ("llmbar" for LLMBar)
SOURCE = "source"


def llmbar_defaults(verdicts_path: str, subsets: Sequence[str] | None, strategies: Sequence[str] | None = None,
                    ) -> tuple[list[str] | None, list[str] | None]:
    """The filters a report applies: as given, except that on the bundled LLMBar (no ``verdicts_path``) an empty
    one means LLMBar's headline selection (:data:`LLMBAR_SUBSETS`, :data:`LLMBAR_STRATEGIES`); ``None`` = all."""
    if verdicts_path:
        return list(subsets or []) or None, list(strategies or []) or None
    return list(subsets or LLMBAR_SUBSETS), list(strategies or LLMBAR_STRATEGIES)


def load_study(verdicts_path: str = "", data_dir: str = "", *, subsets: Sequence[str] | None = None,
               judges: Sequence[str] | None = None, strategies: Sequence[str] | None = None,
               llmbar_selection: bool = False, scores: bool = False) -> pd.DataFrame:
    """The tidy verdict table a report studies.

    Parameters
    ----------
    verdicts_path : a tidy verdict table of your own (CSV, JSONL or Parquet, see :mod:`evallab.verdicts`);
        ``""`` = the bundled LLMBar verdicts (or LLMBar at ``data_dir``).
    data_dir : LLMBar folder; ``""`` = bundled ``data/llmbar``.
    subsets, judges, strategies : filters (see :func:`evallab.verdicts.select`); empty = all.
    llmbar_selection : on the bundled LLMBar (no ``verdicts_path``), empty ``subsets``/``strategies`` mean LLMBar's
        headline selection (LLMBar/Natural and LLMBar/Adversarial, Vanilla) instead of all; a user's table is
        never filtered by the bundled data's selection.
    scores : the report needs scores (a rating table, report 08) rather than verdicts: a user's table without a
        numeric score is refused; by default (verdicts) a user's score-only table — every verdict NA, scores
        present — is refused.

    Raises
    ------
    DataError / VerdictTableError naming the file, row or column and what was expected — in one line, for a
    score-only table given to a verdict report and the other way round.
    """
    if llmbar_selection:
        subsets, strategies = llmbar_defaults(verdicts_path, subsets, strategies)
    if verdicts_path:
        df = load_verdicts(verdicts_path)
        if scores and not V.has_scores(df):
            raise VerdictTableError(V.verdict_table_refusal(df, "this report (08, scales)",
                                                            "reports 01-07 on it"), path=verdicts_path,
                                    column="score")
        if not scores and V.is_score_table(df):
            raise VerdictTableError(V.score_table_refusal(df, "this report", "report 08 (scales) on it"),
                                    path=verdicts_path, column="verdict")
        return V.select(df, subsets=subsets, judges=judges, strategies=strategies, path=verdicts_path)
    df = load_llmbar(data_dir or None, subsets=subsets or None, judges=judges or None,
                     strategies=strategies or None).verdicts
    df.attrs[SOURCE] = "llmbar"
    return df


def is_llmbar(df: pd.DataFrame) -> bool:
    """Whether ``df`` (or a selection of it) is LLMBar as :func:`load_study` read it — the bundled copy or LLMBar at
    ``data_dir``, not a user's table: only there do LLMBar's own conventions (unparsed = wrong, its few-shot
    prompts) apply.

    Examples
    --------
    >>> is_llmbar(load_study("", subsets=["LLMBar/Natural"])), is_llmbar(pd.DataFrame())
    (True, False)
    """
    return df.attrs.get(SOURCE) == "llmbar"
