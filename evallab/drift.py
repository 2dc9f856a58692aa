"""Judge drift: a baseline and a candidate judge on the same items, per subset / rubric / strategy, with a gate.

When a judge model is upgraded (or its prompt or parser changes), which verdicts moved, and does the new judge
still agree with the gold labels within tolerance? MeowKit rule 6 (``data/meowkit/rules/rubric-rules.md``, "Drift
Check on Model Upgrade"): replay the calibration set with the new model; agreement with the stored gold verdicts
must stay within 5% per rubric.

Estimators (all take tidy verdict tables, :mod:`evallab.verdicts`)
------------------------------------------------------------------
- :func:`compare` — baseline vs candidate replies paired on the same request (item, strategy, anchor set, order,
  sample by default): raw verdict agreement (Wilson interval) and Cohen's kappa (scikit-learn, asymptotic interval
  of statsmodels, via :mod:`evallab.agreement`), the flip table, accuracy vs gold of each with the paired
  difference and its percentile bootstrap interval over items (:mod:`scipy.stats.bootstrap`), McNemar's test on
  the replies both parsed (:func:`evallab.stats.mcnemar`), per group; and the tolerance gate (:func:`gate`).
- :func:`compare_judges` — the same on one table holding both judges (e.g. LLMBar's ChatGPT-0301 and ChatGPT).
- :func:`evaluator_metrics` — AlpacaEval's evaluator-leaderboard columns where the data allows: P(prefer output 1),
  P(prefer the output shown first), P(prefer longer) (Dubois et al.; ``alpaca_eval/analyze.py``).
- :func:`judge_pair_agreement`, :func:`win_rates`, :func:`rank_correlation`, :func:`leaderboard_rank_agreement` —
  agreement between annotators and the judge-swap effect on rankings (Kendall's tau, ``scipy.stats.kendalltau``).
- :func:`replay`, :func:`calibration_drift`, :func:`reverify` — the calibration set replayed through any
  :class:`evallab.judges.Judge`, and the re-verify mode (re-judge a seeded sample of recorded verdicts).

Conventions
-----------
- Unparsed replies (NA verdicts) are counted (``unparsed_baseline``/``unparsed_candidate``) and excluded; they
  are never scored as wrong and never counted as a flip of a parsed verdict (the flip table shows them as
  ``unparsed``).
- Accuracy of a judge = correct / parsed replies with gold, over the paired replies only (both judges asked the
  same requests), so the difference is paired.
- The gate (:func:`gate`) flags every group whose accuracy vs gold moved by MORE than ``tolerance`` (absolute,
  as a proportion: 0.05 = 5 percentage points; a move of exactly the tolerance passes). Without gold the
  ``flip_rate`` metric is used instead: the share of replies both parsed whose verdict changed.

Calibration set (gold set) format
---------------------------------
A JSONL file, one JSON object per line (:func:`load_gold_set`):

=============== ========== ==========================================================================
field           required   meaning
=============== ========== ==========================================================================
item_id         yes        unique id of the calibration item
gold            yes        gold verdict: pairwise ``1``/``2``/``tie``; pointwise ``pass``/``warn``/``fail``
kind            no         ``pairwise`` or ``pointwise``; default from the gold vocabulary
subset, rubric  no         grouping labels (e.g. ``LLMBar/Natural``; a MeowKit rubric name)
dataset         no         default ``calibration``
instruction     pairwise   the instruction; with ``output_1`` and ``output_2`` (ORIGINAL numbering)
answer          pointwise  the text graded; with ``rubric_text`` (1–4 sentences), ``pass_criteria``
                           (list of str) and optional ``fail_criteria`` (list of str)
messages        no         the exact chat messages (list of ``{"role", "content"}``) to replay instead of a
                           built prompt; pairwise then needs ``order`` (``ab``/``ba``) saying what they show
=============== ========== ==========================================================================

Other fields are kept as extra columns of the items table. Prompts are built with
:func:`evallab.judges.prompts.build_pairwise` / :func:`~evallab.judges.prompts.build_pointwise` unless a
``build_request`` callable is given.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, norm
from statsmodels.stats.inter_rater import cohens_kappa

from evallab import stats
from evallab import verdicts as V
from evallab.datasets.generic import iter_jsonl
from evallab.errors import DataError, EvallabError

#: how replies of the two tables are paired by default: the same request (judge label aside)
MATCH_ON = ("dataset", "item_id", "strategy", "anchor_set", "order", "sample")
DEFAULT_BY = ("subset", "strategy")
DEFAULT_TOLERANCE = 0.05
METRICS = ("auto", "accuracy", "flip_rate")
UNPARSED = "unparsed"
#: float guard: a move of exactly the tolerance (up to rounding) is not "more than" it
_EPS = 1e-9


# ----------------------------------------------------------------------------------------------------- pairing
def _check_table(df: pd.DataFrame, name: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise EvallabError(f"{name}: expected a tidy verdict DataFrame, got {type(df).__name__}")
    if list(df.columns[: len(V.COLUMNS)]) != list(V.COLUMNS):
        df = V.coerce(df, path=name)
    return df


def pair_verdicts(baseline: pd.DataFrame, candidate: pd.DataFrame, *, match_on: Sequence[str] = MATCH_ON,
                  by: Sequence[str] = DEFAULT_BY) -> pd.DataFrame:
    """Pair the replies of two judges on the same requests.

    Parameters
    ----------
    baseline, candidate : tidy verdict tables, each one judge's replies (one reply per ``match_on`` key).
    match_on : columns identifying the same request in both tables (default :data:`MATCH_ON`: everything in the
        table key but ``judge``). Drop ``strategy`` to compare two prompts (prompt drift).
    by : grouping columns carried along (taken from the baseline when not in ``match_on``).

    Returns
    -------
    DataFrame, one row per paired reply: ``match_on`` + ``by`` columns, ``verdict_baseline``,
    ``verdict_candidate``, ``gold`` (baseline's, else candidate's), ``both_parsed`` (bool), ``changed`` (both
    parsed and different). ``attrs`` holds ``baseline_only`` / ``candidate_only`` (replies without a partner)
    and the judge labels.

    Raises
    ------
    DataError
        A missing column, a ``match_on`` key repeated within one table (e.g. two judges in one table), gold that
        differs between the tables for the same reply, or no reply in common.
    """
    baseline = _check_table(baseline, "baseline")
    candidate = _check_table(candidate, "candidate")
    match_on, by = list(match_on), list(by)
    bad = [c for c in match_on + by if c in ("judge", "verdict", "gold", "error")]
    if bad:
        raise DataError(f"cannot pair or group by {bad[0]!r}: it is what is compared; expected other columns "
                        f"(e.g. {list(DEFAULT_BY)})", path="candidate", column=bad[0])
    carry = [c for c in by if c not in match_on]
    for name, t in (("baseline", baseline), ("candidate", candidate)):
        missing = [c for c in match_on + (carry if name == "baseline" else []) if c not in t.columns]
        if missing:
            raise DataError(f"missing column(s) {missing} needed to pair and group replies", path=name,
                            column=missing[0])
        dup = t.duplicated(match_on)
        if dup.any():
            first = t[dup].iloc[0]
            judges = sorted(t["judge"].dropna().unique())
            raise DataError(
                f"more than one reply for {({c: first[c] for c in match_on})}; the table must hold one reply per "
                f"{match_on} (judges in it: {judges[:5]}); pass one judge per table (compare_judges splits a "
                "table) or add columns to match_on", path=name, row=int(np.flatnonzero(dup)[0]) + 1,
                column=match_on[0])
    left = baseline[match_on + carry + ["verdict", "gold", "judge"]]
    right = candidate[match_on + ["verdict", "gold", "judge"]]
    p = left.merge(right, on=match_on, how="inner", suffixes=("_baseline", "_candidate"))
    if p.empty:
        sample = {c: sorted(baseline[c].dropna().astype(str).unique())[:3] for c in match_on if c != "item_id"}
        sample_c = {c: sorted(candidate[c].dropna().astype(str).unique())[:3] for c in match_on if c != "item_id"}
        raise DataError(f"no reply in common on {match_on}; baseline has {sample}, candidate has {sample_c} "
                        "(drop the differing columns from match_on, e.g. strategy for a prompt change)",
                        path="candidate", column="item_id")
    gb, gc = p["gold_baseline"], p["gold_candidate"]
    clash = gb.notna() & gc.notna() & (gb != gc)
    if clash.any():
        r = p[clash].iloc[0]
        raise DataError(f"gold differs between the tables for item {r['item_id']!r}: baseline {r['gold_baseline']!r}"
                        f", candidate {r['gold_candidate']!r}; expected the same gold labels", path="candidate",
                        column="gold")
    p["gold"] = gb.fillna(gc)
    p = p.drop(columns=["gold_baseline", "gold_candidate"])
    a, b = p["verdict_baseline"], p["verdict_candidate"]
    p["both_parsed"] = (a.notna() & b.notna()).astype(bool)
    p["changed"] = ((a != b).fillna(False) & p["both_parsed"]).astype(bool)
    p.attrs.update(baseline_only=len(baseline) - len(p), candidate_only=len(candidate) - len(p),
                   baseline_judge=", ".join(sorted(baseline["judge"].dropna().unique())),
                   candidate_judge=", ".join(sorted(candidate["judge"].dropna().unique())))
    return p


# ------------------------------------------------------------------------------------------------- estimators
def _group_name(by: Sequence[str], key: tuple) -> str:
    return ", ".join(f"{c}={v}" for c, v in zip(by, key, strict=True)) if by else "all"


def _delta_ci(per: pd.DataFrame, n_resamples: int, confidence: float, seed: int) -> tuple[float, float]:
    arrays = [per[c].to_numpy(float) for c in ("cc", "cp", "bc", "bp")]
    if len(per) < 2 or n_resamples <= 0 or arrays[1].sum() == 0 or arrays[3].sum() == 0:
        return np.nan, np.nan
    if np.array_equal(arrays[0], arrays[2]) and np.array_equal(arrays[1], arrays[3]):
        return 0.0, 0.0  # identical judges: every resample gives a difference of 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on degenerate resamples of tiny groups; NaN is returned
        return stats.bootstrap_ratio_difference(*arrays, n_resamples=n_resamples, confidence=confidence, seed=seed)


def _kappa(a: np.ndarray, b: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Cohen's kappa with the asymptotic interval of statsmodels, from a contingency table built in numpy
    (equal to :func:`evallab.agreement._kappa_with_ci`, which goes through a slower pandas crosstab)."""
    if len(a) == 0:
        return np.nan, np.nan, np.nan
    labels, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    if len(labels) < 2:
        return np.nan, np.nan, np.nan
    table = np.zeros((len(labels), len(labels)))
    np.add.at(table, (codes[: len(a)], codes[len(a):]), 1)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # z statistic 0/0 when kappa is degenerate; unused
        res = cohens_kappa(table, return_results=True)
    k, se = float(res["kappa"]), float(res["std_kappa"])
    z = float(norm.ppf(0.5 + confidence / 2))
    return k, k - z * se, k + z * se


