"""The estimate type: results that carry their own meaning from the estimator to the page (issue 25).

An estimator returns a :class:`Results` — a :class:`pandas.DataFrame` (so every pandas operation works on it)
whose ``measures`` say, for each estimate column, what it is: its label, its unit, the columns of its interval
bounds, the interval's level and method (``"Wilson score"``, ``"item bootstrap (percentile, 1,000 resamples)"``
...), the column holding its n and what n counts (items, pairs, replies), and the column holding the reason a value
is missing. Tables (:func:`evallab.reporting.to_html`), findings (:meth:`Results.estimate` →
:class:`Estimate`) and ``metrics.json`` are rendered from these, so the method shown beside an interval is the
method that computed it — never guessed from a column name.

Units (:data:`UNITS`): ``"proportion"`` (0–1, shown in percent), ``"pp"`` (a difference of proportions, shown in
percentage points), ``"count"``, ``"p-value"``, ``"coefficient"`` (kappa, alpha, tau, AUC ...: unitless, shown as
is), ``"ratio"``, ``"percent"`` (already 0–100), or any other text naming the unit (``"scale points"``,
``"USD"``, ``"s"``), shown in the column header.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

#: the units a measure can have, as (scale applied for display, suffix in text, default decimals)
UNITS: dict[str, tuple[float, str, int | None]] = {
    "proportion": (100.0, "%", 1),
    "percent": (1.0, "%", 1),
    "pp": (100.0, "pp", 1),
    "count": (1.0, "", 0),
    "p-value": (1.0, "", 3),
    "coefficient": (1.0, "", None),
    "ratio": (1.0, "×", 2),
}


def wilson_method() -> str:
    """Name of the Wilson score interval, as shown beside it.

    Returns
    -------
    str

    References
    ----------
    E. B. Wilson (1927), JASA 22(158); see :func:`evallab.metrics._intervals.wilson`.

    Examples
    --------
    >>> wilson_method()
    'Wilson score'
    """
    return "Wilson score"


def bootstrap_method(n_resamples: int, unit: str = "item", *, paired: bool = False) -> str:
    """Name of a percentile bootstrap over ``unit`` (the resampled unit), as shown beside it.

    Parameters
    ----------
    n_resamples : int
        Resamples drawn.
    unit : str, default "item"
        The resampled unit ("item", "skill").
    paired : bool, default False
        For a difference on the same units (both sides resampled together).

    Returns
    -------
    str

    Examples
    --------
    >>> bootstrap_method(1000)
    'item bootstrap (percentile, 1,000 resamples)'
    >>> bootstrap_method(200, "skill", paired=True)
    'paired skill bootstrap (percentile, 200 resamples)'
    """
    return f"{'paired ' if paired else ''}{unit} bootstrap (percentile, {int(n_resamples):,} resamples)"


WILSON = wilson_method()
CLOPPER_PEARSON = "Clopper–Pearson (exact binomial)"


@dataclass(frozen=True)
class Measure:
    """What one estimate column of a :class:`Results` means.

    Parameters
    ----------
    column : str
        The estimate's column.
    label : str
        Its name on the page ("Position consistency").
    unit : str, default "proportion"
        One of :data:`UNITS` or free text (see the module doc).
    low, high : str, optional
        Columns of the interval bounds (same unit as the estimate).
    method : str, optional
        How the interval was computed, when the same for every row.
    method_column : str, optional
        A column naming each row's interval method, when it varies by row (e.g. a Wilson fallback where a
        bootstrap cannot resample); takes precedence over ``method`` where filled.
    n : str, optional
        The column holding the estimate's n.
    n_unit : str, default ""
        What n counts ("items", "pairs", "replies", "skills").
    note : str, optional, default "note"
        The column holding why a value (or its interval) is missing.
    digits : int, optional
        Decimals on the page (default per unit).

    Examples
    --------
    >>> m = Measure("acc", "Accuracy", "proportion", "acc_low", "acc_high", method=WILSON, n="n", n_unit="items")
    >>> m.has_interval, m.unit
    (True, 'proportion')
    """

    column: str
    label: str
    unit: str = "proportion"
    low: str | None = None
    high: str | None = None
    method: str | None = None
    method_column: str | None = None
    n: str | None = None
    n_unit: str = ""
    note: str | None = "note"
    digits: int | None = None

    @property
    def has_interval(self) -> bool:
        return bool(self.low and self.high)


def _num(x) -> float | None:
    """A finite float, or None (NaN, NA, None, text)."""
    if x is None or x is pd.NA:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def singular(unit: str) -> str:
    """A plural unit for one of it; a unit not ending in s (or ending in ss) is kept.

    Parameters
    ----------
    unit : str

    Returns
    -------
    str

    Examples
    --------
    >>> singular("replies"), singular("items"), singular("pair × order units"), singular("class")
    ('reply', 'item', 'pair × order unit', 'class')
    >>> singular("units (item, order, sample) both judges parsed")
    'unit (item, order, sample) both judges parsed'
    """
    head, sep, rest = unit.partition(" ")
    if rest and not rest.endswith("s") and head.endswith("s"):  # "units both parsed": the noun comes first
        return singular(head) + sep + rest
    if unit.endswith("ies"):
        return unit[:-3] + "y"
    return unit[:-1] if unit.endswith("s") and not unit.endswith("ss") else unit


def _decimals(values: Iterable[float]) -> int:
    """Decimals that show the values' magnitude: 3 below 1, 2 below 10, 1 below 100, else 0."""
    fin = [abs(v) for v in values if v is not None and math.isfinite(v)]
    if not fin:
        return 2
    m = max(fin)
    return 3 if m < 1 else 2 if m < 10 else 1 if m < 100 else 0


