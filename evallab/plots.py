"""Figures for the reports (matplotlib). Every figure has a title, labelled axes and units.

Functions return the ``matplotlib.figure.Figure``; notebooks display it. Use the Agg backend in tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd


def interval_plot(df: pd.DataFrame, *, x: str, y: str, low: str, high: str, hue: str | None = None,
                  title: str, ylabel: str, xlabel: str | None = None, scale: float = 1.0,
                  ref: float | None = None, ax=None):
    """Point estimates with interval bars: one point per row, grouped along ``x`` and coloured by ``hue``.

    ``scale`` multiplies values (e.g. 100 for percent); ``ref`` draws a dashed reference line.
    """
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(8, 4))
    cats = list(dict.fromkeys(df[x].astype(str)))
    hues = list(dict.fromkeys(df[hue].astype(str))) if hue else [None]
    width = 0.8 / max(len(hues), 1)
    for i, h in enumerate(hues):
        d = df if h is None else df[df[hue].astype(str) == h]
        pos = np.array([cats.index(v) for v in d[x].astype(str)]) + (i - (len(hues) - 1) / 2) * width
        val = d[y].to_numpy(float) * scale
        lo = d[low].to_numpy(float) * scale
        hi = d[high].to_numpy(float) * scale
        err = np.vstack([np.clip(val - lo, 0, None), np.clip(hi - val, 0, None)])
        err = np.nan_to_num(err)
        ax.errorbar(pos, val, yerr=err, fmt="o", capsize=3, label=h)
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels(cats, rotation=30, ha="right")
    if ref is not None:
        ax.axhline(ref * scale, ls="--", lw=1, color="grey")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(xlabel or x)
    if hue:
        ax.legend(title=hue, fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig


def heatmap(matrix: pd.DataFrame, *, title: str, cbar_label: str, vmin: float = -1.0, vmax: float = 1.0,
            fmt: str = "{:.2f}", xlabel: str = "", ylabel: str = ""):
    """A square matrix as a heatmap with values written in the cells."""
    fig, ax = plt.subplots(figsize=(1.1 * matrix.shape[1] + 2.5, 0.8 * matrix.shape[0] + 1.5))
    im = ax.imshow(matrix.to_numpy(float), vmin=vmin, vmax=vmax, cmap="viridis")
    ax.set_xticks(range(matrix.shape[1]))
    ax.set_xticklabels(matrix.columns, rotation=30, ha="right")
    ax.set_yticks(range(matrix.shape[0]))
    ax.set_yticklabels(matrix.index)
    for i in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            v = matrix.iat[i, j]
            if pd.notna(v):
                ax.text(j, i, fmt.format(v), ha="center", va="center", color="w", fontsize=8)
    fig.colorbar(im, ax=ax, label=cbar_label)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def scatter_intervals(df: pd.DataFrame, *, x: str, y: str, x_low: str, x_high: str, y_low: str, y_high: str,
                      label: str, title: str, xlabel: str, ylabel: str, xref: float | None = None,
                      yref: float | None = None):
    """One point per row with horizontal and vertical interval bars, annotated with ``label``."""
    fig, ax = plt.subplots(figsize=(7, 5))
    for _, r in df.iterrows():
        xe = [[max(r[x] - r[x_low], 0)], [max(r[x_high] - r[x], 0)]]
        ye = [[max(r[y] - r[y_low], 0)], [max(r[y_high] - r[y], 0)]]
        ax.errorbar(r[x], r[y], xerr=np.nan_to_num(xe), yerr=np.nan_to_num(ye), fmt="o", capsize=3)
        ax.annotate(str(r[label]), (r[x], r[y]), textcoords="offset points", xytext=(5, 5), fontsize=8)
    if xref is not None:
        ax.axvline(xref, ls="--", lw=1, color="grey")
    if yref is not None:
        ax.axhline(yref, ls="--", lw=1, color="grey")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def square(long: pd.DataFrame, value: str, *, rows: str = "judge_a", cols: str = "judge_b",
           order: Sequence[str] | None = None) -> pd.DataFrame:
    """Pivot a long pairwise table (e.g. :func:`evallab.agreement.judge_agreement_matrix`) to a square matrix."""
    m = long.pivot(index=rows, columns=cols, values=value)
    if order is not None:
        m = m.reindex(index=list(order), columns=list(order))
    m.index.name = m.columns.name = None
    return m
