"""A new user's wide 1–10 ratings table through ``evallab import``: the criterion column mapped as a design column
(and the scale columns set), the humans marked with ``--humans``, score-only rows not errors, every message naming
the file, and a labels file with a wrong ``kind`` named by row with the kinds expected. Every count made here."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest
from cli_helper import run_cli
from scipy.stats import spearmanr

import evallab.metrics as M
from evallab import verdicts as V
from evallab.datasets import load_verdicts
from evallab.errors import DataError, DesignError, ImportDataError
from evallab.importers import import_file
from evallab.importers._labels import LABEL_COLUMNS

RATERS = ["gpt4o_score", "llama3_score", "rater_anna", "rater_ben"]
ASPECTS = ["fluency", "relevance"]
WIDE = ["--wide", ",".join(RATERS)]


@pytest.fixture
def wide2(tmp_path):
    """Six documents × two aspects, one 1–10 score per rater column (one rows per (doc, aspect))."""
    rng = np.random.default_rng(7)
    rows = [{"doc": f"d{d}", "aspect": a, **{r: int(rng.integers(1, 11)) for r in RATERS}}
            for d in range(6) for a in ASPECTS]
    p = tmp_path / "wide2.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    return p, pd.DataFrame(rows)


def test_the_criterion_column_maps_and_the_humans_are_marked(tmp_path, wide2, capsys):
    p, src = wide2
    out = tmp_path / "t.csv"
    code, text = run_cli(["import", p, *WIDE, "--map", "item_id=doc,criterion=aspect", "--humans",
                          "rater_anna,rater_ben", "--set", "scale_min=1,scale_max=10,scale_step=1,"
                          "scale_level=ordinal", "--out", out], capsys)
    assert code == 0, text
    t = load_verdicts(out)
    assert len(t) == len(src) * len(RATERS)
    got = {(r.item_id, r.criterion, r.judge): r.score for r in t.itertuples()}
    want = {(r["doc"], r["aspect"], j): float(r[j]) for _, r in src.iterrows() for j in RATERS}
    assert got == want
    roles = t.groupby("judge")["role"].unique().map(list).to_dict()
    assert roles == {"gpt4o_score": ["judge"], "llama3_score": ["judge"], "rater_anna": ["human"],
                     "rater_ben": ["human"]}
    # the scale estimators find the humans and the criteria without being told: Spearman by scipy on the file
    r = M.score_agreement(t, n_resamples=0, systems=None)
    assert sorted(set(r["rater"])) == ["gpt4o_score", "llama3_score"] and sorted(set(r["criterion"])) == ASPECTS
    for a in ASPECTS:
        s = src[src["aspect"] == a].sort_values("doc")
        ref = (s["rater_anna"] + s["rater_ben"]) / 2
        row = r[(r["criterion"] == a) & (r["rater"] == "gpt4o_score")].iloc[0]
        assert row["spearman"] == pytest.approx(spearmanr(s["gpt4o_score"], ref).statistic)


def test_an_unmapped_design_column_is_named_in_the_duplicated_key_error(wide2, capsys, tmp_path):
    p, src = wide2
    code, text = run_cli(["import", p, *WIDE, "--map", "item_id=doc", "--out", tmp_path / "t.csv"], capsys)
    assert code == 2 and "Traceback" not in text
    # rows 1 and 2 of the file are d0's two aspects: the same key for the first rater column
    assert str(p) in text and "rows 1 and 2" in text and "column 'aspect'" in text
    assert "--map criterion=aspect" in text and len(text.strip().splitlines()) == 1


def test_every_option_error_names_the_file(wide2):
    p, _ = wide2
    cases = [dict(columns="item_id=doc,kriterion=aspect"), dict(columns="item_id"),
             dict(columns="item_id=doc", thresholds=(7, 4)),
             dict(columns="item_id=doc,judge=aspect", constants="judge=x"),
             dict(columns="item_id=doc", wide=RATERS, humans="rater_zoe")]
    for kw in cases:
        with pytest.raises(ImportDataError) as e:
            import_file(p, "table", **kw)
        assert str(e.value).startswith(str(p)) and "<in-memory" not in str(e.value), kw
    with pytest.raises(ImportDataError, match="'kriterion' is not a tidy or design column"):
        import_file(p, "table", columns="item_id=doc,kriterion=aspect")
    with pytest.raises(ImportDataError, match="human rater 'rater_zoe' is not a judge"):
        import_file(p, "table", columns="item_id=doc,criterion=aspect", wide=RATERS, humans="rater_zoe")


def test_a_declared_scale_set_on_import_is_checked(tmp_path):
    p = tmp_path / "s.csv"
    pd.DataFrame({"q": ["a", "b"], "j": [3, 11]}).to_csv(p, index=False)
    with pytest.raises(DataError) as e:
        import_file(p, "table", columns="item_id=q", wide="j", constants="scale_min=1,scale_max=10,"
                    "scale_level=ordinal")
    assert str(e.value).startswith(str(p)) and "outside the declared 1–10" in str(e.value)


def test_score_only_rows_are_not_errors(tmp_path, wide2, capsys):
    p, src = wide2
    out = tmp_path / "t.csv"
    code, text = run_cli(["import", p, *WIDE, "--map", "item_id=doc,criterion=aspect", "--out", out], capsys)
    assert code == 0, text
    n = len(src) * len(RATERS)
    lines = text.splitlines()
    assert f"verdicts: none — a score table: {n} scores, no verdicts" in lines
    assert not any(line.startswith("NA:") for line in lines)
    t = load_verdicts(out)
    assert t["error"].isna().all() and len(t[t["error"].isna()]) == n
    assert V.is_score_table(t)
    with pytest.raises(DesignError, match="this is a score table"):  # the verdict estimators still refuse it
        M.accuracy(t)
    # a long score table: the one row without a score is the one NA, and says why
    q = tmp_path / "long.csv"
    pd.DataFrame({"q": ["a", "b", "c"], "rating": ["4", "", "9"], "judge": "j"}).to_csv(q, index=False)
    code, text = run_cli(["import", q, "--map", "item_id=q,score=rating", "--out", tmp_path / "l.csv"], capsys)
    assert code == 0, text
    assert "verdicts: none — a score table: 2 scores, no verdicts" in text and "NA: 1 (no score)" in text
    t = import_file(q, "table", columns="item_id=q,score=rating")
    assert t["error"].isna().tolist() == [True, False, True]
    assert t["error"].iloc[1] == "no score (empty or NA) in column 'rating'"


def _labels(path, rows):
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=LABEL_COLUMNS)
        w.writeheader()
        for i, (kind, label) in enumerate(rows):
            w.writerow(dict(item_id=f"q{i}", annotator="anna", kind=kind, action="label", label=label, order="",
                            note="", labelled_at=f"t{i}"))


def test_a_labels_file_with_a_wrong_kind_names_the_row_and_the_kinds(tmp_path, capsys):
    p = tmp_path / "labels.csv"
    _labels(p, [("scale", "3"), ("score", "7")])
    code, text = run_cli(["import", p, "--out", tmp_path / "t.csv"], capsys)
    assert code == 2 and "Traceback" not in text
    assert str(p) in text and "row 2" in text and "column 'kind'" in text and "'score'" in text
    assert "pointwise|pairwise|scale" in text and "fits kind scale" in text
    _labels(p, [("pointwise", "pass"), ("pointwise", "7")])
    with pytest.raises(DataError) as e:
        import_file(p, "labels")
    assert (e.value.path, e.value.row, e.value.column) == (str(p), 2, "label")
    assert "pass|warn|fail" in e.value.message
    _labels(p, [("scale", "high")])
    with pytest.raises(DataError) as e:
        import_file(p, "labels")
    assert (e.value.row, e.value.column) == (1, "label") and "1..9" in e.value.message
    _labels(p, [("pairwise", "tie"), ("scale", "4")])  # the right kinds still import
    t = import_file(p, "labels")
    assert t["verdict"].tolist()[0] == "tie" and t["score"].tolist()[1] == 4.0


def test_an_unmapped_sample_column_is_suggested_as_the_sample(tmp_path, capsys):
    """A repeated-sample column left unmapped (0, 1, 2 within each (item, judge)): the duplicated-key hint names
    --map sample=rep first (repeated draws) and a design column second (different questions); the first two rows
    of one key, counted here, are named. A column of words (aspect) keeps the design column first."""
    rows = [{"item_id": f"i{i}", "judge": j, "rep": s, "score": 1 + (i + s) % 10}
            for i in range(4) for j in ("judgeA", "judgeB") for s in range(3)]
    p = tmp_path / "rep.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    first, second = [n for n, r in enumerate(rows, start=1) if (r["item_id"], r["judge"]) == ("i0", "judgeA")][:2]
    code, text = run_cli(["import", p, "--format", "table", "--out", tmp_path / "t.csv"], capsys)
    assert code == 2 and len(text.strip().splitlines()) == 1 and "Traceback" not in text
    assert f"rows {first} and {second} (judge 'judgeA', item_id 'i0') differ only in column 'rep'" in text
    assert text.index("--map sample=rep") < text.index("--map criterion=rep")
    assert "repeated draws" in text and "different questions" in text
    code, _ = run_cli(["import", p, "--format", "table", "--map", "sample=rep", "--out", tmp_path / "t.csv"], capsys)
    assert code == 0 and len(load_verdicts(tmp_path / "t.csv")) == len(rows)


def test_a_design_column_of_words_keeps_the_criterion_hint_first(wide2, capsys, tmp_path):
    p, _ = wide2
    code, text = run_cli(["import", p, *WIDE, "--map", "item_id=doc", "--out", tmp_path / "t.csv"], capsys)
    assert code == 2 and text.index("--map criterion=aspect") < text.index("--map sample=aspect")
