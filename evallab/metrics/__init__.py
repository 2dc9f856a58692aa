"""Pure estimators in the field's terms: tidy verdict tables in, DataFrames out; no file I/O, no judge calls, no
plots. Every estimator takes the grouping ``by`` that defines a design cell and refuses to pool replies silently
(:mod:`evallab.metrics.design`); every interval resamples the item (:mod:`evallab.metrics.intervals`).

- :mod:`~evallab.metrics.design` — design checks, table shape, the item key, and the paired design (replies paired
  across presentation orders, checked once and passed to several estimators).
- :mod:`~evallab.metrics.intervals` — Wilson, item-cluster bootstrap, paired differences, McNemar, Holm/BH.
- :mod:`~evallab.metrics.agreement` — LLMBar's Acc. and per-order accuracy, accuracy, Cohen's kappa, judge × judge
  agreement, Fleiss' kappa, Krippendorff's alpha, repetition stability, LLMBar's published table.
- :mod:`~evallab.metrics.position` — position consistency, MT-Bench's breakdown, preference fairness, first-slot
  preference, McNemar's order effect, balanced position calibration, few-shot anchor effect.
- :mod:`~evallab.metrics.drift` — baseline vs candidate judge, MeowKit's flip-rate gate.
- :mod:`~evallab.metrics.inflation` — positive-bias inflation by gold, pass-rate ratio, FAIL-last priming.
- :mod:`~evallab.metrics.evaluators` — AlpacaEval win rates (continuous, length-controlled), evaluator metrics,
  rank agreement.
- :mod:`~evallab.metrics.corrected` — bias-corrected pass and win rates from a judge plus a gold subset (PPI++ via
  ppi_py, Rogan–Gladen), paired corrected differences, effective gold labels.
- :mod:`~evallab.metrics.power` — the planner: gold labels for a half-width with and without the judge, items for a
  drift flip rate or an accuracy change, samples per item for a stable majority.
- :mod:`~evallab.metrics.selective` — selective judging with a guarantee (Jung et al. 2024, fixed-sequence testing).
- :mod:`~evallab.metrics.contextual` — content-free probes and contextual calibration (Zhao et al. 2021).
"""


_MODULES = ('agreement', 'contextual', 'corrected', 'design', 'drift', 'evaluators', 'inflation', 'intervals',
            'position', 'power', 'selective')
__all__ = ["DesignError", "agreement", "contextual", "corrected", "describe", "design", "drift", "evaluators",
           "inflation", "intervals", "position", "power", "selective"]


def __getattr__(name: str):
    """The submodules load on first use (``evallab.metrics.drift``), so importing one estimator does not import
    every other's dependencies."""
    import importlib

    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in ("DesignError", "describe"):
        return getattr(importlib.import_module(f"{__name__}.design"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
