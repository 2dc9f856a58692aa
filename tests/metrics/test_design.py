"""evallab.metrics._design: the design check, the table's shape, replies paired across orders, per-item sums —
against hand-made tables whose answers are written in the test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evallab import verdicts as V
from evallab.errors import DataError, EvallabError
from evallab.metrics import _design as D


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


def test_item_sums_per_group_in_item_order():
    df = V.coerce(pd.DataFrame({"item_id": ["i2", "i1", "i1", "i1", "i3"], "judge": ["x", "x", "x", "y", "x"],
                                "order": ["ab", "ab", "ba", "ab", "ba"], "verdict": ["1", "2", "1", "1", "2"]}))
    des = D.paired_design(df, ["judge"])
    c = (df["verdict"] == "1").to_numpy(float)
    get = des.item_sums("replies", np.ones(len(df), bool), [c, np.ones(len(df))])
    # group x: i1 (replies 2 and 3: one "1"), i2 (one "1"), i3 (none); group y: i1 (one "1")
    assert np.array_equal(get(0), np.array([[1.0, 2.0], [1.0, 1.0], [0.0, 1.0]]))
    assert np.array_equal(get(1), np.array([[1.0, 1.0]]))
    none = des.item_sums("replies", np.zeros(len(df), bool), [c])
    assert none(0).shape == (0, 1) and none(1).shape == (0, 1)
    assert list(des.count("replies")) == [4, 1] and list(des.count("replies", c)) == [2, 1]


def test_not_computable_and_join_notes():
    assert D.not_computable("no gold labels") == "not computable: no gold labels"
    assert D.join_notes("a", "", "b") == "a; b"


# ------------------------------------------------------------------------------------------ the paired design
def _sampled_table(orders=("ab", "ba"), seed=0):
    """3 judges' worth of replies: 40 items × 3 samples in ``orders``, ties and unparsed replies, gold missing on
    some items, one item asked in order ab only (every order asked in the one-order case)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(40):
        gold = None if i % 7 == 0 else str(rng.integers(1, 3))
        for j in ("J1", "J2"):
            for s in range(3):
                for o in orders:
                    if i == 5 and o == "ba":
                        continue  # asked in one order only
                    v = rng.choice(["1", "2", "tie", None], p=[0.45, 0.35, 0.1, 0.1])
                    rows.append(dict(item_id=f"it{i}", judge=j, order=o, sample=s, verdict=v, gold=gold))
    return V.coerce(pd.DataFrame(rows))


def _plain_pandas(df):
    """The figures of the paired design recomputed with pandas alone: per judge, per-order accuracy, pairs asked
    in both orders, both parsed, consistent, first-slot picks, unparsed replies."""
    out = {}
    for j, g in df.groupby("judge"):
        r = {}
        for o in ("ab", "ba"):
            d = g[(g["order"] == o) & g["gold"].notna() & g["verdict"].notna()]
            r[f"acc_{o}"] = (d["verdict"] == d["gold"]).mean() if len(d) else np.nan
        ab = g[g["order"] == "ab"].set_index(["item_id", "sample"])["verdict"]
        ba = g[g["order"] == "ba"].set_index(["item_id", "sample"])["verdict"]
        both = pd.concat({"ab": ab, "ba": ba}, axis=1, join="inner")
        parsed = both.dropna()
        r["pairs"] = len(both)
        r["both_parsed"] = len(parsed)
        r["consistent"] = int((parsed["ab"] == parsed["ba"]).sum())
        dec = g[g["verdict"].isin(["1", "2"])]
        r["decisive"] = len(dec)
        r["first_slot"] = int(((dec["order"] == "ab") & (dec["verdict"] == "1")).sum()
                              + ((dec["order"] == "ba") & (dec["verdict"] == "2")).sum())
        r["unparsed"] = int(g["verdict"].isna().sum())
        withgold = parsed.join(g.groupby(["item_id", "sample"])["gold"].first()).dropna()
        r["pairs_with_gold"] = len(withgold)
        out[j] = r
    return out


