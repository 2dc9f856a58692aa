"""The lexical trigger scorer: which skill does a prompt trigger, and at what thresholds should it?

A lexical router picks the skill a prompt triggers by IDF-weighted overlap with each skill's name, description and
triggers. This module reproduces keryx's scorer exactly (``data/keryx/SOURCE.md``, "Facts about keryx's lexical
trigger scorer"; spec 000, section "Exclusion clauses in a description/triggers are safe to write"), offers two
library scorers beside it for comparison (scikit-learn TF-IDF cosine, ``bm25s`` BM25), and tunes its thresholds.

Pieces, in the order data flows through them:

- :func:`tokenize` / :func:`token_set` / :func:`stem` / :data:`STOP_WORDS` — split camelCase, lowercase, runs of
  non-letter/non-digit characters → spaces, tokens of 3+ characters not in the stop list, light stemming.
- :func:`strip_exclusions` — drop exclusion-clause text ("Not for …", "(see …)", "Use `x` instead", …) from a
  description-shaped text; linear time (no nested quantifiers).
- :class:`~evallab.skills.catalogs.Catalog` / :class:`~evallab.skills.catalogs.Skill` — the catalog, read by
  :func:`evallab.skills.catalogs.load_catalog` (this module reads no files).
- :func:`score_matrix` — IDF-weighted query coverage (or TF-IDF / BM25) of queries × skills.
- :func:`rank`, :func:`check_selected`, :func:`check_selected_leave_one_out`, :func:`nearest_skills`,
  :func:`scout` — the selection rules of keryx's ``scout.ts``.
- :func:`make_probes`, :func:`leave_one_out`, :func:`trigger_accuracy` — trigger accuracy; the leave-one-out path
  is vectorised (one sparse product for every probe) with a naive per-probe rebuild kept as the reference.
- :func:`pair_scores`, :func:`roc_pr`, :func:`tune_thresholds` — score every (probe, skill) pair; ROC and PR
  curves; thresholds maximising accuracy / F1 / recall at zero false positives with bootstrap intervals over probes
  and a cross-validated estimate (GroupKFold over skills).
- :func:`stripping_effect` — which probes change verdict when exclusion stripping is switched off.
"""

from __future__ import annotations

import math
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import sparse

with warnings.catch_warnings():
    # bm25s imports tqdm.auto, which in a Jupyter kernel without ipywidgets warns "IProgress not found" at import
    # time; evallab never shows bm25s's progress bars (show_progress=False), so the warning says nothing of a run
    warnings.filterwarnings("ignore", message="IProgress not found")
    import bm25s
from scipy import stats as sps
from sklearn.feature_extraction.text import TfidfTransformer, TfidfVectorizer
from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score, roc_curve
from sklearn.metrics.pairwise import linear_kernel
from sklearn.model_selection import GroupKFold

from evallab.errors import EvallabError
from evallab.metrics import intervals
from evallab.skills.catalogs import Catalog, Skill, as_catalog

# ---------------------------------------------------------------------------------------------------------------
# Constants (keryx scout.ts, via data/keryx/SOURCE.md)
# ---------------------------------------------------------------------------------------------------------------

#: scout's "use as is" threshold on the full-text score
USE_THRESHOLD = 0.55
#: scout's "fork" threshold; also the selection threshold of the trigger grader
FORK_THRESHOLD = 0.30
#: leave-one-out: the skill's own name+description must cover at least this much of the probe
DESCRIPTION_SUPPORT_THRESHOLD = 0.12

#: keryx's routing stop list (the English words of ``ROUTE_STOPWORDS``, as listed in SOURCE.md)
STOP_WORDS = frozenset(
    "the and for with this that your are from into out run use used make get can please help want them".split()
)

SCORERS = ("keryx", "tfidf", "bm25")
FIELDS = ("full", "description-only")

#: scores are rounded to this many decimals before any comparison, so ties are ties whatever the summation order
_DECIMALS = 12

_CAMEL = re.compile(r"([a-z])([A-Z])")
_WORD = re.compile(r"[^\W_]+")  # a run of Unicode letters/digits (JS \p{L}\p{N})


# ---------------------------------------------------------------------------------------------------------------
# Tokenizer and stemmer
# ---------------------------------------------------------------------------------------------------------------

def stem(token: str) -> str:
    """keryx's ``stemLite``: the first matching rule of four suffix rules.

    ``len > 4`` and ends "ies" → "…y"; ``len > 4`` and ends "es" → drop "es"; ``len > 5`` and ends "ing" → drop
    "ing"; ``len > 3`` and ends "s" but not "ss" → drop "s"; else unchanged. Source: SOURCE.md.
    """
    n = len(token)
    if n > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if n > 4 and token.endswith("es"):
        return token[:-2]
    if n > 5 and token.endswith("ing"):
        return token[:-3]
    if n > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def normalize(text: str) -> str:
    """keryx's ``normalizeRouteText``: split camelCase, lowercase, non-letter/digit runs → one space, trim."""
    return " ".join(_WORD.findall(_CAMEL.sub(r"\1 \2", text).lower()))


def tokenize(text: str) -> list[str]:
    """Stemmed tokens of ``text`` in order, repeats kept (TF-IDF and BM25 need counts; keryx uses the set).

    Tokens are words of 3+ characters (before stemming) not in :data:`STOP_WORDS`, then :func:`stem`.
    """
    return [stem(t) for t in normalize(text).split() if len(t) >= 3 and t not in STOP_WORDS]


@lru_cache(maxsize=65536)
def token_set(text: str) -> frozenset[str]:
    """The SET of stemmed tokens keryx scores (binary: no term frequency)."""
    return frozenset(tokenize(text))


# ---------------------------------------------------------------------------------------------------------------
# Exclusion-clause stripping (spec 000, "Exclusion clauses in a description/triggers are safe to write")
# ---------------------------------------------------------------------------------------------------------------
# Every pattern below is a single pass with at most one quantifier per alternative and no quantified group, so
# Python's backtracking engine runs each in time linear in the text (benchmarks/bench_triggers.py measures it).

#: "(not …)", "(never …)", "(see …)" asides, but not the inclusive "(not only … but also …)"
_ASIDE = re.compile(r"\((?!\s*not\s+only\b)\s*(?:not|never|see)\b[^()]*\)", re.IGNORECASE)
#: a sentence ends at . ! ? followed by whitespace — but not after "e.g." / "i.e." (fixed-width lookbehinds)
_SENTENCE_END = re.compile(r"(?<!\b[eE]\.[gG]\.)(?<!\b[iI]\.[eE]\.)(?<=[.!?])\s+")
#: markers that drop a sentence from the marker to the sentence's end, wherever in the sentence they occur
_MARKER = re.compile(r"\b(?:do\s+not\s+use\s+for|not\s+for|does\s+not)\b", re.IGNORECASE)
#: a sentence that OPENS with never (only leading punctuation/space before it)
_NEVER_OPENER = re.compile(r"^[^\w]*never\b", re.IGNORECASE)
#: a standalone redirect: use + (quoted token | bare hyphenated skill id) + instead
_REDIRECT = re.compile(
    r"\buse\s+(?:`[^`\s]+`|\"[^\"\s]+\"|'[^'\s]+'|\u201c[^\u201d\s]+\u201d|[A-Za-z0-9_/:]+-[A-Za-z0-9_/:-]+)"
    r"\s+instead\b[.!?]?",
    re.IGNORECASE,
)
_SPACES = re.compile(r"\s+")
_SPACE_PUNCT = re.compile(r" ([.,;:!?])")


