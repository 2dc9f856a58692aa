"""``evallab drift --baseline A --candidate B --tolerance 0.05`` (:func:`evallab.experiments.compare_files`)
and ``evallab drift-replay GOLD ...`` (:func:`evallab.experiments.calibration_drift`).

Exit status: 0 when the gate passes, 1 when it fails (a group or the whole table changes more than the tolerance
of its verdicts beyond chance, or nothing could be tested), 2 on bad input (one-line message from
:func:`evallab.cli.main`).
"""

# ruff: noqa: B008  (typer declares options as argument defaults)
from __future__ import annotations

from pathlib import Path

import typer

SHOW = ["group", "items", "replies", "changed", "flip_rate", "flip_rate_low", "flip_rate_high", "flip_p_adjusted",
        "status", "kappa", "baseline_accuracy", "candidate_accuracy", "delta_accuracy", "delta_low", "delta_high"]


def _parse_cols(values: list[str]) -> list[str]:
    out = []
    for v in values:
        out.extend(c.strip() for c in v.split(",") if c.strip())
    return out


def _print_report(rep, echo=typer.echo) -> None:
    import pandas as pd

    cols = [c for c in SHOW if c in rep.groups.columns]
    if not rep.overall["gold_replies"].iloc[0]:
        cols = [c for c in cols if "accuracy" not in c and c not in ("delta_low", "delta_high")]
    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_colwidth", 60,
                           "display.float_format", "{:.4f}".format):
        echo(rep.groups[cols].to_string(index=False))
    echo("")
    echo(rep.summary())


def register(app: typer.Typer) -> None:
    """Attach ``drift`` and ``drift-replay`` to the ``evallab`` app."""

    @app.command("drift")
    def drift_cmd(
        baseline: Path = typer.Option(..., help="Baseline judge's verdict table (.csv/.jsonl/.parquet, tidy schema)"),
        candidate: Path = typer.Option(..., help="Candidate judge's verdict table on the same requests"),
        tolerance: float = typer.Option(0.05, min=0.0, max=1.0,
                                        help="Largest allowed share of changed verdicts per group (MeowKit rule 6: "
                                             "0.05)"),
        alpha: float = typer.Option(0.05, min=0.0, max=1.0, help="Level of the one-sided test flip rate > tolerance"),
        adjust: str = typer.Option("holm", help="Multiplicity adjustment across groups: holm | bh | none"),
        by: list[str] = typer.Option([], help="Grouping column(s), repeatable or comma-separated "
                                              "[default: subset,strategy]"),
        match_on: list[str] = typer.Option([], help="Columns pairing replies [default: dataset, item_id, "
                                                    "strategy, anchor_set, order, sample]; drop strategy for a "
                                                    "prompt change"),
        n_resamples: int = typer.Option(1000, min=0, help="Bootstrap resamples over items for the intervals"),
        out: Path | None = typer.Option(None, help="Write the per-group table here (.csv/.jsonl/.parquet)"),
        moved: Path | None = typer.Option(None, help="Write the replies whose verdict changed here"),
    ) -> None:
        """Compare a candidate judge with a baseline on the same requests; exit 1 when the drift gate fails."""
        from evallab.datasets._generic import write_table
        from evallab.experiments import compare_files
        from evallab.metrics._drift import DEFAULT_BY, MATCH_ON

        rep = compare_files(baseline, candidate, by=_parse_cols(by) or list(DEFAULT_BY),
                            match_on=_parse_cols(match_on) or list(MATCH_ON), tolerance=tolerance, alpha=alpha,
                            adjust=adjust, n_resamples=n_resamples)
        _print_report(rep)
        if out is not None:
            typer.echo(f"wrote {write_table(rep.groups, out)}")
        if moved is not None:
            typer.echo(f"wrote {write_table(rep.moved(), moved)}")
        if not rep.passed:
            raise typer.Exit(1)

    @app.command("drift-replay")
    def replay_cmd(
        gold: Path = typer.Argument(..., help="Calibration set: JSONL, one item per line (see evallab.datasets.load_gold_set)"),
        base_url: str = typer.Option("", help="OpenAI-compatible endpoint of the NEW judge, e.g. http://host/v1"),
        model: str = typer.Option("", help="Model id of the new judge"),
        api_key_env: str = typer.Option("", help="NAME of the environment variable holding the API key"),
        replay_dir: Path | None = typer.Option(None, help="Answer from keryx-format recordings instead (offline)"),
        label: str = typer.Option("", help="Judge label in the verdict table [default: the model]"),
        baseline: Path | None = typer.Option(None, help="Recorded verdicts of the current judge on the same set "
                                                        "[default: the gold labels themselves]"),
        tolerance: float = typer.Option(0.05, min=0.0, max=1.0, help="Largest allowed move per group"),
        by: list[str] = typer.Option([], help="Grouping column(s) [default: subset,rubric]"),
        orders: str = typer.Option("ab,ba", help="Pairwise orders to ask"),
        samples: int = typer.Option(1, min=1, help="Repeats per request"),
        out: Path = typer.Option(Path("drift-replay.csv"), help="The new judge's verdicts (resumable)"),
        record: Path | None = typer.Option(None, help="Also write a keryx-format recording of the run"),
    ) -> None:
        """MeowKit rule 6: replay a calibration set through a new judge; exit 1 when the drift gate fails."""
        from evallab.experiments import calibration_drift
        from evallab.judges import make_judge

        judge = make_judge(base_url, model, api_key_env, label=label or None, replay_dir=replay_dir)
        _, rep = calibration_drift(
            judge, gold, baseline=baseline, tolerance=tolerance, by=_parse_cols(by) or ["subset", "rubric"],
            orders=[o for o in orders.split(",") if o], samples=samples, out=out, record=record, progress=True)
        _print_report(rep)
        typer.echo(f"wrote {out}")
        if not rep.passed:
            raise typer.Exit(1)
