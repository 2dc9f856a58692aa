"""Trigger accuracy: positive probes graded leave-one-out (keryx ``checkSkillSelectedLeaveOneOut``), negative
probes from the nearest skills of other categories (keryx eval.ts), accuracy per probe kind with skill-clustered
intervals, and the effect of exclusion stripping.

- :func:`make_probes`, :data:`PROBE_KINDS`, :func:`use_when_clause` — the probes and what each kind measures.
- :func:`loo_scores`, :func:`leave_one_out` — every probe against its own reduced catalog; the keryx path is
  vectorised (one sparse product for every probe) with a naive per-probe rebuild kept as the reference.
- :func:`loo_summary` — leave-one-out accuracy per probe kind (trigger probes never pooled with "Use when" ones).
- :func:`negative_probes`, :func:`trigger_accuracy`, :func:`skill_accuracy_summary`, :func:`stripping_effect`,
  :func:`stripping_summary` — keryx's trigger grader, and what exclusion stripping changes.

The tables are :class:`~evallab.Results`: each estimate column carries its label, unit, interval columns and the
method that computed the interval (a percentile bootstrap over SKILLS — a skill's triggers share its description,
so its probes are not independent — or Wilson where every skill holds one probe, named per row).
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import pandas as pd
from scipy import sparse

from evallab._results import Measure, Results, results
from evallab.errors import EvallabError
from evallab.metrics import _intervals as intervals
from evallab.skills._catalogs import Catalog, Skill, as_catalog
from evallab.skills._tokenize import (
    _part_tokens,
    entry_token_list,
    query_tokens,
    strip_exclusions,
    token_set,
    tokenize,
)
from evallab.skills._trigger_index import _DECIMALS, KeryxIndex, build_index, idf, score_matrix
from evallab.skills._trigger_select import DESCRIPTION_SUPPORT_THRESHOLD, FORK_THRESHOLD, _selection_arrays

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
    trigger only the skill's row and the df are updated, a term left with df 0 gets weight 0 (a fresh fit drops
    it from the vocabulary), and the IDF is refitted with scikit-learn's ``TfidfTransformer`` formulas (smooth IDF
    ``ln((1 + n) / (1 + df)) + 1``, term counts times IDF, rows l2-normalised)
    — the numbers of a ``TfidfVectorizer`` refit (checked against one in the tests), without its per-fit input
    validation."""
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

    def tfidf(X: np.ndarray, idf_: np.ndarray) -> np.ndarray:
        X = X * idf_
        norms = np.sqrt(np.einsum("ij,ij->i", X, X))
        return X / np.where(norms > 0, norms, 1.0)[:, None]

    C = counts(docs).toarray()
    Qc = counts([tokenize(q) for q in probes.prompt]).toarray()
    n = C.shape[0] + 1  # smooth_idf: one extra document holding every term
    has = C > 0
    df0 = has.sum(0)
    out = np.zeros((len(probes), len(catalog)))
    groups = probes.groupby([probes.skill_id, probes.source_trigger.fillna("\0")], sort=False).indices
    for (sid, trig), idx in groups.items():
        M, df = C, df0
        if trig != "\0":
            k = catalog.index_of(sid)
            row = counts([entry_token_list(catalog.without_trigger(sid, trig).skills[k], "full", strip=strip)])
            M = C.copy()
            M[k] = row.toarray()[0]
            df = df0 - has[k] + (M[k] > 0)
        # a term no entry holds any more is out of the refitted vocabulary: weight 0
        idf_ = np.where(df > 0, np.log(n / (df + 1)) + 1, 0.0)
        out[idx] = tfidf(Qc[idx], idf_) @ tfidf(M, idf_).T
    return np.round(np.clip(out, 0.0, 1.0), _DECIMALS)


