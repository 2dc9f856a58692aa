"""``evallab init DIR`` — scaffold a study folder (:func:`evallab._scaffold.init_study`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def init(
    folder: Annotated[Path, typer.Argument(help="The study folder (created when missing)")] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Overwrite files that exist")] = False,
) -> None:
    """Start a study folder: reports.yaml, the notebooks, data/ for your tables, a README and .gitignore.

    `evallab report` in the folder then runs every report offline on the data bundled with evallab. Existing files
    are not overwritten (the command names them and writes nothing) unless --force is given.
    """
    from evallab._scaffold import init_study

    res = init_study(folder, force=force)
    for rel in res.overwritten:
        typer.echo(f"replaced {Path(folder) / rel}")
    typer.echo(f"wrote {len(res.written) + len(res.overwritten)} files in {folder}")
    typer.echo(f"next: cd {folder} && evallab report   (then open reports/index.html)")


def register(app: typer.Typer) -> None:
    """Attach ``init``."""
    app.command("init")(init)