def strip_exclusions(text: str) -> str:
    """Remove exclusion-clause text from a description-shaped ``text`` (keryx ``stripExclusionClauses``).

    Forms (spec 000, "Exclusion clauses …", as a plain-language summary of keryx's implementation):

    1. A sentence containing "not for", "do not use for" or "does not" (any case, anywhere in it) is cut from that
       phrase to the sentence's end (so "NOT for A, or NOT for B (use `x`)." loses both clauses).
    2. A sentence that opens with "never" is dropped (a mid-sentence "never" is kept).
    3. "(not …)", "(never …)" and "(see …)" asides are removed anywhere; "(not only … but also …)" is kept.
    4. A standalone redirect "use `x` instead" — a backtick- or quote-wrapped token, or a bare hyphenated
       skill-id-shaped token, then "instead" — is removed; a bare unhyphenated word never matches.
    5. "e.g." / "i.e." do not end a sentence.

    Not recognised (on purpose): a plain "without"; a disclaimer spanning several sentences (only the sentence
    the marker is in is cut).

    Parameters
    ----------
    text : str
        A skill's description or trigger, or a description-shaped query (scout, nearest skills). Never pass a live
        prompt: it is scored exactly as typed.

    Returns
    -------
    str
        The kept text, whitespace collapsed. Runs in time linear in ``len(text)``.
    """
    if not text:
        return ""
    t = _ASIDE.sub(" ", text)
    kept = []
    for sentence in _SENTENCE_END.split(t):
        if _NEVER_OPENER.match(sentence):
            continue
        m = _MARKER.search(sentence)
        if m:
            sentence = sentence[: m.start()]
        sentence = _REDIRECT.sub(" ", sentence)
        if sentence.strip():
            kept.append(sentence.strip())
    out = " ".join(kept)
    return _SPACE_PUNCT.sub(r"\1", _SPACES.sub(" ", out)).strip()


# ---------------------------------------------------------------------------------------------------------------
# Entry text
# ---------------------------------------------------------------------------------------------------------------

def _as_sentence(part: str) -> str:
    part = part.strip()
    return part if not part or part[-1] in ".!?" else part + "."


def entry_parts(skill: Skill, field: str = "full", *, strip: bool = True) -> list[str]:
    """The texts an entry is scored on: ``[name, description, *triggers]`` ("full") or ``[name, description]``
    ("description-only"), each stripped of exclusion clauses when ``strip`` (each part is its own sentence, so an
    unterminated "Not for …" cannot swallow the triggers after it)."""
    if field not in FIELDS:
        raise EvallabError(f"field must be one of {FIELDS}, got {field!r}")
    parts = [skill.name, skill.description] + (list(skill.triggers) if field == "full" else [])
    return [strip_exclusions(p) if strip else p for p in parts]


def entry_text(skill: Skill, field: str = "full", *, strip: bool = True) -> str:
    """:func:`entry_parts` joined as sentences (name. description. trigger. …)."""
    return " ".join(_as_sentence(p) for p in entry_parts(skill, field, strip=strip) if p.strip())


@lru_cache(maxsize=65536)
def _part_tokens(text: str, strip: bool) -> frozenset[str]:
    return token_set(strip_exclusions(text) if strip else text)


@lru_cache(maxsize=65536)
def _part_token_list(text: str, strip: bool) -> tuple[str, ...]:
    return tuple(tokenize(strip_exclusions(text) if strip else text))


def entry_token_list(skill: Skill, field: str = "full", *, strip: bool = True) -> list[str]:
    """Stemmed tokens of :func:`entry_parts` in order with repeats (the document TF-IDF and BM25 score)."""
    parts = [skill.name, skill.description] + (list(skill.triggers) if field == "full" else [])
    return [t for p in parts for t in _part_token_list(p, strip)]


def entry_tokens(skill: Skill, field: str = "full", *, strip: bool = True) -> frozenset[str]:
    """The token set keryx scores an entry on (union over :func:`entry_parts`)."""
    parts = [skill.name, skill.description] + (list(skill.triggers) if field == "full" else [])
    out: set[str] = set()
    for p in parts:
        out |= _part_tokens(p, strip)
    return frozenset(out)


def query_tokens(query: str, *, is_description: bool = False) -> frozenset[str]:
    """A query's token set: stripped of exclusion clauses only when the query IS a description (scout, nearest
    skills) — a live prompt or trigger probe is scored exactly as typed (spec 000)."""
    return token_set(strip_exclusions(query) if is_description else query)


# ---------------------------------------------------------------------------------------------------------------
# Scorers
# ---------------------------------------------------------------------------------------------------------------

def idf(df: np.ndarray | float, n: int) -> np.ndarray | float:
    """keryx's smoothed IDF, ``ln((N + 1) / (df + 1)) + 1`` (always > 0; an unseen token gets the maximum)."""
    return np.log((n + 1) / (np.asarray(df, dtype=float) + 1)) + 1


class KeryxIndex:
    """IDF-weighted query coverage over one catalog (SOURCE.md).

    ``score(q, e) = Σ_{t ∈ q ∩ e} idf(t) / Σ_{t ∈ q} idf(t)`` with ``idf(t) = ln((N+1)/(df(t)+1)) + 1`` over the
    catalog being scored (N entries, df over token sets); 0 for a query with no tokens. Scores in [0, 1].
    """

    def __init__(self, catalog: Catalog, field: str = "full", *, strip: bool = True):
        self.catalog, self.field, self.strip = catalog, field, strip
        self.sets = [entry_tokens(s, field, strip=strip) for s in catalog.skills]
        vocab = sorted(set().union(*self.sets))
        self.vocab = {t: i for i, t in enumerate(vocab)}
        rows = np.repeat(np.arange(len(self.sets)), [len(s) for s in self.sets])
        cols = np.fromiter((self.vocab[t] for s in self.sets for t in s), dtype=np.int64, count=len(rows))
        self.E = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(self.sets), len(vocab)))
        self.df = np.asarray(self.E.sum(axis=0)).ravel()
        self.n = len(self.sets)
        self.idf = idf(self.df, self.n)
        self.idf_unseen = float(idf(0, self.n))

    def query_matrix(self, qsets: Sequence[frozenset[str]]):
        """Sparse (n_queries × V) matrix of in-vocabulary IDF weights, and each query's total weight (incl. unseen)."""
        rows, cols, den = [], [], np.zeros(len(qsets))
        for i, q in enumerate(qsets):
            w = 0.0
            for t in q:
                j = self.vocab.get(t)
                if j is None:
                    w += self.idf_unseen
                else:
                    rows.append(i)
                    cols.append(j)
                    w += self.idf[j]
            den[i] = w
        vals = self.idf[np.asarray(cols, dtype=np.int64)] if cols else np.zeros(0)
        Q = sparse.csr_matrix((vals, (rows, cols)), shape=(len(qsets), len(self.vocab)))
        return Q, den

    def score_sets(self, qsets: Sequence[frozenset[str]]) -> np.ndarray:
        """Scores of token sets, shape (n_queries, n_skills)."""
        Q, den = self.query_matrix(qsets)
        num = (Q @ self.E.T).toarray()
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(den[:, None] > 0, num / np.where(den > 0, den, 1)[:, None], 0.0)
        return np.round(out, _DECIMALS)

    def score(self, queries: Sequence[str], *, is_description: bool = False) -> np.ndarray:
        return self.score_sets([query_tokens(q, is_description=is_description) for q in queries])


def _identity(doc):
    return doc


class TfidfIndex:
    """scikit-learn ``TfidfVectorizer`` cosine over the same tokens (stemmed, stop-listed, exclusion-stripped)."""

    def __init__(self, catalog: Catalog, field: str = "full", *, strip: bool = True):
        self.vec = TfidfVectorizer(analyzer=_identity)
        self.E = self.vec.fit_transform([entry_token_list(s, field, strip=strip) for s in catalog.skills])

    def score(self, queries: Sequence[str], *, is_description: bool = False) -> np.ndarray:
        texts = [tokenize(strip_exclusions(q) if is_description else q) for q in queries]
        return np.round(np.clip(linear_kernel(self.vec.transform(texts), self.E), 0.0, 1.0), _DECIMALS)


