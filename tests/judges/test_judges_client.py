"""OpenAICompatibleJudge against the real local server: faults, retries, fatal statuses, cache, cost, secrets."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import replace

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evallab.judges import JudgeFatalError, OpenAICompatibleJudge, build_pairwise, build_pointwise, run_jobs
from evallab.judges._cache import Cache, cache_key
from evallab.testing import Fault, LocalJudgeServer, SimulatedJudge


def _reqs(n, prefix="i", **meta):
    return [build_pointwise(rubric="Wraps the error.", pass_criteria=["Uses %w."], answer=f"answer {prefix}{i}",
                            metadata={"item_id": f"{prefix}{i}", **meta}) for i in range(n)]


def _judge(srv, **kw):
    kw = {"max_concurrency": 1, "max_retries": 3, "timeout": 2.0, "backoff_initial": 0.01, "backoff_max": 0.05,
          **kw}
    return OpenAICompatibleJudge(srv.base_url, "sim-judge", **kw)


@pytest.fixture
def server():
    with LocalJudgeServer(SimulatedJudge(seed=1, pass_rate=0.5)) as srv:
        yield srv


@pytest.mark.parametrize("kind", ["429", "500", "503", "drop", "timeout", "malformed"])
def test_transient_faults_are_retried_then_answered(server, kind):
    server.set_faults([Fault(kind, times=2, retry_after=0.3, delay=1.2)])
    j = _judge(server, timeout=0.5 if kind == "timeout" else 2.0)
    df = run_jobs(j, _reqs(1), progress=False)
    st = server.stats()
    assert st["faults"] == {kind: 2}
    assert st["requests"] == 3 and j.stats.calls == 3  # 2 faulted attempts + 1 good one
    assert df["verdict"].iloc[0] in ("pass", "fail") and pd.isna(df["error"].iloc[0])
    assert not bool(df["failed"].iloc[0])
    assert len(j.stats.waits) == 2
    if kind == "429":  # Retry-After (0.3 s) is honoured over the shorter exponential backoff (≤ 0.05 s)
        assert all(w >= 0.3 for _, w in j.stats.waits)
    else:
        assert all(w <= 0.05 + 0.01 for _, w in j.stats.waits)


def test_persistent_503_gives_up_and_reports_failed_row(server):
    server.set_faults([Fault("503", times=-1)])
    j = _judge(server, max_retries=2)
    df = run_jobs(j, _reqs(1), progress=False)
    assert server.stats()["requests"] == 3  # 1 + max_retries
    assert bool(df["failed"].iloc[0]) and pd.isna(df["verdict"].iloc[0])
    assert "HTTP 503" in df["error"].iloc[0] and "3 attempts" in df["error"].iloc[0]


def test_prose_reply_is_reported_not_retried(server):
    server.set_faults([Fault("prose")])
    j = _judge(server)
    df = run_jobs(j, _reqs(1), progress=False)
    assert server.stats()["requests"] == 1
    assert pd.isna(df["verdict"].iloc[0]) and "no pointwise verdict" in df["error"].iloc[0]
    assert not bool(df["failed"].iloc[0])
    assert "reasonably written" in df["raw"].iloc[0]  # the raw text is kept for the NA row


def _sampled(n):
    """Requests that sample without a seed: a reply cut at max_tokens may come out differently when asked again."""
    return [replace(r, temperature=0.7, seed=None) for r in _reqs(n)]


@pytest.mark.parametrize("kind", ["empty_choices", "empty_content", "length_cut"])
def test_reply_without_verdict_content_is_retried_then_answered(server, kind):
    """Issue 13: a 200 with no choices, empty content, or cut by max_tokens before any verdict is retried (empty
    or cut ones when the request samples without a seed — issue 27; see the next tests)."""
    server.set_faults([Fault(kind, times=2)])
    j = _judge(server, backoff_initial=0.2, backoff_max=0.5)
    df = run_jobs(j, _reqs(1) if kind == "empty_choices" else _sampled(1), progress=False)
    assert server.stats()["requests"] == 3 and server.stats()["faults"] == {kind: 2}
    assert df["verdict"].iloc[0] in ("pass", "fail") and not bool(df["failed"].iloc[0])
    assert j.stats.retries == 2 and j.stats.empty == 2
    waits = [w for _, w in j.stats.waits]
    # a cut reply is asked again at once (the server is not overloaded); the others back off (>= backoff_initial)
    assert waits == [0.0, 0.0] if kind == "length_cut" else all(w >= 0.2 for w in waits)


@pytest.mark.parametrize("temperature,seed,how", [(0.0, None, "greedy"), (0.7, 3, "seeded")])
def test_cut_reply_is_not_asked_again_when_decoding_would_repeat_it(server, tmp_path, temperature, seed, how):
    """Greedy or seeded decoding writes the same text again: one call, an NA row at once (failure kind "cut"), the
    error says why; the reply is cached, so a rerun pays nothing for it (issue 27)."""
    server.set_faults([Fault("length_cut", times=-1)])
    j = _judge(server, max_retries=5, cache=tmp_path / "c.sqlite")
    reqs = [replace(r, temperature=temperature, seed=seed) for r in _reqs(1)]
    df = run_jobs(j, reqs, progress=False)
    assert server.stats()["requests"] == 1 and j.stats.retries == 0 and j.stats.empty == 1
    assert not bool(df["failed"].iloc[0]) and pd.isna(df["verdict"].iloc[0])
    assert df["failure_kind"].iloc[0] == "cut"
    assert how in df["error"].iloc[0] and "raise max_tokens" in df["error"].iloc[0]
    assert df["raw"].iloc[0] == "Let me compare the two"  # what the server said is kept
    again = run_jobs(_judge(server, cache=tmp_path / "c.sqlite"), reqs, progress=False)
    assert server.stats()["requests"] == 1 and bool(again["cached"].iloc[0])


def test_cut_reply_after_a_transient_error_is_not_retried_further_and_says_why(server):
    """A 503 is retried; the greedy reply then cut at max_tokens would repeat, so it ends the request at once — its
    error gives that reason, not "gave up after N attempts" (only 2 of the 1 + max_retries attempts were made)."""
    server.set_faults([Fault("503", times=1), Fault("length_cut", times=-1)])
    j = _judge(server, max_retries=5)
    df = run_jobs(j, _reqs(1), progress=False)
    assert server.stats()["requests"] == 2 and j.stats.retries == 1
    err = df["error"].iloc[0]
    assert not bool(df["failed"].iloc[0]) and "raise max_tokens" in err and "gave up" not in err


@pytest.mark.parametrize("kind,error", [("empty_choices", "no choices"), ("empty_content", "empty reply"),
                                        ("length_cut", "cut at max_tokens")])
def test_persistent_reply_without_verdict_is_failed_and_asked_again_on_rerun(server, tmp_path, kind, error):
    server.set_faults([Fault(kind, times=-1)])
    out = tmp_path / "v.jsonl"
    j = _judge(server, max_retries=2, cache=tmp_path / "c.sqlite")
    reqs = _reqs(1) if kind == "empty_choices" else _sampled(1)
    df = run_jobs(j, reqs, out=out, progress=False)
    assert server.stats()["requests"] == 3  # 1 + max_retries, then given up
    assert bool(df["failed"].iloc[0]) and pd.isna(df["verdict"].iloc[0]) and error in df["error"].iloc[0]
    assert len(Cache(tmp_path / "c.sqlite")) == 0  # nothing cached: a rerun asks again
    server.set_faults([])
    server.reset()
    again = run_jobs(_judge(server, cache=tmp_path / "c.sqlite"), reqs, out=out, progress=False)
    assert server.stats()["requests"] == 1 and again["verdict"].iloc[0] in ("pass", "fail")


@pytest.mark.parametrize("status", ["400", "401", "403", "404"])
def test_client_errors_stop_at_once_without_retry(server, status):
    server.set_faults([Fault(status, times=-1)])
    j = _judge(server, max_retries=5)
    with pytest.raises(JudgeFatalError, match=f"HTTP {status}.*stopped without retrying"):
        run_jobs(j, _reqs(20), progress=False)
    assert server.stats()["requests"] == 1


def test_wrong_key_401_stops_the_run_at_once(monkeypatch):
    monkeypatch.setenv("EVALLAB_TEST_KEY", "wrong-key")
    with LocalJudgeServer(api_key="right-key") as srv:
        j = _judge(srv, api_key_env="EVALLAB_TEST_KEY", max_concurrency=4)
        with pytest.raises(JudgeFatalError, match=r"HTTP 401.*EVALLAB_TEST_KEY") as exc:
            run_jobs(j, _reqs(200), progress=False)
        assert "wrong-key" not in str(exc.value)
        st = srv.stats()
        assert st["unauthorized"] == st["requests"] <= 4  # only what was already in flight; no retries


def test_missing_key_variable_is_a_clear_error(monkeypatch, server):
    monkeypatch.delenv("EVALLAB_NO_SUCH_KEY", raising=False)
    j = _judge(server, api_key_env="EVALLAB_NO_SUCH_KEY")
    with pytest.raises(JudgeFatalError, match="EVALLAB_NO_SUCH_KEY is not set"):
        run_jobs(j, _reqs(1), progress=False)
    assert server.stats()["requests"] == 0


def test_rerun_from_cache_makes_zero_http_calls_and_matches(server, tmp_path):
    reqs = _reqs(30) + [build_pairwise("Pick", "x", "y", order=o, metadata={"item_id": "p", "sample": s})
                        for o in ("ab", "ba") for s in (0, 1)]
    first = run_jobs(_judge(server, cache=tmp_path / "c.sqlite", max_concurrency=8), reqs, progress=False)
    assert server.stats()["requests"] == len(reqs)
    server.reset()
    j2 = _judge(server, cache=tmp_path / "c.sqlite")
    again = run_jobs(j2, reqs, progress=False)
    assert server.stats()["requests"] == 0 and j2.stats.calls == 0
    assert again["cached"].all() and not first["cached"].any()
    cols = ["item_id", "order", "sample", "verdict", "input_tokens", "output_tokens"]
    pd.testing.assert_frame_equal(first[cols], again[cols])
    # bypass: every request goes live, nothing written; refresh: live and overwritten
    run_jobs(_judge(server, cache=Cache.bypass(tmp_path / "c.sqlite")), reqs[:5], progress=False)
    assert server.stats()["requests"] == 5
    server.reset()
    run_jobs(_judge(server, cache=Cache.refresh(tmp_path / "c.sqlite")), reqs[:5], progress=False)
    assert server.stats()["requests"] == 5


def test_prefetch_answers_the_run_without_a_query_per_request(server, tmp_path):
    """run_jobs looks the run's keys up at once: no SELECT per request (counted with sqlite's trace callback),
    stored keys served, absent keys asked live, and a key put during the run is then seen (not kept absent)."""
    reqs = _reqs(12)
    run_jobs(_judge(server, cache=tmp_path / "c.sqlite"), reqs[:5], progress=False)
    server.reset()
    cache = Cache(tmp_path / "c.sqlite")
    statements: list[str] = []
    cache._conn().set_trace_callback(statements.append)
    j = _judge(server, cache=cache)
    df = run_jobs(j, reqs, progress=False)
    # replies: the prefetch, nothing per request (the endpoints table is read once per run: learnt parameters)
    selects = [q for q in statements if q.lstrip().upper().startswith("SELECT") and "FROM endpoints" not in q]
    assert len(selects) == 1 and " IN (" in selects[0]
    assert server.stats()["requests"] == 7 and df["cached"].sum() == 5
    k = j.cache_key(reqs[5])
    cache.flush()
    assert cache.get(k) is not None  # put after the prefetch, flushed: found, not answered "absent"
    assert Cache(tmp_path / "c.sqlite").prefetch([k, "no-such-key"]) == 1


def test_prefetch_goes_chunk_by_chunk_as_the_run_reaches_them(server, tmp_path, monkeypatch):
    """With chunks of 5, a run of 12 requests (the first 5 cached) makes ceil(12 / 5) = 3 lookups, each one IN
    query, and no query per request — also when every reply comes from the cache and no worker ever waits."""
    import evallab.judges._runner as R

    monkeypatch.setattr(R, "PREFETCH_CHUNK", 5)
    reqs = _reqs(12)
    run_jobs(_judge(server, cache=tmp_path / "c.sqlite"), reqs[:5], progress=False)
    for n_live, want_cached in ((7, 5), (0, 12)):
        server.reset()
        cache = Cache(tmp_path / "c.sqlite")
        statements: list[str] = []
        cache._conn().set_trace_callback(statements.append)
        df = run_jobs(_judge(server, cache=cache), reqs, progress=False)
        selects = [q for q in statements if q.lstrip().upper().startswith("SELECT") and "FROM endpoints" not in q]
        assert len(selects) == 3 and all(" IN (" in q for q in selects)
        assert server.stats()["requests"] == n_live and df["cached"].sum() == want_cached
        cache.close()


def test_cache_key_covers_the_canonical_request():
    r = _reqs(1)[0]
    k = cache_key("http://h/v1", "m", r)
    assert cache_key("http://h/v1/", "m", r) == k  # trailing slash is not part of identity
    variants = [cache_key("http://other/v1", "m", r), cache_key("http://h/v1", "m2", r)]
    for field, value in (("temperature", 0.7), ("seed", 3), ("max_tokens", 50)):
        r2 = _reqs(1)[0]
        setattr(r2, field, value)
        variants.append(cache_key("http://h/v1", "m", r2))
    variants.append(cache_key("http://h/v1", "m", _reqs(1, sample=1)[0]))
    variants.append(cache_key("http://h/v1", "m", r, extra_body={"top_p": 0.5}))
    variants.append(cache_key("http://h/v1", "m", r, extra_body={"response_format": {"type": "json_object"}}))
    assert len(set(variants)) == len(variants) and k not in variants
    # keyed on the body actually sent: an extra_body field that overrides temperature/model keys like the request
    # that sends that value, and the judge's own key follows its extra_body
    r07 = _reqs(1)[0]
    r07.temperature = 0.7
    assert cache_key("http://h/v1", "m", r, extra_body={"temperature": 0.7}) == cache_key("http://h/v1", "m", r07)
    assert cache_key("http://h/v1", "m", r, extra_body={"model": "m2"}) == cache_key("http://h/v1", "m2", r)
    plain = OpenAICompatibleJudge("http://h/v1", "m")
    assert plain.cache_key(r) == k
    assert OpenAICompatibleJudge("http://h/v1", "m", extra_body={"top_p": 0.5}).cache_key(r) != k


@pytest.mark.parametrize("dialect", ["openai", "llamacpp", "ollama"])
def test_the_schema_asks_for_the_reason_before_the_verdict(dialect):
    """A structured-output model writes a schema's fields in the order of its properties (OpenAI Structured
    Outputs; llama.cpp's json-schema-to-grammar): the bytes sent put ``reason`` before ``verdict`` in every
    dialect, so the judge explains before it decides."""
    from evallab.judges import build_pairwise

    r = build_pairwise("Say hi.", "hi", "hello", metadata={"item_id": "o"})
    payload = OpenAICompatibleJudge("http://h/v1", "m", structured=dialect).encoded(r).payload
    props = payload.index(b'"properties"')
    assert props < payload.index(b'"reason"', props) < payload.index(b'"verdict"', props)


def test_a_schemas_properties_keep_their_order_and_every_other_key_is_sorted():
    """canonical(): keys sorted at every level except the members of a ``properties`` mapping (a property NAMED
    "properties" inside it is a member, not a schema keyword); lists keep their order. Expected text written out."""
    from evallab.judges._cache import body_key, canonical_json

    schema = {"type": "object", "required": ["z", "a"],
              "properties": {"z": {"type": "string", "enum": ["y", "x"]}, "properties": {"type": "string"},
                             "a": {"type": "object", "properties": {"q": {"type": "number"}, "b": {}}}}}
    body = {"model": "m", "response_format": {"type": "json_object", "schema": schema}}
    assert canonical_json(body) == (
        '{"model":"m","response_format":{"schema":{"properties":{"z":{"enum":["y","x"],"type":"string"},'
        '"properties":{"type":"string"},"a":{"properties":{"q":{"type":"number"},"b":{}},"type":"object"}},'
        '"required":["z","a"],"type":"object"},"type":"json_object"}}')
    swapped = {**body, "response_format": {"type": "json_object", "schema": {
        **schema, "properties": dict(reversed(list(schema["properties"].items())))}}}
    assert body_key("http://h/v1", body) != body_key("http://h/v1", swapped)  # another order is another request


@pytest.mark.parametrize("kw", [{}, {"extra_body": {"top_p": 0.5, "seed": 9}}, {"structured": "llamacpp"},
                                {"structured": "openai", "logprobs": True}])
def test_one_encoding_gives_the_documented_key_and_digest(kw):
    """The body is encoded once (sorted, compact, UTF-8); its cache key and sent digest equal the documented
    formulas computed here from the body dict with json.dumps and hashlib."""
    import hashlib
    import json

    from evallab.judges import build_pointwise

    j = OpenAICompatibleJudge("http://h/v1/", "m", **kw)
    r = build_pointwise(rubric="Réponse — ✓", pass_criteria=["ünïcode"], answer="日本語 answer",
                        metadata={"item_id": "u", "sample": 2})
    enc = j.encoded(r)
    body = j.body(r)
    # evallab's own schema lists its properties alphabetically (reason, verdict), so here canonical = sorted
    canon = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert enc.payload == canon.encode() and json.loads(enc.payload) == body
    key = hashlib.sha256(json.dumps({"v": 2, "base_url": "http://h/v1", "body": body, "sample": 2}, sort_keys=True,
                                    ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()
    assert enc.cache_key == key
    digest = hashlib.sha256(json.dumps({"prompt_version": r.prompt_version, "kind": r.kind, "body": body},
                                       sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()
    assert enc.sent_digest == digest
    # a changed request re-encodes (the memo never serves a stale body)
    r.temperature = 0.9
    r.metadata["sample"] = 3
    assert json.loads(j.encoded(r).payload)["temperature"] == 0.9 and j.encoded(r).sample == 3
    assert j.encoded(r).cache_key != key


def test_extra_body_change_is_a_cache_miss(server, tmp_path):
    reqs = _reqs(3)
    run_jobs(_judge(server, cache=tmp_path / "c.sqlite"), reqs, progress=False)
    server.reset()
    j = _judge(server, cache=tmp_path / "c.sqlite", extra_body={"top_p": 0.1})
    df = run_jobs(j, reqs, progress=False)
    assert server.stats()["requests"] == 3 and not df["cached"].any()


def test_sample_index_is_sent_as_a_header_and_seed_is_not_a_sample(server):
    """With a request seed set, sample 0 is answered as sample 0 (the server reads the sample header only)."""
    sim = SimulatedJudge(seed=1, pass_rate=0.5)  # the fixture server's judge
    reqs = [build_pointwise(rubric="Wraps the error.", pass_criteria=["Uses %w."], answer=f"answer s{i}", seed=7,
                            metadata={"item_id": f"s{i}", "sample": i % 2}) for i in range(24)]
    df = run_jobs(_judge(server, max_concurrency=4), reqs, progress=False)
    want = [sim.decide(r.system, r.user, r.metadata["sample"])[0] for r in reqs]
    assert df["verdict"].tolist() == want
    # the check can fail: answering sample 0 as sample `seed` (7) would change some of these verdicts
    assert want != [sim.decide(r.system, r.user, 7 if r.metadata["sample"] == 0 else 1)[0] for r in reqs]


def test_cache_is_safe_with_two_processes_writing(tmp_path):
    path = tmp_path / "shared.sqlite"
    code = textwrap.dedent(f"""
        import sys
        from evallab.judges._cache import Cache
        c = Cache({str(path)!r})
        c.batch_size = 7
        for i in range(400):
            c.put(f"{{sys.argv[1]}}-{{i}}", {{"raw": "x" * 50, "i": i}})
        c.close()
    """)
    procs = [subprocess.Popen([sys.executable, "-c", code, tag]) for tag in ("a", "b")]
    assert [p.wait(120) for p in procs] == [0, 0]
    c = Cache(path)
    assert len(c) == 800
    assert c.get("a-399") == {"raw": "x" * 50, "i": 399} and c.get("b-0")["i"] == 0


def test_usage_and_cost_from_the_price_table(server):
    import json

    reqs = _reqs(4)
    df = run_jobs(_judge(server, prices={"sim-judge": [2.0, 8.0]}), reqs, progress=False)
    # the server's token formula (evallab.testing): prompt = len(request body bytes) // 4, completion =
    # len(reply text) // 4; the body written out here by hand, the text from the simulated judge itself
    sim = SimulatedJudge(seed=1, pass_rate=0.5)
    inp, outp = [], []
    for r in reqs:
        body = {"model": "sim-judge", "messages": [{"role": m.role, "content": m.content} for m in r.messages],
                "temperature": 0.0}
        # sent as canonical JSON: sorted keys, compact separators, UTF-8
        inp.append(max(1, len(json.dumps(body, ensure_ascii=False, sort_keys=True,
                                         separators=(",", ":")).encode()) // 4))
        outp.append(max(1, len(sim.reply_text(r.system, r.user, 0)) // 4))
    assert df["input_tokens"].astype(int).tolist() == inp and df["output_tokens"].astype(int).tolist() == outp
    expected = [(i * 2.0 + o * 8.0) / 1e6 for i, o in zip(inp, outp, strict=True)]
    assert df["cost_usd"].astype(float).tolist() == pytest.approx(expected)
    assert df.attrs["run"]["cost_usd"] == pytest.approx(sum(expected))
    assert df["system_fingerprint"].eq("fp_evallab_sim").all() and df["model"].eq("sim-judge").all()


def test_served_model_is_recorded(tmp_path):
    with LocalJudgeServer(served_model="sim-judge-2026-11-29") as srv:
        df = run_jobs(_judge(srv), _reqs(2), progress=False)
    assert df["model"].eq("sim-judge-2026-11-29").all()


def test_api_key_value_is_written_nowhere(monkeypatch, tmp_path):
    secret = "sk-evallab-test-9f3c2a71d0b84e55"
    monkeypatch.setenv("EVALLAB_SECRET_KEY", secret)
    reqs = _reqs(10, gold="pass") + [build_pairwise("Q", "a", "b", order=o, metadata={"item_id": "p"})
                                     for o in ("ab", "ba")]
    # a server that echoes the whole Authorization header in a 503 body (every attempt for item i4): the error
    # message is stored in the failed row of every output table
    faults = [Fault("prose"), Fault("503"), Fault("503_echo_key", times=-1, match="answer i4")]
    with LocalJudgeServer(api_key=secret, faults=faults) as srv:
        for out in ("v.parquet", "v.jsonl", "v.csv"):
            j = _judge(srv, api_key_env="EVALLAB_SECRET_KEY", cache=tmp_path / "cache" / "j.sqlite")
            df = run_jobs(j, reqs, out=tmp_path / out, record=tmp_path / f"rec-{out}.json", progress=False)
            assert len(df) == len(reqs)
            echoed = df.loc[df["item_id"] == "i4", "error"].iloc[0]
            assert "Authorization: Bearer ***" in echoed and "HTTP 503" in echoed  # stored, masked
        assert srv.stats()["unauthorized"] == 0  # the key was really sent
        assert srv.stats()["faults"]["503_echo_key"] == 3 * 4  # 3 runs × (1 + max_retries) attempts
    from evallab.judges import usage_summary

    (tmp_path / "usage.txt").write_text(usage_summary(df).to_string())  # what a report shows
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) >= 8  # cache (+ WAL files), 3 tables, 3 recordings, usage
    for p in files:
        assert secret.encode() not in p.read_bytes(), p
    assert "sk-evallab" not in repr(j)


def test_server_messages_are_redacted(monkeypatch):
    from evallab.judges._client import redact

    monkeypatch.setenv("EVALLAB_RKEY", "k3y-value-0042")
    msg = "Incorrect API key provided: k3y-value-0042; other sk-proj-Ab12Cd34Ef and sk-ab***yz"
    out = redact(msg, "EVALLAB_RKEY")
    assert "k3y-value-0042" not in out and "sk-proj-Ab12Cd34Ef" not in out and "sk-ab" not in out
    assert out.startswith("Incorrect API key provided: ***;")


def test_unknown_cost_is_unknown_not_zero(server, tmp_path, capsys):
    """A model with no price: the run's cost and the totals are NA with the count of unpriced replies."""
    from evallab.judges import usage_summary

    reqs = _reqs(3)
    df = run_jobs(_judge(server), reqs, progress=False)  # "sim-judge" is in no price table
    run = df.attrs["run"]
    assert run["cost_usd"] is None and run["unpriced"] == 3
    assert df["cost_usd"].isna().all()
    s = usage_summary(df)
    assert pd.isna(s["cost_usd"].iloc[0]) and int(s["unpriced"].iloc[0]) == 3
    # one priced reply beside unpriced ones does not make the total known either
    mixed = pd.concat([df, run_jobs(_judge(server, prices={"sim-judge": [1, 1]}), _reqs(1, prefix="x"),
                                    progress=False)])
    s = usage_summary(mixed)
    assert pd.isna(s["cost_usd"].iloc[0]) and int(s["unpriced"].iloc[0]) == 3
    priced = run_jobs(_judge(server, prices={"sim-judge": [1, 1]}), reqs, progress=False)
    assert priced.attrs["run"]["unpriced"] == 0 and priced.attrs["run"]["cost_usd"] > 0
    assert usage_summary(priced)["cost_usd"].iloc[0] == pytest.approx(priced["cost_usd"].astype(float).sum())
    from evallab.judges._runner import cost_text

    assert cost_text(run) == "unknown (3 replies without a price; pass --prices)"
    assert cost_text({"calls": 0, "cost_usd": 0.0, "unpriced": 0}) == "nothing (no live call)"  # a rerun from the cache
    assert cost_text({"calls": 2, "cost_usd": 0.0123, "unpriced": 0}) == "$0.0123"


