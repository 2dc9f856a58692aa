"""``evallab label ITEMS --out labels.csv --annotator NAME``: a local, blind labelling page.

Serves :func:`evallab.judges._labelling.serve` on 127.0.0.1 and prints the page's URL (it carries the one-time
token; requests without it are refused); opens it in the browser unless ``--no-browser``. Ctrl-C stops it; every
label is already on disk, and running the command again resumes where the annotator stopped.
"""

# ruff: noqa: B008  (typer declares options as argument defaults)
from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Attach ``label`` to the ``evallab`` app."""

    @app.command("label")
    def label(
        items: Path = typer.Argument(..., help="Items table (CSV, JSONL, Parquet): pairwise (instruction, output_1, "
                                               "output_2) or pointwise (answer, rubric)"),
        out: Path = typer.Option(..., "--out", "-o", help="Labels file (CSV) to append to; resumed if it exists"),
        annotator: str = typer.Option(..., help="The annotator's name (one row per label carries it)"),
        scale: int = typer.Option(None, help="Rate pointwise items 1..K instead of pass/warn/fail (2 <= K <= 9)"),
        port: int = typer.Option(0, help="Port on 127.0.0.1 (0: any free port)"),
        no_browser: bool = typer.Option(False, "--no-browser", help="Print the URL only; do not open a browser"),
    ) -> None:
        """Label items by hand in a local, blind page (pairwise, pass/warn/fail or 1-K; keyboard shortcuts)."""
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
