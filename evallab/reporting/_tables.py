"""Publication tables, findings, conclusions and caveats: what :class:`evallab.Report` shows.

A notebook never calls this module: it states findings and shows tables through its :class:`evallab.Report`
(``report.show(results, columns)``, ``report.finding(sentence, estimate)``, ``report.render(section)``), which
keeps what it stated on the report object, not in module state.

:func:`to_html` renders a DataFrame as the table pandas' Styler writes (:func:`table_markup`): an estimate and its
interval in one cell ("93.1 [90.2, 95.4]"), the unit in the column header, proportions as % and differences of proportions in
percentage points, no index column, "—" for a missing value with a footnote saying why (from a ``note``/``reason``
column where present), digits per quantity, cells that wrap (no horizontal scrollbar at 1280 px; wide tables are
split into parts that repeat the key columns), and long tables folded in ``<details>`` with the full table written
beside the report as CSV. :func:`publication_html` is the automatic version the report kernel uses for a plain
``display(df)``. A :class:`~evallab.Results` brings its labels, units, intervals, their level and method (its
measures); a plain frame is shown with the units and intervals passed for it, and nothing is guessed from column
names (issue 25: the method beside an interval is the method that computed it).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evallab._results import Results

#: units a column can have: how values are scaled, the header suffix and the default decimals
UNITS = {
    "%": (100.0, "%", 1),  # a proportion 0-1 shown in percent
    "pct": (1.0, "%", 1),  # already in percent
    "pp": (100.0, "pp", 1),  # a difference of proportions, in percentage points (signed)
    "pp_pct": (1.0, "pp", 1),  # a difference already in percentage points
    "p": (1.0, "", 3),  # a p-value
    "count": (1.0, "n", 0),
    "": (1.0, "", None),
}
DASH = "—"
MAX_ROWS = 15  # longer tables are folded into <details> (with a CSV beside the report)
MAX_COLS = 8  # tables wider than this (and than WIDTH_PX) are split into parts repeating the key columns
WIDTH_PX = 1150  # the width a table may take in a report (the page is read at 1280 px)

_CSS = """<style>
.evl-table{margin:.5rem 0 1rem 0;max-width:100%}
.evl-table table{border-collapse:collapse;table-layout:auto;width:auto;max-width:100%;font-size:13px}
.evl-table.evl-table table th,.evl-table.evl-table table td{padding:.2rem .45rem;border-bottom:1px solid #ddd;
 white-space:normal;overflow-wrap:anywhere;vertical-align:top;text-align:left}
