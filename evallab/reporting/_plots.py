"""Figures for the reports (matplotlib). Every figure has a title, labelled axes and units.

Functions return the ``matplotlib.figure.Figure``; notebooks display it. Use the Agg backend in tests.

One style for every figure (:func:`use_style`, applied at import and by each function): the Okabe–Ito
colour-blind-safe palette, text of at least 9 pt, a legend wherever colour encodes something, 95% intervals with
the level in the axis label, heatmap text coloured by cell luminance.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from evallab.reporting._tables import humanize

#: Okabe & Ito (2008) colour-blind-safe palette (black last)
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000"]
#: the report style (matplotlib rcParams)
STYLE = {
    "axes.prop_cycle": mpl.cycler(color=OKABE_ITO),
    "font.size": 10, "axes.titlesize": 11.5, "axes.labelsize": 10, "xtick.labelsize": 9, "ytick.labelsize": 9,
    "legend.fontsize": 9, "legend.title_fontsize": 9, "figure.titlesize": 12, "figure.dpi": 96,
    "savefig.dpi": 96, "figure.facecolor": "white", "axes.facecolor": "white", "savefig.facecolor": "white",
    "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True, "grid.alpha": 0.3,
    "image.cmap": "viridis", "figure.constrained_layout.use": False,
}
MIN_FONT = 9


def use_style() -> None:
    """Apply the report style to matplotlib (idempotent; cheap)."""
    mpl.rcParams.update(STYLE)


def text_color(rgba) -> str:
    """Black or white, whichever reads better on a cell of colour ``rgba`` (WCAG relative luminance)."""
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3])
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "black" if lum > 0.179 else "white"


def _z(level: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + level / 2))


use_style()


def interval_plot(df: pd.DataFrame, *, x: str, y: str, low: str, high: str, hue: str | None = None,
                  title: str, ylabel: str, xlabel: str | None = None, scale: float = 1.0,
                  ref: float | None = None, ax=None):
    """Point estimates with interval bars: one point per row, grouped along ``x`` and coloured by ``hue``.

    ``scale`` multiplies values (e.g. 100 for percent); ``ref`` draws a dashed reference line. A ``hue`` group
    with no finite value (e.g. a correction no row could compute) is left out: no slot, no legend entry.
    """
    use_style()
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(8, 4))
    cats = list(dict.fromkeys(df[x].astype(str)))
    hues = list(dict.fromkeys(df[hue].astype(str))) if hue else [None]
    if hue:  # a group with no value to draw takes no slot and no legend entry
        finite = np.isfinite(pd.to_numeric(df[y], errors="coerce").to_numpy(float))
        hues = [h for h in hues if finite[(df[hue].astype(str) == h).to_numpy()].any()] or hues[:1]
    width = 0.8 / max(len(hues), 1)
    for i, h in enumerate(hues):
        d = df if h is None else df[df[hue].astype(str) == h]
        pos = np.array([cats.index(v) for v in d[x].astype(str)]) + (i - (len(hues) - 1) / 2) * width
        val = d[y].to_numpy(float) * scale
        lo = d[low].to_numpy(float) * scale
        hi = d[high].to_numpy(float) * scale
        err = np.vstack([np.clip(val - lo, 0, None), np.clip(hi - val, 0, None)])
        err = np.nan_to_num(err)
        ax.errorbar(pos, val, yerr=err, fmt="o", capsize=3, label=h,
                     color=None if hue else OKABE_ITO[0])
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels(cats, rotation=30, ha="right")
    if ref is not None:
        ax.axhline(ref * scale, ls="--", lw=1, color="grey")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(xlabel or x)
    if hue and ax.get_legend_handles_labels()[0]:
        ax.legend(title=hue.replace("_", " "), loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig


def heatmap(matrix: pd.DataFrame, *, title: str, cbar_label: str, vmin: float = -1.0, vmax: float = 1.0,
            fmt: str = "{:.2f}", xlabel: str = "", ylabel: str = ""):
    """A square matrix as a heatmap with values written in the cells (black or white by cell luminance), row and
    column labels at 9 pt or more, the colorbar beside the plot with its label along it."""
    use_style()
    nr, nc = matrix.shape
    cell = 0.62  # inches per cell: 9 pt labels and cell values fit
    # wide and tall enough for the title above the whole figure and the colour-bar label along the bar
    fig, ax = plt.subplots(figsize=(min(12.0, max(6.4, cell * nc + 3.2)), min(10.0, max(4.4, cell * nr + 2.2))),
                           layout="constrained")
    cmap = mpl.colormaps["viridis"]
    norm = mpl.colors.Normalize(vmin=vmin, vmax=vmax)
    im = ax.imshow(matrix.to_numpy(float), cmap=cmap, norm=norm, aspect="auto")
    ax.grid(False)
    ax.set_xticks(range(nc))
    ax.set_xticklabels(matrix.columns, rotation=35, ha="right", fontsize=MIN_FONT)
    ax.set_yticks(range(nr))
    ax.set_yticklabels(matrix.index, fontsize=MIN_FONT)
    for i in range(nr):
        for j in range(nc):
            v = matrix.iat[i, j]
            if pd.notna(v):
                ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=MIN_FONT,
                        color=text_color(cmap(norm(float(v)))))
    cb = fig.colorbar(im, ax=ax, fraction=0.05, pad=0.03)
    fs = mpl.rcParams["font.size"]  # a label longer than the bar is wrapped onto a second line along it
    cb.set_label("\n".join(textwrap.wrap(cbar_label, max(12, int(fig.get_size_inches()[1] * 0.7 * 72 / (0.6 * fs))))),
                 rotation=90, labelpad=8)
    cb.ax.tick_params(labelsize=MIN_FONT)
    # the title spans the figure (suptitle, wrapped to its width), so it never runs into the colour-bar label
    width = fig.get_size_inches()[0]
    fig.suptitle("\n".join(textwrap.wrap(title, max(30, int(width * 72 / (0.6 * mpl.rcParams["font.size"]))))))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return fig


def scatter_intervals(df: pd.DataFrame, *, x: str, y: str, x_low: str, x_high: str, y_low: str, y_high: str,
                      label: str, title: str, xlabel: str, ylabel: str, xref: float | None = None,
                      yref: float | None = None):
    """One point per row with horizontal and vertical interval bars, annotated with ``label``."""
    use_style()
    fig, ax = plt.subplots(figsize=(7.5, 5))
    rows = df.sort_values(y).reset_index(drop=True)
    for k, r in rows.iterrows():
        xe = [[max(r[x] - r[x_low], 0)], [max(r[x_high] - r[x], 0)]]
        ye = [[max(r[y] - r[y_low], 0)], [max(r[y_high] - r[y], 0)]]
        ax.errorbar(r[x], r[y], xerr=np.nan_to_num(xe), yerr=np.nan_to_num(ye), fmt="o", capsize=3,
                    color=OKABE_ITO[0], ecolor="#7aa6c9")
        # alternate label sides so neighbouring points do not print over each other
        dx, ha = (6, "left") if k % 2 == 0 else (-6, "right")
        ax.annotate(str(r[label]), (r[x], r[y]), textcoords="offset points", xytext=(dx, 4 + 6 * (k % 3 - 1)),
                    fontsize=MIN_FONT, ha=ha)
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
    """Pivot a long pairwise table (e.g. :func:`evallab.metrics._agreement.judge_agreement_matrix`) to a square matrix."""
    m = long.pivot(index=rows, columns=cols, values=value)
    if order is not None:
        m = m.reindex(index=list(order), columns=list(order))
    m.index.name = m.columns.name = None
    return m


# ---------------------------------------------------------------------------------------------------- drift
def plot_drift(report, *, label: str = "group", title: str | None = None, ax=None):
    """Accuracy change (candidate − baseline, percentage points) per group with its bootstrap interval; groups
    over the gate's tolerance in red, the tolerance band dashed. Returns the matplotlib Figure."""
    g = report.groups.sort_values("delta_accuracy", na_position="first").reset_index(drop=True)
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(8, max(2.5, 0.28 * len(g) + 1)))
    y = np.arange(len(g))
    d = 100 * g["delta_accuracy"].to_numpy(float)
    lo = 100 * g["delta_low"].to_numpy(float)
    hi = 100 * g["delta_high"].to_numpy(float)
    err = np.nan_to_num(np.vstack([np.clip(d - lo, 0, None), np.clip(hi - d, 0, None)]))
    flagged = g["flagged"].to_numpy(bool)
    use_style()
    for m, color, mk, name in ((~flagged, OKABE_ITO[0], "o", "within tolerance"),
                               (flagged, OKABE_ITO[3], "s", f"flagged (over ±{100 * report.gate.tolerance:.0f} pp)")):
        if m.any():
            ax.errorbar(d[m], y[m], xerr=err[:, m], fmt=mk, color=color, capsize=2, label=name)
    tol = 100 * report.gate.tolerance
    for x in (-tol, tol):
        ax.axvline(x, ls="--", lw=1, color="grey")
    ax.axvline(0, lw=0.8, color="black")
    ax.set_yticks(y)
    ax.set_yticklabels(g[label].astype(str), fontsize=MIN_FONT)
    ax.set_xlabel("accuracy vs gold, candidate − baseline (percentage points, 95% bootstrap interval)")
    ax.set_ylabel(label)
    ax.legend(loc="best")
    ax.set_title(title or f"Drift {report.baseline_judge} → {report.candidate_judge} (tolerance ±{tol:.0f} pp dashed)")
    fig.tight_layout()
    return fig


