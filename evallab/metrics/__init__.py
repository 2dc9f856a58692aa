"""Pure estimators in the field's terms: tidy verdict tables in, DataFrames out; no file I/O, no judge calls, no
plots. Every estimator takes the grouping ``by`` that defines a design cell and refuses to pool replies silently
(:mod:`evallab.metrics.design`); every interval resamples the item (:mod:`evallab.metrics.intervals`).

- :mod:`~evallab.metrics.design` — design checks, table shape, replies paired across presentation orders.
- :mod:`~evallab.metrics.intervals` — Wilson, item-cluster bootstrap, paired differences, McNemar, Holm/BH.
- :mod:`~evallab.metrics.agreement` — LLMBar's Acc. and per-order accuracy, accuracy, Cohen's kappa, judge × judge
  agreement, Fleiss' kappa, Krippendorff's alpha, repetition stability, LLMBar's published table.
- :mod:`~evallab.metrics.position` — position consistency, MT-Bench's breakdown, preference fairness, first-slot
  preference, McNemar's order effect, balanced position calibration, few-shot anchor effect.
- :mod:`~evallab.metrics.drift` — baseline vs candidate judge, MeowKit's flip-rate gate.
- :mod:`~evallab.metrics.inflation` — positive-bias inflation by gold, pass-rate ratio, FAIL-last priming.
- :mod:`~evallab.metrics.evaluators` — AlpacaEval win rates (continuous, length-controlled), evaluator metrics,
  rank agreement.
"""


_MODULES = ('agreement', 'design', 'drift', 'evaluators', 'inflation', 'intervals', 'position')
__all__ = ["DesignError", "agreement", "describe", "design", "drift", "evaluators", "inflation", "intervals",
           "position"]


def __getattr__(name: str):
    """The submodules load on first use (``evallab.metrics.drift``), so importing one estimator does not import
    every other's dependencies."""
    import importlib

    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in ("DesignError", "describe"):
        return getattr(importlib.import_module(f"{__name__}.design"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
