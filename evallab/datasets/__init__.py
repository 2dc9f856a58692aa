"""Loaders from real formats to tidy tables (see :mod:`evallab.verdicts`).

- :func:`load_llmbar` — LLMBar (Zeng et al., ICLR 2024): items and verdicts in both orders.
- :func:`load_verdicts` — a user's own verdict table (CSV, JSONL or Parquet in the tidy schema).
- :func:`load_study` — what the notebooks call: a user's table when a path is given, else bundled LLMBar.
"""

from evallab.datasets.generic import load_verdicts, read_table
from evallab.datasets.llmbar import LLMBar, load_llmbar, load_llmbar_statistics, published_check
from evallab.datasets.study import load_study

__all__ = ["LLMBar", "load_llmbar", "load_llmbar_statistics", "load_study", "load_verdicts", "published_check",
           "read_table"]