def plot_win_rates(rates: pd.DataFrame, *, entity: str = "generator_2", title: str | None = None, ax=None,
                   confidence: float = 0.95):
    """Win rate of each entity (model) under each judge, as grouped bars with the ``confidence`` interval
    (percent): the table's ``win_rate_low``/``win_rate_high`` columns when present, else ± z·standard error
    (normal approximation).

    ``rates`` is the table of :func:`evallab.metrics._evaluators.win_rates` (``win_rate``, ``win_rate_low``,
    ``win_rate_high``). Returns the matplotlib Figure.
    """
    use_style()
    w = rates.pivot(index=entity, columns="judge", values="win_rate") * 100
    if {"win_rate_low", "win_rate_high"} <= set(rates.columns):
        lo = w - rates.pivot(index=entity, columns="judge", values="win_rate_low") * 100
        hi = rates.pivot(index=entity, columns="judge", values="win_rate_high") * 100 - w
    else:
        se = rates.pivot(index=entity, columns="judge", values="standard_error") * 100 * _z(confidence)
        lo, hi = se, se
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(8, 4))
    x = np.arange(len(w))
    width = 0.8 / max(1, w.shape[1])
    for i, j in enumerate(w.columns):
        err = np.nan_to_num(np.vstack([lo[j].to_numpy(float), hi[j].to_numpy(float)]).clip(0))
        ax.bar(x + (i - (w.shape[1] - 1) / 2) * width, w[j].to_numpy(float), width, yerr=err, capsize=2, label=j,
               color=OKABE_ITO[i % len(OKABE_ITO)])
    ax.set_xticks(x)
    ax.set_xticklabels(w.index.astype(str), rotation=30, ha="right")
    ax.set_ylabel(f"win rate vs baseline (%, {confidence:.0%} interval)")
    ax.set_xlabel({"generator_2": "model compared with the baseline (generator_2)"}.get(entity, humanize(entity)))
    ax.set_title(title or "Win rate of each model under each annotator configuration")
    ax.legend(title="judge", loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------- triggers
def plot_curves(curves: Mapping[str, Mapping], *, title: str = ""):
    """ROC (left) and precision-recall (right) curves, one line per label. Returns the matplotlib Figure."""
    use_style()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.6))
    for label, c in curves.items():
        a.plot(c["fpr"], c["tpr"], label=f"{label} (AUC {c['roc_auc']:.3f})")
        b.plot(c["recall"], c["precision"], label=f"{label} (AP {c['average_precision']:.3f})")
    a.plot([0, 1], [0, 1], ls=":", c="grey", lw=1)
    a.set(xlabel="false positive rate (share of wrong (probe, skill) pairs selected)",
          ylabel="true positive rate (recall)", title="ROC")
    b.set(xlabel="recall (share of probes selecting their skill)", ylabel="precision (share of selections right)",
          title="Precision-recall")
    for ax in (a, b):
        ax.legend(loc="lower right" if ax is a else "lower left")
        ax.grid(alpha=0.3)
    fig.suptitle(title or "Trigger selection: ROC and precision-recall over (probe, skill) pairs")
    fig.tight_layout()
    return fig


