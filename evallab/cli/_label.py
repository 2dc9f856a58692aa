"""``evallab label ITEMS --out labels.csv --annotator NAME``: a local, blind labelling page; and
``evallab label ITEMS --select N [--strategy random|stratified|active] [--verdicts VERDICTS] --out selection.csv``:
which items to label (:func:`evallab.metrics.select_items`).

The page: serves :func:`evallab.judges._labelling.serve` on 127.0.0.1 and prints the page's URL (it carries the
one-time token; requests without it are refused); opens it in the browser unless ``--no-browser``. Ctrl-C stops it;
every label is already on disk, and running the command again resumes where the annotator stopped.

The selection: writes the chosen items (the items table's own columns, so the file is itself an items table for the
page, in a random labelling order) with their inclusion probability and weight, and prints the half-width each
strategy's interval is expected to give at N labels against random (:func:`evallab.metrics.selection_plan`).
"""

# ruff: noqa: B008  (typer declares options as argument defaults)
from __future__ import annotations

from pathlib import Path

import typer


def _select(items: Path, out: Path, n: int, strategy: str, seed: int, verdicts: Path | None,
            judge: str | None) -> None:
    """Draw the selection, write it and print the plan (:mod:`evallab.metrics._selection`)."""
    from evallab.datasets._generic import check_output_path, load_verdicts, read_table, write_table
    from evallab.errors import ArgumentError, DataError
    from evallab.metrics._selection import STRATEGIES, select_items, selection_plan

    if strategy not in STRATEGIES:
        raise ArgumentError(f"--strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    check_output_path(out)
    if out.exists():
        raise DataError("the file exists; expected a new file for the selection (it is drawn once, and the labels "
                        "are weighted by the probabilities it records)", path=str(out))
    table = read_table(items)
    if "item_id" not in table.columns:
        raise DataError("no item_id column; expected one id per item", path=str(items), column="item_id")
    ids = table["item_id"].astype(str)
    if ids.duplicated().any():
        dup = ids[ids.duplicated()]
        raise DataError(f"item_id {dup.iloc[0]!r} appears twice; expected one row per item", path=str(items),
                        column="item_id", row=int(dup.index[0]) + 1)
    source = table
    where = str(items)
    if verdicts is not None:
        source, where = load_verdicts(verdicts), str(verdicts)
    try:
        sel = select_items(source, n, strategy, seed=seed, judge=judge, items=list(ids))
        plan = selection_plan(source, n, judge=judge, items=list(ids)) if verdicts is not None or \
            "verdict" in table.columns else None
    except DataError as exc:  # a fault in the table: name its file
        if exc.path or not exc.column:
            raise
        raise DataError(exc.message, path=where, row=exc.row, column=exc.column) from None
    chosen = sel[sel["selected"]].sort_values("label_order")
    shown = table.assign(item_id=ids).drop(columns=[c for c in chosen.columns if c != "item_id" and c in table.columns])
    write_table(chosen.merge(shown, on="item_id", how="left"), out)
    N = len(sel)
    typer.echo(f"{len(chosen)} of {N} items chosen ({strategy}" + (f", {n} expected" if strategy == "active" else "")
               + f", seed {seed}) → {out}; label them all (a skipped item biases the weighted estimate): "
               f"evallab label {out} --out labels.csv --annotator NAME")
    if plan is None:
        typer.echo("expected interval: give --verdicts (the judge's verdict table) to compare the strategies")
        return
    typer.echo(f"expected 95% half-width at {n} labels (the judge's confidence taken as calibrated):")
    for r in plan.itertuples():
        hw = r.note if r.half_width != r.half_width else \
            f"±{100 * r.half_width:.1f} points  × random {r.ratio_to_random:.2f}"
        typer.echo(f"  {r.strategy:<10} {hw}  ({r.method})")


def register(app: typer.Typer) -> None:
    """Attach ``label`` to the ``evallab`` app."""

    @app.command("label")
    def label(
        items: Path = typer.Argument(..., help="Items table (CSV, JSONL, Parquet): pairwise (instruction, output_1, "
                                               "output_2) or pointwise (answer, rubric)"),
        out: Path = typer.Option(..., "--out", "-o", help="Labels file (CSV) to append to; resumed if it exists. "
                                                          "With --select: the selection file to write (new)"),
        annotator: str = typer.Option(None, help="The annotator's name (one row per label carries it); needed "
                                                 "unless --select"),
        scale: int = typer.Option(None, help="Rate pointwise items 1..K instead of pass/warn/fail (2 <= K <= 9)"),
        port: int = typer.Option(0, help="Port on 127.0.0.1 (0: any free port)"),
        no_browser: bool = typer.Option(False, "--no-browser", help="Print the URL only; do not open a browser"),
        select: int = typer.Option(None, "--select", help="Choose N items to label instead of serving the page: "
                                                          "writes them with their inclusion probabilities to --out"),
        strategy: str = typer.Option("random", help="With --select: random (default; every correction stays "
                                                    "valid), stratified (by the judge's verdict x confidence, "
                                                    "Neyman allocation) or active (Zrnic & Candes 2024: label where "
                                                    "the judge is least certain, inverse-probability weights)"),
        seed: int = typer.Option(0, help="With --select: seed of the draw"),
        verdicts: Path = typer.Option(None, help="With --select: the judge's tidy verdict table on these items "
                                                 "(needed for stratified and active; confidence from a confidence "
                                                 "column, verdict_logprob, or the share of agreeing samples)"),
        judge: str = typer.Option(None, help="With --select: the judge of --verdicts, when it holds several"),
    ) -> None:
        """Label items by hand in a local, blind page (pairwise, pass/warn/fail or 1-K; keyboard shortcuts), or
        choose which items to label next (--select N)."""
        from evallab.errors import ArgumentError

        if select is not None:
            _select(items, out, select, strategy, seed, verdicts, judge)
            return
        if annotator is None:
            raise ArgumentError("--annotator is missing; expected the annotator's name (or --select N to choose items)")
        import asyncio
        import contextlib

        from evallab.judges._labelling import serve

        def ready(url: str) -> None:
            typer.echo(f"labelling page for {annotator}: {url}", err=False)
            typer.echo("every label is written as given; Ctrl-C stops, running again resumes", err=True)
            if not no_browser:
                import webbrowser

                webbrowser.open(url)

        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve(items, out, annotator, scale=scale, port=port, on_ready=ready))
