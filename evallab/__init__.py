"""evallab: calibrate LLM judges before you trust their verdicts.

The library computes; notebooks in ``notebooks/`` ask the questions; ``evallab report`` runs them into HTML.

Public API (one module per concept):

- :mod:`evallab.verdicts` — the tidy verdict table (one row per judge reply) and ``validate``.
- :mod:`evallab.datasets` — loaders (LLMBar, a user's own CSV/JSONL/Parquet verdict table, ...).
- :mod:`evallab.agreement` — accuracy vs gold, Cohen's/Fleiss' kappa, Krippendorff's alpha, self-agreement.
- :mod:`evallab.position` — position consistency, first-slot preference, swap-averaged accuracy, anchor effect.
- :mod:`evallab.stats` — Wilson and bootstrap intervals, McNemar's test.
- :mod:`evallab.report` — the papermill batch and ``save_metrics``.
"""

from evallab.errors import DataError, EvallabError, VerdictTableError

__version__ = "0.1.0"
__all__ = ["DataError", "EvallabError", "VerdictTableError", "__version__"]
