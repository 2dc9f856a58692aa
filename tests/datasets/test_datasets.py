"""LLMBar loader against counts stated in data/llmbar/SOURCE.md and read directly from the CSV."""

from __future__ import annotations

import csv

import pytest

from evallab.datasets import load_llmbar
from evallab.datasets._llmbar import UNPARSED_ERROR
from evallab.errors import DataError
from evallab.paths import data_dir


@pytest.fixture(scope="module")
def llmbar():
    return load_llmbar(with_text=True)


def test_every_csv_row_gives_an_ab_and_a_ba_reply(llmbar):
    with open(data_dir("llmbar") / "verdicts.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 40413  # SOURCE.md
    v = llmbar.verdicts
    assert len(v) == 2 * 40413
    assert (v["order"] == "ab").sum() == (v["order"] == "ba").sum() == 40413
    empty = sum((r["winner_order_12"] == "") + (r["winner_order_21"] == "") for r in rows)
    assert empty == 348  # SOURCE.md: 348 unparsed replies
    assert v["verdict"].isna().sum() == 348  # kept as NA, not dropped
    assert (v.loc[v["verdict"].isna(), "error"] == UNPARSED_ERROR).all()
    assert v.loc[v["verdict"].notna(), "error"].isna().all()


def test_items_and_orders_map_to_original_index(llmbar):
    assert len(llmbar.items) == 1200
    assert llmbar.items.groupby("subset").size()["LLMBar/Natural"] == 100
    v = llmbar.verdicts
    # first CSV row: CaseStudy/Base_10,0,ChatGPT-0301,CoT,1,1,2 -> ab verdict 1, ba verdict 2
    r = v[(v["item_id"] == "CaseStudy/Base_10#0") & (v["judge"] == "ChatGPT-0301") & (v["strategy"] == "CoT")]
    assert dict(zip(r["order"], r["verdict"], strict=True)) == {"ab": "1", "ba": "2"}
    assert set(r["gold"]) == {"1"} and set(r["model"]) == {"gpt-35-turbo-0301"}
    assert llmbar.items.loc[llmbar.items["item_id"] == "CaseStudy/Base_10#0", "input"].str.contains("75\\+48").all()


def test_filters_and_prefix():
    d = load_llmbar(subsets=["LLMBar/Adversarial"], judges=["GPT-4"], strategies=["Vanilla"])
    assert set(d.verdicts["subset"]) == {f"LLMBar/Adversarial/{s}" for s in
                                         ("Neighbor", "GPTInst", "GPTOut", "Manual")}
    assert len(d.verdicts) == 2 * (134 + 92 + 47 + 46)


def test_unknown_filter_value_is_named():
    with pytest.raises(DataError, match="available"):
        load_llmbar(judges=["GPT-5"])


def test_missing_folder(tmp_path):
    with pytest.raises(DataError, match="verdicts.csv"):
        load_llmbar(tmp_path)
