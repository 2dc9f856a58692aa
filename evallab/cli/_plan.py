"""``evallab plan gold|drift|accuracy|samples`` — the power planner (:mod:`evallab.metrics._power`: one function per
command).

Each command prints the plan and the formula's source; a value out of range stops with one line (exit 2, from
:func:`evallab.cli.main`).
"""

# ruff: noqa: B008  (typer declares options as argument defaults)
from __future__ import annotations

import math

import typer


def _power():
    """The planner module, imported when a command runs (it loads scipy.stats: ~1 s that every other `evallab`
    command, and every process that imports the command line, would pay)."""
    from evallab.metrics import _power as power

    return power


def _n(x) -> str:
    return "not reachable" if isinstance(x, float) and math.isnan(x) else f"{int(x):,}"


def register(app: typer.Typer) -> None:
    """Attach the ``plan`` group to the ``evallab`` app."""
    plan = typer.Typer(no_args_is_help=True, help="Plan the next round: gold labels, items or samples needed.")
    app.add_typer(plan, name="plan")

    @plan.command("gold")
    def gold(
        half_width: float = typer.Option(..., help="Target half-width of the 95% interval, a proportion (0.03 = ±3 "
                                                   "points)"),
        rate: float = typer.Option(0.5, help="Expected pass or win rate (0.5 = the worst case)"),
        sensitivity: float | None = typer.Option(None, help="The judge's measured P(pass | gold pass)"),
        specificity: float | None = typer.Option(None, help="The judge's measured P(fail | gold fail)"),
        correlation: float | None = typer.Option(None, help="Instead of Se/Sp: the judge's correlation with gold"),
        items: int | None = typer.Option(None, help="Items the judge grades in all [default: unlimited]"),
        confidence: float = typer.Option(0.95, help="Interval level"),
    ) -> None:
        """Gold labels needed for a target half-width, without and with the judge (PPI++)."""
        r = _power().gold_for_half_width(half_width, rate=rate, sensitivity=sensitivity, specificity=specificity,
                                      correlation=correlation, items=items, confidence=confidence)
        typer.echo(f"gold labels for ±{half_width:g} at {confidence:.0%}, rate {rate:g}:")
        typer.echo(f"  gold labels only:              {_n(r['gold_only'])}")
        typer.echo(f"  with the judge (PPI++, ρ={r['correlation']:.3f}): {_n(r['with_judge'])}"
                   + (f"  ({r['saving']:.0%} fewer)" if not math.isnan(r["saving"]) else ""))
        typer.echo("  sources: normal-approximation interval; PPI++ variance at the optimal λ (Angelopoulos, Duchi & "
                   "Zrnic 2023)")

    @plan.command("drift")
    def drift(
        flip_rate: float = typer.Option(..., help="The flip rate to detect (share of verdicts that change)"),
        tolerance: float = typer.Option(0.05, help="The gate's tolerance (MeowKit rule 6: 0.05)"),
        alpha: float = typer.Option(0.05, help="Level of the one-sided test"),
        target_power: float = typer.Option(0.8, "--power", help="Power wanted"),
    ) -> None:
        """Items needed for the drift gate to flag a given flip rate."""
        r = _power().items_for_flip_rate(flip_rate, tolerance, alpha=alpha, power=target_power)
        typer.echo(f"items to flag a flip rate of {flip_rate:g} against {tolerance:g} (one-sided, alpha {alpha:g}): "
                   f"{r['items']:,} (exact binomial power {r['power']:.3f}; normal approximation "
                   f"{r['normal_approximation']:,})")
        typer.echo("  source: Fleiss, Levin & Paik (2003) §2.5 for the start; exact binomial power")

    @plan.command("accuracy")
    def accuracy(
        delta: float = typer.Option(..., help="Accuracy change to detect (0.05 = 5 points)"),
        discordance: float = typer.Option(..., help="Share of items one judge gets right and the other wrong"),
        alpha: float = typer.Option(0.05, help="Level of McNemar's two-sided test"),
        target_power: float = typer.Option(0.8, "--power", help="Power wanted"),
    ) -> None:
        """Items (judged by both judges) needed to detect an accuracy change with McNemar's test."""
        r = _power().items_for_accuracy_change(delta, discordance, alpha=alpha, power=target_power)
        typer.echo(f"items to detect an accuracy change of {delta:g} with {discordance:g} discordant: {r['items']:,} "
                   f"(exact power {r['power']:.3f}; Connor 1987: {r['normal_approximation']:,})")

    @plan.command("samples")
    def samples(
        flip_rate: float = typer.Option(..., help="Measured repetition flip rate (share of sample pairs that "
                                                  "differ)"),
        target: float = typer.Option(0.95, help="Wanted probability that a repeat gives the same majority"),
    ) -> None:
        """Samples per item needed for a stable majority verdict."""
        r = _power().samples_for_stable_majority(flip_rate, target=target)
        typer.echo(f"samples per item for a reproducible majority (≥ {target:g}) at flip rate {flip_rate:g}: "
                   f"{_n(r['samples'])}" + (f" (stability {r['stability']:.3f}; one sample: "
                                            f"{r['single_sample_stability']:.3f})" if not math.isnan(r['samples'])
                                            else ""))