class BM25Index:
    """BM25 (``bm25s``, Lucene variant, k1=1.5, b=0.75) over the same tokens, normalised to [0, 1].

    Normalised score = Σ_{t∈q} s(t, e) / Σ_{t∈q} m(t), where s(t, e) is bm25s's per-term score and m(t) its maximum
    over the catalog (an out-of-vocabulary query token gets the largest m of any term): like keryx's coverage, the
    share of the query's best attainable evidence that this entry provides.
    """

    def __init__(self, catalog: Catalog, field: str = "full", *, strip: bool = True):
        corpus = [entry_token_list(s, field, strip=strip) or ["\u2205"] for s in catalog.skills]
        self.vocab = {t: i for i, t in enumerate(sorted({t for d in corpus for t in d}))}
        ids = [[self.vocab[t] for t in d] for d in corpus]
        self.bm = bm25s.BM25()
        self.bm.index(bm25s.tokenization.Tokenized(ids=ids, vocab=self.vocab), show_progress=False)
        indptr, data = np.asarray(self.bm.scores["indptr"]), np.asarray(self.bm.scores["data"], dtype=float)
        self.tmax = np.zeros(len(indptr) - 1)
        nonempty = indptr[1:] > indptr[:-1]
        if nonempty.any():  # per-term maximum over documents
            self.tmax[nonempty] = np.maximum.reduceat(data, indptr[:-1][nonempty])
        self.unseen = float(self.tmax.max(initial=1.0))
        self.n = len(corpus)

    def score(self, queries: Sequence[str], *, is_description: bool = False) -> np.ndarray:
        out = np.zeros((len(queries), self.n))
        for i, q in enumerate(queries):
            toks = sorted(query_tokens(q, is_description=is_description))
            known = [self.vocab[t] for t in toks if t in self.vocab]
            den = float(self.tmax[known].sum()) + self.unseen * (len(toks) - len(known))
            if den > 0 and known:
                out[i] = self.bm.get_scores_from_ids(known) / den
        return np.round(np.clip(out, 0.0, 1.0), _DECIMALS)


def build_index(catalog, scorer: str = "keryx", field: str = "full", *, strip: bool = True):
    """An index of ``catalog`` for ``scorer`` ("keryx", "tfidf" or "bm25"); ``.score(queries)`` → (n_q, n_skills)."""
    catalog = as_catalog(catalog)
    cls = {"keryx": KeryxIndex, "tfidf": TfidfIndex, "bm25": BM25Index}.get(scorer)
    if cls is None:
        raise EvallabError(f"scorer must be one of {SCORERS}, got {scorer!r}")
    if field not in FIELDS:
        raise EvallabError(f"field must be one of {FIELDS}, got {field!r}")
    return cls(catalog, field, strip=strip)


def score_matrix(queries: Sequence[str], catalog, *, scorer: str = "keryx", field: str = "full",
                 strip_exclusions: bool = True, is_description: bool = False) -> np.ndarray:
    """Scores of every query against every skill.

    Parameters
    ----------
    queries : sequence of str, length n_q.
    catalog : :class:`Catalog`, a path, or records.
    scorer : "keryx" (IDF-weighted coverage), "tfidf" (cosine) or "bm25" (normalised).
    field : "full" (name + description + triggers) or "description-only" (name + description).
    strip_exclusions : strip exclusion clauses from the entries' own text (keryx always does).
    is_description : the queries are descriptions (scout, nearest skills): strip them too.

    Returns
    -------
    ndarray, shape (n_q, n_skills), values in [0, 1], rounded to 12 decimals.
    """
    return build_index(catalog, scorer, field, strip=strip_exclusions).score(list(queries),
                                                                              is_description=is_description)


# ---------------------------------------------------------------------------------------------------------------
# Ranking and selection
# ---------------------------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------------------------
# Probes, leave-one-out, trigger accuracy
# ---------------------------------------------------------------------------------------------------------------

_USE_WHEN = re.compile(r"use when[^.]*\.?", re.IGNORECASE)  # keryx eval.ts USE_WHEN_CLAUSE


def use_when_clause(description: str) -> str | None:
    """The first "Use when …" clause of a description, up to and including its period (keryx eval.ts)."""
    m = _USE_WHEN.search(description)
    return m.group(0).strip() if m else None


def make_probes(catalog, *, source: str = "auto") -> pd.DataFrame:
    """Positive probes: each skill's triggers, or its "Use when" clause when it has no triggers.

    Parameters
    ----------
    source : "auto" (triggers, else the "Use when" clause), "triggers" or "use_when".

    Returns
    -------
    DataFrame, one row per probe: ``probe_id`` (0..n-1), ``skill_id``, ``category``, ``prompt``,
    ``source_trigger`` (the trigger left out, or None for a "Use when" probe), ``kind`` ("trigger"/"use_when",
    see :data:`PROBE_KINDS`). Skills with neither contribute no probe. "auto" is keryx's own population
    (eval.ts); its "Use when" probes are cut from the skill's description with nothing left out, so report them
    apart from the trigger probes (:func:`loo_summary`) and tune on ``source="triggers"``.
    """
    catalog = as_catalog(catalog)
    if source not in ("auto", "triggers", "use_when"):
        raise EvallabError(f"source must be 'auto', 'triggers' or 'use_when', got {source!r}")
    rows = []
    for s in catalog.skills:
        if s.triggers and source in ("auto", "triggers"):
            rows += [(s.id, s.category, t, t, "trigger") for t in s.triggers]
        elif source in ("auto", "use_when"):
            uw = use_when_clause(s.description)
            if uw:
                rows.append((s.id, s.category, uw, None, "use_when"))
    df = pd.DataFrame(rows, columns=["skill_id", "category", "prompt", "source_trigger", "kind"])
    df.insert(0, "probe_id", np.arange(len(df)))
    return df


def _loo_full_scores_keryx(catalog: Catalog, probes: pd.DataFrame, strip: bool) -> np.ndarray:
    """Vectorised leave-one-out "full" scores, shape (n_probes, n_skills).

    Removing trigger t from skill s changes only (a) s's token set, losing D = tokens found in t and nowhere else in
    s's text, and (b) df of the tokens in D (each − 1). So one sparse product with per-probe IDF weights, and a
    correction of column s, give every probe's scores against its own reduced catalog at once.
    """
    index = KeryxIndex(catalog, "full", strip=strip)
    n, V = index.n, len(index.vocab)
    pos = np.array([catalog.index_of(x) for x in probes.skill_id], dtype=np.int64)
    rows, cols, vals, den = [], [], [], np.zeros(len(probes))
    crow, ccol, cval = [], [], []
    for i, (prompt, trig, p) in enumerate(zip(probes.prompt, probes.source_trigger, pos, strict=True)):
        q = token_set(prompt)
        removed: frozenset[str] = frozenset()
        if trig is not None and isinstance(trig, str):
            sk = catalog.skills[p]
            rest = set(_part_tokens(sk.name, strip)) | _part_tokens(sk.description, strip)
            for t in sk.triggers:
                if t != trig:
                    rest |= _part_tokens(t, strip)
            removed = index.sets[p] - rest
        w_total = 0.0
        for t in q:
            j = index.vocab.get(t)
            if j is None:
                w_total += index.idf_unseen
                continue
            if t in removed:
                w = float(idf(index.df[j] - 1, n))
                crow.append(i)
                ccol.append(j)
                cval.append(w)
            else:
                w = index.idf[j]
            rows.append(i)
            cols.append(j)
            vals.append(w)
            w_total += w
        den[i] = w_total
    Q = sparse.csr_matrix((vals, (rows, cols)), shape=(len(probes), V))
    num = (Q @ index.E.T).toarray()
    if cval:
        corr = np.bincount(np.asarray(crow), weights=np.asarray(cval), minlength=len(probes))
        num[np.arange(len(probes)), pos] -= corr
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den[:, None] > 0, num / np.where(den > 0, den, 1)[:, None], 0.0)
    return np.round(np.clip(out, 0.0, 1.0), _DECIMALS)


