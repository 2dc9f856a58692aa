"""The skill-pack formats evallab calibrates against: keryx skill catalogs and the lexical trigger router, keryx
judge scenarios and the stable-pack gate, MeowKit rubrics and presets, aeon assertion manifests.

The face is what a user calls (``from evallab.skills import load_catalog, leave_one_out``): the loaders, the main
checks and the functions behind the ``evallab triggers|rubrics|manifests`` commands. Everything else (the
tokenizer, the score matrix, ROC/PR curves and threshold tuning, the integrity and AG tables, trial analyses, the
rubric parsers and anchor sets, manifest linting and history) lives in the private modules and is what the report
sections (:mod:`evallab.reporting.sections`) build on. The keryx judge-recording format these checks read is
:mod:`evallab.judges` 's (:func:`~evallab.judges.load_recordings`, :func:`~evallab.judges.to_verdicts`).

- Skill catalogs and the trigger router (keryx ``scout.ts`` and ``eval.ts``, ``data/keryx/SOURCE.md``):
  :func:`load_catalog`; :func:`leave_one_out` (leave-one-out trigger accuracy); :func:`score_query`,
  :func:`tune_catalog`, :func:`scout` — a prompt scored against a catalog, a catalog's leave-one-out accuracy and
  tuned thresholds, keryx's selection (``evallab triggers``).
- keryx judge scenarios (spec 000): :func:`load_evals`, :func:`load_tree` (:class:`EvalSpecError`);
  :func:`integrity_findings` (rules I1–I10); :func:`load_calibration_items` (the labelled calibration answers as an
  items table); :func:`load_eval_report`, :func:`pack_gate` (:class:`EvalReportError`) — the stable-pack gate with
  counts re-derived from trial records.
- MeowKit rubrics (``data/meowkit``): :func:`load_library` (:class:`RubricError`); :func:`validate_files` and
  :func:`score_preset` (``evallab rubrics validate|verdict``).
- aeon assertion manifests (spec 002): :func:`load_manifest` (:class:`ManifestError`); :func:`eval_outputs`,
  :func:`bootstrap_outputs` — assertions on a folder of outputs and a manifest drafted from them
  (``evallab manifests``).

The names load on first use (PEP 562), so importing the rubrics does not import scikit-learn and ``bm25s``.
"""

from evallab._face import lazy_face

#: public name -> the private module that defines it
_EXPORTS = {
    "load_catalog": "_catalogs",
    "scout": "_trigger_select",
    "leave_one_out": "_trigger_loo",
    "score_query": "_trigger_study", "tune_catalog": "_trigger_study",
    "EvalSpecError": "_scenario_schema", "load_evals": "_scenario_schema", "load_tree": "_scenario_schema",
    "integrity_findings": "_integrity",
    "load_calibration_items": "_calibration_items",
    "EvalReportError": "_pack_gate", "load_eval_report": "_pack_gate", "pack_gate": "_pack_gate",
    "RubricError": "_rubrics", "load_library": "_rubrics", "score_preset": "_rubrics",
    "validate_files": "_rubrics",
    "ManifestError": "_manifests", "bootstrap_outputs": "_manifests", "eval_outputs": "_manifests",
    "load_manifest": "_manifests",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
