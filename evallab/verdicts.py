"""The tidy verdict table: one row per judge reply.

This is the contract between loaders, live judge runs and estimators (the project design, "The contract"; the
README's "Point a notebook at your own verdict table" shows how to write one).
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
from collections.abc import Iterable

import pandas as pd
import yaml

from evallab.errors import VerdictTableError

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


def empty() -> pd.DataFrame:
    """An empty verdict table with the schema's columns and dtypes."""
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in SCHEMA.items()})


#: cells read as a missing verdict (after strip + lower)
_NA_WORDS = ("", "na", "nan", "none", "null")
#: integer-like floats written by spreadsheets: "1.0" -> "1"
_FLOAT_LABELS = {"1.0": "1", "2.0": "2"}


def _norm_verdict(s: pd.Series) -> pd.Series:
    s = s.astype("string").str.strip().str.lower()
    s = s.mask(s.isin(_NA_WORDS))
    return s.replace(_FLOAT_LABELS)


def norm_label(value) -> str | None:
    """One verdict or gold cell as :func:`coerce` reads it: stripped, lower-case, ``"1.0"`` → ``"1"``; ``None`` for
    a missing value (``None``, NaN, "", "na", "nan", "none", "null"). The result may still be outside
    :data:`VERDICTS` — the caller says what it expected."""
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
    """
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise VerdictTableError(
            f"missing required column(s) {missing}; a verdict table needs {list(REQUIRED)} "
            f"(optional: {[c for c in COLUMNS if c not in REQUIRED]})",
            path=path,
            column=missing[0],
        )
    out = df.copy()
    for c in COLUMNS:
        if c not in out.columns:
            out[c] = DEFAULTS.get(c, pd.NA)
    for c in ("verdict", "gold"):
        norm = _norm_verdict(out[c])
        bad = norm.notna() & ~norm.isin(VERDICTS)
        if bad.any():  # name the value as written, not as normalised
            raise VerdictTableError(
                f"unknown {c} {out[c][bad].iloc[0]!r}; expected one of {list(VERDICTS)} or empty (NA)",
                path=path, row=_row(bad), column=c)
        out[c] = norm
    out["order"] = out["order"].astype("string").fillna("").str.strip().str.lower()
    for c, t in SCHEMA.items():
        if c in ("verdict", "gold", "order"):
            continue
        try:
            if t in ("Int64", "Float64"):
                out[c] = pd.to_numeric(out[c], errors="raise").astype(t)
            else:
                out[c] = out[c].astype(t)
        except (ValueError, TypeError) as exc:
            bad = _first_bad_numeric(out[c]) if t in ("Int64", "Float64") else None
            raise VerdictTableError(
                f"expected {t} values ({exc})" + (f"; first bad value {bad[1]!r}" if bad else ""),
                path=path,
                row=None if bad is None else bad[0],
                column=c,
            ) from None
    for c in ("dataset", "subset", "strategy", "anchor_set"):
        out[c] = out[c].fillna(DEFAULTS[c])
    out["sample"] = out["sample"].fillna(0)
    extra = [c for c in out.columns if c not in SCHEMA]
    out = out[list(COLUMNS) + extra]
    validate(out, path=path)
    return out.reset_index(drop=True)


class SnapshotWarning(UserWarning):
    """One judge label whose replies carry several model snapshots (e.g. a server that reported two versions
    under one alias): its figures pool the snapshots unless ``model`` is in the grouping."""


def snapshots(df: pd.DataFrame) -> pd.DataFrame:
    """The judge labels whose replies carry more than one ``model`` value (the pinned snapshot a reply reports).

    Returns
    -------
    DataFrame, one row per (judge, model) of such labels: ``judge``, ``model``, ``replies`` (rows), ``items``
    (distinct dataset/item pairs), ``share`` (of the label's replies, in [0, 1]); empty when every label has at most
    one snapshot. Replies without a model (NA) are not a snapshot and are not counted.
    """
    cols = ["judge", "model", "replies", "items", "share"]
    if df.empty or "model" not in df.columns:
        return pd.DataFrame(columns=cols)
    d = df[df["model"].notna()]
    n = d.groupby("judge", observed=True)["model"].nunique()
    multi = n[n > 1].index
    if not len(multi):
        return pd.DataFrame(columns=cols)
    d = d[d["judge"].isin(multi)]
    key = ["judge", "model"]
    out = pd.DataFrame({"replies": d.groupby(key, observed=True).size(),
                        "items": d.drop_duplicates([*key, "dataset", "item_id"]).groupby(key, observed=True).size()}
                       ).reset_index()
    out["share"] = out["replies"] / out.groupby("judge")["replies"].transform("sum")
    return out.sort_values(["judge", "model"]).reset_index(drop=True)[cols]


def snapshot_note(df: pd.DataFrame) -> str:
    """One sentence naming every judge label with several model snapshots ("" when there is none)."""
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
    """Emit a :class:`SnapshotWarning` naming ``source`` when a judge label carries several model snapshots;
    returns the note (see :func:`snapshot_note`), "" when there is none."""
    note = snapshot_note(df)
    if note:
        warnings.warn(f"{source}: {note}", SnapshotWarning, stacklevel=3)
    return note


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
        ``ab``/``ba``/``""``; a negative sample; a duplicated key (:data:`KEY`; both rows named); a table with no
        rows.
    """
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise VerdictTableError(f"missing column(s) {missing}; expected the tidy columns {list(COLUMNS)}",
                                path=path, column=missing[0])
    if len(df) == 0:
        raise VerdictTableError("the table has no rows; expected at least one judge reply", path=path)
    for c in ("item_id", "judge"):
        na = df[c].isna() | (df[c].astype("string").str.strip() == "")
        if na.any():
            raise VerdictTableError(f"empty {c}; every reply needs one", path=path, row=_row(na), column=c)
    for c in ("verdict", "gold"):
        v = df[c]
        bad = v.notna() & ~v.isin(VERDICTS)
        if bad.any():
            raise VerdictTableError(
                f"unknown {c} {v[bad].iloc[0]!r}; expected one of {list(VERDICTS)} or empty (NA)",
                path=path, row=_row(bad), column=c)
    bad = ~df["order"].isin(ORDERS)
    if bad.any():
        raise VerdictTableError(f"unknown order {df['order'][bad].iloc[0]!r}; expected 'ab', 'ba' or ''",
                                path=path, row=_row(bad), column="order")
    bad = df["sample"].notna() & (df["sample"] < 0)
    if bad.any():
        raise VerdictTableError("negative sample index; expected 0, 1, ...", path=path, row=_row(bad),
                                column="sample")
    dup = df.duplicated(list(KEY), keep="first")
    if dup.any():
        at = _row(dup) - 1
        first = df.iloc[at]
        key = {k: (None if pd.isna(first[k]) else first[k].item() if hasattr(first[k], "item") else first[k])
               for k in KEY}
        keys = df[list(KEY)].astype("string").fillna("\0")
        same = (keys == keys.iloc[at]).all(axis=1)
        raise VerdictTableError(
            f"duplicated key {key} (first at row {_row(same)}): more than one reply for the same (dataset, item_id, "
            f"judge, strategy, anchor_set, order, sample); expected one row per reply",
            path=path, row=at + 1, column="item_id")
    return df


def _row(mask: pd.Series) -> int:
    return int(mask.to_numpy().nonzero()[0][0]) + 1


def concat(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate verdict tables and re-validate (a key repeated across tables is an error)."""
    tables = [coerce(t) for t in tables]
    return coerce(pd.concat(tables, ignore_index=True)) if tables else empty()


def parse_rate(df: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Replies and unparsed replies per group.

    Returns a DataFrame with columns ``by + [replies, unparsed, unparsed_rate]``; ``unparsed_rate`` in [0, 1].
    Unparsed replies are counted here and excluded (not scored as wrong) by every estimator's default.
    """
    by = list(by or ["judge"])
    g = df.assign(_na=df["verdict"].isna()).groupby(by, dropna=False)["_na"]
    out = g.agg(replies="size", unparsed="sum").reset_index()
    out["unparsed_rate"] = out["unparsed"] / out["replies"]
    return out


def as_list(value) -> list[str]:
    """A list parameter as a list of strings, however a notebook or CLI passed it.

    ``None``/``""`` → ``[]``; a list/tuple → itself; a string holding a JSON or YAML list (what ``papermill -p``
    passes, e.g. ``'["LLMBar/Natural"]'``) → the parsed list; any other string → ``[value]``.
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

    Empty or None selects all. What a filter leaves out is never dropped silently: the result's
    ``attrs["left_out"]`` lists one phrase per filter that removed rows (e.g. "strategy CoT: 838 replies left out by
    the strategies filter"), which :func:`evallab.metrics.design.describe` says in its text. Raises
    :class:`VerdictTableError` when a filter selects nothing, naming the values available.
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
