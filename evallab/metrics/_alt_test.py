"""The Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025): can a judge replace one of the annotators?

Only the leave-one-out comparison, the one-sided paired t-tests and the Benjamini–Yekutieli adjustment live here;
the t-test is :func:`scipy.stats.ttest_1samp`, the adjustment :func:`statsmodels.stats.multitest.multipletests`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab._results import Measure, Results, results
from evallab.errors import DesignError
from evallab.metrics._design import require_verdicts

#: alignment scores S(x, item, j) of a label x with the other annotators' labels on the item
SCORINGS = ("accuracy", "neg_rmse", "neg_abs")
MIN_ANNOTATORS = 3
NAN = float("nan")


def _scores(x: np.ndarray, others: np.ndarray, scoring: str) -> np.ndarray:
    """Per-item alignment of ``x`` (items,) with ``others`` (items × annotators, NaN = no label)."""
    have = ~np.isnan(others)
    n = have.sum(axis=1)
    if scoring == "accuracy":
        hit = (others == x[:, None]) & have
        return hit.sum(axis=1) / n
    diff = np.where(have, others - x[:, None], 0.0)
    if scoring == "neg_rmse":
        return -np.sqrt((diff ** 2).sum(axis=1) / n)
    return -np.abs(diff).sum(axis=1) / n


def _one_sided_p(d: np.ndarray, epsilon: float) -> tuple[float, float]:
    """t statistic and p-value of H0: mean(d) >= epsilon against H1: mean(d) < epsilon (d = W_h − W_f)."""
    from scipy.stats import ttest_1samp

    if len(d) < 2:
        return NAN, NAN
    if np.all(d == d[0]):  # no variance: the t statistic is ±inf (or undefined at d == epsilon)
        return (-np.inf, 0.0) if d[0] < epsilon else (np.inf if d[0] > epsilon else NAN, 1.0)
    r = ttest_1samp(d, epsilon, alternative="less")
    return float(r.statistic), float(r.pvalue)


def _by_reject(p: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Benjamini–Yekutieli: rejections and adjusted p-values (NaN p-values are never rejected)."""
    from statsmodels.stats.multitest import multipletests

    ok = np.isfinite(p)
    rej = np.zeros(len(p), dtype=bool)
    adj = np.full(len(p), NAN)
    if ok.any():
        r, a, _, _ = multipletests(p[ok], alpha=alpha, method="fdr_by")
        rej[ok], adj[ok] = r, a
    return rej, adj


def _leave_one_out(judge: np.ndarray, humans: np.ndarray, names: list[str], scoring: str
                   ) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """For each annotator j: (name, W_f, W_h) over the items j labelled."""
    out = []
    for j, name in enumerate(names):
        rows = ~np.isnan(humans[:, j])
        others = np.delete(humans[rows], j, axis=1)
        s_f = _scores(judge[rows], others, scoring)
        s_h = _scores(humans[rows, j], others, scoring)
        w_f = (s_f >= s_h).astype(float)
        w_h = (s_h >= s_f).astype(float)
        out.append((name, w_f, w_h))
    return out


def _test_many(loos, epsilon: float, alpha: float) -> list[tuple]:
    """:func:`_test` of several judges' leave-one-out sets; every test of the same size goes to
    ``scipy.stats.ttest_1samp`` in one call (the rows of a 2-D array), the adjustment stays per judge."""
    from scipy.stats import ttest_1samp

    ds = [[w_h - w_f for _, w_f, w_h in loo] for loo in loos]
    ts = [np.full(len(d), NAN) for d in ds]
    ps = [np.full(len(d), NAN) for d in ds]
    by_size: dict[int, list[tuple[int, int]]] = {}
    for a, d in enumerate(ds):
        for j, dj in enumerate(d):
            if len(dj) >= 2 and not np.all(dj == dj[0]):
                by_size.setdefault(len(dj), []).append((a, j))
            else:
                ts[a][j], ps[a][j] = _one_sided_p(dj, epsilon)
    for where in by_size.values():
        r = ttest_1samp(np.stack([ds[a][j] for a, j in where]), epsilon, axis=1, alternative="less")
        for (a, j), tv, pv in zip(where, np.atleast_1d(r.statistic), np.atleast_1d(r.pvalue), strict=True):
            ts[a][j], ps[a][j] = tv, pv
    return [(t, p, *_by_reject(p, alpha)) for t, p in zip(ts, ps, strict=True)]