def format_number(x, unit: str = "", digits: int | None = None, *, signed: bool | None = None) -> str:
    """A number in its unit's display scale, without the unit.

    Parameters
    ----------
    x : number or None
        The value in the data's own scale (a proportion 0–1, a difference of proportions −1–1).
    unit : str, default ""
        One of :data:`UNITS` (sets the scale and default decimals) or free text (shown as is).
    digits : int, optional
        Decimals (default per unit; for units without a default, by magnitude).
    signed : bool, optional
        Write a leading + on positive values (default: for ``"pp"``).

    Returns
    -------
    str
        "—" when missing (None, NaN, text); "<0.001" for a p-value below 0.001.

    Examples
    --------
    >>> format_number(0.931, "proportion"), format_number(0.042, "pp"), format_number(1234, "count")
    ('93.1', '+4.2', '1,234')
    >>> format_number(0.0004, "p-value"), format_number(float("nan"))
    ('<0.001', '—')
    >>> format_number(-5.8e-09, "coefficient", 2)  # rounds to zero: no "-0.00"
    '0.00'
    """
    v = _num(x)
    if v is None:
        return "—"
    if unit == "p-value" and 0 <= v < 0.001:
        return "<0.001"
    scale, _, d0 = UNITS.get(unit, (1.0, unit, None))
    v *= scale
    d = digits if digits is not None else d0 if d0 is not None else _decimals([v])
    if unit == "count" or (d == 0 and float(v).is_integer()):
        s = f"{v:,.0f}"
    else:
        s = f"{v:,.{d}f}"
    if s.startswith("-") and float(s[1:].replace(",", "")) == 0:  # a value that rounds to zero has no sign
        s = s[1:]
    if (unit == "pp" if signed is None else signed) and v > 0:
        s = "+" + s
    return s


