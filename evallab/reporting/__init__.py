"""Reports: the report context a notebook writes through, publication tables and figures, what each report states
(:mod:`evallab.reporting.sections`), and the papermill batch that runs the notebooks into HTML.

- The report context: :class:`Report` (``show``, ``finding``, ``render``, ``conclude``, ``save``) and
  :class:`Section` — also on :mod:`evallab` itself; :class:`Finding` (one sentence and its estimate).
- Tables: :func:`to_html` (a :class:`~evallab.Results` rendered from its measures: estimate and interval in one
  cell, units in the header, the interval's level and method under the table, "—" with a footnote saying why).
- Figures (matplotlib, titled, axes labelled with units): :func:`interval_plot`, :func:`scatter_intervals`,
  :func:`heatmap`, :func:`plot_drift`, :func:`plot_flip_rates`, :func:`plot_win_rates`, :func:`plot_curves`,
  :func:`plot_threshold_sweep`.
- The batch (``evallab report``, ``make report``): :func:`load_config` (``reports.yaml``; a ``grid:`` entry is a
  sweep), :class:`ReportSpec`, :func:`run_report_batch` (papermill in parallel or on Dask, HTML without input
  cells, ``index.html``) → :class:`ReportResult`; :func:`run_notebook` (one notebook by hand, ``evallab run``);
  :func:`notebook_parameters` / :func:`check_parameters` (a notebook's parameters cell, checked before a kernel
  starts); :func:`run_report` (``evallab report``: the batch file checked, run and indexed); :func:`save_metrics` (``<name>.metrics.json`` for a notebook not written through a :class:`Report`).
- :func:`load_live_run` — the committed run of the local llama.cpp judge (``data/live/smollm2``) the reports show.

The names load on first use (PEP 562); the modules behind them are private.
"""

from evallab._face import lazy_face

#: public name → the private module that defines it (or ``(module, its name there)``)
_EXPORTS = {
    "Report": "_context", "Section": "_context", "Finding": "_tables", "to_html": "_tables",
    **{n: "_plots" for n in ("heatmap", "interval_plot", "plot_curves", "plot_drift", "plot_flip_rates",
                             "plot_threshold_sweep", "plot_win_rates", "scatter_intervals")},
    **{n: "_batch" for n in ("ReportResult", "ReportSpec", "load_config", "run_notebook", "run_report", "run_report_batch",
                             "save_metrics")},
    "check_parameters": "_params", "notebook_parameters": "_params",
    "load_live_run": ("_live", "load"),
    "sections": ("evallab.reporting.sections", None),  # what each report states: a public subpackage
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