.evl-table.evl-table table th{overflow-wrap:normal;word-break:normal;hyphens:manual}
.evl-table.evl-table table td{min-width:4ch}
.evl-table.evl-table table thead th{border-bottom:2px solid #555;font-weight:600}
.evl-table caption{caption-side:top;text-align:left;font-weight:600;padding:.2rem 0}
.evl-table .evl-notes{font-size:12px;color:#444;margin:.25rem 0 0 0}
.evl-finding{border-left:4px solid #0072B2;background:#eef5fb;padding:.4rem .7rem;margin:.5rem 0;font-size:15px}
.evl-box h2{margin-top:1.2rem}
.jp-OutputArea-output,.jp-RenderedHTMLCommon{overflow-x:visible}
.jp-RenderedHTMLCommon table{table-layout:auto}
</style>"""


# ----------------------------------------------------------------------------------------------- formatting
def humanize(name: str) -> str:
    """A column or metric name as words: ``first_slot_rate`` → "First slot rate"; ``p_lt_0_05`` → "p < 0.05";
    ``live_dir`` → "Live folder"."""
    s = str(name)
    s = re.sub(r"(\d)_(\d)", r"\1.\2", s)
    s = re.sub(r"(^|_)lt(_|$)", r"\1<\2", s)
    s = re.sub(r"(^|_)gt(_|$)", r"\1>\2", s)
    s = re.sub(r"_(pct|pp|usd)$", "", s)
    s = re.sub(r"_dir$", "_folder", s)
    s = s.replace("_", " ").strip()
    return s[:1].upper() + s[1:] if s else s


def _decimals(values: np.ndarray) -> int:
    """Decimals giving about three significant digits for the column's typical magnitude (no scientific
    notation)."""
    v = np.abs(values[np.isfinite(values)])
    v = v[v > 0]
    if not len(v):
        return 0
    mag = math.floor(math.log10(float(np.median(v))))
    return int(min(6, max(0, 2 - mag)))


def fmt_number(x, unit: str = "", digits: int | None = None, signed: bool = False) -> str:
    """One number as text in the table's conventions ("—" when missing)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)) or x is pd.NA or x is pd.NaT:
        return DASH
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    scale, _, default = UNITS.get(unit, (1.0, "", None))
    if unit == "p":
        x = float(x)
        return "<0.001" if x < 0.001 else f"{x:.3f}"
    x = float(x) * scale
    d = default if digits is None else digits
    if d is None:
        d = 0 if float(x).is_integer() and abs(x) >= 1 else _decimals(np.array([x]))
    s = f"{x:,.{d}f}"
    if s.startswith("-") and float(s.replace(",", "").replace("-", "") or 0) == 0:
        s = s[1:]
    if signed and x > 0:
        s = "+" + s
    return s


def fmt_value(x) -> str:
    """Any cell value as readable text: numbers, lists joined with commas, mappings as "key: value", no reprs."""
    if isinstance(x, (list, tuple, set, np.ndarray, pd.Series)):
        items = [fmt_value(v) for v in list(x)]
        return ", ".join(items) if items else DASH
    if isinstance(x, Mapping):
        return "; ".join(f"{humanize(k)}: {fmt_value(v)}" for k, v in x.items()) or DASH
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if isinstance(x, (float, np.floating)):
        return fmt_number(float(x))
    if x is None or x is pd.NA or x is pd.NaT:
        return DASH
    if isinstance(x, Path):
        return relative_path(str(x))
    return relative_path(str(x))


def relative_path(text: str) -> str:
    """Absolute paths inside the project shown relative to the project root (and $HOME as ~).

    A text without a ``/`` holds no path and is returned as it is, without looking for the project (table cells:
    most are judge names and numbers)."""
    if "/" not in text:
        return text
    from evallab.paths import _project_roots, _strip_roots

    text = _strip_roots(text, _project_roots())
    home = str(Path.home())
    if home not in ("/", ""):
        text = text.replace(home + "/", "~/")
    return text


# ------------------------------------------------------------------------------------------------- the table
@dataclass
class Table:
    """A rendered table: its HTML and, for a long table, the CSV written beside the report."""

    html: str
    csv: Path | None = None

    def _repr_html_(self) -> str:
        return self.html


def to_html(df: pd.DataFrame, *, columns: Mapping[str, str] | Sequence[str] | None = None,
            intervals: Mapping[str, tuple[str, str]] | None = None, units: Mapping[str, str] | None = None,
            digits: Mapping[str, int] | None = None, note: str | None = None, caption: str = "",
            level: float | None = 0.95, max_rows: int = MAX_ROWS, max_cols: int = MAX_COLS,
            csv_to: tuple[Path, Path] | None = None) -> Table:
    """Render ``df`` as a publication table (see the module doc).

    Parameters
    ----------
    columns : the columns to show, in order — a list, or a mapping column → header label (default: all,
        labels from the names).
    intervals : estimate column → (low column, high column); shown as "estimate [low, high]" in one cell.
    units : column → unit: ``"%"`` (proportion 0-1 shown in percent), ``"pct"`` (already percent), ``"pp"``
        (difference of proportions → percentage points), ``"pp_pct"``, ``"p"`` (p-value), ``"count"``, ``""``,
        or any other text (e.g. ``"USD"``, ``"s"``) written in the header.
    digits : column → decimals (default per unit / magnitude).
    note : a column holding why a row has missing values (default: a ``note`` or ``reason`` column);
        shown as footnotes, not as a column.
    level : the interval's confidence level, written in the header (``None``: not written).
    max_rows : longer tables are folded into ``<details>`` (and written as CSV where ``csv_to`` says).
    max_cols : wider tables are split into parts that repeat the leading text columns.
    csv_to : (folder, relative path) where a long table's CSV goes and how the page links it
        (:meth:`evallab.Report.show` passes it).

    A :class:`~evallab.Results` brings its own labels, units, intervals, level and interval methods (its
    measures): ``columns`` then only picks and may relabel, and nothing is guessed from column names.
    """
    meta = _from_measures(df, columns, intervals, units, digits)
    if meta is not None:
        columns, intervals, units, digits, methods, row_methods = meta
        level = df.level if getattr(df, "level", None) is not None else level
    else:
        methods, row_methods = {}, {}
    df = pd.DataFrame(df)
    if isinstance(df.columns, pd.MultiIndex):
        df.columns = [" ".join(str(x) for x in c if str(x)) for c in df.columns]
    if df.index.name is None and not isinstance(df.index, pd.MultiIndex) and \
            pd.api.types.is_integer_dtype(df.index):
        df = df.reset_index(drop=True)  # row positions (e.g. after filtering) are not data
    elif not isinstance(df.index, pd.RangeIndex) or df.index.name is not None:
        df = df.reset_index()  # the index is data: a labelled column, never an unlabelled index column
        df.columns = ["" if str(c) == "index" else c for c in df.columns]
    df.columns = [str(c) for c in df.columns]
    full = df
    note = note if note is not None else next((c for c in ("note", "reason", "notes") if c in df.columns), None)
    intervals = dict(intervals or {})
    intervals = {k: v for k, v in intervals.items() if k in df.columns and v[0] in df.columns and v[1] in df.columns}
    units = dict(units or {})
    digits = dict(digits or {})
    if columns is None:
        hidden = {c for lo_hi in intervals.values() for c in lo_hi} | ({note} if note else set())
        labels = {c: humanize(c) for c in df.columns if c not in hidden}
    elif isinstance(columns, Mapping):
        labels = dict(columns)
    else:
        labels = {c: humanize(c) for c in columns}
    missing_notes: list[str] = []
    cells: dict[str, list[str]] = {}
    headers: dict[str, str] = {}
    numeric: set[str] = set()
    texts: dict[str, str] = {}
    for c, label in labels.items():
        s = df[c]
        unit = units.get(c, "count" if pd.api.types.is_integer_dtype(s) and not pd.api.types.is_bool_dtype(s)
                         else "")
        scale, suffix, _ = UNITS.get(unit, (1.0, unit, None))
        is_num = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        d = digits.get(c)
        if is_num and d is None and unit in ("", "%", "pp"):
            vals = pd.to_numeric(s, errors="coerce").to_numpy(float) * scale
            if intervals.get(c):
                vals = np.concatenate([vals] + [pd.to_numeric(df[x], errors="coerce").to_numpy(float) * scale
                                                for x in intervals[c]])
            d = UNITS[unit][2] if unit in ("%", "pp") else _decimals(vals)
            fin = vals[np.isfinite(vals)]
            if unit == "" and len(fin) and np.all(fin == np.round(fin)) and np.abs(fin).max() >= 2:
                d = 0  # counts stored as floats; a kappa of exactly 1 keeps its decimals
        signed = unit in ("pp", "pp_pct")
        col = []
        # the columns each cell reads, looked up once (a column lookup per cell dominated long tables)
        # (as lists: an element of a list costs less than a positional lookup in a Series)
        lo_hi_s = [df[x].tolist() for x in intervals[c]] if c in intervals else []
        note_s = df[note].tolist() if note and note in df.columns else None
        rm = row_methods.get(c)
        rm_s = df[rm[0]].tolist() if rm is not None and rm[0] in df.columns else None
        for i, v in enumerate(s.tolist()):
            point = ""
            if is_num:
                t = fmt_number(v, unit, d, signed)
                if c in intervals and t != DASH:
                    lo_v, hi_v = (x[i] for x in lo_hi_s)
                    lo, hi = (fmt_number(x, unit, d, signed) for x in (lo_v, hi_v))
                    if _same_point(lo_v, hi_v):  # a degenerate interval is never printed as [x, x]
                        point = DEGENERATE_NOTE
                    elif lo != DASH or hi != DASH:
                        t = f"{t} [{lo}, {hi}]"
                        rmv = rm_s[i] if rm_s is not None else None
                        if isinstance(rmv, str) and rmv and rmv != rm[1]:  # this row's interval has another method
                            point = f"interval: {rmv}"
                    elif note_s is not None and isinstance(note_s[i], str) and note_s[i].strip():
                        point = note_s[i].strip()  # no interval: the row's note says why
            elif isinstance(v, str):  # a text repeats down a column (subset, judge): formatted once per table
                t = texts.get(v)
                if t is None:
                    t = texts[v] = fmt_value(v)
            else:
                t = fmt_value(v) if not (isinstance(v, float) and math.isnan(v)) else DASH
            if t == DASH:
                why = ""
                if note_s is not None and isinstance(note_s[i], str) and note_s[i].strip():
                    why = note_s[i].strip()
                missing_notes.append(why)
                t = DASH + (f"<sup>{_note_index(missing_notes, why)}</sup>" if why else "")
            elif point:
                missing_notes.append(point)
                t = html.escape(t) + f"<sup>{_note_index(missing_notes, point)}</sup>"
            else:
                t = html.escape(t)
            col.append(t)
        cells[c] = col
        if is_num:
            numeric.add(c)
        head = label
        unit_text = suffix if suffix not in ("n",) else "n"
        parts = [p for p in (unit_text if unit != "count" else "", ) if p]
        if c in intervals and level:
            parts.append(f"{level:.0%} CI")
        if unit == "p":
            head = re.sub(r"\bp$", "p-value", label) if label.lower().split()[-1:] == ["p"] else f"{label} (p-value)"
        elif parts:
            head = f"{label} ({', '.join(parts)})"
        headers[c] = head
    foot = []
    reasons = list(dict.fromkeys(r for r in missing_notes if r))
    for i, r in enumerate(reasons, start=1):
        foot.append(f"<sup>{i}</sup> {html.escape(r)}")
    if any(not r for r in missing_notes):
        foot.append(f"{DASH} no value: the quantity is undefined for that row (no data to compute it from).")
    shown_methods = {labels[c]: m for c, m in methods.items() if c in labels and c in intervals and m}
    if shown_methods and level:
        if len(set(shown_methods.values())) == 1:
            foot.append(f"Intervals: {level:.0%}, {next(iter(shown_methods.values()))}.")
        else:
            foot.append(f"Intervals ({level:.0%}): " + "; ".join(f"{k}: {v}" for k, v in shown_methods.items())
                        + ".")
    def width(c):  # estimated px: the longest cell (or half the header, which wraps), 7 px a character
        longest = max([len(re.sub(r"<[^>]+>", "", x)) for x in cells[c]] + [len(headers[c]) // 2 + 1, 3]
                      + [len(w) + 1 for w in headers[c].split()])
        return 7.2 * min(longest, 40) + 16

    if len(labels) <= max_cols or sum(width(c) for c in labels) <= WIDTH_PX:
        keys, chunks = [], [list(labels)]
    else:
        keys = [c for c in labels if c not in numeric][:2] or list(labels)[:1]
        budget = WIDTH_PX - sum(width(c) for c in keys)
        chunks, cur, used = [], [], 0.0
        for c in (c for c in labels if c not in keys):
            if cur and used + width(c) > budget:
                chunks.append(cur)
                cur, used = [], 0.0
            cur.append(c)
            used += width(c)
        chunks.append(cur)
    body = []
    for part, chunk in enumerate(chunks):
        cols = keys + chunk
        cap = caption if part == 0 else (f"{caption} (continued)" if caption else "")
        if len(chunks) > 1:
            cap = f"{cap} — part {part + 1} of {len(chunks)}".lstrip(" —")
        t = table_markup([headers[c] for c in cols], [cells[c] for c in cols], html.escape(cap) if cap else "")
        words = {j: min(18, max([len(w) for x in cells[c] for w in re.sub(r"<[^>]+>", "", x).split()] + [1]))
                 for j, c in enumerate(cols) if c not in numeric}
        t = _align_numeric(t, [j for j, c in enumerate(cols) if c in numeric], words)
        body.append(t)
    csv_path = None
    inner = "\n".join(body)
    if len(df) == 0:
        inner = (f"<p><b>{html.escape(caption)}</b></p>" if caption else "") + \
            f"<p class='evl-notes'>No rows ({html.escape(', '.join(headers.values()))}).</p>"
    if foot:
        inner += "<p class='evl-notes'>" + "<br>".join(foot) + "</p>"
    if len(df) > max_rows:
        link = ""
        if csv_to is not None:
            csv_path = csv_to[0] / csv_to[1]
            csv_path.parent.mkdir(parents=True, exist_ok=True)
            full.to_csv(csv_path, index=False)
            link = f" · <a href='{html.escape(csv_to[1].as_posix())}'>full table as CSV</a>"
        summary = html.escape(caption or "Table")
        inner = (f"<details><summary>{summary}: {len(df):,} rows — click to show{link}</summary>{inner}</details>")
    return Table(f"<div class='evl-table'>{_CSS}{inner}</div>", csv_path)


#: a measure's unit (evallab._results.UNITS) → this module's display unit (UNITS above)
_MEASURE_UNITS = {"proportion": "%", "percent": "pct", "pp": "pp", "count": "count", "p-value": "p",
                  "coefficient": "", "ratio": "×"}


def _from_measures(df, columns, intervals, units, digits):
    """For a :class:`~evallab._results.Results`: the columns (labels from its measures), intervals, units, digits
    and interval methods it declares, merged under what the caller passed; ``None`` for a plain frame."""
    measures = getattr(df, "measures", None)
    if not isinstance(df, Results) or not measures:
        return None
    intervals, units, digits = dict(intervals or {}), dict(units or {}), dict(digits or {})
    methods: dict[str, str | None] = {}
    row_methods: dict[str, tuple[str, str | None]] = {}
    for c, m in measures.items():
        units.setdefault(c, _MEASURE_UNITS.get(m.unit, m.unit))
        if m.has_interval:
            intervals.setdefault(c, (m.low, m.high))
            methods[c] = m.method
            if m.method_column and m.method_column in df.columns:
                # the column's method: the one stated, else the one most rows used (named once under the table);
                # a row whose interval another method computed gets a footnote naming it
                used = df[m.method_column][df[m.method_column].astype(str).str.len() > 0].astype(str)
                common = m.method or (used.mode().iloc[0] if len(used) else None)
                methods[c] = common
                row_methods[c] = (m.method_column, common)
        if m.digits is not None:
            digits.setdefault(c, m.digits)
    if columns is None:
        keys = [k for k in (getattr(df, "keys", None) or []) if k in df.columns]
        columns = {**{k: humanize(k) for k in keys}, **{c: m.label for c, m in measures.items()}}
    elif not isinstance(columns, Mapping):
        columns = {c: (measures[c].label if c in measures else humanize(c)) for c in columns}
    return columns, intervals, units, digits, methods, row_methods


#: footnote of an estimate whose interval is a single point (low == high): shown without it
DEGENERATE_NOTE = ("no interval: its bounds are equal (every resampled unit gives this value), and a single point "
                   "[x, x] is not an interval")


def _same_point(lo, hi) -> bool:
    """Both bounds finite numbers and equal: a degenerate interval."""
    try:
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        return False
    return math.isfinite(lo) and math.isfinite(hi) and lo == hi


def _note_index(notes: list[str], why: str) -> int:
    return list(dict.fromkeys(r for r in notes if r)).index(why) + 1


def table_markup(headers: Sequence[str], columns: Sequence[Sequence[str]], caption: str = "") -> str:
    """The HTML table pandas' Styler writes for a frame of these ``columns`` (cell text, already escaped) under
    ``headers`` with the index hidden: ``<table id="T_<uid>">``, a ``<caption>``, header cells classed
    ``col_heading level0 col<j>`` and data cells ``data row<i> col<j>`` (the classes :func:`_align_numeric` and the
    report's style sheet select), with no escaping of its own. Written here because a Styler costs 9 ms to build
    and 7 ms to render per table (74 tables in the bundled reports: 1.2 s of the batch, profiled)."""
    import uuid

    uid = f"T_{uuid.uuid4().hex[:5]}"
    out = ['<style type="text/css">\n</style>\n', f'<table id="{uid}">\n']
    if caption:
        out.append(f"  <caption>{caption}</caption>\n")
    out.append("  <thead>\n    <tr>\n")
    out += [f'      <th id="{uid}_level0_col{j}" class="col_heading level0 col{j}" >{h}</th>\n'
            for j, h in enumerate(headers)]
    out.append("    </tr>\n  </thead>\n  <tbody>\n")
    for i in range(len(columns[0]) if columns else 0):
        out.append("    <tr>\n")
        out += [f'      <td id="{uid}_row{i}_col{j}" class="data row{i} col{j}" >{col[i]}</td>\n'
                for j, col in enumerate(columns)]
        out.append("    </tr>\n")
    out.append("  </tbody>\n</table>\n")
    return "".join(out)


def _align_numeric(table_html: str, numeric_cols: Sequence[int], words: Mapping[int, int]) -> str:
    """Right-align numeric columns (Styler's col<j> classes); text columns keep their words whole (up to 18
    characters) rather than break inside a short name."""
    m = re.search(r'id="(T_[0-9a-f_]+)"', table_html)  # scoped to this table through the Styler's uuid
    if not m:
        return table_html
    t = f"div.evl-table #{m.group(1)}"
    css = "".join(f"{t} td.col{j},{t} th.col{j}{{text-align:right;font-variant-numeric:tabular-nums}}"
                  f"{t} td.col{j}{{white-space:nowrap}}" for j in numeric_cols)
    css += "".join(f"div.evl-table #{m.group(1)} td.col{j}{{min-width:{n + 1}ch}}" for j, n in words.items())
    return f"<style>{css}</style>{table_html}"


def publication_html(df: pd.DataFrame) -> str:
    """The automatic publication table for a plain ``display(df)`` in a report kernel."""
    return to_html(df).html


# ---------------------------------------------------------------------------------------------------- findings
@dataclass
class Finding:
    """One finding: a sentence and the estimate behind it (value and interval in the data's own scale, their
    level, the interval's method, the unit, n and what n counts). The one finding type of reports, the index and
    ``metrics.json``."""

    sentence: str
    value: float | None = None
    low: float | None = None
    high: float | None = None
    level: float | None = 0.95
    n: int | None = None
    unit: str = ""  # a measure unit ("proportion", "pp", "count", "coefficient" ...) or a legacy table unit ("%")
    method: str | None = None
    n_unit: str = ""
    digits: int | None = None

    @classmethod
    def of(cls, sentence: str, estimate=None) -> Finding:
        """A finding from a sentence and an :class:`~evallab.Estimate` (or none)."""
        if estimate is None:
            return cls(sentence.strip(), level=None)
        return cls(sentence.strip(), estimate.value, estimate.low, estimate.high,
                   estimate.level if estimate.has_interval else None, estimate.n, estimate.unit,
                   estimate.method if estimate.has_interval else None, estimate.n_unit, estimate.digits)

    def estimate_text(self) -> str:
        """"93.1% [90.2, 95.4] (95% CI, Wilson score, n = 1,200 pairs)", or "" without a value."""
        return format_estimate(self.value, self.low, self.high, self.unit, self.level, self.n, method=self.method,
                               n_unit=self.n_unit, digits=self.digits)

    def extra(self) -> str:
        """What the report writes in parentheses after the sentence, so that nothing is said twice: the whole
        estimate ("93.1% [90.2, 95.4] (95% CI, Wilson score, n = 1,200 pairs)") when the sentence does not state its
        number; only :meth:`evallab.Estimate.describe` ("95% CI, Wilson score, n = 1,200 pairs"; the interval put
        after "CI" when the sentence gives the number alone) when it does — never a parenthesis inside the
        parenthesis; nothing when the sentence states that too, or has no estimate.

        Examples
        --------
        >>> f = Finding("3 of 240 replies (1.2%) could not be parsed.", 0.0125, n=240, unit="proportion",
        ...             n_unit="replies", level=None)
        >>> f.extra()
        'n = 240 replies'
        >>> Finding("Accuracy is 93.1%.", 0.931, 0.902, 0.954, n=1200, unit="proportion", method="Wilson score",
        ...         n_unit="pairs").extra()
        '95% CI [90.2, 95.4], Wilson score, n = 1,200 pairs'
        >>> Finding("Most judges agree.", 0.931, n=10, unit="proportion", n_unit="pairs", level=None).extra()
        '93.1% (n = 10 pairs)'
        """
        e = self.estimate()
        est = "" if e is None else str(e)
        if not est or est in self.sentence:
            return ""
        num, iv, desc = e.number(), e.interval(), e.describe()
        if re.search(r"(?<![\d.,])" + re.escape(num) + r"(?!\d)", self.sentence):
            if iv and iv not in self.sentence:
                desc = desc.replace(" CI", f" CI {iv}", 1) if " CI" in desc else f"{iv}, {desc}".rstrip(", ")
            return "" if not desc or desc in self.sentence else desc
        if self.low is not None and "[" in self.sentence and "]" in self.sentence:  # stated in its own words
            return ""
        return est

    def estimate(self):
        """The :class:`~evallab.Estimate` behind the finding (None without a value)."""
        from evallab._results import Estimate, _num

        u = {v: k for k, v in _MEASURE_UNITS.items()}.get(self.unit, self.unit)  # legacy table units
        v, lo, hi = _num(self.value), _num(self.low), _num(self.high)
        if v is None:
            return None
        if lo is None or hi is None:
            lo = hi = None
        n_ = _num(self.n)
        return Estimate(v, lo, hi, self.level if lo is not None else None, self.method, u,
                        int(n_) if n_ is not None else None, self.n_unit, digits=self.digits)

    def html(self) -> str:
        """The highlighted line a report shows: the sentence, then :meth:`extra` in parentheses."""
        return finding_html(self.sentence, self.extra())

    def as_dict(self) -> dict:
        d = asdict(self)
        for k in ("value", "low", "high", "level"):
            v = d[k]
            d[k] = None if v is None or (isinstance(v, float) and not math.isfinite(v)) else float(v)
        d["n"] = None if self.n is None else int(self.n)
        return d


def finding_html(sentence: str, estimate_text: str = "") -> str:
    """A highlighted finding line: the sentence, then the estimate in parentheses (both HTML-escaped)."""
    extra = f" <span style='color:#444'>({html.escape(estimate_text)})</span>" if estimate_text else ""
    return f"{_CSS}<div class='evl-finding'><b>Finding.</b> {html.escape(sentence)}{extra}</div>"


def format_estimate(value, low=None, high=None, unit: str = "", level: float | None = 0.95, n=None, *,
                    method: str | None = None, n_unit: str = "", digits: int | None = None) -> str:
    """"93.1% [90.2, 95.4] (95% CI, Wilson score, n = 1,200 pairs)" — one estimate with its interval, level,
    method, unit and n. A missing or NaN bound prints no interval (never "[nan, nan]"); equal bounds print none
    either, and say so."""
    from evallab._results import Estimate, _num

    u = {v: k for k, v in _MEASURE_UNITS.items()}.get(unit, unit)  # legacy table units → measure units
    v, lo, hi = _num(value), _num(low), _num(high)
    if v is None:
        return ""
    if lo is None or hi is None:
        lo = hi = None
    n_ = _num(n)
    return str(Estimate(v, lo, hi, level if lo is not None else None, method, u,
                        int(n_) if n_ is not None else None, n_unit, digits=digits))


def conclusions(items: Sequence[str], *, caveats: Sequence[str] = (), title: str = "Conclusions") -> str:
    """Render the report's closing "Conclusions" and "Caveats" lists (displayed; returns the HTML)."""
    parts = [f"{_CSS}<div class='evl-box'><h2>{html.escape(title)}</h2><ul>"]
    parts += [f"<li>{html.escape(str(i))}</li>" for i in items]
    parts.append("</ul>")
    if caveats:
        parts.append("<h2>Caveats</h2><ul>")
        parts += [f"<li>{html.escape(str(c))}</li>" for c in caveats]
        parts.append("</ul>")
    parts.append("</div>")
    out = "".join(parts)
    from IPython.display import HTML, display

    display(HTML(out))
    return out
