"""Judge drift: a baseline and a candidate judge on the same items, per subset / rubric / strategy, with a gate.

When a judge model is upgraded (or its prompt or parser changes), which verdicts moved, and does the new judge
still agree with the gold labels within tolerance? MeowKit rule 6 (``data/meowkit/rules/rubric-rules.md``, "Drift
Check on Model Upgrade"): replay the calibration set with the new model; agreement with the stored gold verdicts
must stay within 5% per rubric.

Estimators (all take tidy verdict tables, :mod:`evallab.verdicts`)
------------------------------------------------------------------
- :func:`compare` — baseline vs candidate replies paired on the same request (item, strategy, anchor set, order,
  sample by default): raw verdict agreement (Wilson interval) and Cohen's kappa (scikit-learn, asymptotic interval
  of statsmodels, via :mod:`evallab.metrics.agreement`), the flip table, accuracy vs gold of each with the paired
  difference and its percentile bootstrap interval over items (:mod:`scipy.stats.bootstrap`), McNemar's test on
  the replies both parsed (:func:`evallab.metrics.intervals.mcnemar`), per group; and the tolerance gate (:func:`gate`).
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
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import norm
from statsmodels.stats.inter_rater import cohens_kappa

from evallab import verdicts as V
from evallab.errors import DataError, EvallabError
from evallab.metrics import intervals as stats

#: how replies of the two tables are paired by default: the same request (judge label aside)
MATCH_ON = ("dataset", "item_id", "strategy", "anchor_set", "order", "sample")
DEFAULT_BY = ("subset", "strategy")
DEFAULT_TOLERANCE = 0.05
METRICS = ("auto", "accuracy", "flip_rate")
UNPARSED = "unparsed"
#: float guard: a move of exactly the tolerance (up to rounding) is not "more than" it
_EPS = 1e-9


# ----------------------------------------------------------------------------------------------------- pairing
def check_table(df: pd.DataFrame, name: str) -> pd.DataFrame:
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
    baseline = check_table(baseline, "baseline")
    candidate = check_table(candidate, "candidate")
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
    (equal to :func:`evallab.metrics.agreement._kappa_with_ci`, which goes through a slower pandas crosstab)."""
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


def summarize_pairs(p: pd.DataFrame, by: list[str], *, confidence: float, n_resamples: int, seed: int) -> pd.DataFrame:
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
    groups = summarize_pairs(pairs, by, **kw)
    overall = summarize_pairs(pairs, [], **kw)
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
    df = check_table(df, "verdicts")
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


