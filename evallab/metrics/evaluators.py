"""AlpacaEval-style evaluator metrics, win rates and rank agreement between judges.

- :func:`evaluator_metrics` — AlpacaEval's evaluator-leaderboard columns where the data allows: P(prefer output 1),
  P(prefer the output shown first), P(prefer longer) (Dubois et al. 2023; ``alpaca_eval/analyze.py``).
- :func:`judge_pair_agreement` — agreement between annotator configurations on the same pairs.
- :func:`win_rates`, :func:`rank_correlation`, :func:`win_rate_rank_agreement`, :func:`leaderboard_rank_agreement`
  — the judge-swap effect on rankings (Kendall's tau, ``scipy.stats.kendalltau``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from evallab.errors import DataError
from evallab.metrics import intervals
from evallab.metrics.drift import check_table, pair_verdicts, summarize_pairs


def evaluator_metrics(df: pd.DataFrame, items: pd.DataFrame | None = None, *, by: Sequence[str] = ("judge",),
                      min_length_gap: int = 30, confidence: float = 0.95,
                      preference: str | None = "score") -> pd.DataFrame:
    """AlpacaEval's evaluator-leaderboard columns that the data allows, per group.

    Parameters
    ----------
    df : tidy pairwise verdict table.
    items : table keyed by ``item_id`` with ``len_1``/``len_2`` (characters of each output); needed for
        P(prefer longer) (:func:`evallab.datasets.load_alpaca_eval` gives it).
    min_length_gap : only pairs whose outputs differ by MORE than this many characters count for P(prefer
        longer) (AlpacaEval's ``significant_delta_length=30``).
    preference : column holding AlpacaEval's preference in [1, 2] (1 = output 1 preferred, 2 = output 2; continuous
        for the weighted, logprob-based annotators — :func:`evallab.datasets.load_alpaca_eval` puts it in
        ``score``); ``None`` or an absent column: discrete verdicts only.

    Returns
    -------
    DataFrame: ``by`` + ``replies``, ``unparsed``, ``ties``, ``p_prefer_output_1`` in [0, 1] = AlpacaEval's
    ``2 − mean(preference)`` over parsed replies: a reply's preference is taken from ``preference`` where it is
    not NA, else from its discrete verdict (``1`` → 1, ``2`` → 0, ``tie`` → 0.5 preferring output 1),
    ``continuous`` (parsed replies whose preference came from the column),
    ``shown_known`` (decisive replies whose shown order is known: ``order`` ab/ba, or a ``shown_first`` column),
    ``p_prefer_shown_first`` (+ Wilson ``_low``/``_high``; 0.5 = no position preference),
    ``longer_pairs`` (decisive replies on pairs with a length gap), ``p_prefer_longer`` (+ Wilson).

    Raises
    ------
    DataError
        When a parsed reply's ``preference`` value lies outside [1, 2] (the column is then not AlpacaEval's
        preference, e.g. LLMBar's rating difference in ``score``: pass ``preference=None``).

    Notes
    -----
    AlpacaEval's ``get_length_biases`` counts a tie (preference 1.5) as preferring output 2; here ties are left
    out of P(prefer longer). On AlpacaEval's bundled pairs output 1 is always the baseline model, so
    ``p_prefer_output_1`` is the preference for the baseline, not a position effect; the position effect is
    ``p_prefer_shown_first``.
    """
    by = list(by)
    d = df.copy()
    v = d["verdict"]
    dec = v.isin(["1", "2"])
    d["_n1"] = (v == "1").fillna(False).astype(float) + 0.5 * (v == "tie").fillna(False).astype(float)
    d["_ok"] = v.notna()
    d["_cont"] = False
    if preference and preference in d.columns:
        pref = pd.to_numeric(d[preference], errors="coerce").astype(float)
        use = d["_ok"] & pref.notna()
        bad = use & ~pref.between(1.0, 2.0)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(f"{preference}={pref.iloc[i]!r} is not a preference in [1, 2] (AlpacaEval: 1 = output 1 "
                            f"preferred, 2 = output 2); pass preference=None to use the discrete verdicts only",
                            row=i, column=preference)
        d.loc[use, "_n1"] = 2.0 - pref[use]
        d["_cont"] = use
    d["_tie"] = (v == "tie").fillna(False)
    if "shown_first" in d.columns:
        sf = d["shown_first"].astype("string")
    else:
        sf = pd.Series(pd.NA, index=d.index, dtype="string")
    sf = sf.fillna(d["order"].map({"ab": "1", "ba": "2"}).astype("string"))
    known = dec & sf.notna()
    d["_sk"] = known
    d["_sf"] = (known & (v == sf)).fillna(False)
    if items is not None:
        need = [c for c in ("item_id", "len_1", "len_2") if c not in items.columns]
        if need:
            raise DataError(f"items lack column(s) {need} needed for P(prefer longer)", column=need[0])
        lens = items.drop_duplicates("item_id").set_index("item_id")[["len_1", "len_2"]].astype(float)
        l1 = d["item_id"].map(lens["len_1"]).astype(float)
        l2 = d["item_id"].map(lens["len_2"]).astype(float)
        gap = (l1 - l2).abs() > min_length_gap
        longer = pd.Series(np.where(l1 > l2, "1", "2"), index=d.index)
        d["_lk"] = (dec & gap).fillna(False)
        d["_ll"] = (d["_lk"] & (v == longer)).fillna(False)
    else:
        d["_lk"] = d["_ll"] = False
    rows = []
    for key, g in d.groupby(by, dropna=False, observed=True, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        r = dict(zip(by, key, strict=True))
        ok = int(g["_ok"].sum())
        sk, sfk = int(g["_sk"].sum()), int(g["_sf"].sum())
        lk, ll = int(g["_lk"].sum()), int(g["_ll"].sum())
        r.update(replies=len(g), unparsed=len(g) - ok, ties=int(g["_tie"].sum()),
                 p_prefer_output_1=float(g.loc[g["_ok"], "_n1"].mean()) if ok else np.nan,
                 continuous=int(g["_cont"].sum()),
                 shown_known=sk, p_prefer_shown_first=sfk / sk if sk else np.nan)
        r["p_prefer_shown_first_low"], r["p_prefer_shown_first_high"] = intervals.wilson(sfk, sk, confidence)
        r.update(longer_pairs=lk, p_prefer_longer=ll / lk if lk else np.nan)
        r["p_prefer_longer_low"], r["p_prefer_longer_high"] = intervals.wilson(ll, lk, confidence)
        rows.append(r)
    return pd.DataFrame(rows)


def judge_pair_agreement(df: pd.DataFrame, judges: Sequence[str] | None = None, *,
                         match_on: Sequence[str] = ("dataset", "item_id", "anchor_set", "order", "sample"),
                         confidence: float = 0.95) -> pd.DataFrame:
    """Agreement of every pair of judges (annotator configurations) on the replies both parsed.

    The default ``match_on`` leaves out ``strategy`` so that two prompts of one model pair up (prompt drift).

    Returns
    -------
    DataFrame, one row per pair (a, b) with a before b in ``judges`` order: ``judge_a``, ``judge_b``, ``items``,
    ``both_parsed``, ``same``, ``agreement`` (+ Wilson), ``kappa`` (+ asymptotic interval), ``changed``.
    """
    df = check_table(df, "verdicts")
    judges = list(judges) if judges else sorted(df["judge"].dropna().unique())
    rows = []
    for a, b in combinations(judges, 2):
        try:
            p = pair_verdicts(df[df["judge"] == a], df[df["judge"] == b], match_on=match_on, by=[])
        except DataError as exc:
            if "no reply in common" not in str(exc):
                raise
            continue
        s = summarize_pairs(p, [], confidence=confidence, n_resamples=0, seed=0).iloc[0]
        rows.append(dict(judge_a=a, judge_b=b, items=s["items"], both_parsed=s["both_parsed"], same=s["same"],
                         agreement=s["agreement"], agreement_low=s["agreement_low"],
                         agreement_high=s["agreement_high"], kappa=s["kappa"], kappa_low=s["kappa_low"],
                         kappa_high=s["kappa_high"], changed=s["changed"]))
    return pd.DataFrame(rows)


def win_rates(df: pd.DataFrame, by: Sequence[str] = ("judge", "generator_2")) -> pd.DataFrame:
    """Discrete win rate of output 2 per group (AlpacaEval's ``discrete_win_rate`` / 100).

    Returns ``by`` + ``parsed``, ``wins`` (verdict 2), ``losses`` (verdict 1), ``ties``, ``win_rate`` in [0, 1]
    (wins + ties/2 over parsed) and ``standard_error`` (of that mean over replies).
    """
    by = list(by)
    d = df[df["verdict"].notna()]
    x = d["verdict"].map({"2": 1.0, "1": 0.0, "tie": 0.5}).astype(float)
    d = d.assign(_x=x, _w=(x == 1).astype(int), _l=(x == 0).astype(int), _t=(x == 0.5).astype(int))
    out = d.groupby(by, observed=True, sort=True).agg(parsed=("_x", "size"), wins=("_w", "sum"),
                                                      losses=("_l", "sum"), ties=("_t", "sum"),
                                                      win_rate=("_x", "mean"), standard_error=("_x", "sem"))
    return out.reset_index()


def rank_correlation(a: pd.Series, b: pd.Series) -> dict:
    """Kendall's tau (tau-b, ``scipy.stats.kendalltau``) between two scores of the same entities.

    ``a`` and ``b`` are indexed by entity (e.g. model); only entities in both with finite values count.

    Returns ``{"n", "tau", "pvalue"}``; tau in [-1, 1], NaN with fewer than 2 common entities.
    """
    j = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").astype(float).dropna()
    if len(j) < 2:
        return {"n": len(j), "tau": np.nan, "pvalue": np.nan}
    res = kendalltau(j["a"].to_numpy(), j["b"].to_numpy())
    return {"n": len(j), "tau": float(res.statistic), "pvalue": float(res.pvalue)}


def win_rate_rank_agreement(df: pd.DataFrame, *, entity: str = "generator_2") -> pd.DataFrame:
    """The judge-swap effect on a ranking built from the verdicts: for every two judges, Kendall's tau between
    the win rates (:func:`win_rates`) of the entities (models) both judged, and the largest win-rate shift.

    Returns
    -------
    DataFrame: ``judge_a``, ``judge_b``, ``n`` (common entities), ``tau``, ``pvalue``, ``max_shift`` (largest
    |win rate b − win rate a| over common entities, in [0, 1]) and ``max_shift_entity``.
    """
    w = win_rates(df, by=("judge", entity)).pivot(index=entity, columns="judge", values="win_rate")
    rows = []
    for a, b in combinations(sorted(w.columns), 2):
        r = rank_correlation(w[a], w[b])
        diff = (w[b] - w[a]).abs().dropna()
        rows.append(dict(judge_a=a, judge_b=b, **r, max_shift=float(diff.max()) if len(diff) else np.nan,
                         max_shift_entity=str(diff.idxmax()) if len(diff) else ""))
    return pd.DataFrame(rows, columns=["judge_a", "judge_b", "n", "tau", "pvalue", "max_shift",
                                       "max_shift_entity"])


def leaderboard_rank_agreement(leaderboards: pd.DataFrame, *, value: str = "win_rate", min_common: int = 3,
                               exclude_baseline: bool = True) -> pd.DataFrame:
    """The judge-swap effect on rankings: Kendall's tau between every two leaderboards of the same version.

    Parameters
    ----------
    leaderboards : long table of :func:`evallab.datasets.load_alpaca_eval_leaderboards` (``version``,
        ``leaderboard``, ``model``, ``value``, ``is_baseline``).
    value : the score ranked (``win_rate``, ``length_controlled_winrate``, ...).
    min_common : pairs of leaderboards sharing fewer models are left out.
    exclude_baseline : drop each board's baseline row (its 50% is fixed by construction).

    Returns
    -------
    DataFrame: ``version``, ``leaderboard_a``, ``leaderboard_b``, ``n`` (common models), ``tau``, ``pvalue``,
    sorted by version and n (largest first).
    """
    lb = leaderboards
    if exclude_baseline and "is_baseline" in lb.columns:
        lb = lb[~lb["is_baseline"]]
    lb = lb[lb[value].notna()]
    rows = []
    for version, g in lb.groupby("version", sort=True):
        boards = {k: s.drop_duplicates("model").set_index("model")[value] for k, s in g.groupby("leaderboard")}
        for a, b in combinations(sorted(boards), 2):
            r = rank_correlation(boards[a], boards[b])
            if r["n"] >= min_common:
                rows.append(dict(version=version, leaderboard_a=a, leaderboard_b=b, **r))
    out = pd.DataFrame(rows, columns=["version", "leaderboard_a", "leaderboard_b", "n", "tau", "pvalue"])
    return out.sort_values(["version", "n"], ascending=[True, False]).reset_index(drop=True)


