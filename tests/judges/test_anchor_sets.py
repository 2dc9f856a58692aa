"""Your own anchor sets (issue 29, item 2): YAML and JSON-lines files of examples, fixed or shuffled with a seed,
recorded per request as ``anchor_set``; bad files in one line naming the example."""

from __future__ import annotations

import json
import random

import pytest

from evallab.errors import DataError
from evallab.judges._anchor_sets import anchor_set, load_anchor_set
from evallab.judges._prompts import Anchor, build_pairwise, build_pointwise

YAML = """name: strict
kind: pointwise
order: shuffled
seed: 7
anchors:
  - {text: "shows the diff", verdict: PASS}
  - {text: "only promises a fix", verdict: fail}
  - {text: "names the file and the line", verdict: pass}
"""


def test_yaml_set_shuffled_with_its_seed(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(YAML)
    s = load_anchor_set(p)
    assert (s.name, s.kind, s.order, s.seed) == ("strict", "pointwise", "shuffled", 7)
    assert [a.verdict for a in s.anchors] == ["pass", "fail", "pass"]
    expect = list(s.anchors)
    random.Random(7).shuffle(expect)
    assert s.ordered() == expect
    for k in range(4):  # another seed: the same examples, in random.Random(k)'s order
        other = list(s.anchors)
        random.Random(k).shuffle(other)
        assert s.ordered(seed=k) == other
    r = build_pointwise(rubric="r", pass_criteria="p", answer="a", anchors=s.ordered(), metadata=s.metadata())
    assert r.metadata["anchor_set"] == "strict"
    assert r.messages[1].content.index(expect[0].text) < r.messages[1].content.index(expect[1].text)


def test_pairwise_jsonl_examples_rendered(tmp_path):
    p = tmp_path / "pairs.jsonl"
    p.write_text("\n".join(json.dumps(o) for o in [
        {"instruction": "Add 2+2", "output_a": "4", "output_b": "5", "better": "a"},
        {"text": "a whole worked example", "verdict": "b"}]))
    s = load_anchor_set(p)
    assert (s.name, s.kind, s.order) == ("pairs", "pairwise", "fixed")
    assert s.ordered() == [Anchor("Instruction: Add 2+2\nOutput (a): 4\nOutput (b): 5", "1"),
                           Anchor("a whole worked example", "2")]
    r = build_pairwise("i", "x", "y", anchors=s.ordered())
    assert "### Example 1: Output (a)" in r.messages[1].content and "### Example 2: Output (b)" in r.messages[1].content


def test_the_same_examples_are_the_same_set():
    a = anchor_set("one", [{"text": "t", "verdict": "pass"}])
    b = anchor_set("two", [Anchor("t", "pass")])
    assert a.sha256 == b.sha256 and a.sha256 != anchor_set("x", [Anchor("t", "fail")]).sha256


@pytest.mark.parametrize(("text", "want"), [
    ("anchors:\n  - {text: x, verdict: maybe}\n", r"row 1, column 'verdict': example 1: verdict 'maybe'; expected pass"),
    ("anchors:\n  - {verdict: pass}\n", r"example 1 has no text"),
    ("kind: graded\nanchors:\n  - {text: x, verdict: pass}\n", r"kind 'graded'"),
    ("order: random\nanchors:\n  - {text: x, verdict: pass}\n", r"order 'random'"),
    ("anchors: []\n", r"holds no example"),
    ("name: [\n", r"not valid YAML"),
    ("just text\n", r"expected a mapping with an 'anchors' list"),
])
def test_bad_files_one_line(tmp_path, text, want):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(DataError, match=want) as ei:
        load_anchor_set(p)
    assert "bad.yaml" in str(ei.value) and len(str(ei.value).splitlines()) == 1
