"""Position bias of pairwise judges: does the verdict depend on which output is shown first?

All functions take the tidy verdict table with pairwise replies in orders ``ab`` (output 1 shown first) and
``ba``; ``verdict`` is the ORIGINAL output index. Unparsed replies are excluded and counted.

Methods and their sources
-------------------------
- position consistency: share of pairs with the same verdict in both orders (LLMBar's "Agr.", Zeng et al. 2024;
  Wang et al. 2023 "Large Language Models are not Fair Evaluators"), Wilson interval.
- first-slot preference: share of decisive (non-tie) parsed replies that pick the output shown first
  (``ab`` → ``1``, ``ba`` → ``2``); 0.5 = no preference. Wilson interval.
- McNemar's test for an order effect on pairs judged in both orders: b = pairs where the first-shown output won
  both times, c = pairs where the second-shown output won both times (statsmodels).
- swap-averaged accuracy (Wang et al. 2023, Balanced Position Calibration / FairEval): each pair judged in both
  orders; consistent pairs score 1 or 0, inconsistent pairs count as a tie worth ``tie_credit`` (default 0.5;
  0 gives the strict "correct in both orders" rate); compared with single-order (``ab``) accuracy.
- anchor effect: Vanilla (0-shot) vs Vanilla_1shot (one in-context example answered "Output (a)") vs
  Vanilla_2shot ("(b)" then "(a)") in LLMBar, on first-slot preference and accuracy, with the paired
  difference to 0-shot and a percentile bootstrap over items.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from evallab.metrics import intervals as stats
from evallab.metrics.agreement import _pairs


def _first_slot(df: pd.DataFrame) -> pd.Series:
    """1.0 when a parsed, decisive reply picked the output shown first, 0.0 when the second, NA otherwise."""
    first = ((df["order"] == "ab") & (df["verdict"] == "1")) | ((df["order"] == "ba") & (df["verdict"] == "2"))
    decisive = df["verdict"].isin(["1", "2"]) & df["order"].isin(["ab", "ba"])
    return first.astype(float).where(decisive)


def position_bias(df: pd.DataFrame, by: Sequence[str] = ("subset", "judge", "strategy"), *,
                  confidence: float = 0.95) -> pd.DataFrame:
    """Position consistency, first-slot preference and McNemar's order-effect test per group.

    Returns
    -------
    DataFrame, one row per group:
        ``pairs``; ``both_parsed`` (pairs with both replies parsed); ``consistent``; ``consistency`` in [0, 1]
        with ``consistency_low``/``_high`` (Wilson, over ``both_parsed``); ``decisive`` (parsed non-tie replies);
        ``first_slot``; ``first_slot_rate`` in [0, 1] with ``first_slot_low``/``_high``; ``first_both``
        (first-shown output won in both orders), ``second_both``; ``mcnemar_p``; ``unparsed`` (replies).
    """
    d = df[df["order"].isin(["ab", "ba"])]
    p = _pairs(d, by)
    a, b = p["verdict_ab"], p["verdict_ba"]
    p["_both"] = a.notna() & b.notna()
    p["_cons"] = (a == b).fillna(False) & p["_both"]
    p["_fb"] = ((a == "1") & (b == "2")).fillna(False)
    p["_sb"] = ((a == "2") & (b == "1")).fillna(False)
    fs = d.assign(_fs=_first_slot(d))
    fs_g = fs.groupby(list(by), dropna=False, observed=True)["_fs"].agg(["sum", "count"])
    na_g = d.assign(_na=d["verdict"].isna()).groupby(list(by), dropna=False, observed=True)["_na"].sum()
    rows = []
    for key, g in p.groupby(list(by), dropna=False, observed=True, sort=True):
        key_t = key if isinstance(key, tuple) else (key,)
        n_both, cons = int(g["_both"].sum()), int(g["_cons"].sum())
        k_fs, n_fs = int(fs_g.loc[key, "sum"]), int(fs_g.loc[key, "count"])
        fb, sb = int(g["_fb"].sum()), int(g["_sb"].sum())
        r = dict(zip(by, key_t, strict=True))
        r.update(pairs=len(g), both_parsed=n_both, consistent=cons,
                 consistency=cons / n_both if n_both else np.nan)
        r["consistency_low"], r["consistency_high"] = stats.wilson(cons, n_both, confidence)
        r.update(decisive=n_fs, first_slot=k_fs, first_slot_rate=k_fs / n_fs if n_fs else np.nan)
        r["first_slot_low"], r["first_slot_high"] = stats.wilson(k_fs, n_fs, confidence)
        r.update(first_both=fb, second_both=sb, mcnemar_p=stats.mcnemar(fb, sb)["pvalue"],
                 unparsed=int(na_g.loc[key]))
        rows.append(r)
    return pd.DataFrame(rows)


def swap_averaged_accuracy(df: pd.DataFrame, by: Sequence[str] = ("subset", "judge", "strategy"), *,
                           tie_credit: float = 0.5, confidence: float = 0.95, n_resamples: int = 1000,
                           seed: int = 0) -> pd.DataFrame:
    """Accuracy if every pair were judged in both orders and inconsistent pairs counted as ties.

    Parameters
    ----------
    tie_credit : credit in [0, 1] for an inconsistent pair (0.5: a tie is half right; 0: strict).

    Returns
    -------
    DataFrame: ``by`` + ``pairs`` (both orders parsed, with gold), ``excluded`` (pairs with an unparsed reply),
    ``single_order_accuracy`` (order ``ab`` alone, same pairs), ``swap_averaged_accuracy`` in [0, 1] with
    ``low``/``high`` (percentile bootstrap over pairs), ``inconsistent`` (pairs scored as ties), and
    ``gain`` = swap-averaged − single-order.
    """
    if not 0 <= tie_credit <= 1:
        raise ValueError(f"tie_credit={tie_credit}; expected a value in [0, 1]")
    p = _pairs(df, by)
    p = p[p["gold"].notna()]
    ok = p["verdict_ab"].notna() & p["verdict_ba"].notna()
    rows = []
    for key, g in p.assign(_ok=ok).groupby(list(by), dropna=False, observed=True, sort=True):
        key_t = key if isinstance(key, tuple) else (key,)
        h = g[g["_ok"]]
        ca = (h["verdict_ab"] == h["gold"]).to_numpy(bool)
        cb = (h["verdict_ba"] == h["gold"]).to_numpy(bool)
        cons = (h["verdict_ab"] == h["verdict_ba"]).to_numpy(bool)
        score = np.where(cons, ca.astype(float), tie_credit)
        r = dict(zip(by, key_t, strict=True))
        n = len(h)
        lo = hi = np.nan
        if n >= 2 and n_resamples > 0 and score.min() != score.max():
            res = sps.bootstrap((score,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
                                method="percentile", random_state=np.random.default_rng(seed))
            lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        elif n:  # every pair scored the same: a degenerate bootstrap; Wilson on the pooled credit instead
            lo, hi = stats.wilson(int(round(score.sum())), n, confidence)
        sw = float(score.mean()) if n else np.nan
        single = float(ca.mean()) if n else np.nan
        r.update(pairs=n, excluded=len(g) - n, single_order_accuracy=single, swap_averaged_accuracy=sw,
                 low=lo, high=hi, inconsistent=int((~cons).sum()), gain=sw - single)
        del cb
        rows.append(r)
    return pd.DataFrame(rows)


def _item_stats(df: pd.DataFrame) -> pd.DataFrame:
    """Per item: first-slot picks, decisive replies, correct replies, parsed replies with gold."""
    d = df.assign(_fs=_first_slot(df), _ok=df["verdict"].notna() & df["gold"].notna(),
                  _c=(df["verdict"] == df["gold"]).fillna(False))
    return d.groupby("item_id", observed=True).agg(fs=("_fs", "sum"), dec=("_fs", "count"), c=("_c", "sum"),
                                                   p=("_ok", "sum"))


def anchor_effect(df: pd.DataFrame, *, baseline: str = "Vanilla",
                  variants: Sequence[str] = ("Vanilla_1shot", "Vanilla_2shot"), by: Sequence[str] = ("judge",),
                  confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """How in-context examples move first-slot preference and accuracy against the 0-shot baseline.

    Compares strategies on the same items (the items every compared strategy judged, within each group).

    Returns
    -------
    DataFrame, one row per group × strategy (baseline first):
        ``strategy``, ``items``, ``first_slot_rate`` (+ ``_low``/``_high``, Wilson), ``accuracy`` (+ ``_low``/
        ``_high``, bootstrap over items), ``delta_first_slot`` and ``delta_accuracy`` vs baseline (NaN for the
        baseline row) each with ``_low``/``_high`` from a paired percentile bootstrap over items.
    """
    strategies = [baseline, *variants]
    d = df[df["strategy"].isin(strategies)]
    rows = []
    for key, g in d.groupby(list(by), dropna=False, observed=True, sort=True):
        key_t = key if isinstance(key, tuple) else (key,)
        have = [s for s in strategies if (g["strategy"] == s).any()]
        if baseline not in have:
            continue
        per = {s: _item_stats(g[g["strategy"] == s]) for s in have}
        common = sorted(set.intersection(*(set(x.index) for x in per.values())))
        per = {s: x.loc[common] for s, x in per.items()}
        base = per[baseline]
        for s in have:
            x = per[s]
            k_fs, n_fs = int(x["fs"].sum()), int(x["dec"].sum())
            k_c, n_c = int(x["c"].sum()), int(x["p"].sum())
            r = dict(zip(by, key_t, strict=True))
            r.update(strategy=s, items=len(common), first_slot_rate=k_fs / n_fs if n_fs else np.nan)
            r["first_slot_low"], r["first_slot_high"] = stats.wilson(k_fs, n_fs, confidence)
            r["accuracy"] = k_c / n_c if n_c else np.nan
            r["accuracy_low"], r["accuracy_high"] = stats.bootstrap_ratio(
                x["c"].to_numpy(), x["p"].to_numpy(), n_resamples=n_resamples, confidence=confidence, seed=seed)
            for name, num, den in (("first_slot", "fs", "dec"), ("accuracy", "c", "p")):
                if s == baseline:
                    r[f"delta_{name}"] = r[f"delta_{name}_low"] = r[f"delta_{name}_high"] = np.nan
                    continue
                arrays = [x[num].to_numpy(float), x[den].to_numpy(float), base[num].to_numpy(float),
                          base[den].to_numpy(float)]
                r[f"delta_{name}"] = _ratio(*arrays[:2]) - _ratio(*arrays[2:])
                r[f"delta_{name}_low"], r[f"delta_{name}_high"] = stats.bootstrap_ratio_difference(
                    *arrays, n_resamples=n_resamples, confidence=confidence, seed=seed)
            rows.append(r)
    return pd.DataFrame(rows)


def _ratio(num: np.ndarray, den: np.ndarray) -> float:
    s = den.sum()
    return float(num.sum() / s) if s else np.nan
