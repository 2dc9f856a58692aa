"""``evallab validate PATH...`` (:func:`evallab.experiments.validate_paths`) and ``evallab judge-check
EVALS ...`` (:func:`evallab.experiments.judge_check_path`)."""

# ruff: noqa: B008  (typer declares options as argument defaults)
from __future__ import annotations

from pathlib import Path

import typer


def validate(paths: list[Path] = typer.Argument(..., help="evals.json, recordings, eval reports, manifests, "
                                                           "evals-state.json, or folders of them")) -> None:
    """Validate scenario files, recordings, eval reports, manifests and state files; exit 1 on findings, 2 when an
    input cannot be read at all (missing, not UTF-8, not JSON/YAML, empty: one line each on stderr)."""
    from evallab.experiments import validate_paths

    lines = validate_paths(paths)
    unreadable = [line for line in lines if line.status == "unreadable"]
    checked = [line for line in lines if line.status != "unreadable"]
    for line in checked:
        typer.echo(str(line))
    if checked:
        typer.echo(f"{sum(line.failed for line in checked)} finding(s)")
    for line in unreadable:
        typer.echo(str(line), err=True)
    if unreadable:
        raise typer.Exit(2)
    if any(line.failed for line in checked):
        raise typer.Exit(1)


def judge_check(
    scenarios: Path = typer.Argument(..., help="a skill's evals.json, or a folder of stacks/*/skills/*/"),
    judge: str = typer.Option("", "--judge", help="judge base URL (OpenAI-compatible /v1)"),
    model: str = typer.Option("", "--model", help="judge model id"),
    api_key_env: str = typer.Option("", "--api-key-env", help="NAME of the env variable holding the key"),
    samples: int = typer.Option(3, "--samples", min=1, help="samples per canned answer"),
    record: Path | None = typer.Option(None, "--record", help="folder (or .json) to write the recording"),
    replay: Path | None = typer.Option(None, "--replay", help="answer from recordings instead of a live judge"),
) -> None:
    """Grade the eight canned anti-gaming answers of every judge scenario through a judge; exit 1 on any
    mismatch, non-unanimous or errored sample."""
    from evallab.experiments import judge_check_path
    from evallab.judges import make_judge

    j = make_judge(judge, model, api_key_env, replay_dir=str(replay) if replay else None)
    m = judge_check_path(scenarios, j, samples=samples, record=record, progress=False)
    for r in m.itertuples():
        typer.echo(f"{r.status:14s} {r.skill} {r.scenario}/{r.kind}: expected {r.expected}, observed "
                   f"{r.observed} ({r.samples} samples){'  ' + r.message if r.status != 'ok' else ''}")
    bad = int((m["status"] != "ok").sum())
    typer.echo(f"{bad} failing check(s) of {len(m)}" + (f"; recording in {record}" if record else ""))
    if bad:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Attach ``validate`` and ``judge-check``."""
    app.command("validate")(validate)
    app.command("judge-check")(judge_check)