_SUMS = ("_one", "_bothp", "_same", "_ua", "_ub", "_bp", "_cp", "_bc", "_cc", "_mb", "_mc", "_gold",
         "_ab", "_sab", "_ba", "_sba")


def _stats(p: pd.DataFrame, by: list[str], *, confidence: float, n_resamples: int, seed: int) -> pd.DataFrame:
    a, b, g = p["verdict_baseline"], p["verdict_candidate"], p["gold"]
    has_gold = g.notna().to_numpy(bool)
    both = p["both_parsed"].to_numpy(bool)
    same = both & ~p["changed"].to_numpy(bool)
    a_ok, b_ok = a.notna().to_numpy(bool), b.notna().to_numpy(bool)
    a_c = (a == g).fillna(False).to_numpy(bool) & has_gold
    b_c = (b == g).fillna(False).to_numpy(bool) & has_gold
    order = p["order"].astype(str).to_numpy() if "order" in p.columns else np.full(len(p), "")
    cols = {
        "_one": np.ones(len(p), int), "_bothp": both, "_same": same, "_ua": ~a_ok, "_ub": ~b_ok,
        "_bp": a_ok & has_gold, "_cp": b_ok & has_gold, "_bc": a_c, "_cc": b_c,
        "_mb": both & has_gold & a_c & ~b_c, "_mc": both & has_gold & ~a_c & b_c, "_gold": has_gold,
        "_ab": both & (order == "ab"), "_sab": same & (order == "ab"),
        "_ba": both & (order == "ba"), "_sba": same & (order == "ba"),
    }
    keys = by if by else ["_all"]
    d = pd.DataFrame({c: np.asarray(v).astype(int) for c, v in cols.items()}, index=p.index)
    for k in keys:
        d[k] = p[k] if k in p.columns else "all"
    d["item_id"] = p["item_id"]
    # per item within group, then per group: two groupby passes for every count
    per_item = d.groupby(keys + ["item_id"], dropna=False, observed=True, sort=True)[list(_SUMS)].sum()
    grp = per_item.groupby(level=list(range(len(keys))), dropna=False, observed=True, sort=True)
    sums = grp.sum()
    n_items = grp.size()
    full = per_item["_bothp"] == per_item["_one"]
    items_all = full.groupby(level=list(range(len(keys))), dropna=False, observed=True).sum()
    items_same = (full & (per_item["_same"] == per_item["_one"])).groupby(
        level=list(range(len(keys))), dropna=False, observed=True).sum()
    vb = a.astype(object).to_numpy()
    vc = b.astype(object).to_numpy()
    row_groups = d.groupby(keys, dropna=False, observed=True, sort=True).indices
    rows = []
    for key in sums.index:
        key_t = key if isinstance(key, tuple) else (key,)
        s = sums.loc[key]
        r = dict(zip(by, key_t, strict=True)) if by else {}
        r["group"] = _group_name(by, key_t) if by else "all"
        n_both, n_same = int(s["_bothp"]), int(s["_same"])
        r.update(items=int(n_items.loc[key]), replies=int(s["_one"]), unparsed_baseline=int(s["_ua"]),
                 unparsed_candidate=int(s["_ub"]), both_parsed=n_both, same=n_same, changed=n_both - n_same,
                 agreement=n_same / n_both if n_both else np.nan)
        r["agreement_low"], r["agreement_high"] = stats.wilson(n_same, n_both, confidence)
        r["flip_rate"] = 1 - r["agreement"] if n_both else np.nan
        idx = row_groups[key]
        ok = idx[both[idx]]
        r["kappa"], r["kappa_low"], r["kappa_high"] = _kappa(vb[ok].astype(str), vc[ok].astype(str), confidence)
        r.update(both_parsed_ab=int(s["_ab"]), same_ab=int(s["_sab"]), both_parsed_ba=int(s["_ba"]),
                 same_ba=int(s["_sba"]), items_all_parsed=int(items_all.loc[key]),
                 items_unchanged=int(items_same.loc[key]), gold_replies=int(s["_gold"]))
        bp, cp, bc, cc = (int(s[c]) for c in ("_bp", "_cp", "_bc", "_cc"))
        r.update(baseline_parsed=bp, baseline_correct=bc, candidate_parsed=cp, candidate_correct=cc)
        r["baseline_accuracy"] = bc / bp if bp else np.nan
        r["candidate_accuracy"] = cc / cp if cp else np.nan
        r["delta_accuracy"] = r["candidate_accuracy"] - r["baseline_accuracy"]
        pi = per_item.loc[key] if len(keys) > 1 else per_item.xs(key, level=0)
        pi = pi[pi["_gold"] > 0].rename(columns={"_bc": "bc", "_bp": "bp", "_cc": "cc", "_cp": "cp"})
        r["delta_low"], r["delta_high"] = _delta_ci(pi, n_resamples, confidence, seed) if bp and cp \
            else (np.nan, np.nan)
        m = stats.mcnemar(int(s["_mb"]), int(s["_mc"]))
        r["mcnemar_b"], r["mcnemar_c"], r["mcnemar_p"] = m["b"], m["c"], m["pvalue"]
        rows.append(r)
    return pd.DataFrame(rows)


