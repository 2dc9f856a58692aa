"""Selective judging with a guarantee: trust the judge where it is confident, escalate the rest to a human.

Jung, Brahman & Choi (2024), "Trust or Escalate: LLM Judges with Provable Guarantees for Human Agreement"
(arXiv:2407.18370, §2.2, Algorithm 1): from a calibration split with gold labels, choose the confidence threshold
λ̂ such that, on new items from the same distribution, "P(judge agrees with the human | confidence ≥ λ̂) ≥ 1 − α"
holds with probability at least 1 − δ over the calibration draw. The threshold comes from fixed-sequence testing
(the Learn-then-Test framework, Angelopoulos et al. 2021): for thresholds from the highest confidence down, test
H0(λ): risk(λ) > α with the exact binomial p-value ``p(λ) = P(Bin(n(λ), α) ≤ errors(λ))`` — n(λ) items kept, errors
among them — and go on while p(λ) ≤ δ; λ̂ is the last threshold rejected. Equivalently the one-sided Clopper–Pearson
upper bound (level 1 − δ) of the disagreement rate among the kept items is below α at every threshold down to λ̂.
When even the highest threshold is not rejected the judge abstains on everything (coverage 0) — the guarantee is
kept by trusting nothing.

Confidence of an item (:func:`item_confidence`): the share of its replies that give its majority verdict — across
repeated samples, both presentation orders and any columns named in ``over`` (Jung et al.'s "simulated
annotators": the same model under several prompts); or the verdict's probability ``exp(verdict_logprob)`` where
the run recorded it. An item whose top verdicts tie has no majority: it is always escalated and counted.

Functions
---------
- :func:`item_confidence` — per item: majority verdict, confidence, agreement with gold.
- :func:`fixed_sequence_threshold` — Algorithm 1 on arrays (confidence, agreement); the whole test sequence.
- :func:`selective_judging` — per group: the threshold from a calibration split, coverage and agreement on the
  held-out split, repeated over random splits (the share of splits whose held-out agreement reaches 1 − α).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from evallab._results import CLOPPER_PEARSON, Measure, Results, results
from evallab.errors import DataError, EvallabError
from evallab.metrics._design import check_design, groups, needs_verdicts, not_computable

NAN = float("nan")


def item_confidence(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, over: Sequence[str] = (),
                    source: str = "agreement") -> pd.DataFrame:
    """Per (group, item): the judge's majority verdict, its confidence and whether it agrees with gold.

    Parameters
    ----------
    df : tidy verdict table.
    by : grouping columns (the judge).
    over : design columns pooled ON PURPOSE as simulated annotators (e.g. ``["strategy"]``: one model under several
        prompts); every other design column must be in ``by`` (checked).
    source : ``"agreement"`` — confidence = share of the item's parsed replies (orders, samples, ``over``) giving the
        majority verdict, in [1/k, 1]; ``"logprob"`` — ``exp(verdict_logprob)`` of the item's one reply (needs the
        column, one reply per item per group).

    Returns
    -------
    DataFrame: ``by``, ``dataset``, ``item_id``, ``verdict`` (majority; NA when the top verdicts tie or nothing
    parsed), ``confidence``, ``replies`` (parsed), ``gold``, ``agrees`` (1.0/0.0, NaN without gold or verdict).

    Raises
    ------
    DesignError
        Several replies per (item, order, sample) within a group after pooling ``over``.
    DataError
        ``source="logprob"`` without a ``verdict_logprob`` column, or with several replies per item.

    References
    ----------
    J. Jung, F. Brahman and Y. Choi (2024), "Trust or Escalate: LLM Judges with Provable Guarantees for Human
    Agreement", arXiv:2407.18370, §2.2 (confidence from simulated annotators).

    Examples
    --------
    q2's two samples tie (no majority); q3 fails in 2 of 3 samples against gold pass:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2", "q3", "q3", "q3"], "judge": "A",
    ...                                    "sample": [0, 1, 0, 1, 0, 1, 2], "gold": "pass",
    ...                                    "verdict": ["pass", "pass", "pass", "fail", "fail", "fail", "pass"]}))
    >>> print(item_confidence(df)[["item_id", "verdict", "confidence", "replies", "agrees"]].round(3)
    ...       .to_string(index=False))
    item_id verdict  confidence  replies  agrees
         q1    pass       1.000        2     1.0
         q2    <NA>       0.500        2     NaN
         q3    fail       0.667        3     0.0
    """
    by, over = list(by), list(over)
    if source not in ("agreement", "logprob"):
        raise EvallabError(f"source={source!r}; expected 'agreement' or 'logprob'")
    check_design(df, [*by, *over])
    key = list(dict.fromkeys([*by, "dataset", "item_id"]))
    gold = df.groupby(key, observed=True, sort=True, dropna=False)["gold"].first()
    ok = df[df["verdict"].notna()]
    if source == "logprob":
        if "verdict_logprob" not in df.columns:
            raise DataError("source='logprob' needs a verdict_logprob column (record it with --logprobs)",
                            column="verdict_logprob")
        if ok.duplicated(key).any():
            raise DataError("source='logprob' takes one reply per item; this table has several (orders or samples): "
                            "use source='agreement'", column="verdict_logprob")
        lp = pd.to_numeric(ok["verdict_logprob"], errors="coerce")
        out = ok[key].assign(verdict=ok["verdict"].to_numpy(), confidence=np.exp(lp.to_numpy(float)), replies=1)
        out = out.set_index(key)
    else:
        counts = ok.groupby([*key, "verdict"], observed=True, sort=True, dropna=False).size().unstack(
            "verdict", fill_value=0)
        if len(counts) == 0:
            out = pd.DataFrame(columns=["verdict", "confidence", "replies"],
                               index=pd.MultiIndex.from_tuples([], names=key))
        else:
            arr = counts.to_numpy(float)
            n = arr.sum(1)
            top = arr.max(1)
            tied = (arr == top[:, None]).sum(1) > 1
            labels = np.asarray(counts.columns, dtype=object)
            verdict = np.where(tied, None, labels[arr.argmax(1)])
            out = pd.DataFrame({"verdict": verdict, "confidence": top / n, "replies": n.astype(int)},
                               index=counts.index)
    out = out.reindex(gold.index)
    out["gold"] = gold
    out["replies"] = out["replies"].fillna(0).astype(int)
    has = out["verdict"].notna() & out["gold"].notna()
    out["agrees"] = np.where(has, (out["verdict"].astype(str) == out["gold"].astype(str)).astype(float), NAN)
    out["verdict"] = out["verdict"].astype("string")
    return out.reset_index()


def fixed_sequence_threshold(confidence, agrees, *, alpha: float = 0.1, delta: float = 0.1,
                             thresholds: Sequence[float] | None = None) -> dict:
    """Jung et al. (2024) Algorithm 1: the lowest threshold whose kept items agree with gold at rate ≥ 1 − α with
    probability ≥ 1 − δ, by fixed-sequence testing from the highest threshold down.

    Parameters
    ----------
    confidence : array (n,) — the judge's confidence per calibration item (larger = surer).
    agrees : array (n,) — 1 when the judge's verdict agrees with gold, else 0.
    alpha : tolerated disagreement rate among trusted items, in (0, 1).
    delta : tolerated probability that the guarantee fails, in (0, 1).
    thresholds : candidate thresholds (default: the distinct confidences), tested from the largest down.

    Returns
    -------
    dict: ``threshold`` (λ̂; ``inf`` when none is accepted: abstain on everything), ``kept`` (calibration items
    with confidence ≥ λ̂), ``coverage`` (kept / n), ``errors`` (disagreements among the kept), ``agreement``
    (among the kept; NaN when none), ``upper_risk`` (one-sided Clopper–Pearson 1 − δ upper bound of the
    disagreement rate among the kept), ``sequence`` (DataFrame: threshold, kept, errors, pvalue, rejected — the
    tests made, in order; the first non-rejected one ends the sequence).

    Raises
    ------
    EvallabError
        Mismatched lengths, values out of range, NaN.

    References
    ----------
    J. Jung, F. Brahman and Y. Choi (2024), "Trust or Escalate", arXiv:2407.18370, §2.2, Algorithm 1;
    A. N. Angelopoulos, S. Bates, E. J. Candès, M. I. Jordan and L. Lei (2021), "Learn then Test: Calibrating
    Predictive Algorithms to Achieve Risk Control", arXiv:2110.01052.

    Examples
    --------
    30 items at confidence 0.9, all agreeing (p = 0.9³⁰ = 0.042 ≤ δ: rejected), then 10 at 0.6 with 5 errors
    (p = P(Bin(40, 0.1) ≤ 5) = 0.794: the sequence stops). The bound is 1 − 0.1^(1/30):

    >>> fit = fixed_sequence_threshold([0.9] * 30 + [0.6] * 10, [1] * 35 + [0] * 5, alpha=0.1, delta=0.1)
    >>> fit["threshold"], fit["kept"], fit["coverage"], round(fit["upper_risk"], 4)
    (0.9, 30, 0.75, 0.0739)
    >>> fit["sequence"].rejected.tolist()
    [True, False]
    """
    c = np.asarray(confidence, float)
    fit = _fixed_sequence(c, agrees, alpha, delta, thresholds, first_split=True)
    rows = fit.pop("rows")
    if rows[0]:
        # the tests as columns (the same values and dtypes as a frame of one dict per test)
        seq = pd.DataFrame({"threshold": np.array(rows[0], float), "kept": np.array(rows[1], np.int64),
                            "errors": np.array(rows[2], np.int64), "pvalue": np.array(rows[3], float),
                            "rejected": np.array(rows[4], bool)})
    else:
        seq = pd.DataFrame([], columns=["threshold", "kept", "errors", "pvalue", "rejected"])
    return {**fit, "sequence": seq}


def _fixed_sequence(c: np.ndarray, agrees, alpha: float, delta: float, thresholds, first_split: bool) -> dict:
    """:func:`fixed_sequence_threshold` without the ``sequence`` frame: its tests as ``rows`` (threshold, kept,
    errors, pvalue, rejected lists); ``first_split=False`` leaves out what only a report's worked example reads
    (``upper_risk``, ``rows``)."""
    a = np.asarray(agrees, float)
    if len(c) != len(a):
        raise EvallabError(f"{len(c)} confidences and {len(a)} agreement values; expected one of each per item")
    if not (np.isfinite(c).all() and np.isin(a, (0.0, 1.0)).all()):
        raise EvallabError("confidence must be finite and agrees 0 or 1 for every calibration item")
    for name, x in (("alpha", alpha), ("delta", delta)):
        if not 0 < x < 1:
            raise EvallabError(f"{name}={x}; expected a value strictly between 0 and 1")
    lam = np.unique(c)[::-1] if thresholds is None else np.sort(np.asarray(thresholds, float))[::-1]
    order = np.argsort(-c, kind="stable")
    cs, errs = c[order], np.cumsum(1 - a[order])
    # every test at once: items with confidence >= t, errors among them, P(Bin(kept, alpha) <= errors) (the same
    # elementwise binomial cdf as one call per test); the sequence stops at the first test not rejected
    ks = np.searchsorted(-cs, -lam, side="right")
    some = ks > 0
    es = np.zeros(len(lam), np.int64)
    es[some] = errs[ks[some] - 1].astype(np.int64)
    ps = np.ones(len(lam))
    if some.any():
        ps[some] = sps.binom.cdf(es[some], ks[some], alpha)
    rej = ps <= delta
    stop = int(np.argmin(rej)) if not rej.all() else len(lam)  # index of the first test not rejected
    n_tests = min(stop + 1, len(lam))
    out = {}
    if first_split:
        out["rows"] = ([float(t) for t in lam[:n_tests]], [int(k) for k in ks[:n_tests]],
                       [int(e) for e in es[:n_tests]], [float(p) for p in ps[:n_tests]],
                       [bool(r) for r in rej[:n_tests]])
    if stop == 0:
        out.update(threshold=float("inf"), kept=0, coverage=0.0, errors=0, agreement=NAN, upper_risk=NAN)
        return out
    t, k, e = float(lam[stop - 1]), int(ks[stop - 1]), int(es[stop - 1])
    upper = (float(sps.beta.ppf(1 - delta, e + 1, k - e)) if e < k else 1.0) if first_split else NAN
    out.update(threshold=t, kept=k, coverage=k / len(c), errors=e, agreement=1 - e / k, upper_risk=upper)
    return out


@needs_verdicts("selective judging")
def selective_judging(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, over: Sequence[str] = (),
                      source: str = "agreement", alpha: float = 0.1, delta: float = 0.1,
                      calibration_share: float = 0.5, splits: int = 100, min_calibration: int = 30,
                      seed: int = 0) -> Results:
    """Per group: the trust threshold from a calibration split and what it gives on the held-out items.

    Items with gold and a majority verdict are split at random (``calibration_share`` to calibrate, the rest
    held out), ``splits`` times. A split *certifies* when Algorithm 1 accepts a threshold on its calibration part;
    one that certifies nothing escalates every item. What the procedure gives is stated over the certifying splits
    (issue 26, defect 14: never one split's threshold beside a mean over all splits): the share of splits that
    certify, the thresholds they certify (median, lowest, highest), the held-out coverage and agreement among them,
    and the share whose held-out agreement among kept items is ≥ 1 − α (the guarantee is on the population, so a
    finite held-out set adds its own noise). The first split's threshold and figures are kept as a worked example.

    Parameters
    ----------
    df, by, over, source : see :func:`item_confidence`.
    alpha, delta : see :func:`fixed_sequence_threshold`.
    calibration_share : share of items in the calibration split, in (0, 1).
    splits : random splits (≥ 1).
    min_calibration : fewest calibration items; fewer → NaN with a note.

    Returns
    -------
    Results, one row per group (keys ``by``; no intervals — the guarantee is the threshold's, see below):

    - counts: ``items`` (gold and a majority verdict), ``no_majority`` (escalated: tied top verdicts or nothing
      parsed), ``held_out_items`` (first split), ``splits``;
    - over the splits: ``certified_splits`` and ``certify_rate`` (share of the ``splits`` whose calibration part
      certifies a threshold); ``threshold_median``, ``threshold_min``, ``threshold_max`` (coefficients, the
      certified thresholds; NaN when no split certifies, with a note: every item is escalated);
      ``certified_coverage`` (mean held-out coverage over the certifying splits); ``mean_coverage`` (over every
      split, a split certifying nothing counted as 0: the procedure's expected coverage); ``mean_agreement``
      (held-out agreement among kept items, averaged over the ``kept_splits`` splits that kept a held-out item —
      certifying ones); ``held_out_guarantee_rate`` (share of those ``kept_splits`` meeting 1 − α; n =
      ``kept_splits``); ``overall_agreement`` (all items, no abstention; n = ``items``);
    - the first split, a worked example: ``threshold`` (its λ̂; NaN when it certifies nothing),
      ``calibration_coverage``, ``calibration_agreement``, ``upper_risk`` (the one-sided Clopper–Pearson 1 − δ
      upper bound of the disagreement rate among kept calibration items), ``held_out_coverage``,
      ``held_out_agreement``;
    - ``alpha``, ``delta`` (the parameters), ``note``.

    Raises
    ------
    EvallabError
        ``calibration_share`` outside (0, 1) or ``splits < 1``; see :func:`item_confidence`.

    References
    ----------
    J. Jung, F. Brahman and Y. Choi (2024), "Trust or Escalate", arXiv:2407.18370, §2.2, Algorithm 1.

    Examples
    --------
    Two items with gold and a majority (one of them right) and one tied item: too few to calibrate on.

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2", "q3", "q3", "q3"], "judge": "A",
    ...                                    "sample": [0, 1, 0, 1, 0, 1, 2], "gold": "pass",
    ...                                    "verdict": ["pass", "pass", "pass", "fail", "fail", "fail", "pass"]}))
    >>> r = selective_judging(df)
    >>> int(r.loc[0, "items"]), int(r.loc[0, "no_majority"]), float(r.loc[0, "overall_agreement"]), r.loc[0, "note"]
    (2, 1, 0.5, 'not computable: 1 calibration items, fewer than min_calibration=30')
    """
    if not 0 < calibration_share < 1:
        raise EvallabError(f"calibration_share={calibration_share}; expected a share strictly between 0 and 1")
    if splits < 1:
        raise EvallabError(f"splits={splits}; expected at least 1")
    by = list(by)
    ic = item_confidence(df, by, over=over, source=source)
    rows = []
    for key, g in groups(ic, by):
        use = g[g["agrees"].notna()]
        r = dict(key, items=len(use), no_majority=int((g["verdict"].isna() & g["gold"].notna()).sum()),
                 alpha=alpha, delta=delta, splits=splits, note="",
                 overall_agreement=float(use["agrees"].mean()) if len(use) else NAN)
        n_cal = int(round(calibration_share * len(use)))
        if n_cal < min_calibration or len(use) - n_cal < 1:
            r["note"] = not_computable(f"{n_cal} calibration items, fewer than min_calibration={min_calibration}")
            rows.append(r)
            continue
        c, a = use["confidence"].to_numpy(float), use["agrees"].to_numpy(float)
        rng = np.random.default_rng(seed)
        cov, agr, met, lam = [], [], [], []
        for s in range(splits):
            perm = rng.permutation(len(use))
            cal, test = perm[:n_cal], perm[n_cal:]
            fit = _fixed_sequence(c[cal], a[cal], alpha, delta, None, first_split=s == 0)
            kept = test[c[test] >= fit["threshold"]]
            cv = len(kept) / len(test)
            ag = float(a[kept].mean()) if len(kept) else NAN
            cov.append(cv)
            agr.append(ag)
            if np.isfinite(fit["threshold"]):
                lam.append(fit["threshold"])
            if len(kept):
                met.append(ag >= 1 - alpha)
            if s == 0:
                r.update(threshold=fit["threshold"] if np.isfinite(fit["threshold"]) else NAN,
                         calibration_coverage=fit["coverage"],
                         calibration_agreement=fit["agreement"], upper_risk=fit["upper_risk"],
                         held_out_items=len(test), held_out_coverage=cv, held_out_agreement=ag)
        r.update(certified_splits=len(lam), certify_rate=len(lam) / splits, kept_splits=len(met),
                 mean_coverage=float(np.mean(cov)),
                 certified_coverage=float(np.sum(cov) / len(lam)) if lam else NAN,  # 0 on the others
                 threshold_median=float(np.median(lam)) if lam else NAN,
                 threshold_min=float(np.min(lam)) if lam else NAN,
                 threshold_max=float(np.max(lam)) if lam else NAN,
                 mean_agreement=float(np.nanmean(agr)) if np.isfinite(agr).any() else NAN,
                 held_out_guarantee_rate=float(np.mean(met)) if met else NAN)
        if not lam:
            r["note"] = not_computable(f"no threshold passes the test in any of {splits} calibration splits: every "
                                       "item is escalated (coverage 0)")
        rows.append(r)
    held = dict(unit="proportion", n="held_out_items", n_unit="items")
    measures = [
        Measure("items", "Items", "count"), Measure("no_majority", "No majority (escalated)", "count"),
        Measure("threshold", "Threshold (first split)", "coefficient", digits=2),
        Measure("calibration_coverage", "Coverage (first calibration split)", "proportion"),
        Measure("calibration_agreement", "Agreement kept (first calibration split)", "proportion"),
        Measure("upper_risk", f"Disagreement bound (first calibration split; {CLOPPER_PEARSON}, one-sided 1 − δ)",
                "proportion"),
        Measure("held_out_items", "Held-out items", "count"),
        Measure("held_out_coverage", "Coverage (first held-out split)", **held),
        Measure("held_out_agreement", "Agreement kept (first held-out split)", "proportion"),
        Measure("certified_splits", "Splits certifying a threshold", "count"),
        Measure("certify_rate", "Splits certifying a threshold", "proportion", n="splits", n_unit="splits"),
        Measure("threshold_median", "Threshold (median over certifying splits)", "coefficient", digits=2),
        Measure("threshold_min", "Threshold (lowest certified)", "coefficient", digits=2),
        Measure("threshold_max", "Threshold (highest certified)", "coefficient", digits=2),
        Measure("certified_coverage", "Coverage (held out, certifying splits)", **held),
        Measure("mean_coverage", "Coverage (held out, every split; 0 where none certified)", **held),
        Measure("kept_splits", "Splits keeping a held-out item", "count"),
        Measure("mean_agreement", "Agreement kept (held out, certifying splits)", "proportion"),
        Measure("held_out_guarantee_rate", "Splits meeting 1 − α (of those keeping an item)", "proportion",
                n="kept_splits", n_unit="splits"),
        Measure("overall_agreement", "Agreement without abstaining", "proportion", n="items", n_unit="items"),
        Measure("splits", "Splits", "count"),
    ]
    # every column in every row, NaN where a group could not be calibrated (a table where no group can still has them)
    cols = [*by, "items", "no_majority", "alpha", "delta", "splits", "note", "overall_agreement", "threshold",
            "calibration_coverage", "calibration_agreement", "upper_risk", "held_out_items", "held_out_coverage",
            "held_out_agreement", "certified_splits", "certify_rate", "kept_splits", "mean_coverage",
            "certified_coverage", "threshold_median", "threshold_min", "threshold_max", "mean_agreement",
            "held_out_guarantee_rate"]
    return results(pd.DataFrame(rows, columns=cols), measures, keys=by)


__all__ = ["fixed_sequence_threshold", "item_confidence", "selective_judging"]
