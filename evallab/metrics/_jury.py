"""Juries: one verdict from several judges' replies to the same request (a panel of LLM judges, as in PoLL — Verga
et al. 2024, "Replacing Judges with Juries" — inspect_ai's ``model_graded_qa(model=[...])`` and quotient's
``Jury``), and the jury measured beside its members.

A request is one (dataset, item, order, sample) (:data:`evallab.metrics._design.UNIT`); each member gives at most
one reply to it. The rules (``rule=``), on the members' verdicts (any vocabulary: ``1``/``2``/``tie`` or
``pass``/``warn``/``fail``):

- ``"majority"`` — plurality: the verdict with the most votes; two verdicts sharing the most votes is a SPLIT vote
  and the jury gives no verdict (NA, ``error`` says so) — never list order, never a silent tie-break.
- ``"strict"`` — strict majority: a verdict with MORE than half of the counted votes, else NA.
- ``"unanimous"`` — every counted vote names the same verdict, else NA.
- ``"weighted"`` — weighted plurality with one weight per member, learnt by :func:`learn_jury_weights` on a
  held-out split: ``w = log((K − 1) · p / (1 − p))``, ``p`` the member's accuracy against gold on the training
  items (add-½ smoothed), ``K`` the number of verdict categories — the optimal weights of independent voters
  with symmetric errors (Nitzan & Paroush 1982; Grofman, Owen & Feld 1983). A member no better than chance gets
  weight ≤ 0 (clipped to 0: it does not vote against its own verdict).

A member whose reply could not be parsed (verdict NA — the case of inspect_ai#4721, where the panel silently shrinks
and list order decides) is handled by the stated rule ``unparsed=``:

- ``"abstain"`` — it does not vote; the counted votes are the parsed ones (a request with none: NA).
- ``"against"`` — it votes against every verdict: it counts in the denominator of ``strict`` and ``unanimous``
  (so a strict majority needs more than half of ALL members, unanimity needs every member parsed and agreeing), and
  under ``majority``/``weighted`` its votes form a bloc that wins no verdict but makes the jury NA when it has at
  least as many votes (weight) as the leading verdict.
- ``"na"`` — any unparsed member makes the jury's verdict NA.

A member that gave no reply at all to a request (absent row) is treated like an unparsed one and counted in
``members_missing``. The jury's cost of a request is the sum of its members' ``cost_usd`` (NA when none is known).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from evallab import verdicts as V
from evallab._results import Measure, Results, results
from evallab.errors import DesignError, EvallabError
from evallab.metrics import _intervals as intervals
from evallab.metrics._design import UNIT, item_key, needs_verdicts, not_computable

NAN = float("nan")
RULES = ("majority", "strict", "unanimous", "weighted")
UNPARSED_RULES = ("abstain", "against", "na")

#: the measures of :func:`jury_comparison`
JURY_MEASURES = [
    Measure("requests", "Requests", "count"), Measure("parsed", "Verdicts given", "count"),
    Measure("parse_rate", "Verdict rate", "proportion", n="requests", n_unit="requests"),
    Measure("accuracy", "Accuracy vs gold", "proportion", "accuracy_low", "accuracy_high",
            method_column="accuracy_method", n="gold_parsed", n_unit="replies"),
    Measure("gold_parsed", "Verdicts with gold", "count"),
    Measure("position_consistency", "Position consistency", "proportion", "position_consistency_low",
            "position_consistency_high", method_column="position_consistency_method", n="both_parsed",
            n_unit="pairs"),
    Measure("both_parsed", "Pairs (both parsed)", "count"),
    Measure("cost_per_verdict", "Cost per request (USD)", "", "cost_per_verdict_low", "cost_per_verdict_high",
            method_column="cost_per_verdict_method", n="costed", n_unit="requests", digits=6),
    Measure("costed", "Requests with a cost", "count"),
]


def _check(rule: str, unparsed: str) -> None:
    if rule not in RULES:
        raise EvallabError(f"rule={rule!r}; expected one of {list(RULES)}")
    if unparsed not in UNPARSED_RULES:
        raise EvallabError(f"unparsed={unparsed!r}; expected one of {list(UNPARSED_RULES)}")


def _members(df: pd.DataFrame, members: Sequence[str]) -> pd.DataFrame:
    members = list(dict.fromkeys(members))
    if len(members) < 2:
        raise DesignError(f"a jury needs at least two members; got {members}")
    missing = [m for m in members if not (df["judge"] == m).any()]
    if missing:
        raise DesignError(f"jury member(s) {missing} not in the table's judges {sorted(df['judge'].unique())[:12]}",
                          column="judge")
    d = df[df["judge"].isin(members)]
    dup = d.duplicated([*UNIT, "judge"])
    if dup.any():
        r = d[dup].iloc[0]
        raise DesignError(f"member {r['judge']!r} has several replies to request {dict(r[list(UNIT)])}; expected "
                          "one per (dataset, item_id, order, sample)", column="judge")
    return d


@needs_verdicts("a jury verdict")
def jury_verdicts(df: pd.DataFrame, members: Sequence[str], *, rule: str = "majority", unparsed: str = "abstain",
                  weights: Mapping[str, float] | None = None, name: str | None = None) -> pd.DataFrame:
    """The jury's verdict on every request at least one member answered (module docstring for the rules).

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table (:mod:`evallab.verdicts`) holding the members' replies.
    members : sequence of str
        The member judges (``judge`` values), at least two.
    rule : {"majority", "strict", "unanimous", "weighted"}, default "majority"
    unparsed : {"abstain", "against", "na"}, default "abstain"
        The rule for a member whose reply could not be parsed (or that did not reply).
    weights : mapping of str to float, optional
        Per-member weights for ``rule="weighted"`` (:func:`learn_jury_weights`); required there, refused elsewhere.
    name : str, optional
        The jury's ``judge`` label; default ``"jury(<rule>, unparsed: <rule>)"``.

    Returns
    -------
    DataFrame
        A tidy verdict table, one row per request: the request's columns (``dataset``, ``item_id``, ``order``,
        ``sample``), ``subset`` and ``gold`` (from the members' rows), ``judge`` = ``model`` = ``name``,
        ``strategy`` = ``"jury"``, ``verdict`` (NA with ``error`` = why: split vote, no strict majority, not
        unanimous, an unparsed member under ``"na"``, no vote), ``cost_usd`` (members' sum), and ``members``,
        ``members_parsed``, ``members_missing`` (counts), ``votes`` (``"1:2 2:1"`` — each verdict's count or
        weight).

    Raises
    ------
    EvallabError
        An unknown rule, weights missing for (or given to) a rule.
    DesignError
        Fewer than two members, a member absent from the table, several replies of a member to one request.

    Examples
    --------
    Three judges on one request: 1, 1 and unparsed. Majority (abstain) gives 1; strict majority with the
    unparsed member counted against needs 2 of 3 — it has them; unanimity under "against" does not:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> from evallab.metrics._jury import jury_verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": "q1", "judge": ["A", "B", "C"], "order": "ab",
    ...                                    "verdict": ["1", "1", None]}))
    >>> [jury_verdicts(df, ["A", "B", "C"], rule=r, unparsed=u)["verdict"].iloc[0]
    ...  for r, u in (("majority", "abstain"), ("strict", "against"), ("unanimous", "against"))]
    ['1', '1', <NA>]
    """
    _check(rule, unparsed)
    if (rule == "weighted") != (weights is not None):
        raise EvallabError("rule='weighted' needs weights= (learn_jury_weights); the other rules take none"
                           if rule == "weighted" else f"weights= apply to rule='weighted' only, not {rule!r}")
    d = _members(df, members)
    members = list(dict.fromkeys(members))
    if weights is not None:
        absent = [m for m in members if m not in weights]
        if absent:
            raise EvallabError(f"weights has no weight for member(s) {absent}")
    w = np.array([float(weights[m]) if weights is not None else 1.0 for m in members])
    name = name or f"jury({rule}, unparsed: {unparsed})"
    keys = list(UNIT)
    n = len(members)
    d = d.assign(_v=d["verdict"].astype(object))
    wide = d.pivot(index=keys, columns="judge", values="_v").reindex(columns=members)
    present = d.assign(_p=1).pivot(index=keys, columns="judge", values="_p").reindex(columns=members).notna()
    vals = wide.to_numpy(object)
    parsed = pd.notna(vals)
    cats = sorted({str(v) for v in vals[parsed]})
    hits = np.stack([(vals == c) & parsed for c in cats], axis=1) if cats else np.zeros((len(wide), 0, n), bool)
    votes = hits.astype(float) @ w  # (requests, categories): each verdict's weight
    given = hits.any(2)  # the verdicts some parsed member gave
    bloc = (~parsed) @ w
    n_parsed = parsed.sum(1)
    out_v, out_e, out_votes = [], [], []
    for i in range(len(wide)):
        row = {c: float(votes[i, k]) for k, c in enumerate(cats) if given[i, k]}
        v, e = _decide(row, float(bloc[i]), int(n_parsed[i]), n, rule, unparsed)
        out_v.append(v)
        out_e.append(e)
        out_votes.append(" ".join(f"{c}:{x:g}" for c, x in row.items()))
    first = d.groupby(keys, sort=True, dropna=False)
    out = wide.index.to_frame(index=False)
    out["subset"] = first["subset"].first().to_numpy() if "subset" in d else ""
    out["judge"] = out["model"] = name
    out["strategy"] = "jury"
    out["verdict"], out["error"] = out_v, out_e
    out["gold"] = first["gold"].first().to_numpy() if "gold" in d else None
    out["cost_usd"] = (first["cost_usd"].sum(min_count=1).to_numpy() if "cost_usd" in d else None)
    out["members"] = n
    out["members_parsed"] = n_parsed
    out["members_missing"] = (~present.to_numpy()).sum(1)
    out["votes"] = out_votes
    out = V.coerce(out)
    for c in ("members", "members_parsed", "members_missing"):
        out[c] = out[c].astype("Int64")
    return out


def _decide(votes: dict[str, float], bloc: float, n_parsed: int, n: int, rule: str, unparsed: str
            ) -> tuple[str | None, str | None]:
    """(verdict, error) of one request from its votes (verdict → count or weight, only verdicts some member gave)."""
    if unparsed == "na" and n_parsed < n:
        return None, f"{n - n_parsed} of {n} members unparsed (unparsed: na)"
    if not votes:
        return None, "no member's reply was parsed"
    top = max(votes.values())
    leaders = sorted(k for k, v in votes.items() if v == top)
    counted = sum(votes.values()) + (bloc if unparsed == "against" else 0.0)
    if rule in ("majority", "weighted"):
        if top <= 0:
            return None, "no member with a positive weight voted"
        if len(leaders) > 1:
            return None, f"split vote: {' and '.join(leaders)} tied at {top:g}"
        if unparsed == "against" and bloc >= top and bloc > 0:
            return None, f"the unparsed members' votes ({bloc:g}) match the leading verdict's ({top:g})"
        return leaders[0], None
    if rule == "strict":
        if len(leaders) == 1 and top > counted / 2:
            return leaders[0], None
        return None, f"no strict majority: {top:g} of {counted:g} counted votes"
    # unanimous
    if len(votes) == 1 and (unparsed != "against" or bloc == 0):
        return leaders[0], None
    return None, "not unanimous" if len(votes) > 1 else f"not unanimous: {n - n_parsed} member(s) unparsed"


def learn_jury_weights(df: pd.DataFrame, members: Sequence[str], train_items: Sequence[str] | None = None
                       ) -> dict[str, float]:
    """Per-member weights for ``rule="weighted"`` from the members' accuracy against gold on ``train_items``.

    ``w = max(0, log((K − 1) · p / (1 − p)))`` with ``p = (correct + ½) / (parsed with gold + 1)`` (add-½
    smoothing, so a perfect member gets a finite weight) and ``K`` the number of distinct gold verdicts (at least 2)
    — Nitzan & Paroush (1982), "Optimal decision rules in uncertain dichotomous choice situations"; Grofman, Owen
    & Feld (1983) for K categories under symmetric errors.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table with ``gold``.
    members : sequence of str
        The member judges.
    train_items : sequence of str, optional
        The ``item_id`` values to learn on (the held-out split; :func:`split_items`); default: every item.

    Returns
    -------
    dict
        member → weight (≥ 0).

    Raises
    ------
    DesignError
        No gold on the training items, or a member with no parsed reply there.
    """
    d = _members(df, members)
    if train_items is not None:
        d = d[d["item_id"].isin(set(train_items))]
    d = d[d["gold"].notna()]
    if d.empty:
        raise DesignError("no reply with gold on the training items; weights need gold", column="gold")
    k = max(2, d["gold"].nunique())
    out = {}
    for m in dict.fromkeys(members):
        g = d[(d["judge"] == m) & d["verdict"].notna()]
        if g.empty:
            raise DesignError(f"member {m!r} has no parsed reply with gold on the training items")
        p = (float((g["verdict"] == g["gold"]).sum()) + 0.5) / (len(g) + 1.0)
        out[m] = max(0.0, float(np.log((k - 1) * p / (1 - p))))
    return out


def split_items(df: pd.DataFrame, *, train_fraction: float = 0.5, seed: int = 0) -> tuple[list[str], list[str]]:
    """The items of ``df`` split at random into (train, test): ``round(train_fraction × items)`` to train.

    Raises
    ------
    EvallabError
        ``train_fraction`` outside (0, 1), or a split leaving either side empty.
    """
    if not 0 < train_fraction < 1:
        raise EvallabError(f"train_fraction={train_fraction}; expected a share in (0, 1)")
    items = sorted(df["item_id"].astype(str).unique())
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(items))
    n = int(round(train_fraction * len(items)))
    if n == 0 or n == len(items):
        raise EvallabError(f"{len(items)} items cannot be split {train_fraction:.0%} / {1 - train_fraction:.0%} "
                           "with both sides non-empty")
    train = sorted(items[i] for i in perm[:n])
    return train, sorted(items[i] for i in perm[n:])


@needs_verdicts("the jury comparison")
def jury_comparison(df: pd.DataFrame, members: Sequence[str], *,
                    rules: Sequence[str] = ("majority", "strict", "unanimous", "weighted"),
                    unparsed: str = "abstain", train_fraction: float = 0.5, split_seed: int = 0,
                    confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> Results:
    """Each jury (one per rule) beside each member: verdict rate, accuracy against gold, position consistency
    and cost per request, with item intervals, on the same evaluation items.

    With ``"weighted"`` among ``rules`` the items are split (:func:`split_items`): the weights are learnt on the
    training items (:func:`learn_jury_weights`) and EVERY row — members and juries — is measured on the other
    items; without it, on every item.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table of the members' replies (``gold`` for accuracy and weights; both orders for
        position consistency; ``cost_usd`` for cost).
    members : sequence of str
        The member judges.
    rules : sequence of str
        The jury rules to compare (:data:`RULES`).
    unparsed : {"abstain", "against", "na"}, default "abstain"
        The stated rule for unparsed members (module docstring).
    train_fraction, split_seed
        The held-out split of the weighted jury.
    confidence, n_resamples, seed
        Level, bootstrap resamples over items and seed of every interval.

    Returns
    -------
    Results
        One row per member, then per jury: ``judge``, ``kind`` (``member``/``jury``), ``rule`` (``""`` for a
        member), ``unparsed`` (the jury's rule for unparsed members), ``weight`` (member's learnt weight, NaN
        otherwise), ``requests``, ``parsed`` (verdicts given), ``parse_rate``, ``accuracy`` (+ interval; parsed
        verdicts with gold: :func:`evallab.metrics._agreement.accuracy`), ``gold_parsed``,
        ``position_consistency`` (+ interval: :func:`evallab.metrics._position.position_consistency`),
        ``both_parsed``, ``cost_per_verdict`` (USD per request; the jury's = its members' sum; percentile item
        bootstrap) with ``costed``, ``note``. ``attrs["train_items"]``, ``attrs["test_items"]`` when split.

    Raises
    ------
    EvallabError, DesignError
        As :func:`jury_verdicts` and :func:`learn_jury_weights`.
    """
    from evallab.metrics._agreement import accuracy
    from evallab.metrics._position import position_consistency

    for r in rules:
        _check(r, unparsed)
    d = _members(df, members)
    members = list(dict.fromkeys(members))
    weights = None
    train = test = None
    if "weighted" in rules:
        train, test = split_items(d, train_fraction=train_fraction, seed=split_seed)
        weights = learn_jury_weights(d, members, train)
        d = d[d["item_id"].isin(set(test))]
    juries = [jury_verdicts(d, members, rule=r, unparsed=unparsed, weights=weights if r == "weighted" else None)
              for r in rules]
    both = V.concat([d[[c for c in V.COLUMNS if c in d.columns]],
                     *[j[[c for c in V.COLUMNS if c in j.columns]] for j in juries]])
    both["strategy"] = ""  # members and juries compared as judges of one design cell
    ci = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    has_gold = both["gold"].notna().any()
    acc = accuracy(both, ["judge"], **ci).to_frame().set_index("judge") if has_gold else None
    pairwise = set(both["order"].dropna().unique()) >= {"ab", "ba"}
    pc = position_consistency(both, ["judge"], **ci).to_frame().set_index("judge") if pairwise else None
    labels = [*members, *[j["judge"].iloc[0] for j in juries]]
    rows = []
    for i, label in enumerate(labels):
        g = both[both["judge"] == label]
        kind = "member" if i < len(members) else "jury"
        r = {"judge": label, "kind": kind, "rule": "" if kind == "member" else rules[i - len(members)],
             "unparsed": "" if kind == "member" else unparsed,
             "weight": weights[label] if (weights and kind == "member") else NAN,
             "requests": len(g), "parsed": int(g["verdict"].notna().sum())}
        r["parse_rate"] = r["parsed"] / r["requests"] if r["requests"] else NAN
        notes = []
        if acc is not None and label in acc.index:
            a = acc.loc[label]
            r.update(accuracy=a["accuracy"], accuracy_low=a["accuracy_low"], accuracy_high=a["accuracy_high"],
                     accuracy_method=a["accuracy_method"], gold_parsed=int(a["parsed"]))
        else:
            r.update(accuracy=NAN, accuracy_low=NAN, accuracy_high=NAN, accuracy_method="", gold_parsed=0)
            notes.append(not_computable("accuracy needs gold"))
        if pc is not None and label in pc.index:
            p = pc.loc[label]
            r.update(position_consistency=p["position_consistency"],
                     position_consistency_low=p["position_consistency_low"],
                     position_consistency_high=p["position_consistency_high"],
                     position_consistency_method=p["position_consistency_method"], both_parsed=int(p["both_parsed"]))
        else:
            r.update(position_consistency=NAN, position_consistency_low=NAN, position_consistency_high=NAN,
                     position_consistency_method="", both_parsed=0)
            notes.append(not_computable("position consistency needs both presentation orders"))
        r.update(_cost(g, **ci))
        if not r["costed"]:
            notes.append(not_computable("no cost_usd recorded"))
        r["note"] = "; ".join(notes)
        rows.append(r)
    out = results(pd.DataFrame(rows), JURY_MEASURES, level=confidence, keys=["judge"])
    if train is not None:
        out.attrs["train_items"], out.attrs["test_items"] = train, test
    return out


def _cost(g: pd.DataFrame, *, confidence: float, n_resamples: int, seed: int) -> dict:
    """Mean cost per request with a percentile item bootstrap (cost is not a proportion: no Wilson)."""
    c = pd.to_numeric(g["cost_usd"], errors="coerce") if "cost_usd" in g else pd.Series(np.nan, index=g.index)
    ok = g[c.notna()].assign(_c=c[c.notna()].astype(float), _one=1.0)
    if ok.empty:
        return {"cost_per_verdict": NAN, "cost_per_verdict_low": NAN, "cost_per_verdict_high": NAN,
                "cost_per_verdict_method": "", "costed": 0}
    per = ok.assign(_item=item_key(ok)).groupby("_item")[["_c", "_one"]].sum().to_numpy(float)
    lo, hi = intervals.bootstrap_sums(per, lambda t: t[..., 0] / t[..., 1], n_resamples=n_resamples,
                                      confidence=confidence, seed=seed)
    method = f"item bootstrap (percentile, {n_resamples:,} resamples)" if np.isfinite(lo) else ""
    return {"cost_per_verdict": float(per[:, 0].sum() / per[:, 1].sum()), "cost_per_verdict_low": lo,
            "cost_per_verdict_high": hi, "cost_per_verdict_method": method, "costed": int(per[:, 1].sum())}
