"""Shi et al.'s figures under the authors' counting, the random judge's chance level, and family preference —
against hand counts on small tables and enumeration."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from evallab import verdicts
from evallab.errors import DesignError
from evallab.metrics._shi import (
    authors_position_consistency,
    family_preference,
    random_judge_stability,
    shi_preference_score,
)


def _pairs(rows, **const):
    """rows: (item, verdict ab, verdict ba[, subset]) → a tidy table in both orders."""
    out = []
    for r in rows:
        item, a, b = r[:3]
        for order, v in (("ab", a), ("ba", b)):
            out.append({"item_id": item, "order": order, "verdict": v, "authors_verdict": v,
                        "subset": r[3] if len(r) > 3 else "", **const})
    return verdicts.coerce(pd.DataFrame(out))


def test_authors_counting_by_hand():
    # q1, q2 consistent (2 replies each), q3 inconsistent, q4 one unparsed (its parsed reply counts consistent),
    # q5 both unparsed (nothing), q6 ties both (consistent)
    df = _pairs([("q1", "1", "1"), ("q2", "2", "2"), ("q3", "1", "2"), ("q4", None, "2"), ("q5", None, None),
                 ("q6", "tie", "tie")], judge="J", sample=0)
    r = authors_position_consistency(df).iloc[0]
    assert r["parsed"] == 2 + 2 + 2 + 1 + 0 + 2 == 9
    assert r["consistent"] == 2 + 2 + 0 + 1 + 0 + 2 == 7
    assert r["partner_unparsed"] == 1
    assert r["rate_pct"] == round(700 / 9, 2) == 77.78


def test_authors_counting_refuses_duplicates():
    df = _pairs([("q1", "1", "1")], judge="J", sample=0)
    with pytest.raises(DesignError, match="several replies per"):
        authors_position_consistency(pd.concat([df, df]))


def test_preference_score_by_hand():
    # unit t1 (3 pairs): primacy (1 then 2), primacy (tie then 2: output 2 won when shown first), consistent (1, 1)
    #   → (0 − 2) / 3; unit t2 (2 pairs): recency (2 then 1), unparsed pair (counts in the denominator) → 1 / 2
    df = _pairs([("a", "1", "2", "t1"), ("b", "tie", "2", "t1"), ("c", "1", "1", "t1"), ("d", "2", "1", "t2"),
                 ("e", None, "1", "t2")], judge="J")
    r = shi_preference_score(df, ["judge"], unit=["subset"]).iloc[0]
    assert (r["units"], r["pairs"], r["primacy"], r["recency"]) == (2, 5, 2, 1)
    assert r["preference_score"] == pytest.approx((-2 / 3 + 1 / 2) / 2)


def test_random_judge_chance_by_enumeration():
    for k, c in ((3, 3), (3, 2), (4, 3)):
        shares = [max(Counter(seq).values()) / k for seq in itertools.product(range(c), repeat=k)]
        assert random_judge_stability(k, c) == pytest.approx(np.mean(shares))
    assert random_judge_stability() == pytest.approx(17 / 27)


def _family_table():
    # contestant m: output 2 of q1, q2; output 1 of q3. Family judges F1, F2; others O1, O2.
    rows = []
    verdict = {  # judge → {(item, order): verdict}
        "F1": {("q1", "ab"): "2", ("q1", "ba"): "2", ("q2", "ab"): "tie", ("q2", "ba"): "2",
               ("q3", "ab"): "1", ("q3", "ba"): None},
        "F2": {("q1", "ab"): "1", ("q1", "ba"): "2", ("q2", "ab"): "2", ("q2", "ba"): "2",
               ("q3", "ab"): "2", ("q3", "ba"): "1"},
        "O1": {("q1", "ab"): "1", ("q1", "ba"): "1", ("q2", "ab"): "1", ("q2", "ba"): "tie",
               ("q3", "ab"): "2", ("q3", "ba"): "2"},
        "O2": {("q1", "ab"): "2", ("q1", "ba"): "1", ("q2", "ab"): "1", ("q2", "ba"): "1",
               ("q3", "ab"): "1", ("q3", "ba"): "2"},
    }
    for j, vs in verdict.items():
        for (item, order), v in vs.items():
            m1, m2 = ("x", "m") if item != "q3" else ("m", "y")
            rows.append({"item_id": item, "judge": j, "order": order, "verdict": v, "output_1_model": m1,
                         "output_2_model": m2})
    return verdicts.coerce(pd.DataFrame(rows))


def test_family_preference_by_hand():
    r = family_preference(_family_table(), contestant="m", family_judges=["F1", "F2"], n_resamples=200)
    g = r.set_index("group")
    # F1: q1 1+1, q2 ½+1, q3 1 (the ba reply unparsed) → 4.5 / 5; F2: q1 0+1, q2 1+1, q3 0+1 → 4 / 6
    assert g.loc["F1", "win_rate"] == pytest.approx(4.5 / 5) and g.loc["F1", "replies"] == 5
    assert g.loc["F2", "win_rate"] == pytest.approx(4 / 6)
    # O1: q1 0+0, q2 0+½, q3 0+0 → 0.5 / 6; O2: q1 1+0, q2 0+0, q3 1+0 → 2 / 6
    assert g.loc["O1", "win_rate"] == pytest.approx(0.5 / 6) and g.loc["O2", "win_rate"] == pytest.approx(2 / 6)
    assert g.loc["family judges", "win_rate"] == pytest.approx(8.5 / 11)
    assert g.loc["other judges", "win_rate"] == pytest.approx(2.5 / 12)
    diff = g.loc["family − others"]
    assert diff["difference"] == pytest.approx(8.5 / 11 - 2.5 / 12) and np.isnan(diff["win_rate"])
    assert diff["difference_low"] <= diff["difference"] <= diff["difference_high"]
    assert diff["difference_method"].startswith("paired item bootstrap") and diff["items"] == 3
    assert g.loc["family judges", "family"] and not g.loc["other judges", "family"]


def test_family_preference_refuses():
    df = _family_table()
    with pytest.raises(DesignError, match="no comparison involves 'z'"):
        family_preference(df, contestant="z", family_judges=["F1"])
    with pytest.raises(DesignError, match=r"family judge\(s\) \['F9'\]"):
        family_preference(df, contestant="m", family_judges=["F9"])
    with pytest.raises(DesignError, match="no judge outside the family"):
        family_preference(df, contestant="m", family_judges=["F1", "F2", "O1", "O2"])


def test_shi_repetition_stability_by_hand():
    from evallab.metrics._shi import shi_repetition_stability

    # q1 ab: 1, 1, NA → 2/3; q1 ba: 2, 2, 2 → 1; q2 ab: NA, NA, NA → left out; q2 ba: 1, 2, tie → 1/3
    verdict = ["1", "1", None, "2", "2", "2", None, None, None, "1", "2", "tie"]
    df = verdicts.coerce(pd.DataFrame({"item_id": ["q1"] * 6 + ["q2"] * 6, "judge": "J",
                                       "order": (["ab"] * 3 + ["ba"] * 3) * 2, "sample": [0, 1, 2] * 4,
                                       "verdict": verdict}))
    r = shi_repetition_stability(df).iloc[0]
    assert r["requests"] == 3
    assert r["repetition_stability"] == pytest.approx((2 / 3 + 1 + 1 / 3) / 3)