def test_canonical_json_in_one_pass_is_the_text_canonical_gives():
    """canonical_json sorts keys in one pass of the C encoder when that is the same text; the reference here is the
    definition — json.dumps of canonical(obj) — on bodies with and without what forces the slow path (a mapping
    that is not a dict, a "properties" key) and with text that only looks like one."""
    import types

    from evallab.judges._cache import canonical, canonical_json

    def reference(obj):
        return json.dumps(canonical(obj), ensure_ascii=False, separators=(",", ":"), default=str)

    r = _reqs(1)[0]
    bodies = [
        OpenAICompatibleJudge("http://h/v1", "m").body(r),
        {"z": 1, "a": [{"y": "é", "b": None}, ("t", 2.5)], "m": {"k": True, "c": "say \"properties\""}},
        {"b": types.MappingProxyType({"y": 1, "x": 2}), "a": 0},  # not a dict: canonical() makes it one
        {"b": {"properties": {"z": 1, "a": 2}}, "a": "properties"},  # order kept inside properties
        {"a": "properties", "b": [1, 2]},
    ]
    for b in bodies:
        assert canonical_json(b) == reference(b)
    assert canonical_json(bodies[3]).startswith('{"a":"properties","b":{"properties":{"z":1,"a":2}}')


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                         st.sampled_from(["properties", "type", "a", "b", "z", "é", "messages"]) | st.text(max_size=4),
                         inner, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_canonical_json_equals_its_definition_on_any_json(obj):
    """Any JSON value, "properties" keys at any depth included: the one-pass text is json.dumps of canonical()."""
    from evallab.judges._cache import canonical, canonical_json

    assert canonical_json(obj) == json.dumps(canonical(obj), ensure_ascii=False, separators=(",", ":"), default=str)