def _loo_full_scores_bm25(catalog: Catalog, probes: pd.DataFrame, strip: bool) -> np.ndarray:
    """Leave-one-out BM25 scores (:class:`~evallab.skills._trigger_index.BM25Index`) without one ``bm25s`` index per
    left-out trigger: the term-count matrix is built once and, per left-out trigger, the skill's row, the document
    lengths, df and the average length are updated and bm25s's Lucene formulas applied to the whole matrix at
    once — IDF ``ln(1 + (N − df + 0.5) / (df + 0.5))`` (stored in float32, as bm25s stores it), term weight
    ``tf / (k1 · (1 − b + b · |d| / avgdl) + tf)``, per-term scores in float32 summed over the query's terms in
    bm25s's order, then BM25Index's normalisation. Equal to a refit (checked against one in the tests)."""
    k1, b = 1.5, 0.75  # BM25Index's bm25s.BM25() defaults
    docs = [entry_token_list(s, "full", strip=strip) or ["\u2205"] for s in catalog.skills]
    terms = sorted({t for d in docs for t in d} | {"\u2205"})
    col = {t: j for j, t in enumerate(terms)}
    N, V = len(docs), len(terms)

    def tf_row(d: list[str]) -> np.ndarray:
        r = np.zeros(V)
        for t, c in Counter(d).items():
            r[col[t]] = c
        return r

    TF = np.stack([tf_row(d) for d in docs]) if N else np.zeros((0, V))
    DL = np.array([len(d) for d in docs])
    idf_of_df = np.array([math.log(1 + (N - df + 0.5) / (df + 0.5)) for df in range(N + 1)],
                         dtype=np.float32).astype(float)
    # each probe's tokens in bm25s's order (sorted), as columns of the term matrix (-1: in no entry)
    query_cols = [[col.get(t, -1) for t in sorted(query_tokens(q))] for q in probes.prompt]
    out = np.zeros((len(probes), N))
    groups = probes.groupby([probes.skill_id, probes.source_trigger.fillna("\0")], sort=False).indices
    for (sid, trig), idx in groups.items():
        tf, dl = TF, DL
        if trig != "\0":
            k = catalog.index_of(sid)
            reduced = entry_token_list(catalog.without_trigger(sid, trig).skills[k], "full", strip=strip)
            reduced = reduced or ["\u2205"]
            tf, dl = TF.copy(), DL.copy()
            tf[k], dl[k] = tf_row(reduced), len(reduced)
        has = tf > 0
        df = has.sum(0)
        present = df > 0
        avg = np.array(dl).mean()
        norm = k1 * ((1 - b) + b * dl / avg)
        S = np.where(has, idf_of_df[df][None, :] * (tf / (norm[:, None] + tf)), 0.0).astype(np.float32)
        tmax = S.max(axis=0, initial=0.0).astype(float)
        unseen = float(tmax[present].max(initial=1.0))
        for i in idx:
            known = [j for j in query_cols[i] if j >= 0 and present[j]]  # in the refitted vocabulary
            den = float(tmax[known].sum()) + unseen * (len(query_cols[i]) - len(known))
            if den > 0 and known:
                acc = np.zeros(N, dtype=np.float32)
                for j in known:
                    acc += S[:, j]
                out[i] = acc / den
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
    elif scorer == "bm25":
        full = _loo_full_scores_bm25(catalog, probes, strip_exclusions)
    else:
        full = _loo_full_scores_refit(catalog, probes, scorer, strip_exclusions)
    desc = build_index(catalog, scorer, "description-only", strip=strip_exclusions).score(list(probes.prompt))
    return full, desc