def _loo_full_scores_tfidf(catalog: Catalog, probes: pd.DataFrame, strip: bool) -> np.ndarray:
    """Leave-one-out TF-IDF cosine without re-tokenizing the catalog: the count matrix is built once; per left-out
    trigger only the skill's row is replaced, columns left with df 0 are dropped (as a fresh fit would drop them),
    and scikit-learn's ``TfidfTransformer`` refits the IDF — the numbers of a ``TfidfVectorizer`` refit."""
    docs = [entry_token_list(s, "full", strip=strip) for s in catalog.skills]
    vocab: dict[str, int] = {}
    for d in docs:
        for t in d:
            vocab.setdefault(t, len(vocab))

    def counts(token_lists) -> sparse.csr_matrix:
        rows, cols, vals = [], [], []
        for i, d in enumerate(token_lists):
            for t, c in Counter(t for t in d if t in vocab).items():
                rows.append(i)
                cols.append(vocab[t])
                vals.append(c)
        return sparse.csr_matrix((np.asarray(vals, dtype=float), (rows, cols)), shape=(len(token_lists), len(vocab)))

    C = counts(docs)
    Qc = counts([tokenize(q) for q in probes.prompt])
    out = np.zeros((len(probes), len(catalog)))
    groups = probes.groupby([probes.skill_id, probes.source_trigger.fillna("\0")], sort=False).indices
    for (sid, trig), idx in groups.items():
        if trig == "\0":
            M = C
        else:
            k = catalog.index_of(sid)
            row = counts([entry_token_list(catalog.without_trigger(sid, trig).skills[k], "full", strip=strip)])
            M = sparse.vstack([C[:k], row, C[k + 1:]], format="csr")
        keep = np.flatnonzero(M.getnnz(axis=0) > 0)
        tf = TfidfTransformer()
        E = tf.fit_transform(M[:, keep])
        out[idx] = (tf.transform(Qc[idx][:, keep]) @ E.T).toarray()
    return np.round(np.clip(out, 0.0, 1.0), _DECIMALS)


def _loo_full_scores_refit(catalog: Catalog, probes: pd.DataFrame, scorer: str, strip: bool) -> np.ndarray:
    """Leave-one-out "full" scores by refitting the index once per distinct (skill, trigger) left out."""
    out = np.zeros((len(probes), len(catalog)))
    base = None
    groups = probes.groupby([probes.skill_id, probes.source_trigger.fillna("\0")], sort=False).indices
    for (sid, trig), idx in groups.items():
        if trig == "\0":
            base = base or build_index(catalog, scorer, "full", strip=strip)
            ix = base
        else:
            ix = build_index(catalog.without_trigger(sid, trig), scorer, "full", strip=strip)
        out[idx] = ix.score(list(probes.prompt.iloc[idx]))
    return out


def _naive_loo_scores(catalog: Catalog, probes: pd.DataFrame, strip: bool) -> tuple[np.ndarray, np.ndarray]:
    """Reference path, as keryx runs it: for every probe rebuild the reduced catalog, tokenize (and strip) every
    entry afresh, build its df table and score every entry in plain Python."""

    def fresh(skill: Skill, fld: str) -> set[str]:
        parts = [skill.name, skill.description] + (list(skill.triggers) if fld == "full" else [])
        return {t for p in parts for t in tokenize(strip_exclusions(p) if strip else p)}

    full = np.zeros((len(probes), len(catalog)))
    desc = np.zeros_like(full)
    for i, (prompt, sid, trig) in enumerate(zip(probes.prompt, probes.skill_id, probes.source_trigger,
                                                strict=True)):
        q = set(tokenize(prompt))
        reduced = catalog.without_trigger(sid, trig) if isinstance(trig, str) else catalog
        for out, sets in ((full, [fresh(s, "full") for s in reduced.skills]),
                          (desc, [fresh(s, "description-only") for s in catalog.skills])):
            n = len(sets)
            dfreq: dict[str, int] = {}
            for st in sets:
                for t in st:
                    dfreq[t] = dfreq.get(t, 0) + 1
            w = {t: math.log((n + 1) / (dfreq.get(t, 0) + 1)) + 1 for t in q}
            total = sum(w.values())
            for e, st in enumerate(sets):
                out[i, e] = sum(w[t] for t in q if t in st) / total if total > 0 else 0.0
    return np.round(full, _DECIMALS), np.round(desc, _DECIMALS)


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


