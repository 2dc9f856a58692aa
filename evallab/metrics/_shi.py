"""Shi et al. (2024, "Judging the Judges") figures under the authors' own counting, and family preference.

- :func:`authors_position_consistency` — position consistency as Position-Bias-Analyzer's code counts it when it
  prints "N out of M answers are consistent ... The consistent rate is X%" (``subeval/subjective/analyze_util.py``
  ``preprocess`` with ``find_inconsistent`` of ``subeval/subjective/util.py``, commit 9f8b7e8e; read, not copied).
  The unit is the REPLY, not the pair: M is every reply the authors' extraction parsed (the first
  ``[[A]]``/``[[B]]``/``[[C]]``/``[[D]]``), N the parsed replies whose swapped reply (same question, the two names
  exchanged) gives the same verdict in original terms (A then B, B then A, C and C, D and D as shown) — and a
  parsed reply whose swapped reply is unparsed (dropped before the pairing) counts as CONSISTENT. A consistent
  pair therefore counts twice, an inconsistent pair twice against, and a pair with one unparsed reply once for.
  evallab's own figure (:func:`evallab.metrics._position.position_consistency`) is the share of pairs with both
  replies parsed; it equals the judge-level "Positional Consistency" of the authors' later analysis
  (``judging_the_judges/calculate_consistency_and_preference``: consistent pairs / primacy + recency + consistent
  pairs, pairs with an unparsed reply left out).
- :func:`shi_preference_score` — "positional preference score" (Shi et al. 2024, §3.1 preference fairness, as the
  authors' ``consistency_preference_calculation.py`` computes it): within a unit (contestant model × task), the raw
  score ``rc · rc/(rc + pc) − pc · pc/(rc + pc)`` with ``rc``/``pc`` the recency-/primacy-preferred pairs — which
  is ``rc − pc`` — rescaled to [−1, 1] by the unit's number of pairs asked in both orders; averaged over the units.
  Primacy-preferred: the first-shown output won in both orders, or in one order with a tie in the other (MT-Bench's
  "Biased toward first", :func:`~evallab.metrics._position.position_bias`); recency-preferred the mirror.
  Negative = the first-shown output favoured.
- :func:`random_judge_stability` — the chance level of repetition stability (Shi et al. 2024, §3.1; the mean share
  of a request's samples giving its most frequent verdict) for a judge picking one of ``categories`` verdicts at
  random in each sample (:func:`evallab.metrics._agreement.coin_flip_chance`).
- :func:`family_preference` — the win rate a family of judges gives a contestant of its own family against the win
  rate the other judges give it on the same comparisons (arena-hard-auto#10: do judges favour their own family?).
  On data without gold this is a DIFFERENCE IN WIN RATE between judge groups, not an error of either group.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab._results import Measure, Results, results
from evallab.errors import DesignError
from evallab.metrics import _intervals as intervals
from evallab.metrics._agreement import coin_flip_chance
from evallab.metrics._design import check_design, groups, item_key, not_computable

NAN = float("nan")

#: the measures of :func:`authors_position_consistency`
AUTHORS_MEASURES = [
    Measure("parsed", "Parsed replies (authors' extraction)", "count"),
    Measure("consistent", "Consistent replies (authors' counting)", "count"),
    Measure("partner_unparsed", "Parsed replies whose swapped reply is unparsed (counted consistent)", "count"),
    Measure("position_consistency", "Position consistency (authors' counting: replies)", "proportion", n="parsed",
            n_unit="replies"),
]
#: the measures of :func:`shi_preference_score`
PREFERENCE_MEASURES = [
    Measure("units", "Units (contestant × task)", "count"),
    Measure("pairs", "Pairs asked in both orders", "count"),
    Measure("primacy", "Primacy-preferred pairs", "count"), Measure("recency", "Recency-preferred pairs", "count"),
    Measure("preference_score", "Positional preference score (Shi et al.: mean over units)", "coefficient",
            n="units", n_unit="units", digits=3),
]
#: the measures of :func:`family_preference`
FAMILY_MEASURES = [
    Measure("items", "Comparisons", "count"), Measure("replies", "Parsed replies", "count"),
    Measure("win_rate", "Contestant's win rate (ties half)", "proportion", "win_rate_low", "win_rate_high",
            method_column="win_rate_method", n="items", n_unit="items"),
    Measure("difference", "Family minus other judges (win rate)", "pp", "difference_low", "difference_high",
            method_column="difference_method", n="items", n_unit="items"),
]


def authors_position_consistency(df: pd.DataFrame, by: Sequence[str] = ("judge", "sample"), *,
                                 verdict: str = "authors_verdict") -> Results:
    """Position consistency as Position-Bias-Analyzer prints it (module docstring): parsed replies as the unit, a
    reply whose swapped reply is unparsed counted consistent.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table of pairwise replies in orders ``ab`` and ``ba`` (one reply per item, order and ``by``).
    by : sequence of str, default ("judge", "sample")
        One group = one record file of the authors (a judge's run of one repetition).
    verdict : str, default "authors_verdict"
        The column of verdicts in original terms (NA = unparsed): the authors' extraction by default, ``"verdict"``
        for evallab's parse under the authors' counting.

    Returns
    -------
    Results
        One row per group: ``by`` + ``parsed`` (M; count), ``consistent`` (N; count), ``partner_unparsed`` (count),
        ``position_consistency`` = N / M (proportion; no interval: the authors print none), ``rate_pct`` (N / M ×
        100 rounded to 2 decimals as printed), ``note``.

    Raises
    ------
    DesignError
        Several replies per (item, order) within a group, or a missing column.

    Source: Position-Bias-Analyzer, ``subeval/subjective/analyze_util.py`` (``preprocess``, ``match_answer``) and
    ``subeval/subjective/util.py`` (``find_inconsistent``), commit 9f8b7e8e.

    Examples
    --------
    q1 consistent (1, 1), q2 inconsistent (1, 2), q3's ``ba`` reply unparsed: M = 5 parsed replies, N = 2 + 1:

    >>> import pandas as pd
    >>> from evallab.metrics._shi import authors_position_consistency
    >>> df = pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2", "q3", "q3"], "judge": "J", "sample": 0,
    ...     "order": ["ab", "ba"] * 3, "authors_verdict": ["1", "1", "1", "2", "2", None]})
    >>> r = authors_position_consistency(df)
    >>> print(r[["parsed", "consistent", "partner_unparsed", "rate_pct"]].to_string(index=False))
     parsed  consistent  partner_unparsed  rate_pct
          5           3                 1      60.0
    """
    by = list(by)
    missing = [c for c in (*by, "item_id", "order", verdict) if c not in df.columns]
    if missing:
        raise DesignError(f"column(s) {missing} missing; expected {[*by, 'item_id', 'order', verdict]}")
    key = [*by, "item_id"]
    d = df[[*key, "order", verdict]].copy()
    if d.duplicated([*key, "order"]).any():
        raise DesignError(f"several replies per (item, order) within {by}; expected one (one record file per group)")
    v = d.set_index([*key, "order"])[verdict].astype(object).unstack("order")
    for o in ("ab", "ba"):
        if o not in v:
            v[o] = None
    a, b = v["ab"], v["ba"]
    pa, pb = a.notna(), b.notna()
    flags = pd.DataFrame({"parsed": pa.astype(int) + pb.astype(int),
                          "same": (pa & pb & (a == b)).astype(int), "lone": (pa ^ pb).astype(int)})
    per = flags.groupby(level=list(range(len(by))), sort=True).sum() if by else flags.sum().to_frame().T
    out = pd.DataFrame({"parsed": per["parsed"], "consistent": 2 * per["same"] + per["lone"],
                        "partner_unparsed": per["lone"]})
    out["position_consistency"] = (out["consistent"] / out["parsed"]).where(out["parsed"] > 0)
    out["rate_pct"] = (out["position_consistency"] * 100).round(2)
    out["note"] = np.where(out["parsed"] > 0, "", not_computable("no parsed reply"))
    out = out.reset_index(drop=not by)
    return results(out, AUTHORS_MEASURES, keys=by)


def shi_preference_score(df: pd.DataFrame, by: Sequence[str] = ("judge", "sample"), *,
                         unit: Sequence[str] = ("subset", "output_2_model")) -> Results:
    """Shi et al.'s positional preference score per group: ``(recency − primacy) / pairs`` within each ``unit``
    (contestant × task), averaged over the units (module docstring).

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table of pairwise replies in orders ``ab`` and ``ba``.
    by : sequence of str, default ("judge", "sample")
        The group (one record file of the authors).
    unit : sequence of str, default ("subset", "output_2_model")
        The columns of the averaged unit (the MT-Bench task and the contestant compared with the reference model).

    Returns
    -------
    Results
        One row per group: ``by`` + ``units``, ``pairs`` (asked in both orders, unparsed ones included as in the
        authors' denominator), ``primacy``, ``recency`` (counts), ``preference_score`` (coefficient in [−1, 1]; 0 =
        fair, negative = the first-shown output favoured), ``note``.

    Source: Shi et al. (2024), §3.1 "preference fairness"; Position-Bias-Analyzer
    ``judging_the_judges/calculate_consistency_and_preference/consistency_preference_calculation.py``.

    Examples
    --------
    Unit t1: 2 pairs, one primacy-preferred (1 then 2: output 1 won when first, output 2 when first): −1/2; unit
    t2: 1 pair, recency-preferred: +1. Mean (−0.5 + 1) / 2 = 0.25:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics._shi import shi_preference_score
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["a", "a", "b", "b", "c", "c"], "judge": "J",
    ...     "subset": ["t1"] * 4 + ["t2"] * 2, "order": ["ab", "ba"] * 3,
    ...     "verdict": ["1", "2", "1", "1", "2", "1"]}))
    >>> r = shi_preference_score(df, ["judge"], unit=["subset"])
    >>> print(r[["units", "pairs", "primacy", "recency", "preference_score"]].to_string(index=False))
     units  pairs  primacy  recency  preference_score
         2      3        1        1              0.25
    """
    by, unit = list(by), [c for c in unit if c in df.columns]
    key = [*by, *unit, "item_id"]
    missing = [c for c in (*key, "order", "verdict") if c not in df.columns]
    if missing:
        raise DesignError(f"column(s) {missing} missing; expected {[*key, 'order', 'verdict']}")
    d = df[[*key, "order", "verdict"]]
    if d.duplicated([*key, "order"]).any():
        raise DesignError(f"several replies per (item, order) within {[*by, *unit]}; expected one")
    v = d.assign(verdict=d["verdict"].astype(object)).set_index([*key, "order"])["verdict"].unstack("order")
    v = v.reindex(columns=["ab", "ba"])
    asked = pd.Series(True, index=v.index)
    if d.groupby(key, observed=True)["order"].nunique().lt(2).any():  # a comparison asked in one order only
        asked = d.groupby(key, observed=True)["order"].nunique().reindex(v.index).eq(2)
    a, b = v["ab"], v["ba"]
    both = asked & a.notna() & b.notna() & (a != b)
    # +1 per order the first-shown output won (ab: output 1; ba: output 2), -1 per order the second-shown won
    net = (a.eq("1").astype(int) - a.eq("2")) + (b.eq("2").astype(int) - b.eq("1"))
    per = pd.DataFrame({"pairs": asked.astype(int), "primacy": (both & (net > 0)).astype(int),
                        "recency": (both & (net < 0)).astype(int)}).groupby(level=list(range(len(by) + len(unit))),
                                                                          sort=True).sum()
    per = per[per["pairs"] > 0]
    per["score"] = (per["recency"] - per["primacy"]) / per["pairs"]
    agg = per.groupby(level=list(range(len(by))), sort=True).agg(
        units=("score", "size"), pairs=("pairs", "sum"), primacy=("primacy", "sum"), recency=("recency", "sum"),
        preference_score=("score", "mean")).reset_index()
    agg["note"] = ""
    return results(agg, PREFERENCE_MEASURES, keys=by)


#: the measures of :func:`shi_repetition_stability`
SHI_STABILITY_MEASURES = [
    Measure("requests", "Requests (a parsed sample or more)", "count"),
    Measure("repetition_stability", "Repetition stability (Shi et al.: every sample in the denominator)",
            "proportion", n="requests", n_unit="requests"),
]


def shi_repetition_stability(df: pd.DataFrame, by: Sequence[str] = ("judge",)) -> Results:
    """Repetition stability exactly as Shi et al.'s code computes it: per request (item and order within the
    group), the count of its most frequent PARSED verdict over ALL its samples (an unparsed sample counts against
    the mode), averaged over the requests with at least one parsed sample.

    :func:`evallab.metrics._agreement.repetition_stability` divides by the parsed samples instead (and needs two of
    them); the two agree when every reply is parsed.

    Returns
    -------
    Results
        One row per group: ``by`` + ``requests`` (count), ``repetition_stability`` (proportion in [1/k, 1]; no
        interval), ``note``.

    Source: Position-Bias-Analyzer ``judging_the_judges/repetitional_consistency/calculate_repetitional_consistency.py``
    (``calculate_repetitional_consistency_rates``: the largest ``value_counts`` over the number of repetitions).

    Examples
    --------
    Request q1: 1, 1, unparsed → 2/3; q2: 2, 1, 2 → 2/3; q3: tie, tie, tie → 1. Mean 7/9:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics._shi import shi_repetition_stability
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1"] * 3 + ["q2"] * 3 + ["q3"] * 3, "judge": "J",
    ...     "order": "ab", "sample": [0, 1, 2] * 3, "verdict": ["1", "1", None, "2", "1", "2", "tie", "tie", "tie"]}))
    >>> round(float(shi_repetition_stability(df)["repetition_stability"].iloc[0]), 4)
    0.7778
    """
    by = list(by)
    req = list(dict.fromkeys([*by, *[c for c in ("dataset", "item_id", "order") if c in df.columns]]))
    missing = [c for c in (*req, "verdict") if c not in df.columns]
    if missing:
        raise DesignError(f"column(s) {missing} missing; expected {[*req, 'verdict']}")
    total = df.groupby(req, observed=True, dropna=False).size()
    ok = df[df["verdict"].notna()]
    mode = ok.groupby([*req, "verdict"], observed=True, dropna=False).size().groupby(level=list(range(len(req))),
                                                                                     dropna=False).max()
    share = (mode / total.reindex(mode.index)).rename("share").reset_index()
    out = share.groupby(by, sort=True).agg(requests=("share", "size"), repetition_stability=("share", "mean"))
    out = out.reset_index()
    out["note"] = ""
    return results(out, SHI_STABILITY_MEASURES, keys=by)


def random_judge_stability(samples: int = 3, categories: int = 3) -> float:
    """Repetition stability of a judge that picks each of ``categories`` verdicts with equal chance in each of
    ``samples`` samples (the mean share of a request's samples giving its most frequent verdict): 17/27 ≈ 0.630
    for 3 samples of A/B/tie (:func:`evallab.metrics._agreement.coin_flip_chance`)."""
    return coin_flip_chance(samples, categories)["repetition_stability"]


def family_preference(df: pd.DataFrame, *, contestant: str, family_judges: Sequence[str],
                      models: Sequence[str] = ("output_1_model", "output_2_model"), confidence: float = 0.95,
                      n_resamples: int = 1000, seed: int = 0) -> Results:
    """The win rate of ``contestant`` as judged by ``family_judges`` (its own family) and by every other judge, on
    the comparisons both groups judged, and their difference — per judge, pooled per group, and paired.

    A reply's credit is 1 when the contestant's output won, ½ for a tie, 0 when it lost; unparsed replies are left
    out. Pooled win rate = credit / parsed replies over the group's judges, both orders and every sample. The
    comparison (item) is the resampling unit: every interval is a percentile item bootstrap (the difference paired
    over items, :func:`~evallab.metrics._intervals.ratio_difference_interval_method`), or Wilson where an item
    holds one reply.

    Parameters
    ----------
    df : DataFrame
        Tidy pairwise verdict table with the two outputs' model names in ``models`` (output 1, output 2).
    contestant : str
        The compared model (e.g. ``claude-v1``).
    family_judges : sequence of str
        The judges of the contestant's family (e.g. the three Claude 3 judges).
    models : (str, str), default ("output_1_model", "output_2_model")
        The columns naming output 1's and output 2's model.
    confidence, n_resamples, seed
        Level, bootstrap resamples over items and seed.

    Returns
    -------
    Results
        One row per judge, then ``"family judges"``, ``"other judges"`` and ``"family − others"``: ``group``,
        ``family`` (bool; NA on the difference), ``items``, ``replies``, ``win_rate`` (proportion in [0, 1]) with
        ``win_rate_low``/``_high``/``_method``; on the last row only ``difference`` (pp: a difference of
        proportions in [−1, 1]) with ``difference_low``/``_high``/``_method`` (paired item bootstrap); ``note``.

    Raises
    ------
    DesignError
        No comparison involves ``contestant``, a family judge is absent, or no other judge judged its comparisons.

    References
    ----------
    arena-hard-auto issue #10 (self-/family preference of judges); Shi et al. (2024) data.

    Examples
    --------
    Contestant ``m`` is output 2 of two items; family judge F gives it 1 and ½ on q1, 1 and 1 on q2 (7/8); judge
    O gives it 0 everywhere:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics._shi import family_preference
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2"] * 2, "judge": ["F"] * 4 + ["O"] * 4,
    ...     "order": ["ab", "ba"] * 4, "verdict": ["2", "tie", "2", "2", "1", "1", "1", "1"],
    ...     "output_1_model": "x", "output_2_model": "m"}))
    >>> r = family_preference(df, contestant="m", family_judges=["F"], n_resamples=0)
    >>> print(r[["group", "replies", "win_rate", "difference"]].to_string(index=False))
              group  replies  win_rate  difference
                  F        4     0.875         NaN
                  O        4     0.000         NaN
      family judges        4     0.875         NaN
       other judges        4     0.000         NaN
    family − others        8       NaN       0.875
    """
    m1, m2 = models
    missing = [c for c in ("item_id", "judge", "verdict", m1, m2) if c not in df.columns]
    if missing:
        raise DesignError(f"column(s) {missing} missing; expected the verdict table with {m1} and {m2}")
    d = df[(df[m1] == contestant) | (df[m2] == contestant)]
    if d.empty:
        raise DesignError(f"no comparison involves {contestant!r}; expected it in {m1} or {m2}")
    family = set(family_judges)
    absent = sorted(family - set(d["judge"].astype(str)))
    if absent:
        raise DesignError(f"family judge(s) {absent} judged no comparison of {contestant!r}")
    if set(d["judge"].astype(str)) <= family:
        raise DesignError(f"no judge outside the family judged {contestant!r}; expected other judges to compare with")
    check_design(d, ["judge"])
    d = d[d["verdict"].notna()]
    side = np.where(d[m2] == contestant, "2", "1")
    v = d["verdict"].astype(str).to_numpy()
    credit = np.where(v == side, 1.0, np.where(v == "tie", 0.5, 0.0))
    d = d.assign(_item=item_key(d), _credit=credit, _one=1.0, _fam=d["judge"].astype(str).isin(family))
    fam_items = set(d.loc[d["_fam"], "_item"])
    other_items = set(d.loc[~d["_fam"], "_item"])
    common = sorted(fam_items & other_items)
    d = d[d["_item"].isin(common)]
    kw = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)

    def sums(g: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        s = g.groupby("_item")[["_credit", "_one"]].sum().reindex(common, fill_value=0.0)
        return s["_credit"].to_numpy(float), s["_one"].to_numpy(float)

    rows = []

    def add(group: str, fam, g: pd.DataFrame, num: np.ndarray, den: np.ndarray) -> None:
        tot = den.sum()
        lo, hi, how = intervals.ratio_interval_method(num, den, **kw) if tot else (NAN, NAN, "")
        rows.append({"group": group, "family": fam, "items": int((den > 0).sum()), "replies": int(tot),
                     "win_rate": num.sum() / tot if tot else NAN, "win_rate_low": lo, "win_rate_high": hi,
                     "win_rate_method": how, "note": "" if tot else not_computable("no parsed reply")})

    for key, g in groups(d, ["judge"]):
        add(str(key["judge"]), str(key["judge"]) in family, g, *sums(g))
    fn, fd = sums(d[d["_fam"]])
    on, od = sums(d[~d["_fam"]])
    add("family judges", True, d[d["_fam"]], fn, fd)
    add("other judges", False, d[~d["_fam"]], on, od)
    diff = fn.sum() / fd.sum() - on.sum() / od.sum()
    lo, hi, how = intervals.ratio_difference_interval_method(fn, fd, on, od, **kw) if n_resamples > 0 else \
        (NAN, NAN, "")
    rows.append({"group": "family − others", "family": None, "items": len(common), "replies": int(fd.sum() + od.sum()),
                 "win_rate": NAN, "win_rate_low": NAN, "win_rate_high": NAN, "win_rate_method": "",
                 "difference": diff, "difference_low": lo, "difference_high": hi, "difference_method": how,
                 "note": "difference in win rate between judge groups on the same comparisons (no gold: not an "
                         "error of either group)"})
    out = pd.DataFrame(rows)
    for c in ("difference", "difference_low", "difference_high"):
        out[c] = out[c].astype(float) if c in out else NAN
    out["difference_method"] = out["difference_method"].fillna("")
    out["family"] = out["family"].astype("boolean")
    return results(out, FAMILY_MEASURES, level=confidence, keys=["group"])