@dataclass(frozen=True)
class Estimate:
    """One estimate with everything needed to state it: value, interval, level, method, unit, n.

    Parameters
    ----------
    value, low, high : float or None
        In the data's own scale (a proportion 0–1, a difference of proportions −1–1); None when missing.
    level : float, optional
        Confidence level of the interval.
    method : str, optional
        The method that computed the interval.
    unit : str, default ""
        One of :data:`UNITS` or free text.
    n : int, optional
        The estimate's n, counting ``n_unit`` ("items", "pairs", "replies").
    label : str, default ""
        The estimate's name.
    note : str, optional
        Why the value or its interval is missing.
    digits : int, optional
        Decimals on the page.

    Notes
    -----
    A missing interval is never printed as "[nan, nan]": the note says why, or nothing is added.

    Examples
    --------
    >>> e = Estimate(0.931, 0.902, 0.954, 0.95, WILSON, "proportion", 1200, "pairs", "Accuracy")
    >>> print(e)
    93.1% [90.2, 95.4] (95% CI, Wilson score, n = 1,200 pairs)
    >>> e.number(), e.excludes(0.9)
    ('93.1%', True)
    >>> print(Estimate(None, note="no gold labels"))
    not computable: no gold labels
    """

    value: float | None
    low: float | None = None
    high: float | None = None
    level: float | None = None
    method: str | None = None
    unit: str = ""
    n: int | None = None
    n_unit: str = ""
    label: str = ""
    note: str | None = None
    digits: int | None = None

    def __post_init__(self) -> None:
        # a NaN (or NA) value or bound is a missing one: an interval with a missing bound is no interval, so no
        # text path can print "[nan, nan]" or "[—, —]"
        value, low, high = _num(self.value), _num(self.low), _num(self.high)
        if low is None or high is None:
            low = high = None
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None and self.low != self.high

    def excludes(self, x: float) -> bool:
        """The interval lies wholly above or below ``x`` (False without an interval)."""
        return self.has_interval and (self.low > x or self.high < x)

    def number(self) -> str:
        """The value with its unit ("93.1%", "+4.2 pp", "0.62")."""
        s = format_number(self.value, self.unit, self.digits)
        suffix = UNITS.get(self.unit, (1.0, self.unit, None))[1]
        if s == "—" or not suffix:
            return s
        return s + (suffix if suffix in ("%", "×") else f" {suffix}")

    def interval(self) -> str:
        """"[90.2, 95.4]" in the value's display scale, or "" without an interval."""
        if not self.has_interval:
            return ""
        d = self.digits if self.digits is not None else UNITS.get(self.unit, (1, "", None))[2]
        if d is None:
            d = _decimals([v * UNITS.get(self.unit, (1.0,))[0] for v in (self.value, self.low, self.high)
                           if v is not None])
        return f"[{format_number(self.low, self.unit, d)}, {format_number(self.high, self.unit, d)}]"

    def n_text(self) -> str:
        """"n = 1,200 pairs" ("n = 1 pair": the unit in the singular for one)."""
        if self.n is None:
            return ""
        return f"n = {int(self.n):,}" + (f" {singular(self.n_unit) if int(self.n) == 1 else self.n_unit}"
                                        if self.n_unit else "")

    def describe(self) -> str:
        """The parenthesis after the number: level, method and n ("95% CI, Wilson score, n = 1,200 pairs")."""
        parts = []
        if self.has_interval and self.level:
            parts.append(f"{self.level:.0%} CI" + (f", {self.method}" if self.method else ""))
        elif self.value is not None and self.low is not None and self.low == self.high:
            parts.append("no interval: a single point")
        parts.append(self.n_text())
        return ", ".join(p for p in parts if p)

    def __str__(self) -> str:
        if self.value is None:
            if self.note and self.note.startswith("not computable"):
                return self.note
            return "not computable" + (f": {self.note}" if self.note else "")
        s = self.number()
        iv = self.interval()
        if iv:
            s += f" {iv}"
        d = self.describe()
        return f"{s} ({d})" if d else s

    def as_dict(self) -> dict:
        """JSON-ready fields (NaN → None)."""
        return {"value": self.value, "low": self.low, "high": self.high, "level": self.level,
                "method": self.method, "unit": self.unit, "n": self.n, "n_unit": self.n_unit, "label": self.label,
                "note": self.note}


