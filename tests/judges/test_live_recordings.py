"""Issue 14: the committed live run of SmolLM2-135M on llama.cpp (data/live/smollm2) replays offline to identical
verdicts, and its run card names the model file and its sha256."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evallab.experiments._calibrate import probe_requests
from evallab.experiments._live import CONTENT_FREE, LIVE_DIR, LiveConfig, llmbar_pairs, pair_requests
from evallab.judges import run_jobs
from evallab.judges._replay import ReplayJudge

CARD = LIVE_DIR / "run_card.json"
pytestmark = pytest.mark.skipif(not CARD.exists(), reason="no committed live run (make live)")


def _card() -> dict:
    return json.loads(CARD.read_text(encoding="utf-8"))


def test_run_card_names_the_model_and_versions():
    c = _card()
    assert c["model_file"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert c["model_sha256"] == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    for k in ("llama_cpp_python", "llama_cpp", "server_options", "prompt_versions", "seed", "temperature", "date",
              "wall_seconds", "calls"):
        assert c.get(k) not in (None, "", []), k
    assert "/work/" not in CARD.read_text() and "/root/" not in CARD.read_text()  # no machine path


def _requests(study: str, part: dict, cfg: LiveConfig) -> list:
    """The requests of a part, rebuilt from the code and the run card's config (as `make live` built them)."""
    from evallab.experiments._inflation import build_requests
    from evallab.skills import load_calibration_items

    temp, version = float(part["temperature"]), part["prompt_version"]
    if study in ("position", "drift", "text"):
        pairs = llmbar_pairs(cfg.n_pairs, cfg.subset)
        if study == "text":
            pairs = pairs.head(cfg.text_pairs)
        prompt = "rules" if study == "drift" else "vanilla"
        samples = range(cfg.samples) if temp > 0 else (0,)
        reqs = pair_requests(pairs, prompt=prompt, temperature=temp, samples=samples, seed=cfg.seed,
                             max_tokens=cfg.max_tokens)
    elif study == "inflation":
        reqs = build_requests(load_calibration_items(), cfg.variants, k=cfg.k, seed=cfg.seed, temperature=0.0,
                              max_tokens=cfg.max_tokens)
    else:
        reqs = probe_requests(load_calibration_items(), cfg.variants, k=cfg.k, seed=cfg.seed, content_free=(CONTENT_FREE,),
                              max_tokens=cfg.max_tokens)
    assert {r.prompt_version for r in reqs} == {version}
    return reqs


def _parts():
    if not CARD.exists():
        return []
    return [(s, p) for s, run in _card()["studies"].items() for p in run["parts"]]


@pytest.mark.parametrize("study, part", _parts(), ids=[f"{s}-t{p['temperature']:g}" for s, p in _parts()])
def test_replay_gives_the_recorded_verdicts(study, part):
    c = _card()
    cfg_d = dict(c["config"])
    cfg = LiveConfig(**{**cfg_d, "variants": tuple(cfg_d["variants"]), "studies": tuple(cfg_d["studies"])})
    live = pd.read_json(LIVE_DIR / part["table"], lines=True, dtype=False)
    reqs = _requests(study, part, cfg)
    assert len(live) == len(reqs) == part["requests"]  # every request answered once
    # a keryx recording keeps samples by position: a failed call (no reply, not recorded) also drops the later
    # samples of its (item, order, anchor set) — documented in write_run_recording; those are not replayable
    failed = live["failed"].fillna(False).astype(bool)
    unit = ["item_id", "order", "anchor_set"]
    first_fail = live[failed].groupby(unit)["sample"].min()
    cut = live.join(first_fail.rename("first_failed"), on=unit)
    recorded = live[~(cut["first_failed"].notna() & (cut["sample"] >= cut["first_failed"]))]
    assert len(live) - len(recorded) >= int(failed.sum())
    judge = ReplayJudge(LIVE_DIR / part["recording"], label="SmolLM2-135M")
    keys = set(zip(recorded["item_id"], recorded["order"].fillna(""), recorded["anchor_set"], recorded["sample"],
                   strict=True))
    todo = [r for r in reqs if (r.metadata["item_id"], r.metadata.get("order", ""), r.metadata.get("anchor_set",
                                                                                                   "none"),
                                r.metadata["sample"]) in keys]
    replay = run_jobs(judge, todo, progress=False)
    key = ["item_id", "order", "anchor_set", "sample"]
    a = recorded.assign(order=recorded["order"].fillna("")).set_index(key)["verdict"]
    b = replay.assign(order=replay["order"].fillna("")).set_index(key)["verdict"]
    a = a.astype("object").where(a.notna(), None).sort_index()
    b = b.astype("object").where(b.notna(), None).sort_index()
    assert len(b) == len(a) and a.map(str).to_dict() == b.map(str).to_dict()


def test_live_section_figures_match_a_hand_count():
    """Report 02's live figures recomputed here with plain pandas from the committed greedy table: position
    consistency (same verdict in both orders, both parsed), first-slot preference (decisive replies picking the
    output shown first) and Acc. (mean of the two order accuracies)."""
    from evallab.reporting import _live as live_report
    from evallab.reporting.sections import position as sections

    run = live_report.load()
    sec = sections.live_section(run, n_resamples=50)
    part = next(p for p in _card()["studies"]["position"]["parts"] if float(p["temperature"]) == 0)
    g = pd.read_json(LIVE_DIR / part["table"], lines=True, dtype=False)
    g["verdict"] = g["verdict"].astype("object").where(g["verdict"].notna(), None)
    w = g.pivot_table(index="item_id", columns="order", values="verdict", aggfunc="first")
    both = w.dropna()
    consistency = float((both["ab"] == both["ba"]).mean())
    assert sec.metrics["live_position_consistency"] == pytest.approx(consistency)
    assert sec.metrics["live_pairs"] == len(both)
    dec = g[g["verdict"].isin(["1", "2"])]
    first = ((dec["order"] == "ab") & (dec["verdict"] == "1")) | ((dec["order"] == "ba") & (dec["verdict"] == "2"))
    assert sec.metrics["live_first_slot_preference"] == pytest.approx(float(first.mean()))
    gold = g.dropna(subset=["verdict"])
    acc = [float((d["verdict"].astype(str) == d["gold"].astype(str)).mean()) for _, d in gold.groupby("order")]
    assert sec.metrics["live_acc"] == pytest.approx(sum(acc) / 2)
