"""Juries (issue 29, item 4): each rule and each stated rule for unparsed members against hand counts, learnt weights
against the formula by hand, and the jury beside its members (accuracy, position consistency, cost) recounted."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from evallab import verdicts
from evallab.errors import DesignError, EvallabError
from evallab.metrics import jury_comparison, jury_verdicts
from evallab.metrics._jury import learn_jury_weights, split_items

M = ["A", "B", "C"]


def _table(votes: dict[str, list], gold=None, cost=None, orders=None) -> pd.DataFrame:
    """votes: member → one verdict per request (None = unparsed); request k is item q<k> (order ab)."""
    rows = []
    for j, vs in votes.items():
        for k, v in enumerate(vs):
            rows.append({"item_id": f"q{k}" if orders is None else orders[k][0], "judge": j, "verdict": v,
                         "order": "ab" if orders is None else orders[k][1],
                         "gold": None if gold is None else gold[k], "cost_usd": None if cost is None else cost[j]})
    return verdicts.coerce(pd.DataFrame(rows))


#: five requests: unanimous 1; 2-1 for 2; split 1 / 2 / tie; 1, 1, unparsed; 1, unparsed, unparsed
VOTES = {"A": ["1", "2", "1", "1", "1"], "B": ["1", "2", "2", "1", None], "C": ["1", "1", "tie", None, None]}


def _v(df, **kw):
    out = jury_verdicts(df, M, **kw).set_index("item_id")
    return [None if pd.isna(v) else v for v in out.loc[[f"q{k}" for k in range(5)], "verdict"]]


@pytest.mark.parametrize(("rule", "unparsed", "expected"), [
    ("majority", "abstain", ["1", "2", None, "1", "1"]),     # q2 split; q4: the one parsed vote
    ("majority", "against", ["1", "2", None, "1", None]),    # q4: 1 vote vs a bloc of 2
    ("majority", "na", ["1", "2", None, None, None]),
    ("strict", "abstain", ["1", "2", None, "1", "1"]),       # q3: 2 of 2; q4: 1 of 1
    ("strict", "against", ["1", "2", None, "1", None]),      # q3: 2 of 3 > 1.5; q4: 1 of 3
    ("unanimous", "abstain", ["1", None, None, "1", "1"]),
    ("unanimous", "against", ["1", None, None, None, None]),
    ("unanimous", "na", ["1", None, None, None, None]),
])
def test_rules_by_hand(rule, unparsed, expected):
    assert _v(_table(VOTES), rule=rule, unparsed=unparsed) == expected


def test_reasons_and_counts():
    out = jury_verdicts(_table(VOTES), M).set_index("item_id")
    assert out.at["q2", "error"] == "split vote: 1 and 2 and tie tied at 1"
    assert out.at["q1", "votes"] == "1:1 2:2"
    assert list(out["members_parsed"]) == [3, 3, 3, 2, 1] and (out["members"] == 3).all()
    assert (out["judge"] == "jury(majority, unparsed: abstain)").all()
    na = jury_verdicts(_table(VOTES), M, unparsed="na").set_index("item_id")
    assert na.at["q4", "error"] == "2 of 3 members unparsed (unparsed: na)"


def test_a_missing_reply_counts_as_unparsed():
    df = _table(VOTES)
    df = df[~((df["judge"] == "C") & (df["item_id"] == "q0"))]  # C never answered q0
    out = jury_verdicts(df, M, rule="unanimous", unparsed="against").set_index("item_id")
    assert pd.isna(out.at["q0", "verdict"]) and out.at["q0", "members_missing"] == 1
    assert jury_verdicts(df, M, rule="unanimous").set_index("item_id").at["q0", "verdict"] == "1"


def test_weighted_rule_and_weights_by_hand():
    gold = ["1", "2", "1", "1", "2", "2"]
    votes = {"A": ["1", "2", "1", "1", "2", "2"],      # 6 of 6
             "B": ["1", "1", "1", "2", "2", "1"],      # 3 of 6
             "C": ["2", "1", "2", "2", "1", "1"]}      # 0 of 6
    df = _table(votes, gold=gold)
    w = learn_jury_weights(df, M)
    k = 2  # two gold categories
    for m, correct in (("A", 6), ("B", 3), ("C", 0)):
        p = (correct + 0.5) / (6 + 1)
        assert w[m] == pytest.approx(max(0.0, math.log((k - 1) * p / (1 - p))))
    assert w["C"] == 0 and w["B"] == 0 and w["A"] > 0
    # with these weights A decides alone
    out = jury_verdicts(df, M, rule="weighted", weights=w)
    assert list(out["verdict"]) == votes["A"]
    with pytest.raises(EvallabError, match="needs weights="):
        jury_verdicts(df, M, rule="weighted")
    with pytest.raises(EvallabError, match="apply to rule='weighted' only"):
        jury_verdicts(df, M, weights=w)


def test_refusals():
    df = _table(VOTES)
    with pytest.raises(DesignError, match="at least two members"):
        jury_verdicts(df, ["A"])
    with pytest.raises(DesignError, match=r"member\(s\) \['Z'\] not in the table"):
        jury_verdicts(df, ["A", "Z"])
    with pytest.raises(DesignError, match="several replies"):
        jury_verdicts(pd.concat([df, df]), M)
    with pytest.raises(EvallabError, match="rule='best'"):
        jury_verdicts(df, M, rule="best")
    with pytest.raises(EvallabError, match="unparsed='drop'"):
        jury_verdicts(df, M, unparsed="drop")


def test_split_items_is_a_partition():
    df = _table({"A": ["1"] * 10, "B": ["1"] * 10})
    train, test = split_items(df, train_fraction=0.3, seed=1)
    assert len(train) == 3 and len(test) == 7 and not set(train) & set(test)
    assert sorted(train + test) == sorted(df["item_id"].unique())


def test_comparison_beside_members_by_hand():
    # four items in both orders; gold 1 everywhere. A always right; B right in ab only (says 2 in ba);
    # C unparsed in ba, right in ab.
    orders = [(f"i{k}", o) for k in range(4) for o in ("ab", "ba")]
    votes = {"A": ["1"] * 8, "B": ["1", "2"] * 4, "C": ["1", None] * 4}
    df = _table(votes, gold=["1"] * 8, cost={"A": 0.01, "B": 0.002, "C": 0.001}, orders=orders)
    r = jury_comparison(df, M, rules=("majority", "unanimous"), n_resamples=100).set_index("judge")
    # members by hand
    assert r.at["A", "accuracy"] == 1 and r.at["B", "accuracy"] == 0.5 and r.at["C", "accuracy"] == 1
    assert r.at["A", "position_consistency"] == 1 and r.at["B", "position_consistency"] == 0
    assert r.at["C", "both_parsed"] == 0 and r.at["C", "parse_rate"] == 0.5
    # majority (abstain): ab → 1,1,1 → 1; ba → 1, 2 → split → NA
    maj = r.loc["jury(majority, unparsed: abstain)"]
    assert (maj["parsed"], maj["requests"], maj["accuracy"]) == (4, 8, 1.0)
    una = r.loc["jury(unanimous, unparsed: abstain)"]
    assert una["parsed"] == 4 and una["kind"] == "jury" and una["rule"] == "unanimous"
    # cost: members' sum per request
    assert maj["cost_per_verdict"] == pytest.approx(0.013) and r.at["B", "cost_per_verdict"] == pytest.approx(0.002)
    assert maj["costed"] == 8
    assert "train_items" not in r.attrs


def test_comparison_with_weights_uses_the_held_out_items():
    items = [f"i{k}" for k in range(20)]
    orders = [(i, "ab") for i in items]
    votes = {"A": ["1"] * 20, "B": ["2"] * 20, "C": ["1"] * 10 + ["2"] * 10}
    df = _table(votes, gold=["1"] * 20, orders=orders)
    r = jury_comparison(df, M, rules=("majority", "weighted"), n_resamples=0, split_seed=3)
    train, test = r.attrs["train_items"], r.attrs["test_items"]
    assert len(train) == len(test) == 10 and not set(train) & set(test)
    g = r.set_index("judge")
    assert (g.loc[M, "requests"] == 10).all()  # members measured on the test items only
    assert g.at["B", "weight"] == 0 and g.at["A", "weight"] > 0
    assert g.at["jury(weighted, unparsed: abstain)", "accuracy"] == 1.0
    c_right = sum(votes["C"][items.index(i)] == "1" for i in test)
    assert g.at["C", "accuracy"] == pytest.approx(c_right / 10)
