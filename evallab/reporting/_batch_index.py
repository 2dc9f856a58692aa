"""The batch's ``index.html``: one card per report (question, findings with intervals and n, data and parameters,
status and time, all metrics folded away), a grid entry as one comparison (:mod:`evallab.reporting._compare`),
and ``batch.json`` beside it. Re-exported by :mod:`evallab.reporting._batch`.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

from evallab.reporting._batch_export import tidy_paths
from evallab.reporting._batch_run import ReportResult

_INDEX_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;
 color:#1a1a1a;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.25rem}
.card{border:1px solid #d0d7de;border-radius:8px;padding:.8rem 1.1rem;margin:1.1rem 0;background:#fff}
.card h2{font-size:1.2rem;margin:.1rem 0 .3rem 0}
.question{font-style:italic;margin:.2rem 0 .5rem 0;color:#333}
.status{font-size:.9rem;color:#444;margin:.2rem 0}
.status .ok{color:#1b5e20;font-weight:600}.status .failed{color:#b00020;font-weight:600}
.findings{margin:.4rem 0 .6rem 1.1rem;padding:0}.findings li{margin:.25rem 0}
.est{color:#333;white-space:nowrap}
.meta{font-size:.9rem;color:#333;margin:.3rem 0}
details{margin:.3rem 0}summary{cursor:pointer;color:#0b5394}
table{border-collapse:collapse;max-width:100%}td,th{border-bottom:1px solid #ddd;padding:.2rem .5rem;text-align:left;
 vertical-align:top;overflow-wrap:anywhere}
pre.failed{white-space:pre-wrap;overflow-wrap:anywhere;color:#b00020;background:#fff5f5;padding:.5rem}
.compare table{font-size:.92rem}.compare td.failed{color:#b00020;font-weight:600}.compare .findings{margin:0 0 0 1rem}
.compare th{border-bottom:2px solid #555}.notes{font-size:.85rem;color:#444}
.compare td,.compare th{overflow-wrap:normal;word-break:normal}.compare td.est{white-space:nowrap}
.compare td.run{overflow-wrap:anywhere;min-width:8ch}
img.compare{max-width:100%;height:auto}
.finding{border-left:4px solid #0072B2;background:#eef5fb;padding:.35rem .7rem;margin:.5rem 0}
"""


#: parameter names that say which data a report read
_DATA_PARAM = re.compile(r"^(?!record_dir$|cache_dir$)(.*path|.*_dir|catalog|.*report|.*recordings.*)$")


def _value_text(v) -> str:
    from evallab.reporting._tables import fmt_value

    if v == "" or v == []:
        return "default"
    return fmt_value(v)


def _finding_html(f: Mapping) -> str:
    """A finding of ``metrics.json`` as a list item: the sentence, then what it does not state itself
    (:meth:`~evallab.reporting._tables.Finding.extra`: the number is never said twice)."""
    from dataclasses import fields

    from evallab.reporting._tables import Finding

    est = Finding(**{x.name: f.get(x.name) for x in fields(Finding) if x.name in f or x.name == "sentence"}
                  | {"sentence": str(f.get("sentence", "")), "unit": f.get("unit") or "",
                     "n_unit": f.get("n_unit") or ""}).extra()
    sentence = html.escape(str(f.get("sentence", "")))
    return f"<li>{sentence}" + (f" <span class='est'>— {html.escape(est)}</span>" if est else "") + "</li>"


