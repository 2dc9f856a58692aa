"""CLI: ``evallab import PATH... [--format NAME] --out TABLE`` — judge-verdict files → one tidy verdict table.

Registered by :func:`evallab.cli._register` through :func:`register`. Prints the rows, the verdict counts and the
NA (unparsed) count with their reasons. Exit status 0 on success, 2 on bad input (one line from
:func:`evallab.cli.main`, no traceback).
"""

# ruff: noqa: B008  (typer declares options as argument defaults)
from __future__ import annotations

from pathlib import Path

import typer

from evallab.errors import EvallabError

OUT_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".parquet")


def write_table(df, path: Path) -> None:
    """Write a table by extension: ``.csv``, ``.jsonl``/``.ndjson`` or ``.parquet``."""
    suffix = path.suffix.lower()
    if suffix not in OUT_SUFFIXES:
        raise EvallabError(f"{path}: unknown output type {suffix!r}; expected .csv, .jsonl or .parquet")
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".parquet":
        df.to_parquet(path, index=False)
    elif suffix in (".jsonl", ".ndjson"):
        df.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        df.to_csv(path, index=False)


def summarize(df, echo=typer.echo) -> None:
    """Print rows, verdict counts (in the schema's order) and the NA count with its reasons."""
    from evallab import verdicts as V

    counts = df["verdict"].value_counts()
    na = int(df["verdict"].isna().sum())
    parts = [f"{v}={int(counts[v])}" for v in V.VERDICTS if v in counts.index]
    echo(f"rows: {len(df)}")
    echo(f"verdicts: {', '.join(parts) if parts else '(none)'}")
    echo(f"NA: {na}")
    if na:
        reasons = df.loc[df["verdict"].isna(), "error"].fillna("(no reason)").value_counts()
        for reason, n in reasons.head(10).items():
            echo(f"  {int(n):>7}  {reason}")
        if len(reasons) > 10:
            echo(f"  ... {len(reasons) - 10} more reasons")
    if "score" in df and df["score"].notna().any():
        echo(f"score: {int(df['score'].notna().sum())} numeric, {int(df['score'].isna().sum())} NA")
    if df["gold"].notna().any():
        echo(f"gold: {int(df['gold'].notna().sum())} rows with gold")


def _thresholds(value: str | None):
    if not value:
        return None
    try:
        lo, hi = (float(x) for x in value.split(","))
    except ValueError:
        raise EvallabError(f"--thresholds {value!r}: expected FAIL_MAX,PASS_MIN, e.g. 4,7") from None
    return lo, hi


def register(app: typer.Typer) -> None:
    """Attach ``import`` to the ``evallab`` app."""

    @app.command("import")
    def import_cmd(
        paths: list[Path] = typer.Argument(..., help="Judge-verdict file(s), all of one format"),
        out: Path = typer.Option(..., help="Tidy table to write (.csv / .jsonl / .parquet)"),
        format: str | None = typer.Option(None, "--format",
                                          help="mt_bench_pair | mt_bench_single | mt_bench_human | alpaca_eval | "
                                               "arena_hard | inspect | promptfoo | judgebench | table "
                                               "[default: detected from the content]"),
        map_: list[str] = typer.Option([], "--map", help="table: TIDY=SOURCE column map, repeatable or "
                                                         "comma-separated, e.g. verdict=winner,item_id=qid"),
        values: list[str] = typer.Option([], help="table: SOURCE=VERDICT value map, e.g. "
                                                  "model_a=1,model_b=2,tie=tie"),
        set_: list[str] = typer.Option([], "--set", help="table: TIDY=VALUE for every row, e.g. judge=gpt-4"),
        thresholds: str | None = typer.Option(None, help="mt_bench_single: FAIL_MAX,PASS_MIN rating cut-offs "
                                                         "(e.g. 4,7) to turn 1-10 ratings into verdicts"),
        scorer: list[str] = typer.Option([], help="inspect: scorer(s) to import [default: all in the log]"),
        assertion_type: list[str] = typer.Option([], help="promptfoo: assertion type(s) to import [default: "
                                                          "the model-graded ones]"),
        baseline: str | None = typer.Option(None, help="arena_hard: the baseline model's name (output 1)"),
        item_id: str | None = typer.Option(None, help="alpaca_eval: instruction (default) | pair"),
        gold: Path | None = typer.Option(None, help="Attach gold: MT-Bench human judgments (one label per item "
                                                    "by --gold-rule) or a table with item_id and gold columns"),
        gold_rule: str = typer.Option("majority", help="majority | unanimous (for several annotators)"),
    ) -> None:
        """Import judge-verdict files (MT-Bench, AlpacaEval, Arena-Hard, inspect, promptfoo, JudgeBench, any
        table) into one tidy verdict table."""
        import pandas as pd

        from evallab import importers as I
        from evallab.importers.common import finish

        opts: dict = {}
        if map_ or values or set_:
            opts.update(columns=map_ or None, values=values or None, constants=set_ or None)
            format = format or "table"  # noqa: A001
        if thresholds:
            opts["thresholds"] = _thresholds(thresholds)
        if scorer:
            opts["scorers"] = scorer
        if assertion_type:
            opts["types"] = assertion_type
        if baseline:
            opts["baseline"] = baseline
        if item_id:
            opts["item_id"] = item_id
        if out.suffix.lower() not in OUT_SUFFIXES:
            raise EvallabError(f"{out}: unknown output type {out.suffix!r}; expected .csv, .jsonl or .parquet")
        tables = []
        for p in paths:
            fmt = format or I.detect_format(p)
            df = I.import_file(p, fmt, **opts)
            typer.echo(f"{p}: {fmt}, {len(df)} rows")
            tables.append(df.assign(source_file=str(p)))
        if len(tables) == 1:
            df = tables[0]
        else:
            df = pd.concat(tables, ignore_index=True)
            refs = df["source_file"] + ": " + df.get("source_ref", pd.Series("", index=df.index)).fillna("")
            df = finish(df.assign(source_ref=refs), None)
        if gold is not None:
            df = _attach(df, gold, gold_rule)
        write_table(df, out)
        summarize(df)
        typer.echo(f"wrote {out}")


def _attach(df, gold: Path, rule: str):
    from evallab import importers as I

    fmt = I.detect_format(gold)
    if fmt == "mt_bench_human":
        g = I.mt_bench_human_gold(gold, rule=rule)
        s = g.summary
        typer.echo(f"gold ({rule}) from {gold}: {s['items']} items, {s['with_gold']} with gold, {s['no_majority']} "
                   f"without ({'no majority' if rule == 'majority' else 'not unanimous'}), "
                   f"{s['unanimous_pct']:.1f}% of {s['multi_label']} multi-annotator items unanimous")
        table = g.table
    else:
        table, _ = I.read_any_table(gold)
    return I.attach_gold(df, table)
