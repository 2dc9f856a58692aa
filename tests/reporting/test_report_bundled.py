"""Issue 26 defect 1: a report on the user's table shows that table alone — a section built from bundled data
(:attr:`Section.bundled`) is left out (nothing shown, nothing in metrics.json, no finding) unless asked for."""

from __future__ import annotations

import json

import pytest

from evallab import Report, Section
from evallab.datasets._study import LLMBAR_STRATEGIES, LLMBAR_SUBSETS, llmbar_defaults
from evallab.reporting._context import bundled_section


def _sections():
    own = Section(metrics={"own": 1}).finding("Judge A agrees with gold on 9 of 10 items.")
    demo = Section(metrics={"demo": 2}, caveats=["demo caveat"]).finding("SmolLM2 keeps 12 of 100.").from_bundled()
    return own, demo


@pytest.mark.parametrize(("user_table", "ask", "shown"), [("", False, True), ("mine.csv", False, False),
                                                           ("mine.csv", True, True)])
def test_a_bundled_section_is_left_out_on_the_users_table(tmp_path, user_table, ask, shown):
    report = Report("r", tmp_path, user_table=user_table, bundled_sections=ask)
    for sec in _sections():
        report.render(sec)
    doc = json.loads(report.save().read_text())
    sentences = [f["sentence"] if isinstance(f, dict) else str(f) for f in doc.get("findings", [])]
    assert doc["metrics"]["own"] == 1
    assert ("demo" in doc["metrics"]) is shown
    assert any("SmolLM2" in s for s in sentences) is shown
    assert any("Judge A" in s for s in sentences)
    assert ("demo caveat" in report._caveats) is shown


def test_bundled_section_marks_always_when_or_unless():
    always = bundled_section(lambda: Section())
    when = bundled_section(when="simulated")(lambda t, *, simulated=False: Section())
    unless = bundled_section(unless="source")(lambda t, *, source="": Section())
    assert always().bundled
    assert not when(1).bundled and when(1, simulated=True).bundled
    assert unless(1).bundled and not unless(1, source="my/alpaca_eval").bundled


def test_the_live_and_simulated_sections_are_marked_bundled():
    from evallab.reporting.sections import corrected, drift, inflation, position

    assert position.live_section(None).bundled and inflation.live_section(None).bundled
    assert drift.live_prompt_drift(None).bundled
    assert corrected.live_recordings(None, live_dir="missing").bundled


def test_llmbar_selection_applies_to_the_bundled_data_only():
    assert llmbar_defaults("", [], []) == (list(LLMBAR_SUBSETS), list(LLMBAR_STRATEGIES))
    assert llmbar_defaults("", ["CaseStudy"], ["CoT"]) == (["CaseStudy"], ["CoT"])
    assert llmbar_defaults("mine.csv", [], []) == (None, None)
    assert llmbar_defaults("mine.csv", ["x"], []) == (["x"], None)