def loo_scores(catalog, probes: pd.DataFrame | None = None, *, scorer: str = "keryx",
               strip_exclusions: bool = True, method: str = "vectorized") -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out "full" scores and unmodified "description-only" scores of every probe × skill.

    Parameters
    ----------
    method : "vectorized" (keryx: one sparse product; other scorers: one refit per left-out trigger) or "naive"
        (keryx only: per-probe rebuild in plain Python, the reference the benchmark compares against).

    Returns
    -------
    (full, description_only) : two ndarrays of shape (n_probes, n_skills).
    """
    catalog = as_catalog(catalog)
    probes = make_probes(catalog) if probes is None else probes
    if method == "naive":
        if scorer != "keryx":
            raise EvallabError("method='naive' exists for the keryx scorer only")
        return _naive_loo_scores(catalog, probes, strip_exclusions)
    if method != "vectorized":
        raise EvallabError(f"method must be 'vectorized' or 'naive', got {method!r}")
    if scorer == "keryx":
        full = _loo_full_scores_keryx(catalog, probes, strip_exclusions)
    elif scorer == "tfidf":
        full = _loo_full_scores_tfidf(catalog, probes, strip_exclusions)
    else:
        full = _loo_full_scores_refit(catalog, probes, scorer, strip_exclusions)
    desc = build_index(catalog, scorer, "description-only", strip=strip_exclusions).score(list(probes.prompt))
    return full, desc


def leave_one_out(catalog, probes: pd.DataFrame | None = None, *, scorer: str = "keryx",
                  strip_exclusions: bool = True, threshold: float = FORK_THRESHOLD,
                  support_threshold: float = DESCRIPTION_SUPPORT_THRESHOLD, method: str = "vectorized",
                  scores: tuple[np.ndarray, np.ndarray] | None = None) -> pd.DataFrame:
    """Leave-one-out trigger selection of every probe (keryx ``checkSkillSelectedLeaveOneOut``, vectorised).

    A probe built from trigger t of skill s is scored against the catalog with only t removed from s ("full"
    field); it is selected when that score is ``≥ threshold``, no different-category skill strictly outscores s,
    and s's "description-only" score on the unmodified catalog is ``≥ support_threshold``.

    Returns
    -------
    DataFrame: the probe columns (:func:`make_probes`) plus ``score``, ``description_score``, ``best_other``
    (highest different-category score), ``outranked_by``, ``rank`` and ``selected`` (bool). Its mean of
    ``selected`` is the leave-one-out trigger accuracy. ``scores`` reuses a :func:`loo_scores` result.
    """
    catalog = as_catalog(catalog)
    probes = make_probes(catalog) if probes is None else probes.reset_index(drop=True)
    full, desc = scores if scores is not None else \
        loo_scores(catalog, probes, scorer=scorer, strip_exclusions=strip_exclusions, method=method)
    pos = np.array([catalog.index_of(x) for x in probes.skill_id], dtype=np.int64)
    own, best, outr, rk = _selection_arrays(full, pos, catalog)
    dsc = desc[np.arange(len(pos)), pos]
    out = probes.copy()
    out["score"], out["description_score"], out["best_other"] = own, dsc, best
    out["outranked_by"], out["rank"] = outr, rk
    out["selected"] = (own >= threshold) & (best <= own) & (dsc >= support_threshold)
    return out


#: what each probe kind of :func:`make_probes` measures, for tables and notes
PROBE_KINDS = {
    "trigger": "a skill's own trigger, left out of the index: the leave-one-out test of the router",
    "use_when": ("a skill's \"Use when\" clause (the skill has no triggers), cut from its own description with "
                 "nothing left out: scored against its own source text, so selected by construction unless "
                 "another category outscores it — not a test of the router"),
}


def loo_summary(loo: pd.DataFrame, *, confidence: float = 0.95, n_resamples: int = 1000,
                seed: int = 0) -> pd.DataFrame:
    """Leave-one-out accuracy per probe kind, each kind apart, with the SKILL as the resampling unit.

    Trigger probes and description-derived ("Use when") probes are reported apart and never pooled: a "Use when"
    probe is scored against the description it was cut from with nothing left out (:data:`PROBE_KINDS`), so
    pooling it would raise the figure by construction. The leave-one-out trigger accuracy is the ``trigger`` row.

    Parameters
    ----------
    loo : :func:`leave_one_out` output (``skill_id``, ``kind``, ``selected``).

    Returns
    -------
    DataFrame, one row per kind present (``trigger`` first): ``kind``, ``probes``, ``skills``, ``selected``,
    ``accuracy`` = selected / probes in [0, 1], ``low``, ``high`` — a percentile bootstrap over skills of
    selected / probes (:func:`evallab.metrics.intervals.ratio_interval`: a skill's triggers share its description,
    so they are not independent probes; Wilson over skills when every skill holds one probe or every skill has the
    same share) — and ``measures`` (what the kind tests, :data:`PROBE_KINDS`).
    """
    rows = []
    kinds = sorted(loo["kind"].unique(), key=lambda k: (list(PROBE_KINDS).index(k) if k in PROBE_KINDS else 9, k))
    for kind in kinds:
        g = loo[loo["kind"] == kind]
        per = g.assign(_s=g["selected"].astype(float), _n=1.0).groupby("skill_id")[["_s", "_n"]].sum()
        lo, hi = intervals.ratio_interval(per["_s"], per["_n"], n_resamples=n_resamples, confidence=confidence,
                                          seed=seed) if len(per) else (float("nan"), float("nan"))
        rows.append({"kind": kind, "probes": len(g), "skills": len(per), "selected": int(g["selected"].sum()),
                     "accuracy": float(g["selected"].mean()) if len(g) else float("nan"), "low": lo, "high": hi,
                     "measures": PROBE_KINDS.get(kind, "")})
    return pd.DataFrame(rows, columns=["kind", "probes", "skills", "selected", "accuracy", "low", "high",
                                       "measures"])


def negative_probes(catalog, *, n_negatives: int = 3, scorer: str = "keryx",
                    strip_exclusions: bool = True) -> pd.DataFrame:
    """Negatives per skill (keryx eval.ts ``synthesizeNegatives``): the first trigger (else the description) of
    each of the ``n_negatives`` nearest skills of OTHER categories (:func:`nearest_skills`).

    Returns a DataFrame: ``skill_id`` (the skill that must NOT be selected), ``category``, ``prompt``,
    ``from_skill``.
    """
    catalog = as_catalog(catalog)
    ix = build_index(catalog, scorer, "full", strip=strip_exclusions)
    queries = [s.description or s.name for s in catalog.skills]
    S = ix.score(queries, is_description=strip_exclusions)
    ids = np.array(catalog.ids)
    cats = np.array([s.category for s in catalog.skills])
    rows = []
    for i, s in enumerate(catalog.skills):
        order = np.lexsort((ids, -S[i]))
        picked = [j for j in order if j != i and cats[j] != s.category][:n_negatives]
        for j in picked:
            o = catalog.skills[j]
            rows.append((s.id, s.category, o.triggers[0] if o.triggers else o.description, o.id))
    return pd.DataFrame(rows, columns=["skill_id", "category", "prompt", "from_skill"])


def trigger_accuracy(catalog, *, scorer: str = "keryx", strip_exclusions: bool = True,
                     threshold: float = FORK_THRESHOLD, support_threshold: float = DESCRIPTION_SUPPORT_THRESHOLD,
                     n_negatives: int = 3, probes: pd.DataFrame | None = None,
                     negatives: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Trigger accuracy per skill: positives (:func:`make_probes`, graded leave-one-out) must select the skill;
    negatives (:func:`negative_probes`, live prompts on the full catalog) must not. Pass ``probes`` /
    ``negatives`` to grade fixed probe sets.

    Returns
    -------
    (per_skill, detail) :
        ``per_skill`` — ``skill_id``, ``n_pos``, ``tp``, ``n_neg``, ``tn``, ``accuracy`` = (tp + tn)/(n_pos + n_neg).
        ``detail`` — one row per probe: ``kind`` ("positive"/"negative"), ``skill_id``, ``prompt``, ``score``,
        ``selected``, ``correct``.
    """
    catalog = as_catalog(catalog)
    pos = leave_one_out(catalog, probes, scorer=scorer, strip_exclusions=strip_exclusions, threshold=threshold,
                        support_threshold=support_threshold)
    neg = negative_probes(catalog, n_negatives=n_negatives, scorer=scorer, strip_exclusions=strip_exclusions) \
        if negatives is None else negatives.reset_index(drop=True)
    if len(neg):
        S = score_matrix(list(neg.prompt), catalog, scorer=scorer, strip_exclusions=strip_exclusions)
        p = np.array([catalog.index_of(x) for x in neg.skill_id], dtype=np.int64)
        own, best, _, _ = _selection_arrays(S, p, catalog)
        neg = neg.assign(score=own, selected=(own >= threshold) & (best <= own))
    else:
        neg = neg.assign(score=[], selected=[])
    detail = pd.concat([
        pd.DataFrame({"kind": "positive", "skill_id": pos.skill_id, "prompt": pos.prompt, "score": pos.score,
                      "selected": pos.selected.astype(bool), "correct": pos.selected.astype(bool)}),
        pd.DataFrame({"kind": "negative", "skill_id": neg.skill_id, "prompt": neg.prompt, "score": neg.score,
                      "selected": neg.selected.astype(bool), "correct": ~neg.selected.astype(bool)}),
    ], ignore_index=True)
    g = detail.groupby(["skill_id", "kind"]).agg(n=("correct", "size"), ok=("correct", "sum")).unstack(fill_value=0)
    per = pd.DataFrame({"skill_id": catalog.ids}).set_index("skill_id")
    for kind, nn, ok in (("positive", "n_pos", "tp"), ("negative", "n_neg", "tn")):
        per[nn] = g[("n", kind)] if ("n", kind) in g else 0
        per[ok] = g[("ok", kind)] if ("ok", kind) in g else 0
    per = per.fillna(0).astype(int)
    tot = per.n_pos + per.n_neg
    per["accuracy"] = np.where(tot > 0, (per.tp + per.tn) / tot.where(tot > 0, 1), np.nan)
    return per.reset_index(), detail


def stripping_effect(catalog, *, scorer: str = "keryx", **kwargs) -> pd.DataFrame:
    """Before/after exclusion stripping: the probes of :func:`trigger_accuracy` (positives, and negatives drawn
    once with stripping on, as keryx does) graded with the entries' exclusion clauses kept (before) and stripped
    (after). Probes themselves are never stripped.

    Returns one row per probe: ``kind``, ``skill_id``, ``prompt``, ``score_before``, ``score_after``,
    ``correct_before``, ``correct_after``, ``changed`` (the verdict differs).
    """
    catalog = as_catalog(catalog)
    n_neg = kwargs.pop("n_negatives", 3)
    probes = kwargs.pop("probes", None)
    probes = make_probes(catalog) if probes is None else probes
    neg = negative_probes(catalog, n_negatives=n_neg, scorer=scorer, strip_exclusions=True)
    _, before = trigger_accuracy(catalog, scorer=scorer, strip_exclusions=False, probes=probes, negatives=neg,
                                 **kwargs)
    _, after = trigger_accuracy(catalog, scorer=scorer, strip_exclusions=True, probes=probes, negatives=neg,
                                **kwargs)
    out = before[["kind", "skill_id", "prompt"]].copy()
    out["score_before"], out["score_after"] = before.score.to_numpy(), after.score.to_numpy()
    out["correct_before"], out["correct_after"] = before.correct.to_numpy(), after.correct.to_numpy()
    out["changed"] = out.correct_before != out.correct_after
    return out


# ---------------------------------------------------------------------------------------------------------------
# Threshold tuning
# ---------------------------------------------------------------------------------------------------------------

#: the three thresholds keryx uses and the score each applies to (see :func:`pair_scores`)
KERYX_THRESHOLDS = {"select": FORK_THRESHOLD, "use": USE_THRESHOLD, "support": DESCRIPTION_SUPPORT_THRESHOLD}


