"""`make live` as a study file (issue 29, item 3): data/live/study.yaml asks the same request texts and parameters
as the greedy position and drift parts and the sampled position part of `evallab live` — checked against the live
run's own request builder (evallab.experiments._live.pair_requests), on the first pairs."""

from __future__ import annotations

from dataclasses import replace

from evallab.experiments._live import llmbar_pairs, pair_requests
from evallab.judges._study import load_study_file, study_requests
from evallab.paths import data_dir


def _sent(r):
    return ([(m.role, m.content) for m in r.messages], r.temperature, r.seed, r.max_tokens, r.prompt_version,
            r.metadata["item_id"], r.metadata["order"], r.metadata["sample"])


def test_live_study_file_asks_what_evallab_live_asks():
    study = replace(load_study_file(data_dir("live") / "study.yaml"), items_limit=3)
    kind, per_judge = study_requests(study)
    assert kind == "pairwise" and set(per_judge) == {"SmolLM2-135M", "SmolLM2-135M-t0.7"}
    pairs = llmbar_pairs(3)
    greedy = pair_requests(pairs, temperature=0.0, max_tokens=96, seed=0) + \
        pair_requests(pairs, prompt="rules", temperature=0.0, max_tokens=96, seed=0)
    assert sorted(map(_sent, per_judge["SmolLM2-135M"])) == sorted(map(_sent, greedy))
    sampled = pair_requests(pairs, temperature=0.7, samples=range(3), seed=0, max_tokens=96)
    vanilla = [r for r in per_judge["SmolLM2-135M-t0.7"] if r.metadata["strategy"].startswith("vanilla@")]
    assert sorted(map(_sent, vanilla)) == sorted(map(_sent, sampled))
    assert {r.metadata["gold"] for r in greedy} >= {r.metadata["gold"] for r in vanilla}