class Results(pd.DataFrame):
    """A DataFrame of estimates that knows what its columns mean (:class:`Measure` per estimate column).

    Build one with :func:`results`; every estimator of :mod:`evallab.metrics` returns one.

    Attributes
    ----------
    measures : dict[str, Measure]
        Estimate column → its meaning; kept through pandas operations (filtering, sorting, ``assign``).
    level : float or None
        The confidence level of every interval in the table.
    keys : list[str]
        The design columns that name a row (``by``).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"judge": ["A", "B"], "acc": [0.8, 0.5], "acc_low": [0.49, 0.237],
    ...                       "acc_high": [0.943, 0.763], "n": [10, 10]})
    >>> m = Measure("acc", "Accuracy", "proportion", "acc_low", "acc_high", method=WILSON, n="n", n_unit="items")
    >>> res = results(frame, [m], level=0.95, keys=["judge"])
    >>> print(res.estimate("acc", 1))
    50.0% [23.7, 76.3] (95% CI, Wilson score, n = 10 items)
    >>> list(res[res["judge"] == "A"].measures)
    ['acc']
    """

    _metadata = ["measures", "level", "keys"]

    @property
    def _constructor(self):
        return Results

    @property
    def _constructor_sliced(self):
        return pd.Series

    def measure(self, column: str) -> Measure | None:
        return (getattr(self, "measures", None) or {}).get(column)

    def estimate(self, column: str, row=0) -> Estimate:
        """The estimate in ``column`` at ``row`` (a position, or a row label when the index is not a range).

        Raises
        ------
        KeyError
            ``column`` is not a measure of this table.
        """
        m = self.measure(column)
        if m is None:
            raise KeyError(f"{column!r} is not a measure of this table (measures: {sorted(self.measures)})")
        r = self.iloc[row] if isinstance(row, (int, np.integer)) else self.loc[row]
        return estimate_from_row(r, m, self.level)

    def to_frame(self) -> pd.DataFrame:
        """A plain DataFrame (no measures)."""
        return pd.DataFrame(self)

    def meta(self) -> dict:
        """What the table's columns mean, JSON-ready (``metrics.json`` keeps it beside the records, so the index
        renders the table from its measures): ``{"level", "keys", "measures": {column: Measure fields}}``."""
        from dataclasses import asdict

        return {"level": self.level, "keys": list(self.keys or []),
                "measures": {c: asdict(m) for c, m in (self.measures or {}).items()}}

    @classmethod
    def from_records(cls, records: Sequence[Mapping], meta: Mapping) -> Results:
        """The table :meth:`meta` described, from its records (the inverse of ``metrics.json``'s writer)."""
        ms = [Measure(**m) for m in (meta.get("measures") or {}).values()]
        return results(pd.DataFrame(list(records)), ms, level=meta.get("level"), keys=meta.get("keys") or ())

    def describe_measures(self) -> pd.DataFrame:
        """One row per measure: column, label, unit, interval columns, level, method, n column and unit."""
        return pd.DataFrame([{"column": m.column, "label": m.label, "unit": m.unit, "low": m.low, "high": m.high,
                              "level": self.level if m.has_interval else None, "method": self._methods(m),
                              "n": m.n, "n_unit": m.n_unit} for m in self.measures.values()])

    def _methods(self, m: Measure) -> str | None:
        """The interval method(s) of a measure: its own, or those its rows name (with how many rows each)."""
        if not (m.method_column and m.method_column in self.columns):
            return m.method
        named = self[m.method_column][self[m.method_column].astype(str).str.len() > 0].astype(str).value_counts()
        if not len(named):
            return m.method
        if len(named) == 1:
            return str(named.index[0])
        return "; ".join(f"{k} ({v} {'row' if v == 1 else 'rows'})" for k, v in named.items())


def estimate_from_row(r: pd.Series, m: Measure, level: float | None) -> Estimate:
    """An :class:`Estimate` from one row of a :class:`Results` and the column's :class:`Measure`.

    Parameters
    ----------
    r : Series
        One row.
    m : Measure
        The column's meaning (which columns hold the bounds, method, n and note).
    level : float, optional
        The table's confidence level (kept only when the row has an interval).

    Returns
    -------
    Estimate

    Examples
    --------
    >>> import pandas as pd
    >>> row = pd.Series({"acc": 0.8, "acc_low": 0.49, "acc_high": 0.943, "n": 10})
    >>> m = Measure("acc", "Accuracy", "proportion", "acc_low", "acc_high", method=WILSON, n="n", n_unit="items")
    >>> print(estimate_from_row(row, m, 0.95))
    80.0% [49.0, 94.3] (95% CI, Wilson score, n = 10 items)
    """

    def get(col):
        return r.get(col) if col else None

    method = m.method
    if m.method_column and isinstance(get(m.method_column), str) and get(m.method_column):
        method = get(m.method_column)
    lo, hi = _num(get(m.low)), _num(get(m.high))
    if lo is None or hi is None:
        lo = hi = None
    n = _num(get(m.n))
    note = get(m.note)
    note = note.strip() if isinstance(note, str) and note.strip() else None
    return Estimate(_num(r.get(m.column)), lo, hi, level if lo is not None else None, method, m.unit,
                    int(n) if n is not None else None, m.n_unit, m.label, note, m.digits)


