"""evallab: calibrate LLM judges before you trust their verdicts.

The library computes; notebooks in ``notebooks/`` ask the questions; ``evallab report`` runs them into HTML.

Public API (one module per concept):

- :mod:`evallab.verdicts` — the tidy verdict table (one row per judge reply) and ``validate``.
- :mod:`evallab.datasets` — loaders (LLMBar, a user's own CSV/JSONL/Parquet verdict table, ...).
- :mod:`evallab.metrics.agreement` — accuracy vs gold, Cohen's/Fleiss' kappa, Krippendorff's alpha, self-agreement.
- :mod:`evallab.metrics.position` — position consistency, first-slot preference, swap-averaged accuracy, anchor effect.
- :mod:`evallab.metrics.intervals` — Wilson and bootstrap intervals, McNemar's test.
- :mod:`evallab.skills.rubrics` / :mod:`evallab.metrics.inflation` — MeowKit rubric validation, hard-fail verdict, anchor-set
  variants; the PASS-only vs balanced inflation experiment and its estimators.
- :mod:`evallab.skills.scenarios` — keryx judge scenarios: evals.json schema, grading, canned anti-gaming answers,
  integrity rules I1–I10/AG from recordings, the stable-pack gate; :mod:`evallab.skills.manifests` — aeon assertion
  manifests, regression states, bootstrap.
- :mod:`evallab.metrics.drift` — baseline vs candidate judge (flips, kappa, accuracy change, McNemar), the tolerance gate,
  calibration-set replay and re-verify through any Judge, AlpacaEval evaluator metrics and ranking Kendall's tau.
- :mod:`evallab.skills.triggers` — keryx's IDF trigger scorer, exclusion-clause stripping, leave-one-out trigger
  accuracy, TF-IDF/BM25 comparison, threshold tuning (ROC/PR, bootstrap, cross-validation).
- :mod:`evallab.reporting.batch` — the papermill batch and ``save_metrics``.
- :mod:`evallab.judges` — live OpenAI-compatible judges over httpx (concurrency, retries, cache, cost), prompts,
  parsing, recordings and replay, the resumable job runner (``evallab judge``); :mod:`evallab.testing` — a local
  OpenAI-compatible server with a simulated judge and fault injection.
"""

from evallab.errors import DataError, EvallabError, VerdictTableError

__version__ = "0.1.0"
__all__ = ["DataError", "EvallabError", "VerdictTableError", "__version__"]
