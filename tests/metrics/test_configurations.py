"""compare_configurations (issue 29, item 3): McNemar and Holm against statsmodels on hand-built tables, the
figures against evallab's own estimators computed independently, and the recommendation's wording — never a winner
when the intervals overlap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from evallab import verdicts
from evallab.errors import DataError
from evallab.metrics import accuracy, compare_configurations, position_consistency, repetition_stability


def _pointwise(correct: dict[str, list[bool]], cost: dict[str, float] | None = None) -> pd.DataFrame:
    """One pointwise reply per item and strategy; gold alternates pass/fail; ``correct[s][i]``: right on item i."""
    rows = []
    for s, right in correct.items():
        for i, ok in enumerate(right):
            gold = "pass" if i % 2 else "fail"
            other = "fail" if gold == "pass" else "pass"
            rows.append({"item_id": f"q{i:03d}", "judge": "J", "strategy": s, "gold": gold,
                         "verdict": gold if ok else other, "cost_usd": (cost or {}).get(s)})
    return verdicts.coerce(pd.DataFrame(rows))


def _table(both: int, a_only: int, b_only: int, neither: int) -> tuple[list[bool], list[bool]]:
    a = [True] * both + [True] * a_only + [False] * b_only + [False] * neither
    b = [True] * both + [False] * a_only + [True] * b_only + [False] * neither
    return a, b


def test_mcnemar_on_items_equals_statsmodels():
    a, b = _table(10, 7, 1, 2)
    res = compare_configurations(_pointwise({"A": a, "B": b}), by=["strategy"], n_resamples=200)
    p = res.attrs["pairs"].iloc[0]
    assert (p["first"], p["second"], p["first_only"], p["second_only"]) == ("A", "B", 7, 1)
    assert p["mcnemar_p"] == pytest.approx(mcnemar([[10, 7], [1, 2]], exact=True).pvalue) and p["mcnemar_exact"]
    assert p["difference"] == pytest.approx((17 - 11) / 20)
    # 30 discordant items: the chi-square test with continuity correction
    a, b = _table(5, 22, 8, 5)
    p = compare_configurations(_pointwise({"A": a, "B": b}), by=["strategy"], n_resamples=200).attrs["pairs"].iloc[0]
    assert p["mcnemar_p"] == pytest.approx(mcnemar([[5, 22], [8, 5]], exact=False, correction=True).pvalue)


def test_holm_across_pairs_equals_multipletests():
    # A, B, C on the same 30 items; the discordant counts of each pair by hand
    a = [True] * 25 + [False] * 5
    b = [True] * 15 + [False] * 10 + [True] * 2 + [False] * 3
    c = [True] * 10 + [False] * 20
    res = compare_configurations(_pointwise({"A": a, "B": b, "C": c}), by=["strategy"], n_resamples=200)
    pairs = res.attrs["pairs"]

    def disc(x, y):
        return sum(i and not j for i, j in zip(x, y, strict=True)), sum(j and not i for i, j in zip(x, y, strict=True))

    raw = []
    for (x, y), (nx, ny) in zip([(a, b), (a, c), (b, c)], [("A", "B"), ("A", "C"), ("B", "C")], strict=True):
        n10, n01 = disc(x, y)
        raw.append(mcnemar([[0, n10], [n01, 0]], exact=n10 + n01 < 25).pvalue)
        row = pairs[(pairs["first"] == nx) & (pairs["second"] == ny)].iloc[0]
        assert (row["first_only"], row["second_only"]) == (n10, n01)
    assert pairs["mcnemar_p"].to_numpy() == pytest.approx(raw)
    assert pairs["p_holm"].to_numpy() == pytest.approx(multipletests(raw, method="holm")[1])


def test_recommendation_never_names_a_winner_when_intervals_overlap():
    # 9/12 against 8/12 right: overlapping Wilson intervals
    a, b = _table(7, 2, 1, 2)
    res = compare_configurations(_pointwise({"A": a, "B": b}, cost={"A": 0.02, "B": 0.001}), by=["strategy"],
                                 n_resamples=200)
    text = res.attrs["recommendation"]
    assert res.attrs["best"] == "A" and res.attrs["indistinguishable"] == ["B"]
    assert "No configuration is distinguishable from A" in text and "B is not distinguishable" in text
    assert "Recommended" not in text and "pick on cost" in text and "is B ($0.001000)" in text
    # without any cost: tokens cannot decide either, and it says so
    assert "cost cannot decide" in compare_configurations(_pointwise({"A": a, "B": b}), by=["strategy"],
                                                          n_resamples=200).attrs["recommendation"]


def test_recommendation_names_the_winner_only_when_separated():
    # 190/200 against 100/200 right: Wilson intervals far apart, the paired interval excludes 0
    a, b = _table(100, 90, 0, 10)
    res = compare_configurations(_pointwise({"A": a, "B": b}), by=["strategy"], n_resamples=500)
    r = res.set_index("configuration")
    assert r.at["A", "accuracy_low"] > r.at["B", "accuracy_high"]
    assert res.attrs["recommendation"].startswith("Recommended: A.") and res.attrs["indistinguishable"] == []
    # a third configuration as good as A: no winner any more
    res = compare_configurations(_pointwise({"A": a, "B": b, "A2": a[:-1] + [True]}), by=["strategy"],
                                 n_resamples=500)
    assert "not distinguishable" in res.attrs["recommendation"] and "Recommended" not in res.attrs["recommendation"]


def _pairwise_table(seed: int = 3, n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for s, p_right in (("P1", 0.85), ("P2", 0.6)):
        for i in range(n):
            gold = "1" if i % 2 else "2"
            for order in ("ab", "ba"):
                for k in range(3):
                    u = rng.random()
                    v = None if u < 0.05 else gold if u < p_right else ("2" if gold == "1" else "1")
                    rows.append({"item_id": f"q{i}", "judge": "J", "strategy": s, "order": order, "sample": k,
                                 "gold": gold, "verdict": v})
    return verdicts.coerce(pd.DataFrame(rows))


def test_figures_equal_the_library_estimators():
    df = _pairwise_table()
    res = compare_configurations(df, by=["judge", "strategy"], n_resamples=300).set_index("strategy")
    acc = accuracy(df, ["judge", "strategy"], n_resamples=300).set_index("strategy")
    stab = repetition_stability(df, ["judge", "strategy"], n_resamples=300).set_index("strategy")
    for s in ("P1", "P2"):
        g = df[df["strategy"] == s]
        assert res.at[s, "accuracy"] == pytest.approx(acc.at[s, "accuracy"])
        assert res.at[s, "stability"] == pytest.approx(stab.at[s, "repetition_stability"])
        # unparsed replies counted in the parse rate, never scored as wrong
        parsed = g["verdict"].notna()
        assert res.at[s, "parse_rate"] == pytest.approx(parsed.mean())
        assert res.at[s, "accuracy"] == pytest.approx((g["verdict"] == g["gold"])[parsed].mean())
        # position consistency per sample by hand: (item, sample) pairs with both orders parsed
        w = g[parsed].pivot_table(index=["item_id", "sample"], columns="order", values="verdict", aggfunc="first")
        w = w.dropna()
        assert res.at[s, "position_consistency"] == pytest.approx((w["ab"] == w["ba"]).mean())
        pc = position_consistency(g, ["judge", "strategy"], n_resamples=0)
        assert res.at[s, "position_consistency"] == pytest.approx(pc["position_consistency"].iloc[0])
        # first-slot preference by hand: decisive replies picking the output shown first
        d = g[g["verdict"].isin(["1", "2"])]
        first = ((d["order"] == "ab") & (d["verdict"] == "1")) | ((d["order"] == "ba") & (d["verdict"] == "2"))
        assert res.at[s, "first_slot_preference"] == pytest.approx(first.mean())
    for c in ("accuracy", "position_consistency", "stability"):
        assert (res[f"{c}_low"] <= res[c]).all() and (res[c] <= res[f"{c}_high"]).all()


def test_bad_criterion_is_one_line():
    with pytest.raises(DataError, match="criterion 'speed'; expected one of"):
        compare_configurations(_pairwise_table(n=4), criterion="speed")


def test_mcnemar_on_pairwise_items_counts_right_in_both_orders():
    # A right in both orders on 12 items; B (always the first shown) right only when output 1 is better and shown
    # first: an item succeeds under B in neither order pair -> 12 items A only, by hand
    rows = []
    for i in range(12):
        for order in ("ab", "ba"):
            rows.append({"item_id": f"q{i}", "judge": "J", "strategy": "A", "order": order, "gold": "1",
                         "verdict": "1"})
            rows.append({"item_id": f"q{i}", "judge": "J", "strategy": "B", "order": order, "gold": "1",
                         "verdict": "1" if order == "ab" else "2"})
    p = compare_configurations(verdicts.coerce(pd.DataFrame(rows)), by=["strategy"], n_resamples=200
                               ).attrs["pairs"].iloc[0]
    assert (p["first_only"], p["second_only"]) == (12, 0)
    assert p["mcnemar_p"] == pytest.approx(mcnemar([[0, 12], [0, 0]], exact=True).pvalue)
    assert p["difference"] == pytest.approx(1.0 - 0.5)


def _three_pairwise(n: int = 8) -> pd.DataFrame:
    """A and A2 parse everything (both orders, gold, cost); Z parsed nothing although both orders were asked and
    every reply was priced."""
    rows = []
    for i in range(n):
        for order in ("ab", "ba"):
            for s, v in (("A", "1"), ("A2", "1" if i % 2 else "2"), ("Z", None)):
                rows.append({"item_id": f"q{i}", "judge": "J", "strategy": s, "order": order, "gold": "1",
                             "verdict": v, "cost_usd": 0.001,
                             "error": "no verdict found" if v is None else None})
    return verdicts.coerce(pd.DataFrame(rows))


def test_a_configuration_that_parsed_nothing_says_so_first():
    res = compare_configurations(_three_pairwise(), by=["strategy"], n_resamples=100)
    z = res[res["configuration"] == "Z"].iloc[0]
    assert z["note"].startswith("not computable: nothing parsed: 0 of 16 replies parsed")  # 8 items × 2 orders
    assert "presentation orders" not in z["note"] and "cost_usd" not in z["note"]
    a = res[res["configuration"] == "A"].iloc[0]
    assert "nothing parsed" not in a["note"] and a["costed"] == 16
    pairs = res.attrs["pairs"]
    computable = pairs[pairs["mcnemar_p"].notna()]
    assert list(zip(computable["first"], computable["second"], strict=True)) == [("A", "A2")]
    assert set(pairs.loc[pairs["mcnemar_p"].isna(), "note"]) == {"not computable: nothing parsed for Z"}


def test_study_section_counts_only_the_computable_comparisons():
    from evallab.reporting.sections.study import configurations

    sec = configurations(_three_pairwise(), n_resamples=100)
    text = " ".join(x.sentence for x in sec.items if hasattr(x, "sentence"))
    # 3 configurations: 3 pairs, of which only A vs A2 has an item answered by both (hand count)
    assert "Of 1 computable pairwise comparison on" in text
    assert "2 of the 3 could not be computed (2 have nothing parsed for J | Z | none)" in text
    assert "Of 3 pairwise" not in text and "NaN" not in text
