"""``evallab rubrics validate|verdict`` and ``evallab inflation run|table`` — rubric files and the anchor-set study
from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from evallab.errors import EvallabError

rubrics_app = typer.Typer(add_completion=False, rich_markup_mode=None, no_args_is_help=True,
                          help="MeowKit-style rubrics: validate files and presets, weighted verdict with hard-fail.")
inflation_app = typer.Typer(add_completion=False, rich_markup_mode=None, no_args_is_help=True,
                            help="Positive-bias inflation across anchor sets (PASS-only vs balanced ...).")


@rubrics_app.command("validate")
def validate_cmd(
    paths: Annotated[list[Path] | None, typer.Argument(
        help="Rubric/preset files or a library folder; none: the bundled one")] = None,
    rubrics_dir: Annotated[Path | None, typer.Option(
        help="Folder of the rubrics presets may name (default: the preset's grandparent folder)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of lines")] = False,
) -> None:
    """Check rubric files and presets against rubric-rules.md; exit 1 when any finding (file:line: [code/rule])."""
    from evallab import skills as R

    found: list = []
    for p in paths or [None]:
        if p is None or p.is_dir():
            found += [R.RubricFinding(**r) for r in R.validate_library(p).to_dict("records")]
        elif p.parent.name == "composition-presets" or "rubrics:" in p.read_text(encoding="utf-8")[:2000]:
            found += R.validate_preset(p, rubrics_dir)
        else:
            found += R.validate_rubric(p)
    if as_json:
        typer.echo(json.dumps([f.__dict__ for f in found], indent=2))
    else:
        for f in found:
            typer.echo(str(f))
        typer.echo(f"{len(found)} finding(s)", err=True)
    if found:
        raise typer.Exit(1)


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
    from evallab import skills as R
    from evallab.paths import data_dir

    lib = R.load_library(library, strict=False)
    pre = lib.presets.get(preset) or (R.parse_preset(preset) if Path(preset).is_file() else None)
    if pre is None:
        raise EvallabError(f"unknown preset {preset!r}; known: {sorted(lib.presets)} (or give a file)")
    found = R.validate_preset(pre.path, library or data_dir("meowkit") / "rubrics")
    if found:
        for f in found:
            typer.echo(str(f))
        typer.echo(f"{len(found)} finding(s) in preset {pre.path}; no verdict given", err=True)
        raise typer.Exit(1)
    given = {}
    for v in verdicts:
        name, sep, level = v.partition("=")
        if not sep:
            raise EvallabError(f"argument {v!r}: expected rubric=PASS|WARN|FAIL")
        given[name.strip()] = level.strip()
    res = R.preset_verdict(pre, given, lib.rubrics)
    typer.echo(res.table.to_string(index=False))
    typer.echo(f"{pre.name}: {res.verdict} (weighted score {res.score:.3f}"
               + (f"; hard fail: {', '.join(res.hard_failed)}" if res.hard_failed else "") + ")")


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
    from evallab.experiments import inflation as X
    from evallab.judges import make_judge
    from evallab.skills import check_mixed_k, is_mixed, load_calibration_items

    for v in variant or X.DEFAULT_VARIANTS:
        if is_mixed(v):
            check_mixed_k(k, v)  # before any judge is built or called
    judge = make_judge(judge_base_url, judge_model, judge_api_key_env, replay_dir=replay_dir)
    df = X.run_experiment(judge, load_calibration_items(keryx_dir), variant or X.DEFAULT_VARIANTS, samples=samples, k=k,
                          max_items=max_scenarios or None, record_dir=None if replay_dir else record_dir,
                          progress=True)
    _print_tables(df)


@inflation_app.command("table")
def table_cmd(verdicts: Annotated[Path, typer.Argument(help="A tidy verdict table with anchor_set (csv/jsonl/parquet)")],
              baseline: Annotated[str, typer.Option(help="Anchor set compared against")] = "balanced") -> None:
    """Inflation, false-pass rate, agreement and McNemar per anchor set of an existing verdict table."""
    from evallab.datasets import read_table

    _print_tables(read_table(verdicts), baseline)


def _print_tables(df, baseline: str = "balanced") -> None:
    from evallab.metrics import inflation as I

    t = I.inflation_table(df, baseline=baseline)
    cols = [c for c in ("judge", "anchor_set", "items", "unparsed", "pass_rate", "inflation", "inflation_low",
                        "inflation_high", "false_pass_rate", "agreement", "mcnemar_p") if c in t.columns]
    typer.echo(t[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if {"fail-last", baseline} <= set(df["anchor_set"]):
        p = I.position_priming(df, baseline=baseline)
        typer.echo(p.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


def register(app: typer.Typer) -> None:
    """Attach ``rubrics`` and ``inflation`` to the ``evallab`` command."""
    app.add_typer(rubrics_app, name="rubrics")
    app.add_typer(inflation_app, name="inflation")
