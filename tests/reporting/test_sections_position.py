"""evallab.reporting.sections.position (report 02): the numbers its sentences state are recounted here with plain
pandas and statsmodels on the bundled LLMBar data, and hand-made user tables shaped unlike it (one presentation
order, no gold, two strategies, one judge) get a sentence saying what is missing — never a NaN table or a headline
pooled over strategies."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from section_helper import section_text as _text
from statsmodels.stats.proportion import proportion_confint

from evallab import verdicts as V
from evallab.reporting.sections import position as S

B = 100


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def natural():
    return S.load(subsets=["LLMBar/Natural"])


def _wide(d: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, strategy, item): the verdicts of both orders, by hand."""
    return d.pivot_table(index=["judge", "strategy", "item_id"], columns="order", values="verdict",
                         aggfunc="first").reset_index()


def test_by_judge_on_llmbar_natural_states_the_hand_counted_headline(natural, tmp_path):
    sec = S.by_judge(natural, strategies=["Vanilla"], n_resamples=B)
    van = natural[natural["strategy"] == "Vanilla"]
    w = _wide(van).dropna(subset=["ab", "ba"])
    cons = w.assign(same=w["ab"] == w["ba"]).groupby("judge")["same"].agg(["sum", "size"])
    best = (cons["sum"] / cons["size"]).idxmax()
    k, n = int(cons.loc[best, "sum"]), int(cons.loc[best, "size"])
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")  # one pair per item: Wilson
    head = sec.findings[0].sentence
    assert head.startswith(f"{best} is the most position-consistent of the 6 judges: the same verdict in both "
                           f"orders on {100 * k / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] (95% CI, Wilson score, "
                           f"n = {n} pairs)")
    assert best == "GPT-4" and k == 95  # LLMBar Natural: GPT-4 consistent on 95 of 100 pairs
    m = sec.metrics
    assert m["most_consistent_judge"] == best and m["max_position_consistency"] == pytest.approx(k / n)
    assert m["unparsed_replies"] == int(van["verdict"].isna().sum()) and len(m["position_bias"]) == 6
    text = _text(sec, tmp_path)
    assert "nan" not in text.lower() and f"First-slot preference: item bootstrap (percentile, {B} resamples)" in text
    assert "Position consistency: Wilson score" in text
    assert len(sec.tables) == 2 and any(hasattr(x, "savefig") for x in sec.items)


def test_balanced_calibration_equals_the_mean_of_order_accuracies(natural, tmp_path):
    sec = S.balanced_calibration(natural, strategies=["Vanilla"], n_resamples=B)
    van = natural[natural["strategy"] == "Vanilla"]
    w = _wide(van).merge(van.drop_duplicates("item_id")[["item_id", "gold"]], on="item_id").dropna(
        subset=["ab", "ba", "gold"])
    acc = w.assign(a=w["ab"] == w["gold"], b=w["ba"] == w["gold"]).groupby("judge")[["a", "b"]].mean().mean(axis=1)
    best = acc.idxmax()
    assert sec.findings[0].sentence.startswith(f"With balanced position calibration {best} scores highest: "
                                               f"{100 * acc[best]:.1f}% [")
    assert "that same figure: the calibration removes the order" in sec.findings[0].sentence
    assert len(sec.metrics["balanced_position_calibration"]) == 6 and "nan" not in _text(sec, tmp_path).lower()


def _user(n=40, orders=("ab", "ba"), strategies=("mine",), judges=("j1", "j2"), gold=True, seed=3):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        g = "1" if i % 2 else "2"
        for j in judges:
            for s in strategies:
                for o in orders:
                    first = "1" if o == "ab" else "2"
                    v = first if rng.random() < 0.4 else (g if rng.random() < 0.7 else ("2" if g == "1" else "1"))
                    rows.append({"item_id": f"q{i}", "judge": j, "strategy": s, "order": o, "verdict": v,
                                 "gold": g if gold else None})
    return V.coerce(pd.DataFrame(rows))


