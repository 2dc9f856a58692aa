"""Loaders from real formats to tidy tables (see :mod:`evallab.verdicts`).

The face is what a user calls (``from evallab.datasets import load_study``); the modules behind it are private.

- :func:`load_study` — what the notebooks call: a user's table when a path is given, else bundled LLMBar.
- :func:`load_llmbar` — LLMBar (Zeng et al., ICLR 2024): items and verdicts in both orders;
  :func:`load_llmbar_statistics` — the paper's published accuracy rows.
- :func:`load_verdicts` — a user's own verdict table (CSV, JSONL or Parquet in the tidy schema).
- :func:`load_gold_set` — a calibration (gold) set for drift replay: JSONL, one item per line with ``item_id``,
  ``gold`` and the prompt fields (pairwise: ``instruction``, ``output_1``, ``output_2``; pointwise: ``answer``,
  ``rubric_text``, ``pass_criteria``; or the exact ``messages``).
- :func:`load_alpaca_eval` — AlpacaEval's multi-annotator preferences (items with output lengths, verdicts);
  :func:`load_alpaca_eval_leaderboards` — its leaderboards. (Its outputs, instructions, annotator configs and
  evaluator leaderboard have loaders in the private ``_alpaca_eval`` module.)
- :func:`load_hanna` — HANNA (COLING 2022, TACL 2024): 1,056 stories rated 1–5 on six criteria by three humans and
  five LLM judges × four prompts, as a tidy score table with its declared scale.

The names load on first use (PEP 562), so ``import evallab.datasets`` does not import pandas.
"""

from evallab._face import lazy_face

#: public name -> the private module that defines it
_EXPORTS = {
    "load_study": "_study",
    "load_llmbar": "_llmbar", "load_llmbar_statistics": "_llmbar",
    "load_verdicts": "_generic",
    "load_gold_set": "_calibration",
    "load_alpaca_eval": "_alpaca_eval", "load_alpaca_eval_leaderboards": "_alpaca_eval",
    "load_hanna": "_hanna",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
