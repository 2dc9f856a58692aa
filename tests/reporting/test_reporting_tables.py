"""Publication tables, findings, the index cards, Run notes and the figure style — without a browser."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from evallab.paths import REPO_ROOT
from evallab.reporting import _plots as plots
from evallab.reporting import _tables as tables
from evallab.reporting._batch import ReportResult, run_notes, save_metrics, write_index
from evallab.reporting._tables import format_estimate, humanize, to_html

matplotlib.use("Agg")


def cells(h: str) -> list[str]:
    return [html.unescape(re.sub(r"<[^>]+>", "", x)).strip() for x in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", h,
                                                                                 re.S)]


def visible(h: str) -> str:
    """The text a reader sees (no style blocks, no tags, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<style.*?</style>", "", h, flags=re.S)))


@pytest.fixture
def bias():
    return pd.DataFrame({
        "judge": ["GPT-4", "PaLM2"], "pairs": [419, 415], "first_slot": [429, 466],
        "first_slot_rate": [0.512, 0.561], "first_slot_low": [0.478, 0.527], "first_slot_high": [0.546, 0.595],
        "consistency": [0.928, np.nan], "consistency_low": [0.899, np.nan], "consistency_high": [0.949, np.nan],
        "mcnemar_p": [1e-7, 0.1], "delta_first_slot": [0.021, -0.034], "note": ["", "no pair parsed in both orders"],
    })


UNITS = {"first_slot_rate": "%", "consistency": "%", "mcnemar_p": "p", "delta_first_slot": "pp"}
INTERVALS = {"first_slot_rate": ("first_slot_low", "first_slot_high"),
             "consistency": ("consistency_low", "consistency_high")}


def test_estimate_and_interval_in_one_cell_with_units_in_headers(bias):
    c = cells(to_html(bias, units=UNITS, intervals=INTERVALS,
                      columns=["judge", "pairs", "first_slot", "first_slot_rate", "consistency", "mcnemar_p",
                               "delta_first_slot"]).html)
    assert "Consistency (%, 95% CI)" in c and "First slot rate (%, 95% CI)" in c
    assert "92.8 [89.9, 94.9]" in c and "51.2 [47.8, 54.6]" in c
    assert "429" in c  # a count is not paired with the rate's interval
    assert "<0.001" in c and "+2.1" in c and "-3.4" in c  # p-values; differences in percentage points
    assert "Delta first slot (pp)" in c and "Mcnemar p-value" in c
    assert not any(re.fullmatch(r"\d+", x) and x in ("0", "1") for x in c[:12])  # no index column


def test_a_plain_frame_gets_no_guessed_unit_or_interval(bias):
    c = cells(to_html(bias).html)
    assert "0.928" in c and "Consistency" in c and "Consistency low" in c  # shown as it is, nothing paired
    assert not any("%" in x for x in c)


def test_no_nan_but_a_dash_and_a_footnote_saying_why(bias):
    h = to_html(bias, units=UNITS, intervals=INTERVALS).html
    assert "NaN" not in h and "nan" not in cells(h)
    assert "—<sup>1</sup>" in h and "no pair parsed in both orders" in h
    assert "Note" not in cells(h)  # the reason column is a footnote, not a column


def test_no_scientific_notation_no_reprs_relative_paths():
    df = pd.DataFrame({"x": [1.5e-5, 2.5e-4], "big": [1.2e9, 3.4e9], "tags": [["a", "b"], []],
                       "d": [{"k": 1}, {"k": 2}], "ok": [True, False],
                       "path": [str(REPO_ROOT / "data" / "a.csv"), "b"]})
    c = cells(to_html(df).html)
    assert not any(re.search(r"\de[+-]?\d", x) for x in c)
    assert "a, b" in c and "K: 1" in c and "yes" in c and "no" in c and "data/a.csv" in c
    assert not any(str(REPO_ROOT) in x for x in c) and not any("[" in x and "'" in x for x in c)


def test_index_becomes_a_labelled_column():
    df = pd.DataFrame({"kappa": [0.5, 0.7]}, index=pd.Index(["A", "B"], name="judge"))
    c = cells(to_html(df).html)
    assert c[:2] == ["Judge", "Kappa"] and "A" in c


def test_wide_tables_split_long_tables_folded_with_a_csv(tmp_path, monkeypatch):
    wide = pd.DataFrame({f"a_long_measurement_name_{i}": np.arange(3) * 1000.5 for i in range(16)})
    wide.insert(0, "judge", ["A", "B", "C"])
    h = to_html(wide).html
    assert h.count("<table") >= 2 and "part 1 of" in h and h.count(">A<") >= 2  # key column repeated
    long = pd.DataFrame({"item": range(62), "rate": np.linspace(0, 1, 62)})
    t = to_html(long, caption="Per item", csv_to=(tmp_path, Path("rep.tables") / "01-per-item.csv"))
    assert "<details>" in t.html and "62 rows" in t.html
    assert t.csv is not None and t.csv.exists() and t.csv.parent == tmp_path / "rep.tables"
    assert len(pd.read_csv(t.csv)) == 62
    assert "href='rep.tables/" in t.html  # a relative link beside the report


def test_explicit_columns_units_digits():
    df = pd.DataFrame({"j": ["A"], "v": [0.12345], "lo": [0.1], "hi": [0.2], "cost": [1.23456]})
    c = cells(to_html(df, columns={"j": "Judge", "v": "Win rate", "cost": "Cost"}, intervals={"v": ("lo", "hi")},
                      units={"v": "%", "cost": "USD"}, digits={"cost": 2}, level=0.9).html)
    assert c[:3] == ["Judge", "Win rate (%, 90% CI)", "Cost (USD)"] and "12.3 [10.0, 20.0]" in c and "1.23" in c


def test_humanize_and_estimates():
    assert humanize("judges_with_order_effect_p_lt_0_05") == "Judges with order effect p < 0.05"
    assert humanize("live_dir") == "Live folder" and humanize("direction") == "Direction"
    assert format_estimate(0.931, 0.902, 0.954, "%", 0.95, 1200) == "93.1% [90.2, 95.4] (95% CI, n = 1,200)"
    assert format_estimate(-0.02, -0.05, 0.01, "pp") == "-2.0 pp [-5.0, +1.0] (95% CI)"


def test_findings_collected_into_save_metrics_and_the_index(tmp_path):
    f = tables.Finding("GPT-4 keeps its verdict in 93% of swapped pairs.", 0.93, 0.9, 0.95, n=419, unit="%")
    p = save_metrics("rep", {"x": 1}, title="Position bias", reports_dir_=tmp_path, findings=[f])
    doc = json.loads(p.read_text())
    assert doc["findings"] == [{"sentence": "GPT-4 keeps its verdict in 93% of swapped pairs.", "value": 0.93,
                                "low": 0.9, "high": 0.95, "level": 0.95, "n": 419, "unit": "%", "method": None,
                                "n_unit": "", "digits": None}]
    assert save_metrics("other", {"x": 1}, reports_dir_=tmp_path).exists()
    assert json.loads((tmp_path / "other.metrics.json").read_text())["findings"] == []  # no kernel state read
    res = ReportResult("rep", "ok", 3.2, html=str(tmp_path / "rep.html"), title="Position bias",
                       question="Does the judge change its mind?", findings=doc["findings"],
                       parameters={"verdicts_path": "", "n_resamples": 200, "subsets": ["LLMBar/Natural"]},
                       changed=["n_resamples"], parameter_help={"n_resamples": "bootstrap resamples"},
                       source="notebooks/02_position_bias.ipynb", finished_at="2026-01-01 00:00 UTC")
    index = write_index([res], tmp_path).read_text()
    text = visible(index)
    assert "Does the judge change its mind?" in text
    assert "93.0% [90.0, 95.0] (95% CI, n = 419)" in text
    assert "N resamples" in text and "set for this run" in text and "LLMBar/Natural" in text
    assert "notebooks/02_position_bias.ipynb" in text and "All metrics" in text
    assert "{" not in text and "n_resamples" not in text  # no JSON, no variable names


def test_old_headline_shown_readably_in_the_units_saved_with_it(tmp_path):
    metrics = {"judges_with_order_effect_p_lt_0_05": 5, "max_consistency": 0.928, "mcnemar_p": 1e-9,
               "gate": {"go": "fail"}, "names": ["a", "b"], "min_consistency": 0.5}
    measures = {"max_consistency": {"estimate": {"unit": "proportion"}}, "mcnemar_p": {"estimate": {"unit": "p-value"}}}
    save_metrics("old", metrics, reports_dir_=tmp_path, headline=list(metrics), measures=measures)
    res = ReportResult("old", "ok", 1.0, metrics=metrics)
    text = visible(write_index([res], tmp_path).read_text())
    assert "Judges with order effect p < 0.05" in text and "92.8%" in text and "<0.001" in text
    assert "Go: fail" in text and "a, b" in text and "{" not in text and '"' not in text
    assert "0.5" in text and "50.0%" not in text  # no unit saved: shown as it is, never guessed from the name


def test_run_notes_move_stderr_and_tidy_paths(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    nb = new_notebook()
    c = new_code_cell("x")
    c.outputs = [new_output("stream", name="stderr", text=f"{REPO_ROOT}/evallab/x.py:12: UserWarning: careful\n"
                                                           "  warnings.warn('careful')\n"),
                 new_output("stream", name="stdout", text=f"read {REPO_ROOT}/data/a.csv and {tmp_path}/o.csv\n"),
                 new_output("stream", name="stderr", text="100%|##########| 3/3 [00:00<00:00, 10.00it/s]\n")]
    nb.cells = [c]
    run_notes(nb, tmp_path)
    assert [o["name"] for o in nb.cells[0].outputs] == ["stdout"]
    assert nb.cells[0].outputs[0]["text"] == "read data/a.csv and o.csv\n"
    notes = nb.cells[-1].source
    assert notes.startswith("## Run notes") and "UserWarning: careful (x.py:12)" in notes and "it/s" not in notes
    assert nbformat.validate(nb) is None


def test_figure_style_and_heatmap_text_by_luminance():
    plots.use_style()
    assert matplotlib.rcParams["axes.prop_cycle"].by_key()["color"][:2] == plots.OKABE_ITO[:2]
    assert plots.text_color((0.99, 0.91, 0.14, 1)) == "black"  # viridis yellow
    assert plots.text_color((0.27, 0.0, 0.33, 1)) == "white"  # viridis purple
    m = pd.DataFrame([[1.0, -0.8], [-0.8, 1.0]], index=["a", "b"], columns=["a", "b"])
    fig = plots.heatmap(m, title="t", cbar_label="kappa")
    texts = [t for t in fig.axes[0].texts]
    assert {t.get_color() for t in texts} == {"black", "white"}
    assert min(t.get_fontsize() for t in texts) >= 9
    assert min(t.get_fontsize() for t in fig.axes[0].get_yticklabels()) >= 9


def test_win_rates_use_95_intervals():
    rates = pd.DataFrame({"generator_2": ["m1", "m1"], "judge": ["a", "b"], "win_rate": [0.5, 0.6],
                          "standard_error": [0.05, 0.05]})
    fig = plots.plot_win_rates(rates)
    ax = fig.axes[0]
    assert "95% interval" in ax.get_ylabel() and "s.e." not in ax.get_ylabel()
    assert ax.get_legend() is not None
    assert ax.get_xlabel() == "model compared with the baseline (generator_2)"  # words, not only the column name


def test_every_figure_function_with_colour_has_a_legend():
    from types import SimpleNamespace

    g = pd.DataFrame({"group": ["a", "b"], "delta_accuracy": [0.01, -0.09], "delta_low": [-0.02, -0.12],
                      "delta_high": [0.04, -0.06], "flagged": [False, True]})
    rep = SimpleNamespace(groups=g, gate=SimpleNamespace(tolerance=0.05), baseline_judge="x", candidate_judge="y")
    fig = plots.plot_drift(rep)
    assert fig.axes[0].get_legend() is not None and "95%" in fig.axes[0].get_xlabel()


def test_kernel_setup_module_is_importable_without_ipython():
    import importlib

    mod = importlib.import_module("evallab.reporting._kernel")
    assert callable(mod.setup)
    assert Path(mod.__file__).exists()


def test_paths_tidied_but_urls_and_markup_kept(tmp_path):
    from evallab.reporting._batch import tidy_paths

    assert tidy_paths(f"{REPO_ROOT}/data/a.csv and {tmp_path}/o.csv", tmp_path) == "data/a.csv and o.csv"
    assert tidy_paths("https://github.com/a/b/c/d </td>", tmp_path) == "https://github.com/a/b/c/d </td>"
    assert tidy_paths("/home/someone/private/x/y.csv", tmp_path) == ".../x/y.csv"


def test_empty_table_says_so_and_float_counts_read_as_counts():
    assert "No rows (Skill, Rule)." in to_html(pd.DataFrame({"skill": [], "rule": []})).html
    c = cells(to_html(pd.DataFrame({"kappa": [1.0, 0.5], "replies": [1468.0, 838.0]})).html)
    assert "1,468" in c and "1.000" in c


def test_degenerate_interval_is_never_printed_as_a_point():
    df = pd.DataFrame({"g": ["a", "b", "c"], "kappa": [1.0, 0.5, 0.8], "kappa_low": [1.0, 0.4, float("nan")],
                       "kappa_high": [1.0, 0.6, float("nan")], "note": ["", "", "no interval: every item agrees"]})
    html = to_html(df, intervals={"kappa": ("kappa_low", "kappa_high")}, units={"kappa": ""}, digits={"kappa": 2}).html
    assert "[1.00, 1.00]" not in html and "0.50 [0.40, 0.60]" in html
    assert tables.DEGENERATE_NOTE in html  # the point interval is footnoted, not shown
    assert "no interval: every item agrees" in html  # a missing interval carries its row's note
    assert format_estimate(1.0, 1.0, 1.0, unit="", n=20) == "1.00 (no interval: a single point, n = 20)"


def test_interval_plot_leaves_out_a_group_with_nothing_to_draw():
    import pandas as pd

    from evallab.reporting import _plots

    df = pd.DataFrame({"row": ["A", "B", "A", "B"], "est": [0.4, 0.6, float("nan"), float("nan")],
                       "lo": [0.3, 0.5, float("nan"), float("nan")], "hi": [0.5, 0.7, float("nan"), float("nan")],
                       "method": ["judge only", "judge only", "PPI++", "PPI++"]})
    fig = _plots.interval_plot(df, x="row", y="est", low="lo", high="hi", hue="method", title="t", ylabel="y (%)")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["judge only"]
    # the one drawn group sits on its ticks (no slot kept for the empty group)
    assert len(ax.containers) == 1 and list(ax.containers[0].lines[0].get_xdata()) == [0.0, 1.0]


def test_table_markup_is_the_html_pandas_styler_writes():
    """The table markup is written by hand for speed; pandas' Styler (index hidden, a caption, cells passed as
    they are) is the reference, up to the random table id."""
    from evallab.reporting._tables import table_markup

    norm = lambda t: re.sub(r"T_[0-9a-f]{5}", "T_id", t)  # noqa: E731
    heads, cols = ["Judge", "Acc. (%)", "n <i>items</i>"], [["A &amp; B", "C"], ["84.5 [81.1, 87.6]", "—"], ["419", "7"]]
    frame = pd.DataFrame(dict(zip(heads, cols, strict=True)))
    ref = frame.style.hide(axis="index").set_caption("Cap &amp; more").to_html()
    assert norm(table_markup(heads, cols, "Cap &amp; more")) == norm(ref)
    empty = pd.DataFrame({"Judge": pd.Series([], dtype=object)}).style.hide(axis="index").to_html()
    assert norm(table_markup(["Judge"], [[]])) == norm(empty)
