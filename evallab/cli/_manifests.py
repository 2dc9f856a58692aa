"""``evallab manifests eval|bootstrap`` — aeon assertion manifests (:func:`evallab.skills.eval_outputs`,
:func:`evallab.skills.bootstrap_outputs`)."""

# ruff: noqa: B008  (typer declares options as argument defaults)
from __future__ import annotations

from pathlib import Path

import typer

manifests_app = typer.Typer(add_completion=False, rich_markup_mode=None, no_args_is_help=True,
                            help="aeon-style assertion manifests: evaluate outputs, bootstrap a starter manifest.")


@manifests_app.command("eval")
def manifests_eval(
    manifest: Path = typer.Argument(..., help="manifest (YAML or JSON)"),
    outputs: Path = typer.Option(..., "--outputs", help="folder: <skill>/<run files> or <skill>.md"),
    state: Path = typer.Option(Path("evals-state.json"), "--state", help="regression state file"),
    skill: str | None = typer.Option(None, "--skill", help="evaluate one skill"),
) -> None:
    """Evaluate each skill's latest output against its manifest, update regression states; exit 1 on any
    failing or unevaluable assertion."""
    from evallab.skills import eval_outputs

    run = eval_outputs(manifest, outputs, state_path=state, skill=skill)
    for w in run.lint:
        typer.echo(f"warning: {w}", err=True)
    typer.echo(run.summary())
    if run.results["passed"].ne(True).any():
        raise typer.Exit(1)


@manifests_app.command("bootstrap")
def manifests_bootstrap(
    outputs: Path = typer.Argument(..., help="folder of outputs: <skill>/<run files> or <skill>.md"),
    skill: str = typer.Option(..., "--skill", help="the skill to bootstrap"),
    runs: int = typer.Option(5, "--runs", min=1, help="last N successful outputs"),
) -> None:
    """Print a starter manifest from the skill's last successful outputs (never saved: review, then save)."""
    from evallab.skills import bootstrap_outputs

    typer.echo(bootstrap_outputs(outputs, skill, runs=runs), nl=False)


def register(app: typer.Typer) -> None:
    """Attach the ``manifests`` group."""
    app.add_typer(manifests_app, name="manifests")
