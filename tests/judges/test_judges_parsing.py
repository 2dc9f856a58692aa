"""Issue 13: the reply parser over a corpus of judge replies in the styles evallab meets (tests/data/judges/
parser_corpus.jsonl: each reply with the verdict and score a careful human reads in it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evallab.judges import build_pairwise
from evallab.judges._parsing import parse_reply_full, parse_verdict, parse_verdict_full

CORPUS = [json.loads(line) for line in
          (Path(__file__).parents[1] / "data" / "judges" / "parser_corpus.jsonl").read_text().splitlines()]


def test_corpus_covers_the_styles():
    assert len(CORPUS) >= 60
    text = " ".join(r["text"] for r in CORPUS)
    for marker in ("[[A>>B]]", "[[B>A]]", "A=B", "[[C]]", "Output (a)", "Score:", "PASS", "FAIL", "tie", "draw",
                   "equally good", "Neither is better"):
        assert marker in text, marker
    assert {r["kind"] for r in CORPUS} == {"pairwise", "pointwise", "score"}
    assert sum(r["verdict"] is None for r in CORPUS) >= 10  # replies that must stay NA


@pytest.mark.parametrize("row", CORPUS, ids=[f"{i}-{r['note']}" for i, r in enumerate(CORPUS)])
def test_corpus_reply(row):
    p = parse_verdict_full(row["text"], row["kind"])
    assert p.verdict == row["verdict"], p.error
    if row["score"] is not None:
        assert p.score == row["score"]
    if row["verdict"] is None:
        assert p.error and p.reason == row["text"].strip()  # NA keeps the raw text and says why
    else:
        assert p.error is None


def test_conflicting_final_statements_name_both():
    err = parse_verdict("Final verdict: [[A]] or [[B]], hard to say.", "pairwise")[2]
    assert err.startswith("conflicting final statements") and "1" in err and "2" in err


def test_arena_strength_and_order_mapping_reach_the_reply():
    ba = build_pairwise("Q", "x", "y", order="ba", metadata={"item_id": "i"})
    p = parse_reply_full("My final verdict is: [[A>>B]]", ba)
    assert (p.verdict, p.score) == ("2", 2.0)  # Output (a) is output 2 in the ba order; strength kept


def test_score_kind_and_unknown_kind():
    assert parse_verdict("Score: 4", "score")[0] == "4"
    with pytest.raises(ValueError, match="kind"):
        parse_verdict("x", "ranking")


def test_an_explicit_final_verdict_wins_over_later_prose():
    """The Position-Bias-Analyzer reply (claude-3-opus-20240229, repetition 2, question 119, order ba) that says
    "Final verdict:\\n[[A]]" and then "both answers were equally correct": A (as shown), no longer a tie — read from
    the bundled record file itself. Later MARKS still count; without a "final" label the last statement wins."""
    from evallab.datasets._position_bias_analyzer import BASELINE, record_files
    from evallab.importers._position_bias_analyzer import import_position_bias_analyzer

    rec = next(p for p in record_files() if p.parent.name.startswith("Repetition2-")
               and "claude-3-opus-20240229" in p.parent.name)
    df = import_position_bias_analyzer(rec, baseline=BASELINE, replies=True)
    reply = df[(df["item_id"] == "119;vicuna-13b-v1.3;claude-v1") & (df["order"] == "ba")]["reply"].iloc[0]
    assert "Final verdict:\n[[A]]" in reply and "equally correct" in reply.split("[[A]]", 1)[1]
    assert parse_verdict(reply, "pairwise")[0] == "1"
    assert parse_verdict("Final verdict: [[B]]\n\nBoth are equally good in style.", "pairwise")[0] == "2"
    assert parse_verdict("Final verdict: [[B]]\n\nOutput (a) is better written, though.", "pairwise")[0] == "2"
    assert parse_verdict("Final verdict: [[A]]. Wait, on reflection [[B]].", "pairwise")[0] == "2"  # a later mark
    assert parse_verdict("[[A]]\n\nBoth are equally good.", "pairwise")[0] == "tie"  # no final label: unchanged