def test_item_key_is_one_number_per_item_in_text_order():
    df = pd.DataFrame({"dataset": ["b", "a", "a", "a", "b"], "item_id": ["10", "9", "10", "9", "10"]})
    key = D.item_key(df)
    # text order of (dataset, item_id): (a, 10) < (a, 9) < (b, 10)
    assert list(key) == [2, 1, 0, 1, 2]
    assert list(D.item_key(df.set_index(["dataset", "item_id"]).index)) == list(key)
    assert list(D.item_key(pd.DataFrame({"item_id": [3, 20, 3]}))) == [1, 0, 1]  # "20" < "3" as text


def test_paired_design_pairs_by_key_whatever_the_row_order():
    df = _sampled_table()
    des = D.paired_design(df, ["judge"])
    shuffled = D.paired_design(df.sample(frac=1, random_state=3), ["judge"])
    for k in des.pairs:
        assert np.array_equal(des.pairs[k], shuffled.pairs[k]), k
    # one pair per (judge, item, sample) asked in some order; both orders asked on all but item 5
    assert len(des.pairs["group"]) == 2 * 40 * 3
    asked = des.pairs["has_ab"] & des.pairs["has_ba"]
    assert int(asked.sum()) == 2 * 39 * 3
    # the reply of each order is the one the table holds for that key
    p = des.order_pairs()
    ab = df[df["order"] == "ab"].set_index(["judge", "item_id", "sample"])["verdict"]
    got = p.set_index(["judge", "item_id", "sample"])["verdict_ab"]
    pd.testing.assert_series_equal(got.sort_index(), ab.reindex(got.index).sort_index(), check_names=False)
    assert des.by == ("judge",) and list(des.groups["judge"]) == ["J1", "J2"]


@pytest.mark.parametrize("orders", [("ab", "ba"), ("ab",)])
def test_prepared_design_gives_the_figures_of_the_table(orders):
    from evallab.metrics import _agreement as A
    from evallab.metrics import _position as P

    df = _sampled_table(orders)
    des = D.paired_design(df, ["judge"])
    kw = dict(n_resamples=200, seed=1)
    # the same frames whether each estimator builds its own design or one is prepared and shared
    for f in (A.pairwise_statistics, P.position_bias, P.position_consistency, P.balanced_position_accuracy):
        pd.testing.assert_frame_equal(f(des, **kw), f(df, ["judge"], **kw))
    stats = A.pairwise_statistics(des, **kw).set_index("judge")
    bias = P.position_bias(des, **kw).set_index("judge")
    bpc = P.balanced_position_accuracy(des, **kw).set_index("judge")
    for j, r in _plain_pandas(df).items():
        assert stats.loc[j, "acc_ab"] == pytest.approx(r["acc_ab"])
        assert stats.loc[j, "acc_ba"] == pytest.approx(r["acc_ba"], nan_ok=True)
        assert (bias.loc[j, "pairs"], bias.loc[j, "both_parsed"], bias.loc[j, "consistent"]) == (
            r["pairs"], r["both_parsed"], r["consistent"])
        assert (bias.loc[j, "decisive"], bias.loc[j, "first_slot"], bias.loc[j, "unparsed"]) == (
            r["decisive"], r["first_slot"], r["unparsed"])
        assert bpc.loc[j, "pairs_with_gold"] == r["pairs_with_gold"]
        if orders == ("ab",):
            assert np.isnan(bias.loc[j, "position_consistency"]) and "needs both" in bias.loc[j, "note"]
            assert np.isnan(bias.loc[j, "first_slot_preference"]) and np.isnan(stats.loc[j, "acc"])
        else:
            assert bias.loc[j, "position_consistency"] == pytest.approx(r["consistent"] / r["both_parsed"])
            assert bias.loc[j, "first_slot_preference"] == pytest.approx(r["first_slot"] / r["decisive"])


