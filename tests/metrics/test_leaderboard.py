"""Issue 26, "Per-model results from a judge": :func:`model_leaderboard` against independent computations — Arena-Hard's
own scoring rule applied to the raw ``model_judgment`` lines (``show_result.py`` ``load_judgments``: ``A>>B`` →
``[1] * 3``, ``A=B`` → ½, game 1 scored ``1 − s``, a question with a null game dropped), hand counts and statsmodels'
Wilson interval for the pass rate; and the rater estimators' second argument ``by`` (issue 26 leftovers)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from evallab import verdicts
from evallab.errors import DataError, DesignError
from evallab.importers import import_file
from evallab.metrics import fleiss_kappa, judge_agreement, krippendorff_alpha, model_leaderboard

LABELS = ["A>>B", "A>B", "A=B", "B>A", "B>>A", None]


def _arena_lines(seed: int = 0, models=("m-good", "m-bad"), questions: int = 30) -> list[dict]:
    rng = np.random.default_rng(seed)
    lines = []
    for k, m in enumerate(models):
        p = [0.05, 0.1, 0.2, 0.3, 0.3, 0.05] if k == 0 else [0.3, 0.3, 0.2, 0.1, 0.05, 0.05]
        for q in range(questions):
            games = [{"user_prompt": "", "judgment": "", "score": rng.choice(LABELS, p=p)} for _ in range(2)]
            lines.append({"question_id": f"q{q:03d}", "model": m, "judge": "gpt-4-1106-preview", "games": games})
    return lines


def _arena_hard_scores(lines: list[dict], weight: int = 3) -> dict[str, float]:
    """Arena-Hard v2's ``load_judgments`` + the leaderboard mean, written from its source."""
    to_score = {"A>B": [1], "A>>B": [1] * weight, "A=B": [0.5], "B>A": [0], "B>>A": [0] * weight}
    out: dict[str, list] = {}
    for o in lines:
        g1, g2 = o["games"]
        if g1["score"] is None or g2["score"] is None:
            continue
        out.setdefault(o["model"], []).extend(to_score[g2["score"]] + [1 - s for s in to_score[g1["score"]]])
    return {m: float(np.mean(v)) for m, v in out.items()}


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    lines = _arena_lines()
    folder = tmp_path_factory.mktemp("arena") / "model_judgment" / "gpt-4-1106-preview"
    folder.mkdir(parents=True)
    tables = []
    for m in ("m-good", "m-bad"):
        path = folder / f"{m}.jsonl"
        path.write_text("".join(json.dumps({**o, "games": [{**g, "score": None if g["score"] is None else
                                                              str(g["score"])} for g in o["games"]]}) + "\n"
                                for o in lines if o["model"] == m), encoding="utf-8")
        tables.append(import_file(path, baseline="gpt-4-0314"))
    lines = [{**o, "games": [{**g, "score": None if g["score"] is None else str(g["score"])} for g in o["games"]]}
             for o in lines]
    return lines, pd.concat(tables, ignore_index=True)


def test_win_rate_is_arena_hards_score(arena):
    lines, table = arena
    lb = model_leaderboard(table, n_resamples=200).set_index("output_2_model")
    expected = _arena_hard_scores(lines)
    assert set(lb.index) == set(expected)
    for m, v in expected.items():
        assert lb.at[m, "win_rate"] == pytest.approx(v, abs=1e-12)
    # the leader first; the counts by hand from the raw labels
    assert lb.index[0] == max(expected, key=expected.get)
    bad_q = {(o["model"], o["question_id"]) for o in lines if any(g["score"] is None for g in o["games"])}
    for m in expected:
        kept = [o for o in lines if o["model"] == m and (m, o["question_id"]) not in bad_q]
        labels = [g["score"] for o in kept for g in o["games"]]
        assert lb.at[m, "items"] == len(kept)
        assert lb.at[m, "items_dropped"] == sum(1 for o in lines if o["model"] == m) - len(kept)
        assert lb.at[m, "strong"] == sum(lab in ("A>>B", "B>>A") for lab in labels)
        assert lb.at[m, "ties"] == labels.count("A=B")
        assert lb.at[m, "baseline"] == "gpt-4-0314"
        assert lb.at[m, "win_rate_method"].startswith("item bootstrap")
        assert lb.at[m, "win_rate_low"] < lb.at[m, "win_rate"] < lb.at[m, "win_rate_high"]
    assert lb.measures["win_rate"].n_unit == "items" and lb.level == 0.95


def test_strong_weight_one_is_the_plain_win_rate_with_ties_as_half(arena):
    lines, table = arena
    lb = model_leaderboard(table, strong_weight=1, n_resamples=0).set_index("output_2_model")
    for m, v in _arena_hard_scores(lines, weight=1).items():
        assert lb.at[m, "win_rate"] == pytest.approx(v, abs=1e-12)