def _test(loo, epsilon: float, alpha: float):
    """t statistics, p-values (:func:`_one_sided_p`), Benjamini–Yekutieli rejections and adjusted p-values of
    one judge's leave-one-out tests."""
    return _test_many([loo], epsilon, alpha)[0]


def _smallest_epsilon(loo, alpha: float) -> float:
    """The smallest ε in [0, 1] at which the winning rate reaches 0.5, solved exactly rather than searched.

    The one-sided p-value of annotator j (:func:`_one_sided_p`) is p_j(ε) = P(T_{n_j−1} <= (mean(d_j) − ε) / se_j),
    so p_j(ε) <= q exactly when ε >= ε_j(q) = mean(d_j) − se_j · t_{n_j−1}^{-1}(q) (``scipy.stats.t.ppf``; with no
    variance p_j = 0 for ε > d_j, so ε_j = d_j; with fewer than two items no p-value, left out).
    Benjamini–Yekutieli rejects the k smallest of the m' p-values where k = max{i : p_(i) <= i·α / (m'·c_m')},
    c_m' = Σ_{i<=m'} 1/i (``statsmodels`` ``fdr_by``); the judge passes when k >= r = ⌈m/2⌉ (m annotators), i.e.
    when for some i >= r at least i annotators have p_j(ε) <= q_i = i·α / (m'·c_m'), i.e. ε >= the i-th smallest
    ε_j(q_i). Each p-value falls as ε grows, so passing is monotone in ε and the answer is min_{i >= r} (i-th
    smallest ε_j(q_i)), clipped at 0; NaN when it exceeds 1 (the judge fails even at ε = 1). At the boundary itself a
    zero-variance annotator counts as rejected (the infimum is given)."""
    from scipy.stats import t as student_t

    m = len(loo)
    if m == 0:
        return NAN
    d = [w_h - w_f for _, w_f, w_h in loo]
    n = np.array([len(dj) for dj in d], dtype=float)
    mean = np.array([dj.mean() if len(dj) else NAN for dj in d])
    sd = np.array([dj.std(ddof=1) if len(dj) >= 2 else NAN for dj in d])
    flat = np.array([len(dj) >= 2 and bool(np.all(dj == dj[0])) for dj in d])
    tested = n >= 2  # the others have no p-value and are left out of the adjustment (:func:`_by_reject`)
    mt = int(tested.sum())
    c_m = float(np.sum(1.0 / np.arange(1, mt + 1)))
    best = np.inf
    for i in range(math.ceil(m / 2), mt + 1):
        q = i * alpha / (mt * c_m)
        with np.errstate(invalid="ignore", divide="ignore"):
            e = mean - sd / np.sqrt(n) * student_t.ppf(q, np.maximum(n - 1, 1))
        e = np.where(flat, mean, e)[tested]
        best = min(best, float(np.sort(e)[i - 1]))
    return NAN if best > 1 else max(best, 0.0)


def _measures(per_annotator: bool) -> list[Measure]:
    if per_annotator:
        return [Measure("rho_judge", "Judge's advantage probability", "proportion", n="items", n_unit="items"),
                Measure("rho_annotator", "Annotator's advantage probability", "proportion", n="items",
                        n_unit="items"),
                Measure("t", "t statistic", "coefficient", digits=2),
                Measure("p_value", "p-value (one-sided)", "p-value"),
                Measure("p_adjusted", "p-value (Benjamini–Yekutieli)", "p-value")]
    return [Measure("winning_rate", "Winning rate ω", "proportion", n="annotators", n_unit="annotators"),
            Measure("advantage_probability", "Average advantage probability ρ", "proportion", n="annotators",
                    n_unit="annotators"),
            Measure("min_epsilon", "Smallest ε that passes", "coefficient", digits=3)]


