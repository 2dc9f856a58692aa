"""Issue 27: today's reply shapes, failure kinds, parameter dialects, quota errors and reasoning cost — each against
the local server, asserting the table and the HTTP requests paid (counted by the server), computed here from the
simulated judge and the bodies, never from what the client printed."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from evallab.errors import JudgeFatalError, QuotaError
from evallab.judges import OpenAICompatibleJudge, build_pointwise, make_judge, run_jobs
from evallab.judges._cache import body_key, canonical_json
from evallab.judges._client import _PARAM_MEMORY, param_refusal, split_parts
from evallab.judges._runner import describe_run
from evallab.testing import (
    BILLING_BODY,
    QUOTA_BODY,
    REFUSAL_TEXT,
    Fault,
    LocalJudgeServer,
    SimulatedJudge,
    reasoning_text,
)

SIM = SimulatedJudge(seed=3, pass_rate=0.5)


def _reqs(n, **kw):
    return [build_pointwise(rubric="Wraps the error.", pass_criteria=["Uses %w."], answer=f"answer {i}",
                            metadata={"item_id": f"i{i}"}, **kw) for i in range(n)]


def _judge(srv, **kw):
    kw = {"max_concurrency": 1, "max_retries": 3, "timeout": 5.0, "backoff_initial": 0.01, "backoff_max": 0.02,
          **kw}
    return OpenAICompatibleJudge(srv.base_url, "sim-judge", **kw)


def _expected(reqs):
    """The verdicts the simulated judge gives (its decision, read without any client)."""
    return [SIM.decide(r.system, r.user, 0)[0] for r in reqs]


def _col(df, name):
    return df[name].tolist() if name in df else [None] * len(df)


@pytest.fixture(autouse=True)
def _fresh_memory():
    _PARAM_MEMORY.clear()
    yield
    _PARAM_MEMORY.clear()


@pytest.mark.parametrize("shape", ["parts", "reasoning_content", "reasoning", "thinking"])
def test_each_reply_shape_gives_the_verdict_of_the_final_answer_and_keeps_the_reasoning(shape):
    reqs = _reqs(6)
    with LocalJudgeServer(SIM, reply_shape=shape) as srv:
        df = run_jobs(_judge(srv), reqs, progress=False)
        assert srv.stats()["requests"] == 6
    assert df["verdict"].tolist() == _expected(reqs)
    assert df["reasoning"].tolist() == [reasoning_text(None)] * 6  # kept apart, in its own column
    assert df["reason"].str.startswith("simulated:").all()  # the reason is the answer's, not the reasoning
    assert df["error"].isna().all() and not df["failed"].any() and "failure_kind" not in df


def test_reasoning_is_kept_as_a_digest_and_length_when_asked():
    import hashlib

    with LocalJudgeServer(SIM, reply_shape="reasoning_content") as srv:
        df = run_jobs(_judge(srv, keep_reasoning=False), _reqs(2), progress=False)
    text = reasoning_text(None)
    assert "reasoning" not in df
    assert df["reasoning_sha256"].tolist() == [hashlib.sha256(text.encode()).hexdigest()] * 2
    assert df["reasoning_chars"].tolist() == [len(text)] * 2


def test_a_verdict_only_in_the_reasoning_is_na_unless_the_flag_reads_it(tmp_path):
    """vllm#19222: content null, the verdict in reasoning_content — one request each (not 3 greedy retries); NA with
    the reason naming the flag; with verdict_from_reasoning=True the same cached replies give the verdicts."""
    reqs = _reqs(5)
    want = _expected(reqs)
    with LocalJudgeServer(SIM, reply_shape="reasoning_only") as srv:
        df = run_jobs(_judge(srv, cache=tmp_path / "c.sqlite"), reqs, progress=False)
        assert srv.stats()["requests"] == 5
        assert df["verdict"].isna().all() and not df["failed"].any()
        assert _col(df, "failure_kind") == ["reasoning_only"] * 5
        for err, v in zip(df["error"], want, strict=True):
            assert f"the reasoning holds a verdict ({v!r})" in err and "verdict_from_reasoning=True" in err
        srv.reset()
        again = run_jobs(_judge(srv, cache=tmp_path / "c.sqlite", verdict_from_reasoning=True), reqs,
                         progress=False)
        assert srv.stats()["requests"] == 0  # re-parsed from the cache: nothing paid twice
    assert again["verdict"].tolist() == want
    assert _col(again, "verdict_source") == ["reasoning"] * 5
    assert again.attrs["run"]["from_reasoning"] == 5


@pytest.mark.parametrize("temperature,seed", [(0.0, None), (0.7, 11)])
def test_a_refusal_under_greedy_or_seeded_decoding_is_kept_and_not_asked_again(tmp_path, temperature, seed):
    reqs = [replace(r, temperature=temperature, seed=seed) for r in _reqs(4)]
    out = tmp_path / "v.jsonl"
    with LocalJudgeServer(SIM, faults=[Fault("refusal", times=-1)]) as srv:
        df = run_jobs(_judge(srv, cache=tmp_path / "c.sqlite"), reqs, out=out, progress=False)
        assert srv.stats()["requests"] == 4  # one each
        assert _col(df, "failure_kind") == ["refusal"] * 4 and df["verdict"].isna().all()
        assert not df["failed"].any() and df["raw"].tolist() == [REFUSAL_TEXT] * 4
        assert all(e.startswith(f"refusal: {REFUSAL_TEXT}") and "not asked again" in e for e in df["error"])
        assert df.attrs["run"]["failure_kinds"] == {"refusal": 4}
        assert "4 refusal" in describe_run(df.attrs["run"])
        srv.reset()
        run_jobs(_judge(srv, cache=tmp_path / "c.sqlite"), reqs, out=out, progress=False)
        assert srv.stats()["requests"] == 0  # a rerun pays nothing for replies that would be the same


@pytest.mark.parametrize("refusals,verdict", [(2, True), (-1, False)])
def test_a_refusal_when_sampling_without_a_seed_is_asked_again_at_once(refusals, verdict):
    reqs = [replace(r, temperature=0.7) for r in _reqs(1)]
    with LocalJudgeServer(SIM, faults=[Fault("refusal", times=refusals)]) as srv:
        j = _judge(srv, max_retries=3, backoff_initial=0.5)
        df = run_jobs(j, reqs, progress=False)
        paid = srv.stats()["requests"]
    assert paid == (3 if verdict else 4)  # 2 refusals then a verdict; or 1 + max_retries refusals
    assert [w for _, w in j.stats.waits] == [0.0] * (paid - 1)  # at once: nothing to wait for
    if verdict:
        assert df["verdict"].tolist() == [SIM.decide(reqs[0].system, reqs[0].user, 0)[0]]
    else:
        assert _col(df, "failure_kind") == ["refusal"] and "asked 4 times" in df["error"].iloc[0]
        assert df["raw"].iloc[0] == REFUSAL_TEXT and not df["failed"].iloc[0]


def test_an_empty_reply_under_greedy_decoding_fails_at_once_with_the_reason():
    with LocalJudgeServer(SIM, faults=[Fault("empty_content", times=-1)]) as srv:
        df = run_jobs(_judge(srv, max_retries=5), _reqs(3), progress=False)
        assert srv.stats()["requests"] == 3
    assert _col(df, "failure_kind") == ["empty"] * 3 and df["verdict"].isna().all()
    assert all("empty reply (finish_reason stop); not asked again: greedy" in e for e in df["error"])


@pytest.mark.parametrize("kind,body,status", [("insufficient_quota", QUOTA_BODY, 429),
                                              ("billing_hard_limit", BILLING_BODY, 400)])
def test_quota_and_billing_errors_stop_the_run_at_once(tmp_path, kind, body, status):
    """langchainjs#1929: a 429 insufficient_quota was retried like a rate limit (16 requests for 4 items); it now
    stops with one line after the first request, as a 401 does."""
    with LocalJudgeServer(SIM, faults=[Fault(kind, times=-1)]) as srv:
        with pytest.raises(QuotaError) as info:
            run_jobs(_judge(srv, max_retries=5), _reqs(4), out=tmp_path / "v.jsonl", progress=False)
        assert srv.stats()["requests"] == 1
    msg = str(info.value)
    assert isinstance(info.value, JudgeFatalError) and info.value.status == status
    assert body["error"]["message"] in msg and body["error"]["code"] in msg and "\n" not in msg


@pytest.mark.parametrize("style", ["openai", "vllm"])
def test_refused_parameters_are_detected_once_adapted_remembered_and_recorded(tmp_path, style):
    """inspect_ai#1074/#573: o-series models refuse max_tokens and temperature 0. Each refusal costs one 400, once
    per (base URL, model): 6 items with both refused are 6 + 2 requests; the next judge in the process, and one in a
    new process reading the cache file, pay no 400 at all."""
    reqs = _reqs(6, max_tokens=64)
    with LocalJudgeServer(SIM, refuse_params=("max_tokens", "temperature"), error_style=style) as srv:
        j = _judge(srv, cache=tmp_path / "c.sqlite")
        df = run_jobs(j, reqs, progress=False)
        assert srv.stats()["requests"] == 6 + 2 and srv.stats()["param_refusals"] == 2
        assert df["verdict"].tolist() == _expected(reqs)
        said = "max_tokens sent as max_completion_tokens; temperature 0.0 not sent (model default)"
        assert df["adapted"].tolist() == [said] * 6
        assert df.attrs["run"]["adapted"] == {said: 6}
        assert f"sent otherwise than asked in 6 rows: {said}" in describe_run(df.attrs["run"])
        # the cache key and the sent digest follow the body actually sent
        enc = j.encoded(reqs[0])
        sent = json.loads(enc.payload)
        assert sent["max_completion_tokens"] == 64 and "max_tokens" not in sent and "temperature" not in sent
        assert enc.cache_key == body_key(srv.base_url, sent, 0)
        srv.reset()
        run_jobs(_judge(srv), _reqs(3, max_tokens=64), progress=False)  # same process: remembered
        assert srv.stats()["param_refusals"] == 0 and srv.stats()["requests"] == 3
        _PARAM_MEMORY.clear()  # a new process: learnt from the cache file
        srv.reset()
        again = run_jobs(_judge(srv, cache=tmp_path / "c.sqlite"), reqs, progress=False)
        assert srv.stats()["requests"] == 0 and again["cached"].all()  # the adapted bodies' keys


def test_an_explicit_parameter_override_sends_what_the_model_takes_from_the_first_request():
    reqs = _reqs(4, max_tokens=32)
    with LocalJudgeServer(SIM, refuse_params=("max_tokens", "temperature")) as srv:
        j = make_judge(srv.base_url, "sim-judge", cache=False, max_concurrency=1,
                       param_adapt={"max_tokens": "max_completion_tokens", "temperature": "drop"})
        df = run_jobs(j, reqs, progress=False)
        assert srv.stats()["requests"] == 4 and srv.stats()["param_refusals"] == 0
    assert df["verdict"].tolist() == _expected(reqs)


def test_a_parameter_that_cannot_be_adapted_stops_the_run():
    """The renamed max_completion_tokens refused too: nothing left to adapt, the 400 stops the run."""
    with LocalJudgeServer(SIM, refuse_params=("max_tokens", "max_completion_tokens")) as srv:
        with pytest.raises(JudgeFatalError, match="max_completion_tokens.*stopped without retrying"):
            run_jobs(_judge(srv), _reqs(3, max_tokens=16), progress=False)
        assert srv.stats()["requests"] == 2


def test_param_refusal_reads_the_400_bodies_openai_and_vllm_send():
    openai = {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                         "'max_completion_tokens' instead.", "type": "invalid_request_error", "param": "max_tokens",
              "code": "unsupported_parameter"}
    assert param_refusal(openai) == ("max_tokens", "max_completion_tokens")
    value = {"message": "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) "
                        "value is supported.", "type": "invalid_request_error", "param": "temperature",
             "code": "unsupported_value"}
    assert param_refusal(value) == ("temperature", None)
    no_param = {"message": "Unsupported parameter: 'top_p' is not supported with this model.", "code": None}
    assert param_refusal(no_param) == ("top_p", None)
    assert param_refusal({"message": "messages: field required", "type": "BadRequestError", "code": 400}) is None
    assert param_refusal({"message": "Unsupported parameter: 'messages'", "param": "messages"}) is None


def test_split_parts_joins_text_parts_and_keeps_thinking_apart():
    magistral = [{"type": "thinking", "thinking": [{"type": "text", "text": "Hmm, (a)? "},
                                                   {"type": "text", "text": "No."}]},
                 {"type": "text", "text": "Verdict: "}, {"type": "text", "text": "(b)"}]
    assert split_parts(magistral) == ("Verdict: (b)", "Hmm, (a)? No.")
    assert split_parts(None) == ("", "")
    assert split_parts([{"type": "image_url", "image_url": {}}, "PASS"]) == ("PASS", "")


def test_reasoning_effort_is_sent_a_design_column_and_its_tokens_and_cached_tokens_are_priced():
    """The same items at two efforts are distinct rows (strategy ``@effort``); reasoning tokens (the server's
    ``completion_tokens_details``) and cached prompt tokens are counted, the cached ones priced at the cached
    rate; the run summary gives the cost per parsed verdict."""
    price = (1.0, 4.0, 0.25)  # USD per 1M: input, output, cached input
    base = _reqs(3)
    reqs = [replace(r, reasoning_effort=e) for e in ("low", "high") for r in base]
    with LocalJudgeServer(SIM, reply_shape="reasoning_content", cached_tokens=20) as srv:
        j = _judge(srv, prices={"sim-judge": list(price)})
        df = run_jobs(j, reqs, progress=False)
        assert srv.stats()["requests"] == 6
    assert df["reasoning_effort"].tolist() == ["low"] * 3 + ["high"] * 3
    assert df["strategy"].tolist() == [f"{base[0].prompt_version}@{e}" for e in ("low", "high") for _ in base]
    assert df["verdict"].tolist() == _expected(base) * 2
    costs = []
    for r, row in zip(reqs, df.to_dict("records"), strict=True):
        sent = json.loads(j.encoded(r).payload)
        assert sent["reasoning_effort"] == r.reasoning_effort
        inp = len(j.encoded(r).payload) // 4
        text = SIM.reply_text(r.system, r.user, 0)
        think = len(reasoning_text(r.reasoning_effort)) // 4
        out = len(text) // 4 + think
        assert (row["input_tokens"], row["output_tokens"], row["reasoning_tokens"], row["cached_tokens"]) == \
            (inp, out, think, 20)
        costs.append(((inp - 20) * price[0] + 20 * price[2] + out * price[1]) / 1e6)
        assert row["cost_usd"] == pytest.approx(costs[-1])
    run = df.attrs["run"]
    assert run["reasoning_tokens"] == sum(df["reasoning_tokens"]) and run["cached_tokens"] == 6 * 20
    assert run["cost_per_verdict"] == pytest.approx(sum(costs) / 6)
    assert df.loc[df["reasoning_effort"] == "high", "reasoning_tokens"].min() > \
        df.loc[df["reasoning_effort"] == "low", "reasoning_tokens"].max()


def test_a_thinking_budget_is_passed_through():
    r = replace(_reqs(1)[0], thinking_budget=2048)
    j = OpenAICompatibleJudge("http://127.0.0.1:9/v1", "m")
    assert json.loads(j.encoded(r).payload)["thinking"] == {"type": "enabled", "budget_tokens": 2048}


def test_the_common_body_is_unchanged_by_the_new_fields():
    """A request without effort, budget or adaptation sends the same fields as before issue 27."""
    r = _reqs(1)[0]
    j = OpenAICompatibleJudge("http://127.0.0.1:9/v1", "m")
    assert set(json.loads(j.encoded(r).payload)) == {"model", "messages", "temperature"}


def test_the_command_line_takes_efforts_the_reasoning_flag_and_parameter_overrides(tmp_path, monkeypatch, capsys):
    import sys

    from evallab import cli

    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item_id": f"it{i}", "rubric": "Wraps the error.",
                                         "pass_criteria": ["Uses %w."], "answer": f"answer {i}"}) + "\n"
                             for i in range(3)))
    out = tmp_path / "v.jsonl"
    with LocalJudgeServer(SIM, reply_shape="reasoning_only", refuse_params=("max_tokens", "temperature")) as srv:
        monkeypatch.setattr(sys, "argv", [
            "evallab", "judge", str(items), "--judge", f"sim-judge@{srv.base_url}", "--out", str(out), "--no-cache",
            "--no-progress", "--concurrency", "1", "--max-tokens", "64", "--reasoning-effort", "low,high",
            "--verdict-from-reasoning", "--param", "max_tokens=max_completion_tokens", "--param", "temperature=drop"])
        try:
            cli.main()
        except SystemExit as exc:
            assert not exc.code
        assert srv.stats()["requests"] == 6 and srv.stats()["param_refusals"] == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["reasoning_effort"] for r in rows] == ["low"] * 3 + ["high"] * 3
    assert all(r["verdict_source"] == "reasoning" and r["verdict"] in ("pass", "fail") for r in rows)
    assert "6 verdicts read from the reasoning" in capsys.readouterr().out


def _sampled(n_items, k):
    return [replace(r, temperature=0.7, metadata={**r.metadata, "sample": s}) for r in _reqs(n_items)
            for s in range(k)]


def test_samples_of_one_item_share_one_request_where_the_endpoint_takes_n(tmp_path):
    """4 items x 3 samples: 4 HTTP requests with n=3, each sample the simulated judge's for its index; the prompt is
    paid once per item (on sample 0's row); a rerun is answered from the cache."""
    reqs = _sampled(4, 3)
    with LocalJudgeServer(SIM, takes_n=True) as srv:
        j = _judge(srv, share_samples=True, cache=tmp_path / "c.sqlite")
        df = run_jobs(j, reqs, progress=False)
        assert srv.stats()["requests"] == 4 and srv.stats()["choices"] == 12
        want = [SIM.decide(r.system, r.user, r.metadata["sample"])[0] for r in reqs]
        assert df["verdict"].tolist() == want
        # the body sent: the sample's body with n=3 (the server counts its bytes / 4 as prompt tokens)
        prompt = [len(canonical_json({**json.loads(j.encoded(r).payload), "n": 3}).encode()) // 4 for r in reqs]
        assert df["input_tokens"].tolist() == [p if r.metadata["sample"] == 0 else 0
                                              for p, r in zip(prompt, reqs, strict=True)]
        srv.reset()
        again = run_jobs(_judge(srv, share_samples=True, cache=tmp_path / "c.sqlite"), reqs, progress=False)
        assert srv.stats()["requests"] == 0 and again["verdict"].tolist() == want


def test_an_endpoint_ignoring_n_is_detected_and_the_other_samples_asked_one_by_one():
    """The first shared request answers one choice (sample 0's); the endpoint is remembered as ignoring n, so the
    run pays one request per sample — no more than without sharing."""
    from evallab.judges._client import _N_MEMORY

    _N_MEMORY.clear()
    reqs = _sampled(3, 2)
    with LocalJudgeServer(SIM) as srv:
        df = run_jobs(_judge(srv, share_samples=True), reqs, progress=False)
        assert srv.stats()["requests"] == 6
        assert _N_MEMORY.pop((srv.base_url, "sim-judge")) is False
    assert df["verdict"].tolist() == [SIM.decide(r.system, r.user, r.metadata["sample"])[0] for r in reqs]


def test_the_recording_keeps_the_reasoning_and_the_failure_kind(tmp_path):
    from evallab.judges import load_recordings

    reqs = _reqs(3)
    with LocalJudgeServer(SIM, reply_shape="reasoning_content", faults=[Fault("refusal", match="answer 2")]) as srv:
        run_jobs(_judge(srv), reqs, record=tmp_path / "rec.json", progress=False)
    (rec,) = load_recordings(tmp_path).values()
    samples = [e.samples[0] for e in sorted(rec.entries, key=lambda e: e.scenario_id)]
    assert [s.extra.get("reasoning") for s in samples[:2]] == [reasoning_text(None)] * 2
    assert samples[2].extra == {"failureKind": "refusal"} and samples[2].verdict is None
    doc = json.loads((tmp_path / "rec.json").read_text())
    assert all("reasoning" in e["samples"][0] or "failureKind" in e["samples"][0] for e in doc["entries"])


def test_usage_summary_gives_reasoning_and_cached_tokens_and_the_cost_per_verdict():
    from evallab.judges import usage_summary

    reqs = _reqs(4)
    with LocalJudgeServer(SIM, reply_shape="reasoning_content", cached_tokens=8,
                          faults=[Fault("refusal", match="answer 3")]) as srv:
        df = run_jobs(_judge(srv, prices={"sim-judge": [1.0, 2.0, 0.5]}), reqs, progress=False)
    s = usage_summary(df).iloc[0]
    # the server reports the reasoning tokens of every reply (a refusal is paid for its reasoning too)
    assert s["reasoning_tokens"] == 4 * (len(reasoning_text(None)) // 4)
    assert s["cached_tokens"] == 4 * 8
    assert s["cost_per_verdict"] == pytest.approx(df["cost_usd"].sum() / 3)  # 4 paid, 3 verdicts


def test_structured_output_detection_adapts_a_refused_parameter_instead_of_dropping_the_format():
    """An o-series model behind an OpenAI-dialect endpoint: the format probe's 400 for max_tokens is a refused
    parameter, not a refused format — the probe is asked again with max_completion_tokens and keeps the dialect."""
    reqs = _reqs(3, max_tokens=64)
    with LocalJudgeServer(SIM, dialect="openai", refuse_params=("max_tokens",)) as srv:
        j = _judge(srv, structured="auto")
        df = run_jobs(j, reqs, progress=False)
        # the probe: a 400, then the openai format accepted (no cache: its reply is not reused); then the 3 rows
        assert srv.stats()["requests"] == 2 + 3 and srv.stats()["param_refusals"] == 1
    assert j.dialect == "openai" and df["response_format"].tolist() == ["openai"] * 3
    assert df["verdict"].tolist() == _expected(reqs)
