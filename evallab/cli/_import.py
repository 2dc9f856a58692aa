"""``evallab import PATH... [--format NAME] --out TABLE`` — judge-verdict files → one tidy verdict table
(:func:`evallab.importers.import_files`).

Prints each file's format and rows, the gold attached, then the table in a few lines
(:func:`evallab.verdicts.summary_lines`: rows, verdict counts, the NA (unparsed) count with its reasons; for a score
table the count of scores, which are not NA). Exit status
0 on success, 2 on bad input (one line from :func:`evallab.cli.main`, no traceback).
"""

# ruff: noqa: B008  (typer declares options as argument defaults)
from __future__ import annotations

from pathlib import Path

import typer

from evallab.errors import EvallabError


def _thresholds(value: str | None):
    if not value:
        return None
    try:
        lo, hi = (float(x) for x in value.split(","))
    except ValueError:
        raise EvallabError(f"--thresholds {value!r}: expected FAIL_MAX,PASS_MIN, e.g. 4,7") from None
    return lo, hi


def import_cmd(
    paths: list[Path] = typer.Argument(..., help="Judge-verdict file(s), all of one format"),
    out: Path = typer.Option(..., help="Tidy table to write (.csv / .jsonl / .parquet)"),
    format: str | None = typer.Option(None, "--format",
                                      help="mt_bench_pair | mt_bench_single | mt_bench_human | alpaca_eval | "
                                           "arena_hard | inspect | promptfoo | judgebench | labels | "
                                           "position_bias_analyzer | table "
                                           "[default: detected from the content]"),
    map_: list[str] = typer.Option([], "--map", help="table: TIDY=SOURCE column map, repeatable or "
                                                     "comma-separated, e.g. verdict=winner,item_id=qid; also the "
                                                     "design columns criterion, role, scale_min, scale_max, "
                                                     "scale_step, scale_level"),
    values: list[str] = typer.Option([], help="table: SOURCE=VERDICT value map, e.g. "
                                              "model_a=1,model_b=2,tie=tie"),
    set_: list[str] = typer.Option([], "--set", help="table: TIDY=VALUE for every row, e.g. judge=gpt-4"),
    thresholds: str | None = typer.Option(None, help="mt_bench_single and table: FAIL_MAX,PASS_MIN cut-offs "
                                                     "(e.g. 4,7) turning any numeric score (and a gold_score) "
                                                     "into verdicts"),
    questions: Path | None = typer.Option(None, help="mt_bench_single: FastChat's question.jsonl joined to the "
                                                     "ratings (columns category, turn_text) [default: "
                                                     "question.jsonl beside the file or in its parent folder]"),
    wide: list[str] = typer.Option([], help="table: source columns holding one judge's or rater's score each "
                                            "(comma-separated or repeated): one row per (row, column), judge = "
                                            "the column"),
    humans: list[str] = typer.Option([], help="table: the judges that are human raters (the --wide columns or "
                                              "judge values, comma-separated or repeated): role=human on their "
                                              "rows, role=judge on the others (read by the scale estimators)"),
    scorer: list[str] = typer.Option([], help="inspect: scorer(s) to import [default: all in the log]"),
    assertion_type: list[str] = typer.Option([], help="promptfoo: assertion type(s) to import [default: "
                                                      "the model-graded ones]"),
    baseline: str | None = typer.Option(None, help="arena_hard, position_bias_analyzer: the baseline model's name "
                                                   "(output 1)"),
    item_id: str | None = typer.Option(None, help="alpaca_eval: instruction (default) | pair"),
    gold: Path | None = typer.Option(None, help="Attach gold: MT-Bench human judgments (one label per item "
                                                "by --gold-rule) or a table with item_id and gold columns"),
    gold_rule: str = typer.Option("majority", help="majority | unanimous (for several annotators)"),
) -> None:
    """Import judge-verdict files (MT-Bench, AlpacaEval, Arena-Hard, inspect, promptfoo, JudgeBench,
    Position-Bias-Analyzer, any table) into one tidy verdict table."""
    from evallab.importers import import_files
    from evallab.verdicts import summary_lines

    opts: dict = {}
    if map_ or values or set_ or wide or humans:  # the table importer's maps (the format is then "table" unless named)
        opts.update(columns=map_ or None, values=values or None, constants=set_ or None)
    if wide:
        opts["wide"] = wide
    if humans:
        opts["humans"] = humans
    for key, value in (("thresholds", _thresholds(thresholds)), ("scorers", scorer), ("types", assertion_type),
                       ("baseline", baseline), ("item_id", item_id), ("questions", questions)):
        if value:
            opts[key] = value
    res = import_files(paths, format, out=out, gold=gold, gold_rule=gold_rule, **opts)
    for path, fmt, rows in res.files:
        typer.echo(f"{path}: {fmt}, {rows} rows")
    if res.gold is not None and res.gold.summary:
        s = res.gold.summary
        typer.echo(f"gold ({gold_rule}) from {gold}: {s['items']} items, {s['with_gold']} with gold, "
                   f"{s['no_majority']} without ({'no majority' if gold_rule == 'majority' else 'not unanimous'}), "
                   f"{s['unanimous_pct']:.1f}% of {s['multi_label']} multi-annotator items unanimous")
    for line in summary_lines(res.table):
        typer.echo(line)
    typer.echo(f"wrote {out}")


def register(app: typer.Typer) -> None:
    """Attach ``import``."""
    app.command("import")(import_cmd)
