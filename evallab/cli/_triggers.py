"""``evallab triggers score|tune|scout CATALOG ...`` — the lexical trigger scorer from the command line
(:func:`evallab.skills.score_query`, :func:`evallab.skills.tune_catalog`, :func:`evallab.skills.scout`).

CATALOG is a JSONL file (one SKILL.md frontmatter object per line) or a bundled short name: ``keryx``,
``meowkit``, ``sickn33``.
"""

from __future__ import annotations

import json

import typer

triggers_app = typer.Typer(add_completion=False, rich_markup_mode=None, no_args_is_help=True,
                           help="Lexical trigger scorer: rank skills for a prompt, tune thresholds, scout.")


@triggers_app.command("score")
def score_cmd(
    catalog: str = typer.Argument(..., help="Catalog JSONL path or keryx|meowkit|sickn33"),
    query: str = typer.Argument(..., help="A live prompt (scored as typed)"),
    top: int = typer.Option(5, min=1, help="Rows to show"),
    scorer: str = typer.Option("keryx", help="keryx | tfidf | bm25"),
    field: str = typer.Option("full", help="full | description-only"),
    strip: bool = typer.Option(True, "--strip/--no-strip", help="Strip exclusion clauses from entries"),
    skill: str = typer.Option("", help="Also report whether QUERY selects this skill id"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table"),
) -> None:
    """Rank the catalog's skills for QUERY (score, then id)."""
    from evallab.skills import score_query

    r = score_query(query, catalog, skill=skill, top=top, scorer=scorer, field=field, strip_exclusions=strip)
    c = r.selection
    sel = None if c is None else {"skill_id": skill, "selected": c.selected, "score": c.score, "rank": c.rank,
                                  "outranked_by": c.outranked_by}
    if as_json:
        typer.echo(json.dumps({"query": query, "matches": r.matches.to_dict(orient="records"), "selection": sel},
                              indent=2))
        return
    typer.echo(r.matches.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if sel:
        typer.echo(f"{skill}: {'selected' if sel['selected'] else 'not selected'} (score {sel['score']:.3f}, "
                   f"rank {sel['rank']}" + (f", outranked by {sel['outranked_by']}" if sel["outranked_by"] else "")
                   + ")")


@triggers_app.command("tune")
def tune_cmd(
    catalog: str = typer.Argument(..., help="Catalog JSONL path or keryx|meowkit|sickn33"),
    scorer: str = typer.Option("keryx", help="keryx | tfidf | bm25"),
    strip: bool = typer.Option(True, "--strip/--no-strip", help="Strip exclusion clauses from entries"),
    target: str = typer.Option("select,support,use", help="Thresholds to tune, comma-separated: select,support,use"),
    n_resamples: int = typer.Option(200, min=0, help="Bootstrap resamples over probes (0: none)"),
    folds: int = typer.Option(5, min=2, help="GroupKFold folds over probes (grouped by skill)"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables"),
) -> None:
    """Leave-one-out trigger accuracy (trigger probes only) and the thresholds maximising F1 / balanced accuracy /
    MCC / recall at zero FP (plain accuracy beside its base rate), tuned on the trigger probes."""
    from evallab.skills import tune_catalog

    res = tune_catalog(catalog, scorer=scorer, strip_exclusions=strip,
                       targets=[x.strip() for x in target.split(",") if x.strip()], n_resamples=n_resamples,
                       folds=folds)
    tab = res.thresholds
    if as_json:
        typer.echo(json.dumps({**res.summary, "thresholds": tab.to_dict(orient="records")}, indent=2, default=float))
        return
    for k, v in res.summary.items():
        typer.echo(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}")
    cols = ["target", "objective", "threshold", "threshold_low", "threshold_high", "value", "fp", "cv_threshold",
            "cv_value", "select_nothing_value", "keryx_threshold", "keryx_value", "keryx_fp"]
    typer.echo(tab[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for r in tab[tab["note"] != ""].itertuples():
        typer.echo(f"{r.target} / {r.objective}: {r.note}")


@triggers_app.command("scout")
def scout_cmd(
    catalog: str = typer.Argument(..., help="Catalog JSONL path or keryx|meowkit|sickn33"),
    description: str = typer.Argument(..., help="The draft skill's description (stripped like an entry)"),
    use: float = typer.Option(0.55, help="Use-as-is threshold"),
    fork: float = typer.Option(0.30, help="Fork threshold"),
    top: int = typer.Option(5, min=1, help="Matches to show"),
    scorer: str = typer.Option("keryx", help="keryx | tfidf | bm25"),
    strip: bool = typer.Option(True, "--strip/--no-strip", help="Strip exclusion clauses (entries and query)"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON"),
) -> None:
    """Before creating a skill: use an existing one, fork it, or create a new one?"""
    from evallab.skills import load_catalog, scout

    r = scout(description, load_catalog(catalog), use=use, fork=fork, top=top, scorer=scorer, strip_exclusions=strip)
    if as_json:
        typer.echo(json.dumps({"decision": r.decision, "use": use, "fork": fork,
                               "matches": r.matches.to_dict(orient="records")}, indent=2))
        return
    typer.echo(f"decision: {r.decision} (use ≥ {use}, fork ≥ {fork})")
    typer.echo(r.matches.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


def register(app: typer.Typer) -> None:
    """Attach ``triggers``."""
    app.add_typer(triggers_app, name="triggers")
