"""Report 01 on small hand-made user tables (issue 26 leftovers): a finding never says its number twice nor nests a
parenthesis; the majority section's heading comes with the section only; Cohen's kappa of a one-category judge is
0 with its reason, never "0.00 [-0.00, 0.00]"; items without gold are said once, in items; the per-model
leaderboard (Arena-Hard's scoring, pass rate) states what hand counts give."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from section_helper import section_text
from statsmodels.stats.proportion import proportion_confint

from evallab import verdicts as V
from evallab.reporting._batch_index import _finding_html
from evallab.reporting._tables import Finding
from evallab.reporting.sections import agreement as S

KW = dict(n_resamples=50)


def _pointwise(n: int = 40, *, constant: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    gold = np.where(rng.random(n) < 0.6, "pass", "fail")
    verdict = np.where(rng.random(n) < 0.8, gold, np.where(gold == "pass", "fail", "pass"))
    return V.coerce(pd.DataFrame({"item_id": [f"q{i}" for i in range(n)], "judge": "J", "gold": gold,
                                  "verdict": "pass" if constant else verdict,
                                  "generator": np.where(np.arange(n) % 2, "m-b", "m-a")}))


def _pairwise_samples() -> pd.DataFrame:
    rows = [{"item_id": f"p{i}", "judge": "J", "order": "ab", "sample": s, "gold": "1" if i % 3 else "2",
             "verdict": ["1", "tie", "2"][(i + s) % 3]} for i in range(12) for s in range(3)]
    return V.coerce(pd.DataFrame(rows))


# ----------------------------------------------------------------------------------------------- findings
def test_a_finding_with_its_number_in_the_sentence_adds_only_what_the_sentence_lacks():
    f = Finding("3 of 240 replies (1.2%) could not be parsed.", 3 / 240, n=240, unit="proportion",
                n_unit="replies", level=None)
    html = f.html()
    assert "(1.2% (" not in html and "))" not in html
    assert html.count("1.2%") == 1 and "(n = 240 replies)" in html
    # the index card says it the same way
    card = _finding_html(f.as_dict())
    assert card.count("1.2%") == 1 and "n = 240 replies" in card and "((" not in card
    # number and interval stated: only level, method and n follow
    g = Finding("Accuracy is 93.1% [90.2, 95.4].", 0.931, 0.902, 0.954, n=1200, unit="proportion",
                method="Wilson score", n_unit="pairs")
    assert g.extra() == "95% CI, Wilson score, n = 1,200 pairs"
    # the number alone: its interval goes after "CI", no nested parenthesis
    h = Finding("Accuracy is 93.1%.", 0.931, 0.902, 0.954, n=1200, unit="proportion", method="Wilson score",
                n_unit="pairs")
    assert h.extra() == "95% CI [90.2, 95.4], Wilson score, n = 1,200 pairs"
    # 12.0% in the sentence is not the number 2.0%
    k = Finding("12.0% of items.", 0.02, n=50, unit="proportion", n_unit="items", level=None)
    assert k.extra() == "2.0% (n = 50 items)"
    # the whole estimate stated: nothing follows
    e = Finding.of("x", None)
    assert e.extra() == ""


# -------------------------------------------------------------------------------------- majority heading
def test_majority_heading_only_with_a_majority_section(tmp_path):
    assert S.majority_section(_pointwise(), **KW).items == []
    sec = S.majority_section(_pairwise_samples(), **KW)
    assert sec.items[0] == S.MAJORITY_HEADING and S.MAJORITY_HEADING.startswith("## Majority vote over samples")
    assert sum(isinstance(x, str) and x.startswith("## ") for x in sec.items) == 1
    assert "majority verdict" in section_text(sec, tmp_path)


# ------------------------------------------------------------------------------------------ kappa, gold
def test_kappa_of_a_judge_that_says_pass_everywhere_is_zero_with_its_reason(tmp_path):
    df = _pointwise(constant=True)
    sec = S.kappa_section(df, **KW)
    text = section_text(sec, tmp_path)
    assert "-0.00" not in text and "[-0" not in text and "[0.00, 0.00]" not in text
    f = sec.findings[0]
    assert f.value == 0.0 and f.low is None and f.high is None
    assert "Cohen's kappa against gold is 0.00 (n = 40 replies); not informative: the judge says 'pass'" \
        in f.sentence
    assert "ranges from" not in " ".join(sec.conclusions)  # one judge: no range
    two = V.coerce(pd.concat([df, df.assign(judge="K", verdict=df["gold"])]))
    pair = S.judge_agreement_section(two, **KW).findings[0]
    assert pair.value == 0.0 and pair.low is None and "not informative: J says 'pass' on every unit" in pair.sentence


def test_items_without_gold_are_said_once_in_items():
    rng = np.random.default_rng(3)
    rows = [{"item_id": f"q{i}", "judge": j, "order": o, "verdict": rng.choice(["1", "2", "tie"]),
             "gold": ("1" if i % 2 else "2") if i < 40 else None}
            for i in range(160) for j in ("A", "B") for o in ("ab", "ba")]
    df = V.coerce(pd.DataFrame(rows))
    caveats = S.accuracy_section(df, **KW).caveats
    gold = [c for c in caveats if "gold" in c]
    assert gold == ["120 of 160 items have no gold label: every figure against gold (accuracy, Cohen's kappa, the "
                    "majority's accuracy) leaves them out."]
    assert not [c for c in S.accuracy_section(df[df["gold"].notna()], **KW).caveats if "gold" in c]


# ------------------------------------------------------------------------------------------ leaderboard
def test_leaderboard_section_states_the_pass_rate_per_model(tmp_path):
    df = _pointwise()
    sec = S.leaderboard_section(df, user_table="mine.csv", **KW)
    assert sec.items[0] == S.LEADERBOARD_HEADING
    counts = {m: ((g["verdict"] == "pass").sum(), len(g)) for m, g in df.groupby("generator")}
    best = max(counts, key=lambda m: counts[m][0] / counts[m][1])
    k, n = counts[best]
    lo, hi = proportion_confint(k, n, method="wilson")
    f = sec.findings[0]
    assert f.sentence.startswith(f"By J's verdicts, {best} leads 2 models: pass rate {100 * k / n:.1f}% "
                                 f"[{100 * lo:.1f}, {100 * hi:.1f}] (95% CI, Wilson score, n = {n} items)")
    assert sec.metrics["leaderboard_model_column"] == "generator"
    text = section_text(sec, tmp_path)
    assert "Pass rate" in text and "Baseline" not in text and "nan" not in text.lower()


def test_leaderboard_section_on_arena_verdicts_counts_strong_preferences_three_times():
    rows = []
    for m, labels in (("m1", ["B>>A", "A=B", "A>B", "B>A"] * 6), ("m2", ["A>B", "A>>B", "A=B", "A>B"] * 6)):
        for q in range(len(labels) // 2):
            for o, lab in zip(("ab", "ba"), labels[2 * q: 2 * q + 2], strict=True):
                a_wins = lab.startswith("A>")
                winner = "tie" if "=" in lab else ("1" if a_wins == (o == "ab") else "2")
                rows.append({"item_id": f"{m}#q{q}", "judge": "J", "order": o, "verdict": winner,
                             "raw_verdict": lab, "output_2_model": m, "output_1_model": "base"})
    df = V.coerce(pd.DataFrame(rows))
    sec = S.leaderboard_section(df, min_items=5, **KW)
    # by hand, two questions at a time (output 2 = the model; in order ba the one shown as A is output 2):
    # m1: B>>A in ab, a strong win (3 × 1); A=B, ½; A>B in ab, a loss; B>A in ba, a loss: 3.5 / 6
    # m2: A>B in ab, a loss; A>>B in ba, a strong win (3 × 1); A=B, ½; A>B in ba, a win: 4.5 / 6
    score = {"m1": 3.5 / 6, "m2": 4.5 / 6}
    lb = pd.DataFrame(sec.metrics["leaderboard"]).set_index("output_2_model")
    for m, v in score.items():
        assert lb.at[m, "win_rate"] == pytest.approx(v)
    assert sec.findings[0].sentence.startswith("By J's verdicts, m2 leads 2 models: win rate against base (the "
                                               "baseline) 75.0% [")
    assert not any("every reply weighs 1" in x for x in sec.items if isinstance(x, str))


def test_leaderboard_section_without_a_model_column():
    df = _pairwise_samples()
    assert S.leaderboard_section(df, **KW).items == []  # the bundled data: nothing, no heading
    sec = S.leaderboard_section(df, user_table="mine.csv", **KW)
    assert len(sec.items) == 2 and sec.items[0] == "## Per-model leaderboard from each judge"
    assert "No column of this table names the evaluated model" in sec.items[1]
