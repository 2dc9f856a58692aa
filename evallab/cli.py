"""The ``evallab`` command.

Subcommands are registered by the modules that own them (see ``_register``), so each concept keeps its CLI next
to its code.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from evallab.errors import EvallabError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="evallab: calibrate LLM judges (agreement, position bias, inflation, drift, gates).")


@app.callback()
def _main() -> None:
    """evallab: calibrate LLM judges. Run `evallab COMMAND --help` for a command's options."""


@app.command()
def report(
    config: Annotated[Path, typer.Option(help="The batch: reports.yaml")] = Path("reports.yaml"),
    out: Annotated[Path, typer.Option(help="Output folder for .ipynb/.html/.metrics.json/index.html")] = Path(
        "reports"),
    jobs: Annotated[int, typer.Option(min=1, help="Notebooks run at once (one kernel each)")] = 2,
    only: Annotated[list[str] | None, typer.Option(help="Run only these report names (repeatable)")] = None,
) -> None:
    """Run the papermill batch of calibration reports and write OUT/index.html."""
    from evallab.report import load_config, run_batch

    specs = load_config(config)
    names = [s.name for s in specs]
    if only:
        unknown = sorted(set(only) - {s.name for s in specs})
        if unknown:
            raise EvallabError(f"{config}: unknown report name(s) {unknown}; known: {[s.name for s in specs]}")
        specs = [s for s in specs if s.name in only]
    results = run_batch(specs, out, jobs=jobs, index_names=names)
    failed = [r for r in results if r.status != "ok"]
    for r in results:
        where = f" (cell {r.cell})" if r.cell is not None else ""
        line = f"{r.status:6s} {r.name} {r.seconds:6.1f}s" + (f"  {where} {r.error}" if r.error else "")
        typer.echo(line, err=r.status != "ok")
    typer.echo(f"wrote {Path(out) / 'index.html'}")
    if failed:
        raise typer.Exit(1)


def _register() -> None:
    """Attach the subcommands that live beside their modules (each module's ``register(app)``)."""
    from evallab import drift_cli, judges_cli, rubrics_cli, scenarios_cli, triggers_cli

    for mod in (judges_cli, scenarios_cli, triggers_cli, rubrics_cli, drift_cli):
        mod.register(app)
    __import__("evallab.import_cli", fromlist=["register"]).register(app)


_register()


def main() -> None:
    """Entry point: turns evallab's own errors into a one-line message and exit status 2 (no traceback)."""
    try:
        app(standalone_mode=True)
    except EvallabError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
