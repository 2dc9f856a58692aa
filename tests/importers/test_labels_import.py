"""Labels written by ``evallab label`` as the tidy verdict table (annotators as raters), and their agreement through
the existing estimators, against hand counts and ``krippendorff`` / ``sklearn`` computed here."""

from __future__ import annotations

import csv

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from evallab.importers import gold_from_annotators, import_file
from evallab.importers._labels import LABEL_COLUMNS
from evallab.metrics import judge_agreement, krippendorff_alpha

# three annotators, six pairwise items, labels by ORIGINAL output; "ann" undoes one label and relabels it
LABELS = {"ann": ["1", "1", "2", "tie", "1", "2"], "bob": ["1", "2", "2", "tie", "1", "1"],
          "cy": ["1", "1", "2", "1", "not_sure", "2"]}


def _write(path):
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=LABEL_COLUMNS, lineterminator="\n")
        w.writeheader()
        t = 0
        for a, labels in LABELS.items():
            for k, lab in enumerate(labels):
                if a == "ann" and k == 2:
                    w.writerow(dict(item_id=f"q{k}", annotator=a, kind="pairwise", action="label", label="1",
                                    order="ab", note="", labelled_at=f"t{t}"))
                    w.writerow(dict(item_id=f"q{k}", annotator=a, kind="pairwise", action="undo", label="",
                                    order="ab", note="", labelled_at=f"t{t}u"))
                w.writerow(dict(item_id=f"q{k}", annotator=a, kind="pairwise", action="label", label=lab,
                                order="ab" if (k + len(a)) % 2 else "ba", note="", labelled_at=f"t{t}"))
                t += 1
        w.writerow(dict(item_id="q5", annotator="dee", kind="pairwise", action="skip", label="", order="",
                        note="", labelled_at="t99"))
        f.write("q0,dee,pairwise,label,1,ab,,")  # cut short by a kill: no labelled_at, dropped


def test_labels_file_imports_as_the_tidy_table(tmp_path):
    path = tmp_path / "labels.csv"
    _write(path)
    df = import_file(path)
    assert set(df["source_format"]) == {"labels"}
    assert len(df) == 18 and set(df["judge"]) == {"ann", "bob", "cy"}  # dee only skipped
    got = {(r.judge, r.item_id): r.verdict for r in df.itertuples()}
    assert got[("ann", "q2")] == "2"  # the undone "1" is gone
    assert pd.isna(got[("cy", "q4")])  # not_sure → NA
    assert set(df["shown_order"]) == {"ab", "ba"} and set(df["order"]) == {""}


def test_annotator_agreement_with_the_existing_estimators(tmp_path):
    path = tmp_path / "labels.csv"
    _write(path)
    df = import_file(path)
    cats = {"1": 0, "2": 1, "tie": 2}
    data = np.array([[cats.get(v, np.nan) for v in LABELS[a]] for a in LABELS], dtype=float)
    alpha = krippendorff_alpha(df, n_resamples=0).iloc[0]["alpha"]
    assert alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    pair = judge_agreement(df, judges=["ann", "bob"], n_resamples=0).set_index(["judge_a", "judge_b"])
    assert pair.loc[("ann", "bob"), "kappa"] == pytest.approx(cohen_kappa_score(LABELS["ann"], LABELS["bob"]))
    assert pair.loc[("ann", "bob"), "agreement"] == pytest.approx(4 / 6)  # q0, q2, q3, q4 by hand
    gold = gold_from_annotators(df, annotator="judge", label="verdict")
    # by hand: q0 1 (3/3), q1 1 (2/3), q2 2 (3/3), q3 tie (2/3), q4 1 (2 of 2 labels), q5 2 (2/3)
    assert gold.table.set_index("item_id")["gold"].to_dict() == {
        "q0": "1", "q1": "1", "q2": "2", "q3": "tie", "q4": "1", "q5": "2"}
    assert gold.summary["no_majority"] == 0
