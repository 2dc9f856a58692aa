"""evallab: calibrate LLM judges before you trust their verdicts.

The library computes; notebooks in ``notebooks/`` ask the questions; ``evallab report`` runs them into HTML.

What a notebook needs is here, by name::

    import evallab as ev
    report = ev.Report("my_study", "reports/mine", confidence=0.95)
    table = ev.load_study("my_verdicts.csv")                      # the tidy verdict table (evallab.verdicts)
    bias = ev.position_bias(table, ["judge"], n_resamples=1000)   # a Results: values, intervals, their method
    report.finding("The judge keeps its verdict when the outputs swap.", bias.estimate("position_consistency"))

Every public name is listed, with the first line of its docstring, in ``docs/api.md``; each face below has an
``__all__`` and everything else (modules whose name starts with ``_``) is private. The faces, by layer (a layer
imports only the layers below it; see the project design):

- :mod:`evallab.verdicts` — the tidy verdict table (one row per judge reply), ``validate``, ``select``, ``concat``.
- :mod:`evallab.datasets` — loaders of the bundled data and a user's own table; :mod:`evallab.importers` — MT-Bench,
  AlpacaEval, Arena-Hard, inspect, promptfoo, JudgeBench and mapped tables to the tidy schema.
- :mod:`evallab.metrics` — the estimators in the field's terms, by name, with item-clustered intervals.
- :mod:`evallab.judges` — live OpenAI-compatible judges, prompts, parsing, cache, replay, the job runner, and the
  keryx recording format.
- :mod:`evallab.skills` — keryx scenarios, catalogs and the trigger scorer; MeowKit rubrics; aeon manifests.
- :mod:`evallab.experiments` — what calls a judge: inflation runs, drift replay, judge-check.
- :mod:`evallab.reporting` — the report context, publication tables, the papermill batch, and
  :mod:`evallab.reporting.sections` (what each report states).
- :mod:`evallab.errors` — every exception evallab raises; :mod:`evallab.simulation` / :mod:`evallab.testing` —
  tables drawn from a known truth (coverage checks) and the local simulated judge server.
"""

from evallab._face import lazy_face
from evallab.errors import DataError, EvallabError, VerdictTableError  # noqa: F401 (the face: __all__ below)

__version__ = "0.1.0"

#: names loaded on first use (``evallab.position_bias``), so ``import evallab`` (the command line) needs no pandas:
#: name → the face (or the module) it comes from
_LAZY = {
    # the report context and the estimate type
    **{n: "evallab.reporting._context" for n in ("Report", "Section")},
    **{n: "evallab._results" for n in ("Estimate", "Measure", "Results", "WILSON", "bootstrap_method", "results")},
    # loading a study
    **{n: "evallab.datasets" for n in ("load_study", "load_verdicts", "load_llmbar")},
    **{n: "evallab.verdicts" for n in ("validate", "select", "concat", "parse_rate")},
    # the estimators by name (the rest of them: evallab.metrics)
    **{n: "evallab.metrics" for n in (
        "accuracy", "anchor_effect", "balanced_position_accuracy", "cohen_kappa_vs_gold", "compare_judges",
        "corrected_rates", "describe", "drift_gate", "drift_summary", "evaluator_metrics", "fleiss_kappa",
        "inflation_tables", "judge_agreement", "krippendorff_alpha", "pairwise_statistics", "position_bias",
        "position_consistency", "repetition_stability", "win_rates")},
}
__all__ = sorted(["DataError", "EvallabError", "VerdictTableError", "__version__", *_LAZY])


__getattr__, __dir__ = lazy_face(__name__, _LAZY)
