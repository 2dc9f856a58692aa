"""Reports: the report context a notebook writes through, publication tables and figures, what each report states
(:mod:`evallab.reporting.sections`), and the papermill batch that runs the notebooks into HTML.

- The report context: :class:`Report` (``show``, ``finding``, ``render``, ``conclude``, ``save``) and
  :class:`Section` — also on :mod:`evallab` itself; :class:`Finding` (one sentence and its estimate).
- Tables: :func:`to_html` (a :class:`~evallab.Results` rendered from its measures: estimate and interval in one
  cell, units in the header, the interval's level and method under the table, "—" with a footnote saying why).
- Figures (matplotlib, titled, axes labelled with units): :func:`interval_plot` (estimates with their intervals)
  and :func:`heatmap` (a matrix with its colour scale). The figures a section draws for one study (drift, flip rates,
  win rates, ROC and precision-recall curves, threshold sweeps) are drawn by that section.
- The batch (``evallab report``, ``make report``): :func:`load_config` (``reports.yaml``; a ``grid:`` entry is a
  sweep), :class:`ReportSpec`, :func:`run_report_batch` (papermill in parallel or on Dask, HTML without input
  cells, ``index.html``) → :class:`ReportResult`; :func:`run_notebook` (one notebook by hand, ``evallab run``);
  :func:`run_report` (``evallab report``: the batch file checked, run and indexed). A notebook's parameters cell is
  checked before its kernel starts; its metrics file is written by :meth:`Report.save`.
- :func:`load_live_run` — the committed run of the local llama.cpp judge (``data/live/smollm2``) the reports show.

The names load on first use (PEP 562); the modules behind them are private.
"""

from evallab._face import lazy_face

#: public name → the private module that defines it (or ``(module, its name there)``)
_EXPORTS = {
    "Report": "_context", "Section": "_context", "Finding": "_tables", "to_html": "_tables",
    **{n: "_plots" for n in ("heatmap", "interval_plot")},
    **{n: "_batch" for n in ("ReportResult", "ReportSpec", "load_config", "run_notebook", "run_report", "run_report_batch")},
    "load_live_run": ("_live", "load"),
    "sections": ("evallab.reporting.sections", None),  # what each report states: a public subpackage
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
