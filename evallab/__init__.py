"""evallab: calibrate LLM judges before you trust their verdicts.

The library computes; notebooks in ``notebooks/`` ask the questions; ``evallab report`` runs them into HTML.

Public API, by layer (a layer imports only the layers below it; see the project design):

- :mod:`evallab.verdicts` — the tidy verdict table (one row per judge reply) and ``validate``.
- :mod:`evallab.datasets` — loaders of the bundled data and a user's own table (LLMBar, AlpacaEval, calibration sets);
  :mod:`evallab.importers` — MT-Bench, AlpacaEval, Arena-Hard, inspect, promptfoo, JudgeBench and mapped tables to
  the tidy schema. Neither imports an estimator.
- :mod:`evallab.metrics` — pure estimators in the field's terms with item-clustered intervals (agreement, position,
  drift, inflation, evaluators; design checks and intervals).
- :mod:`evallab.judges` — live OpenAI-compatible judges, prompts, parsing, cache, replay, the job runner, and the
  keryx recording format they write and replay.
- :mod:`evallab.skills` — keryx scenarios, catalogs and the trigger scorer; MeowKit rubrics; aeon manifests.
- :mod:`evallab.experiments` — what calls a judge: inflation runs, drift replay, judge-check.
- :mod:`evallab.reporting` — the papermill batch, metrics files, figures.
- :mod:`evallab.simulation` / :mod:`evallab.testing` — tables drawn from a known truth (coverage checks); the local
  simulated judge server.
"""

from evallab.errors import DataError, EvallabError, VerdictTableError

__version__ = "0.1.0"
#: names loaded on first use (``evallab.Results``), so ``import evallab`` (the command line) needs no pandas
_LAZY = {"Estimate": "evallab._results", "Measure": "evallab._results", "Results": "evallab._results",
         "Report": "evallab.reporting._context", "Section": "evallab.reporting._context"}
__all__ = ["DataError", "Estimate", "EvallabError", "Measure", "Report", "Results", "Section", "VerdictTableError",
           "__version__"]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'evallab' has no attribute {name!r}")
