"""Loaders from real formats to tidy tables (see :mod:`evallab.verdicts`).

- :func:`load_llmbar` — LLMBar (Zeng et al., ICLR 2024): items and verdicts in both orders.
- :func:`load_verdicts` — a user's own verdict table (CSV, JSONL or Parquet in the tidy schema);
  :func:`read_table` / :func:`write_table` — any table by its extension, unvalidated.
- :func:`load_study` — what the notebooks call: a user's table when a path is given, else bundled LLMBar.
- :func:`load_gold_set` — a calibration (gold) set for drift replay.
- :func:`load_alpaca_eval` — AlpacaEval's multi-annotator preferences (items with output lengths, verdicts); also
  its outputs, instructions, annotator configs, leaderboards and evaluator leaderboard.
"""

from evallab.datasets.alpaca_eval import (
    AlpacaEval,
    load_alpaca_eval,
    load_alpaca_eval_annotators,
    load_alpaca_eval_evaluators,
    load_alpaca_eval_instructions,
    load_alpaca_eval_leaderboards,
    load_alpaca_eval_outputs,
)
from evallab.datasets.calibration import gold_set_frame, load_gold_set
from evallab.datasets.generic import check_output_path, load_verdicts, read_table, write_table
from evallab.datasets.llmbar import LLMBar, load_llmbar, load_llmbar_statistics
from evallab.datasets.study import load_study

__all__ = ["AlpacaEval", "LLMBar", "load_alpaca_eval", "load_alpaca_eval_annotators", "load_alpaca_eval_evaluators",
           "load_alpaca_eval_instructions", "load_alpaca_eval_leaderboards", "load_alpaca_eval_outputs", "load_llmbar", "load_llmbar_statistics", "load_study",
           "load_verdicts", "gold_set_frame", "load_gold_set", "read_table", "check_output_path", "write_table"]
