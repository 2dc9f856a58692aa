"""Set-up of a report kernel, run by the batch runner before the notebook's first cell
(``--IPKernelApp.exec_lines``): figures in the report style and a plain ``display(df)`` rendered as a
publication table (:func:`evallab.reporting._tables.publication_html`). In Jupyter, ``import
evallab.reporting._kernel`` (or :func:`setup`) gives the same rendering.
"""

from __future__ import annotations


def setup() -> None:
    """Apply the figure style and register the publication-table formatter for DataFrames (text/html only; the
    plain-text representation is unchanged)."""
    import pandas as pd

    from evallab.reporting import _plots as plots
    from evallab.reporting._tables import publication_html

    plots.use_style()
    try:
        from IPython import get_ipython

        ip = get_ipython()
    except ImportError:  # pragma: no cover
        ip = None
    if ip is not None:
        fmt = ip.display_formatter.formatters["text/html"]
        fmt.for_type(pd.DataFrame, publication_html)
        # the inline backend's PNGs at 96 dpi: text in points reads at its size in a browser at 100%
        try:
            ip.run_line_magic("config", "InlineBackend.rc = {}")
            ip.run_line_magic("config", "InlineBackend.print_figure_kwargs = {'bbox_inches': 'tight', 'dpi': 96}")
        except Exception:  # pragma: no cover
            pass


def tune_collector(threshold0: int = 50_000, threshold1: int = 20, threshold2: int = 100) -> None:
    """The batch runner's report kernels only: CPython's cyclic garbage collector run less often.

    A report kernel is a short-lived process that allocates millions of small container objects (pandas index
    and block objects, matplotlib artists, the bootstrap's per-group frames) and frees almost all of them by
    reference counting. With CPython's default thresholds ``(700, 10, 10)`` it still runs hundreds of young
    collections and several full ones, each full one walking the whole heap: on report 01, 550 + 50 + 4
    collections, about 1.3 s of CPU; at ``(50_000, 20, 100)``, 6 young ones and no full one, 0.25 s (measured in
    the same kernel set-up, gc.callbacks). Cycles are still collected — later, in larger batches — and the
    batch's peak memory is checked by ``python -m benchmarks batch``. A user's own Jupyter kernel is left alone:
    only ``run_one``'s kernels call this (``KERNEL_SETUP`` in :mod:`evallab.reporting._batch_run`).
    """
    import gc

    gc.set_threshold(threshold0, threshold1, threshold2)


setup()
