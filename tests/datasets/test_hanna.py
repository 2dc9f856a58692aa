"""Issue 28: HANNA as a tidy score table with its declared scale; the authors' printed per-generator means (their
notebook ``data_visualization.ipynb``, cell 19: Beluga-13B, prompt variant 1) reproduced for the generators this
file holds; a rating outside its declared scale refused in one line naming file, row and column; a score table and
a verdict table each refused where the other is needed."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from evallab.datasets import load_hanna, load_study
from evallab.errors import DataError, VerdictTableError
from evallab.paths import data_dir

#: cell 19's printed table (``\result{mean}{bound}``), the rows of the generators in hanna_metric_scores_llm.csv;
#: columns Relevance, Coherence, Empathy, Surprise, Engagement, Complexity, Average
CELL_19 = {
    "GPT-2": (2.57, 2.36, 2.72, 2.59, 2.67, 2.89, 2.63),
    "HINT": (1.57, 1.31, 1.59, 1.49, 1.58, 1.43, 1.49),
    "Human": (3.37, 3.55, 3.42, 3.11, 3.58, 3.48, 3.42),
}
ORDER = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]


@pytest.fixture(scope="module")
def hanna():
    return load_hanna()


def test_the_table_holds_every_story_rater_and_criterion(hanna):
    assert len(hanna) == 1056 * 6 * 23
    assert hanna["item_id"].nunique() == 1056 and hanna["subset"].nunique() == 11
    assert sorted(hanna["criterion"].unique()) == sorted(ORDER)
    humans = hanna[hanna["role"] == "human"]
    assert sorted(humans["judge"].unique()) == ["Human 1", "Human 2", "Human 3"]
    assert set(humans["score"].dropna().unique()) <= {1, 2, 3, 4, 5}
    assert (humans["scale_level"] == "ordinal").all() and humans["scale_step"].eq(1).all()
    judges = hanna[hanna["role"] == "judge"]
    assert judges.groupby(["judge", "strategy"]).ngroups == 20
    assert (judges["scale_level"] == "interval").all() and judges["scale_step"].isna().all()
    assert hanna["verdict"].isna().all()
    below = hanna["raw_score"] < 1  # HANNA's means with an unparsed sample (-1 or 0) averaged in
    assert below.sum() == 1051 and hanna.loc[below, "score"].isna().all()
    assert hanna.loc[below, "error"].str.contains("below 1").all()


def test_the_bundled_copy_is_checksummed_with_source_and_license():
    sums = dict(reversed(line.split("  ", 1)) for line in (data_dir() / "SHA256SUMS").read_text().splitlines())
    for name in ("hanna_metric_scores_llm.csv", "SOURCE.md", "LICENSE"):
        p = data_dir("hanna") / name
        assert sums[f"./hanna/{name}"] == hashlib.sha256(p.read_bytes()).hexdigest(), name


def test_the_authors_per_generator_means_are_reproduced(hanna):
    b = hanna[(hanna["judge"] == "Beluga-13B") & (hanna["strategy"] == "prompt 1")]
    assert b["score"].notna().all()  # Beluga-13B's prompt 1 has no mean below 1: nothing left out
    means = b.groupby(["subset", "criterion"])["score"].mean().unstack()[ORDER]
    for gen, printed in CELL_19.items():
        got = [round(float(v), 2) for v in means.loc[gen]] + [round(float(means.loc[gen].mean()), 2)]
        assert got == list(printed), gen


def test_filters_and_unknown_values(hanna):
    t = load_hanna(criteria=["Surprise"], judges=["ChatGPT"], prompts=[3])
    assert len(t) == 1056 * 4 and set(t["strategy"]) == {"", "prompt 3"}
    with pytest.raises(DataError, match="not in HANNA"):
        load_hanna(criteria=["Humour"])


def test_a_score_outside_the_declared_scale_is_one_line_naming_file_row_and_column(tmp_path):
    p = tmp_path / "ratings.csv"
    pd.DataFrame({"item_id": ["s1", "s2", "s3"], "judge": "Human 1", "verdict": "", "score": [3, 5, 7],
                  "scale_min": 1, "scale_max": 5, "scale_step": 1, "scale_level": "ordinal"}).to_csv(p, index=False)
    with pytest.raises(VerdictTableError) as e:
        load_study(str(p), scores=True)
    msg = str(e.value)
    assert "\n" not in msg and "ratings.csv" in msg and "row 3" in msg and "'score'" in msg and "1–5" in msg
    pd.DataFrame({"item_id": ["s1", "s2"], "judge": "J", "verdict": "", "score": [2.5, 3],
                  "scale_min": 1, "scale_max": 5, "scale_step": 1, "scale_level": "ordinal"}).to_csv(p, index=False)
    with pytest.raises(VerdictTableError, match="not on the declared scale's steps") as e:
        load_study(str(p), scores=True)
    assert e.value.row == 1
    pd.DataFrame({"item_id": ["s1"], "judge": "J", "verdict": "", "score": [3], "scale_min": 1, "scale_max": 5,
                  "scale_level": "nominal"}).to_csv(p, index=False)
    with pytest.raises(VerdictTableError, match="unknown scale_level 'nominal'"):
        load_study(str(p), scores=True)


def test_a_score_table_and_a_verdict_table_are_refused_where_the_other_is_needed(tmp_path):
    scores = tmp_path / "scores.csv"
    pd.DataFrame({"item_id": ["s1", "s2"], "judge": "J", "verdict": "", "score": [3, 4]}).to_csv(scores, index=False)
    verdicts = tmp_path / "verdicts.csv"
    pd.DataFrame({"item_id": ["s1", "s2"], "judge": "J", "verdict": ["pass", "fail"]}).to_csv(verdicts, index=False)
    with pytest.raises(VerdictTableError) as e:
        load_study(str(scores))
    assert "\n" not in str(e.value) and "scores only" in str(e.value) and "scores.csv" in str(e.value)
    with pytest.raises(VerdictTableError) as e:
        load_study(str(verdicts), scores=True)
    assert "\n" not in str(e.value) and "verdicts only" in str(e.value)
    assert len(load_study(str(scores), scores=True)) == 2 and len(load_study(str(verdicts))) == 2