def test_item_bootstrap_interval_matches_an_independent_item_resampling(arena):
    lines, table = arena
    lb = model_leaderboard(table, n_resamples=4000, seed=3).set_index("output_2_model")
    to_score = {"A>B": [1], "A>>B": [1] * 3, "A=B": [0.5], "B>A": [0], "B>>A": [0] * 3}
    rng = np.random.default_rng(11)
    for m in ("m-good", "m-bad"):
        per = [to_score[o["games"][1]["score"]] + [1 - s for s in to_score[o["games"][0]["score"]]]
               for o in lines if o["model"] == m and all(g["score"] is not None for g in o["games"])]
        num, den = np.array([sum(p) for p in per]), np.array([len(p) for p in per], dtype=float)
        draws = rng.integers(0, len(per), size=(4000, len(per)))
        boot = num[draws].sum(axis=1) / den[draws].sum(axis=1)
        lo, hi = np.quantile(boot, [0.025, 0.975])
        assert lb.at[m, "win_rate_low"] == pytest.approx(lo, abs=0.02)
        assert lb.at[m, "win_rate_high"] == pytest.approx(hi, abs=0.02)


def test_pass_rate_per_model_on_a_pointwise_table():
    rows = [{"item_id": f"{m}#q{i}", "judge": "J", "provider": m, "verdict": v}
            for m, vs in (("a", ["pass"] * 14 + ["fail"] * 5 + [None]), ("b", ["pass"] * 6 + ["warn", "fail"] * 7))
            for i, v in enumerate(vs)]
    lb = model_leaderboard(verdicts.coerce(pd.DataFrame(rows))).set_index("provider")
    assert list(lb.index) == ["a", "b"]  # 14/19 before 6/20
    assert lb.at["a", "pass_rate"] == pytest.approx(14 / 19) and lb.at["a", "unparsed"] == 1
    assert lb.at["b", "pass_rate"] == pytest.approx(6 / 20)  # warn is not a pass
    for m, k, n in (("a", 14, 19), ("b", 6, 20)):
        lo, hi = proportion_confint(k, n, method="wilson")
        assert (lb.at[m, "pass_rate_low"], lb.at[m, "pass_rate_high"]) == pytest.approx((lo, hi))
        assert lb.at[m, "pass_rate_method"] == "Wilson score"


def test_leaderboard_refuses_a_table_naming_no_model_and_a_mixed_table():
    df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2"], "judge": "J", "verdict": ["pass", "fail"]}))
    with pytest.raises(DataError, match="names the evaluated model"):
        model_leaderboard(df)
    with pytest.raises(DataError, match="is not in the table"):
        model_leaderboard(df, model="mine")
    mixed = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2"], "judge": "J", "verdict": ["pass", "1"],
                                          "generator": "m"}))
    with pytest.raises(DataError, match="pairwise and pointwise"):
        model_leaderboard(mixed)


def _two_judges() -> pd.DataFrame:
    return verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4"] * 2, "judge": ["A"] * 4 + ["B"] * 4,
                                         "verdict": ["pass", "fail", "pass", "fail", "pass", "pass", "pass", "fail"]}))


@pytest.mark.parametrize("fn", [judge_agreement, fleiss_kappa, krippendorff_alpha])
def test_rater_estimators_take_by_second_and_name_the_old_argument(fn):
    df = _two_judges()
    assert list(fn(df, [], n_resamples=0).columns) == list(fn(df, n_resamples=0).columns)
    keyword = fn(df, judges=["A", "B"], n_resamples=0)
    assert len(keyword)
    with pytest.raises(DesignError, match=r"pass the raters to compare as judges=\['A', 'B'\]"):
        fn(df, ["A", "B"], n_resamples=0)


def test_kappa_with_one_constant_rater_is_zero_without_an_interval():
    """A judge that says pass on every item: po = pe by construction (po = 24/40 = P(gold pass)), kappa 0 — never
    the asymptotic interval [-0.00, 0.00] its zero standard error would give."""
    from evallab.metrics import cohen_kappa_vs_gold

    gold = ["pass"] * 24 + ["fail"] * 16
    df = verdicts.coerce(pd.DataFrame({"item_id": [f"q{i}" for i in range(40)], "judge": "lazy", "verdict": "pass",
                                       "gold": gold}))
    r = cohen_kappa_vs_gold(df, ["judge"])
    po, pe = 24 / 40, (24 / 40) * 1.0
    assert r.at[0, "kappa"] == (po - pe) / (1 - pe) == 0.0
    assert np.isnan(r.at[0, "kappa_low"]) and np.isnan(r.at[0, "kappa_high"])
    assert "the judge says 'pass' on every unit" in r.at[0, "note"]
    e = r.estimate("kappa")
    assert str(e) == "0.00 (n = 40 replies)" and "-0.00" not in str(e)
    pair = judge_agreement(pd.concat([df, df.assign(judge="other", verdict=gold)]), n_resamples=0)
    row = pair.query("judge_a == 'lazy' and judge_b == 'other'").iloc[0]
    assert row["kappa"] == 0.0 and np.isnan(row["kappa_low"]) and "lazy says 'pass'" in row["note"]


