"""The tidy verdict table: one row per judge reply.

This is the contract between loaders, live judge runs and estimators (the project design, "The contract"; the
the docs page docs/own-table.md, "Your own verdict table", shows how to write one).
Every estimator in evallab takes this table; every loader and every live run produces it.

Columns
-------
============== ========= ==================================================================================
column         dtype     meaning
============== ========= ==================================================================================
item_id        string    the judged unit, unique within ``dataset``
dataset        string    e.g. ``llmbar``
subset         string    e.g. ``LLMBar/Natural``
judge          string    the judge's label (model + prompt identity), e.g. ``GPT-4``
model          string    pinned model version actually used, where known (NA otherwise)
strategy       string    prompt template / strategy id, e.g. ``Vanilla``
anchor_set     string    anchor variant id (``none``, ``balanced``, ``pass-only`` ...)
order          string    pairwise: ``ab`` (output 1 shown first) or ``ba``; pointwise: ``""``
sample         Int64     repeat index, 0-based
verdict        string    pairwise ``1``/``2``/``tie`` (ORIGINAL output index, whatever the order shown);
                         pointwise ``pass``/``warn``/``fail``; NA = reply could not be parsed
gold           string    gold label in the same vocabulary, or NA
score          Float64   numeric score where the judge gives one
error          string    why ``verdict`` is NA (NA when parsed)
latency_s      Float64   seconds, where known
input_tokens   Int64     where known
output_tokens  Int64     where known
cost_usd       Float64   US dollars, where known
============== ========= ==================================================================================

The key is (dataset, item_id, judge, strategy, anchor_set, order, sample): one reply per key.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import yaml

from evallab.errors import SnapshotWarning, VerdictTableError

PAIRWISE_VERDICTS = ("1", "2", "tie")
POINTWISE_VERDICTS = ("pass", "warn", "fail")
VERDICTS = PAIRWISE_VERDICTS + POINTWISE_VERDICTS
ORDERS = ("ab", "ba", "")

#: column -> pandas dtype of the tidy table
SCHEMA: dict[str, str] = {
    "item_id": "string",
    "dataset": "string",
    "subset": "string",
    "judge": "string",
    "model": "string",
    "strategy": "string",
    "anchor_set": "string",
    "order": "string",
    "sample": "Int64",
    "verdict": "string",
    "gold": "string",
    "score": "Float64",
    "error": "string",
    "latency_s": "Float64",
    "input_tokens": "Int64",
    "output_tokens": "Int64",
    "cost_usd": "Float64",
}
COLUMNS = tuple(SCHEMA)
#: columns a table must carry; the others are added as NA when absent
REQUIRED = ("item_id", "judge", "verdict")
#: defaults for optional key columns when absent
DEFAULTS = {"dataset": "", "subset": "", "strategy": "", "anchor_set": "none", "order": "", "sample": 0}
KEY = ("dataset", "item_id", "judge", "strategy", "anchor_set", "order", "sample")
#: optional design columns that, when a table carries them, are part of its key (a rating table holds one row per
#: criterion of the same reply: HANNA's six criteria)
KEY_EXTRAS = ("criterion",)
#: optional columns declaring the rating scale of a row's ``score`` (per judge or design): ``scale_min``,
#: ``scale_max`` (Float64, inclusive), ``scale_step`` (Float64: the score lies on min + k·step; NA: any value in
#: [min, max]) and ``scale_level`` (``ordinal`` or ``interval``); checked by :func:`coerce` (:func:`check_scale`)
SCALE_COLUMNS = ("scale_min", "scale_max", "scale_step", "scale_level")
SCALE_LEVELS = ("ordinal", "interval")


def key_of(df: pd.DataFrame) -> list[str]:
    """The key of ``df``: :data:`KEY` plus the :data:`KEY_EXTRAS` it carries.

    Examples
    --------
    >>> import pandas as pd
    >>> key_of(pd.DataFrame(columns=["item_id", "criterion"]))[-1]
    'criterion'
    """
    return [*KEY, *(c for c in KEY_EXTRAS if c in df.columns)]


def check_scale(df: pd.DataFrame, *, path: str | None = None) -> pd.DataFrame:
    """Check every ``score`` against the scale its row declares (:data:`SCALE_COLUMNS`); return ``df``.

    A table without the scale columns is returned unchecked. Rows without a score (NA) are not checked.

    Parameters
    ----------
    df : DataFrame
        A tidy table with ``score`` and, optionally, the scale columns.
    path : str, optional
        File the table came from, named in errors.

    Returns
    -------
    DataFrame
        ``df``, its scale columns typed (Float64 bounds and step, string level).

    Raises
    ------
    VerdictTableError
        One line naming the file, the row (1-based) and the column: a level other than ``ordinal``/``interval``,
        a minimum not below the maximum, a non-positive step, a score outside [min, max] or off the step grid.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"score": [3.0, 7.0], "scale_min": 1, "scale_max": 5, "scale_step": 1,
    ...                   "scale_level": "ordinal"})
    >>> try:
    ...     check_scale(t, path="ratings.csv")
    ... except VerdictTableError as e:
    ...     print(e)
    ratings.csv, row 2, column 'score': score 7 is outside the declared 1–5 ordinal scale (scale_min, scale_max)
    """
    present = [c for c in SCALE_COLUMNS if c in df.columns]
    if not present:
        return df
    missing = [c for c in SCALE_COLUMNS if c not in df.columns and c != "scale_step"]
    if missing:
        raise VerdictTableError(f"a declared scale needs {list(SCALE_COLUMNS)}; missing {missing}", path=path,
                                column=missing[0])
    if "scale_step" not in df.columns:
        df = df.assign(scale_step=pd.Series(pd.NA, index=df.index, dtype="Float64"))
    out = {}
    for c in ("scale_min", "scale_max", "scale_step"):
        try:
            out[c] = pd.to_numeric(df[c], errors="raise").astype("Float64")
        except (ValueError, TypeError):
            bad = _first_bad_numeric(df[c])
            raise VerdictTableError(f"expected a number{' (or empty)' if c == 'scale_step' else ''}"
                                    + (f"; first bad value {bad[1]!r}" if bad else ""), path=path,
                                    row=None if bad is None else bad[0], column=c) from None
    level = df["scale_level"].astype("string").str.strip().str.lower()
    bad = ~level.isin(SCALE_LEVELS).fillna(False)
    if bad.any():
        raise VerdictTableError(f"unknown scale_level {df['scale_level'][bad.to_numpy()].iloc[0]!r}; expected "
                                f"{' or '.join(SCALE_LEVELS)}", path=path, row=_row(bad), column="scale_level")
    lo, hi, step = (out[c].to_numpy(dtype=float, na_value=np.nan) for c in ("scale_min", "scale_max", "scale_step"))
    for c, v in (("scale_min", lo), ("scale_max", hi)):
        if np.isnan(v).any():
            raise VerdictTableError("empty scale bound; expected a number", path=path,
                                    row=int(np.flatnonzero(np.isnan(v))[0]) + 1, column=c)
    bad = ~(lo < hi)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise VerdictTableError(f"scale_min {lo[i]:g} is not below scale_max {hi[i]:g}", path=path, row=i + 1,
                                column="scale_min")
    bad = step <= 0
    if bad.any():
        raise VerdictTableError(f"scale_step {step[bad][0]:g}; expected a positive step or empty",
                                path=path, row=int(np.flatnonzero(bad)[0]) + 1, column="scale_step")
    score = pd.to_numeric(df["score"], errors="coerce").astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    has = ~np.isnan(score)
    lv = level.to_numpy(dtype=object)
    outside = has & ((score < lo - 1e-9) | (score > hi + 1e-9))
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise VerdictTableError(f"score {score[i]:g} is outside the declared {lo[i]:g}–{hi[i]:g} {lv[i]} scale "
                                "(scale_min, scale_max)", path=path, row=i + 1, column="score")
    with np.errstate(invalid="ignore"):
        k = (score - lo) / step
        off = has & ~np.isnan(step) & (np.abs(k - np.round(k)) > 1e-6)
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise VerdictTableError(f"score {score[i]:g} is not on the declared scale's steps ({lo[i]:g} to {hi[i]:g} "
                                f"in steps of {step[i]:g})", path=path, row=i + 1, column="score")
    return df.assign(**out, scale_level=level.astype("string"))


def empty() -> pd.DataFrame:
    """An empty verdict table with the schema's columns and dtypes.

    Returns
    -------
    DataFrame
        No rows; the columns of :data:`COLUMNS` with the dtypes of :data:`SCHEMA`.

    Examples
    --------
    >>> t = empty()
    >>> t.shape, str(t["sample"].dtype)
    ((0, 17), 'Int64')
    """
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in SCHEMA.items()})


#: cells read as a missing verdict (after strip + lower)
_NA_WORDS = ("", "na", "nan", "none", "null")
#: integer-like floats written by spreadsheets: "1.0" -> "1"
_FLOAT_LABELS = {"1.0": "1", "2.0": "2"}


def _per_value(s: pd.Series, f) -> pd.Series:
    """``f`` (a function of a string Series) applied to the distinct values of ``s`` read as text only, then spread
    back over the rows: the same result as on every row, for the cost of a few values."""
    import pyarrow as pa

    s = s.astype("string")
    c, u = codes(s)
    u = pd.Series(u, dtype="string")
    v = f(u)
    if v.equals(u):
        return s  # every value already in that form: nothing to rebuild
    values = pa.array(v.to_numpy(dtype=object, na_value=None), type=pa.string())
    return pd.Series(pd.array(values.take(pa.array(c)), dtype="string"), index=s.index)


#: a verdict cell longer than this cannot be a label: it is refused as written without being copied to normalise it
_LABEL_MAX = 1024


def _norm_verdict(s: pd.Series) -> pd.Series:
    def norm(u: pd.Series) -> pd.Series:
        u = u.where(~(u.str.len() > _LABEL_MAX).fillna(False), "\x00")  # "\x00": never a verdict
        u = u.str.strip().str.lower()
        return u.mask(u.isin(_NA_WORDS)).replace(_FLOAT_LABELS)
    return _per_value(s, norm)


def norm_label(value) -> str | None:
    """One verdict or gold cell as :func:`coerce` reads it: stripped, lower-case, ``"1.0"`` → ``"1"``.

    The result may still be outside :data:`VERDICTS` — the caller says what it expected.

    Parameters
    ----------
    value : object
        A cell.

    Returns
    -------
    str or None
        ``None`` for a missing value (``None``, NaN, "", "na", "nan", "none", "null").

    Examples
    --------
    >>> norm_label(" PASS "), norm_label("1.0"), norm_label("nan")
    ('pass', '1', None)
    """
    if value is None or (isinstance(value, float) and value != value):
        return None
    t = str(value).strip().lower()
    return None if t in _NA_WORDS else _FLOAT_LABELS.get(t, t)


def coerce(df: pd.DataFrame, *, path: str | None = None) -> pd.DataFrame:
    """Return ``df`` with the schema's columns (missing optional ones filled) and dtypes, validated.

    Parameters
    ----------
    df : DataFrame
        Any table with at least the :data:`REQUIRED` columns.
    path : str, optional
        File the table came from, named in errors.

    Returns
    -------
    DataFrame
        Columns :data:`COLUMNS` first (in order), then any extra columns unchanged.

    Raises
    ------
    VerdictTableError
        See :func:`validate`.

    Examples
    --------
    >>> import pandas as pd
    >>> df = coerce(pd.DataFrame({"item_id": ["q1", "q2"], "judge": "A", "verdict": [" Pass", "FAIL"]}))
    >>> df[["item_id", "anchor_set", "order", "sample", "verdict"]].to_dict("records")
    [{'item_id': 'q1', 'anchor_set': 'none', 'order': '', 'sample': 0, 'verdict': 'pass'},
     {'item_id': 'q2', 'anchor_set': 'none', 'order': '', 'sample': 0, 'verdict': 'fail'}]
    """
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise VerdictTableError(
            f"missing required column(s) {missing}; a verdict table needs {list(REQUIRED)} "
            f"(optional: {[c for c in COLUMNS if c not in REQUIRED]})",
            path=path,
            column=missing[0],
        )
    # the columns, replaced one by one (``df`` is never modified) and put together once, without copies
    out = {c: df[c] for c in df.columns}
    for c in COLUMNS:
        if c not in out:  # typed from the start: no column of NA objects to convert
            out[c] = _filled(SCHEMA[c], DEFAULTS.get(c), len(df), df.index)
    for c in ("verdict", "gold"):
        long = None
        if pd.api.types.is_string_dtype(out[c].dtype) or out[c].dtype == object:
            try:
                long = out[c].str.len() > _LABEL_MAX
            except AttributeError:  # an object column without any string
                long = None
        if long is not None and long.fillna(False).any():  # refused before any copy is made to normalise it
            long = long.fillna(False).astype(bool)
            raise VerdictTableError(
                f"unknown {c} {_quote(out[c][long].iloc[0])}; expected one of {list(VERDICTS)} or empty (NA)",
                path=path, row=_row(long), column=c)
        norm = _norm_verdict(out[c])
        bad = norm.notna() & ~norm.isin(VERDICTS)
        if bad.any():  # name the value as written, not as normalised
            raise VerdictTableError(
                f"unknown {c} {_quote(out[c][bad].iloc[0])}; expected one of {list(VERDICTS)} or empty (NA)",
                path=path, row=_row(bad), column=c)
        out[c] = norm
    out["order"] = _per_value(out["order"], lambda u: u.fillna("").str.strip().str.lower())
    for c, t in SCHEMA.items():
        if c in ("verdict", "gold", "order") or out[c].dtype == pd.api.types.pandas_dtype(t):
            continue
        try:
            if t in ("Int64", "Float64"):
                out[c] = pd.to_numeric(out[c], errors="raise").astype(t)
            else:
                out[c] = out[c].astype(t)
        except (ValueError, TypeError) as exc:
            bad = _first_bad_numeric(out[c]) if t in ("Int64", "Float64") else None
            raise VerdictTableError(
                f"expected {t} values ({_cut_text(str(exc))})" + (f"; first bad value {_quote(bad[1])}" if bad else ""),
                path=path,
                row=None if bad is None else bad[0],
                column=c,
            ) from None
    for c in ("dataset", "subset", "strategy", "anchor_set", "sample"):
        if out[c].hasnans:
            out[c] = out[c].fillna(DEFAULTS[c])
    extra = [c for c in df.columns if c not in SCHEMA]
    out = pd.DataFrame({c: out[c] for c in [*COLUMNS, *extra]}, copy=False)
    out = check_scale(out, path=path)
    validate(out, path=path)
    return out.reset_index(drop=True)


def _filled(dtype: str, value, n: int, index: pd.Index) -> pd.Series:
    """A column of ``n`` copies of ``value`` (None: NA) in the schema's ``dtype``, built without a Python object
    per row; numeric NA values stay unwritten zeros (their mask says NA)."""
    if dtype == "string":
        return pd.Series(pd.array(constant_strings(value, n), dtype="string"), index=index, copy=False)
    values = np.zeros(n, dtype=np.int64 if dtype == "Int64" else float)
    if value:  # zeros are left unwritten (no memory until read)
        values[:] = value
    mask = np.full(n, value is None)
    arr = pd.arrays.IntegerArray(values, mask) if dtype == "Int64" else pd.arrays.FloatingArray(values, mask)
    return pd.Series(arr, index=index, copy=False)


def constant_strings(value: str | None, n: int):
    """``n`` copies of ``value`` (None: NA) as an Arrow string array, built from buffers (no per-row work).

    Parameters
    ----------
    value : str or None
    n : int

    Returns
    -------
    pyarrow.StringArray

    Examples
    --------
    >>> constant_strings("x", 3).to_pylist(), constant_strings(None, 2).to_pylist()
    (['x', 'x', 'x'], [None, None])
    """
    import pyarrow as pa

    if value is None:
        return pa.nulls(n, pa.string())
    b = str(value).encode("utf-8")
    offsets = (np.arange(n + 1, dtype=np.int64) * len(b)).astype(np.int32 if len(b) * n < 2**31 else np.int64)
    t = pa.string() if offsets.dtype == np.int32 else pa.large_string()
    arr = pa.Array.from_buffers(t, n, [None, pa.py_buffer(offsets), pa.py_buffer(b * n)])
    return arr if t == pa.string() else arr.cast(pa.string())


def snapshots(df: pd.DataFrame) -> pd.DataFrame:
    """The judge labels whose replies carry more than one ``model`` value (the pinned snapshot a reply reports).

    Returns
    -------
    DataFrame, one row per (judge, model) of such labels: ``judge``, ``model``, ``replies`` (rows), ``items``
    (distinct dataset/item pairs), ``share`` (of the label's replies, in [0, 1]); empty when every label has at most
    one snapshot. Replies without a model (NA) are not a snapshot and are not counted.

    Parameters
    ----------
    df : DataFrame
        A tidy verdict table.

    Examples
    --------
    >>> import pandas as pd
    >>> df = coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3"], "judge": "A", "model": ["m-1", "m-2", "m-2"],
    ...                           "verdict": "pass"}))
    >>> print(snapshots(df).round(3).to_string(index=False))
    judge model  replies  items  share
        A   m-1        1      1  0.333
        A   m-2        2      2  0.667
    """
    cols = ["judge", "model", "replies", "items", "share"]
    if df.empty or "model" not in df.columns:
        return pd.DataFrame(columns=cols)
    # the distinct (judge, model) pairs from integer codes: reports ask this of the same long table many times,
    # and a row selection of every column is what it would cost otherwise
    has = df["model"].notna().to_numpy(dtype=bool)
    jc, ju = codes(df["judge"])
    mc, mu = codes(df["model"])
    pairs = np.unique(jc[has].astype(np.int64) * len(mu) + mc[has])
    per_judge = np.bincount(pairs // len(mu), minlength=len(ju))
    if not (per_judge > 1).any():
        return pd.DataFrame(columns=cols)
    multi = ju[np.flatnonzero(per_judge > 1)]
    d = df[has]
    d = d[d["judge"].isin(multi)]
    key = ["judge", "model"]
    out = pd.DataFrame({"replies": d.groupby(key, observed=True).size(),
                        "items": d.drop_duplicates([*key, "dataset", "item_id"]).groupby(key, observed=True).size()}
                       ).reset_index()
    out["share"] = out["replies"] / out.groupby("judge")["replies"].transform("sum")
    return out.sort_values(["judge", "model"]).reset_index(drop=True)[cols]


def snapshot_note(df: pd.DataFrame) -> str:
    """One sentence naming every judge label with several model snapshots ("" when there is none).

    Parameters
    ----------
    df : DataFrame
        A tidy verdict table.

    Returns
    -------
    str
        See :func:`snapshots`.

    Examples
    --------
    >>> import pandas as pd
    >>> df = coerce(pd.DataFrame({"item_id": ["q1", "q2"], "judge": "A", "model": ["m-1", "m-2"], "verdict": "pass"}))
    >>> snapshot_note(df)
    "judge 'A' carries 2 model snapshots (m-1: 1 replies; m-2: 1 replies): its figures pool the snapshots ..."
    >>> snapshot_note(df.assign(model="m-1"))
    ''
    """
    snap = snapshots(df)
    parts = []
    for judge, g in snap.groupby("judge", sort=True):
        each = "; ".join(f"{r.model}: {r.replies:,} replies" for r in g.itertuples())
        parts.append(f"judge {judge!r} carries {len(g)} model snapshots ({each})")
    if not parts:
        return ""
    return (", ".join(parts) + ": its figures pool the snapshots unless 'model' is in the grouping (by=[..., "
            "'model']), which gives one row per snapshot")


def warn_snapshots(df: pd.DataFrame, *, source: str = "the table") -> str:
    """Emit a :class:`SnapshotWarning` naming ``source`` when a judge label carries several model snapshots.

    Parameters
    ----------
    df : DataFrame
        A tidy verdict table.
    source : str, default "the table"
        What the table is, named in the warning.

    Returns
    -------
    str
        The note (see :func:`snapshot_note`), "" when there is none.

    Examples
    --------
    >>> import pandas as pd, warnings
    >>> df = coerce(pd.DataFrame({"item_id": ["q1", "q2"], "judge": "A", "model": ["m-1", "m-2"], "verdict": "pass"}))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = warn_snapshots(df, source="verdicts.csv")
    >>> caught[0].category.__name__, str(caught[0].message)[:28]
    ('SnapshotWarning', "verdicts.csv: judge 'A' carr")
    """
    note = snapshot_note(df)
    if note:
        warnings.warn(f"{source}: {note}", SnapshotWarning, stacklevel=3)
    return note


def _quote(value) -> str:
    from evallab._fileio import quote

    return quote(value)


def _cut_text(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def _first_bad_numeric(s: pd.Series) -> tuple[int, object] | None:
    conv = pd.to_numeric(s, errors="coerce")
    bad = conv.isna() & s.notna() & (s.astype("string").str.strip() != "")
    if bad.any():
        pos = int(bad.to_numpy().nonzero()[0][0])
        return pos + 1, s.iloc[pos]
    return None


def validate(df: pd.DataFrame, *, path: str | None = None) -> pd.DataFrame:
    """Check that ``df`` follows the tidy verdict schema; return it unchanged.

    Rows are reported 1-based in the order of ``df`` (for a CSV file, data row *r* is on line *r + 1*).

    Raises
    ------
    VerdictTableError
        On a missing column; a verdict or gold outside :data:`VERDICTS` (row and value named); an order outside
        ``ab``/``ba``/``""``; a pass/warn/fail verdict or gold on a row with order ``ab``/``ba`` (a pairwise row); a negative sample; a duplicated key (:data:`KEY`; both rows named); a table with no
        rows.

    Parameters
    ----------
    df : DataFrame
        A table with every column of :data:`COLUMNS` (as :func:`coerce` returns it).
    path : str, optional
        File the table came from, named in errors.

    Returns
    -------
    DataFrame
        ``df`` itself.

    Examples
    --------
    >>> import pandas as pd
    >>> df = coerce(pd.DataFrame({"item_id": ["q1"], "judge": "A", "verdict": "pass"}))
    >>> validate(df) is df
    True
    >>> try:
    ...     validate(pd.concat([df, df]))
    ... except VerdictTableError as e:
    ...     print(e.row, e.column)
    2 item_id
    """
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise VerdictTableError(f"missing column(s) {missing}; expected the tidy columns {list(COLUMNS)}",
                                path=path, column=missing[0])
    if len(df) == 0:
        raise VerdictTableError("the table has no rows; expected at least one judge reply", path=path)
    keys = {k: codes(df[k]) for k in key_of(df)}  # the key encoded once: its checks look at distinct values only
    for c in ("item_id", "judge"):
        cc, u = keys[c]
        u = pd.Series(u, dtype=object)
        empty = (u.isna() | (u.astype("string").str.strip() == "")).to_numpy(dtype=bool, na_value=True)
        if empty.any():
            raise VerdictTableError(f"empty {c}; every reply needs one", path=path,
                                    row=_row(pd.Series(empty[cc])), column=c)
    for c in ("verdict", "gold"):
        v = df[c]
        bad = v.notna() & ~v.isin(VERDICTS)
        if bad.any():
            raise VerdictTableError(
                f"unknown {c} {_quote(v[bad].iloc[0])}; expected one of {list(VERDICTS)} or empty (NA)",
                path=path, row=_row(bad), column=c)
    cc, u = keys["order"]
    bad = pd.Series(~np.isin(cc, [i for i, v in enumerate(u) if isinstance(v, str) and v in ORDERS]))
    if bad.any():
        raise VerdictTableError(f"unknown order {_quote(df['order'][bad.to_numpy()].iloc[0])}; expected 'ab', 'ba' or ''",
                                path=path, row=_row(bad), column="order")
    pairwise_order = pd.Series(np.isin(cc, [i for i, v in enumerate(u) if v in ("ab", "ba")]), index=df.index)
    for c in ("verdict", "gold"):  # a shown order makes the row a pairwise comparison
        bad = pairwise_order & df[c].isin(POINTWISE_VERDICTS).fillna(False).astype(bool)
        if bad.any():
            raise VerdictTableError(
                f"{c} {df[c][bad].iloc[0]!r} on a pairwise row (order {df['order'][bad].iloc[0]!r}); expected one of "
                f"{list(PAIRWISE_VERDICTS)} (or order '' for a pass/warn/fail grade)", path=path, row=_row(bad),
                column=c)
    for c in ("score", "latency_s", "cost_usd"):
        arr = df[c].to_numpy(dtype=float, na_value=np.nan)
        inf = np.isinf(arr)
        if inf.any():
            i = int(np.flatnonzero(inf)[0])
            raise VerdictTableError(f"non-finite number {float(arr[i])!r}; expected a finite number or empty (NA)",
                                    path=path, row=i + 1, column=c)
    bad = df["sample"].notna() & (df["sample"] < 0)
    if bad.any():
        raise VerdictTableError("negative sample index; expected 0, 1, ...", path=path, row=_row(bad),
                                column="sample")
    if combine_codes([c for c, _ in keys.values()], [len(u) for _, u in keys.values()])[1] < len(df):  # repeated
        dup = df.duplicated(key_of(df), keep="first")
        at = _row(dup) - 1
        first = df.iloc[at]
        key = {k: (None if pd.isna(first[k]) else first[k].item() if hasattr(first[k], "item") else first[k])
               for k in key_of(df)}
        keys = df[key_of(df)].astype("string").fillna("\0")
        same = (keys == keys.iloc[at]).all(axis=1)
        raise VerdictTableError(
            f"duplicated key {key} (first at row {_row(same)}): more than one reply for the same (dataset, item_id, "
            f"judge, strategy, anchor_set, order, sample); expected one row per reply",
            path=path, row=at + 1, column="item_id")
    return df


def _small(codes: np.ndarray, m: int) -> np.ndarray:
    """``codes`` (all in [0, m)) in the smallest of int8/int16/int32/int64 that holds them."""
    for t in (np.int8, np.int16, np.int32):
        if m <= np.iinfo(t).max:
            return codes.astype(t, copy=False)
    return codes.astype(np.int64, copy=False)


def codes(values: pd.Series | pd.Index, *, sort: bool = False) -> tuple[np.ndarray, pd.Index]:
    """A column as integer codes and the distinct values they stand for (``values[codes]`` gives it back).

    NA is a value of its own (last when ``sort``); a column with one value costs no hashing. Codes come in the
    smallest integer type that holds them.

    Parameters
    ----------
    values : Series or Index
    sort : bool, default False
        Number the values in sorted order (else in order of appearance).

    Returns
    -------
    (ndarray of int, Index)

    Examples
    --------
    >>> import pandas as pd
    >>> c, u = codes(pd.Series(["b", "a", "b"]))
    >>> c.tolist(), u.tolist()
    ([0, 1, 0], ['b', 'a'])
    >>> codes(pd.Series(["b", "a", "b"]), sort=True)[0].tolist()
    [1, 0, 1]
    """
    n = len(values)
    if n and not values.isna().any():
        first = values.iloc[0] if isinstance(values, pd.Series) else values[0]
        if bool((values == first).all()):
            return np.zeros(n, dtype=np.int8), pd.Index([first], dtype=values.dtype)
    c, u = pd.factorize(values, sort=sort, use_na_sentinel=False)
    return _small(c, len(u)), u


def compress_codes(code: np.ndarray, total: int) -> tuple[np.ndarray, int]:
    """Dense codes 0..m-1 (order kept, smallest integer type) of combined codes in [0, total), and m.

    Parameters
    ----------
    code : ndarray of int
        Codes in [0, total).
    total : int

    Returns
    -------
    (ndarray of int, int)

    Examples
    --------
    >>> import numpy as np
    >>> c, m = compress_codes(np.array([5, 0, 5, 9]), 10)
    >>> c.tolist(), m
    ([1, 0, 1, 2], 3)
    """
    if total <= max(4 * len(code), 1 << 16):
        present = np.bincount(code, minlength=total) > 0
        dense = np.cumsum(present, dtype=np.int64) - 1
        m = int(dense[-1]) + 1 if total else 0
        return _small(dense, m)[code], m
    uniq, inv = np.unique(code, return_inverse=True)
    return _small(inv.reshape(-1), len(uniq)), len(uniq)


def combine_codes(codes: Sequence[np.ndarray], cards: Sequence[int]) -> tuple[np.ndarray, int]:
    """Dense codes of the combinations of several code columns, and the number of combinations present.

    Combinations are numbered in lexicographic order of the columns (as ``groupby(sort=True)`` orders its groups).

    Parameters
    ----------
    codes : sequence of ndarray of int
        Code columns of equal length.
    cards : sequence of int
        How many values each column's codes can take.

    Returns
    -------
    (ndarray of int, int)

    Examples
    --------
    >>> import numpy as np
    >>> c, m = combine_codes([np.array([0, 0, 1]), np.array([1, 0, 1])], [2, 2])
    >>> c.tolist(), m
    ([1, 0, 2], 3)
    """
    n = len(codes[0]) if codes else 0
    out, total = None, 1
    for c, k in zip(codes, cards, strict=True):
        k = max(int(k), 1)
        if out is None:
            out = c.astype(np.int64)
        else:
            if total * k >= 2**62:  # keep the combined code inside int64
                out, total = compress_codes(out, total)
                out = out.astype(np.int64)
            out *= k
            out += c
        total *= k
    return compress_codes(out, total) if n else (np.zeros(0, dtype=np.int8), 0)


def _row(mask: pd.Series) -> int:
    return int(mask.to_numpy().nonzero()[0][0]) + 1


def _place(df: pd.DataFrame, i: int, table_of: list[int], row_of: list[int]) -> str:
    """Where row ``i`` of a concatenation came from: its ``source_file`` and ``source_ref`` when it carries them,
    else its table and row (1-based)."""
    parts = [str(df[c].iat[i]) for c in ("source_file", "source_ref")
             if c in df.columns and not pd.isna(df[c].iat[i]) and str(df[c].iat[i])]
    return ": ".join(parts) if parts else f"table {table_of[i] + 1}, row {row_of[i] + 1}"


def concat(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate verdict tables into one, re-validated.

    Parameters
    ----------
    tables : iterable of DataFrame
        Verdict tables, each brought to the schema first (:func:`coerce`); extra columns are kept (NA where a
        table lacks one).

    Returns
    -------
    DataFrame
        Every row of every table, in order; the empty tidy table (:func:`empty`) when there is none.

    Raises
    ------
    VerdictTableError
        A table that does not follow the schema, or a reply (a :data:`KEY`) found in two tables. The error names
        both places: a row's ``source_file`` and ``source_ref`` (where in its file it came from, as the importers
        write them) when the tables carry them, otherwise its table and row (1-based); the second place is the
        error's ``path``.

    Examples
    --------
    >>> import pandas as pd
    >>> a = pd.DataFrame({"item_id": ["q1"], "judge": "A", "verdict": "pass"})
    >>> b = pd.DataFrame({"item_id": ["q2"], "judge": "A", "verdict": "fail"})
    >>> concat([a, b])["item_id"].tolist()
    ['q1', 'q2']
    >>> try:
    ...     concat([a, a])
    ... except VerdictTableError as e:
    ...     print(e.path)
    table 2, row 1
    """
    tables = [coerce(t) for t in tables]
    if not tables:
        return empty()
    if len(tables) == 1:
        return tables[0]
    df = pd.concat(tables, ignore_index=True)
    dup = df.duplicated(list(KEY), keep="first")
    if dup.any():
        table_of = [t for t, tab in enumerate(tables) for _ in range(len(tab))]
        row_of = [r for tab in tables for r in range(len(tab))]
        second = int(dup.to_numpy().nonzero()[0][0])
        keys = df[list(KEY)].astype("string").fillna("\0")
        first = int((keys == keys.iloc[second]).all(axis=1).to_numpy().nonzero()[0][0])
        key = {k: (None if pd.isna(v) else v.item() if hasattr(v, "item") else v)
               for k, v in df[list(KEY)].iloc[second].items()}
        raise VerdictTableError(
            f"repeats the judge reply of {_place(df, first, table_of, row_of)} (same key {key}); expected one "
            "reply per (dataset, item_id, judge, strategy, anchor_set, order, sample)",
            path=_place(df, second, table_of, row_of))
    return coerce(df)