def test_the_hot_path_json_reads_and_writes_as_the_standard_library():
    """jsoncodec (orjson) against json's own reading: what orjson refuses falls back, dates and unknown objects are
    str(), numpy floats are numbers, NaN is null, a lone surrogate still round-trips."""
    import datetime

    import numpy as np

    from evallab.judges import _jsoncodec as jsoncodec

    assert jsoncodec.loads(b'{"a": NaN}')["a"] != jsoncodec.loads(b'{"a": NaN}')["a"]  # NaN, as json.loads reads it
    assert jsoncodec.loads('"\\ud800"') == "\ud800"
    assert jsoncodec.loads('{"x": "é"}'.encode("utf-16")) == {"x": "é"}
    with pytest.raises(ValueError):
        jsoncodec.loads(b'{"a": ')
    row = {"d": datetime.date(2024, 1, 2), "f": np.float64(0.5), "n": float("nan"), "k": None}
    assert json.loads(jsoncodec.dumps(row)) == {"d": "2024-01-02", "f": 0.5, "n": None, "k": None}
    assert json.loads(jsoncodec.dumps({"s": "a\ud800b", "i": 2**70})) == {"s": "a\ud800b", "i": 2**70}
    plain = {"item_id": "é", "sample": 2, "latency_s": 0.0512, "cached": False, "verdict": None}
    assert json.loads(jsoncodec.dumps(plain)) == plain == json.loads(jsoncodec.dumps_text(plain))


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_an_endpoint_never_reached_stops_the_run_in_one_line(tmp_path, transport):
    """Nothing listens on the port: after the first requests' retries (3 here) the run stops with
    JudgeFatalError naming the URL — no failed row per request."""
    import socket

    from evallab.judges import JudgeFatalError

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # a free port: connections to it are refused
    j = OpenAICompatibleJudge(f"http://127.0.0.1:{port}/v1", "m", max_concurrency=1, max_retries=3,
                              backoff_initial=0.01, backoff_max=0.02, transport=transport)
    with pytest.raises(JudgeFatalError, match=rf"cannot connect to http://127.0.0.1:{port}/v1/chat/completions"):
        run_jobs(j, _reqs(20), out=tmp_path / "v.jsonl", progress=False)
    # the first request's 1 + 3 attempts, and the second worker's while the first slept between them: 2 requests
    # of the 20 tried, none written as a failed row
    assert 4 <= j.stats.calls <= 8 and j.stats.retries >= 3 and j.stats.failed == 0
    assert not (tmp_path / "v.jsonl").exists() or not (tmp_path / "v.jsonl").read_text().strip()


