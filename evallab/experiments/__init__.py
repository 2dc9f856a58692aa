"""Everything that calls a judge: the anchor-inflation experiment, calibration-set drift replay and re-verify,
keryx's live judge-check, content-free anchor probes (:mod:`~evallab.experiments.calibrate`). Estimators are :mod:`evallab.metrics`; judges are :mod:`evallab.judges`.
"""


_MODULES = ('calibrate', 'drift', 'inflation', 'judge_check', 'validate')
__all__ = ["calibrate", "drift", "inflation", "judge_check", "validate"]


def __getattr__(name: str):
    """The submodules load on first use (``evallab.metrics._drift``), so importing one estimator does not import
    every other's dependencies."""
    import importlib

    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
