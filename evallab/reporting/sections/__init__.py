"""What each report states, as library functions (issue 25: thin notebooks).

One module per report topic. Each public function takes a tidy table (and the report's parameters) and returns a
:class:`evallab.Section` — its findings in words with the estimates behind them, its tables (:class:`evallab.Results`
whose measures carry labels, units, intervals, level and method), figures, metrics, conclusions and caveats — which a
notebook shows with :meth:`evallab.Report.render`. A section the table cannot support says so in one sentence and
shows no empty table. Every finding here is testable without a kernel.
"""

_MODULES = ("agreement", "corrected", "drift", "gaming", "inflation", "labels", "position", "scales", "score_studies", "study", "triggers")
#: the section modules, one per report topic (each lists its section functions in its own ``__all__``)
__all__ = list(_MODULES)


def __getattr__(name: str):
    """Section modules load on first use (``sections.corrected``)."""
    import importlib
    import importlib.util

    if name in _MODULES or importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