def test_a_server_gone_after_answering_is_retried_and_marked_failed(tmp_path):
    """Once the endpoint has answered, a refused connection is a transient failure (a server restarting): the
    request is retried and its row marked failed, and the run goes on."""
    with LocalJudgeServer(SimulatedJudge(seed=1)) as srv:
        j = _judge(srv)
        run_jobs(j, _reqs(1), progress=False)
    df = run_jobs(j, _reqs(3, prefix="k"), progress=False)  # the server has stopped
    assert len(df) == 3 and df["failed"].all() and df["error"].str.contains("connection error").all()
    assert j.stats.failed == 3


def test_cache_open_waits_out_a_lock_from_another_process_setting_up_the_same_file(tmp_path, monkeypatch):
    """Two processes opening one new cache at once: SQLite answers the one that loses the race "database is
    locked" at once, without its busy timeout (CI, stop 37: one of two writers failed; 5 of 160 openers under load
    on the old code). The set-up is asked again; a file that is not a cache still fails in one line."""
    import sqlite3

    from evallab.errors import EvallabError
    from evallab.judges import _cache

    real = sqlite3.connect
    refusals = {"left": 3}

    class Racing:
        def __init__(self, conn):
            self.conn = conn

        def execute(self, sql, *a):
            if sql.startswith("PRAGMA journal_mode") and refusals["left"]:
                refusals["left"] -= 1
                raise sqlite3.OperationalError("database is locked")
            return self.conn.execute(sql, *a)

        def __getattr__(self, name):
            return getattr(self.conn, name)

    monkeypatch.setattr(_cache.sqlite3, "connect", lambda *a, **k: Racing(real(*a, **k)))
    c = _cache.Cache(tmp_path / "new.sqlite")
    c.put("k", {"v": 1})
    c.flush()
    assert refusals["left"] == 0 and c.get("k") == {"v": 1}
    c.close()
    monkeypatch.setattr(_cache.Cache, "OPEN_SECONDS", 0.2)
    refusals["left"] = 10**6  # locked for good: gives up after OPEN_SECONDS, in one line
    with pytest.raises(EvallabError, match="cannot open the judge cache .database is locked."):
        _cache.Cache(tmp_path / "other.sqlite")