def alt_test(df: pd.DataFrame, by: Sequence[str] = (), *, judges: Sequence[str],
             annotators: Sequence[str] | None = None, raters: str = "judge", value: str = "verdict",
             item: str = "item_id", scoring: str = "accuracy", epsilon: float = 0.2, alpha: float = 0.05,
             per_annotator: bool = False) -> Results:
    """The Alternative Annotator Test: for each annotator left out, does the judge represent the remaining
    annotators at least as well as that annotator does, within the cost-benefit margin ε?

    The procedure (Calderon, Reichart & Dror 2025, §3 "The Alt-Test"), per group of ``by`` and per judge f, with
    the m annotators h_1 … h_m:

    1. For each annotator j and each item i that j labelled, the alignment of a label x with the other annotators'
       labels on i, S(x, i, j), is for ``scoring="accuracy"`` (categorical labels) the share of the others who gave
       x; for ``"neg_rmse"`` (scale ratings) minus the root mean squared difference from their ratings, for
       ``"neg_abs"`` minus the mean absolute difference.
    2. The judge wins item i when S(f(i), i, j) >= S(h_j(i), i, j) (W_f = 1), the annotator wins when
       S(h_j(i), i, j) >= S(f(i), i, j) (W_h = 1); a tie is a win for both.
    3. The advantage probabilities are ρ_j^f = mean_i W_f and ρ_j^h = mean_i W_h over j's items.
    4. H0_j: ρ_j^f <= ρ_j^h − ε against H1_j: ρ_j^f > ρ_j^h − ε, by a one-sided paired t-test of
       d_i = W_h − W_f: t = (mean(d) − ε) / (sd(d) / sqrt(n_j)), p_j = P(T_{n_j−1} <= t)
       (``scipy.stats.ttest_1samp(d, ε, alternative="less")``). When every d_i is equal the t statistic is
       infinite: p_j = 0 if d < ε, else 1.
    5. The m p-values are adjusted by Benjamini–Yekutieli (false-discovery rate ``alpha`` under any dependence,
       ``statsmodels`` ``fdr_by``), as the paper does since the leave-one-out tests share annotators.
    6. The winning rate ω is the share of annotators whose H0_j is rejected; the judge passes when ω >= 0.5.
       The average advantage probability ρ = mean_j ρ_j^f compares judges (higher is better), with no test.

    Parameters
    ----------
    df : DataFrame
        Long table, one row per (item, rater): columns ``item``, ``raters`` and ``value``; the judges and the
        annotators are values of ``raters``. A missing value is no label.
    by : sequence of str, default ()
        Grouping columns; each group is tested on its own.
    judges : sequence of str, keyword-only
        The raters under test (each tested alone against the annotators).
    annotators : sequence of str, optional
        The human annotators (default: every rater not in ``judges``).
    raters, value, item : str
        Column names (defaults: the tidy verdict table's ``judge``, ``verdict``, ``item_id``).
    scoring : {"accuracy", "neg_rmse", "neg_abs"}, default "accuracy"
        The alignment score (step 1): labels compared for equality, or numeric ratings by distance.
    epsilon : float in [0, 1], default 0.2
        The cost-benefit margin (the authors' rule of thumb: 0.2 for experts, 0.15 skilled, 0.1 crowd workers).
    alpha : float, default 0.05
        The false-discovery rate of step 5.
    per_annotator : bool, default False
        Return one row per (group, judge, left-out annotator) instead of one per (group, judge).

    Returns
    -------
    Results
        One row per (``by``, judge): ``judge``, ``winning_rate`` ω (proportion in [0, 1]), ``passes`` (bool,
        ω >= 0.5), ``advantage_probability`` ρ (proportion), ``min_epsilon`` (the smallest ε in [0, 1] at which the
        judge would pass, solved exactly from the t quantiles; NaN if none), ``annotators`` (m), ``items``
        (items with the judge's label), ``epsilon``, ``alpha``. With ``per_annotator``: ``judge``, ``annotator``, ``items`` (n_j), ``rho_judge``,
        ``rho_annotator``, ``t``, ``p_value``, ``p_adjusted`` (Benjamini–Yekutieli), ``rejected`` (bool).

    Raises
    ------
    DesignError
        Fewer than 3 annotators on an item the judge labelled (naming the item), a rater with two labels on an
        item, an unknown judge or scoring, or non-numeric ratings for a distance scoring.

    References
    ----------
    N. Calderon, R. Reichart, R. Dror (2025), "The Alternative Annotator Test for LLM-as-a-Judge: How to
    Statistically Justify Replacing Human Annotators with LLMs", ACL 2025, pp. 16051–16081 (§3, Algorithm 1);
    Y. Benjamini, D. Yekutieli (2001), Ann. Statist. 29(4).

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab.metrics import alt_test
    >>> labels = {"h1": "aabbaabbab", "h2": "aabbaabbaa", "h3": "aabbabbbab", "llm": "aabbaabbab"}
    >>> df = pd.DataFrame([{"item_id": i, "judge": r, "verdict": v}
    ...                    for r, s in labels.items() for i, v in enumerate(s)])
    >>> r = alt_test(df, judges=["llm"], epsilon=0.2)
    >>> print(r[["judge", "winning_rate", "passes", "advantage_probability", "annotators"]].to_string(index=False))
    judge  winning_rate  passes  advantage_probability  annotators
      llm           1.0    True                    1.0           3
    """
    if scoring not in SCORINGS:
        raise DesignError(f"alt_test: unknown scoring {scoring!r}; expected one of {list(SCORINGS)}")
    if not 0 <= epsilon <= 1:
        raise DesignError(f"alt_test: epsilon={epsilon!r}; expected a number in [0, 1]")
    if value == "verdict":
        require_verdicts(df, what="the Alternative Annotator Test on verdicts",
                         instead='alt_test(..., value="score", scoring="neg_rmse") for ratings on a scale')
    by = [by] if isinstance(by, str) else list(by)
    missing = [c for c in [*by, item, raters, value] if c not in df.columns]
    if missing:
        raise DesignError(f"alt_test: missing column(s) {missing}; expected {[*by, item, raters, value]}")
    judges = list(judges)
    d = df[[*by, item, raters, value]].dropna(subset=[value])
    seen = set(map(str, d[raters].astype(str).unique()))
    unknown = [j for j in judges if j not in seen]
    if unknown:
        raise DesignError(f"alt_test: judge(s) {unknown} have no label in column {raters!r}")
    humans = list(annotators) if annotators is not None else sorted(seen - set(judges))
    dup = d.duplicated([*by, item, raters])
    if dup.any():
        row = d[dup].iloc[0]
        raise DesignError(f"alt_test: rater {row[raters]!r} has two labels on item {row[item]!r}; expected one "
                          "per (item, rater)")
    if scoring != "accuracy":
        vals = pd.to_numeric(d[value], errors="coerce")
        if vals.isna().any():
            raise DesignError(f"alt_test: {value!r} value {d[value][vals.isna()].iloc[0]!r} is not a number; "
                              f"scoring={scoring!r} needs numeric ratings")
        d = d.assign(**{value: vals.astype(float)})
    rows = []
    for key, g in (d.groupby(by, sort=True, dropna=False) if by else [((), d)]):
        key = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        if scoring == "accuracy":  # categorical codes shared by judge and annotators (NaN = no label)
            g = g.assign(**{value: pd.factorize(g[value].astype(str), sort=True)[0].astype(float)})
        wide = g.pivot(index=item, columns=raters, values=value)
        hs = [h for h in humans if h in wide.columns]
        h_all = wide.reindex(columns=hs).to_numpy(dtype=float)
        todo = []
        for jd in judges:
            if jd not in wide.columns:
                continue
            f_all = wide[jd].to_numpy(dtype=float)
            labelled = ~np.isnan(f_all)
            h, f_lab, idx = h_all[labelled], f_all[labelled], wide.index[labelled]
            count = (~np.isnan(h)).sum(axis=1) if len(hs) else np.zeros(len(h), dtype=int)
            if len(h) == 0 or count.min() < MIN_ANNOTATORS:
                where = f"item {idx[int(np.argmin(count))]!r}" if len(h) else "the table"
                got = int(count.min()) if len(h) else 0
                raise DesignError(f"alt_test: {where} has {got} annotator label(s) beside judge {jd!r}; the "
                                  f"Alt-Test needs at least {MIN_ANNOTATORS} per item (Calderon et al. 2025)"
                                  + (f" [group {key}]" if key else ""))
            todo.append((jd, _leave_one_out(f_lab, h, hs, scoring), len(h)))
        for (jd, loo, n_items), (t, p, rej, adj) in zip(todo, _test_many([x[1] for x in todo], epsilon, alpha),
                                                        strict=True):
            if per_annotator:
                for (name, w_f, w_h), tj, pj, rj, aj in zip(loo, t, p, rej, adj, strict=True):
                    rows.append(dict(key, judge=jd, annotator=name, items=len(w_f), rho_judge=w_f.mean(),
                                     rho_annotator=w_h.mean(), t=tj, p_value=pj, p_adjusted=aj, rejected=bool(rj),
                                     epsilon=epsilon, alpha=alpha, note=""))
                continue
            omega = float(rej.mean())
            rows.append(dict(key, judge=jd, winning_rate=omega, passes=omega >= 0.5,
                             advantage_probability=float(np.mean([w_f.mean() for _, w_f, _ in loo])),
                             min_epsilon=_smallest_epsilon(loo, alpha), annotators=len(hs), items=n_items,
                             epsilon=epsilon, alpha=alpha, note=""))
    keys = [*by, "judge", "annotator"] if per_annotator else [*by, "judge"]
    return results(pd.DataFrame(rows), _measures(per_annotator), keys=keys)