def test_one_order_table_says_so_once_and_shows_no_table(tmp_path):
    for d in (_user(orders=("",)), _user(orders=("ab",))):
        sec = S.by_judge(d, n_resamples=B)
        said = [x for x in sec.items if isinstance(x, str) and "both orders" in x]
        assert len(said) == 1 and "one presentation order" in said[0]
        assert all(t.csv_name == "first_slot_lean" for t in sec.tables)  # no empty position table
        for other in (S.by_subset(d, n_resamples=B), S.balanced_calibration(d, n_resamples=B)):
            assert other.items == []  # said once, by by_judge
    # an unrecorded order cannot tell slots apart: no lean; a recorded one with gold gets it, in by_judge
    assert "first_slot_lean" not in S.by_judge(_user(orders=("",)), n_resamples=B).metrics
    lean = S.by_judge(_user(orders=("ab",)), n_resamples=B)
    assert len(lean.tables) == 1 and len(lean.findings) == 1 and "not placed by quality" in lean.findings[0].sentence
    assert "nan" not in _text(lean, tmp_path).lower()
    rows = lean.metrics["first_slot_lean"]
    assert len(rows) == 2 and all(r["gold_first"] + r["gold_second"] == 40 for r in rows)


def test_first_slot_lean_section_only_on_one_order_with_gold():
    assert "first_slot_lean" not in S.by_judge(_user(), n_resamples=B).metrics
    no_gold = S.by_judge(_user(orders=("ab",), gold=False), n_resamples=B)
    assert "first_slot_lean" not in no_gold.metrics and not no_gold.tables


def test_pointwise_table_gets_no_note_about_orders():
    d = V.coerce(pd.DataFrame({"item_id": [f"q{i}" for i in range(6)], "judge": "J",
                               "verdict": ["pass", "fail"] * 3, "gold": ["pass"] * 6}))
    sec = S.by_judge(d, n_resamples=B)
    text = " ".join(x for x in sec.items if isinstance(x, str))
    assert "pointwise" in text and "order" not in text.lower()
    assert S.by_subset(d, n_resamples=B).items == [] and S.balanced_calibration(d, n_resamples=B).items == []


def test_one_judge_two_prompts_rows_named_by_strategy():
    d = _user(judges=("gpt-4",), strategies=("P1", "P2"))
    sec = S.by_judge(d, n_resamples=B)
    assert "judge × strategy rows" in sec.findings[0].sentence and "judges show" not in sec.findings[0].sentence
    assert sec.metrics["most_consistent_judge"] in ("gpt-4 · P1", "gpt-4 · P2")
    # no subset: no per-subset section, and never "on :"
    assert S.by_subset(d, n_resamples=B).items == []


def test_first_slot_count_needs_an_interval_excluding_half():
    sec = S.by_judge(_user(n=40), n_resamples=B)
    bias = [r for r in sec.metrics["position_bias"]]
    above = sum(r["first_slot_preference_low"] > 0.5 for r in bias)
    assert sec.metrics["rows_favouring_first_slot"] == above


def test_no_gold_table_shows_position_figures_and_says_calibration_needs_gold(tmp_path):
    d = _user(gold=False)
    bias = S.by_judge(d, n_resamples=B)
    assert bias.findings and "nan" not in _text(bias, tmp_path).lower()
    bpc = S.balanced_calibration(d, n_resamples=B)
    (said,) = [x for x in bpc.items if isinstance(x, str) and not x.startswith("#")]
    assert bpc.tables == [] and "no gold labels" in said


def test_two_strategies_are_rows_of_their_own_never_one_pooled_headline(tmp_path):
    d = _user(strategies=("plain", "cot"), judges=("j1",))
    sec = S.by_judge(d, n_resamples=B)
    assert any("2 strategies (cot, plain)" in x and "never pooled" in x for x in sec.items if isinstance(x, str))
    bias = sec.tables[0].table
    assert sorted(bias["strategy"]) == ["cot", "plain"] and "strategy" in sec.tables[0].columns
    w = _wide(d).dropna(subset=["ab", "ba"])
    rate = w.assign(same=w["ab"] == w["ba"]).groupby("strategy")["same"].mean()
    best = rate.idxmax()
    head = sec.findings[0].sentence
    # the headline names the row (judge · strategy) it is about, among judge × strategy rows
    assert head.startswith(f"j1 · {best} is the most position-consistent of the 2 judge × strategy rows: ")
    assert f"{100 * rate[best]:.1f}%" in head
    pooled = (w["ab"] == w["ba"]).mean()
    assert f"{100 * pooled:.1f}%" not in head or pooled == rate[best]
    # the few-shot section names what the table has instead of the LLMBar strategies
    few = S.few_shot(d, n_resamples=B)
    (said,) = [x for x in few.items if isinstance(x, str)]
    assert few.tables == [] and "needs strategy Vanilla" in said and "cot, plain" in said