def test_alpaca_eval_annotations_give_the_published_leaderboard_row():
    """AlpacaEval's annotations of alpaca-7b by alpaca_eval_gpt4 (data/formats): the leaderboard row published in
    ``alpaca_eval_gpt4_leaderboard.csv`` (win rate 26.4596 = (205 + 16/2) / 805, 205 wins, 584 losses, 16 draws)."""
    import csv

    from evallab.paths import data_dir

    table = import_file(data_dir("formats") / "alpaca_eval" / "alpaca-7b__alpaca_eval_gpt4__annotations.json")
    with open(data_dir("alpaca_eval") / "leaderboards" / "data_AlpacaEval" / "alpaca_eval_gpt4_leaderboard.csv",
              newline="", encoding="utf-8") as fh:
        row = next(r for r in csv.DictReader(fh) if r[""] == "alpaca-7b")
    lb = model_leaderboard(table, n_resamples=0).iloc[0]
    assert lb["generator_2"] == "alpaca-7b" and lb["baseline"] == "text_davinci_003"
    assert (lb["wins"], lb["losses"], lb["ties"], lb["items"]) == (int(row["n_wins"]), int(row["n_wins_base"]),
                                                                   int(row["n_draws"]), int(row["n_total"]))
    assert 100 * lb["win_rate"] == pytest.approx(float(row["win_rate"]), abs=1e-9)


# ------------------------------------------------ issue 26 follow-up: what an unparsed reply takes with it
def _scores(d: pd.DataFrame) -> pd.Series:
    return d["verdict"].map({"2": 1.0, "tie": 0.5, "1": 0.0})


def test_one_order_table_leaves_out_only_the_unparsed_reply_and_keeps_the_item():
    """One order, 3 samples: an item with one unparsed sample keeps its two parsed replies (no second game to
    drop with it)."""
    rows = []
    for i in range(12):
        for s_ in range(3):
            v = None if (i % 4 == 0 and s_ == 1) else ("2" if (i + s_) % 3 else ("tie" if i % 2 else "1"))
            rows.append(dict(item_id=f"q{i:02d}", judge="J", order="ab", sample=s_, verdict=v,
                             output_1_model="base", output_2_model="m"))
    raw = pd.DataFrame(rows)
    lb = model_leaderboard(verdicts.coerce(raw), n_resamples=0)
    parsed = raw.dropna(subset=["verdict"])
    assert len(raw) - len(parsed) == 3
    assert lb.at[0, "items"] == 12 and lb.at[0, "items_dropped"] == 0  # every item stays
    assert lb.at[0, "replies"] == len(parsed) == 33 and lb.at[0, "replies_left_out"] == 3
    assert lb.at[0, "win_rate"] == pytest.approx(_scores(parsed).mean(), abs=1e-12)
    assert lb.at[0, "ties"] == int((parsed["verdict"] == "tie").sum())


def test_two_orders_leave_out_both_games_of_the_unparsed_sample_only():
    """Both orders, 2 samples: an unparsed game drops its request's other order (Arena-Hard's two games of one
    sample), not the item's other sample."""
    rows = []
    for i in range(10):
        for s_ in range(2):
            for o in ("ab", "ba"):
                v = None if (i in (2, 5) and s_ == 1 and o == "ab") else ("2" if (i + s_ + (o == "ba")) % 3 else "1")
                rows.append(dict(item_id=f"q{i:02d}", judge="J", order=o, sample=s_, verdict=v,
                                 output_1_model="base", output_2_model="m"))
    raw = pd.DataFrame(rows)
    lb = model_leaderboard(verdicts.coerce(raw), n_resamples=0)
    bad = raw[raw["verdict"].isna()][["item_id", "sample"]].drop_duplicates()
    kept = raw.merge(bad, on=["item_id", "sample"], how="left", indicator=True).query("_merge == 'left_only'")
    assert len(kept) == 40 - 4
    assert lb.at[0, "items"] == 10 and lb.at[0, "items_dropped"] == 0
    assert lb.at[0, "replies"] == 36 and lb.at[0, "replies_left_out"] == 4
    assert lb.at[0, "win_rate"] == pytest.approx(_scores(kept).mean(), abs=1e-12)
