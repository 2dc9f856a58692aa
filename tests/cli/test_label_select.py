"""``evallab label ITEMS --select N``: the selection file, the plan it prints, and one-line refusals (exit 2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cli_helper import run_cli


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    n = 60
    ids = [f"q{i}" for i in range(n)]
    share = rng.choice([0, 1 / 3, 2 / 3, 1], n)
    verdict = [("pass" if rng.random() < s else "fail") for s in np.repeat(share, 3)]
    pd.DataFrame({"item_id": ids, "answer": [f"answer {i}" for i in range(n)], "rubric": "is it right?"}).to_csv(
        tmp_path / "items.csv", index=False)
    pd.DataFrame({"item_id": np.repeat(ids, 3), "judge": "J", "sample": np.tile([0, 1, 2], n),
                  "verdict": verdict}).to_csv(tmp_path / "verdicts.csv", index=False)
    return tmp_path


@pytest.mark.parametrize("strategy", ["random", "stratified", "active"])
def test_select_writes_the_chosen_items_with_their_probabilities(files, capsys, strategy):
    out = files / "selection.csv"
    code, text = run_cli(["label", files / "items.csv", "--select", 12, "--strategy", strategy, "--seed", 4,
                          "--verdicts", files / "verdicts.csv", "--out", out], capsys)
    assert code == 0, text
    sel = pd.read_csv(out)
    items = pd.read_csv(files / "items.csv").set_index("item_id")
    assert sel["selected"].all() and sel["strategy"].eq(strategy).all()
    assert sel["item_id"].is_unique and sel["item_id"].isin(items.index).all()
    assert (sel["answer"] == items.loc[sel["item_id"], "answer"].to_numpy()).all()  # an items table for the page
    assert sel["label_order"].tolist() == list(range(1, len(sel) + 1))
    assert np.allclose(sel["weight"], 1 / sel["inclusion_probability"])
    if strategy != "active":
        assert len(sel) == 12
    if strategy == "random":
        assert np.allclose(sel["inclusion_probability"], 12 / 60)
    for s in ("random", "stratified", "active"):
        assert f"  {s} " in text
    assert "× random 1.00" in text and "half-width" in text
    # the file is all the estimate needs besides the judge's table: gold on the chosen items, weighted by 1/π
    from evallab.metrics import selected_rate

    table = pd.read_csv(files / "verdicts.csv")
    table["gold"] = np.where(table["item_id"].isin(sel["item_id"]), "pass", None)
    r = selected_rate(table, sel).iloc[0]
    assert r["labels"] == len(sel) and r["rate_low"] <= r["rate"] <= r["rate_high"]


def test_select_refuses_bad_input_in_one_line(files, capsys):
    items, verdicts = files / "items.csv", files / "verdicts.csv"
    cases = [
        (["--select", 12, "--strategy", "active"], "needs the judge's verdicts"),
        (["--select", 12, "--strategy", "best", "--verdicts", verdicts], "--strategy 'best'"),
        (["--select", 60, "--verdicts", verdicts], "from 2 to 59"),
    ]
    for extra, message in cases:
        code, text = run_cli(["label", items, "--out", files / "new.csv", *extra], capsys)
        assert code == 2 and message in text and "Traceback" not in text, text
        assert len(text.strip().splitlines()) == 1 and not (files / "new.csv").exists()
    one = files / "one.csv"  # one reply per item, no confidence: active is refused, naming the file
    pd.read_csv(verdicts).query("sample == 0").to_csv(one, index=False)
    code, text = run_cli(["label", items, "--select", 12, "--strategy", "active", "--verdicts", one, "--out",
                          files / "new.csv"], capsys)
    assert code == 2 and str(one) in text and "confidence" in text and len(text.strip().splitlines()) == 1
    (files / "taken.csv").write_text("x\n")
    code, text = run_cli(["label", items, "--select", 12, "--out", files / "taken.csv"], capsys)
    assert code == 2 and "the file exists" in text and (files / "taken.csv").read_text() == "x\n"
    code, text = run_cli(["label", items, "--out", files / "labels.csv"], capsys)
    assert code == 2 and "--annotator is missing" in text
