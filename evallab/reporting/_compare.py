"""A grid entry in ``index.html``: one comparison instead of one card per run.

For the runs of one grid entry (:mod:`evallab.reporting._grid`) :func:`comparison_table` gathers one row per
combination — its varying values, status, the chosen headline metric with its interval and the run's findings —
from each run's ``<name>.metrics.json``; :func:`comparison_figure` plots that metric across the varying
parameter(s): the first on the x axis, the others as colours. :func:`comparison_html` is the index card, which
also writes ``<entry>.compare.png`` and ``<entry>.compare.csv`` beside the index.

The metric is chosen in the entry's ``compare:``::

    compare:
      metric: loo_trigger_accuracy          # a key of the notebook's metrics ("a.b" for a nested one)
      label: Leave-one-out trigger accuracy     # default: the key in words
      unit: "%"                     # %, pp, pct, p, count or any text; default: the metric's own unit, as the
                                    # report saved it (metrics.json "measures"), else none
      low: loo_trigger_accuracy_low         # the interval's bounds; default: <metric>_low and <metric>_high
      high: loo_trigger_accuracy_high
      level: 0.95                   # the interval's level; default: the run's `confidence` parameter, else 0.95
      units: {tolerance: proportion}   # units of numeric grid parameters, for the x axis label

A value that is missing (a failed run, a metric the run did not write) is "—" in the table with a footnote saying
why and is left out of the figure, which says how many combinations it lacks.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from evallab.errors import ArgumentError

DASH = "—"


def _lookup(metrics: Mapping, key: str):
    cur = metrics
    for part in key.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _number(x) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(float(x)) else None


def _read_metrics(path: Path) -> dict | None:
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _level(r, compare: Mapping) -> float:
    if compare.get("level") is not None:
        return float(compare["level"])
    c = _number(r.parameters.get("confidence"))
    return c if c is not None and 0 < c < 1 else 0.95


def comparison_table(results: Sequence, out: str | Path) -> pd.DataFrame:
    """One row per run of a grid (``results``: the :class:`~evallab.reporting._batch.ReportResult` of its runs, in
    grid order), read from ``<out>/<name>.metrics.json``.

    Columns: ``run``, one column per varying parameter (its value), ``status``, ``value``, ``low``, ``high`` (the
    headline metric and its interval, in the metric's own scale; NaN when missing), ``level``, ``note`` (why a
    value is missing, "" otherwise), ``error`` and ``findings`` (the run's findings, a list of dicts as in
    ``metrics.json``). Raises nothing: an unreadable metrics file is a missing value with its note.
    """
    out = Path(out)
    keys = list(dict.fromkeys(k for r in results for k in r.varying))
    rows = []
    for r in results:
        compare = r.compare or {}
        metric = compare.get("metric")
        doc = _read_metrics(out / f"{r.name}.metrics.json")
        m = (doc or {}).get("metrics") or {}
        value = low = high = None
        note, unit = "", ""
        if r.status != "ok":
            note = "the run failed" + (f" in cell {r.cell}" if r.cell is not None else "")
        elif doc is None:
            note = "the run wrote no readable metrics file"
        elif metric:
            raw = _lookup(m, metric)
            value = _number(raw)
            if value is None:
                note = f"the run's metrics have no number '{metric}'" + ("" if raw is None else f" (it is {raw!r})")
            low = _number(_lookup(m, compare.get("low") or f"{metric}_low"))
            high = _number(_lookup(m, compare.get("high") or f"{metric}_high"))
            unit = str((((doc or {}).get("measures") or {}).get(metric) or {}).get("estimate", {}).get("unit") or "")
        rows.append({"run": r.name, **{k: r.varying.get(k) for k in keys}, "status": r.status,
                     "value": value, "low": low, "high": high, "level": _level(r, compare), "unit": unit, "note": note,
                     "error": r.error or "", "findings": list((doc or {}).get("findings") or r.findings or [])})
    cols = ["run", *keys, "status", "value", "low", "high", "level", "unit", "note", "error", "findings"]
    return pd.DataFrame(rows, columns=cols).astype({"value": float, "low": float, "high": float})


def _unit(compare: Mapping, table: pd.DataFrame) -> str:
    """The metric's unit (the display units of :mod:`evallab.reporting._tables`): ``compare: unit`` when given, else
    the unit the runs saved with it (:meth:`evallab.Report.save`), else none — never guessed from the name."""
    from evallab.reporting._tables import _MEASURE_UNITS

    if compare.get("unit") is not None:
        return str(compare["unit"])
    saved = [u for u in table.get("unit", pd.Series(dtype=str)).dropna().astype(str) if u]
    return _MEASURE_UNITS.get(saved[0], saved[0]) if saved else ""


def axis_label(compare: Mapping, table: pd.DataFrame, *, with_interval: bool, level: float) -> str:
    """The y axis label: the metric's label, its unit and the interval's level ("Accuracy (%, 95% CI)")."""
    from evallab.reporting._tables import UNITS, humanize

    metric = compare.get("metric", "")
    label = compare.get("label") or humanize(metric.replace(".", " "))
    unit = _unit(compare, table)
    suffix = UNITS[unit][1] if unit in UNITS else unit
    parts = [p for p in (suffix if suffix != "n" else "count",
                         f"{level:.0%} CI" if with_interval else "") if p]
    return f"{label} ({', '.join(parts)})" if parts else label


def _param_label(name: str, compare: Mapping) -> str:
    from evallab.reporting._tables import humanize

    unit = (compare.get("units") or {}).get(name)
    return f"{humanize(name)} ({unit})" if unit else humanize(name)


def _value_text(v) -> str:
    from evallab.reporting._tables import fmt_value

    if (isinstance(v, (list, tuple)) and not v) or (isinstance(v, str) and not v):
        return "(empty)"
    return fmt_value(v)


def comparison_figure(table: pd.DataFrame, keys: Sequence[str], compare: Mapping, *, title: str = ""):
    """The headline metric across the grid: points with interval bars, the first varying parameter on the x axis
    (in grid order), each combination of the others a colour (legend titled with their names). Values are shown
    in the metric's unit (a proportion with unit ``"%"`` in percent). Returns a ``matplotlib.figure.Figure``
    (drawn without pyplot, on the Agg canvas), or ``None`` when no combination has a value.

    Raises :class:`~evallab.errors.ArgumentError` when ``keys`` is empty (a grid varies at least one parameter).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from evallab.reporting import _plots as plots
    from evallab.reporting._tables import UNITS, humanize

    if not keys:
        raise ArgumentError("keys: a comparison needs at least one varying parameter")
    have = table.dropna(subset=["value"])
    if have.empty:
        return None
    unit = _unit(compare, table)
    scale = UNITS[unit][0] if unit in UNITS else 1.0
    with_interval = bool(have[["low", "high"]].notna().all(axis=1).any())
    level = float(table["level"].iloc[0])
    df = pd.DataFrame({"x": [_value_text(v) for v in table[keys[0]]], "value": table["value"],
                       "low": table["low"].fillna(table["value"]), "high": table["high"].fillna(table["value"])})
    hue = None
    if len(keys) > 1:
        df["series"] = [_value_text(row[keys[1]]) if len(keys) == 2 else
                        ", ".join(f"{humanize(k)} = {_value_text(row[k])}" for k in keys[1:])
                        for _, row in table.iterrows()]
        hue = "series"
    ncat = df["x"].nunique()
    fig = Figure(figsize=(min(11.0, 3.2 + 0.9 * ncat + (2.5 if hue else 0)), 4.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ylabel = axis_label(compare, table, with_interval=with_interval, level=level)
    label = ylabel.split(" (")[0]
    varying = " × ".join(humanize(k) for k in keys)
    plots.interval_plot(df, x="x", y="value", low="low", high="high", hue=hue, scale=scale,
                        title=title or f"{label} across {varying}", ylabel=ylabel,
                        xlabel=_param_label(keys[0], compare), ax=ax)
    if hue:
        ax.get_legend().set_title(", ".join(humanize(k) for k in keys[1:]))
    missing = int(table["value"].isna().sum())
    if missing:
        ax.annotate(f"{missing} of {len(table)} combinations have no value (see the table)", xy=(0, -0.32),
                    xycoords="axes fraction", fontsize=9, color="#444")
    fig.tight_layout()
    return fig


def _estimate(row, unit: str) -> str:
    from evallab.reporting._tables import format_estimate

    if pd.isna(row["value"]):
        return DASH
    lo, hi = (None if pd.isna(row[c]) else float(row[c]) for c in ("low", "high"))
    text = format_estimate(float(row["value"]), lo, hi, unit, None)
    return text


def _findings_html(findings: Sequence[Mapping], limit: int = 2) -> str:
    from evallab.reporting._tables import format_estimate

    items = []
    for f in list(findings)[:limit]:
        est = format_estimate(f.get("value"), f.get("low"), f.get("high"), f.get("unit") or "", f.get("level"),
                              f.get("n"), method=f.get("method"), n_unit=f.get("n_unit") or "")
        items.append(f"<li>{html.escape(str(f.get('sentence', '')))}"
                     + (f" <span class='est'>— {html.escape(est)}</span>" if est else "") + "</li>")
    more = f"<li>… {len(findings) - limit} more in the report</li>" if len(findings) > limit else ""
    return f"<ul class='findings'>{''.join(items)}{more}</ul>" if items else DASH


def comparison_sentence(table: pd.DataFrame, keys: Sequence[str], compare: Mapping) -> str:
    """The comparison in words: where the headline metric is highest and lowest across the grid, with both
    estimates and intervals, whether those two intervals overlap (a description, not a test), and how many
    combinations have no value. ``""`` when fewer than two combinations have a value."""
    from evallab.reporting._tables import humanize

    have = table.dropna(subset=["value"])
    if len(have) < 2:
        return ""
    label = axis_label(compare, table, with_interval=False, level=0.95).split(" (")[0]
    unit = _unit(compare, table)
    hi, lo = have.loc[have["value"].idxmax()], have.loc[have["value"].idxmin()]

    def where(row):
        return ", ".join(f"{humanize(k)} {_value_text(row[k])}" for k in keys)
    if hi["value"] == lo["value"]:
        text = f"{label} is the same, {_estimate(hi, unit)}, in all {len(have)} combinations with a value."
    else:
        text = (f"{label} is highest with {where(hi)} ({_estimate(hi, unit)}) and lowest with {where(lo)} "
                f"({_estimate(lo, unit)}).")
        if not have[["low", "high"]].isna().any().any():
            overlap = hi["low"] <= lo["high"]
            text += f" The two {float(hi['level']):.0%} intervals {'overlap' if overlap else 'do not overlap'}."
    missing = len(table) - len(have)
    if missing:
        text += f" {missing} of {len(table)} combinations have no value (see the table)."
    return text


def comparison_html(group: str, results: Sequence, out: str | Path, cards: Sequence[str] = ()) -> str:
    """The index card of a grid entry: what varies, a table with a row per combination (its values, status, the
    headline metric with its interval, its findings with theirs, a link to the report), the figure of the metric
    across the grid (written to ``<out>/<group>.compare.png``; the table also to ``<group>.compare.csv``), and
    ``cards`` (each run's own card) folded away."""
    from evallab.reporting._batch_export import tidy_paths
    from evallab.reporting._tables import humanize

    out = Path(out)
    table = comparison_table(results, out)
    keys = list(dict.fromkeys(k for r in results for k in r.varying))
    compare = next((r.compare for r in results if r.compare), {})
    metric = compare.get("metric")
    first = results[0]
    title = first.title or humanize(group)
    ok = int((table["status"] == "ok").sum())
    levels = {k: list(dict.fromkeys(_value_text(r.varying.get(k)) for r in results)) for k in keys}
    what = " × ".join(f"{html.escape(humanize(k))} ({html.escape(', '.join(v))})" for k, v in levels.items())
    seconds = sum(r.seconds for r in results)
    parts = [f"<section class='card grid' id='{html.escape(group)}'><h2>{html.escape(title)}: "
             f"a grid of {len(results)} runs</h2>"]
    if first.question and first.question != title:
        parts.append(f"<p class='question'>{html.escape(first.question)}</p>")
    sentence = comparison_sentence(table, keys, compare) if metric else ""
    if sentence:
        parts.append(f"<p class='finding'><b>Finding.</b> {html.escape(sentence)}</p>")
    parts.append(f"<p class='status'>Grid entry <b>{html.escape(group)}</b> of {html.escape(first.source or '')}: "
                 f"{what}. <span class='{'ok' if ok == len(results) else 'failed'}'>{ok} of {len(results)} ran to "
                 f"the end</span> · {seconds:.1f} s of runs</p>")
    unit = _unit(compare, table) if metric else ""
    level = float(table["level"].iloc[0]) if len(table) else 0.95
    notes: list[str] = []

    def note_mark(text: str) -> str:
        if text not in notes:
            notes.append(text)
        return f"<sup>{notes.index(text) + 1}</sup>"

    head = "".join(f"<th>{html.escape(_param_label(k, compare))}</th>" for k in keys)
    metric_head = ""
    if metric:
        metric_head = f"<th>{html.escape(axis_label(compare, table, with_interval=True, level=level))}</th>"
    rows = []
    for r, (_, row) in zip(results, table.iterrows(), strict=True):
        vals = "".join(f"<td>{html.escape(_value_text(row[k]))}</td>" for k in keys)
        link = f"<a href='{html.escape(Path(r.html).name)}'>{html.escape(r.name)}</a>" if r.html else \
            html.escape(r.name)
        status = html.escape(r.status)
        if r.status != "ok":
            where = f"cell {r.cell}: " if r.cell is not None else ""
            status += note_mark(f"{r.name}: {tidy_paths(where + (r.error or 'failed'), out.resolve())}")
        cell = ""
        if metric:
            est = _estimate(row, unit)
            mark = note_mark(row["note"]) if est == DASH and row["note"] else ""
            cell = f"<td class='est'>{html.escape(est)}{mark}</td>"
        rows.append(f"<tr>{vals}<td class='{html.escape(r.status)}'>{status}</td>{cell}"
                    f"<td>{_findings_html(row['findings'])}</td><td class='run'>{link}</td></tr>")
    parts.append("<div class='compare'><table><thead><tr>" + head + "<th>Status</th>" + metric_head
                 + "<th>Headline findings</th><th>Report</th></tr></thead><tbody>" + "".join(rows)
                 + "</tbody></table>")
    if notes:
        parts.append("<p class='notes'>" + "<br>".join(f"{i}. {html.escape(n)}" for i, n in enumerate(notes, 1))
                     + "</p>")
    parts.append("</div>")
    csv = table.drop(columns=["findings"]).assign(
        findings=[" | ".join(str(f.get("sentence", "")) for f in fs) for fs in table["findings"]])
    csv.to_csv(out / f"{group}.compare.csv", index=False)
    png = out / f"{group}.compare.png"
    if metric:
        fig = comparison_figure(table, keys, compare)
        if fig is not None:
            fig.savefig(png, dpi=96, bbox_inches="tight")
            alt = f"{axis_label(compare, table, with_interval=False, level=level)} across the grid"
            parts.append(f"<p><img class='compare' src='{html.escape(png.name)}' alt='{html.escape(alt, quote=True)}'>"
                         "</p>")
        else:
            png.unlink(missing_ok=True)
            parts.append(f"<p class='meta'>No combination has a value of {html.escape(metric)}: nothing to plot.</p>")
    else:
        png.unlink(missing_ok=True)
        parts.append("<p class='meta'>Add <code>compare: {metric: NAME}</code> to this grid entry in reports.yaml "
                     "to plot one of its metrics across the grid.</p>")
    parts.append(f"<p class='meta'>The table as a file: <a href='{html.escape(group)}.compare.csv'>"
                 f"{html.escape(group)}.compare.csv</a>.</p>")
    if cards:
        parts.append(f"<details><summary>Each run's card ({len(cards)})</summary>{''.join(cards)}</details>")
    parts.append("</section>")
    return "".join(parts)
