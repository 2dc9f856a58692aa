"""evallab.metrics.design: the design check, the table's shape, replies paired across orders, per-item sums —
against hand-made tables whose answers are written in the test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evallab import verdicts as V
from evallab.errors import DataError
from evallab.metrics import design as D


def _pairs(rows, **extra):
    """rows: (item, gold, verdict ab, verdict ba); either verdict may be "-" = order not asked."""
    out = []
    for item, gold, ab, ba in rows:
        for order, v in (("ab", ab), ("ba", ba)):
            if v != "-":
                out.append(dict(item_id=item, judge="J", order=order, verdict=v, gold=gold, **extra))
    return V.coerce(pd.DataFrame(out))


def test_check_design_names_the_column_that_varies():
    df = pd.concat([_pairs([("a", "1", "1", "2")], strategy="Vanilla"),
                    _pairs([("a", "1", "1", "1")], strategy="CoT")], ignore_index=True)
    with pytest.raises(D.DesignError, match=r"\['strategy'\] vary") as e:
        D.check_design(df, ["judge"])
    assert e.value.column == "strategy" and isinstance(e.value, DataError)
    D.check_design(df, ["judge", "strategy"])  # one reply per unit: no error


def test_check_design_duplicates_without_a_design_column_and_missing_by():
    df = _pairs([("a", "1", "1", "2")])
    dup = pd.concat([df, df], ignore_index=True)
    with pytest.raises(D.DesignError, match="add a sample index") as e:
        D.check_design(dup, ["judge"])
    assert e.value.column == "sample"
    with pytest.raises(D.DesignError, match="missing column") as e:
        D.check_design(df, ["rubric"])
    assert e.value.column == "rubric"


def test_describe_one_order_no_gold_samples():
    df = _pairs([("a", None, "1", "-"), ("b", None, None, "-")])
    d = D.describe(df)
    assert (d["replies"], d["items"], d["kind"], d["orders"], d["both_orders"], d["gold"]) == (
        2, 2, "pairwise", ["ab"], 0, 0)
    assert d["unparsed"] == 1 and d["samples"] == 1
    assert "consistency needs both" in d["text"] and "no gold labels" in d["text"]
    empty_order = V.coerce(pd.DataFrame({"item_id": ["a", "b"], "judge": "J", "verdict": ["1", "2"],
                                         "gold": ["1", "1"]}))
    d = D.describe(empty_order)
    assert d["orders"] == [""] and "not recorded" in d["text"] and "gold on every item" in d["text"]


def test_describe_both_orders_partial_gold_and_design():
    df = pd.concat([_pairs([("a", "1", "1", "2"), ("b", None, "2", "2")], strategy="S1"),
                    _pairs([("a", "1", "1", "1"), ("b", None, "2", "2")], strategy="S2")], ignore_index=True)
    d = D.describe(df)
    assert d["both_orders"] == 2 and d["gold_items"] == 1 and d["items"] == 2
    assert d["design"] == {"strategy": ["S1", "S2"]} and "gold on 1 of 2 items" in d["text"]
    pointwise = V.coerce(pd.DataFrame({"item_id": ["x", "x"], "judge": "J", "sample": [0, 1],
                                       "verdict": ["pass", "fail"]}))
    d = D.describe(pointwise)
    assert d["kind"] == "pointwise" and d["samples"] == 2


def test_order_pairs_side_by_side_and_row_order_free():
    df = _pairs([("a", "1", "1", "2"), ("b", "2", "-", "2"), ("c", None, "2", None)])
    p = D.order_pairs(df, ["judge"])
    assert list(p["item_id"]) == ["a", "b", "c"]
    assert list(p["verdict_ab"].fillna("NA")) == ["1", "NA", "2"]
    assert list(p["verdict_ba"].fillna("NA")) == ["2", "2", "NA"]
    assert list(p["has_ab"]) == [True, False, True] and list(p["has_ba"]) == [True, True, True]
    assert list(p["gold"].fillna("NA")) == ["1", "2", "NA"]
    shuffled = D.order_pairs(df.sample(frac=1, random_state=1), ["judge"])
    pd.testing.assert_frame_equal(p, shuffled)


def test_order_pairs_gold_clash():
    df = _pairs([("a", "1", "1", "2")])
    df.loc[df["order"] == "ba", "gold"] = "2"
    with pytest.raises(D.DesignError, match="expected one gold label per item"):
        D.order_pairs(df, ["judge"])


def test_item_sums_per_group():
    d = pd.DataFrame({"g": ["x", "x", "x", "y"], "dataset": "", "item_id": ["i1", "i1", "i2", "i1"],
                      "c": [1.0, 0.0, 1.0, 1.0], "n": [1.0, 1.0, 1.0, 1.0]})
    get = D.item_sums(d, ["g"], ["c", "n"])
    assert np.array_equal(get({"g": "x"}), np.array([[1.0, 2.0], [1.0, 1.0]]))
    assert np.array_equal(get({"g": "y"}), np.array([[1.0, 1.0]]))
    assert get({"g": "z"}).shape == (0, 2)
    assert np.array_equal(D.item_sums(d, [], ["c"])({}), np.array([[2.0], [1.0]]))  # i1: 1+0+1, i2: 1
    assert D.item_sums(d.iloc[:0], ["g"], ["c"])({"g": "x"}).shape == (0, 1)


def test_not_computable_and_join_notes():
    assert D.not_computable("no gold labels") == "not computable: no gold labels"
    assert D.join_notes("a", "", "b") == "a; b"