def pair_scores(catalog, probes: pd.DataFrame | None = None, *, scorer: str = "keryx",
                strip_exclusions: bool = True, threshold: float = FORK_THRESHOLD,
                support_threshold: float = DESCRIPTION_SUPPORT_THRESHOLD,
                scores: tuple[np.ndarray, np.ndarray] | None = None) -> pd.DataFrame:
    """Every (probe, skill) pair scored, with a label and the decision score of each tunable threshold.

    Returns
    -------
    DataFrame, one row per (probe, skill) pair except the probe's same-category neighbours (keryx treats a
    same-category tie as an ambiguity for a human, not a trigger defect, so such pairs are neither positives nor
    negatives): ``probe_id``, ``probe_skill`` (the probe's own skill), ``skill_id``,
    ``label`` (1 when ``skill_id`` is the probe's own skill), ``score`` (leave-one-out full score),
    ``description_score`` (unmodified description-only score), ``outranked`` (a different-category skill strictly
    outscores this one), and three decision scores, −1 where the other conditions of the rule fail:

    - ``d_select`` — ``score`` if not outranked and ``description_score ≥ support_threshold`` (keryx 0.30 applies);
    - ``d_support`` — ``description_score`` if not outranked and ``score ≥ threshold`` (keryx 0.12 applies);
    - ``d_use`` — ``score`` (scout's use/fork bars, 0.55/0.30, apply to the top score alone).
    """
    catalog = as_catalog(catalog)
    probes = make_probes(catalog) if probes is None else probes.reset_index(drop=True)
    full, desc = scores if scores is not None else \
        loo_scores(catalog, probes, scorer=scorer, strip_exclusions=strip_exclusions)
    P, n = full.shape
    cats = np.array([s.category for s in catalog.skills])
    code = pd.factorize(cats)[0]
    C = code.max() + 1
    # best score per (probe, category), then for each skill the best score of any OTHER category
    catmax = np.full((P, C), -np.inf)
    for c in range(C):
        catmax[:, c] = full[:, code == c].max(axis=1)
    top2 = np.sort(catmax, axis=1)[:, -2:] if C > 1 else np.column_stack([np.full(P, -np.inf), catmax[:, -1]])
    first_cat = np.argmax(catmax, axis=1)
    best_other = np.where(code[None, :] == first_cat[:, None], top2[:, [0]], top2[:, [1]])
    outranked = best_other > full
    pos = np.array([catalog.index_of(x) for x in probes.skill_id], dtype=np.int64)
    label = np.zeros((P, n), dtype=np.int8)
    label[np.arange(P), pos] = 1
    ok_support = desc >= support_threshold
    keep = ((code[None, :] != code[pos][:, None]) | (label == 1)).ravel()
    return pd.DataFrame({
        "probe_id": np.repeat(probes.probe_id.to_numpy(), n),
        "probe_skill": np.repeat(probes.skill_id.to_numpy(), n),
        "skill_id": np.tile(np.array(catalog.ids, dtype=object), P),
        "label": label.ravel(),
        "score": full.ravel(),
        "description_score": desc.ravel(),
        "outranked": outranked.ravel(),
        "d_select": np.where(~outranked & ok_support, full, -1.0).ravel(),
        "d_support": np.where(~outranked & (full >= threshold), desc, -1.0).ravel(),
        "d_use": full.ravel(),
    })[keep].reset_index(drop=True)


def roc_pr(pairs: pd.DataFrame, target: str = "select") -> dict:
    """ROC and precision-recall curves of one decision score (scikit-learn ``roc_curve``,
    ``precision_recall_curve``, ``roc_auc_score``, ``average_precision_score``).

    Returns ``{"fpr", "tpr", "roc_thresholds", "precision", "recall", "pr_thresholds", "roc_auc",
    "average_precision"}`` (arrays and floats).
    """
    y, d = pairs["label"].to_numpy(), pairs[f"d_{target}"].to_numpy()
    fpr, tpr, th = roc_curve(y, d)
    prec, rec, pth = precision_recall_curve(y, d)
    two = len(np.unique(y)) == 2
    return {"fpr": fpr, "tpr": tpr, "roc_thresholds": th, "precision": prec, "recall": rec, "pr_thresholds": pth,
            "roc_auc": float(roc_auc_score(y, d)) if two else float("nan"),
            "average_precision": float(average_precision_score(y, d)) if two else float("nan")}


def confusion_by_probe(pairs: pd.DataFrame, target: str = "select", grid: Sequence[float] | None = None):
    """Per-probe confusion counts at every threshold of ``grid`` (predicted positive = decision ≥ threshold).

    Returns ``(probe_ids, probe_skills, grid, counts)`` with ``counts`` of shape (n_probes, n_grid, 4) holding
    TP, FP, FN, TN.
    """
    grid = np.round(np.linspace(0, 1, 101), 10) if grid is None else np.asarray(grid, dtype=float)
    if len(pairs) == 0:
        raise EvallabError("no (probe, skill) pairs to tune on: the catalog gave no probes")
    p = pairs.sort_values(["probe_id"], kind="mergesort")
    ids, start = np.unique(p.probe_id.to_numpy(), return_index=True)
    d = p[f"d_{target}"].to_numpy()
    y = p["label"].to_numpy().astype(bool)
    pred = d[:, None] >= grid[None, :]
    tp = np.add.reduceat(pred & y[:, None], start, axis=0)
    fp = np.add.reduceat(pred & ~y[:, None], start, axis=0)
    npos = np.add.reduceat(y.astype(np.int64), start)[:, None]
    nn = np.diff(np.append(start, len(p)))[:, None]
    fn = npos - tp
    tn = (nn - npos) - fp
    skills = p.probe_skill.to_numpy()[start]
    return ids, skills, grid, np.stack([tp, fp, fn, tn], axis=-1).astype(float)


def _metrics(c: np.ndarray) -> dict[str, np.ndarray]:
    """Objective values per threshold from summed counts (..., 4) = TP, FP, FN, TN.

    accuracy = (TP + TN) / all; F1 = 2TP / (2TP + FP + FN); balanced accuracy = (TPR + TNR) / 2 (Brodersen et al.
    2010; scikit-learn ``balanced_accuracy_score``); MCC = (TP·TN − FP·FN) / √((TP+FP)(TP+FN)(TN+FP)(TN+FN))
    (Matthews 1975; scikit-learn ``matthews_corrcoef``, which returns 0 when a margin is empty — kept here);
    recall = TP / (TP + FN). NaN where a denominator is 0 (accuracy, F1, recall; balanced accuracy when a class
    is absent).
    """
    tp, fp, fn, tn = c[..., 0], c[..., 1], c[..., 2], c[..., 3]
    tot = tp + fp + fn + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(tot > 0, (tp + tn) / tot, np.nan)
        f1 = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), np.nan)
        rec = np.where(tp + fn > 0, tp / (tp + fn), np.nan)
        tnr = np.where(tn + fp > 0, tn / (tn + fp), np.nan)
        bal = (rec + tnr) / 2
        den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        mcc = np.where(den > 0, (tp * tn - fp * fn) / np.where(den > 0, den, 1), 0.0)
    return {"accuracy": acc, "f1": f1, "balanced_accuracy": bal, "mcc": mcc, "recall": rec, "fp": fp}


#: objectives a threshold can be tuned for. "accuracy" is kept for reference only: when negatives dominate (one
#: own skill per probe against dozens of others) rejecting every pair already scores the base rate, so accuracy
#: barely tells thresholds apart — read it with ``select_nothing_value`` (the base rate) beside it.
OBJECTIVES = ("f1", "balanced_accuracy", "mcc", "recall_at_zero_fp", "accuracy")
#: the objectives whose value is a maximised metric (the zero-FP objective is a constrained recall)
_MAXIMISED = ("accuracy", "f1", "balanced_accuracy", "mcc")


def select_nothing_value(counts: np.ndarray, objective: str) -> float:
    """The value ``objective`` takes when no pair is selected (every pair predicted negative), from summed counts
    (4,) = TP, FP, FN, TN at any threshold — the chance line a tuned value must beat.

    accuracy → the share of negative pairs (the base rate); F1 → 0; balanced accuracy → 0.5; MCC → 0
    (scikit-learn's convention for an empty margin); recall at zero FP → 0 (selecting nothing is always free of
    false positives). NaN when there are no pairs (balanced accuracy: when a class is absent).
    """
    tp, fp, fn, tn = (float(x) for x in counts)
    pos, neg = tp + fn, fp + tn
    if objective == "accuracy":
        return neg / (pos + neg) if pos + neg else float("nan")
    if objective in ("f1", "mcc", "recall_at_zero_fp"):
        return 0.0 if pos + neg else float("nan")
    if objective == "balanced_accuracy":
        return 0.5 if pos and neg else float("nan")
    raise EvallabError(f"objective must be one of {OBJECTIVES}, got {objective!r}")


