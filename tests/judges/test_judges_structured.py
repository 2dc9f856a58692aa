"""Issue 13: structured verdicts — dialect detection against servers emulating OpenAI/vLLM, llama-cpp-python,
Ollama and a server with no structured output; remembered per endpoint; logprobs recorded."""

from __future__ import annotations

import pytest

from evallab.judges import OpenAICompatibleJudge, build_pairwise, build_pointwise, run_jobs
from evallab.judges._cache import Cache
from evallab.judges._client import format_fields, verdict_logprob, verdict_schema
from evallab.testing import VERDICT_LOGPROB, LocalJudgeServer, SimulatedJudge


def _reqs(n):
    return ([build_pairwise("Pick", f"x{i}", f"y{i}", order=o, metadata={"item_id": f"p{i}"})
             for i in range(n) for o in ("ab", "ba")]
            + [build_pointwise(rubric="R.", pass_criteria=["P"], answer=f"ans {i}", metadata={"item_id": f"q{i}"})
               for i in range(n)])


@pytest.mark.parametrize("dialect,want,first_item_requests", [
    ("openai", "openai", 1),      # json_schema taken at once
    ("llamacpp", "llamacpp", 2),  # json_schema → HTTP 500 once (not retried), then json_object+schema
    ("ollama", "ollama", 3),      # response_format ignored twice (free text), then format
    ("none", "text", 4),          # nothing taken: 3 probes, then the text prompt
])
def test_dialect_is_detected_remembered_and_used(tmp_path, dialect, want, first_item_requests):
    sim = SimulatedJudge(seed=2, reply_format="free")  # a reply that ignored the format is free text
    reqs = _reqs(4)
    with LocalJudgeServer(sim, dialect=dialect) as srv:
        j = OpenAICompatibleJudge(srv.base_url, "sim-judge", structured="auto", cache=tmp_path / "c.sqlite",
                                  max_retries=5, backoff_initial=0.01)
        df = run_jobs(j, reqs, out=tmp_path / "v.jsonl", progress=False)
        st = srv.stats()
        assert j.dialect == want
        # probing asked the first request once per dialect tried, never five times; the probe's reply is reused
        assert st["requests"] == len(reqs) - 1 + first_item_requests
        assert df["verdict"].notna().all()
        want_verdicts = [sim.decide(r.system, r.user)[0] for r in reqs]
        shown = [{"a": "1", "b": "2"}.get(v, v) for v in want_verdicts]
        mapped = [v if r.metadata.get("order") != "ba" else {"1": "2", "2": "1"}[v] for v, r in zip(shown, reqs,
                                                                                                     strict=True)]
        assert df["verdict"].tolist() == mapped
        if want != "text":
            assert df["response_format"].eq(want).all()
        # remembered in the cache file: a new judge (new process memory aside) asks nothing again
        from evallab.judges import _client as C

        C._DIALECT_MEMORY.clear()
        assert Cache(tmp_path / "c.sqlite").get_endpoint(f"dialect {srv.base_url} sim-judge") == want
        srv.reset()
        j2 = OpenAICompatibleJudge(srv.base_url, "sim-judge", structured="auto", cache=tmp_path / "c.sqlite")
        again = run_jobs(j2, reqs, out=tmp_path / "v.jsonl", progress=False)
        assert srv.stats()["requests"] == 0 and j2.dialect == want
        assert again.attrs["run"]["skipped"] == len(reqs)  # sent_digest included the format both times


def test_cache_key_includes_the_response_format():
    r = _reqs(1)[0]
    keys = {OpenAICompatibleJudge("http://h/v1", "m", structured=d).cache_key(r)
            for d in ("off", "openai", "llamacpp", "ollama")}
    assert len(keys) == 4


def test_format_fields_per_dialect():
    s = verdict_schema("pairwise")
    assert s["properties"]["verdict"]["enum"] == ["a", "b", "tie"] and s["required"] == ["verdict", "reason"]
    assert format_fields("openai", "pointwise")["response_format"]["type"] == "json_schema"
    assert format_fields("openai", "pointwise")["response_format"]["json_schema"]["schema"] == \
        verdict_schema("pointwise")
    assert format_fields("llamacpp", "pairwise") == {"response_format": {"type": "json_object", "schema": s}}
    assert format_fields("ollama", "pairwise") == {"format": s}
    assert format_fields("text", "pairwise") == {}


def test_verdict_logprob_is_recorded(tmp_path):
    with LocalJudgeServer(SimulatedJudge(seed=3), dialect="openai") as srv:
        j = OpenAICompatibleJudge(srv.base_url, "sim-judge", structured="openai", logprobs=True)
        df = run_jobs(j, _reqs(2), progress=False)
    assert df["verdict_logprob"].astype(float).tolist() == pytest.approx([VERDICT_LOGPROB] * len(df))
    lp = {"content": [{"token": '{"', "logprob": -0.5}, {"token": "verdict", "logprob": -0.2},
                      {"token": '":"', "logprob": -0.01}, {"token": "b", "logprob": -0.7}]}
    assert verdict_logprob(lp, "b") == -0.7 and verdict_logprob(lp, "a") is None and verdict_logprob(None, "a") is None
    # SmolLM2's tokens as llama.cpp's server returned them: the key split over two tokens, the reason first
    split = {"content": [{"token": t, "logprob": v} for t, v in [
        ("{", -5.6), (' "', -4.4), ("reason", -4.6), ('":', -0.3), (' "', -0.1), ("a", -2.0), ('"', -0.2),
        (" ,", -3.0), ('"', -0.4), ("ver", -0.27), ("dict", -0.01), ('":', -0.02), (' "', -0.05), ("b", -1.3),
        ('"}', -0.6)]]}
    assert verdict_logprob(split, "b") == -1.3  # not the "a" of the reason, nor a token of the key
    assert verdict_logprob(split, "tie") is None
