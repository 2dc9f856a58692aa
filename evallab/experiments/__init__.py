"""Everything that calls a judge: the anchor-inflation experiment, calibration-set drift replay and re-verify,
keryx's live judge-check and the validation of skill-pack files, content-free anchor probes, and the live studies
on a local judge. Estimators are :mod:`evallab.metrics`; judges are :mod:`evallab.judges`.

The face is what a user calls (``from evallab.experiments import run_experiment``); the modules behind it are
private.

- Anchor inflation: :func:`run_experiment` (every default anchor-set variant judged on the calibration items;
  ``evallab inflation``). Content-free anchor probes: :func:`run_probe`.
- Drift: :func:`compare_files` (two verdict files; ``evallab drift``), :func:`calibration_drift` (a calibration set
  replayed through a judge and compared with its gold; ``evallab drift-replay``), :func:`reverify`
  (a sample of recorded verdicts asked again).
- keryx judge-check: :func:`judge_check_path` (the canned anti-gaming answers judged live; ``evallab
  judge-check``), :func:`check_recordings` (the AG matrix from recordings).
- :func:`validate_paths` (one check per file) — ``evallab validate``: evals, recordings, rubrics, presets,
  manifests and catalogs, each by its kind.
- Live studies on a local judge: :func:`run_live` (:class:`LiveConfig`; ``evallab live``), :func:`load_pointwise`
  (the committed run's pointwise verdicts; the whole run: :func:`evallab.reporting.load_live_run`).

The names load on first use (PEP 562), so importing one experiment does not import every other's dependencies.
"""

from evallab._face import lazy_face

#: public name -> the private module that defines it
_EXPORTS = {
    "run_experiment": "_inflation",
    "run_probe": "_calibrate",
    "calibration_drift": "_drift", "compare_files": "_drift", "reverify": "_drift",
    "check_recordings": "_judge_check", "judge_check_path": "_judge_check",
    "validate_paths": "_validate",
    "LiveConfig": "_live", "load_pointwise": "_live", "run_live": "_live",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
