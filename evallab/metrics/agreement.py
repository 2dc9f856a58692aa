"""Agreement of judges with gold labels, with each other and with themselves.

All functions take the tidy verdict table (:mod:`evallab.verdicts`). Unparsed replies (NA verdicts) are excluded
and counted separately by default (``unparsed="exclude"``); ``unparsed="published"`` reproduces the LLMBar
paper's conventions (Zeng et al., ICLR 2024, Tables 2–4): Acc. counts an unparsed reply as wrong and Agr. counts a
pair whose two replies were both unparsed as agreeing.

Methods and their sources
-------------------------
- accuracy vs gold per order and averaged over orders (LLMBar "Acc."); Wilson intervals per order, a bootstrap
  over items for the average (:mod:`evallab.metrics.intervals`).
- Cohen's kappa vs gold: ``sklearn.metrics.cohen_kappa_score`` (Cohen 1960); its interval is the asymptotic one
  of ``statsmodels.stats.inter_rater.cohens_kappa``.
- judge × judge agreement: raw agreement (Wilson) and Cohen's kappa on the replies both judges parsed.
- Fleiss' kappa across judges: ``statsmodels.stats.inter_rater.fleiss_kappa`` (Fleiss 1971) on units every judge
  parsed; Krippendorff's alpha (nominal): ``krippendorff.alpha`` (Krippendorff 2011) on all units, missing
  allowed; both with a percentile bootstrap over items.
- self-agreement across samples: unanimity, pairwise flip rate, Fleiss' kappa with samples as raters.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd
from scipy.stats import norm
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from evallab.errors import EvallabError
from evallab.metrics import intervals as stats

UNPARSED_MODES = ("exclude", "published")
DEFAULT_BY = ("subset", "judge", "strategy")


def _check_mode(unparsed: str) -> None:
    if unparsed not in UNPARSED_MODES:
        raise EvallabError(f"unparsed={unparsed!r}; expected one of {UNPARSED_MODES}")


def _pairs(df: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """One row per (group, item, sample) with verdict_ab, verdict_ba and gold (pairwise tables)."""
    keys = list(dict.fromkeys(list(by) + ["item_id", "sample"]))
    ab = df.loc[df["order"] == "ab", keys + ["verdict", "gold"]].drop_duplicates(keys)
    ba = df.loc[df["order"] == "ba", keys + ["verdict", "gold"]].drop_duplicates(keys)
    out = ab.merge(ba, on=keys, how="outer", suffixes=("_ab", "_ba"))
    out["gold"] = out["gold_ab"].fillna(out["gold_ba"])
    return out.drop(columns=["gold_ab", "gold_ba"])


def pairwise_statistics(df: pd.DataFrame, by: Sequence[str] = DEFAULT_BY, *, unparsed: str = "exclude",
                        confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """LLMBar's per-group statistics: accuracy per order, averaged (Acc.), both-correct and positional agreement (Agr.).

    Parameters
    ----------
    df : tidy verdict table with pairwise replies in orders ``ab`` and ``ba``.
    by : grouping columns.
    unparsed : ``"exclude"`` (default) or ``"published"`` (LLMBar's conventions; see module docstring).
    confidence, n_resamples, seed : interval settings (Wilson per order; bootstrap over items for Acc.;
        ``n_resamples=0`` skips the bootstrap).

    Returns
    -------
    DataFrame, one row per group, with
        ``n`` (pairs), ``unparsed_ab``, ``unparsed_ba``, ``correct_order_12``, ``correct_order_21``,
        ``acc_order_12``, ``acc_order_21`` in [0, 1] (+ ``_low``/``_high``), ``correct_average_pct`` (Acc., percent)
        with ``acc_low_pct``/``acc_high_pct``, ``correct_both``, ``positional_agreement_equal`` (Agr., a count),
        ``agr_rate`` in [0, 1], and ``n_both_parsed``. Under ``"published"`` every denominator is ``n``; under
        ``"exclude"`` per-order denominators are the parsed replies and both/Agr. are over pairs with both parsed.
    """
    _check_mode(unparsed)
    p = _pairs(df, by)
    a, b, g = p["verdict_ab"], p["verdict_ba"], p["gold"]
    p = p.assign(
        _ok_a=a.notna(), _ok_b=b.notna(),
        _c_a=(a == g).fillna(False).astype(int), _c_b=(b == g).fillna(False).astype(int),
    )
    p["_both_ok"] = p["_ok_a"] & p["_ok_b"]
    p["_both"] = ((a == g) & (b == g)).fillna(False)
    if unparsed == "published":
        p["_agr"] = (a == b).fillna(False) | (a.isna() & b.isna())
    else:
        p["_agr"] = (a == b).fillna(False) & p["_both_ok"]
    p["_den_i"] = 2 if unparsed == "published" else p["_ok_a"].astype(int) + p["_ok_b"].astype(int)
    p["_num_i"] = p["_c_a"] + p["_c_b"]
    g = p.groupby(list(by), dropna=False, observed=True, sort=True)
    out = g.agg(n=("_ok_a", "size"), pa=("_ok_a", "sum"), pb=("_ok_b", "sum"), ca=("_c_a", "sum"),
                cb=("_c_b", "sum"), nb=("_both_ok", "sum"), both=("_both", "sum"), agr=("_agr", "sum"))
    out = out.astype(int)
    n = out["n"]
    da, db = (n, n) if unparsed == "published" else (out["pa"], out["pb"])
    den_both = n if unparsed == "published" else out["nb"]
    res = pd.DataFrame({
        "n": n, "unparsed_ab": n - out["pa"], "unparsed_ba": n - out["pb"], "n_both_parsed": out["nb"],
        "correct_order_12": out["ca"], "correct_order_21": out["cb"],
        "acc_order_12": out["ca"] / da.where(da > 0), "acc_order_21": out["cb"] / db.where(db > 0),
    })
    for col, k, d in (("acc_order_12", out["ca"], da), ("acc_order_21", out["cb"], db)):
        lo, hi = zip(*(stats.wilson(a, b, confidence) for a, b in zip(k, d, strict=True)), strict=True) \
            if len(k) else ((), ())
        res[f"{col}_low"], res[f"{col}_high"] = list(lo), list(hi)
    res["correct_average_pct"] = 100 * (out["ca"] + out["cb"]) / (da + db).where(da + db > 0)
    if n_resamples > 0:
        cis = [stats.bootstrap_ratio(d["_num_i"].to_numpy(), d["_den_i"].to_numpy(), n_resamples=n_resamples,
                                     confidence=confidence, seed=seed) for _, d in g]
        res["acc_low_pct"] = [100 * c[0] for c in cis]
        res["acc_high_pct"] = [100 * c[1] for c in cis]
    else:
        res["acc_low_pct"] = res["acc_high_pct"] = np.nan
    res["correct_both"] = out["both"]
    res["positional_agreement_equal"] = out["agr"]
    res["agr_rate"] = out["agr"] / den_both.where(den_both > 0)
    return res.reset_index()


def accuracy(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, confidence: float = 0.95,
             n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Accuracy vs gold over parsed replies (all orders and samples pooled), with a bootstrap over items.

    Works for pairwise and pointwise tables. Rows without gold are ignored.

    Returns
    -------
    DataFrame: ``by`` + ``replies``, ``unparsed``, ``parsed``, ``correct``, ``accuracy`` in [0, 1], ``low``,
    ``high`` (percentile bootstrap over items of correct/parsed).
    """
    d = df[df["gold"].notna()].assign(_ok=lambda x: x["verdict"].notna(),
                                      _c=lambda x: (x["verdict"] == x["gold"]).fillna(False))
    rows = []
    for key, g in d.groupby(list(by), dropna=False, observed=True, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        per = g.groupby("item_id", observed=True).agg(c=("_c", "sum"), p=("_ok", "sum"))
        parsed, correct = int(per["p"].sum()), int(per["c"].sum())
        lo, hi = stats.bootstrap_ratio(per["c"].to_numpy(), per["p"].to_numpy(), n_resamples=n_resamples,
                                       confidence=confidence, seed=seed)
        r = dict(zip(by, key, strict=True))
        r.update(replies=len(g), unparsed=len(g) - parsed, parsed=parsed, correct=correct,
                 accuracy=correct / parsed if parsed else np.nan, low=lo, high=hi)
        rows.append(r)
    return pd.DataFrame(rows)


def _kappa_with_ci(y1: pd.Series, y2: pd.Series, confidence: float) -> tuple[float, float, float]:
    """Cohen's kappa (scikit-learn) and kappa ± z·ASE with the asymptotic standard error of statsmodels, clipped to
    [-1, 1] (the normal approximation can overshoot on small samples)."""
    y1 = y1.astype(str).to_numpy()
    y2 = y2.astype(str).to_numpy()
    if len(y1) == 0:
        return np.nan, np.nan, np.nan
    labels = sorted(set(y1) | set(y2))
    if len(labels) < 2:  # one category only: kappa is undefined
        return np.nan, np.nan, np.nan
    k = float(cohen_kappa_score(y1, y2, labels=labels))
    table = pd.crosstab(pd.Categorical(y1, labels), pd.Categorical(y2, labels), dropna=False).to_numpy()
    res = cohens_kappa(table, return_results=True)
    z = float(norm.ppf(0.5 + confidence / 2))
    se = float(res["std_kappa"])
    return k, max(-1.0, k - z * se), min(1.0, k + z * se)  # kappa lies in [-1, 1]


def cohen_kappa_vs_gold(df: pd.DataFrame, by: Sequence[str] = ("subset", "judge", "strategy", "order"), *,
                        confidence: float = 0.95) -> pd.DataFrame:
    """Cohen's kappa of verdicts against gold on parsed replies, per group.

    Returns ``by`` + ``n`` (parsed replies with gold), ``unparsed``, ``kappa`` in [-1, 1], ``kappa_low``,
    ``kappa_high`` (asymptotic interval, statsmodels). NaN when only one category occurs.
    """
    rows = []
    for key, g in df[df["gold"].notna()].groupby(list(by), dropna=False, observed=True, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        ok = g[g["verdict"].notna()]
        k, lo, hi = _kappa_with_ci(ok["gold"], ok["verdict"], confidence)
        r = dict(zip(by, key, strict=True))
        r.update(n=len(ok), unparsed=len(g) - len(ok), kappa=k, kappa_low=lo, kappa_high=hi)
        rows.append(r)
    return pd.DataFrame(rows)


UNIT = ("item_id", "strategy", "anchor_set", "order", "sample")


def _wide(df: pd.DataFrame, raters: str = "judge", unit: Sequence[str] = UNIT) -> pd.DataFrame:
    """Units (rows) × raters (columns) of verdicts, NA where a rater has no parsed reply."""
    unit = [c for c in unit if c != raters]
    d = df.drop_duplicates(unit + [raters])
    w = d.set_index(unit + [raters])["verdict"].unstack(raters)
    w.columns.name = None
    return w


def judge_agreement_matrix(df: pd.DataFrame, judges: Sequence[str] | None = None, *,
                           confidence: float = 0.95) -> pd.DataFrame:
    """Agreement of every pair of judges on the same units (item, strategy, anchor set, order, sample).

    Returns
    -------
    DataFrame, long: ``judge_a``, ``judge_b``, ``n`` (units both parsed), ``agreement`` in [0, 1] with Wilson
    ``agreement_low``/``agreement_high``, ``kappa`` (Cohen, scikit-learn) with ``kappa_low``/``kappa_high``
    (statsmodels). Both orders of each pair and the diagonal (agreement 1) are included, so
    ``df.pivot(index="judge_a", columns="judge_b", values="kappa")`` gives the square matrix.
    """
    w = _wide(df)
    judges = list(judges) if judges else sorted(w.columns)
    rows = []
    for a, b in combinations(judges, 2):
        both = w[[a, b]].dropna()
        n = len(both)
        eq = int((both[a] == both[b]).sum())
        lo, hi = stats.wilson(eq, n, confidence)
        k, klo, khi = _kappa_with_ci(both[a], both[b], confidence)
        for x, y in ((a, b), (b, a)):
            rows.append(dict(judge_a=x, judge_b=y, n=n, agreement=eq / n if n else np.nan, agreement_low=lo,
                             agreement_high=hi, kappa=k, kappa_low=klo, kappa_high=khi))
    for j in judges:
        n = int(w[j].notna().sum())
        rows.append(dict(judge_a=j, judge_b=j, n=n, agreement=1.0, agreement_low=1.0, agreement_high=1.0,
                         kappa=1.0, kappa_low=1.0, kappa_high=1.0))
    return pd.DataFrame(rows).sort_values(["judge_a", "judge_b"]).reset_index(drop=True)


def _codes(w: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    cats = sorted({v for v in w.to_numpy().ravel() if isinstance(v, str)})
    lut = {c: i for i, c in enumerate(cats)}
    arr = np.array([[lut.get(v, np.nan) if isinstance(v, str) else np.nan for v in row] for row in w.to_numpy()],
                   dtype=float)
    return arr, cats


class _Clusters:
    """Units grouped by item, for a bootstrap over items: ``rows(idx)`` gives the unit rows of resampled items."""

    def __init__(self, units: pd.Index) -> None:
        codes, _ = pd.factorize(pd.Index(units.get_level_values("item_id")))
        self.order = np.argsort(codes, kind="stable")
        self.counts = np.bincount(codes)
        self.starts = np.concatenate([[0], np.cumsum(self.counts)[:-1]])

    def __len__(self) -> int:
        return len(self.counts)

    def rows(self, idx: np.ndarray) -> np.ndarray:
        c = self.counts[idx]
        offsets = np.arange(c.sum()) - np.repeat(np.cumsum(c) - c, c)
        return self.order[np.repeat(self.starts[idx], c) + offsets]


def fleiss_kappa_judges(df: pd.DataFrame, judges: Sequence[str] | None = None, *, raters: str = "judge",
                        confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> dict:
    """Fleiss' kappa across raters (judges, or samples with ``raters="sample"``) on units all raters parsed.

    Returns ``{"kappa", "low", "high", "units", "units_dropped", "raters"}``; the interval is a percentile
    bootstrap over items (all units of an item are resampled together). Kappa in [-1, 1]; NaN with < 2 raters.
    """
    w = _wide(df, raters=raters)
    if judges:
        w = w[list(judges)]
    full = w.dropna()
    out = {"units": len(full), "units_dropped": len(w) - len(full), "raters": int(w.shape[1])}
    if w.shape[1] < 2 or len(full) == 0:
        return out | {"kappa": np.nan, "low": np.nan, "high": np.nan}
    codes, _ = _codes(full)
    table, _ = aggregate_raters(codes.astype(int))
    k = float(fleiss_kappa(table, method="fleiss"))
    clusters = _Clusters(full.index)
    table_all, _ = aggregate_raters(codes.astype(int), n_cat=int(codes.max()) + 1)

    def stat(idx):
        return fleiss_kappa(table_all[clusters.rows(idx)], method="fleiss")

    lo, hi = stats.bootstrap_items(stat, len(clusters), n_resamples=n_resamples, confidence=confidence, seed=seed)
    return out | {"kappa": k, "low": lo, "high": hi}


def krippendorff_alpha_judges(df: pd.DataFrame, judges: Sequence[str] | None = None, *, raters: str = "judge",
                              confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> dict:
    """Krippendorff's alpha (nominal) across raters; units with missing replies are kept (alpha allows them).

    Returns ``{"alpha", "low", "high", "units", "raters"}``; alpha in [-1, 1]; the interval is a percentile
    bootstrap over items.
    """
    w = _wide(df, raters=raters)
    if judges:
        w = w[list(judges)]
    w = w[w.notna().sum(axis=1) >= 2]
    out = {"units": len(w), "raters": int(w.shape[1])}
    codes, cats = _codes(w)
    if len(w) == 0 or len(cats) < 2:
        return out | {"alpha": np.nan, "low": np.nan, "high": np.nan}
    data = codes.T  # raters × units
    a = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    clusters = _Clusters(w.index)

    def stat(idx):
        sub = data[:, clusters.rows(idx)]
        if len(np.unique(sub[~np.isnan(sub)])) < 2:
            return np.nan
        return krippendorff.alpha(reliability_data=sub, level_of_measurement="nominal")

    lo, hi = stats.bootstrap_items(stat, len(clusters), n_resamples=n_resamples, confidence=confidence, seed=seed)
    return out | {"alpha": a, "low": lo, "high": hi}


def self_agreement(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, confidence: float = 0.95) -> pd.DataFrame:
    """Agreement of a judge with itself across repeated samples of the same request.

    A unit is (item, judge, strategy, anchor set, order) with ≥ 2 parsed samples. One vectorised pass over all
    groups (a per-scenario table has hundreds of small groups).

    Returns
    -------
    DataFrame: ``by`` + ``units``, ``unanimous``, ``unanimity`` in [0, 1] (Wilson ``unanimity_low``/``_high``),
    ``flip_rate`` in [0, 1] (share of sample pairs within a unit whose verdicts differ), ``unparsed`` (replies),
    ``fleiss_kappa`` (``statsmodels`` Fleiss' kappa with samples as raters, on the units holding the group's modal
    number of parsed samples; NaN with fewer than 2 categories). Every group of ``df`` appears, with 0 units when
    none has 2 parsed samples.
    """
    if not by:
        return self_agreement(df.assign(_all="all"), by=("_all",), confidence=confidence).drop(columns="_all")
    by = list(by)
    unit = ["item_id", "judge", "strategy", "anchor_set", "order"]
    ok = df[df["verdict"].notna()]
    keys = list(dict.fromkeys(by + unit))  # ``by`` may repeat a unit column (e.g. "judge")
    counts = ok.groupby(keys + ["verdict"], observed=True, dropna=False).size().unstack("verdict", fill_value=0)
    n = counts.sum(axis=1)
    counts, n = counts[n >= 2], n[n >= 2]
    rows = []
    for key, c in counts.groupby(level=by, observed=True, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        c = c.loc[:, (c > 0).any(axis=0)]
        nn = c.sum(axis=1)
        unanimous = int(((c > 0).sum(axis=1) == 1).sum())
        same = float((c * (c - 1) / 2).to_numpy().sum())
        pairs = float((nn * (nn - 1) / 2).sum())
        fk = np.nan
        if c.shape[1] >= 2:
            modal = int(nn.mode().iloc[0])
            fk = float(fleiss_kappa(c[nn == modal].to_numpy(), method="fleiss"))
        lo, hi = stats.wilson(unanimous, len(c), confidence)
        r = dict(zip(by, key, strict=True))
        r.update(units=len(c), unanimous=unanimous, unanimity=unanimous / len(c), unanimity_low=lo,
                 unanimity_high=hi, flip_rate=1 - same / pairs if pairs else np.nan, fleiss_kappa=fk)
        rows.append(r)
    cols = ["units", "unanimous", "unanimity", "unanimity_low", "unanimity_high", "flip_rate"]
    groups = df.assign(unparsed=df["verdict"].isna()).groupby(by, observed=True, dropna=False, sort=True)[
        "unparsed"].sum().astype(int).reset_index()
    out = pd.DataFrame(rows, columns=[*by, *cols, "fleiss_kappa"])
    out = groups.merge(out, on=by, how="left")[[*by, *cols, "unparsed", "fleiss_kappa"]]
    out["units"] = out["units"].fillna(0).astype(int)
    out["unanimous"] = out["unanimous"].fillna(0).astype(int)
    return out.reset_index(drop=True)


def published_check(verdicts: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Recompute LLMBar's published statistics from ``verdicts`` and set them beside the authors' table
    (``published``: :func:`evallab.datasets.load_llmbar_statistics`, Zeng et al. 2024's ``statistics.csv``).

    Uses :func:`evallab.metrics.agreement.pairwise_statistics` with ``unparsed="published"``.

    Returns
    -------
    DataFrame, one row per published (subset, judge, strategy) present in ``verdicts``: for each of n,
    correct_order_12, correct_order_21, correct_average_pct, correct_both, positional_agreement_equal the
    published value and ours (``<col>_ours``), and ``match`` (all equal; Acc. within 1e-9).
    """
    cols = ["n", "correct_order_12", "correct_order_21", "correct_average_pct", "correct_both",
            "positional_agreement_equal"]
    key = ["subset", "judge", "strategy"]
    ours = pairwise_statistics(verdicts, key, unparsed="published", n_resamples=0)[key + cols]
    pub = published[key + cols]
    m = pub.merge(ours, on=key, how="inner", suffixes=("", "_ours"))
    ok = np.ones(len(m), dtype=bool)
    for c in cols:
        ok &= np.isclose(m[c].astype(float), m[f"{c}_ours"].astype(float), rtol=0, atol=1e-9)
    m["match"] = ok
    return m