@dataclass
class GateResult:
    """Outcome of the drift gate.

    Attributes
    ----------
    passed : bool — no group moved by more than ``tolerance`` (and at least one group could be tested).
    tolerance : float — in [0, 1], a proportion (0.05 = 5 percentage points).
    metric : ``"accuracy"`` (|candidate − baseline accuracy vs gold|) or ``"flip_rate"`` (share of changed verdicts).
    flagged : DataFrame — the groups over tolerance: ``group`` (its name), the ``by`` columns, ``value``.
    untested : list of str — groups where the metric is undefined (no gold, or nothing parsed).
    groups : int — groups tested.
    """

    passed: bool
    tolerance: float
    metric: str
    flagged: pd.DataFrame
    untested: list[str] = field(default_factory=list)
    groups: int = 0

    @property
    def names(self) -> list[str]:
        """Names of the flagged groups, e.g. ``subset=LLMBar/Natural, strategy=Vanilla``."""
        return list(self.flagged["group"])

    def summary(self) -> str:
        """One line per finding, for a terminal or a report."""
        what = "accuracy vs gold moved" if self.metric == "accuracy" else "verdicts flipped"
        lines = [f"gate {'PASS' if self.passed else 'FAIL'}: {len(self.flagged)} of {self.groups} group(s) where "
                 f"{what} by more than {self.tolerance:.3g}"]
        for r in self.flagged.itertuples():
            lines.append(f"  FLAG {r.group}: {r.value:+.4f}" if self.metric == "accuracy"
                         else f"  FLAG {r.group}: {r.value:.4f}")
        if self.untested:
            lines.append(f"  untested ({'no gold or no parsed reply' if self.metric == 'accuracy' else 'nothing parsed'}): "
                         + "; ".join(self.untested[:10]) + (" ..." if len(self.untested) > 10 else ""))
        return "\n".join(lines)