def plot_threshold_sweep(results: Sequence, *, objective: str = "f1", population: str = "trigger probes"):
    """F1, balanced accuracy, MCC and recall against the threshold, one panel per tuned target, with the chosen
    threshold (solid) and keryx's constant (dashed). Plain accuracy is not drawn: with one own skill per probe
    against dozens of others it stays near its base rate at every threshold (see
    :func:`evallab.skills.select_nothing_value`). ``population`` names the probes behind the curves in the
    title. Returns the matplotlib Figure."""
    use_style()
    fig, axes = plt.subplots(1, len(results), figsize=(min(13.0, 4.3 * len(results)), 4.2), squeeze=False)
    names = {"f1": "F1", "balanced_accuracy": "balanced accuracy", "mcc": "MCC", "recall": "recall"}
    for ax, r in zip(axes[0], results, strict=True):
        for col, label in names.items():
            ax.plot(r.curve.threshold, r.curve[col], label=label)
        row = r.table.set_index("objective").loc[objective]
        if np.isfinite(row.threshold):
            ax.axvline(row.threshold, c="k", lw=1, label=f"best {names.get(objective, objective)}: "
                                                         f"{row.threshold:.2f}")
        ax.axvline(row.keryx_threshold, c="k", lw=1, ls="--", label=f"keryx: {row.keryx_threshold:.2f}")
        low = float(np.nanmin(r.curve[list(names)].to_numpy(float), initial=0.0))
        ax.set(xlabel=f"threshold on the {r.target} score (coverage, 0-1)",
               ylabel="metric value (0-1; MCC -1 to 1)", title=f"{r.target}", ylim=(min(0.0, low) - 0.02, 1.02))
        ax.legend(loc="lower left")
        ax.grid(alpha=0.3)
    fig.suptitle(f"Metrics against the threshold ({population})")
    fig.tight_layout()
    return fig


