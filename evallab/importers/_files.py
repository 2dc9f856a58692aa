"""Format detection, one file → the tidy table, several files → one table with gold (``evallab import``), and gold
from a file: :func:`detect_format`, :func:`import_file`, :func:`import_files`, :func:`load_gold` (see
:mod:`evallab.importers`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from evallab import verdicts as V
from evallab.importers._alpaca_eval import import_alpaca_eval
from evallab.importers._common import ZIP_MAGIC, ImportDataError, check_file, read_json
from evallab.importers._gold import Gold, attach_gold
from evallab.importers._inspect_ai import import_inspect_log
from evallab.importers._labels import read_labels
from evallab.importers._mt_bench import (
    import_mt_bench_human,
    import_mt_bench_pair,
    import_mt_bench_single,
    mt_bench_human_gold,
)
from evallab.importers._pairwise_labels import import_arena_hard, import_judgebench
from evallab.importers._position_bias_analyzer import import_position_bias_analyzer
from evallab.importers._promptfoo import import_promptfoo
from evallab.importers._table import import_table, read_any_table

FORMATS: dict[str, Callable[..., pd.DataFrame]] = {
    "mt_bench_pair": import_mt_bench_pair,
    "mt_bench_single": import_mt_bench_single,
    "mt_bench_human": import_mt_bench_human,
    "alpaca_eval": import_alpaca_eval,
    "arena_hard": import_arena_hard,
    "inspect": import_inspect_log,
    "promptfoo": import_promptfoo,
    "judgebench": import_judgebench,
    "labels": read_labels,
    "position_bias_analyzer": import_position_bias_analyzer,
    "table": import_table,
}

TABLE_SUFFIXES = (".csv", ".tsv", ".parquet")


def _detect_record(o: dict | None) -> str | None:
    if not isinstance(o, dict):
        return None
    k = set(o)
    if {"item_id", "annotator", "action", "labelled_at"} <= k:  # written by evallab label
        return "labels"
    if {"item_id", "judge", "verdict"} <= k:  # already tidy (e.g. written by evallab import)
        return "table"
    if {"g1_winner", "g2_winner"} <= k:
        return "mt_bench_pair"
    if "games" in k and ("question_id" in k or "uid" in k):
        return "arena_hard"
    if {"judgments", "pair_id"} <= k or {"judgments", "response_A", "response_B"} <= k:
        return "judgebench"
    if {"model_a", "model_b", "winner"} <= k:
        return "mt_bench_human"
    if {"question_id", "model", "score", "judge"} <= k:
        return "mt_bench_single"
    if {"instruction", "preference"} <= k and ("output_1" in k or "generator_1" in k):
        return "alpaca_eval"
    return None


def _table_columns(p: Path) -> set[str]:
    """The header of a CSV/TSV (first line) or the schema of a Parquet file, without reading the rows."""
    if p.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        from evallab import _fileio as fileio

        try:
            schema = pq.read_schema(p)
        except Exception as exc:  # pyarrow raises several types
            raise ImportDataError(f"not a readable Parquet file ({str(exc).splitlines()[0][:120]})", p) from None
        fileio.check_flat_schema(schema, p, ImportDataError)
        return set(schema.names)
    import csv

    from evallab import _fileio as fileio

    encoding = fileio.sniff_encoding(p, ImportDataError)  # UTF-16 read as such; without a mark, refused
    with p.open("r", encoding="utf-16" if encoding == "utf-16" else "utf-8-sig", errors="replace",
                newline="") as fh:
        header = next(csv.reader(fh, delimiter="\t" if p.suffix.lower() == ".tsv" else ","), [])
    fileio.check_header(header, p, ImportDataError)
    return {h.strip() for h in header}


def detect_format(path: str | Path) -> str:
    """The format name of a file, from its content (the extension only separates tables from JSON).

    Raises
    ------
    ImportDataError
        The file is not a regular file, or its content matches no known format (naming what was seen).
    """
    p = check_file(path, "a judge-verdict file")
    with p.open("rb") as fh:
        magic = fh.read(4)
    if magic == ZIP_MAGIC:
        return "inspect"
    if p.suffix.lower() in TABLE_SUFFIXES:
        cols = _table_columns(p)
        if {"cmp_index", "A", "B", "evaluating_guidance", "task"} <= cols:
            return "position_bias_analyzer"
        fmt = _detect_record(dict.fromkeys(cols))
        if fmt in ("mt_bench_human", "table", "labels"):
            return fmt
        from evallab._fileio import quote

        raise ImportDataError(f"columns [{', '.join(quote(c, 40) for c in sorted(cols)[:20])}] match no known layout; expected the tidy columns "
                              "(item_id, judge, verdict) or --format table with --map/--values", p)
    doc = read_json(p, "a judge-verdict JSON / JSON-lines file")
    v = doc.value
    if doc.kind == "json" and isinstance(v, dict):
        if "eval" in v and ("samples" in v or "results" in v) and isinstance(v.get("eval"), dict):
            return "inspect"
        if isinstance(v.get("results"), dict) and isinstance(v["results"].get("results"), list):
            return "promptfoo"
    fmt = _detect_record(doc.first_object())
    if fmt is None:
        first = doc.first_object()
        seen = sorted(first)[:15] if isinstance(first, dict) else type(v).__name__
        raise ImportDataError(f"content matches no known format (first record's fields: {seen}); expected one of "
                              f"{list(FORMATS)} — name it with --format", p)
    return fmt


def import_file(path: str | Path, format: str | None = None, **options) -> pd.DataFrame:  # noqa: A002
    """Import one judge-verdict file into the tidy verdict table.

    Parameters
    ----------
    path : the file.
    format : one of :data:`FORMATS`; ``None`` = detected from the content (:func:`detect_format`).
    **options : passed to the format's function (e.g. ``thresholds=`` for ``mt_bench_single``, ``columns=`` /
        ``values=`` / ``constants=`` for ``table``, ``scorers=`` for ``inspect``, ``baseline=`` for
        ``arena_hard``).

    Returns
    -------
    DataFrame
        The tidy verdict table (validated), with the format's extra columns and ``source_format``.

    Raises
    ------
    ImportDataError
        Unknown format or option, and every error of the format's function (one line naming file, place, field
        and what was expected).
    """
    if format is None:
        format = detect_format(path)  # noqa: A001
    fn = FORMATS.get(format)
    if fn is None:
        raise ImportDataError(f"unknown format {format!r}; expected one of {list(FORMATS)}", path, field="format")
    import inspect as _inspect

    params = _inspect.signature(fn).parameters
    unknown = [k for k in options if k not in params]
    if unknown:
        allowed = [k for k in params if k != "path"]
        raise ImportDataError(f"option(s) {unknown} do not apply to format {format!r}; it takes {allowed}", path,
                              field=unknown[0])
    df = fn(path, **options)
    df["source_format"] = pd.Series(format, index=df.index, dtype="string")
    V.warn_snapshots(df, source=str(path))  # one judge label, several model snapshots: said, never pooled silently
    return df


def load_gold(path: str | Path, *, rule: str = "majority") -> Gold:
    """Gold labels from a file: MT-Bench human judgments (one label per item by ``rule``,
    :func:`mt_bench_human_gold`) or any table with ``item_id`` and ``gold`` columns (:func:`read_any_table`).

    Parameters
    ----------
    path : str or Path
        The file; its format is detected from the content (:func:`detect_format`).
    rule : {"majority", "unanimous"}, default "majority"
        How several annotators' labels make one gold label (MT-Bench human judgments only).

    Returns
    -------
    Gold
        ``(table, summary)``; for a plain table the summary is empty (``{}``).

    Raises
    ------
    ImportDataError
        A file that cannot be read, or an unknown rule.
    """
    try:
        fmt = detect_format(path)
    except ImportDataError:  # no judge-verdict layout: a plain table of gold labels
        fmt = None
    if fmt == "mt_bench_human":
        return mt_bench_human_gold(path, rule=rule)
    table, _ = read_any_table(path)
    return Gold(table, {})


@dataclass
class ImportResult:
    """What :func:`import_files` imported.

    Attributes
    ----------
    table : DataFrame
        The tidy verdict table of every file, with a ``source_file`` column (the file a row came from).
    files : list of (str, str, int)
        Each file with its format and its number of rows, in the order given.
    gold : Gold or None
        The gold attached (:func:`load_gold`), ``None`` when none was.
    """

    table: pd.DataFrame
    files: list[tuple[str, str, int]] = field(default_factory=list)
    gold: Gold | None = None


def import_files(paths: Sequence[str | Path], format: str | None = None, *,  # noqa: A002
                 out: str | Path | None = None, gold: str | Path | None = None, gold_rule: str = "majority",
                 **options) -> ImportResult:
    """Import judge-verdict files of one format into one tidy verdict table (``evallab import``).

    Parameters
    ----------
    paths : sequence of str or Path
        The files (:func:`import_file` each).
    format : str, optional
        One of :data:`FORMATS`; ``None``: detected per file from its content. Mapping options (``columns``,
        ``values``, ``constants``, ``wide``, ``humans``) imply ``table``.
    out : str or Path, optional
        Write the table here (``.csv``, ``.jsonl`` or ``.parquet``, :func:`evallab.datasets.write_table`); its
        extension is checked before any file is read.
    gold : str or Path, optional
        Attach gold labels from this file (:func:`load_gold`, :func:`attach_gold`).
    gold_rule : {"majority", "unanimous"}, default "majority"
        How several annotators' labels make one gold label.
    **options
        Passed to every file's importer (see :func:`import_file`).

    Returns
    -------
    ImportResult
        The table, the files with their format and row count, and the gold attached.

    Raises
    ------
    ImportDataError, VerdictTableError, DataError
        Every error of :func:`import_file` (one line naming file, place and field); a reply found in two files
        (both places named, :func:`evallab.verdicts.concat`); an output type that cannot be written.
    """
    from evallab.datasets._generic import check_output_path, write_table

    if out is not None:
        check_output_path(out)
    if format is None and any(options.get(k) for k in ("columns", "values", "constants", "wide", "humans")):
        format = "table"  # noqa: A001
    tables, files = [], []
    for p in paths:
        fmt = format or detect_format(p)
        df = import_file(p, fmt, **options)
        files.append((str(p), fmt, len(df)))
        tables.append(df.assign(source_file=str(p)))
    df = V.concat(tables)
    g = None
    if gold is not None:
        g = load_gold(gold, rule=gold_rule)
        df = attach_gold(df, g.table)
    if out is not None:
        write_table(df, out)
    return ImportResult(df, files, g)
