"""Issue 25: the estimate type carries its meaning (label, unit, interval, level, method, n) from the estimator to
the page, and the report context replaces hidden kernel globals."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from evallab._results import WILSON, Estimate, Measure, Results, bootstrap_method, results
from evallab.metrics._intervals import ratio_difference_interval_method, ratio_interval_method
from evallab.reporting._context import Report
from evallab.reporting._tables import to_html

PC = Measure("position_consistency", "Position consistency", "proportion", "position_consistency_low",
             "position_consistency_high", method_column="position_consistency_method", n="pairs", n_unit="pairs")


def _table():
    return results(pd.DataFrame({
        "judge": ["gpt-4", "llama", "tiny"],
        "pairs": [419, 200, 0],
        "position_consistency": [0.931, 0.5, np.nan],
        "position_consistency_low": [0.902, 0.43, np.nan],
        "position_consistency_high": [0.954, 0.57, np.nan],
        "position_consistency_method": ["item bootstrap (percentile, 1,000 resamples)", WILSON, ""],
        "note": ["", "", "not computable: needs both presentation orders"],
    }), [PC, Measure("pairs", "Pairs", "count")], level=0.95, keys=["judge"])


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_measures_survive_pandas_operations():
    t = _table()
    for derived in (t.dropna(subset=["position_consistency"]), t.sort_values("pairs"), t[t["pairs"] > 0],
                    t.assign(x=1), t.head(2), t.reset_index(drop=True)):
        assert isinstance(derived, Results) and derived.measures["position_consistency"] is PC
        assert derived.level == 0.95 and derived.keys == ["judge"]
    assert type(t.to_frame()) is pd.DataFrame


def test_an_estimate_states_value_interval_level_method_and_n():
    t = _table()
    e = t.estimate("position_consistency", 0)
    assert (e.value, e.low, e.high, e.n, e.n_unit) == (0.931, 0.902, 0.954, 419, "pairs")
    assert str(e) == "93.1% [90.2, 95.4] (95% CI, item bootstrap (percentile, 1,000 resamples), n = 419 pairs)"
    assert t.estimate("position_consistency", 1).method == WILSON  # the row's own method, not the column's
    missing = t.estimate("position_consistency", 2)
    assert missing.value is None and str(missing) == "not computable: needs both presentation orders"
    assert "nan" not in str(Estimate(0.5, float("nan"), float("nan"), 0.95, unit="proportion", n=5)).lower()
    with pytest.raises(KeyError, match="not a measure"):
        t.estimate("judge")


def test_a_pp_difference_is_signed_and_a_point_interval_is_not_printed():
    assert str(Estimate(-0.02, -0.05, 0.01, 0.95, "paired item bootstrap (percentile, 200 resamples)", "pp")) == \
        "-2.0 pp [-5.0, +1.0] (95% CI, paired item bootstrap (percentile, 200 resamples))"
    assert str(Estimate(1.0, 1.0, 1.0, 0.95, unit="coefficient", n=20, n_unit="items")) == \
        "1.00 (no interval: a single point, n = 20 items)"


def test_table_takes_labels_units_and_methods_from_the_measures():
    html = to_html(_table(), columns=["judge", "pairs", "position_consistency"]).html
    text = _text(html)
    assert "Position consistency (%, 95% CI)" in text and "Pairs" in text
    assert "93.1 [90.2, 95.4]" in text and "50.0 [43.0, 57.0]" in text
    # the column's method named once under the table, the row whose interval another method computed footnoted
    boot = "item bootstrap (percentile, 1,000 resamples)"
    assert (f"Intervals: 95%, {WILSON}." in text and f"interval: {boot}" in text) or \
        (f"Intervals: 95%, {boot}." in text and f"interval: {WILSON}" in text)
    assert "not computable: needs both presentation orders" in text
    assert "nan" not in text.lower()


def test_a_per_row_method_shared_by_every_row_is_named_once_without_footnotes():
    t = _table()
    t["position_consistency_method"] = [WILSON, WILSON, ""]
    text = _text(to_html(t, columns=["judge", "position_consistency"]).html)
    assert f"Intervals: 95%, {WILSON}." in text and "interval: " not in text


def test_a_column_wide_method_is_named_under_the_table():
    m = Measure("acc", "Accuracy", "proportion", "acc_low", "acc_high", method=WILSON, n="n", n_unit="replies")
    t = results(pd.DataFrame({"judge": ["a"], "acc": [0.8], "acc_low": [0.7], "acc_high": [0.9], "n": [50]}), [m],
                level=0.9, keys=["judge"])
    text = _text(to_html(t).html)
    assert "Accuracy (%, 90% CI)" in text and "Intervals: 90%, Wilson score." in text


def test_ratio_interval_names_the_method_it_used():
    # one binary reply per item: Wilson, equal to statsmodels
    lo, hi, m = ratio_interval_method([1] * 30 + [0] * 10, [1] * 40)
    ref = proportion_confint(30, 40, alpha=0.05, method="wilson")
    assert m == WILSON and (lo, hi) == pytest.approx(ref)
    # two replies per item, varying shares: the item bootstrap
    num = np.array([2, 1, 0, 2, 1, 2, 0, 1] * 5, float)
    lo, hi, m = ratio_interval_method(num, np.full(40, 2.0), n_resamples=500)
    assert m == bootstrap_method(500, "item") == "item bootstrap (percentile, 500 resamples)" and lo < 0.5625 < hi
    # every item the same share: the Wilson fallback on the item count, named as such
    lo, hi, m = ratio_interval_method(np.full(40, 2.0), np.full(40, 2.0))
    assert m.startswith(WILSON + " on 40 items") and (lo, hi) == pytest.approx(
        proportion_confint(40, 40, alpha=0.05, method="wilson"))
    # identical sides of a paired difference: the Wilson bound of 0 of n changed, not "paired bootstrap"
    ones = np.ones(34)
    lo, hi, m = ratio_difference_interval_method(ones, ones, ones, ones)
    assert m == f"bound from the {WILSON} interval of 0 of 34 items changed"
    assert hi == pytest.approx(proportion_confint(0, 34, alpha=0.05, method="wilson")[1]) and lo == -hi


def test_report_writes_only_its_own_findings_and_long_tables_beside_it(tmp_path):
    rep = Report("rep", tmp_path, confidence=0.9)
    t = _table()
    f = rep.finding("GPT-4 keeps its verdict when the outputs swap.", t.estimate("position_consistency", 0),
                    display=False)
    rep.finding("GPT-4 keeps its verdict when the outputs swap.", t.estimate("position_consistency", 0),
                display=False)  # a re-run cell: once
    assert f.method == "item bootstrap (percentile, 1,000 resamples)" and f.n_unit == "pairs"
    long = results(pd.DataFrame({"judge": [f"j{i}" for i in range(20)], "pairs": range(20)}),
                   [Measure("pairs", "Pairs", "count")])
    html = rep.table_html(long, caption="Long table")
    assert "rep.tables/01-long-table.csv" in html
    assert len(pd.read_csv(tmp_path / "rep.tables" / "01-long-table.csv")) == 20
    doc = json.loads(rep.save({"x": 1}, title="T").read_text())
    assert [d["sentence"] for d in doc["findings"]] == ["GPT-4 keeps its verdict when the outputs swap."]
    assert doc["findings"][0]["method"] == "item bootstrap (percentile, 1,000 resamples)"


def test_report_refuses_a_bad_name_or_level(tmp_path):
    from evallab.reporting._params import ParameterError

    with pytest.raises(ParameterError):
        Report("../x", tmp_path)
    with pytest.raises(ParameterError, match="confidence 1.5"):
        Report("ok", tmp_path, confidence=1.5)


def test_render_shows_a_section_and_collects_its_metrics_conclusions_and_caveats(tmp_path, capsys):
    from evallab.reporting._context import Section

    rep = Report("rep", tmp_path)
    t = _table()
    sec = (Section(metrics={"pc": 0.931}, conclusions=["Consistent."], caveats=["Small n."])
           .finding("GPT-4 is consistent.", t.estimate("position_consistency", 0))
           .table(t, ["judge", "position_consistency"], caption="Consistency")
           .text("First-slot preference is not computable on this table: it needs both orders."))
    rep.render(sec)
    rep.render(Section(caveats=["Small n."]))  # the same caveat from two sections: once
    assert [f.sentence for f in rep.findings] == ["GPT-4 is consistent."]
    assert rep._caveats == ["Small n."] and rep._conclusions == ["Consistent."]
    doc = json.loads(rep.save({"extra": t}).read_text())
    assert doc["metrics"]["pc"] == 0.931 and doc["metrics"]["extra"][2]["position_consistency"] is None


def test_metrics_json_keeps_what_each_table_and_number_means_and_the_index_renders_from_it(tmp_path):
    from evallab.reporting._batch_index import _all_metrics_html, _headline_html

    rep = Report("rep", tmp_path)
    t = _table()
    est = t.estimate("position_consistency", 0)
    doc = json.loads(rep.save({"bias": t, "headline_pc": est, "plain": 0.25}).read_text())
    assert doc["metrics"]["headline_pc"] == 0.931
    assert (doc["metrics"]["headline_pc_low"], doc["metrics"]["headline_pc_high"]) == (0.902, 0.954)
    assert doc["measures"]["headline_pc"]["estimate"]["unit"] == "proportion"
    assert doc["measures"]["bias"]["measures"]["position_consistency"]["low"] == "position_consistency_low"
    again = Results.from_records(doc["metrics"]["bias"], doc["measures"]["bias"])
    assert again.estimate("position_consistency", 1).method == WILSON and again.level == 0.95
    page = _text(_all_metrics_html(tmp_path / "rep.metrics.json"))
    assert "93.1 [90.2, 95.4]" in page  # the table from its measures: percent, interval in one cell
    assert "Wilson score" in page
    assert "0.25" in page and "25%" not in page  # no measure: a plain value, no unit guessed from the name
    head = _text(_headline_html({"headline_pc": 0.931, "plain_rate": 0.25}, doc["measures"]))
    assert "93.1%" in head and "0.25" in head and "25.0%" not in head


def test_n_of_one_is_singular_and_a_finding_keeps_the_estimates_digits():
    from evallab.reporting._tables import Finding

    assert Estimate(0.5, n=1, n_unit="replies", unit="proportion").n_text() == "n = 1 reply"
    assert Estimate(0.5, n=1, n_unit="pair × order units").n_text() == "n = 1 pair × order unit"
    assert Estimate(0.5, n=2, n_unit="items").n_text() == "n = 2 items"
    f = Finding.of("Alpha.", Estimate(0.41234, 0.35, 0.5, 0.95, "item bootstrap", "coefficient", 30, "items",
                                      digits=2))
    assert f.estimate_text().startswith("0.41 [0.35, 0.50]")
