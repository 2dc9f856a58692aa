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


setup()