def gate(groups: pd.DataFrame, *, tolerance: float = DEFAULT_TOLERANCE, metric: str = "accuracy",
         by: Sequence[str] | None = None) -> GateResult:
    """Flag every group whose agreement with gold moved by more than ``tolerance`` (MeowKit rule 6).

    Parameters
    ----------
    groups : the per-group table of :func:`compare` (``DriftReport.groups``).
    tolerance : in [0, 1]; a move of exactly ``tolerance`` passes (rule 6: "must stay within 5%").
    metric : ``"accuracy"``: value = ``delta_accuracy`` (candidate − baseline accuracy vs gold), flagged when
        ``|value| > tolerance``; ``"flip_rate"``: value = share of replies both parsed whose verdict changed,
        flagged when ``value > tolerance`` (for tables without gold).
    by : the grouping columns to show in ``flagged`` (default: those before ``group``).

    Raises
    ------
    EvallabError
        A tolerance outside [0, 1] or an unknown metric.
    """
    if not 0 <= tolerance <= 1:
        raise EvallabError(f"tolerance={tolerance}; expected a proportion in [0, 1] (0.05 = 5 percentage points)")
    if metric not in ("accuracy", "flip_rate"):
        raise EvallabError(f"metric={metric!r}; expected 'accuracy' or 'flip_rate'")
    col = "delta_accuracy" if metric == "accuracy" else "flip_rate"
    by = list(by) if by is not None else list(groups.columns[: list(groups.columns).index("group")])
    v = groups[col].astype(float)
    tested = v.notna()
    over = (v.abs() if metric == "accuracy" else v) > tolerance + _EPS
    flagged = groups.loc[tested & over, by + ["group"]].assign(value=v[tested & over]).reset_index(drop=True)
    untested = list(groups.loc[~tested, "group"])
    n = int(tested.sum())
    return GateResult(passed=bool(n > 0 and flagged.empty), tolerance=float(tolerance), metric=metric,
                      flagged=flagged, untested=untested, groups=n)


@dataclass
class DriftReport:
    """Baseline vs candidate judge on the same requests.

    Attributes
    ----------
    groups : DataFrame, one row per group (``by`` columns, ``group`` name) with
        ``items``, ``replies`` (paired), ``unparsed_baseline``, ``unparsed_candidate``, ``both_parsed``,
        ``same``, ``changed``, ``agreement`` in [0, 1] (+ Wilson ``_low``/``_high``), ``flip_rate``, ``kappa``
        (+ ``_low``/``_high``), ``both_parsed_ab``/``same_ab`` and ``_ba`` (per order), ``items_all_parsed`` and
        ``items_unchanged`` (every paired reply of the item kept its verdict — for pairwise tables: the same
        verdict in both orders), ``gold_replies``, ``baseline_parsed``/``_correct``/``_accuracy``,
        ``candidate_parsed``/``_correct``/``_accuracy`` (in [0, 1]), ``delta_accuracy`` (candidate − baseline)
        with ``delta_low``/``delta_high`` (paired percentile bootstrap over items), ``mcnemar_b`` (baseline right,
        candidate wrong), ``mcnemar_c``, ``mcnemar_p``, ``flagged`` (bool).
    overall : DataFrame, one row: the same over every paired reply.
    flips : DataFrame, long: ``by`` + ``verdict_baseline`` + ``verdict_candidate`` (NA shown as ``unparsed``) +
        ``count``.
    pairs : DataFrame, one row per paired reply (see :func:`pair_verdicts`).
    gate : GateResult.
    """

    groups: pd.DataFrame
    overall: pd.DataFrame
    flips: pd.DataFrame
    pairs: pd.DataFrame
    gate: GateResult
    by: list[str]
    baseline_judge: str = ""
    candidate_judge: str = ""
    baseline_only: int = 0
    candidate_only: int = 0

    @property
    def passed(self) -> bool:
        return self.gate.passed

    def moved(self) -> pd.DataFrame:
        """The paired replies whose parsed verdict changed (which verdicts moved)."""
        return self.pairs[self.pairs["changed"]].reset_index(drop=True)

    def flip_table(self, group: dict | None = None) -> pd.DataFrame:
        """Square flip table baseline × candidate (counts), over all groups or the one matching ``group``."""
        f = self.flips
        for c, v in (group or {}).items():
            f = f[f[c] == v]
        t = f.pivot_table(index="verdict_baseline", columns="verdict_candidate", values="count", aggfunc="sum",
                          fill_value=0)
        labels = sorted(set(t.index) | set(t.columns), key=_label_order)
        return t.reindex(index=labels, columns=labels, fill_value=0).astype(int)

    def summary(self) -> str:
        o = self.overall.iloc[0]
        lines = [f"baseline {self.baseline_judge} vs candidate {self.candidate_judge}: {o['replies']} paired "
                 f"replies on {o['items']} items ({self.baseline_only} baseline-only, {self.candidate_only} "
                 f"candidate-only replies not compared)",
                 f"agreement {o['agreement']:.4f}, kappa {o['kappa']:.3f}, changed {o['changed']} of "
                 f"{o['both_parsed']}; " + (f"accuracy {o['baseline_accuracy']:.4f} -> {o['candidate_accuracy']:.4f}"
                                            if o["gold_replies"] else "no gold labels"),
                 self.gate.summary()]
        return "\n".join(lines)


def _label_order(x: str) -> tuple[int, str]:
    order = list(V.VERDICTS) + [UNPARSED]
    return (order.index(x) if x in order else len(order), x)


