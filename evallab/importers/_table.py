"""Any table (CSV / TSV / JSON lines / JSON array / Parquet) with a column map and a value map → tidy table."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from evallab import _fileio as fileio
from evallab import verdicts as V
from evallab.errors import VerdictTableError
from evallab.importers._common import ImportDataError, check_file, read_json

SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet")
EXPECTED = "a table: .csv/.tsv (header row), .jsonl/.ndjson (one object per line), .json (array of objects), .parquet"


def read_any_table(path: str | Path) -> tuple[pd.DataFrame, str]:
    """Read a table as strings where the format allows; returns ``(frame, unit)`` (``unit``: how a data row is named
    in errors: ``row`` for CSV/Parquet, ``line`` for JSON lines, ``entry`` for a JSON array).

    CSV/TSV/Parquet are read by :func:`evallab._fileio.read_table` (the loaders' reader: CSV columns as text; the
    encoding from a byte-order mark; duplicated column names, nested columns and non-finite numbers refused).

    Raises
    ------
    ImportDataError
        Not a regular file, empty, an unknown extension, not UTF-8 (the byte offset named), a malformed CSV or
        Parquet file, a column name given twice, a nested Parquet column, a non-finite number, a JSON value that is
        not an array of objects.
    """
    p = check_file(path, EXPECTED)
    suffix = p.suffix.lower()
    if suffix not in SUFFIXES:
        raise ImportDataError(f"unknown file type {suffix!r}; expected {EXPECTED}", p)
    if suffix in (".parquet", ".csv", ".tsv"):
        return fileio.read_table(p, EXPECTED, ImportDataError, na="NA")
    doc = read_json(p, EXPECTED)
    if doc.kind == "json" and not isinstance(doc.value, list):
        raise ImportDataError("is a single JSON value, not an array of objects; expected " + EXPECTED, p)
    records = [o for _, o in doc.objects(EXPECTED)]
    unit = "line" if doc.kind == "jsonl" else "entry"
    return fileio.check_finite(pd.DataFrame.from_records(records), p, ImportDataError, unit=unit), unit


#: the extra column a numeric human (gold) score is kept in
GOLD_SCORE = "gold_score"
#: the design columns the scale estimators read (:mod:`evallab.metrics._scales`), mappable and settable beside the
#: tidy columns: ``criterion`` (part of the key, :data:`evallab.verdicts.KEY_EXTRAS`), ``role`` (``human`` marks a
#: human rater) and the declared scale (:data:`evallab.verdicts.SCALE_COLUMNS`)
DESIGN_COLUMNS = (*V.KEY_EXTRAS, "role", *V.SCALE_COLUMNS)
#: the columns a map or a constant may target
TARGETS = (*V.COLUMNS, GOLD_SCORE, *DESIGN_COLUMNS)
#: the private column carrying a melted row's data row in the file (for error messages), dropped before coercion
_SRC_ROW = "__evallab_source_row"


def parse_list(value: str | list[str] | None) -> list[str]:
    """``"a,b"`` / ``["a", "b,c"]`` → ``["a", "b", "c"]`` (spaces trimmed, empties dropped)."""
    if not value:
        return []
    items = [value] if isinstance(value, str) else list(value)
    return [p.strip() for item in items for p in str(item).split(",") if p.strip()]


def _melt(df: pd.DataFrame, cols: list[str], p: Path) -> pd.DataFrame:
    """One row per (row, wide column): ``judge`` = the column, ``score`` = its value."""
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ImportDataError(f"wide column {missing[0]!r} is not in the file; its columns are "
                              f"{list(df.columns)[:30]}", p, field=missing[0])
    clash = [c for c in ("judge", "score") if c in df.columns]
    if clash:
        raise ImportDataError(f"a wide table is reshaped into 'judge' and 'score', but the file already has "
                              f"{clash[0]!r}; rename it or map it to another tidy column", p, field=clash[0])
    df = df.assign(**{_SRC_ROW: np.arange(1, len(df) + 1)})
    keep = [c for c in df.columns if c not in cols]
    out = df.melt(id_vars=keep, value_vars=cols, var_name="judge", value_name="score")
    return out[out["score"].notna() & (out["score"].astype("string").str.strip() != "")].reset_index(drop=True)


def _numeric(s: pd.Series, p: Path, unit: str, column: str) -> pd.Series:
    """A score column as Float64; a value that is not a number raises, naming its row and column."""
    raw = s.astype("string").str.strip()
    v = pd.to_numeric(raw.mask(raw == ""), errors="coerce")
    bad = v.isna() & raw.notna() & (raw != "")
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise ImportDataError(f"score {s.iloc[i]!r} is not a number; expected a numeric score or empty", p,
                              f"{unit} {i + 1}", column)
    return v.astype("Float64")


def _cut(score: pd.Series, thresholds: tuple[float, float]) -> pd.Series:
    lo, hi = thresholds
    f = score.to_numpy(dtype=float, na_value=float("nan"))
    out = np.where(np.isnan(f), None, np.where(f <= lo, "fail", np.where(f >= hi, "pass", "warn")))
    return pd.Series(out, index=score.index, dtype="string")


def _scores(df: pd.DataFrame, thresholds, p: Path, unit: str, cmap: dict) -> pd.DataFrame:
    """Numeric ``score`` and ``gold_score`` typed; verdicts and gold cut from them by ``thresholds``; a score table
    without a verdict column given NA verdicts (not an error: a score table holds scores, no verdicts)."""
    if "score" not in df.columns and GOLD_SCORE not in df.columns:
        if thresholds is not None:
            raise ImportDataError("thresholds cut a numeric score, but the table has no 'score' column; map one "
                                  "with --map score=COLUMN", p, field="score")
        return df
    df = df.copy()
    for c in ("score", GOLD_SCORE):
        if c in df.columns:
            df[c] = _numeric(df[c], p, unit, cmap.get(c, c))
    if "score" in df.columns and "verdict" not in df.columns:
        df["verdict"] = _cut(df["score"], thresholds) if thresholds else pd.Series(pd.NA, index=df.index,
                                                                                      dtype="string")
    elif thresholds and "score" in df.columns:
        v = df["verdict"].astype("string")
        df["verdict"] = v.mask(v.isna() | (v.str.strip() == ""), _cut(df["score"], thresholds))
    if GOLD_SCORE in df.columns and thresholds:
        g = df["gold"].astype("string") if "gold" in df.columns else pd.Series(pd.NA, index=df.index,
                                                                              dtype="string")
        df["gold"] = g.mask(g.isna() | (g.str.strip() == ""), _cut(df[GOLD_SCORE], thresholds))
    return df


def parse_pairs(values: str | list[str] | Mapping | None, what: str) -> dict[str, str]:
    """``"a=1,b=2"`` / ``["a=1", "b=2"]`` / a mapping → ``{"a": "1", "b": "2"}``."""
    if values is None:
        return {}
    if isinstance(values, Mapping):
        return {str(k): "" if v is None else str(v) for k, v in values.items()}
    items = [values] if isinstance(values, str) else list(values)
    out = {}
    for item in items:
        for part in item.split(","):
            if not part.strip():
                continue
            if "=" not in part:
                raise ImportDataError(f"{part.strip()!r} is not NAME=VALUE; expected e.g. {what}", field=what)
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def import_table(path: str | Path, *, columns: Mapping[str, str] | str | list[str] | None = None,
                 values: Mapping[str, str] | str | list[str] | None = None,
                 constants: Mapping[str, str] | str | list[str] | None = None,
                 thresholds: tuple[float, float] | None = None,
                 wide: str | list[str] | None = None,
                 humans: str | list[str] | None = None) -> pd.DataFrame:
    """A table in any layout → tidy table, through a column map and a value map.

    Parameters
    ----------
    columns : tidy column → source column, e.g. ``{"verdict": "winner", "item_id": "question_id"}`` (or
        ``"verdict=winner,item_id=question_id"``). Columns already named as in the tidy schema need no entry; other
        source columns are kept as extra columns. Besides the tidy columns, a map may target the design columns
        the scale estimators read (:data:`DESIGN_COLUMNS`): ``criterion`` (part of the key: one row per criterion
        of a reply), ``role`` (``human`` for a human rater) and the declared scale ``scale_min``/``scale_max``/
        ``scale_step``/``scale_level``.
    values : source value → tidy verdict for ``verdict`` and ``gold``, e.g. ``{"model_a": "1", "model_b": "2",
        "tie": "tie"}``; matched after trimming spaces. A value mapped to ``""`` or ``NA`` becomes an NA verdict.
        Values already in the tidy vocabulary (``1``/``2``/``tie``/``pass``/``warn``/``fail``) pass unmapped.
    constants : tidy or design column → one value for every row, for columns the file lacks (e.g. ``judge=gpt-4``,
        ``scale_min=1``).
    thresholds : ``(fail_max, pass_min)``: a numeric ``score`` ≤ fail_max → ``fail``, ≥ pass_min → ``pass``,
        between → ``warn``, for the rows without a verdict (any score column, mapped with ``score=COLUMN``); the
        same cut turns a numeric ``gold_score`` into ``gold`` where the row has no gold.
    wide : source columns holding one judge's (or rater's) score each (``"gpt-4,claude,human_1"``): the table is
        reshaped to one row per (row, column), ``judge`` = the column's name, ``score`` = its value.
    humans : the judges that are human raters (``"rater_anna,rater_ben"``: ``wide`` columns or ``judge`` values):
        the column ``role`` is ``human`` on their rows and ``judge`` on the others — what the scale estimators
        (:func:`evallab.metrics.score_agreement`, :func:`~evallab.metrics.human_ceiling`) read as the humans.

    A numeric human score mapped to ``gold_score`` (``gold_score=COLUMN``) is kept as the Float64 extra column
    ``gold_score`` (the gold score beside the judges' scores), not dropped. A table with a ``score`` and no
    ``verdict`` column is a score table: ``verdict`` NA and ``error`` empty where the row has a score (a score
    without a verdict is not an error; ``error`` names the empty score column on a row without one), unless
    ``thresholds`` cut the scores into verdicts.

    Returns
    -------
    DataFrame
        The tidy verdict table; an empty source verdict is NA with ``error`` = ``empty verdict in column '...'``
        (unless the file maps its own ``error`` column).

    Raises
    ------
    ImportDataError
        Every message names the file. A map or constant for a column that is neither tidy nor a design column, a
        mapped column that is not in the file, a tidy column given twice, a verdict or gold value neither in the map
        nor in the tidy vocabulary (naming the row/line/entry, the column and the value), a human rater that is not
        a judge of the table, two rows that share the key and differ only in an unmapped column (named, with the
        ``--map criterion=COLUMN`` that makes it part of the key), and everything :func:`evallab.verdicts.coerce`
        refuses (duplicated key, unknown order ...).
    """
    try:
        cmap, vmap, consts = (parse_pairs(columns, "verdict=winner"), parse_pairs(values, "model_a=1,model_b=2"),
                              parse_pairs(constants, "judge=gpt-4"))
    except ImportDataError as e:
        raise ImportDataError(e.message, path, e.where, e.column) from None
    for k in list(cmap) + list(consts):
        if k not in TARGETS:
            raise ImportDataError(f"{k!r} is not a tidy or design column; expected one of {list(TARGETS)}", path,
                                  field=k)
    if thresholds is not None:
        try:
            lo, hi = (float(x) for x in thresholds)
        except (TypeError, ValueError):
            raise ImportDataError(f"thresholds {thresholds!r}: expected (fail_max, pass_min), e.g. (4, 7)", path,
                                  field="thresholds") from None
        if not lo < hi:
            raise ImportDataError(f"thresholds {thresholds!r}: expected (fail_max, pass_min) with fail_max < "
                                  "pass_min", path, field="thresholds")
        thresholds = (lo, hi)
    wide_cols = parse_list(wide)
    human_names = parse_list(humans)
    both = sorted(set(cmap) & set(consts))
    if both:
        raise ImportDataError(f"{both[0]!r} is both mapped from a column and set to a constant; expected one", path,
                              field=both[0])
    if human_names and "role" in [*cmap, *consts]:
        raise ImportDataError("the humans are named and 'role' is mapped or set as well; expected one of them",
                              path, field="role")
    p = check_file(path, EXPECTED)
    scored = thresholds is not None or wide_cols or GOLD_SCORE in cmap or human_names
    design = any(k not in V.SCHEMA for k in [*cmap, *consts])  # design columns: the pandas path carries them
    if p.suffix.lower() in (".csv", ".tsv", ".parquet") and not scored and not design:
        fast = _fast_table(p, cmap, vmap, consts)
        if fast is not None:
            return fast
    df, unit = read_any_table(path)
    if wide_cols:
        df = _melt(df, wide_cols, p)
    missing = [src for src in cmap.values() if src not in df.columns]
    if missing:
        tidy = next(k for k, v in cmap.items() if v == missing[0])
        raise ImportDataError(f"column {missing[0]!r} (mapped to {tidy}) is not in the file; its columns are "
                              f"{[x for x in df.columns if x != _SRC_ROW][:30]}", p, field=missing[0])
    clash = [k for k in cmap if k in df.columns and cmap[k] != k]
    df = df.drop(columns=clash)
    df = df.rename(columns={v: k for k, v in cmap.items()})
    for k, v in consts.items():
        df[k] = v
    source_verdicts = "verdict" in df.columns
    df = _scores(df, thresholds, p, unit, cmap)
    for c in V.REQUIRED:
        if c not in df.columns:
            raise ImportDataError(f"no {c!r} column; map one with --map {c}=COLUMN (columns: "
                                  f"{[x for x in df.columns if x != _SRC_ROW][:30]}) or set one with --set "
                                  f"{c}=VALUE", p, field=c)
    if human_names:
        df = _mark_humans(df, human_names, p)
    src_name = {k: cmap.get(k, k) for k in ("verdict", "gold")}
    to_na = [k for k, v in vmap.items() if v.strip().lower() in ("", "na", "nan", "none", "null")]
    na_by_map = None
    for c in ("verdict", "gold"):
        if c not in df.columns:
            continue
        raw = df[c].astype("string").str.strip()
        mapped = raw
        if vmap:
            mapped = raw.map(vmap).astype("string").fillna(raw.where(~raw.isin(list(vmap))))
        norm = V._norm_verdict(mapped)
        bad = norm.notna() & ~norm.isin(V.VERDICTS)
        if bad.any():
            i = int(bad.to_numpy().nonzero()[0][0])
            line = f" (file line {i + 2})" if unit == "row" and p.suffix.lower() in (".csv", ".tsv") else ""
            exp = (f"a key of the value map {sorted(vmap)} or " if vmap else "") + f"one of {list(V.VERDICTS)}"
            raise ImportDataError(f"unknown {c} value {fileio.quote(df[c].iloc[i])}; expected {exp}", p,
                                  f"{unit} {i + 1}{line}", src_name[c])
        if c == "verdict":
            na_by_map = raw.isin(to_na).fillna(False)
        df[c] = norm
    reason = pd.Series(pd.NA, index=df.index, dtype="string")
    if source_verdicts or thresholds:
        src = src_name["verdict"]
        reason = reason.mask(df["verdict"].isna(), f"no verdict (empty or NA) in column '{src}'")
        reason = reason.mask(na_by_map, f"the value map sends this '{src}' value to NA")
    else:  # a score table: a score without a verdict is what it holds; only a row without a score says why
        reason = reason.mask(df["verdict"].isna() & df["score"].isna(),
                             f"no score (empty or NA) in column '{cmap.get('score', 'score')}'")
    df["error"] = df["error"].astype("string").fillna(reason) if "error" in df.columns else reason
    src_rows = df.pop(_SRC_ROW).to_numpy() if _SRC_ROW in df.columns else None
    try:
        return V.coerce(df, path=str(p))
    except VerdictTableError as e:
        hint = _duplicate_hint(df, e, src_rows, cmap)
        if hint is None:
            raise
        raise ImportDataError(hint[0], p, hint[1], hint[2]) from None


def _mark_humans(df: pd.DataFrame, names: list[str], p: Path) -> pd.DataFrame:
    """``role`` = ``human`` on the rows of the judges ``names``, ``judge`` on the others; a name that is no judge of
    the table is refused, naming the judges it has."""
    judges = df["judge"].astype("string").str.strip()
    have = list(dict.fromkeys(judges.dropna().tolist()))
    unknown = [h for h in names if h not in have]
    if unknown:
        raise ImportDataError(f"human rater {unknown[0]!r} is not a judge of the table; expected the --wide columns "
                              f"or judge values, one of {have[:30]}", p, field="humans")
    if "role" in df.columns:
        raise ImportDataError("the file has a 'role' column and the humans are named as well; expected one of them "
                              "(drop --humans, or rename the column)", p, field="role")
    role = pd.Series(np.where(judges.isin(names).to_numpy(dtype=bool, na_value=False), "human", "judge"),
                     index=df.index, dtype="string")
    return df.assign(role=role)


#: extra columns never suggested as the missing design column
_NOT_DESIGN = {GOLD_SCORE, *DESIGN_COLUMNS, "source_format", "source_file"}


def _looks_like_samples(df: pd.DataFrame, column: str, key: list[str]) -> bool:
    """Whether ``column`` looks like the index of repeated draws (a sample number): whole numbers from 0 (or 1) up
    to at most the largest number of rows sharing one key (item, judge …), distinct within each key, so the same
    few values repeat from one (item, judge) to the next."""
    v = pd.to_numeric(df[column], errors="coerce")
    if v.isna().any() or not len(v) or not (v == v.round()).all() or v.min() < 0:
        return False
    k = df[key].astype("string").fillna("\0")
    most = int(k.value_counts().max())
    return v.max() <= most and v.nunique() <= most and not k.assign(_v=v.to_numpy()).duplicated().any()


def _duplicate_hint(df: pd.DataFrame, exc: Exception, src_rows, cmap: dict) -> tuple[str, str, str] | None:
    """For a duplicated key (:func:`evallab.verdicts.validate`'s error on ``df``): ``(message, where, column)``
    naming the unmapped column(s) in which the two rows differ — the likely design column — or ``None``."""
    if not str(getattr(exc, "message", "")).startswith("duplicated key") or not getattr(exc, "row", None):
        return None
    at = int(exc.row) - 1
    key = [c for c in V.key_of(df) if c in df.columns]
    if not 0 <= at < len(df) or not key:
        return None
    k = df[key].astype("string").fillna("\0")
    same = (k == k.iloc[at]).all(axis=1).to_numpy()
    first = int(same.nonzero()[0][0])
    if first == at:
        return None
    extra = [c for c in df.columns if c not in V.SCHEMA and c not in _NOT_DESIGN]
    a, b = df.iloc[first], df.iloc[at]
    differ = [c for c in extra if not (pd.isna(a[c]) and pd.isna(b[c])) and
              (pd.isna(a[c]) or pd.isna(b[c]) or str(a[c]) != str(b[c]))]
    if not differ:
        return None
    r1, r2 = (int(src_rows[first]), int(src_rows[at])) if src_rows is not None else (first + 1, at + 1)
    judge = f" (judge {str(b['judge'])!r}, item_id {str(b['item_id'])!r})"
    cols = ", ".join(repr(c) for c in differ)
    what = f"column {cols}" if len(differ) == 1 else f"columns {cols}"
    if "criterion" in df.columns:
        fix = (f"the key's design column 'criterion' (from {cmap.get('criterion', 'criterion')!r}) does not tell them "
               f"apart; combine {differ[0]!r} into it")
    elif "sample" in df.columns:  # samples are mapped already: only a design column can tell the rows apart
        fix = f"map it as a design column if the rows answer different questions, e.g. --map criterion={differ[0]}"
    elif _looks_like_samples(df, differ[0], key):
        fix = (f"its values look like sample numbers repeating within each (item, judge): map it as the sample "
               f"column if the rows are repeated draws (--map sample={differ[0]}), or as a design column if they "
               f"answer different questions (e.g. --map criterion={differ[0]})")
    else:
        fix = (f"map it as a design column if the rows answer different questions (e.g. --map "
               f"criterion={differ[0]}), or as the sample column if they are repeated draws of one judge "
               f"(--map sample={differ[0]})")
    return (f"duplicated key: rows {r1} and {r2}{judge} differ only in {what}, which is not part of the key; {fix}",
            f"row {r2}", differ[0])


# ---------------------------------------------------------------------------------------------------------------
# The fast path (CSV/TSV/Parquet): Arrow columns end to end, the tidy checks done in Arrow; when a check fails the
# pandas path above runs instead and raises the canonical message (evallab.verdicts.coerce's).

_NA_WORDS = ("", "na", "nan", "none", "null")
_STRING_COLS = [c for c, t in V.SCHEMA.items() if t == "string"]


def _norm_one(v: str | None, vmap: dict[str, str]) -> str | None:
    """One distinct source value → tidy verdict (None = NA), exactly as the pandas path does it."""
    if v is None:
        return None
    v = v.strip()
    if vmap and v in vmap:
        v = vmap[v]
    v = v.strip().lower()
    if v in _NA_WORDS:
        return None
    return {"1.0": "1", "2.0": "2"}.get(v, v)


def _const(value, n: int, typ):
    """``n`` copies of ``value`` as an Arrow array, built from buffers (no per-row work)."""
    import numpy as np
    import pyarrow as pa

    if typ != pa.string():
        return pa.array(np.full(n, value), type=typ)
    return V.constant_strings(value, n)


def _has_duplicate_key(out: dict, constant: set, n: int) -> bool:
    """Whether two rows share the tidy key (``constant``: columns known to hold one value)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    varying = []
    for k in V.KEY:
        a = out[k]
        if k in constant or (k not in ("item_id",) and a.null_count == 0 and (lambda m: m["min"] == m["max"])(
                pc.min_max(a).as_py())):
            continue
        varying.append(k)
    if not varying:
        return n > 1
    # integer codes per varying key column (item_id by sorting, the others by dictionary encoding), combined into
    # one int64 per row; the key is unique when the combined codes are
    import numpy as np

    codes, total = None, 1
    for k in varying:
        col = out[k].combine_chunks() if isinstance(out[k], pa.ChunkedArray) else out[k]
        if k == "item_id":
            order = pc.sort_indices(col)
            srt = col.take(order)
            new = np.ones(n, dtype=bool)
            new[1:] = pc.not_equal(srt.slice(1), srt.slice(0, n - 1)).to_numpy(zero_copy_only=False)
            if new.all():
                return False  # every item_id differs: so does every key
            c = np.empty(n, dtype=np.int64)
            c[order.to_numpy()] = np.cumsum(new) - 1
            card = int(new.sum())
        else:
            d = col.dictionary_encode()
            c = d.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            card = len(d.dictionary)
        if total * max(card, 1) >= 2**62:
            return True  # too many combinations for one int64: let the pandas path check
        codes = c if codes is None else codes * card + c
        total *= max(card, 1)
    codes.sort()
    return bool((codes[1:] == codes[:-1]).any())


def _fast_table(p: Path, cmap: dict, vmap: dict, consts: dict) -> pd.DataFrame | None:
    import pyarrow as pa
    import pyarrow.compute as pc
    suffix = p.suffix.lower()
    if suffix == ".parquet":
        tbl = fileio.read_parquet_arrow(p, ImportDataError)
        unit, line_of, pdf = "row", None, None
    else:
        # pandas' C reader (the fastest here) after the reader's checks; "" is the only NA marker, as in the
        # pandas path
        df = fileio.read_csv_typed(p, "\t" if suffix == ".tsv" else ",", ImportDataError)
        if df is None:
            return None  # the pandas path names the problem
        for c in _STRING_COLS:
            src = cmap.get(c, c)
            if src in df.columns and not isinstance(df[src].dtype, pd.StringDtype):
                if not pd.api.types.is_integer_dtype(df[src].dtype):
                    return None  # floats, booleans, mixed objects: the pandas path reads them as text
                df[src] = df[src].astype("string")
        try:
            tbl = pa.Table.from_pandas(df, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return None
        unit, line_of, pdf = "row", 2, df
    names = tbl.column_names
    missing = [src for src in cmap.values() if src not in names]
    if missing:
        tidy = next(k for k, v in cmap.items() if v == missing[0])
        raise ImportDataError(f"column {missing[0]!r} (mapped to {tidy}) is not in the file; its columns are "
                              f"{names[:30]}", p, field=missing[0])
    n = tbl.num_rows
    if n == 0:
        return None
    used = set(cmap.values())
    cols: dict = {}
    extra: dict = {}
    for name in names:
        if name in used:
            continue
        if name in V.SCHEMA and name not in cmap:
            cols[name] = tbl[name]
        elif name not in V.SCHEMA:
            extra[name] = tbl[name]
    for tidy, src in cmap.items():
        cols[tidy] = tbl[src]
    for k, v in consts.items():
        cols[k] = _const(v, n, pa.string())  # cast to the tidy type below
    if any(c not in cols for c in V.REQUIRED):
        return None
    out: dict = {}
    constant = set(consts)

    def typed(c: str):
        """The tidy column ``c`` as an Arrow array of its type; ``None``: a value the pandas path names."""
        t = V.SCHEMA[c]
        if c not in cols:
            default = V.DEFAULTS.get(c)
            typ = {"string": pa.string(), "Int64": pa.int64(), "Float64": pa.float64()}[t]
            constant.add(c)
            return _const(default, n, typ) if default is not None else pa.nulls(n, typ)
        a = cols[c]
        if t == "string":
            a = a.cast(pa.string())
            if c in ("item_id", "judge"):
                empty = pc.or_kleene(pc.or_kleene(pc.is_null(a), pc.equal(pc.utf8_length(a), 0)),
                                     pc.utf8_is_space(a))
                if pc.any(empty).as_py():
                    return None
            if c == "order":
                a = pc.utf8_lower(pc.utf8_trim_whitespace(pc.fill_null(a, "")))
                if not pc.all(pc.is_in(a, value_set=pa.array(list(V.ORDERS)))).as_py():
                    return None
            elif c in V.DEFAULTS:
                a = pc.fill_null(a, V.DEFAULTS[c])
        elif t == "Int64":
            a = a.cast(pa.int64())
            if c == "sample":
                a = pc.fill_null(a, 0)
                if pc.any(pc.less(a, 0)).as_py():
                    return None
        else:
            a = a.cast(pa.float64())
            if pc.any(pc.is_inf(a)).as_py():
                return None  # the pandas path names the row
        return a

    arrow_errors = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError)
    try:
        for c in V.KEY:  # the key columns first: their uniqueness is checked in a thread meanwhile
            out[c] = typed(c)
            if out[c] is None:
                return None
    except arrow_errors:
        return None  # a value the pandas path names
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:  # Arrow's kernels release the GIL: the sort runs alongside
        duplicated = pool.submit(_has_duplicate_key, dict(out), set(constant), n)
        src_name = {k: cmap.get(k, k) for k in ("verdict", "gold")}
        na_by_map = None
        for c in ("verdict", "gold"):
            if c not in cols:
                continue
            arr = cols[c].cast(pa.string())
            if isinstance(arr, pa.ChunkedArray):
                arr = arr.chunk(0) if arr.num_chunks == 1 else arr.combine_chunks()
            longest = max([len(k) for k in vmap] + [V._LABEL_MAX])
            lengths = pc.utf8_length(arr)
            if (pc.max(lengths).as_py() or 0) > longest:  # refused as written, never copied whole into Python
                i = pc.index(pc.greater(lengths, longest), True).as_py()
                start = pc.utf8_slice_codeunits(arr.slice(i, 1), 0, fileio.QUOTE_LIMIT + 1)[0].as_py()
                line = f" (file line {i + line_of})" if line_of else ""
                exp = (f"a key of the value map {sorted(vmap)} or " if vmap else "") + f"one of {list(V.VERDICTS)}"
                raise ImportDataError(f"unknown {c} value {fileio.quote(start, length=lengths[i].as_py())}; expected "
                                      f"{exp}", p, f"{unit} {i + 1}{line}", src_name[c])
            enc = pc.dictionary_encode(arr)  # one hash pass: the distinct values and each row's code
            distinct = enc.dictionary.to_pylist()
            norm = [_norm_one(v, vmap) for v in distinct]
            bad = [d for d, v in zip(distinct, norm, strict=True) if v is not None and v not in V.VERDICTS]
            if bad:
                i = min(pc.index(arr, b).as_py() for b in bad)
                line = f" (file line {i + line_of})" if line_of else ""
                exp = (f"a key of the value map {sorted(vmap)} or " if vmap else "") + f"one of {list(V.VERDICTS)}"
                raise ImportDataError(f"unknown {c} value {fileio.quote(arr[i].as_py())}; expected {exp}", p,
                                      f"{unit} {i + 1}{line}", src_name[c])
            cols[c] = pc.take(pa.array(norm, type=pa.string()), enc.indices)
            if c == "verdict":
                to_na = [d for d in distinct if d is not None and vmap and d.strip() in vmap
                         and _norm_one(d, vmap) is None]
                na_by_map = pc.is_in(arr, value_set=pa.array(to_na, type=pa.string())) if to_na else None
        verdict_na = pc.is_null(cols["verdict"])
        src = src_name["verdict"]
        reason = pc.if_else(verdict_na, pa.scalar(f"no verdict (empty or NA) in column '{src}'"),
                            pa.scalar(None, pa.string()))
        if na_by_map is not None:
            reason = pc.if_else(na_by_map, pa.scalar(f"the value map sends this '{src}' value to NA"), reason)
        cols["error"] = pc.coalesce(cols["error"].cast(pa.string()), reason) if "error" in cols else reason
        try:
            for c in V.SCHEMA:
                if c in out:
                    continue
                out[c] = typed(c)
                if out[c] is None:
                    return None
        except arrow_errors:
            return None  # a value the pandas path names (e.g. a non-numeric score)
        if duplicated.result():
            return None
    # numeric columns the file lacks: built as pandas arrays at once (an Arrow round trip copies each of them)
    import numpy as np

    direct = {}
    for c in [c for c in constant if V.SCHEMA[c] in ("Int64", "Float64") and c not in cols]:
        default = V.DEFAULTS.get(c)
        if V.SCHEMA[c] == "Int64":
            direct[c] = pd.arrays.IntegerArray(np.full(n, default or 0, dtype=np.int64),
                                               np.full(n, default is None, dtype=bool))
        else:
            direct[c] = pd.arrays.FloatingArray(np.full(n, default if default is not None else 0.0),
                                                np.full(n, default is None, dtype=bool))
        del out[c]
    table = pa.table(out if pdf is not None else {**out, **extra})

    def mapper(t):
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return pd.StringDtype()
        if pa.types.is_integer(t):
            return pd.Int64Dtype()
        if pa.types.is_floating(t):
            return pd.Float64Dtype()
        return None

    tidy = table.to_pandas(types_mapper=mapper)
    order = [*V.SCHEMA, *(c for c in tidy.columns if c not in V.SCHEMA)]
    got = {c: (direct[c] if c in direct else tidy[c]) for c in order}
    if pdf is None:
        return pd.DataFrame(got, copy=False)
    # extra columns exactly as pandas read them (no round trip through Arrow)
    return pd.DataFrame({**got, **{c: pdf[c] for c in extra}}, copy=False)
