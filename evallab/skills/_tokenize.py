"""The texts a lexical trigger router scores and their tokens: keryx's tokenizer, stemmer and stop list, the
exclusion-clause stripper, and the text/tokens of a catalog entry or a query.

Reproduces keryx's ``normalizeRouteText`` / ``stemLite`` / ``stripExclusionClauses`` exactly
(``data/keryx/SOURCE.md``, "Facts about keryx's lexical trigger scorer"; spec 000, section "Exclusion clauses in a
description/triggers are safe to write").

- :func:`tokenize` / :func:`token_set` / :func:`stem` / :func:`normalize` / :data:`STOP_WORDS` — split camelCase,
  lowercase, runs of non-letter/non-digit characters → spaces, tokens of 3+ characters not in the stop list, light
  stemming.
- :func:`strip_exclusions` — drop exclusion-clause text ("Not for …", "(see …)", "Use `x` instead", …) from a
  description-shaped text; linear time (no nested quantifiers).
- :func:`entry_parts` / :func:`entry_text` / :func:`entry_tokens` / :func:`entry_token_list` /
  :func:`query_tokens` — what an entry (:class:`~evallab.skills.Skill`) and a query are scored on.
"""

from __future__ import annotations

import re
from functools import lru_cache

from evallab.errors import EvallabError
from evallab.skills._catalogs import Skill

#: keryx's routing stop list (the English words of ``ROUTE_STOPWORDS``, as listed in SOURCE.md)
STOP_WORDS = frozenset(
    "the and for with this that your are from into out run use used make get can please help want them".split()
)

FIELDS = ("full", "description-only")

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