def choose_threshold(counts: np.ndarray, grid: np.ndarray, objective: str) -> tuple[float, float]:
    """The threshold of ``grid`` that optimises ``objective`` on summed counts (n_grid, 4) and the value reached.

    "f1", "balanced_accuracy", "mcc", "accuracy": the maximiser (the smallest threshold among ties);
    "recall_at_zero_fp": the smallest threshold with no false positive (hence the highest recall without one).
    When no threshold of the grid is free of false positives (e.g. a different-category skill ties the right one
    at 1.0), the threshold AND the value are NaN: the constraint cannot be met on the grid (only selecting nothing
    avoids them, see :func:`select_nothing_value`) — never reported as a recall of 0.
    """
    m = _metrics(counts)
    if objective in _MAXIMISED:
        v = m[objective]
        if np.all(np.isnan(v)):
            return float("nan"), float("nan")
        k = int(np.nanargmax(v))
        return float(grid[k]), float(v[k])
    if objective == "recall_at_zero_fp":
        ok = np.flatnonzero(m["fp"] == 0)
        if len(ok) == 0:
            return float("nan"), float("nan")
        k = int(ok[0])
        return float(grid[k]), float(m["recall"][k])
    raise EvallabError(f"objective must be one of {OBJECTIVES}, got {objective!r}")