def compare(baseline: pd.DataFrame, candidate: pd.DataFrame, *, by: Sequence[str] | None = DEFAULT_BY,
            match_on: Sequence[str] = MATCH_ON, tolerance: float = DEFAULT_TOLERANCE, metric: str = "auto",
            confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> DriftReport:
    """Drift of a candidate judge against a baseline judge on the same requests, per group, with the gate.

    Parameters
    ----------
    baseline, candidate : tidy verdict tables, one judge each.
    by : grouping columns (default ``("subset", "strategy")``; add ``"rubric"`` when the tables carry it;
        ``()`` = one group).
    match_on : columns pairing the replies (default :data:`MATCH_ON`).
    tolerance : the gate's tolerance, a proportion in [0, 1] (default 0.05, MeowKit rule 6).
    metric : ``"auto"`` (``"accuracy"`` when any paired reply has gold, else ``"flip_rate"``), ``"accuracy"`` or
        ``"flip_rate"`` — see :func:`gate`.
    confidence, n_resamples, seed : interval settings (Wilson; bootstrap over items, ``n_resamples=0`` skips it).

    Returns
    -------
    DriftReport

    Raises
    ------
    DataError
        See :func:`pair_verdicts`. EvallabError for a bad tolerance or metric.
    """
    if metric not in METRICS:
        raise EvallabError(f"metric={metric!r}; expected one of {list(METRICS)}")
    by = list(by or [])
    pairs = pair_verdicts(baseline, candidate, match_on=match_on, by=by)
    kw = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    groups = _stats(pairs, by, **kw)
    overall = _stats(pairs, [], **kw)
    if metric == "auto":
        metric = "accuracy" if pairs["gold"].notna().any() else "flip_rate"
    g = gate(groups, tolerance=tolerance, metric=metric, by=by)
    groups["flagged"] = groups["group"].isin(g.names)
    overall["flagged"] = False
    fl = pairs.assign(verdict_baseline=pairs["verdict_baseline"].fillna(UNPARSED),
                      verdict_candidate=pairs["verdict_candidate"].fillna(UNPARSED))
    flips = fl.groupby(by + ["verdict_baseline", "verdict_candidate"], dropna=False, observed=True).size() \
        .rename("count").reset_index()
    return DriftReport(groups=groups, overall=overall, flips=flips, pairs=pairs, gate=g, by=by,
                       baseline_judge=pairs.attrs.get("baseline_judge", ""),
                       candidate_judge=pairs.attrs.get("candidate_judge", ""),
                       baseline_only=int(pairs.attrs.get("baseline_only", 0)),
                       candidate_only=int(pairs.attrs.get("candidate_only", 0)))


def compare_judges(df: pd.DataFrame, baseline: str, candidate: str, **kwargs) -> DriftReport:
    """:func:`compare` on one table holding both judges (rows selected by the ``judge`` column).

    Raises
    ------
    DataError
        A judge label not in the table (naming those available).
    """
    df = _check_table(df, "verdicts")
    have = sorted(df["judge"].dropna().unique())
    for j in (baseline, candidate):
        if j not in have:
            raise DataError(f"judge {j!r} not in the table; available: {have}", column="judge")
    return compare(df[df["judge"] == baseline], df[df["judge"] == candidate], **kwargs)


def subset_level(df: pd.DataFrame, depth: int = 2) -> pd.DataFrame:
    """A copy with ``subset`` cut to its first ``depth`` '/'-parts (``LLMBar/Adversarial/GPTInst`` →
    ``LLMBar/Adversarial`` at depth 2) — to gate on coarser groups with more items each."""
    if depth < 1:
        raise EvallabError(f"depth={depth}; expected >= 1")
    out = df.copy()
    out["subset"] = out["subset"].astype("string").str.split("/").str[:depth].str.join("/")
    return out


# -------------------------------------------------------------------------------- AlpacaEval evaluator metrics
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
        r["p_prefer_shown_first_low"], r["p_prefer_shown_first_high"] = stats.wilson(sfk, sk, confidence)
        r.update(longer_pairs=lk, p_prefer_longer=ll / lk if lk else np.nan)
        r["p_prefer_longer_low"], r["p_prefer_longer_high"] = stats.wilson(ll, lk, confidence)
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
    df = _check_table(df, "verdicts")
    judges = list(judges) if judges else sorted(df["judge"].dropna().unique())
    rows = []
    for a, b in combinations(judges, 2):
        try:
            p = pair_verdicts(df[df["judge"] == a], df[df["judge"] == b], match_on=match_on, by=[])
        except DataError as exc:
            if "no reply in common" not in str(exc):
                raise
            continue
        s = _stats(p, [], confidence=confidence, n_resamples=0, seed=0).iloc[0]
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


# -------------------------------------------------------------------------------------- calibration replay
GOLD_REQUIRED = ("item_id", "gold")


def load_gold_set(path: str | Path) -> pd.DataFrame:
    """Read a calibration (gold) set in the JSONL format of the module docstring.

    Returns
    -------
    DataFrame, one row per item: ``item_id``, ``gold``, ``kind``, ``dataset``, ``subset``, ``rubric`` and the text
    fields present (``instruction``, ``output_1``, ``output_2``, ``answer``, ``rubric_text``, ``pass_criteria``,
    ``fail_criteria``, ``messages``, ``order``), plus any other field.

    Raises
    ------
    DataError
        Naming the file, the line and the field: invalid JSON, a missing required field, an unknown gold or kind,
        a duplicated item_id, missing text fields for the kind, or malformed messages.
    """
    path = Path(path)
    if not path.exists():
        raise DataError("no such file; expected a calibration set (JSONL, one item per line)", path=str(path))
    rows = [_check_gold_item(o, str(path), lineno)
            for lineno, o in iter_jsonl(path, expected="one calibration item per line, a JSON object")]
    if not rows:
        raise DataError("the file holds no item; expected one JSON object per line", path=str(path))
    return gold_set_frame(rows, path=str(path))


def _check_gold_item(o: dict, path: str | None, lineno: int | None) -> dict:
    for f in GOLD_REQUIRED:
        if o.get(f) in (None, ""):
            raise DataError(f"missing '{f}'; every calibration item needs {list(GOLD_REQUIRED)}", path=path,
                            row=lineno, column=f)
    o = dict(o)
    o["item_id"] = str(o["item_id"])
    gold = str(o["gold"]).strip().lower()
    if gold not in V.VERDICTS:
        raise DataError(f"unknown gold {o['gold']!r}; expected one of {list(V.VERDICTS)}", path=path, row=lineno,
                        column="gold")
    o["gold"] = gold
    kind = o.get("kind") or ("pairwise" if gold in V.PAIRWISE_VERDICTS else "pointwise")
    if kind not in ("pairwise", "pointwise"):
        raise DataError(f"unknown kind {kind!r}; expected 'pairwise' or 'pointwise'", path=path, row=lineno,
                        column="kind")
    vocab = V.PAIRWISE_VERDICTS if kind == "pairwise" else V.POINTWISE_VERDICTS
    if gold not in vocab:
        raise DataError(f"gold {gold!r} is not a {kind} verdict; expected one of {list(vocab)}", path=path,
                        row=lineno, column="gold")
    o["kind"] = kind
    if o.get("messages") is not None:
        msgs = o["messages"]
        if not isinstance(msgs, list) or not msgs or not all(
                isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                for m in msgs):
            raise DataError("messages must be a non-empty list of {\"role\": str, \"content\": str}", path=path,
                            row=lineno, column="messages")
        if kind == "pairwise" and o.get("order") not in ("ab", "ba"):
            raise DataError("pairwise messages need 'order' ('ab' = output 1 shown first, or 'ba')", path=path,
                            row=lineno, column="order")
    else:
        need = ("instruction", "output_1", "output_2") if kind == "pairwise" else ("answer", "rubric_text",
                                                                                   "pass_criteria")
        missing = [f for f in need if o.get(f) in (None, "", [])]
        if missing:
            raise DataError(f"missing '{missing[0]}'; a {kind} item needs {list(need)} (or 'messages')",
                            path=path, row=lineno, column=missing[0])
    return o


def gold_set_frame(items: Sequence[dict] | pd.DataFrame, *, path: str | None = None) -> pd.DataFrame:
    """Validate calibration items (dicts or a DataFrame, fields as in the JSONL format) into the items table.

    Raises
    ------
    DataError
        As :func:`load_gold_set` (rows counted from 1).
    """
    if isinstance(items, pd.DataFrame):
        items = [{k: v for k, v in r.items() if not (np.isscalar(v) and pd.isna(v))}
                 for r in items.to_dict("records")]
    items = [_check_gold_item(o, path, i) for i, o in enumerate(items, start=1)]
    df = pd.DataFrame(list(items))
    for c, default in (("dataset", "calibration"), ("subset", ""), ("rubric", "")):
        df[c] = df[c].fillna(default).astype("string") if c in df.columns else default
    dup = df["item_id"].duplicated()
    if dup.any():
        raise DataError(f"duplicated item_id {df.loc[dup, 'item_id'].iloc[0]!r}; expected unique ids", path=path,
                        row=int(np.flatnonzero(dup)[0]) + 1, column="item_id")
    return df.reset_index(drop=True)


def _plan(gold_set: pd.DataFrame, orders: Sequence[str], samples: int) -> list[dict]:
    """One dict per request to make: item row + order + sample."""
    if samples < 1:
        raise EvallabError(f"samples={samples}; expected >= 1")
    bad = [o for o in orders if o not in ("ab", "ba")]
    if bad or not orders:
        raise EvallabError(f"orders={list(orders)}; expected a non-empty subset of ['ab', 'ba']")
    plan = []
    for item in gold_set.to_dict("records"):
        item = {k: v for k, v in item.items() if not (np.isscalar(v) and pd.isna(v))}
        if item["kind"] == "pointwise":
            item_orders = [""]
        elif item.get("messages") is not None:
            item_orders = [item["order"]]
        else:
            item_orders = list(orders)
        for o in item_orders:
            for s in range(samples):
                plan.append({**item, "order": o, "sample": s})
    return plan


def default_request(job: dict):
    """The request for one planned reply: the item's own ``messages`` when given, else the prompt builders of
    :mod:`evallab.judges.prompts` (LLMBar-shaped pairwise; keryx-shaped pointwise). The request metadata carries
    the reply's identity (item_id, dataset, subset, rubric, strategy, anchor_set, order, sample, gold)."""
    from evallab.judges import prompts
    from evallab.judges.types import JudgeRequest, Message

    meta = {k: job.get(k) for k in ("item_id", "dataset", "subset", "rubric", "strategy", "gold", "order",
                                    "sample")}
    meta["anchor_set"] = job.get("anchor_set") or "none"
    if job.get("messages") is not None:
        return JudgeRequest([Message(m["role"], m["content"]) for m in job["messages"]], kind=job["kind"],
                            metadata=meta, prompt_version=str(job.get("prompt_version", "")))
    if job["kind"] == "pairwise":
        return prompts.build_pairwise(job["instruction"], job["output_1"], job["output_2"], order=job["order"],
                                      metadata=meta)
    return prompts.build_pointwise(rubric=job["rubric_text"], pass_criteria=job["pass_criteria"],
                                   fail_criteria=job.get("fail_criteria") or (), answer=job["answer"],
                                   metadata=meta)


def _verdict_rows(plan: list[dict], *, judge: str, strategy: str) -> pd.DataFrame:
    """The gold labels as verdict rows of the planned requests."""
    rows = [{"item_id": j["item_id"], "dataset": j.get("dataset", "calibration"), "subset": j.get("subset", ""),
             "judge": judge, "model": judge, "strategy": j.get("strategy") or strategy,
             "anchor_set": j.get("anchor_set", "none"), "order": j["order"], "sample": j["sample"],
             "verdict": j["gold"], "gold": j["gold"], "rubric": j.get("rubric", "")} for j in plan]
    return V.coerce(pd.DataFrame(rows))


def _run_plan(judge, plan: list[dict], build_request, **run_kw) -> pd.DataFrame:
    from evallab.judges.runner import run_jobs

    build = build_request or default_request
    return run_jobs(judge, [build(j) for j in plan], **run_kw)


def replay(judge, gold_set: pd.DataFrame, *, orders: Sequence[str] = ("ab", "ba"), samples: int = 1,
           strategy: str = "calibration", build_request: Callable[[dict], object] | None = None,
           out: str | Path | None = None, record: str | Path | None = None, progress: bool = False,
           max_in_flight: int | None = None) -> pd.DataFrame:
    """Replay a calibration set through any :class:`evallab.judges.Judge` (live, replay, local server, fake).

    Parameters
    ----------
    judge : object with ``label``, ``model`` and ``async judge(request) -> JudgeReply``.
    gold_set : items table of :func:`load_gold_set` / :func:`gold_set_frame`.
    orders : pairwise orders to ask (each item is judged in each; items with their own ``messages`` once).
    samples : repeats per request (``sample`` 0..samples−1 in the request metadata).
    strategy : the ``strategy`` label of the rows (unless an item sets its own).
    build_request : ``job dict → JudgeRequest`` (default :func:`default_request`); the job holds the item's
        fields plus ``order``, ``sample`` and ``strategy``.
    out, record, progress, max_in_flight : passed to :func:`evallab.judges.run_jobs` (append-as-you-go output
        with resume, a keryx-format recording of the run, a progress bar, concurrency).

    Returns
    -------
    DataFrame — the tidy verdict table of the replies (``gold`` from the set, extra column ``rubric``, plus the
    runner's columns); an unparsed reply is an NA verdict with ``error`` set, counted, never scored as wrong.

    Raises
    ------
    EvallabError
        Bad ``orders``/``samples``; errors of the runner (a fatal HTTP error, a replay miss) stop the run.
    """
    plan = [{**j, "strategy": j.get("strategy") or strategy} for j in _plan(gold_set, orders, samples)]
    return _run_plan(judge, plan, build_request, out=out, record=record, progress=progress,
                     max_in_flight=max_in_flight)


def gold_verdicts(gold_set: pd.DataFrame, *, orders: Sequence[str] = ("ab", "ba"), samples: int = 1,
                  judge: str = "gold") -> pd.DataFrame:
    """The gold labels as a perfect judge's verdict table (same requests as :func:`replay`): the baseline of a
    calibration replay when no recorded baseline run exists — the gate then bounds the candidate's
    disagreement with gold itself."""
    return _verdict_rows(_plan(gold_set, orders, samples), judge=judge, strategy="calibration")


def calibration_drift(judge, gold_set: pd.DataFrame, *, baseline: pd.DataFrame | None = None,
                      tolerance: float = DEFAULT_TOLERANCE, by: Sequence[str] = ("subset", "rubric"),
                      orders: Sequence[str] = ("ab", "ba"), samples: int = 1,
                      build_request: Callable[[dict], object] | None = None, n_resamples: int = 1000,
                      seed: int = 0, **run_kw) -> tuple[pd.DataFrame, DriftReport]:
    """MeowKit rule 6: replay the calibration set with the new judge and gate its agreement with gold.

    Parameters
    ----------
    baseline : the recorded verdicts of the current judge on the same set (e.g. an earlier :func:`replay`
        saved to CSV). ``None``: the gold labels themselves (:func:`gold_verdicts`), so the gate flags every group
        where the new judge disagrees with gold on more than ``tolerance`` of its replies.
    by : grouping (those present in both tables are used; default subset and rubric).
    run_kw : ``out``, ``record``, ``progress``, ``max_in_flight`` for the runner.
    Other parameters as in :func:`replay` and :func:`compare`.

    Returns
    -------
    (candidate verdict table, DriftReport) — paired on (item_id, order, sample).
    """
    cand = replay(judge, gold_set, orders=orders, samples=samples, build_request=build_request, **run_kw)
    base = baseline if baseline is not None else gold_verdicts(gold_set, orders=orders, samples=samples)
    base = _check_table(base, "baseline")
    by = [c for c in by if c in cand.columns and c in base.columns]
    rep = compare(base, cand, by=by, match_on=("item_id", "order", "sample"), tolerance=tolerance,
                  metric="accuracy", n_resamples=n_resamples, seed=seed)
    return cand, rep


@dataclass
class ReverifyResult:
    """Re-verify mode: a seeded sample of recorded verdicts re-judged by a new judge.

    Attributes
    ----------
    sample : DataFrame, one row per re-judged reply: the key, ``verdict_recorded``, ``verdict_new``, ``gold``,
        ``error_new``, ``both_parsed``, ``changed``, ``agrees`` (NA when either reply is unparsed).
    disagreements : the rows of ``sample`` where both parsed and the verdicts differ.
    report : DriftReport of recorded (baseline) vs new (candidate) on the sample.
    items : the sampled item ids, in sampling order.
    """

    sample: pd.DataFrame
    disagreements: pd.DataFrame
    report: DriftReport
    items: list[str]


def reverify(judge, recorded: pd.DataFrame, items: pd.DataFrame, *, n_items: int = 50, seed: int = 0,
             by: Sequence[str] = ("subset",), build_request: Callable[[dict], object] | None = None,
             tolerance: float = DEFAULT_TOLERANCE, n_resamples: int = 1000, **run_kw) -> ReverifyResult:
    """Re-judge a random (seeded) sample of recorded verdicts with ``judge`` and report where it disagrees.

    Parameters
    ----------
    recorded : tidy verdict table of ONE judge (the recorded verdicts).
    items : the texts, keyed by ``item_id``, in the calibration-set fields (``instruction``/``output_1``/
        ``output_2`` for pairwise; ``answer``/``rubric_text``/``pass_criteria`` for pointwise; or ``messages``).
        LLMBar's ``load_llmbar(with_text=True).items`` works as is (``input`` is read as ``instruction``).
    n_items : items to sample (without replacement; all when fewer); every recorded reply of a sampled item
        (each strategy, order and sample) is re-judged with the same order and sample index.
    seed : ``numpy.random.default_rng(seed)`` draws the sample from the sorted item ids.
    run_kw : ``out``, ``record``, ``progress``, ``max_in_flight`` for :func:`evallab.judges.run_jobs`.

    Returns
    -------
    ReverifyResult

    Raises
    ------
    DataError
        More than one judge in ``recorded``, or sampled items without texts in ``items``.
    """
    recorded = _check_table(recorded, "recorded")
    judges = recorded["judge"].dropna().unique()
    if len(judges) != 1:
        raise DataError(f"recorded holds {len(judges)} judges {sorted(judges)[:5]}; expected one", path="recorded",
                        column="judge")
    ids = np.array(sorted(recorded["item_id"].unique()))
    rng = np.random.default_rng(seed)
    chosen = [str(i) for i in rng.choice(ids, size=min(n_items, len(ids)), replace=False)] if len(ids) else []
    it = items.copy()
    if "input" in it.columns and "instruction" not in it.columns:
        it = it.rename(columns={"input": "instruction"})
    it = it.drop_duplicates("item_id").set_index("item_id")
    missing = [i for i in chosen if i not in it.index]
    if missing:
        raise DataError(f"{len(missing)} sampled item(s) have no text in items, e.g. {missing[0]!r}",
                        path="items", column="item_id")
    rec = recorded[recorded["item_id"].isin(chosen)].copy()
    pairwise = (rec["order"].isin(["ab", "ba"]) | rec["verdict"].isin(V.PAIRWISE_VERDICTS)
                | rec["gold"].isin(V.PAIRWISE_VERDICTS)).fillna(False)
    pointwise = ~pairwise
    rec.loc[~pointwise & (rec["order"] == ""), "order"] = "ab"  # a pairwise reply of unknown order: ask as shown
    plan = []
    for r, pw in zip(rec.to_dict("records"), pointwise, strict=True):
        src = {k: v for k, v in it.loc[r["item_id"]].to_dict().items() if not (np.isscalar(v) and pd.isna(v))}
        plan.append({**src, "item_id": r["item_id"], "kind": "pointwise" if pw else "pairwise",
                     "gold": None if pd.isna(r["gold"]) else r["gold"], "dataset": r["dataset"],
                     "subset": r["subset"], "strategy": r["strategy"], "anchor_set": r["anchor_set"],
                     "order": r["order"], "sample": int(r["sample"])})
    run_kw.setdefault("progress", False)
    new = _run_plan(judge, plan, build_request, **run_kw).reset_index(drop=True)
    if len(new) == len(rec) and (new["item_id"].to_numpy() == rec["item_id"].to_numpy()).all():
        # the runner labels an empty strategy with the prompt version: keep the recorded label to pair replies
        new["strategy"] = rec["strategy"].to_numpy()
    match = ["dataset", "item_id", "strategy", "anchor_set", "order", "sample"]
    by = [c for c in by if c in rec.columns and c in new.columns]
    rep = compare(rec, new[list(V.COLUMNS)], by=by,
                  match_on=match, tolerance=tolerance, n_resamples=n_resamples, seed=seed)
    s = rep.pairs.rename(columns={"verdict_baseline": "verdict_recorded", "verdict_candidate": "verdict_new"})
    s = s.merge(new[match + ["error"]].rename(columns={"error": "error_new"}), on=match, how="left")
    s["agrees"] = pd.array(np.where(s["both_parsed"], ~s["changed"], None), dtype="boolean")
    s = s.drop(columns=["judge_baseline", "judge_candidate"], errors="ignore")
    dis = s[s["changed"]].reset_index(drop=True)
    return ReverifyResult(sample=s, disagreements=dis, report=rep, items=chosen)


# ------------------------------------------------------------------------------------------------------ figure
def plot_drift(report: DriftReport, *, label: str = "group", title: str | None = None, ax=None):
    """Accuracy change (candidate − baseline, percentage points) per group with its bootstrap interval; groups
    over the gate's tolerance in red, the tolerance band dashed. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    g = report.groups.sort_values("delta_accuracy", na_position="first").reset_index(drop=True)
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(8, max(2.5, 0.28 * len(g) + 1)))
    y = np.arange(len(g))
    d = 100 * g["delta_accuracy"].to_numpy(float)
    lo = 100 * g["delta_low"].to_numpy(float)
    hi = 100 * g["delta_high"].to_numpy(float)
    err = np.nan_to_num(np.vstack([np.clip(d - lo, 0, None), np.clip(hi - d, 0, None)]))
    flagged = g["flagged"].to_numpy(bool)
    for m, color, name in ((~flagged, "tab:blue", "within tolerance"), (flagged, "tab:red", "flagged")):
        if m.any():
            ax.errorbar(d[m], y[m], xerr=err[:, m], fmt="o", color=color, capsize=2, label=name)
    tol = 100 * report.gate.tolerance
    for x in (-tol, tol):
        ax.axvline(x, ls="--", lw=1, color="grey")
    ax.axvline(0, lw=0.8, color="black")
    ax.set_yticks(y)
    ax.set_yticklabels(g[label].astype(str), fontsize="small")
    ax.set_xlabel("accuracy vs gold, candidate − baseline (percentage points; 95% bootstrap interval)")
    ax.set_ylabel(label)
    ax.set_title(title or f"Drift {report.baseline_judge} → {report.candidate_judge} (red: over ±{tol:.0f} pp)")
    fig.tight_layout()
    return fig


def plot_win_rates(rates: pd.DataFrame, *, entity: str = "generator_2", title: str | None = None, ax=None):
    """Win rate of each entity (model) under each judge, as grouped bars with ±1 standard error (percent).

    ``rates`` is the table of :func:`win_rates`. Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    w = rates.pivot(index=entity, columns="judge", values="win_rate") * 100
    se = rates.pivot(index=entity, columns="judge", values="standard_error") * 100
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(8, 4))
    x = np.arange(len(w))
    width = 0.8 / max(1, w.shape[1])
    for i, j in enumerate(w.columns):
        ax.bar(x + (i - (w.shape[1] - 1) / 2) * width, w[j].to_numpy(float), width, yerr=se[j].to_numpy(float),
               capsize=2, label=j)
    ax.set_xticks(x)
    ax.set_xticklabels(w.index.astype(str), rotation=30, ha="right")
    ax.set_ylabel("win rate vs baseline (%, ±1 s.e.)")
    ax.set_xlabel(entity)
    ax.set_title(title or "Win rate of each model under each annotator configuration")
    ax.legend(title="judge", fontsize="small")
    fig.tight_layout()
    return fig
