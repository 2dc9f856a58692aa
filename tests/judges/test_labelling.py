"""The labelling server without a browser: the token, the lock, undo/skip/resume, the kinds, the tidy table."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pandas as pd
import pytest
from label_helper import kill, pairwise_items, start

from evallab.errors import DataError
from evallab.importers._labels import LABEL_COLUMNS, NOT_SURE, read_labels
from evallab.judges._labelling import Session, load_items


def test_no_token_is_refused_and_writes_nothing(tmp_path):
    items, out = pairwise_items(tmp_path / "items.csv"), tmp_path / "labels.csv"
    proc, url = start(items, out, "ann")
    try:
        base, token = url.split("?token=")
        ok = httpx.post(f"{base}api/act?token={token}", json={"action": "label", "item_id": "q00", "choice": "left"})
        assert ok.status_code == 200
        before = out.read_bytes()
        body = {"action": "label", "item_id": "q01", "choice": "left"}
        assert httpx.get(base).status_code == 403
        assert httpx.get(f"{base}api/state").status_code == 403
        assert httpx.post(f"{base}api/act", json=body).status_code == 403
        assert httpx.post(f"{base}api/act?token=wrong{token}", json=body).status_code == 403
        assert httpx.post(f"{base}api/act", json=body, headers={"X-Token": token[:-1]}).status_code == 403
        assert out.read_bytes() == before
        # a second server on the same file is refused, as a second `evallab judge` run is
        second = subprocess.run([sys.executable, "-m", "evallab", "label", str(items), "--out", str(out),
                                 "--annotator", "bob", "--no-browser"], capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        assert "being written by another labelling server" in second.stderr and "Traceback" not in second.stderr
    finally:
        kill(proc)


def test_blind_state_shows_no_gold_or_verdict(tmp_path):
    kind, items = load_items(pairwise_items(tmp_path / "items.csv"))
    s = Session(kind, items, tmp_path / "labels.csv", "ann")
    shown = s.state()["item"]
    assert set(shown) == {"item_id", "instruction", "left", "right"}
    assert {shown["left"], shown["right"]} == {"first output 0", "second output 0"}


def test_undo_skip_and_resume(tmp_path):
    kind, items = load_items(pairwise_items(tmp_path / "items.csv", 5))
    out = tmp_path / "labels.csv"
    s = Session(kind, items, out, "ann")
    assert s.act({"action": "label", "item_id": "q00", "choice": "left", "note": "a, \"quoted\"\nnote"}) == (200, "")
    assert s.act({"action": "skip", "item_id": "q01"}) == (200, "")
    assert s.act({"action": "label", "item_id": "q00", "choice": "left"})[0] == 409  # not the current item
    assert s.act({"action": "label", "item_id": "q02", "choice": "tie"}) == (200, "")
    assert s.act({"action": "undo"}) == (200, "")  # cancels q02's tie
    assert s.state()["item"]["item_id"] == "q02"
    assert s.act({"action": "label", "item_id": "q02", "choice": NOT_SURE}) == (200, "")
    order_q00 = s.order_of("q00")
    # a restart (a new session on the same file) resumes at q03; another annotator starts at q00
    assert Session(kind, items, out, "ann").state()["item"]["item_id"] == "q03"
    bob = Session(kind, items, out, "bob")
    assert bob.state()["item"]["item_id"] == "q00"
    assert bob.act({"action": "label", "item_id": "q00", "choice": "right"}) == (200, "")
    raw = pd.read_csv(out, keep_default_na=False, dtype=str)
    assert tuple(raw.columns) == LABEL_COLUMNS
    assert list(raw["action"]) == ["label", "skip", "label", "undo", "label", "label"]
    assert raw["note"].iloc[0] == 'a, "quoted"\nnote'
    tidy = read_labels(out).set_index(["judge", "item_id"])
    assert sorted(tidy.index) == [("ann", "q00"), ("ann", "q02"), ("bob", "q00")]
    # "left" is output 1 when shown ab, output 2 when shown ba: the verdict names the ORIGINAL output
    assert tidy.loc[("ann", "q00"), "verdict"] == ("1" if order_q00 == "ab" else "2")
    assert tidy.loc[("ann", "q00"), "shown_order"] == order_q00 and tidy.loc[("ann", "q00"), "order"] == ""
    assert pd.isna(tidy.loc[("ann", "q02"), "verdict"]) and tidy.loc[("ann", "q02"), "error"] == NOT_SURE


def test_pointwise_and_scale_items(tmp_path):
    path = tmp_path / "items.jsonl"
    pd.DataFrame({"item_id": ["a", "b"], "rubric": ["Is it polite?"] * 2, "answer": ["Thanks!", "No."],
                  "gold": ["pass", "fail"]}).to_json(path, orient="records", lines=True)
    kind, items = load_items(path)
    s = Session(kind, items, tmp_path / "pw.csv", "ann")
    assert kind == "pointwise" and s.choices() == ["pass", "warn", "fail", NOT_SURE]
    assert "gold" not in s.state()["item"]
    s.act({"action": "label", "item_id": "a", "choice": "warn"})
    assert s.act({"action": "label", "item_id": "b", "choice": "left"})[0] == 400
    kind, items = load_items(path, scale=5)
    sc = Session(kind, items, tmp_path / "sc.csv", "ann", scale=5)
    assert sc.choices() == ["1", "2", "3", "4", "5", NOT_SURE]
    sc.act({"action": "label", "item_id": "a", "choice": "4"})
    assert read_labels(tmp_path / "pw.csv")["verdict"].tolist() == ["warn"]
    assert read_labels(tmp_path / "sc.csv")["score"].tolist() == [4.0]
    with pytest.raises(DataError, match="expected 2 to 9"):
        load_items(path, scale=12)


def test_duplicate_item_refused(tmp_path):
    path = tmp_path / "items.csv"
    pd.DataFrame({"item_id": ["a", "a"], "answer": ["x", "y"]}).to_csv(path, index=False)
    with pytest.raises(DataError, match="'a' appears twice"):
        load_items(path)