def _choose_batch(sums: np.ndarray, grid: np.ndarray, objective: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`choose_threshold` for a batch of summed counts (B, n_grid, 4) → (thresholds (B,), values (B,))."""
    m = _metrics(sums)
    if objective in _MAXIMISED:
        v = m[objective]
        allnan = np.all(np.isnan(v), axis=1)
        k = np.argmax(np.where(np.isnan(v), -np.inf, v), axis=1)
        thr = np.where(allnan, np.nan, grid[k])
        val = np.where(allnan, np.nan, v[np.arange(len(k)), k])
        return thr, val
    if objective == "recall_at_zero_fp":
        ok = m["fp"] == 0
        has = ok.any(axis=1)
        k = np.argmax(ok, axis=1)
        return np.where(has, grid[k], np.nan), np.where(has, m["recall"][np.arange(len(k)), k], np.nan)
    raise EvallabError(f"objective must be one of {OBJECTIVES}, got {objective!r}")


def _bootstrap_choice(counts: np.ndarray, grid: np.ndarray, objective: str, *, n_resamples: int,
                      confidence: float, seed: int) -> tuple[float, float, float, float, str]:
    """Percentile bootstrap over clusters — the rows of ``counts``, one per skill — (``scipy.stats.bootstrap``,
    vectorised) of the chosen threshold and of the value it reaches.

    Resamples where the choice is undefined (NaN: no zero-FP threshold) are left out of the percentiles. When the
    percentile interval is a single point (every resample, or more than the interval's share of them, gives the
    same threshold or value) it would read [x, x] and claim a certainty the data do not hold: that interval is
    NaN and the returned note says how many resamples sit on the point.

    Returns ``(threshold_low, threshold_high, value_low, value_high, note)``.
    """
    P = len(counts)
    flat = counts.reshape(P, -1)

    def sums(idx):
        idx = np.atleast_2d(np.asarray(idx, dtype=np.int64))
        B = idx.shape[0]
        W = np.bincount((np.arange(B)[:, None] * P + idx).ravel(), minlength=B * P).reshape(B, P).astype(float)
        return (W @ flat).reshape(idx.shape[0], *counts.shape[1:])

    out, notes = [], []
    for part, what in ((0, "threshold"), (1, "value")):
        def stat(idx, axis=-1, part=part):
            r = _choose_batch(sums(idx), grid, objective)[part]
            return r if np.ndim(idx) > 1 else r[0]

        with warnings.catch_warnings():  # a constant or undefined choice is handled below
            warnings.simplefilter("ignore")
            res = sps.bootstrap((np.arange(P),), stat, vectorized=True, n_resamples=n_resamples, batch=100,
                                confidence_level=confidence, method="percentile",
                                random_state=np.random.default_rng(seed))
        dist = np.asarray(res.bootstrap_distribution, dtype=float)
        dist = dist[np.isfinite(dist)]
        if len(dist) == 0:
            out += [np.nan, np.nan]
        else:
            a = (1 - confidence) / 2
            lo, hi = (float(x) for x in np.quantile(dist, [a, 1 - a]))
            if lo == hi:  # a point: say how many resamples sit there instead of printing [x, x]
                out += [np.nan, np.nan]
                share = float(np.mean(dist == lo))
                notes.append(f"{share:.0%} of bootstrap resamples give the same {what} ({lo:.3g}): the "
                             f"{confidence:.0%} percentile interval is that single point, so none is shown")
            else:
                out += [lo, hi]
    return (*out, "; ".join(notes))


def metric_at(counts: np.ndarray, grid: np.ndarray, objective: str, threshold: float) -> float:
    """The objective's metric at the grid point nearest ``threshold``: accuracy, F1, balanced accuracy or MCC; for
    "recall_at_zero_fp" the recall under the SAME constraint as the tuned threshold — NaN when that threshold lets
    a false positive through (see :func:`fp_at` for how many)."""
    k = int(np.argmin(np.abs(grid - threshold)))
    m = _metrics(counts[k])
    if objective == "recall_at_zero_fp":
        return float(m["recall"]) if m["fp"] == 0 else float("nan")
    return float(m[objective])


def fp_at(counts: np.ndarray, grid: np.ndarray, threshold: float) -> int:
    """False-positive pairs at the grid point nearest ``threshold`` (counts summed over probes, (n_grid, 4))."""
    return int(counts[int(np.argmin(np.abs(grid - threshold))), 1])


@dataclass
class TuningResult:
    """Chosen thresholds of one decision score.

    ``table`` has one row per objective: ``threshold``, ``value`` (the metric reached), bootstrap intervals over
    skills (``threshold_low/high``, ``value_low/high``), the cross-validated estimate (``cv_threshold`` mean and
    ``cv_threshold_sd`` over folds, ``cv_value`` mean held-out metric, ``cv_folds``), ``keryx_threshold`` /
    ``keryx_value`` (the metric at keryx's constant, under the same constraint), ``fp`` / ``keryx_fp`` (false
    positives at each), ``positives`` / ``negatives`` (pairs), ``select_nothing_value`` (the objective when no pair
    is selected: the base rate for accuracy) and ``note`` (why a value is NaN)."""

    target: str
    table: pd.DataFrame
    grid: np.ndarray
    curve: pd.DataFrame  # per threshold: accuracy, f1, balanced_accuracy, mcc, recall, fp


def tune_thresholds(pairs: pd.DataFrame, target: str = "select", *, grid: Sequence[float] | None = None,
                    objectives: Sequence[str] = OBJECTIVES, n_resamples: int = 200, confidence: float = 0.95,
                    n_splits: int = 5, seed: int = 0, keryx_threshold: float | None = None) -> TuningResult:
    """Tune one threshold on (probe, skill) pairs.

    Parameters
    ----------
    pairs : :func:`pair_scores` output.
    target : "select" (keryx 0.30), "support" (0.12) or "use" (0.55): which decision score to threshold.
    grid : candidate thresholds (default 0, 0.01, …, 1).
    objectives : any of :data:`OBJECTIVES` (see :func:`choose_threshold`). Plain accuracy is a poor objective when
        negatives dominate: its row carries the base rate in ``select_nothing_value``.
    n_resamples : bootstrap resamples over skills (a skill's probes are not independent; ``scipy.stats.bootstrap``,
        percentile, vectorised); 0 skips the intervals.
    n_splits : folds of scikit-learn ``GroupKFold`` over probes grouped by their skill (a skill's probes never sit
        on both sides); the threshold is chosen on the training folds and measured on the held-out fold.
    keryx_threshold : the constant to compare with (default :data:`KERYX_THRESHOLDS` [target]). It is evaluated
        under the same constraint as the tuned threshold: for "recall_at_zero_fp" its value is NaN when keryx's
        constant lets false positives through (``keryx_fp`` says how many), never its unconstrained recall.

    Returns
    -------
    TuningResult
    """
    if target not in KERYX_THRESHOLDS:
        raise EvallabError(f"target must be one of {tuple(KERYX_THRESHOLDS)}, got {target!r}")
    for obj in objectives:
        if obj not in OBJECTIVES:
            raise EvallabError(f"objective must be one of {OBJECTIVES}, got {obj!r}")
    kt = KERYX_THRESHOLDS[target] if keryx_threshold is None else keryx_threshold
    _, skills, g, counts = confusion_by_probe(pairs, target, grid)
    total = counts.sum(0)
    P = len(counts)
    groups = pd.factorize(skills)[0]
    by_skill = np.zeros((groups.max() + 1 if len(groups) else 0, *counts.shape[1:]))
    np.add.at(by_skill, groups, counts)  # a skill's probes are not independent: the skill is the resampling unit
    k = min(n_splits, len(np.unique(groups)))
    positives, negatives = int(total[0, 0] + total[0, 2]), int(total[0, 1] + total[0, 3])
    rows = []
    for obj in objectives:
        thr, val = choose_threshold(total, g, obj)
        kfp = fp_at(total, g, kt)
        row = {"target": target, "objective": obj, "threshold": thr, "value": val,
               "keryx_threshold": kt, "keryx_value": metric_at(total, g, obj, kt),
               "fp": fp_at(total, g, thr) if np.isfinite(thr) else np.nan, "keryx_fp": kfp,
               "positives": positives, "negatives": negatives,
               "select_nothing_value": select_nothing_value(total[0], obj)}
        notes = []
        if obj == "recall_at_zero_fp":
            if not np.isfinite(thr):
                notes.append(f"no threshold in [{g.min():.2f}, {g.max():.2f}] is free of false positives "
                             f"(at {g.max():.2f}: {fp_at(total, g, g.max())}); only selecting nothing is, with "
                             "recall 0")
            if kfp:
                notes.append(f"keryx's {kt:.2f} lets {kfp} false positive(s) through: the zero-FP constraint "
                             "fails there")
        if n_resamples > 0 and len(by_skill) >= 2:
            (row["threshold_low"], row["threshold_high"], row["value_low"], row["value_high"],
             bnote) = _bootstrap_choice(by_skill, g, obj, n_resamples=n_resamples, confidence=confidence,
                                        seed=seed)
            if bnote and np.isfinite(thr):
                notes.append(bnote)
        else:
            row.update(threshold_low=np.nan, threshold_high=np.nan, value_low=np.nan, value_high=np.nan)
        if k >= 2:
            ths, vals = [], []
            for tr, te in GroupKFold(n_splits=k).split(np.zeros(P), groups=groups):
                t, _ = choose_threshold(counts[tr].sum(0), g, obj)
                if np.isnan(t):
                    continue
                ths.append(t)
                vals.append(metric_at(counts[te].sum(0), g, obj, t))
            row.update(cv_threshold=float(np.mean(ths)) if ths else np.nan,
                       cv_threshold_sd=float(np.std(ths, ddof=1)) if len(ths) > 1 else np.nan,
                       cv_value=float(np.nanmean(vals)) if np.isfinite(vals).any() else np.nan, cv_folds=len(ths))
        else:
            row.update(cv_threshold=np.nan, cv_threshold_sd=np.nan, cv_value=np.nan, cv_folds=0)
        row["note"] = "; ".join(notes)
        rows.append(row)
    m = _metrics(total)
    curve = pd.DataFrame({"threshold": g, **{c: m[c] for c in ("accuracy", "f1", "balanced_accuracy", "mcc",
                                                                 "recall", "fp")}})
    return TuningResult(target, pd.DataFrame(rows), g, curve)



# ---------------------------------------------------------------------------------------------------------------
# Comparison and figures (used by notebooks/04_trigger_thresholds.ipynb)
# ---------------------------------------------------------------------------------------------------------------

def compare_scorers(catalog, scorers: Sequence[str] = SCORERS, *, strip_exclusions: bool = True,
                    probes: pd.DataFrame | None = None, grid: Sequence[float] | None = None,
                    target: str = "select") -> tuple[pd.DataFrame, dict[str, dict]]:
    """Leave-one-out trigger accuracy, ROC AUC, average precision and the F1-best threshold of each scorer, on the
    same probes (one :func:`pair_scores` per scorer; no bootstrap).

    Probes default to the catalog's TRIGGER probes (``make_probes(catalog, source="triggers")``): a "Use when"
    probe is cut from its skill's own description and nothing is left out, so it is scored against its own source
    text and says nothing about routing.

    Score scales differ across scorers, so keryx's constants (select 0.30, support 0.12) mean something for the
    keryx scorer only: each scorer's leave-one-out accuracy is reported at ITS OWN F1-chosen select threshold
    (chosen on the ``d_select`` decision score over ``grid``, the description-support gate at keryx's 0.12, as
    :func:`pair_scores` builds it) and, under its own name, at keryx's thresholds.

    Returns
    -------
    (table, curves) : ``table`` one row per scorer: ``scorer``, ``probes``, ``select_threshold`` (F1-best select
        threshold of this scorer), ``loo_trigger_accuracy_at_f1_threshold`` (share of probes selected
        leave-one-out at ``select_threshold``, in [0, 1]; NaN when no threshold is chosen),
        ``loo_trigger_accuracy_at_keryx_thresholds`` (at 0.30 / 0.12 — comparable for the keryx scorer only),
        ``roc_auc``, ``average_precision`` (of ``target``'s decision score), ``f1_threshold`` and ``f1`` (F1-best
        threshold of ``target`` and its F1), ``f1_at_keryx`` (F1 at keryx's constant for ``target``); ``curves``
        maps scorer → :func:`roc_pr` output.
    """
    catalog = as_catalog(catalog)
    probes = make_probes(catalog, source="triggers") if probes is None else probes
    rows, curves = [], {}
    for sc in scorers:
        sco = loo_scores(catalog, probes, scorer=sc, strip_exclusions=strip_exclusions)
        loo_k = leave_one_out(catalog, probes, scores=sco)
        pairs = pair_scores(catalog, probes, scores=sco)
        cur = roc_pr(pairs, target)
        _, _, g, counts = confusion_by_probe(pairs, target, grid)
        thr, f1 = choose_threshold(counts.sum(0), g, "f1")
        if target == "select":
            sel_thr = thr
        else:
            _, _, gs, cs = confusion_by_probe(pairs, "select", grid)
            sel_thr, _ = choose_threshold(cs.sum(0), gs, "f1")
        own = float(leave_one_out(catalog, probes, scores=sco, threshold=sel_thr).selected.mean()) \
            if np.isfinite(sel_thr) else float("nan")
        curves[sc] = cur
        rows.append({"scorer": sc, "probes": len(probes), "select_threshold": sel_thr,
                     "loo_trigger_accuracy_at_f1_threshold": own,
                     "loo_trigger_accuracy_at_keryx_thresholds": float(loo_k.selected.mean()),
                     "roc_auc": cur["roc_auc"], "average_precision": cur["average_precision"], "f1_threshold": thr,
                     "f1": f1, "f1_at_keryx": metric_at(counts.sum(0), g, "f1", KERYX_THRESHOLDS[target])})
    return pd.DataFrame(rows), curves


__all__ = [
    "BM25Index", "DESCRIPTION_SUPPORT_THRESHOLD", "FORK_THRESHOLD", "KERYX_THRESHOLDS", "KeryxIndex",
    "OBJECTIVES", "STOP_WORDS", "SCORERS", "ScoutResult", "SelectionCheck", "TfidfIndex", "TuningResult",
    "USE_THRESHOLD", "build_index", "check_selected", "check_selected_leave_one_out",
    "choose_threshold", "compare_scorers", "confusion_by_probe", "entry_token_list", "entry_parts", "entry_text",
    "entry_tokens", "fp_at", "idf", "PROBE_KINDS", "select_nothing_value",
    "leave_one_out", "loo_summary", "loo_scores", "make_probes", "metric_at", "nearest_skills",
    "negative_probes", "normalize", "pair_scores", "query_tokens", "rank", "roc_pr",
    "score_matrix", "scout", "stem", "strip_exclusions", "stripping_effect", "token_set", "tokenize",
    "trigger_accuracy", "tune_thresholds", "use_when_clause",
]