#: the measures of :func:`leave_one_out` (one row per probe)
LOO_MEASURES = [
    Measure("score", "Score", "coefficient", digits=2),
    Measure("description_score", "Description score", "coefficient", digits=2),
    Measure("best_other", "Best other-category score", "coefficient", digits=2),
    Measure("rank", "Rank", "count"),
]


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
    Results
        The probe columns (:func:`make_probes`) plus ``score`` (leave-one-out full score), ``description_score``,
        ``best_other`` (highest different-category score) — coverage scores in [0, 1], unitless — ``outranked_by``
        (the different-category skill that strictly outscores the probe's own, else None), ``rank`` (1-based) and
        ``selected`` (bool). Its mean of ``selected`` is the leave-one-out trigger accuracy
        (:func:`loo_summary`). Measures :data:`LOO_MEASURES`; no interval (one row per probe). ``scores`` reuses
        a :func:`loo_scores` result.
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
    return results(out, LOO_MEASURES, keys=["skill_id", "prompt"])


#: what each probe kind of :func:`make_probes` measures, for tables and notes
PROBE_KINDS = {
    "trigger": "a skill's own trigger, left out of the index: the leave-one-out test of the router",
    "use_when": ("a skill's \"Use when\" clause (the skill has no triggers), cut from its own description with "
                 "nothing left out: scored against its own source text, so selected by construction unless "
                 "another category outscores it — not a test of the router"),
}


#: the measures of :func:`loo_summary`
LOO_SUMMARY_MEASURES = [
    Measure("probes", "Probes", "count"),
    Measure("skills", "Skills", "count"),
    Measure("selected", "Selected", "count", n="probes", n_unit="probes"),
    Measure("accuracy", "Leave-one-out accuracy", "proportion", "accuracy_low", "accuracy_high",
            method_column="accuracy_method", n="probes", n_unit="probes"),
]


def loo_summary(loo: pd.DataFrame, *, confidence: float = 0.95, n_resamples: int = 1000,
                seed: int = 0) -> Results:
    """Leave-one-out accuracy per probe kind, each kind apart, with the SKILL as the resampling unit.

    Trigger probes and description-derived ("Use when") probes are reported apart and never pooled: a "Use when"
    probe is scored against the description it was cut from with nothing left out (:data:`PROBE_KINDS`), so
    pooling it would raise the figure by construction. The leave-one-out trigger accuracy is the ``trigger`` row.

    Parameters
    ----------
    loo : DataFrame
        :func:`leave_one_out` output (``skill_id``, ``kind``, ``selected``).
    confidence : float, default 0.95
        Level of the intervals.
    n_resamples : int, default 1000
        Bootstrap resamples over skills; 0: no bootstrap (a kind whose skills hold one probe each keeps its Wilson
        interval).
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row per kind present (``trigger`` first): ``kind``; ``probes``, ``skills``, ``selected`` (counts);
        ``accuracy`` = selected / probes (a proportion) with ``accuracy_low`` / ``accuracy_high`` from
        :func:`evallab.metrics._intervals.ratio_interval_method` over per-skill counts — a percentile bootstrap
        over skills (a skill's triggers share its description, so they are not independent probes), Wilson when
        every skill holds one probe, the Wilson interval on the skill count when every skill has the same share
        — and ``accuracy_method`` naming which; ``measures`` (what the kind tests, :data:`PROBE_KINDS`); ``note``
        (why an interval is missing). Measures :data:`LOO_SUMMARY_MEASURES` (n: probes).

    Examples
    --------
    >>> import pandas as pd
    >>> loo = pd.DataFrame({"skill_id": ["a", "b", "c"], "kind": "trigger", "selected": [True, True, False]})
    >>> s = loo_summary(loo)
    >>> str(s.estimate("accuracy", 0))
    '66.7% [20.8, 93.9] (95% CI, Wilson score, n = 3 probes)'
    """
    rows = []
    kinds = sorted(loo["kind"].unique(), key=lambda k: (list(PROBE_KINDS).index(k) if k in PROBE_KINDS else 9, k))
    for kind in kinds:
        g = loo[loo["kind"] == kind]
        per = g.assign(_s=g["selected"].astype(float), _n=1.0).groupby("skill_id")[["_s", "_n"]].sum()
        lo, hi, method = intervals.ratio_interval_method(per["_s"], per["_n"], n_resamples=n_resamples,
                                                         confidence=confidence, seed=seed, unit="skill") \
            if len(per) else (float("nan"), float("nan"), "")
        acc = float(g["selected"].mean()) if len(g) else float("nan")
        rows.append({"kind": kind, "probes": len(g), "skills": len(per), "selected": int(g["selected"].sum()),
                     "accuracy": acc, "accuracy_low": lo, "accuracy_high": hi, "accuracy_method": method,
                     "measures": PROBE_KINDS.get(kind, ""),
                     "note": intervals.no_interval_note(acc, lo, hi, units=len(per), n_resamples=n_resamples,
                                                        unit_name="skill")})
    return results(pd.DataFrame(rows, columns=["kind", "probes", "skills", "selected", "accuracy", "accuracy_low",
                                               "accuracy_high", "accuracy_method", "measures", "note"]),
                   LOO_SUMMARY_MEASURES, level=confidence, keys=["kind"])


def negative_probes(catalog, *, n_negatives: int = 3, scorer: str = "keryx",
                    strip_exclusions: bool = True) -> pd.DataFrame:
    """Negatives per skill (keryx eval.ts ``synthesizeNegatives``): the first trigger (else the description) of
    each of the ``n_negatives`` nearest skills of OTHER categories (:func:`~evallab.skills.nearest_skills`).

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


#: the measures of :func:`trigger_accuracy`'s per-skill table
SKILL_ACCURACY_MEASURES = [
    Measure("n_pos", "Positives", "count"),
    Measure("tp", "Selected", "count", n="n_pos", n_unit="positive probes"),
    Measure("n_neg", "Negatives", "count"),
    Measure("tn", "Rejected", "count", n="n_neg", n_unit="negative probes"),
    Measure("probes", "Probes", "count"),
    Measure("accuracy", "Trigger accuracy", "proportion", n="probes", n_unit="probes"),
]


def trigger_accuracy(catalog, *, scorer: str = "keryx", strip_exclusions: bool = True,
                     threshold: float = FORK_THRESHOLD, support_threshold: float = DESCRIPTION_SUPPORT_THRESHOLD,
                     n_negatives: int = 3, probes: pd.DataFrame | None = None,
                     negatives: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Trigger accuracy per skill: positives (:func:`make_probes`, graded leave-one-out) must select the skill;
    negatives (:func:`negative_probes`, live prompts on the full catalog) must not. Pass ``probes`` /
    ``negatives`` to grade fixed probe sets.

    Returns
    -------
    (per_skill, detail)
        ``per_skill`` (a :class:`~evallab.Results`) — one row per skill of the catalog: ``skill_id``; ``n_pos``
        (positive probes), ``tp`` (of them selected), ``n_neg`` (negative probes), ``tn`` (of them rejected),
        ``probes`` = n_pos + n_neg (counts); ``accuracy`` = (tp + tn) / probes (a proportion; NaN for a skill
        without probes). Measures :data:`SKILL_ACCURACY_MEASURES` (n: probes); no interval (see
        :func:`skill_accuracy_summary` for the mean over skills with its interval).
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
    per["probes"] = tot
    per["accuracy"] = np.where(tot > 0, (per.tp + per.tn) / tot.where(tot > 0, 1), np.nan)
    return results(per.reset_index(), SKILL_ACCURACY_MEASURES, keys=["skill_id"]), detail


#: the measures of :func:`skill_accuracy_summary`
SKILL_SUMMARY_MEASURES = [
    Measure("skills", "Skills", "count"),
    Measure("perfect", "Perfect skills", "count", n="skills", n_unit="skills"),
    Measure("mean_accuracy", "Mean per-skill trigger accuracy", "proportion", "mean_accuracy_low",
            "mean_accuracy_high", method_column="mean_accuracy_method", n="skills", n_unit="skills"),
]


def skill_accuracy_summary(per_skill: pd.DataFrame, *, confidence: float = 0.95, n_resamples: int = 1000,
                           seed: int = 0) -> Results:
    """The mean of per-skill trigger accuracies (keryx eval.ts reports trigger accuracy per skill) over the skills
    of ``per_skill``, with an interval over skills.

    Parameters
    ----------
    per_skill : DataFrame
        :func:`trigger_accuracy`'s ``per_skill`` (``accuracy``), restricted by the caller to the skills that
        count (e.g. those with triggers); rows without an accuracy are left out.
    confidence : float, default 0.95
        Level of the interval.
    n_resamples : int, default 1000
        Percentile bootstrap resamples over skills; 0: none.
    seed : int, default 0
        Seed of the bootstrap.

    Returns
    -------
    Results
        One row: ``skills`` and ``perfect`` (skills at accuracy 1; counts), ``mean_accuracy`` (the unweighted
        mean of the skills' accuracies, a proportion) with ``mean_accuracy_low/_high`` and
        ``mean_accuracy_method`` from :func:`evallab.metrics._intervals.ratio_interval_method` of the accuracies
        over one unit per skill — a percentile bootstrap over skills, Wilson when every accuracy is 0 or 1, the
        Wilson interval on the skill count when every skill has the same accuracy — and ``note``. Measures
        :data:`SKILL_SUMMARY_MEASURES` (n: skills).
    """
    acc = pd.to_numeric(per_skill["accuracy"], errors="coerce").dropna().to_numpy(float)
    mean = float(acc.mean()) if len(acc) else float("nan")
    lo, hi, method = intervals.ratio_interval_method(acc, np.ones(len(acc)), n_resamples=n_resamples,
                                                     confidence=confidence, seed=seed, unit="skill")
    note = intervals.no_interval_note(mean, lo, hi, units=len(acc), n_resamples=n_resamples, unit_name="skill") \
        if len(acc) else "not computable: no skill has a probe"
    row = {"skills": len(acc), "perfect": int((acc >= 1).sum()), "mean_accuracy": mean, "mean_accuracy_low": lo,
           "mean_accuracy_high": hi, "mean_accuracy_method": method, "note": note}
    return results(pd.DataFrame([row]), SKILL_SUMMARY_MEASURES, level=confidence)


#: the measures of :func:`stripping_effect` (one row per probe)
STRIPPING_MEASURES = [
    Measure("score_before", "Score before", "coefficient", digits=2),
    Measure("score_after", "Score after", "coefficient", digits=2),
]


def stripping_effect(catalog, *, scorer: str = "keryx", **kwargs) -> pd.DataFrame:
    """Before/after exclusion stripping: the probes of :func:`trigger_accuracy` (positives, and negatives drawn
    once with stripping on, as keryx does) graded with the entries' exclusion clauses kept (before) and stripped
    (after). Probes themselves are never stripped.

    Returns
    -------
    Results
        One row per probe: ``kind`` ("positive"/"negative"), ``skill_id``, ``prompt``, ``score_before``,
        ``score_after`` (the probe's score for ``skill_id`` with the clauses kept / stripped: coverage in [0, 1],
        unitless), ``correct_before``, ``correct_after``, ``changed`` (bool: the verdict differs). Measures
        :data:`STRIPPING_MEASURES`; :func:`stripping_summary` states the effect with its interval.
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
    return results(out, STRIPPING_MEASURES, keys=["kind", "skill_id", "prompt"])


#: the measures of :func:`stripping_summary`
STRIPPING_SUMMARY_MEASURES = [
    Measure("probes", "Probes", "count"),
    Measure("positives", "Positive probes", "count"),
    Measure("negatives", "Negative probes", "count"),
    Measure("changed", "Verdicts changed", "count", n="probes", n_unit="probes"),
    Measure("correct_before", "Correct with the clauses kept", "proportion", "correct_before_low",
            "correct_before_high", method_column="correct_before_method", n="probes", n_unit="probes"),
    Measure("correct_after", "Correct with the clauses stripped", "proportion", "correct_after_low",
            "correct_after_high", method_column="correct_after_method", n="probes", n_unit="probes"),
    Measure("delta_correct", "Δ correct (stripped − kept)", "pp", "delta_correct_low", "delta_correct_high",
            method_column="delta_correct_method", n="probes", n_unit="probes"),
]


def stripping_summary(effect: pd.DataFrame, *, confidence: float = 0.95, n_resamples: int = 1000,
                      seed: int = 0) -> Results:
    """What stripping exclusion clauses changes, over the probes of :func:`stripping_effect`, with intervals over
    skills (a skill's positives share its description and its negatives were drawn for it).

    Parameters
    ----------
    effect : DataFrame
        :func:`stripping_effect` output.
    confidence, n_resamples, seed : float, int, int; default 0.95, 1000, 0
        As for :func:`skill_accuracy_summary`.

    Returns
    -------
    Results
        One row: ``probes``, ``positives``, ``negatives``, ``changed`` (verdicts that differ; counts);
        ``correct_before`` / ``correct_after`` (share of probes graded correctly with the clauses kept /
        stripped, proportions) with ``_low/_high`` and ``_method`` from
        :func:`evallab.metrics._intervals.ratio_interval_method` over per-skill counts; ``delta_correct`` =
        after − before (a difference of proportions, pp) with ``_low/_high`` and ``_method`` from
        :func:`evallab.metrics._intervals.ratio_difference_interval_method` (paired skill bootstrap; when no
        verdict changes, the bound from the Wilson interval of 0 changed skills, named as such); ``note``.
        Measures :data:`STRIPPING_SUMMARY_MEASURES` (n: probes).
    """
    kw = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed, "unit": "skill"}
    per = effect.assign(_b=effect["correct_before"].astype(float), _a=effect["correct_after"].astype(float),
                        _n=1.0).groupby("skill_id")[["_b", "_a", "_n"]].sum()
    row = {"probes": len(effect), "positives": int((effect["kind"] == "positive").sum()),
           "negatives": int((effect["kind"] == "negative").sum()), "changed": int(effect["changed"].sum())}
    notes = []
    for col, num in (("correct_before", "_b"), ("correct_after", "_a")):
        v = float(per[num].sum() / per["_n"].sum()) if len(per) else float("nan")
        lo, hi, m = intervals.ratio_interval_method(per[num], per["_n"], **kw) if len(per) else (np.nan, np.nan, "")
        row.update({col: v, f"{col}_low": lo, f"{col}_high": hi, f"{col}_method": m})
        notes.append(intervals.no_interval_note(v, lo, hi, units=len(per), n_resamples=n_resamples,
                                                unit_name="skill"))
    d = row["correct_after"] - row["correct_before"]
    lo, hi, m = intervals.ratio_difference_interval_method(per["_a"], per["_n"], per["_b"], per["_n"], **kw) \
        if len(per) else (np.nan, np.nan, "")
    row.update({"delta_correct": d, "delta_correct_low": lo, "delta_correct_high": hi, "delta_correct_method": m})
    notes.append(intervals.no_interval_note(d, lo, hi, units=len(per), n_resamples=n_resamples, unit_name="skill"))
    row["note"] = "; ".join(dict.fromkeys(n for n in notes if n)) if len(per) else "not computable: no probe"
    return results(pd.DataFrame([row]), STRIPPING_SUMMARY_MEASURES, level=confidence)