def summary_lines(df: pd.DataFrame, *, reasons: int = 10) -> list[str]:
    """A verdict table in a few lines of text, as ``evallab import`` prints it.

    Parameters
    ----------
    df : DataFrame
        A tidy verdict table.
    reasons : int, default 10
        How many of the most frequent reasons for an NA verdict (the ``error`` column) are listed.

    Returns
    -------
    list of str
        ``rows: N``; ``verdicts: 1=…, 2=…, tie=…`` (counts of replies, in the order of :data:`VERDICTS`);
        ``NA: N`` (unparsed replies) followed by one line per reason with its count; then, when present,
        the count of numeric ``score`` values and of rows with ``gold``. A score table (:func:`is_score_table`)
        reads ``verdicts: none — a score table: N scores, no verdicts`` instead: its scores without a verdict are
        not NA; only its rows without a score are (``NA: N (no score)``, with their reasons).

    Examples
    --------
    >>> import pandas as pd
    >>> df = coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3"], "judge": "A", "verdict": ["pass", "fail", None],
    ...                           "error": [None, None, "no verdict found"]}))
    >>> for line in summary_lines(df):
    ...     print(line)
    rows: 3
    verdicts: pass=1, fail=1
    NA: 1
            1  no verdict found
    """
    counts = df["verdict"].value_counts()
    na = df["verdict"].isna()
    parts = [f"{v}={int(counts[v])}" for v in VERDICTS if v in counts.index]
    if is_score_table(df):  # a score without a verdict is what a score table holds: never counted as NA
        scored = _numeric_scores(df).notna()
        na = na & ~scored.to_numpy()
        lines = [f"rows: {len(df)}", f"verdicts: none — a score table: {int(scored.sum())} scores, no verdicts"]
        if na.any():
            lines.append(f"NA: {int(na.sum())} (no score)")
    else:
        lines = [f"rows: {len(df)}", f"verdicts: {', '.join(parts) if parts else '(none)'}", f"NA: {int(na.sum())}"]
    if na.any():
        why = df.loc[na, "error"].fillna("(no reason)").value_counts()
        lines += [f"  {int(n):>7}  {reason}" for reason, n in why.head(reasons).items()]
        if len(why) > reasons:
            lines.append(f"  ... {len(why) - reasons} more reasons")
    if "score" in df and df["score"].notna().any():
        lines.append(f"score: {int(df['score'].notna().sum())} numeric, {int(df['score'].isna().sum())} NA")
    if df["gold"].notna().any():
        lines.append(f"gold: {int(df['gold'].notna().sum())} rows with gold")
    return lines