def test_one_judge_headline_states_its_own_test(tmp_path):
    d = _user(judges=("solo",))
    sec = S.by_judge(d, n_resamples=B)
    head = sec.findings[0].sentence
    assert head.startswith("solo gives the same verdict in both orders on ") and "McNemar's test on items finds" in head
    assert "most position-consistent" not in head and "nan" not in _text(sec, tmp_path).lower()


def test_few_shot_on_llmbar_names_the_paired_bootstrap(natural):
    sec = S.few_shot(natural, variants=["Vanilla_1shot"], n_resamples=B)
    assert {r["strategy"] for r in sec.metrics["anchor_effect"]} == {"Vanilla", "Vanilla_1shot"}
    assert f"paired item bootstrap (percentile, {B} resamples)" in sec.findings[0].sentence


def test_live_section_without_a_run_is_one_sentence():
    sec = S.live_section(None)
    assert sec.findings == [] and sec.tables == [] and len(sec.items) == 2 and "make live" in sec.items[1]
    assert sec.items[0] == S.LIVE_HEADING and sec.items[0].startswith("## Live judge: SmolLM2-135M")


def test_live_section_parse_rate_is_wilson_on_requests():
    from evallab.reporting import _live as live

    run = live.load()
    if run is None:
        pytest.skip("no committed live run")
    sec = S.live_section(run, n_resamples=B)
    req = [d for k, d in run.items() if k in ("position", "drift", "inflation", "probe", "text") and d is not None]
    structured = pd.concat([d[d["structured"] != "text"] if "structured" in d else d.iloc[0:0] for d in req])
    k, n = int(structured["verdict"].notna().sum()), len(structured)
    f = next(x for x in sec.findings if x.sentence.startswith("With structured verdicts"))
    assert f.method == "Wilson score" and f.n == n
    assert (f.low, f.high) == pytest.approx(proportion_confint(k, n, alpha=0.05, method="wilson"))
    assert sec.metrics["live_parse_rate_structured"] == pytest.approx(k / n)


def test_pointwise_table_notes_and_figures_name_no_order(tmp_path):
    """Issue 26 defect 8: on a pointwise table report 02 says once why it has nothing, and the estimators' notes
    behind it give one reason, without a word on presentation orders."""
    from evallab.metrics import _position as P
    from evallab.metrics._design import POINTWISE_REASON

    d = V.coerce(pd.DataFrame({"item_id": [f"q{i}" for i in range(6)] * 2, "judge": ["J"] * 6 + ["K"] * 6,
                               "verdict": ["pass", "fail"] * 6, "gold": ["pass"] * 12}))
    assert set(P.position_bias(d, ["judge"], n_resamples=0)["note"]) == {f"not computable: {POINTWISE_REASON}"}
    sec = S.by_judge(d, n_resamples=B)
    said = " ".join([_text(sec, tmp_path), *sec.caveats, *sec.conclusions])
    assert said.count("pointwise") == 2 and not re.search(r"\borders?\b", said.lower())  # sentence, conclusion
    assert S.overview(d).items == ["12 pointwise replies to 6 items; gold on every item; one sample per item; "
                                   "0 unparsed replies (counted, never scored); several judges (2)."]


def test_each_position_table_uses_one_denominator_per_row(tmp_path):
    # a judge with unparsed replies (LLaMA2: 2 of 419 pairs): the per-judge table is over pairs with both replies
    # parsed; MT-Bench's breakdown is over every pair asked, so its four shares add up to 100% (hand count)
    d = S.load(judges=["LLaMA2"])
    d = d[d["strategy"] == "Vanilla"]
    sec = S.by_judge(d, n_resamples=B)
    per_judge, breakdown = sec.tables[0], sec.tables[1]
    assert set(per_judge.columns) & {"biased_first_rate", "biased_second_rate"} == set()
    w = _wide(d)
    both = w.dropna(subset=["ab", "ba"])
    row = per_judge.table.iloc[0]
    assert row["both_parsed"] == len(both) and row["position_consistency"] == pytest.approx(
        (both["ab"] == both["ba"]).mean())
    b = breakdown.table.iloc[0]
    assert b["pairs"] == len(w) and len(w) > len(both)
    first = ((w["ab"] == "1") & (w["ba"] == "2")).sum()  # the first-shown output picked in both orders
    assert b["biased_first_rate"] == pytest.approx(first / len(w))
    total = b["consistent_rate"] + b["biased_first_rate"] + b["biased_second_rate"] + b["error_rate"]
    assert total == pytest.approx(1.0)
    assert "exact binomial test when fewer than 25 items are discordant" in per_judge.caption
