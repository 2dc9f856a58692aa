"""Everything that calls a judge: the anchor-inflation experiment, calibration-set drift replay and re-verify,
keryx's live judge-check. Estimators are :mod:`evallab.metrics`; judges are :mod:`evallab.judges`.
"""

from evallab.experiments import drift, inflation, judge_check

__all__ = ["drift", "inflation", "judge_check"]