def results(frame: pd.DataFrame, measures: Sequence[Measure] | Mapping[str, Measure], *,
            level: float | None = None, keys: Sequence[str] = ()) -> Results:
    """Wrap an estimator's frame as :class:`Results` with its measures.

    Parameters
    ----------
    frame : DataFrame
        The estimator's output (one row per design cell).
    measures : sequence or mapping of Measure
        The estimate columns' meanings; a measure whose column is absent from ``frame`` is dropped.
    level : float, optional
        The confidence level of the intervals.
    keys : sequence of str, default ()
        The design columns naming a row (those absent from ``frame`` are dropped).

    Returns
    -------
    Results
        ``frame``'s rows and columns, with ``measures``, ``level`` and ``keys``.

    Examples
    --------
    >>> import pandas as pd
    >>> res = results(pd.DataFrame({"judge": ["A"], "acc": [0.8]}), [Measure("acc", "Accuracy"),
    ...               Measure("kappa", "Kappa", "coefficient")], keys=["judge", "strategy"])
    >>> list(res.measures), res.keys
    (['acc'], ['judge'])
    """
    ms = list(measures.values()) if isinstance(measures, Mapping) else list(measures)
    out = Results(frame)
    out.measures = {m.column: m for m in ms if m.column in out.columns}
    out.level = level
    out.keys = [k for k in keys if k in out.columns]
    return out


def with_measures(res: pd.DataFrame, *extra: Measure, level: float | None = None) -> Results:
    """``res`` with more (or replaced) measures — for a frame derived from a :class:`Results` by the caller.

    Parameters
    ----------
    res : DataFrame or Results
        The table (its own measures, level and keys are kept).
    *extra : Measure
        Measures to add or replace (by column).
    level : float, optional
        A new confidence level (default: ``res``'s).

    Returns
    -------
    Results

    Examples
    --------
    >>> import pandas as pd
    >>> res = results(pd.DataFrame({"acc": [0.8], "n": [10]}), [Measure("acc", "Accuracy")])
    >>> sorted(with_measures(res, Measure("n", "Items", "count")).measures)
    ['acc', 'n']
    """
    base = dict(getattr(res, "measures", None) or {})
    base.update({m.column: m for m in extra})
    return results(res, base, level=level if level is not None else getattr(res, "level", None),
                   keys=getattr(res, "keys", None) or ())


def relabel(m: Measure, **changes) -> Measure:
    """A copy of ``m`` with fields changed (e.g. another label for one table).

    Parameters
    ----------
    m : Measure
    **changes
        Fields of :class:`Measure` and their new values.

    Returns
    -------
    Measure

    Examples
    --------
    >>> relabel(Measure("acc", "Accuracy"), label="Acc.").label
    'Acc.'
    """
    return replace(m, **changes)


def common_methods(res: Results) -> Results:
    """``res`` with the interval method that computed most of a measure's intervals as the measure's method.

    More than half of the rows must name it, so a table names it once under the table and footnotes only the rows
    computed otherwise; without such a majority every row's method is footnoted.

    Parameters
    ----------
    res : Results
        A table whose measures name their method per row (``method_column``).

    Returns
    -------
    Results

    Examples
    --------
    >>> import pandas as pd
    >>> m = Measure("acc", "Accuracy", low="lo", high="hi", method_column="how")
    >>> res = results(pd.DataFrame({"acc": [0.8, 0.7, 0.9], "lo": [0.5, 0.4, 0.6], "hi": [0.9, 0.8, 0.95],
    ...                             "how": [WILSON, WILSON, bootstrap_method(50)]}), [m])
    >>> common_methods(res).measures["acc"].method
    'Wilson score'
    """
    out = []
    for m in res.measures.values():
        if m.method_column and m.method_column in res.columns:
            named = res[m.method_column][res[m.method_column].astype(str).str.len() > 0].value_counts()
            if len(named) and named.iloc[0] * 2 > named.sum():
                out.append(relabel(m, method=str(named.index[0])))
    return with_measures(res, *out)


__all__ = ["CLOPPER_PEARSON", "Estimate", "Measure", "Results", "UNITS", "WILSON", "bootstrap_method",
           "common_methods", "estimate_from_row", "format_number", "relabel", "results", "wilson_method", "with_measures"]