def parse_rate(df: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Replies and unparsed replies per group.

    Unparsed replies are counted here and excluded (not scored as wrong) by every estimator's default.

    Parameters
    ----------
    df : DataFrame
        A tidy verdict table.
    by : list of str, optional
        Grouping columns (default ``["judge"]``).

    Returns
    -------
    DataFrame
        Columns ``by + [replies, unparsed, unparsed_rate]``: counts of replies, and ``unparsed_rate``
        (proportion, in [0, 1]).

    Examples
    --------
    >>> import pandas as pd
    >>> df = coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3"], "judge": "A", "verdict": ["pass", "fail", None]}))
    >>> print(parse_rate(df).round(3).to_string(index=False))
    judge  replies  unparsed  unparsed_rate
        A        3         1          0.333
    """
    by = list(by or ["judge"])
    g = df.assign(_na=df["verdict"].isna()).groupby(by, dropna=False)["_na"]
    out = g.agg(replies="size", unparsed="sum").reset_index()
    out["unparsed_rate"] = out["unparsed"] / out["replies"]
    return out


def as_list(value) -> list[str]:
    """A list parameter as a list of strings, however a notebook or CLI passed it.

    Parameters
    ----------
    value : None, str, list or tuple
        ``None``/``""`` → ``[]``; a list/tuple → itself; a string holding a JSON or YAML list (what
        ``papermill -p`` passes, e.g. ``'["LLMBar/Natural"]'``) → the parsed list; any other string → ``[value]``.

    Returns
    -------
    list of str

    Examples
    --------
    >>> as_list(None), as_list('["LLMBar/Natural", "LLMBar/Adversarial"]'), as_list("GPT-4")
    ([], ['LLMBar/Natural', 'LLMBar/Adversarial'], ['GPT-4'])
    """
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    if isinstance(value, str):
        v = value.strip()
        if not v:
            return []
        if v.startswith("["):
            try:
                parsed = yaml.safe_load(v)
            except yaml.YAMLError:
                parsed = None
            if isinstance(parsed, list):
                return [str(x) for x in parsed]
        return [v]
    return [str(value)]


def select(df: pd.DataFrame, *, subsets: Iterable[str] | None = None, judges: Iterable[str] | None = None,
           strategies: Iterable[str] | None = None, path: str | None = None) -> pd.DataFrame:
    """Rows of the given subsets (exact, or a ``/``-prefix such as ``LLMBar/Adversarial``), judges and strategies.

    What a filter leaves out is never dropped silently: the result's ``attrs["left_out"]`` lists one phrase per
    filter that removed rows, which :func:`evallab.metrics._design.describe` says in its text.

    Parameters
    ----------
    df : DataFrame
        A tidy verdict table.
    subsets, judges, strategies : iterable of str, optional
        Values to keep (any form :func:`as_list` reads); empty or None selects all.
    path : str, optional
        File the table came from, named in errors.

    Returns
    -------
    DataFrame
        The selected rows (index reset), ``attrs["left_out"]`` as above.

    Raises
    ------
    VerdictTableError
        When a filter selects nothing, naming the values available.

    Examples
    --------
    >>> import pandas as pd
    >>> df = coerce(pd.DataFrame({"item_id": ["q1", "q2", "q1"], "judge": ["A", "A", "B"], "verdict": "pass",
    ...                           "subset": ["LLMBar/Natural", "LLMBar/Adversarial/Neighbor", "LLMBar/Natural"]}))
    >>> out = select(df, subsets=["LLMBar/Adversarial"], judges=["A"])
    >>> out["item_id"].tolist(), out.attrs["left_out"]
    (['q2'], ['subset LLMBar/Natural: 2 replies left out by the subsets filter'])
    """
    out = df
    left_out = list(df.attrs.get("left_out", []))
    for col, wanted in (("subset", subsets), ("judge", judges), ("strategy", strategies)):
        wanted = [w for w in as_list(wanted) if w]
        if not wanted:
            continue
        vals = out[col].astype("string").fillna("")
        m = pd.Series(False, index=out.index)
        for w in wanted:
            m |= (vals == w) | vals.str.startswith(w.rstrip("/") + "/")
        if not m.any():
            raise VerdictTableError(f"{col} filter {wanted} selects no rows; available: {sorted(vals.unique())} — "
                                    "give some of those, or an empty list for all (a notebook's defaults name the "
                                    "bundled data's values)", path=path, column=col)
        if not m.all():
            gone = sorted(vals[~m].unique())
            left_out.append(f"{col} {', '.join(gone)}: {int((~m).sum()):,} replies left out by the "
                            f"{'strategies' if col == 'strategy' else col + 's'} filter")
        out = out[m]
    out = out.reset_index(drop=True)
    out.attrs["left_out"] = left_out
    return out



# ------------------------------------------------------------------------------ score tables and verdict tables
#: where a verdict estimator or report sends a score table, and a scale estimator or report a verdict table
SCALE_ESTIMATORS = "evallab.metrics.score_agreement, rater_reliability, human_ceiling or report 08 (scales)"
VERDICT_ESTIMATORS = ("the verdict estimators (evallab.metrics.accuracy, cohen_kappa_vs_gold, judge_agreement, "
                      "krippendorff_alpha ...) or reports 01-07")
THRESHOLDS_HINT = "or cut the scores into verdicts when importing (evallab import --thresholds)"


def _empty_verdicts(df: pd.DataFrame) -> pd.Series:
    if "verdict" not in df.columns:
        return pd.Series(True, index=df.index)
    v = df["verdict"]
    return v.isna() | (v.astype("string").str.strip() == "").fillna(True)


def _all_verdicts_empty(df: pd.DataFrame) -> bool:
    """Whether every ``verdict`` is NA or blank (or there is no ``verdict`` column) — fast on a verdict table: the
    first non-NA verdict usually decides."""
    if "verdict" not in df.columns:
        return True
    v = df["verdict"]
    for x in v.iloc[:8]:  # a verdict table's first rows usually hold a verdict: decided without a column scan
        if not pd.isna(x) and str(x).strip():
            return False
    return bool(_empty_verdicts(df).all())


def _numeric_scores(df: pd.DataFrame) -> pd.Series:
    """The ``score`` column as floats (NaN where absent or not a number); all NaN when the table has none."""
    if "score" not in df.columns:
        return pd.Series(np.nan, index=df.index, dtype=float)
    return pd.to_numeric(df["score"], errors="coerce").astype(float)


def rater_label(df: pd.DataFrame) -> pd.Series:
    """How the scale estimators, reports and :func:`evallab.describe` name a rater: ``judge`` alone where
    ``strategy`` is empty or absent, else ``judge · strategy`` (a judge under two prompts is two raters). Returns a
    string Series aligned with ``df``; NA where ``judge`` is NA.

    Examples
    --------
    >>> import pandas as pd
    >>> rater_label(pd.DataFrame({"judge": ["ann", "gpt", "gpt"], "strategy": ["", "p1", "p2"]})).tolist()
    ['ann', 'gpt · p1', 'gpt · p2']
    """
    code, labels = _rater_codes(df)
    return pd.Series(labels.array.take(code), index=df.index, dtype="string", name="judge")


def _rater_codes(df: pd.DataFrame) -> tuple[np.ndarray, pd.Series]:
    """Each row's rater as a code into the labels of the distinct (judge, strategy) pairs (:func:`rater_label`'s
    labels; the pairs ordered by judge — an NA judge first — then strategy, each in order of first appearance), and
    those labels: built on the
    pairs (a few dozen), not the rows — a rating table is long."""
    j = df["judge"].astype("string")
    s = df["strategy"].astype("string").fillna("") if "strategy" in df.columns else pd.Series("", index=df.index,
                                                                                               dtype="string")
    jc, ju = pd.factorize(j, use_na_sentinel=True)
    sc, su = pd.factorize(s)
    pair = (jc.astype(np.int64) + 1) * len(su) + sc  # judge code + 1: an NA judge (-1) is pair 0 … len(su) - 1
    # the distinct pairs in sorted order and each row's rank among them (np.unique(return_inverse=True) without
    # its sort of every row: the pair codes are small)
    seen = np.zeros((len(ju) + 1) * len(su), dtype=bool)
    seen[pair] = True
    pairs = np.flatnonzero(seen)
    jj = pd.Series(pd.array(ju, dtype="string").take(pairs // len(su) - 1, allow_fill=True), dtype="string")
    ss = pd.Series(pd.array(su, dtype="string").take(pairs % len(su)), dtype="string")
    return (np.cumsum(seen) - 1)[pair].ravel(), jj.where(ss == "", jj + " · " + ss)


def is_score_table(df: pd.DataFrame) -> bool:
    """Whether ``df`` is a score table — ratings on a scale and nothing a verdict estimator can use: at least one
    numeric ``score`` and every ``verdict`` empty (NA or blank) or no ``verdict`` column.

    A verdict table that also carries scores (MT-Bench single grading imported with thresholds, AlpacaEval's
    weighted preference) is not a score table; a table of verdicts that are all unparsed (no score) is not one
    either (the estimators report it as unparsed).

    Examples
    --------
    >>> import pandas as pd
    >>> is_score_table(pd.DataFrame({"item_id": ["q1"], "judge": "A", "verdict": [None], "score": [4.0]}))
    True
    >>> is_score_table(pd.DataFrame({"item_id": ["q1"], "judge": "A", "verdict": ["pass"], "score": [4.0]}))
    False
    """
    if "score" not in df.columns or not len(df) or not _all_verdicts_empty(df):
        return False
    return bool(_numeric_scores(df).notna().any())


def has_scores(df: pd.DataFrame) -> bool:
    """Whether ``df`` holds at least one numeric ``score`` (what a scale estimator needs).

    Examples
    --------
    >>> import pandas as pd
    >>> has_scores(pd.DataFrame({"score": [None, 3]})), has_scores(pd.DataFrame({"verdict": ["pass"]}))
    (True, False)
    """
    return bool(_numeric_scores(df).notna().any())


def _scores_in_words(df: pd.DataFrame) -> str:
    """What a score table holds, for a refusal: ``column 'score', 1–5`` — the declared scale where the rows
    declare one (:data:`SCALE_COLUMNS`), else the range of the scores."""
    lo = hi = np.nan
    if "scale_min" in df.columns and "scale_max" in df.columns:
        lo = pd.to_numeric(df["scale_min"], errors="coerce").min()
        hi = pd.to_numeric(df["scale_max"], errors="coerce").max()
    if pd.isna(lo) or pd.isna(hi):
        s = _numeric_scores(df)
        lo, hi = s.min(), s.max()
    return f"column 'score', {float(lo):g}–{float(hi):g}"


def _verdicts_in_words(df: pd.DataFrame) -> str:
    """What a verdict table holds, for a refusal: ``column 'verdict': fail/pass``."""
    if "verdict" not in df.columns:
        return "no 'verdict' column"
    vals = sorted(map(str, df.loc[~_empty_verdicts(df), "verdict"].unique()))
    shown = "/".join(vals[:4]) + ("/..." if len(vals) > 4 else "")
    return f"column 'verdict': {shown or 'all empty'}"


def score_table_refusal(df: pd.DataFrame, what: str, instead: str | None = None) -> str:
    """The one line refusing the score table ``df`` to ``what`` (a verdict estimator or report), sending the
    user to ``instead`` (its scale counterpart; ``None``: there is none, the scale estimators are named).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"item_id": ["s1", "s2"], "judge": "J", "verdict": None, "score": [1, 5]})
    >>> score_table_refusal(t, "Cohen's kappa", "evallab.metrics.score_agreement or report 08")[:82]
    "this is a score table (scores only: column 'score', 1–5, every verdict empty); Coh"
    """
    go = f"use {instead}" if instead else \
        f"it has no counterpart on a scale yet (agreement on ratings: {SCALE_ESTIMATORS})"
    return (f"this is a score table (scores only: {_scores_in_words(df)}, every verdict empty); {what} needs "
            f"verdicts (1/2/tie or pass/warn/fail) — {go}; {THRESHOLDS_HINT}")


def verdict_table_refusal(df: pd.DataFrame, what: str, instead: str | None = None) -> str:
    """The one line refusing the verdict table ``df`` (no numeric score) to ``what`` (a scale estimator or
    report), sending the user to ``instead`` (default: :data:`VERDICT_ESTIMATORS`).

    Examples
    --------
    >>> import pandas as pd
    >>> verdict_table_refusal(pd.DataFrame({"verdict": ["pass", "fail"]}), "score_agreement")[:70]
    "this is a verdict table (verdicts only: column 'verdict': fail/pass, n"
    """
    return (f"this is a verdict table (verdicts only: {_verdicts_in_words(df)}, no numeric score); {what} needs "
            f"scores on a scale (numeric ratings in column 'score', e.g. HANNA's 1–5 or MT-Bench's 1–10) — use "
            f"{instead or VERDICT_ESTIMATORS}")


#: the public face of the verdict table (the helpers below it — ``codes``, ``norm_label``, the snapshot checks … —
#: serve the loaders and estimators and are not API)
__all__ = ["KEY", "SCHEMA", "VERDICTS", "coerce", "concat", "empty", "parse_rate", "select", "summary_lines",
           "validate"]
