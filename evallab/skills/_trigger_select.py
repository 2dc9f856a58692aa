"""keryx's selection rules (``scout.ts``): rank a catalog against a query, whether a query selects a skill (live
and leave-one-out), a skill's nearest neighbours, and scout's use / fork / create decision.

- :data:`FORK_THRESHOLD` (0.30), :data:`USE_THRESHOLD` (0.55), :data:`DESCRIPTION_SUPPORT_THRESHOLD` (0.12) —
  keryx's constants (``data/keryx/SOURCE.md``).
- :func:`rank`, :func:`check_selected`, :func:`check_selected_leave_one_out`, :func:`nearest_skills`,
  :func:`scout` — one query at a time, as keryx runs them.
- ``_selection_arrays`` — the same rule vectorised over many probes (used by leave-one-out and trigger
  accuracy).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evallab.skills._catalogs import Catalog, as_catalog
from evallab.skills._tokenize import entry_tokens, query_tokens
from evallab.skills._trigger_index import score_matrix

#: scout's "use as is" threshold on the full-text score
USE_THRESHOLD = 0.55
#: scout's "fork" threshold; also the selection threshold of the trigger grader
FORK_THRESHOLD = 0.30
#: leave-one-out: the skill's own name+description must cover at least this much of the probe
DESCRIPTION_SUPPORT_THRESHOLD = 0.12


def rank(query: str, catalog, *, scorer: str = "keryx", field: str = "full", strip_exclusions: bool = True,
         is_description: bool = False, top: int | None = None) -> pd.DataFrame:
    """Every skill scored against ``query``, sorted by score (descending) then id (ascending).

    Returns a DataFrame with columns ``rank`` (1-based), ``skill_id``, ``category``, ``score`` and ``shared`` (the
    shared keryx tokens, comma-separated), ``top`` rows when given.
    """
    catalog = as_catalog(catalog)
    s = score_matrix([query], catalog, scorer=scorer, field=field, strip_exclusions=strip_exclusions,
                     is_description=is_description)[0]
    q = query_tokens(query, is_description=is_description)
    df = pd.DataFrame({"skill_id": catalog.ids, "category": [k.category for k in catalog.skills], "score": s,
                       "shared": [", ".join(sorted(q & entry_tokens(k, field, strip=strip_exclusions)))
                                  for k in catalog.skills]})
    df = df.sort_values(["score", "skill_id"], ascending=[False, True], kind="mergesort").reset_index(drop=True)
    df.insert(0, "rank", np.arange(1, len(df) + 1))
    return df.head(top) if top else df


@dataclass(frozen=True)
class SelectionCheck:
    """Whether a query selects a skill: ``score ≥ threshold`` and no different-category skill strictly outscores it.

    ``rank`` is 1-based in the full ranking; ``outranked_by`` is the best different-category skill that strictly
    outscores it (None when none does); ``description_score`` is set by the leave-one-out check only.
    """

    selected: bool
    score: float
    rank: int
    outranked_by: str | None = None
    description_score: float | None = None


def _check_from_scores(scores: np.ndarray, pos: int, catalog: Catalog, threshold: float) -> SelectionCheck:
    ids = catalog.ids
    cats = np.array([s.category for s in catalog.skills])
    own = scores[pos]
    better = (scores > own) | ((scores == own) & (np.array(ids) < ids[pos]))
    other = (cats != cats[pos]) & (scores > own)
    outr = None
    if other.any():
        outr = min((-scores[j], ids[j]) for j in np.flatnonzero(other))[1]  # top score, then smallest id
    return SelectionCheck(bool(own >= threshold and outr is None), float(own), int(better.sum()) + 1, outr)


def check_selected(query: str, skill_id: str, catalog, *, threshold: float = FORK_THRESHOLD,
                   field: str = "full", scorer: str = "keryx", strip_exclusions: bool = True) -> SelectionCheck:
    """keryx ``checkSkillSelected``: a live ``query`` (scored as typed) selects ``skill_id`` when its score is
    ``≥ threshold`` (0.30) and no skill of a DIFFERENT category strictly outscores it (spec 000; SOURCE.md)."""
    catalog = as_catalog(catalog)
    pos = catalog.index_of(skill_id)
    s = score_matrix([query], catalog, scorer=scorer, field=field, strip_exclusions=strip_exclusions)[0]
    return _check_from_scores(s, pos, catalog, threshold)


def check_selected_leave_one_out(query: str, skill_id: str, catalog, exclude_trigger: str | None = None, *,
                                 threshold: float = FORK_THRESHOLD,
                                 support_threshold: float = DESCRIPTION_SUPPORT_THRESHOLD,
                                 scorer: str = "keryx", strip_exclusions: bool = True) -> SelectionCheck:
    """keryx ``checkSkillSelectedLeaveOneOut``: :func:`check_selected` on the "full" field of the catalog with
    ONLY ``exclude_trigger`` removed from ``skill_id``'s own triggers, AND the "description-only" score against the
    unmodified catalog ``≥ support_threshold`` (0.12). ``exclude_trigger=None`` (a "Use when" probe) removes
    nothing but keeps the support gate."""
    catalog = as_catalog(catalog)
    reduced = catalog.without_trigger(skill_id, exclude_trigger) if exclude_trigger is not None else catalog
    full = check_selected(query, skill_id, reduced, threshold=threshold, field="full", scorer=scorer,
                          strip_exclusions=strip_exclusions)
    desc = check_selected(query, skill_id, catalog, threshold=threshold, field="description-only", scorer=scorer,
                          strip_exclusions=strip_exclusions)
    return SelectionCheck(full.selected and desc.score >= support_threshold, full.score, full.rank,
                          full.outranked_by, desc.score)


def nearest_skills(skill_id: str, catalog, limit: int = 5, *, scorer: str = "keryx",
                   strip_exclusions: bool = True) -> pd.DataFrame:
    """keryx ``nearestSkills``: the ``limit`` other skills whose FULL text scores highest against ``skill_id``'s
    own description (used as a description-shaped query, so it is stripped too), ties by id. Columns as
    :func:`rank`."""
    catalog = as_catalog(catalog)
    skill = catalog.skills[catalog.index_of(skill_id)]
    query = skill.description if skill.description else skill.name
    r = rank(query, catalog, scorer=scorer, strip_exclusions=strip_exclusions, is_description=strip_exclusions)
    r = r[r.skill_id != skill_id].head(limit).reset_index(drop=True)
    r["rank"] = np.arange(1, len(r) + 1)
    return r


@dataclass(frozen=True)
class ScoutResult:
    """scout's decision for a query: ``use`` (top score ≥ use), ``fork`` (≥ fork) or ``create``; top matches."""

    query: str
    decision: str
    use: float
    fork: float
    matches: pd.DataFrame = field(repr=False)


