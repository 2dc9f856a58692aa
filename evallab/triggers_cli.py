"""``evallab triggers score|tune|scout CATALOG ...`` — the lexical trigger scorer from the command line.

CATALOG is a JSONL file (one SKILL.md frontmatter object per line) or a bundled short name: ``keryx``,
``meowkit``, ``sickn33``.
"""

from __future__ import annotations

import json

import typer

from evallab.errors import EvallabError


def _load_catalog(name):
    """:func:`evallab.skills.load_catalog`, imported when a command runs (it loads pandas)."""
    from evallab.skills import load_catalog

    return load_catalog(name)

triggers_app = typer.Typer(add_completion=False, rich_markup_mode=None, no_args_is_help=True,
                           help="Lexical trigger scorer: rank skills for a prompt, tune thresholds, scout.")


def _check_scorer(scorer: str) -> None:
    from evallab.skills import SCORERS

    if scorer not in SCORERS:
        raise EvallabError(f"--scorer must be one of {', '.join(SCORERS)}; got {scorer!r}")


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
    from evallab import skills as T

    _check_scorer(scorer)
    cat = _load_catalog(catalog)
    r = T.rank(query, cat, scorer=scorer, field=field, strip_exclusions=strip, top=top)
    sel = None
    if skill:
        c = T.check_selected(query, skill, cat, field=field, scorer=scorer, strip_exclusions=strip)
        sel = {"skill_id": skill, "selected": c.selected, "score": c.score, "rank": c.rank,
               "outranked_by": c.outranked_by}
    if as_json:
        typer.echo(json.dumps({"query": query, "matches": r.to_dict(orient="records"), "selection": sel}, indent=2))
        return
    typer.echo(r.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
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
    from evallab import skills as T

    _check_scorer(scorer)
    cat = _load_catalog(catalog)
    probes = T.make_probes(cat)
    trig = T.make_probes(cat, source="triggers")
    if len(trig) == 0:
        raise EvallabError(f"{cat.path}: no skill has triggers; nothing to tune on (a 'Use when' probe is scored "
                           "against the description it was cut from, so it cannot test the router)")
    summary = T.loo_summary(T.leave_one_out(cat, probes, scorer=scorer, strip_exclusions=strip), n_resamples=0)
    pairs = T.pair_scores(cat, trig, scorer=scorer, strip_exclusions=strip)
    tables = []
    for t in [x.strip() for x in target.split(",") if x.strip()]:
        if t not in T.KERYX_THRESHOLDS:
            raise EvallabError(f"--target must be one of {', '.join(T.KERYX_THRESHOLDS)}; got {t!r}")
        tables.append(T.tune_thresholds(pairs, t, n_resamples=n_resamples, n_splits=folds).table)
    import pandas as pd

    tab = pd.concat(tables, ignore_index=True)
    kinds = summary.set_index("kind")
    head = {"catalog": cat.path, "skills": len(cat), "trigger_probes": len(trig),
            "loo_trigger_accuracy": float(kinds.loc["trigger", "accuracy"]),
            "description_probes": len(probes) - len(trig),
            "description_probes_selected": int(kinds.loc["use_when", "selected"]) if "use_when" in kinds.index
            else 0, "pairs": len(pairs), "positive_pairs": int(pairs["label"].sum())}
    if as_json:
        typer.echo(json.dumps({**head, "thresholds": tab.to_dict(orient="records")}, indent=2, default=float))
        return
    for k, v in head.items():
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
    from evallab import skills as T

    _check_scorer(scorer)
    r = T.scout(description, _load_catalog(catalog), use=use, fork=fork, top=top, scorer=scorer,
                strip_exclusions=strip)
    if as_json:
        typer.echo(json.dumps({"decision": r.decision, "use": use, "fork": fork,
                               "matches": r.matches.to_dict(orient="records")}, indent=2))
        return
    typer.echo(f"decision: {r.decision} (use ≥ {use}, fork ≥ {fork})")
    typer.echo(r.matches.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


def register(app: typer.Typer) -> None:
    """Attach ``triggers`` to the ``evallab`` command."""
    app.add_typer(triggers_app, name="triggers")
