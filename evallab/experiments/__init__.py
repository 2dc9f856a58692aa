"""Everything that calls a judge: the anchor-inflation experiment, calibration-set drift replay and re-verify,
keryx's live judge-check and the validation of skill-pack files, content-free anchor probes, and the live studies
on a local judge. Estimators are :mod:`evallab.metrics`; judges are :mod:`evallab.judges`.

Import everything from here (``from evallab.experiments import run_experiment``); the modules behind it are private.

- Anchor inflation: :func:`run_experiment` (every anchor-set variant of :data:`DEFAULT_VARIANTS` judged on the
  calibration items; ``evallab inflation``).
- Content-free anchor probes: :func:`run_probe`.
- Drift: :func:`compare_files` (two verdict files; ``evallab drift``), :func:`calibration_drift` (a calibration set
  replayed through a judge and compared with its gold; ``evallab drift-replay``), :func:`reverify`
  (a sample of recorded verdicts asked again).
- keryx judge-check: :func:`judge_check` / :func:`judge_check_path` (the canned anti-gaming answers judged live;
  ``evallab judge-check``), :func:`check_recordings` (the AG matrix from recordings), :func:`scenario_digest` (the
  request digest of one canned answer).
- :func:`validate_paths` (one check per file) — ``evallab validate``: evals, recordings, rubrics, presets,
  manifests and catalogs, each by its kind.
- Live studies on a local judge: :func:`run_live` (:class:`LiveConfig`, :data:`STUDIES`; ``evallab live``),
  :func:`load_live` / :func:`load_pointwise` (the committed run in :data:`LIVE_DIR`), :func:`llmbar_pairs` /
  :func:`pair_requests` (the position study's items and requests).

The names load on first use (PEP 562), so importing one experiment does not import every other's dependencies.
"""

from evallab._face import lazy_face

#: public name -> the private module that defines it
_EXPORTS = {
    "DEFAULT_VARIANTS": "_inflation", "run_experiment": "_inflation", "run_probe": "_calibrate", "calibration_drift": "_drift", "compare_files": "_drift", "reverify": "_drift",
    "check_recordings": "_judge_check", "judge_check": "_judge_check", "judge_check_path": "_judge_check",
    "scenario_digest": "_judge_check", "validate_paths": "_validate",
    "LIVE_DIR": "_live", "STUDIES": "_live", "LiveConfig": "_live", "llmbar_pairs": "_live", "load_live": "_live",
    "load_pointwise": "_live", "pair_requests": "_live", "run_live": "_live",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
