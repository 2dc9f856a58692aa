"""``evallab rubrics validate|verdict`` — MeowKit rubric files from the command line
(:func:`evallab.skills.validate_files`, :func:`evallab.skills.score_preset`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from evallab.errors import EvallabError

rubrics_app = typer.Typer(add_completion=False, rich_markup_mode=None, no_args_is_help=True,
                          help="MeowKit-style rubrics: validate files and presets, weighted verdict with hard-fail.")


@rubrics_app.command("validate")
def validate_cmd(
    paths: Annotated[list[Path] | None, typer.Argument(
        help="Rubric/preset files or a library folder; none: the bundled one")] = None,
    rubrics_dir: Annotated[Path | None, typer.Option(
        help="Folder of the rubrics presets may name (default: the preset's grandparent folder)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of lines")] = False,
) -> None:
    """Check rubric files and presets against rubric-rules.md; exit 1 when any finding (file:line: [code/rule])."""
    from evallab.skills import validate_files

    found = validate_files(paths, rubrics_dir=rubrics_dir)
    if as_json:
        typer.echo(json.dumps([f.__dict__ for f in found], indent=2))
    else:
        for f in found:
            typer.echo(str(f))
        typer.echo(f"{len(found)} finding(s)", err=True)
    if found:
        raise typer.Exit(1)


def _levels(verdicts: list[str]) -> dict[str, str]:
    """``rubric=LEVEL`` arguments → {rubric: LEVEL}."""
    given = {}
    for v in verdicts:
        name, sep, level = v.partition("=")
        if not sep:
            raise EvallabError(f"argument {v!r}: expected rubric=PASS|WARN|FAIL")
        given[name.strip()] = level.strip()
    return given


@rubrics_app.command("verdict")
def verdict_cmd(
    preset: Annotated[str, typer.Argument(help="Preset name in the library or a preset file")],
    verdicts: Annotated[list[str], typer.Argument(help="rubric=PASS|WARN|FAIL for every rubric of the preset")],
    library: Annotated[Path | None, typer.Option(
        help="Rubric library folder (default: bundled data/meowkit/rubrics)")] = None,
) -> None:
    """Weighted verdict of PRESET with hard-fail propagation (any rubric at/above its threshold fails the whole).

    The preset is validated first against the library's rubrics; any finding is printed and the exit code is 1.
    """
    from evallab.skills import score_preset

    res = score_preset(preset, _levels(verdicts), library=library)
    if res.verdict is None:
        for f in res.findings:
            typer.echo(str(f))
        typer.echo(f"{len(res.findings)} finding(s) in preset {res.preset.path}; no verdict given", err=True)
        raise typer.Exit(1)
    v = res.verdict
    typer.echo(v.table.to_string(index=False))
    typer.echo(f"{res.preset.name}: {v.verdict} (weighted score {v.score:.3f}"
               + (f"; hard fail: {', '.join(v.hard_failed)}" if v.hard_failed else "") + ")")


def register(app: typer.Typer) -> None:
    """Attach ``rubrics``."""
    app.add_typer(rubrics_app, name="rubrics")
