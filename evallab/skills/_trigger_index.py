"""The lexical trigger scorers: keryx's IDF-weighted query coverage, and two library scorers beside it for
comparison (scikit-learn TF-IDF cosine, ``bm25s`` BM25), over the tokens of :mod:`evallab.skills._tokenize`.

- :func:`idf`, :class:`KeryxIndex` — keryx's scorer exactly (``data/keryx/SOURCE.md``, "Facts about keryx's
  lexical trigger scorer").
- :class:`TfidfIndex`, :class:`BM25Index` — the same tokens under TF-IDF cosine and normalised BM25.
- :func:`build_index` / :func:`score_matrix` — an index by scorer name; queries × skills scores.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from scipy import sparse

with warnings.catch_warnings():
    # bm25s imports tqdm.auto, which in a Jupyter kernel without ipywidgets warns "IProgress not found" at import
    # time; evallab never shows bm25s's progress bars (show_progress=False), so the warning says nothing of a run
    warnings.filterwarnings("ignore", message="IProgress not found")
    import bm25s
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import linear_kernel

from evallab.errors import EvallabError
from evallab.skills._catalogs import Catalog, as_catalog
from evallab.skills._tokenize import (
    FIELDS,
    entry_token_list,
    entry_tokens,
    query_tokens,
    strip_exclusions,
    tokenize,
)

SCORERS = ("keryx", "tfidf", "bm25")

#: scores are rounded to this many decimals before any comparison, so ties are ties whatever the summation order
_DECIMALS = 12


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
