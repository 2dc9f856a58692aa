"""``evallab study plan FILE [--max-cost USD]`` — a judge study's design, calls, estimated tokens and cost before any
call (:func:`evallab.judges._study.plan_study`). Exit 2 with one line when the file is bad or the estimate passes
``--max-cost``; ``evallab study run FILE --out DIR`` runs it (:func:`evallab.judges._study.run_study`)."""

# ruff: noqa: B008  (typer declares options as argument defaults)
from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Attach the ``study`` group to the ``evallab`` app."""
    study = typer.Typer(no_args_is_help=True, help="A judge study in one file: plan it before any call.")
    app.add_typer(study, name="study")

    @study.command("plan")
    def plan(path: Path = typer.Argument(..., help="The study file (YAML)"),
             max_cost: float | None = typer.Option(None, help="Stop when the estimated cost (USD) passes this")) -> None:
        """Print the design (judge × prompt × anchor set), the calls, the estimated tokens and cost."""
        from evallab.judges._study import CHARS_PER_TOKEN, load_study_file, plan_study

        s = load_study_file(path)
        p = plan_study(s, max_cost=max_cost)
        typer.echo(f"study {s.name}: {p.attrs['kind']}, {p.attrs['items']} items, orders "
                   f"{','.join(s.orders) if p.attrs['kind'] == 'pairwise' else '-'}, {s.samples} sample(s)")
        for r in p.itertuples():
            cost = "no price" if r.cost_usd_est != r.cost_usd_est else f"${r.cost_usd_est:.4f}"
            who = "TOTAL" if r.judge == "total" else f"{r.judge} | {r.prompt} | {r.anchor_set}"
            typer.echo(f"{who}: {r.calls} calls, ~{r.input_tokens_est:,} input + ≤{r.output_tokens_est:,} output "
                       f"tokens, {cost}")
        typer.echo(f"(tokens estimated: rendered prompt characters / {CHARS_PER_TOKEN}; output = max_tokens per call)")

    @study.command("run")
    def run(path: Path = typer.Argument(..., help="The study file (YAML)"),
            out: Path = typer.Option(..., help="Folder of the per-judge verdict tables (<judge>.jsonl)"),
            max_cost: float | None = typer.Option(None, help="Refuse to start when the estimated cost (USD) passes "
                                                             "this")) -> None:
        """Run the whole design (resumable, cached, one lock per output) after printing nothing but the totals."""
        from evallab.judges._study import load_study_file, run_study
        from evallab.verdicts import summary_lines

        df = run_study(load_study_file(path), out, max_cost=max_cost, progress=True)
        total = df.attrs["plan"].iloc[-1]
        typer.echo(f"planned {int(total['calls'])} calls; got {len(df)} rows")
        for line in summary_lines(df):
            typer.echo(line)
        typer.echo(f"wrote {out}/")
