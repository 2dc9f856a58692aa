"""The trigger scorer applied to a whole catalog (``evallab triggers score|tune``): a prompt ranked against the
catalog with its selection check, and the catalog's leave-one-out accuracy with its thresholds tuned.

The scorer itself never reads files; these functions take a catalog or its file (a bundled short name: ``keryx``,
``meowkit``, ``sickn33``; :func:`evallab.skills.load_catalog`, looked up on the package when called).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evallab.errors import EvallabError
from evallab.skills._catalogs import Catalog, as_catalog
from evallab.skills._thresholds import KERYX_THRESHOLDS, pair_scores, tune_thresholds
from evallab.skills._trigger_index import SCORERS
from evallab.skills._trigger_loo import leave_one_out, loo_summary, make_probes
from evallab.skills._trigger_select import SelectionCheck, check_selected, rank

#: the thresholds :func:`tune_catalog` tunes by default
TARGETS = ("select", "support", "use")


def _catalog(catalog: Catalog | str | Path) -> Catalog:
    if isinstance(catalog, (str, Path)):
        from evallab import skills  # the public name, so that one patched there is the one used

        return skills.load_catalog(catalog)
    return as_catalog(catalog)


def _check_scorer(scorer: str) -> None:
    if scorer not in SCORERS:
        raise EvallabError(f"scorer must be one of {', '.join(SCORERS)}; got {scorer!r}")


@dataclass
class QueryScore:
    """What :func:`score_query` found.

    Attributes
    ----------
    matches : DataFrame
        The ranking (:func:`evallab.skills.rank`): ``rank``, ``skill_id``, ``category``, ``score``,
        ``shared``.
    selection : SelectionCheck or None
        Whether the query selects the skill asked about (:func:`evallab.skills.check_selected`);
        ``None`` when none was.
    """

    matches: pd.DataFrame
    selection: SelectionCheck | None = None


def score_query(query: str, catalog: Catalog | str | Path, *, skill: str = "", top: int | None = 5,
                scorer: str = "keryx", field: str = "full", strip_exclusions: bool = True) -> QueryScore:
    """Rank a catalog's skills for a live prompt (scored as typed), and check whether it selects ``skill``.

    Parameters
    ----------
    query : str
        The prompt.
    catalog : Catalog, str or Path
        A catalog, its JSONL file or a bundled short name.
    skill : str, default ""
        A skill id whose selection is checked too ("": none).
    top : int or None, default 5
        Rows of the ranking kept (``None``: all).
    scorer : {"keryx", "tfidf", "bm25"}, default "keryx"
    field : {"full", "description-only"}, default "full"
    strip_exclusions : bool, default True
        Strip exclusion clauses from the entries.

    Returns
    -------
    QueryScore

    Raises
    ------
    EvallabError
        An unknown scorer or skill id; DataError for a catalog file that cannot be read.
    """
    _check_scorer(scorer)
    cat = _catalog(catalog)
    matches = rank(query, cat, scorer=scorer, field=field, strip_exclusions=strip_exclusions, top=top)
    sel = check_selected(query, skill, cat, field=field, scorer=scorer, strip_exclusions=strip_exclusions) \
        if skill else None
    return QueryScore(matches, sel)


@dataclass
class CatalogTuning:
    """What :func:`tune_catalog` found.

    Attributes
    ----------
    summary : dict
        ``catalog`` (its path), ``skills``, ``trigger_probes``, ``loo_trigger_accuracy`` (a proportion: the share
        of trigger probes selected with their trigger left out), ``description_probes`` ("Use when" probes, not a
        test of the router), ``description_probes_selected``, ``pairs`` ((probe, skill) pairs scored) and
        ``positive_pairs``.
    thresholds : DataFrame
        One row per (target, objective) (:func:`evallab.skills.tune_thresholds`), targets in the order
        asked.
    """

    summary: dict
    thresholds: pd.DataFrame


def tune_catalog(catalog: Catalog | str | Path, *, scorer: str = "keryx", strip_exclusions: bool = True,
                 targets: Sequence[str] = TARGETS, n_resamples: int = 200, folds: int = 5) -> CatalogTuning:
    """Leave-one-out trigger accuracy of a catalog (trigger probes only) and its thresholds tuned on the trigger
    probes: those maximising F1, balanced accuracy, MCC and recall at zero false positives (plain accuracy beside
    its base rate).

    Parameters
    ----------
    catalog : Catalog, str or Path
        A catalog, its JSONL file or a bundled short name.
    scorer : {"keryx", "tfidf", "bm25"}, default "keryx"
    strip_exclusions : bool, default True
        Strip exclusion clauses from the entries.
    targets : sequence of {"select", "support", "use"}, default all three
        The thresholds to tune (:data:`evallab.skills.KERYX_THRESHOLDS`).
    n_resamples : int, default 200
        Bootstrap resamples over probes for the thresholds' intervals (0: none).
    folds : int, default 5
        GroupKFold folds over probes, grouped by skill (the cross-validated threshold).

    Returns
    -------
    CatalogTuning

    Raises
    ------
    EvallabError
        An unknown scorer or target (before anything is scored), or a catalog where no skill has triggers (a
        "Use when" probe is scored against the description it was cut from, so it cannot test the router).
    """
    _check_scorer(scorer)
    targets = list(targets)
    bad = [t for t in targets if t not in KERYX_THRESHOLDS]
    if bad or not targets:
        raise EvallabError(f"target must be one of {', '.join(KERYX_THRESHOLDS)}; got "
                           + (repr(bad[0]) if bad else "none"))
    cat = _catalog(catalog)
    probes = make_probes(cat)
    trig = make_probes(cat, source="triggers")
    if len(trig) == 0:
        raise EvallabError(f"{cat.path}: no skill has triggers; nothing to tune on (a 'Use when' probe is scored "
                           "against the description it was cut from, so it cannot test the router)")
    kinds = loo_summary(leave_one_out(cat, probes, scorer=scorer, strip_exclusions=strip_exclusions),
                          n_resamples=0).set_index("kind")
    pairs = pair_scores(cat, trig, scorer=scorer, strip_exclusions=strip_exclusions)
    table = pd.concat([tune_thresholds(pairs, t, n_resamples=n_resamples, n_splits=folds).table for t in targets],
                      ignore_index=True)
    summary = {"catalog": cat.path, "skills": len(cat), "trigger_probes": len(trig),
               "loo_trigger_accuracy": float(kinds.loc["trigger", "accuracy"]),
               "description_probes": len(probes) - len(trig),
               "description_probes_selected": int(kinds.loc["use_when", "selected"]) if "use_when" in kinds.index
               else 0, "pairs": len(pairs), "positive_pairs": int(pairs["label"].sum())}
    return CatalogTuning(summary, table)


__all__ = ["TARGETS", "CatalogTuning", "QueryScore", "score_query", "tune_catalog"]
