"""Anchor calibration: what an anchor set does to the judge before any item is graded, and contextual calibration.

Zhao, Wallace, Feng, Klein & Singh (2021), "Calibrate Before Use: Improving Few-Shot Performance of Language
Models" (ICML, §5): the in-context examples bias a model toward some labels; its label probabilities on a
CONTENT-FREE input (``"N/A"``, ``""``, ``"[MASK]"``) under the same prompt measure that bias, ``p̂_cf``.
Contextual calibration rescales every prediction by it: "q̂ = softmax(W p̂ + b)" with "W = diag(p̂_cf)⁻¹, b = 0".
For a pass/fail judge with p = P(PASS) that is

    q = (p / p_cf) / (p / p_cf + (1 − p) / (1 − p_cf)),

so the calibrated verdict is PASS exactly when p > p_cf: an anchor set that makes the judge say PASS to nothing
(p_cf > ½) raises the bar accordingly.

P(PASS) of a reply: from repeated samples (the share of an item's parsed samples that are ``pass``; at
temperature > 0 each sample is a draw of the verdict) or from the recorded verdict log-probability
(``exp(verdict_logprob)`` for a ``pass`` reply, ``1 − exp(·)`` for ``fail``; mean over samples).

Functions
---------
- :func:`pass_probability` — per (group, anchor set, item): P(PASS), parsed replies, gold.
- :func:`content_free_probe` — per (group, anchor set): p_cf(PASS) over the content-free probe items, Wilson
  interval over the probe replies.
- :func:`calibrate` — the formula above, vectorised.
- :func:`calibrated_rates` — per (group, anchor set): pass rate, false-pass rate on gold-FAIL items and agreement
  with gold, before and after contextual calibration, with item intervals.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evallab._results import WILSON, Measure, Results, results
from evallab.errors import DataError, EvallabError
from evallab.metrics import _intervals as intervals
from evallab.metrics._design import check_design, groups, needs_verdicts, not_computable

NAN = float("nan")
#: the content-free inputs of Zhao et al. (2021, §5)
CONTENT_FREE = ("N/A", "", "[MASK]")
#: item ids of the content-free probe replies start with this
PROBE_PREFIX = "content-free"


def pass_probability(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, source: str = "samples") -> pd.DataFrame:
    """P(PASS) per (group, anchor set, item).

    Parameters
    ----------
    df : DataFrame
        Pointwise tidy verdict table (``pass``/``fail``; ``warn`` counts as not pass) with ``anchor_set``.
    by : sequence of str, default ("judge",)
        Grouping columns besides ``anchor_set``.
    source : {"samples", "logprob"}, default "samples"
        ``"samples"``: share of parsed samples that pass; ``"logprob"``: from ``verdict_logprob``.

    Returns
    -------
    DataFrame
        ``by``, ``anchor_set``, ``dataset``, ``item_id``; ``p_pass`` (proportion in [0, 1]; NaN when nothing
        parsed), ``parsed``, ``passes`` (counts of replies), ``gold``.

    Raises
    ------
    DataError
        ``source="logprob"`` without a ``verdict_logprob`` column; a pairwise table.
    DesignError
        Several replies per (item, sample) inside a group.

    References
    ----------
    T. Z. Zhao, E. Wallace, S. Feng, D. Klein and S. Singh (2021), "Calibrate Before Use: Improving Few-Shot
    Performance of Language Models", ICML, §5.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["a1", "a1", "a2", "a2"], "judge": "A", "sample": [0, 1, 0, 1],
    ...                                    "verdict": ["pass", "pass", "pass", "fail"]}))
    >>> print(pass_probability(df)[["item_id", "p_pass", "parsed", "passes"]].to_string(index=False))
    item_id  p_pass  parsed  passes
         a1     1.0       2       2
         a2     0.5       2       1
    """
    if source not in ("samples", "logprob"):
        raise EvallabError(f"source={source!r}; expected 'samples' or 'logprob'")
    by = [c for c in by if c != "anchor_set"]
    check_design(df, [*by, "anchor_set"])
    v = df["verdict"].astype("string").str.lower()
    if v.isin(["1", "2", "tie"]).any():
        raise DataError("contextual calibration here takes pass/fail verdicts; this table has pairwise verdicts",
                        column="verdict")
    ok = v.notna().to_numpy()
    is_pass = (v == "pass").fillna(False).to_numpy(bool)
    if source == "logprob":
        if "verdict_logprob" not in df.columns:
            raise DataError("source='logprob' needs a verdict_logprob column (record it with --logprobs)",
                            column="verdict_logprob")
        pr = np.exp(pd.to_numeric(df["verdict_logprob"], errors="coerce").to_numpy(float))
        p = np.where(is_pass, pr, 1 - pr)
        ok = ok & np.isfinite(p)
    else:
        p = is_pass.astype(float)
    key = list(dict.fromkeys([*by, "anchor_set", "dataset", "item_id"]))
    d = df[key].assign(_p=np.where(ok, p, np.nan), _ok=ok.astype(int), _pass=(is_pass & ok).astype(int),
                       _gold=df["gold"].astype("string").str.lower().to_numpy())
    out = d.groupby(key, observed=True, sort=True, dropna=False).agg(
        p_pass=("_p", "mean"), parsed=("_ok", "sum"), passes=("_pass", "sum"), gold=("_gold", "first"))
    return out.reset_index()


def calibrate(p_pass, p_cf) -> np.ndarray:
    """Contextual calibration of P(PASS): ``q = (p/p_cf) / (p/p_cf + (1−p)/(1−p_cf))``.

    W = diag(p_cf)⁻¹, b = 0, then normalised; arrays broadcast.

    Parameters
    ----------
    p_pass : float or array
        P(PASS) of the answers, in [0, 1].
    p_cf : float or array
        P(PASS) on the content-free probe, in [0, 1].

    Returns
    -------
    ndarray of float
        q in [0, 1]; NaN where p_cf is 0 or 1 (a probe that always says one thing leaves nothing to rescale) or p
        is NaN.

    References
    ----------
    Zhao et al. (2021), "Calibrate Before Use", ICML, §5 (eq. with W = diag(p̂_cf)⁻¹).

    Examples
    --------
    q > ½ exactly when p > p_cf:

    >>> calibrate([0.8, 0.5, 0.75], 0.75).round(3).tolist()
    [0.571, 0.25, 0.5]
    """
    p = np.asarray(p_pass, float)
    c = np.asarray(p_cf, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = p / c, (1 - p) / (1 - c)
        q = a / (a + b)
    return np.where((c > 0) & (c < 1), q, np.nan)


def is_probe(df: pd.DataFrame, prefix: str = PROBE_PREFIX) -> np.ndarray:
    """Boolean mask, one per row: the content-free probe rows.

    A row is a probe when ``kind == "content-free"`` (what evallab's probe builders set) or its ``item_id`` starts
    with ``prefix`` (a table from elsewhere that marks probes by id only).

    Parameters
    ----------
    df : DataFrame
        A verdict table.
    prefix : str, default "content-free"

    Returns
    -------
    ndarray of bool

    Examples
    --------
    >>> import pandas as pd
    >>> is_probe(pd.DataFrame({"item_id": ["a1", "content-free-1"]})).tolist()
    [False, True]
    """
    hit = df["item_id"].astype(str).str.startswith(prefix).to_numpy(bool)
    if "kind" in df:
        hit = hit | (df["kind"].astype("string") == "content-free").fillna(False).to_numpy(bool)
    return hit


@needs_verdicts("the content-free probe")
def content_free_probe(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, prefix: str = PROBE_PREFIX,
                       source: str = "samples", confidence: float = 0.95) -> Results:
    """p_cf(PASS) per (group, anchor set): the judge's P(PASS) on the content-free probe items (``kind``
    ``content-free``, or ``item_id`` starting with ``prefix``), the mean over the probe inputs of their P(PASS).

    Returns
    -------
    Results (keys ``by`` and ``anchor_set``, level ``confidence``): ``probes`` (probe inputs, count), ``replies``
    (parsed, count), ``p_cf`` (proportion, n = ``replies``, n unit "replies") with ``p_cf_low``/``p_cf_high``
    (Wilson score over the parsed probe replies — independent draws given the prompt — for ``source="samples"``;
    NaN for log-probabilities, which are not counts), ``note``.

    Parameters
    ----------
    df : DataFrame
        Pointwise tidy verdict table holding probe replies.
    by : sequence of str, default ("judge",)
        Grouping columns besides ``anchor_set``.
    prefix : str, default "content-free"
        See :func:`is_probe`.
    source : {"samples", "logprob"}, default "samples"
        See :func:`pass_probability`.
    confidence : float, default 0.95
        Level of the Wilson interval.

    References
    ----------
    Zhao et al. (2021), "Calibrate Before Use", ICML, §5 (the content-free inputs "N/A", "", "[MASK]").

    Examples
    --------
    A probe that passes 3 of 4 replies: the Wilson interval of 3 of 4.

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": "content-free-1", "judge": "A", "sample": [0, 1, 2, 3],
    ...                                    "verdict": ["pass", "pass", "pass", "fail"]}))
    >>> print(content_free_probe(df)[["probes", "replies", "p_cf", "p_cf_low", "p_cf_high"]].round(3)
    ...       .to_string(index=False))
    probes  replies  p_cf  p_cf_low  p_cf_high
         1        4  0.75     0.301      0.954
    """
    by = [c for c in by if c != "anchor_set"]
    d = df[is_probe(df, prefix)]
    rows = []
    cols = [*by, "anchor_set", "probes", "replies", "p_cf", "p_cf_low", "p_cf_high", "note"]
    if not d.empty:
        pp = pass_probability(d, by, source=source)
        for key, g in groups(pp, [*by, "anchor_set"]):
            g = g[g["parsed"] > 0]
            r = dict(key, probes=len(g), replies=int(g["parsed"].sum()),
                     p_cf=float(g["p_pass"].mean()) if len(g) else NAN, p_cf_low=NAN, p_cf_high=NAN,
                     note="" if len(g) else not_computable("no parsed probe reply"))
            if len(g) and source == "samples":
                r["p_cf_low"], r["p_cf_high"] = intervals.wilson(g["passes"].sum(), g["parsed"].sum(), confidence)
            rows.append(r)
    measures = [Measure("probes", "Probe prompts", "count"), Measure("replies", "Replies", "count"),
                Measure("p_cf", "P(PASS) on content-free answers", "proportion", "p_cf_low", "p_cf_high",
                        method=WILSON, n="replies", n_unit="replies")]
    return results(pd.DataFrame(rows, columns=cols), measures, level=confidence, keys=[*by, "anchor_set"])


@needs_verdicts("contextual calibration")
def calibrated_rates(df: pd.DataFrame, by: Sequence[str] = ("judge",), *, prefix: str = PROBE_PREFIX,
                     source: str = "samples", confidence: float = 0.95, n_resamples: int = 1000,
                     seed: int = 0) -> Results:
    """Per (group, anchor set): the judge's rates before and after contextual calibration against that anchor set's
    content-free probe.

    An item's raw verdict is PASS when P(PASS) > ½ (the majority of its samples), its calibrated verdict when the
    calibrated q > ½, i.e. P(PASS) > p_cf (:func:`calibrate`); an item whose P(PASS) equals the cut exactly
    counts ½. A probe that always passes or always fails (p_cf = 1 or 0) leaves q undefined: the calibrated rates
    are NaN with the reason in ``note`` (never the ½ every item would tie at). When every item's P(PASS) is 0 or
    1 (one verdict each, or unanimous samples) no verdict can move and ``note`` says so. Probe items are left out
    of the rates.

    Returns
    -------
    Results (keys ``by`` and ``anchor_set``, level ``confidence``): counts ``items`` (graded answers),
    ``gold_fail_items``, ``gold_items``; ``p_cf`` (the probe's P(PASS), proportion, no interval here: see
    :func:`content_free_probe`); proportions with ``_low``/``_high`` and their interval method per row in
    ``<rate>_method`` (:func:`~evallab.metrics._intervals.ratio_interval_method` over items: Wilson score when
    every answer counts 0 or 1, the item bootstrap when a tie counts ½, the Wilson fallback on the answer count
    when every answer has the same value): ``pass_rate`` / ``calibrated_pass_rate`` (n = ``items``),
    ``false_pass_rate`` / ``calibrated_false_pass_rate`` (PASS on gold-FAIL answers, n = ``gold_fail_items``),
    ``agreement`` / ``calibrated_agreement`` (with gold, n = ``gold_items``), n unit "items"; ``note``.

    Parameters
    ----------
    df : DataFrame
        Pointwise tidy verdict table: the graded answers and the content-free probe replies.
    by : sequence of str, default ("judge",)
        Grouping columns besides ``anchor_set``.
    prefix, source, confidence
        As for :func:`content_free_probe`.
    n_resamples : int, default 1000
        Bootstrap resamples over items (where an item counts ½).
    seed : int, default 0
        Seed of the bootstrap.

    References
    ----------
    Zhao et al. (2021), "Calibrate Before Use", ICML, §5.

    Examples
    --------
    Three answers with P(PASS) 1, ½, 0 (gold pass, fail, fail) and a probe at p_cf = 0.75: raw verdicts 1, ½, 0;
    calibrated (PASS when P(PASS) > 0.75) 1, 0, 0.

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({
    ...     "item_id": ["a1", "a1", "a2", "a2", "a3", "a3"] + ["content-free-1"] * 4, "judge": "A",
    ...     "sample": [0, 1, 0, 1, 0, 1, 0, 1, 2, 3], "gold": ["pass"] * 2 + ["fail"] * 4 + [None] * 4,
    ...     "verdict": ["pass", "pass", "pass", "fail", "fail", "fail", "pass", "pass", "pass", "fail"]}))
    >>> r = calibrated_rates(df, n_resamples=50)
    >>> print(r[["pass_rate", "calibrated_pass_rate", "false_pass_rate", "calibrated_false_pass_rate",
    ...          "agreement", "calibrated_agreement"]].round(3).to_string(index=False))
    pass_rate  calibrated_pass_rate  false_pass_rate  calibrated_false_pass_rate  agreement  calibrated_agreement
          0.5                 0.333             0.25                         0.0      0.833                   1.0
    """
    by = [c for c in by if c != "anchor_set"]
    probe = content_free_probe(df, by, prefix=prefix, source=source, confidence=confidence)
    d = df[~is_probe(df, prefix)]
    pp = pass_probability(d, by, source=source)
    pp = pp[pp["parsed"] > 0]
    rows = []
    for key, g in groups(pp, [*by, "anchor_set"]):
        pr = probe
        for c, v in key.items():
            pr = pr[pr[c].astype(object) == v] if len(pr) else pr
        p_cf = float(pr["p_cf"].iloc[0]) if len(pr) else NAN
        p = g["p_pass"].to_numpy(float)
        raw = np.where(p > 0.5, 1.0, np.where(p == 0.5, 0.5, 0.0))
        inside = np.isfinite(p_cf) and 0 < p_cf < 1  # calibrate(): q is undefined at p_cf = 0 or 1
        cut = np.where(p > p_cf, 1.0, np.where(p == p_cf, 0.5, 0.0)) if inside else np.full(len(p), NAN)
        gold = g["gold"].astype("string")
        note = "" if inside else not_computable(
            "no content-free probe reply under this anchor set: nothing to calibrate against" if not np.isfinite(p_cf)
            else f"the content-free probe {'passes' if p_cf >= 1 else 'fails'} in every reply (p_cf = {p_cf:g}): "
                 "contextual calibration leaves nothing to rescale, so no calibrated rate")
        if inside and np.isin(p, (0.0, 1.0)).all():
            note = ("every answer has one verdict, or samples that all agree (P(PASS) 0 or 1): calibration (PASS "
                    "when P(PASS) exceeds the probe's p_cf, 0 < p_cf < 1) moves none of them, so the calibrated rates "
                    "equal the raw ones")
        r = dict(key, items=len(g), p_cf=p_cf, note=note)

        def rate(x, mask, name, r=r):
            x = x[mask]
            r[name] = float(x.mean()) if len(x) else NAN
            r[f"{name}_low"], r[f"{name}_high"], r[f"{name}_method"] = (
                intervals.ratio_interval_method(x, np.ones(len(x)), confidence=confidence, n_resamples=n_resamples,
                                                seed=seed)
                if len(x) and np.isfinite(x).all() else (NAN, NAN, ""))
        allm = np.ones(len(g), bool)
        rate(raw, allm, "pass_rate")
        rate(cut, allm, "calibrated_pass_rate")
        gf = (gold == "fail").fillna(False).to_numpy(bool)
        has = gold.isin(["pass", "fail"]).fillna(False).to_numpy(bool)
        r["gold_fail_items"], r["gold_items"] = int(gf.sum()), int(has.sum())
        rate(raw, gf, "false_pass_rate")
        rate(cut, gf, "calibrated_false_pass_rate")
        gpass = (gold == "pass").fillna(False).to_numpy(float)
        rate(1 - np.abs(raw - gpass), has, "agreement")
        rate(1 - np.abs(cut - gpass), has, "calibrated_agreement")
        rows.append(r)
    measures = [Measure("items", "Answers", "count"), Measure("gold_fail_items", "Gold-FAIL answers", "count"),
                Measure("gold_items", "Answers with gold", "count"),
                Measure("p_cf", "P(PASS) on content-free answers", "proportion")]
    for name, label, n in (("pass_rate", "Pass rate", "items"), ("false_pass_rate", "False-pass rate",
                                                                  "gold_fail_items"),
                           ("agreement", "Agreement", "gold_items")):
        for col, lab in ((name, label), (f"calibrated_{name}", f"{label}, calibrated")):
            measures.append(Measure(col, lab, "proportion", f"{col}_low", f"{col}_high",
                                    method_column=f"{col}_method", n=n, n_unit="items"))
    cols = [*by, "anchor_set", "note"] + [c for m in measures for c in (m.column, m.low, m.high, m.method_column) if c]
    out = pd.DataFrame(rows) if rows else pd.DataFrame(columns=cols)  # no graded answer: the columns, no row
    return results(out, measures, level=confidence, keys=[*by, "anchor_set"])


__all__ = ["CONTENT_FREE", "PROBE_PREFIX", "calibrate", "calibrated_rates", "content_free_probe", "is_probe",
           "pass_probability"]
