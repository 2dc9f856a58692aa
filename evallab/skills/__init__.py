"""The skill-pack formats evallab calibrates against: keryx judge scenarios, recordings, skill catalogs and the
IDF trigger scorer; MeowKit rubrics and presets; aeon assertion manifests.

- :mod:`~evallab.skills.scenarios` — ``evals.json``, grading, canned anti-gaming answers, integrity rules, AG check,
  calibration answers, the stable-pack gate.
- :mod:`~evallab.skills.recordings` — keryx-format judge recordings.
- :mod:`~evallab.skills.catalogs` / :mod:`~evallab.skills.triggers` — skill catalogs; the lexical trigger scorer,
  leave-one-out accuracy (skill-clustered intervals), threshold tuning.
- :mod:`~evallab.skills.rubrics` — MeowKit rubrics, presets, hard-fail, anchor-set variants.
- :mod:`~evallab.skills.manifests` — aeon assertion manifests and regression states.
"""


_MODULES = ('catalogs', 'manifests', 'recordings', 'rubrics', 'scenarios', 'triggers')
__all__ = ["catalogs", "manifests", "recordings", "rubrics", "scenarios", "triggers"]


def __getattr__(name: str):
    """The submodules load on first use (``evallab.metrics.drift``), so importing one estimator does not import
    every other's dependencies."""
    import importlib

    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
