"""Any table (CSV / TSV / JSON lines / JSON array / Parquet) with a column map and a value map → tidy table."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from evallab import verdicts as V
from evallab.importers._common import BOM, ImportDataError, check_file, read_json

SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet")
EXPECTED = "a table: .csv/.tsv (header row), .jsonl/.ndjson (one object per line), .json (array of objects), .parquet"


def read_any_table(path: str | Path) -> tuple[pd.DataFrame, str]:
    """Read a table as strings where the format allows; returns ``(frame, unit)`` (``unit``: how a data row is named
    in errors: ``row`` for CSV/Parquet, ``line`` for JSON lines, ``entry`` for a JSON array).

    CSV/TSV are read with pandas' pyarrow engine (all columns as text; a UTF-8 byte-order mark is skipped).

    Raises
    ------
    ImportDataError
        Not a regular file, empty, an unknown extension, not UTF-8, a malformed CSV or Parquet file, a JSON value
        that is not an array of objects.
    """
    p = check_file(path, EXPECTED)
    suffix = p.suffix.lower()
    if suffix not in SUFFIXES:
        raise ImportDataError(f"unknown file type {suffix!r}; expected {EXPECTED}", p)
    if suffix == ".parquet":
        try:
            return pd.read_parquet(p), "row"
        except Exception as exc:  # pyarrow raises several types
            raise ImportDataError(f"not a readable Parquet file ({str(exc).splitlines()[0]})", p) from None
    if suffix in (".csv", ".tsv"):
        return _read_csv(p, "\t" if suffix == ".tsv" else ","), "row"
    doc = read_json(p, EXPECTED)
    if doc.kind == "json" and not isinstance(doc.value, list):
        raise ImportDataError("is a single JSON value, not an array of objects; expected " + EXPECTED, p)
    records = [o for _, o in doc.objects(EXPECTED)]
    return pd.DataFrame.from_records(records), ("line" if doc.kind == "jsonl" else "entry")


def _read_csv(p: Path, sep: str) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    with p.open("rb") as fh:
        head = fh.read(len(BOM))
    try:
        tbl = pacsv.read_csv(p, read_options=pacsv.ReadOptions(skip_rows=0, use_threads=True),
                             parse_options=pacsv.ParseOptions(delimiter=sep),
                             convert_options=pacsv.ConvertOptions(strings_can_be_null=True,
                                                                  null_values=[""],
                                                                  column_types=None, auto_dict_encode=False))
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        msg = str(exc).splitlines()[0]
        raise ImportDataError(f"not a well-formed CSV table ({msg}); expected UTF-8 text with a header row", p) \
            from None
    if head == BOM and tbl.column_names and tbl.column_names[0].startswith("\ufeff"):
        tbl = tbl.rename_columns([tbl.column_names[0][1:], *tbl.column_names[1:]])
    # every column as text: the map decides what the values mean
    cols = {}
    for name, col in zip(tbl.column_names, tbl.columns, strict=True):
        if not pa.types.is_string(col.type) and not pa.types.is_large_string(col.type):
            col = col.cast(pa.string())
        cols[name] = col
    return pa.table(cols).to_pandas(types_mapper=lambda t: pd.StringDtype() if pa.types.is_string(t)
                                    or pa.types.is_large_string(t) else None)


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
                 constants: Mapping[str, str] | str | list[str] | None = None) -> pd.DataFrame:
    """A table in any layout → tidy table, through a column map and a value map.

    Parameters
    ----------
    columns : tidy column → source column, e.g. ``{"verdict": "winner", "item_id": "question_id"}`` (or
        ``"verdict=winner,item_id=question_id"``). Columns already named as in the tidy schema need no entry; other
        source columns are kept as extra columns.
    values : source value → tidy verdict for ``verdict`` and ``gold``, e.g. ``{"model_a": "1", "model_b": "2",
        "tie": "tie"}``; matched after trimming spaces. A value mapped to ``""`` or ``NA`` becomes an NA verdict.
        Values already in the tidy vocabulary (``1``/``2``/``tie``/``pass``/``warn``/``fail``) pass unmapped.
    constants : tidy column → one value for every row, for columns the file lacks (e.g. ``judge=gpt-4``).

    Returns
    -------
    DataFrame
        The tidy verdict table; an empty source verdict is NA with ``error`` = ``empty verdict in column '...'``
        (unless the file maps its own ``error`` column).

    Raises
    ------
    ImportDataError
        A mapped column that is not in the file, a tidy column given twice, a verdict or gold value neither in the map
        nor in the tidy vocabulary (naming the row/line/entry, the column and the value), and everything
        :func:`evallab.verdicts.coerce` refuses (duplicated key, unknown order ...).
    """
    cmap, vmap, consts = (parse_pairs(columns, "verdict=winner"), parse_pairs(values, "model_a=1,model_b=2"),
                          parse_pairs(constants, "judge=gpt-4"))
    for k in list(cmap) + list(consts):
        if k not in V.SCHEMA:
            raise ImportDataError(f"{k!r} is not a tidy column; expected one of {list(V.COLUMNS)}", field=k)
    both = sorted(set(cmap) & set(consts))
    if both:
        raise ImportDataError(f"{both[0]!r} is both mapped from a column and set to a constant; expected one",
                              field=both[0])
    df, unit = read_any_table(path)
    p = Path(path)
    missing = [src for src in cmap.values() if src not in df.columns]
    if missing:
        tidy = next(k for k, v in cmap.items() if v == missing[0])
        raise ImportDataError(f"column {missing[0]!r} (mapped to {tidy}) is not in the file; its columns are "
                              f"{list(df.columns)[:30]}", p, field=missing[0])
    clash = [k for k in cmap if k in df.columns and cmap[k] != k]
    df = df.drop(columns=clash)
    df = df.rename(columns={v: k for k, v in cmap.items()})
    for k, v in consts.items():
        df[k] = v
    for c in V.REQUIRED:
        if c not in df.columns:
            raise ImportDataError(f"no {c!r} column; map one with --map {c}=COLUMN (columns: "
                                  f"{list(df.columns)[:30]}) or set one with --set {c}=VALUE", p, field=c)
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
            raise ImportDataError(f"unknown {c} value {df[c].iloc[i]!r}; expected {exp}", p,
                                  f"{unit} {i + 1}{line}", src_name[c])
        if c == "verdict":
            na_by_map = raw.isin(to_na).fillna(False)
        df[c] = norm
    src = src_name["verdict"]
    reason = pd.Series(pd.NA, index=df.index, dtype="string")
    reason = reason.mask(df["verdict"].isna(), f"no verdict (empty or NA) in column '{src}'")
    reason = reason.mask(na_by_map, f"the value map sends this '{src}' value to NA")
    df["error"] = df["error"].astype("string").fillna(reason) if "error" in df.columns else reason
    out = V.coerce(df, path=str(p))
    return out