def test_prepared_design_interval_is_scipys_item_bootstrap():
    from scipy import stats as sps

    from evallab.metrics import _agreement as A

    df = _sampled_table()
    got = A.pairwise_statistics(D.paired_design(df, ["judge"]), n_resamples=300, seed=4).set_index("judge")
    for j, g in df[(df["order"] == "ab") & df["gold"].notna()].groupby("judge"):
        # per item (sorted as text): correct and parsed replies of order ab over its samples
        per = g.assign(c=(g["verdict"] == g["gold"]).fillna(False).astype(float),
                       n=g["verdict"].notna().astype(float)).groupby("item_id")[["c", "n"]].sum()
        per = per[per["n"] > 0]
        ref = sps.bootstrap((per["c"].to_numpy(), per["n"].to_numpy()), lambda x, y, axis: x.sum(axis) / y.sum(axis),
                            paired=True, vectorized=True, n_resamples=300, method="percentile",
                            random_state=np.random.default_rng(4)).confidence_interval
        assert (got.loc[j, "acc_ab_low"], got.loc[j, "acc_ab_high"]) == (ref.low, ref.high)


def test_prepared_design_refuses_another_grouping_and_checks_once():
    from evallab.metrics import _position as P

    df = _sampled_table()
    des = D.paired_design(df, ["judge"])
    assert D.paired_design(des) is des and D.paired_design(des, ["judge"]) is des
    with pytest.raises(EvallabError, match="prepared with by"):
        P.position_bias(des, ["judge", "strategy"])
    two = pd.concat([df.assign(strategy="S1"), df.assign(strategy="S2")], ignore_index=True)
    with pytest.raises(D.DesignError, match=r"\['strategy'\] vary"):
        D.paired_design(two, ["judge"])
    gold_clash = df.copy()
    gold_clash.loc[(gold_clash["order"] == "ba") & (gold_clash["item_id"] == "it1"), "gold"] = "tie"
    with pytest.raises(D.DesignError, match="one gold label per item"):
        D.paired_design(gold_clash, ["judge"])


# ------------------------------------------------------------------------------------- notes (issue 26, defect 8)
def test_join_notes_says_each_reason_once_after_one_prefix():
    a, b = D.not_computable("no gold labels"), D.not_computable("no pair")
    joined = D.join_notes(a, "baseline", a, "", D.join_notes(b, a))
    assert joined == "baseline; not computable: no gold labels; no pair"
    assert joined.count("not computable") == 1
    assert D.note_reasons(joined, a, None) == ["no gold labels", "no pair"]
    assert D.join_notes("a remark", "another") == "a remark; another" and D.join_notes("", None) == ""


def test_a_pointwise_group_is_told_apart_from_one_without_recorded_orders():
    pointwise = V.coerce(pd.DataFrame({"item_id": ["q1", "q2"], "judge": "J", "verdict": ["pass", "fail"],
                                       "gold": ["pass", "pass"]}))
    unrecorded = _pairs([("a", "1", "1", "-")]).assign(order="")
    assert D.paired_design(pointwise, ["judge"]).no_pairs_reason(0) == D.POINTWISE_REASON
    assert "order" not in D.POINTWISE_REASON
    assert D.paired_design(unrecorded, ["judge"]).no_pairs_reason(0) == \
        "needs both presentation orders (the table has an unrecorded order)"


def test_pairwise_estimators_on_a_pointwise_table_name_no_order_and_say_it_once():
    from evallab.metrics import _agreement as A
    from evallab.metrics import _position as P

    d = V.coerce(pd.DataFrame({"item_id": [f"q{i}" for i in range(6)] * 2, "judge": ["A"] * 6 + ["B"] * 6,
                               "verdict": ["pass", "fail"] * 6, "gold": ["pass"] * 12}))
    for res in (A.pairwise_statistics(d, ["judge"], n_resamples=0), P.position_bias(d, ["judge"], n_resamples=0),
                P.position_consistency(d, ["judge"], n_resamples=0),
                P.balanced_position_accuracy(d, ["judge"], n_resamples=0), P.first_slot_lean(d, ["judge"])):
        for note in res["note"]:
            assert note == f"not computable: {D.POINTWISE_REASON}", note  # one reason, once, no "order"
    # the pointwise table's shape in words: one sample per item, no order; 1 unparsed reply, singular
    text = D.describe(d.assign(verdict=d["verdict"].where(d.index != 0)))["text"]
    assert "one sample per item;" in text and "order" not in text and "1 unparsed reply (" in text