def _read_doc(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _scalar_text(v, meaning: Mapping | None) -> str:
    """A metric in words: through its :class:`~evallab.Estimate` meaning when ``metrics.json`` has one (unit,
    interval, level, method, n), else as a plain value — a unit is never guessed from the name."""
    from evallab._results import Estimate
    from evallab.reporting._tables import fmt_value

    est = (meaning or {}).get("estimate")
    if isinstance(v, (int, float)) and not isinstance(v, bool) and est:
        return Estimate(float(v), **{k: est.get(k) for k in ("level", "method", "n", "note")},
                        unit=est.get("unit") or "", n_unit=est.get("n_unit") or "").number()
    return fmt_value(v)


def _headline_html(metrics: Mapping, measures: Mapping | None = None) -> str:
    """Headline metrics of a notebook that states no findings, readably: words for names, each number in its unit
    when ``measures`` gives one."""
    from evallab.reporting._tables import humanize

    measures = measures or {}
    rows = "".join(f"<tr><th>{html.escape(humanize(k))}</th><td>{html.escape(_scalar_text(v, measures.get(k)))}"
                   "</td></tr>" for k, v in metrics.items())
    return f"<table>{rows}</table>"


def _all_metrics_html(path: Path) -> str:
    """The report's whole ``metrics.json`` folded away: numbers in their units and tables with their intervals
    and methods where the file carries their measures (:meth:`evallab.Report.save`), plain values otherwise."""
    import pandas as pd

    from evallab._results import Results
    from evallab.reporting._tables import humanize, to_html

    doc = _read_doc(path)
    if not doc:
        return ""
    m, measures = doc.get("metrics") or {}, doc.get("measures") or {}
    scalars, tables = [], []
    for k, v in m.items():
        if isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            meta = measures.get(k)
            frame = Results.from_records(v, meta) if meta and meta.get("measures") else pd.DataFrame(v)
            tables.append(f"<h4>{html.escape(humanize(k))}</h4>" + to_html(frame, max_rows=10**6,
                                                                           max_cols=6).html)
        else:
            scalars.append(f"<tr><th>{html.escape(humanize(k))}</th>"
                           f"<td>{html.escape(_scalar_text(v, measures.get(k)))}</td></tr>")
    body = (f"<table>{''.join(scalars)}</table>" if scalars else "") + "".join(tables)
    return (f"<details><summary>All metrics ({len(m)}) · <a href='{html.escape(path.name)}'>as a file</a></summary>"
            f"{body}</details>")


def _card(r: ReportResult, out: Path) -> str:
    from evallab.reporting._tables import humanize

    title = html.escape(r.title or humanize(r.name))
    link = f"<a href='{html.escape(Path(r.html).name)}'>{title}</a>" if r.html else title
    parts = [f"<section class='card' id='{html.escape(r.name)}'><h2>{link}</h2>"]
    if r.question and r.question != r.title:
        parts.append(f"<p class='question'>{html.escape(r.question)}</p>")
    when = f" · finished {html.escape(r.finished_at)}" if r.finished_at else ""
    parts.append(f"<p class='status'>Status: <span class='{html.escape(r.status)}'>{html.escape(r.status)}</span>"
                 f" · {r.seconds:.1f} s{when}</p>")
    if r.status == "failed":
        cell = f"cell {r.cell}: " if r.cell is not None else ""
        parts.append(f"<pre class='failed'>{html.escape(tidy_paths(cell + (r.error or ''), out.resolve()))}</pre>")
    if r.findings:
        parts.append("<ul class='findings'>" + "".join(_finding_html(f) for f in r.findings[:5]) + "</ul>")
    elif r.metrics:
        parts.append(_headline_html(r.metrics, _read_doc(out / f"{r.name}.metrics.json").get("measures")))
    if r.parameters:
        data = [k for k in r.parameters if _DATA_PARAM.search(k)]
        def item(k):
            changed = " (set for this run)" if k in r.changed else ""
            tip = html.escape(r.parameter_help.get(k, ""), quote=True)
            return (f"<span title='{tip}'>{html.escape(humanize(k))}: "
                    f"<b>{html.escape(tidy_paths(_value_text(r.parameters[k]), out.resolve()))}</b>{changed}</span>")
        src = f"Notebook {html.escape(r.source)}. " if r.source else ""
        if data:
            parts.append(f"<p class='meta'>{src}Data: " + "; ".join(item(k) for k in data)
                         + " (“default”: the bundled data set).</p>")
        rest = [k for k in r.parameters if k not in data]
        if rest:
            rows = "".join(f"<tr><th>{html.escape(humanize(k))}</th><td>"
                           f"{html.escape(tidy_paths(_value_text(r.parameters[k]), out.resolve()))}"
                           f"{' (set for this run)' if k in r.changed else ''}</td>"
                           f"<td>{html.escape(r.parameter_help.get(k, ''))}</td></tr>" for k in rest)
            changed = [humanize(k) for k in rest if k in r.changed]
            summ = f"Parameters ({len(rest)}; set for this run: {', '.join(changed)})" if changed else \
                f"Parameters ({len(rest)}, all defaults)"
            parts.append(f"<details><summary>{html.escape(summ)}</summary><table>{rows}</table></details>")
    mpath = out / f"{r.name}.metrics.json"
    if mpath.exists():
        parts.append(_all_metrics_html(mpath))
    parts.append("</section>")
    return "".join(parts)


def write_index(results: Sequence[ReportResult], out_dir: str | Path) -> Path:
    """Write ``index.html``: one card per report — the question, its findings with intervals and n (or, for a
    notebook that still passes ``headline=``, those metrics readably), the data and parameters of the run, status
    and time — with the full metrics folded away."""
    from evallab.reporting._compare import comparison_html

    out = Path(out_dir)
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    ok = sum(r.status == "ok" for r in results)
    groups = list(dict.fromkeys(r.group for r in results if r.group))
    in_grids = sum(bool(r.group) for r in results)
    grids = (f" ({'all' if in_grids == len(results) else in_grids} of them runs of {len(groups)} parameter "
             f"{'grid, shown' if len(groups) == 1 else 'grids, each shown'} as one comparison)") if groups else ""
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>evallab calibration reports</title><style>{_INDEX_CSS}</style></head><body>",
        "<h1>evallab calibration reports</h1>",
        f"<p>{len(results)} report{'' if len(results) == 1 else 's'}{grids}, {ok} ran to the end; generated {now} "
        "by <code>evallab report</code>. "
        "Each report is a run of a notebook in <code>notebooks/</code>; click a title to read it. Intervals are 95% "
        "confidence intervals unless stated; n is the number of units behind a number.</p>",
    ]
    for r in results:
        if not r.group:
            parts.append(_card(r, out))
        elif r.group in groups:  # a grid's card where its first run is
            groups.remove(r.group)
            runs = [x for x in results if x.group == r.group]
            parts.append(comparison_html(r.group, runs, out, [_card(x, out) for x in runs]))
    parts.append("</body></html>")
    path = out / "index.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    (out / "batch.json").write_text(json.dumps([asdict(r) for r in results], indent=2, default=str),
                                    encoding="utf-8")
    return path
