"""One entry point for the notebooks: the bundled LLMBar verdicts, or a user's own verdict table."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evallab import verdicts as V
from evallab.datasets._generic import load_verdicts
from evallab.datasets._llmbar import load_llmbar


def load_study(verdicts_path: str = "", data_dir: str = "", *, subsets: Sequence[str] | None = None,
               judges: Sequence[str] | None = None, strategies: Sequence[str] | None = None) -> pd.DataFrame:
    """The tidy verdict table a report studies.

    Parameters
    ----------
    verdicts_path : a tidy verdict table of your own (CSV, JSONL or Parquet, see :mod:`evallab.verdicts`);
        ``""`` = the bundled LLMBar verdicts (or LLMBar at ``data_dir``).
    data_dir : LLMBar folder; ``""`` = bundled ``data/llmbar``.
    subsets, judges, strategies : filters (see :func:`evallab.verdicts.select`); empty = all.

    Raises
    ------
    DataError / VerdictTableError naming the file, row or column and what was expected.
    """
    if verdicts_path:
        df = load_verdicts(verdicts_path)
        return V.select(df, subsets=subsets, judges=judges, strategies=strategies, path=verdicts_path)
    return load_llmbar(data_dir or None, subsets=subsets or None, judges=judges or None,
                       strategies=strategies or None).verdicts