def plot_flip_rates(report, *, label: str = "group", title: str | None = None, confidence: float = 0.95, ax=None):
    """MeowKit's drift measure per group: the share of verdicts that changed (baseline → candidate) with its
    item-cluster interval, against the tolerance (dashed). Marker and colour encode the gate's status (drift /
    within / inconclusive / untested, legend shown). ``report`` is a :class:`evallab.metrics._drift.DriftReport`.
    Returns the matplotlib Figure."""
    use_style()
    g = report.groups.sort_values("flip_rate", na_position="first").reset_index(drop=True)
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(8, max(2.5, 0.28 * len(g) + 1.2)))
    y = np.arange(len(g))
    v = 100 * g["flip_rate"].to_numpy(float)
    err = np.nan_to_num(np.vstack([np.clip(v - 100 * g["flip_rate_low"].to_numpy(float), 0, None),
                                   np.clip(100 * g["flip_rate_high"].to_numpy(float) - v, 0, None)]))
    style = {"drift": ("#D55E00", "s"), "inconclusive": ("#E69F00", "D"), "within": ("#0072B2", "o"),
             "untested": ("#999999", "x")}
    for status, (color, marker) in style.items():
        m = (g["status"] == status).to_numpy()
        if m.any():
            ax.errorbar(v[m], y[m], xerr=err[:, m], fmt=marker, color=color, capsize=2, label=status)
    ax.axvline(100 * report.gate.tolerance, ls="--", lw=1, color="black",
               label=f"tolerance {report.gate.tolerance:.0%}")
    ax.set_yticks(y)
    # a key column with no value recorded ("subset=") is left out of the tick label
    ax.set_yticklabels([", ".join(x for x in str(t).split(", ") if not x.endswith("=")) or "all"
                        for t in g[label].astype(str)])
    ax.set_xlabel(f"verdicts changed, baseline → candidate (% of replies both parsed; {confidence:.0%} interval)")
    ax.set_ylabel(label)
    ax.set_title(title or f"Drift {report.baseline_judge} → {report.candidate_judge}")
    ax.legend(title="gate status", loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig
