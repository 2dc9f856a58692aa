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