def test_describe_says_what_the_judge_client_sent_otherwise_than_asked():
    # issue 27: a study that asked for temperature 0 and got the model's default says so in its report's shape line
    import pandas as pd

    from evallab import verdicts as V
    from evallab.metrics import describe

    note = "temperature 0.0 not sent (model default)"
    df = V.coerce(pd.DataFrame({"item_id": [f"q{i}" for i in range(5)], "judge": "o3",
                                "verdict": ["pass", "fail", "pass", "pass", "fail"],
                                "adapted": [note, note, note, None, ""]}))
    text = describe(df)["text"]
    assert text.endswith(f"WARNING: 3 of 5 replies were sent otherwise than the study asked (the endpoint refused a "
                         f"parameter): {note} (3).")
    assert "WARNING" not in describe(df.drop(columns="adapted"))["text"]


def test_describe_names_a_judge_asked_in_one_order_beside_judges_asked_in_both():
    """The new-user trial of stop 37: "60 items in both orders" hid that one judge was asked in order ab only."""
    from evallab import describe, verdicts

    rows = [dict(item_id=i, judge="A", order=o, verdict="1") for i in ("q1", "q2") for o in ("ab", "ba")]
    rows += [dict(item_id=i, judge="B", order="ab", verdict="2") for i in ("q1", "q2")]
    text = describe(verdicts.coerce(pd.DataFrame(rows)))["text"]
    assert "2 items in both orders; asked in one order only: B (ab) (consistency and Acc. need both);" in text
    both = verdicts.coerce(pd.DataFrame(rows[:4]))
    assert "one order only" not in describe(both)["text"]


def test_describe_a_score_table_in_its_own_terms():
    """A score table (numeric score, no verdict): "N scores from J raters (H human) on I items" with its scale and
    samples — no pairwise / order / unparsed wording. Counts by hand: 60 items, alice once, judgeA and judgeB three
    samples each = 60 + 2 × 60 × 3 = 420 scores, 3 raters, 1 human."""
    rows = [{"item_id": f"i{i}", "judge": j, "role": "human" if j == "alice" else "judge", "sample": s,
             "score": float(1 + (i + s) % 10), "verdict": None, "scale_min": 1, "scale_max": 10, "scale_step": 1,
             "scale_level": "ordinal"}
            for i in range(60) for j, k in (("alice", 1), ("judgeA", 3), ("judgeB", 3)) for s in range(k)]
    df = V.coerce(pd.DataFrame(rows))
    assert V.is_score_table(df) and len(df) == 60 + 2 * 60 * 3
    d = D.describe(df)
    assert d["text"] == ("420 scores from 3 raters (1 human) on 60 items; a 1–10 scale, step 1, ordinal; up to 3 "
                         "samples per item and rater.")
    for word in ("pairwise", "order", "unparsed", "replies"):
        assert word not in d["text"]
    assert d["kind"] == "scores" and d["scores"] == 420 and d["raters"] == ["alice", "judgeA", "judgeB"]
    assert d["humans"] == ["alice"] and d["samples"] == 3 and d["items"] == 60
    # two rows without a score are counted, and a table without role says no rater is marked human
    two = pd.concat([df, df.iloc[:2].assign(score=np.nan)], ignore_index=True).drop(columns="role")
    assert D.describe(two)["text"] == ("420 scores from 3 raters (no role column: no rater marked human) on 60 "
                                       "items; a 1–10 scale, step 1, ordinal; up to 3 samples per item and rater; "
                                       "2 rows without a score (left out).")
