"""``evallab study plan FILE [--max-cost USD]`` — a judge study's design, calls, estimated tokens and cost before any
call (:func:`evallab.judges._study.plan_study`). Exit 2 with one line when the file is bad or the estimate passes
``--max-cost``; ``evallab study run FILE --out DIR`` runs it (:func:`evallab.judges._study.run_study`);
``evallab study report DIR`` compares its configurations (:func:`evallab.reporting.sections.study.configurations`)."""

# ruff: noqa: B008  (typer declares options as argument defaults)
from __future__ import annotations

from pathlib import Path

import typer


def _study_name(run_dir: Path) -> str:
    """The study's ``name`` from the study file's copy in ``run_dir`` (``evallab study run`` writes it), else the
    folder's name."""
    from evallab.judges._study import STUDY_COPY

    copy = run_dir / STUDY_COPY
    if copy.is_file():
        import yaml

        try:
            doc = yaml.safe_load(copy.read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            doc = {}
        if isinstance(doc, dict) and str(doc.get("name") or "").strip():
            return str(doc["name"]).strip()
    return run_dir.name


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
                   f"{','.join(s.orders) if p.attrs['kind'] == 'pairwise' else '-'}, {s.samples} sample(s)"
                   + "".join(f"; {j['name']}: {j['samples']} sample(s)" for j in s.judges if "samples" in j))
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
        from evallab.judges._study import load_study_file, run_study, unparsed_configurations
        from evallab.verdicts import summary_lines

        df = run_study(load_study_file(path), out, max_cost=max_cost, progress=True)
        total = df.attrs["plan"].iloc[-1]
        typer.echo(f"planned {int(total['calls'])} calls; got {len(df)} rows")
        for line in summary_lines(df):
            typer.echo(line)
        for line in unparsed_configurations(df):  # a whole configuration lost: said before the report is read
            typer.echo(line, err=True)
        typer.echo(f"wrote {out}/")

    @study.command("report")
    def report(run_dir: Path = typer.Argument(..., help="The folder `evallab study run --out` wrote"),
               out: Path = typer.Option(None, help="The HTML report [default: RUN_DIR/report.html]"),
               criterion: str = typer.Option("accuracy", help="Rank on: accuracy (= agreement), "
                                                              "position_consistency, stability, parse_rate"),
               confidence: float = typer.Option(0.95, help="Level of every interval"),
               resamples: int = typer.Option(1000, help="Item-bootstrap resamples")) -> None:
        """Per configuration: agreement with gold, position consistency, leniency, stability, parse rate and cost per
        verdict; configurations compared pairwise on the same items; the recommended one, or why none is."""
        from evallab.judges._study import load_study_run
        from evallab.reporting._tables import Finding
        from evallab.reporting.sections.study import _render_page, configurations

        sec = configurations(load_study_run(run_dir), criterion=criterion, confidence=confidence,
                             n_resamples=resamples)
        for x in sec.items:
            if isinstance(x, Finding):
                typer.echo(x.sentence)
        target = out or run_dir / "report.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_render_page(sec, f"Judge study: {_study_name(run_dir)}"), encoding="utf-8")
        for name in ("configurations", "comparisons"):
            sec.metrics[name].to_frame().to_csv(target.with_name(f"{target.stem}.{name}.csv"), index=False)
        typer.echo(f"wrote {target}")
