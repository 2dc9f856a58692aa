"""``evallab inflation run|table`` — the anchor-set study from the command line
(:func:`evallab.experiments.run_experiment`, :func:`evallab.metrics._inflation.inflation_tables`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

inflation_app = typer.Typer(add_completion=False, rich_markup_mode=None, no_args_is_help=True,
                            help="Positive-bias inflation across anchor sets (PASS-only vs balanced ...).")


@inflation_app.command("run")
def run_cmd(
    judge_base_url: Annotated[str, typer.Option(help="OpenAI-compatible endpoint (…/v1)")] = "",
    judge_model: Annotated[str, typer.Option(help="Model id")] = "",
    judge_api_key_env: Annotated[str, typer.Option(
        help="NAME of the environment variable holding the API key")] = "",
    replay_dir: Annotated[Path | None, typer.Option(
        help="Replay a recorded run instead of calling a judge")] = None,
    record_dir: Annotated[Path | None, typer.Option(
        help="Record the run here (verdicts.jsonl + keryx recording)")] = None,
    variant: Annotated[list[str] | None, typer.Option(
        help="Anchor sets (repeatable; default balanced, pass-only, fail-last)")] = None,
    samples: Annotated[int, typer.Option(min=1)] = 1,
    k: Annotated[int, typer.Option(min=1, help="Anchors per set (even, >= 2, with any mixed variant)")] = 4,
    max_scenarios: Annotated[int, typer.Option(min=0, help="0: all 34 scenarios")] = 0,
    keryx_dir: Annotated[Path | None, typer.Option(
        help="Folder with stacks/*/skills/*/evals.json (default: bundled)")] = None,
) -> None:
    """Run the anchor-set experiment on the keryx calibration items and print the inflation table."""
    from evallab.experiments import run_experiment
    from evallab.experiments._inflation import DEFAULT_VARIANTS
    from evallab.judges import make_judge

    judge = make_judge(judge_base_url, judge_model, judge_api_key_env, replay_dir=replay_dir)
    df = run_experiment(judge, keryx_dir, variant or DEFAULT_VARIANTS, samples=samples, k=k,
                        max_items=max_scenarios or None, record_dir=None if replay_dir else record_dir,
                        progress=True)
    _print_tables(df)


@inflation_app.command("table")
def table_cmd(verdicts: Annotated[Path, typer.Argument(help="A tidy verdict table with anchor_set (csv/jsonl/parquet)")],
              baseline: Annotated[str, typer.Option(help="Anchor set compared against")] = "balanced") -> None:
    """Inflation, false-pass rate, agreement and McNemar per anchor set of an existing verdict table."""
    from evallab.datasets._generic import read_table

    _print_tables(read_table(verdicts), baseline)


def _print_tables(df, baseline: str = "balanced") -> None:
    from evallab.metrics._inflation import inflation_tables

    t, priming = inflation_tables(df, baseline=baseline)
    cols = [c for c in ("judge", "anchor_set", "items", "unparsed", "pass_rate", "inflation", "inflation_low",
                        "inflation_high", "false_pass_rate", "agreement", "mcnemar_p") if c in t.columns]
    typer.echo(t[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if priming is not None:
        typer.echo(priming.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


def register(app: typer.Typer) -> None:
    """Attach ``inflation``."""
    app.add_typer(inflation_app, name="inflation")