def scout(query: str, catalog, *, use: float = USE_THRESHOLD, fork: float = FORK_THRESHOLD, top: int = 5,
          scorer: str = "keryx", strip_exclusions: bool = True, is_description: bool = True) -> ScoutResult:
    """keryx ``scoutSkill``: rank the catalog on the FULL field against a draft skill description (stripped, as a
    description-shaped query) and decide ``use`` (top score ≥ 0.55), ``fork`` (≥ 0.30) or ``create``."""
    r = rank(query, catalog, scorer=scorer, strip_exclusions=strip_exclusions,
             is_description=is_description and strip_exclusions)
    t = float(r.score.iloc[0]) if len(r) else 0.0
    decision = "use" if t >= use else "fork" if t >= fork else "create"
    return ScoutResult(query, decision, use, fork, r.head(top))


def _selection_arrays(scores: np.ndarray, pos: np.ndarray, catalog: Catalog):
    """Per probe: own score, best different-category score, outranking skill id (or None), 1-based rank."""
    ids = np.array(catalog.ids)
    cats = np.array([s.category for s in catalog.skills])
    P = len(pos)
    own = scores[np.arange(P), pos]
    diff = cats[None, :] != cats[pos][:, None]
    masked = np.where(diff, scores, -np.inf)
    order = np.argsort(ids, kind="mergesort")  # argmax takes the first maximum: the smallest id among ties
    j = order[np.argmax(masked[:, order], axis=1)]
    best = masked[np.arange(P), j] if P else np.zeros(0)
    outr = np.where(best > own, ids[j], None) if P else np.array([], dtype=object)
    id_rank = np.empty(len(ids), dtype=np.int64)
    id_rank[order] = np.arange(len(ids))
    rk = ((scores > own[:, None]) | ((scores == own[:, None]) & (id_rank[None, :] < id_rank[pos][:, None]))).sum(1) + 1
    return own, np.where(np.isfinite(best), best, 0.0), outr, rk
