"""Issue 24: a local server that dies is reported with its exit signal or status, its log's last lines and where
the full log is kept — from LocalLlamaServer, `evallab serve-local` and `evallab judge` in another process.

The server here is a stand-in (a small HTTP server that answers ``/v1/models`` and then kills itself with a signal,
as llama.cpp did with SIGSEGV on its first ``decode`` on a CPU reporting AMX), so these tests need no llama.cpp."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from cli_helper import run_cli

from evallab.judges import JudgeFatalError, build_pairwise, run_jobs
from evallab.judges._local import LocalLlamaServer, LocalServerError, log_tail, server_death

MARKER = "ggml_compute_forward: stand-in crash marker"

STAND_IN = textwrap.dedent('''
    import http.server, json, os, signal, sys, threading, time
    mode, port = sys.argv[1], int(sys.argv[2])
    print("stand-in llama.cpp server: loading model", flush=True)
    if mode == "abort-at-start":
        print("%s", flush=True)
        os.kill(os.getpid(), signal.SIGABRT)
    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass
        def do_GET(self):
            body = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()
            self.send_response(200); self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            print("llama_decode: first request", flush=True)
            print("%s", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "segv-later":
        def later():
            time.sleep(1.5)
            print("%s", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        threading.Thread(target=later, daemon=True).start()
    http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
''') % (MARKER, MARKER, MARKER)


class StandIn(LocalLlamaServer):
    """LocalLlamaServer with the stand-in's command line instead of llama_cpp.server's."""

    mode = "segv-on-request"

    def check_installed(self) -> None:  # the stand-in needs no llama-cpp-python
        pass

    def command(self) -> list[str]:
        return [sys.executable, "-c", STAND_IN, self.mode, str(self.port)]


@pytest.fixture
def gguf(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALLAB_STATE", str(tmp_path / "state"))
    p = tmp_path / "model.gguf"
    p.write_bytes(b"GGUF" + b"\0" * 64)
    return p


def _request():
    return build_pairwise("Name a colour.", "Red.", "Banana.", order="ab", metadata={"item_id": "c", "gold": "1"})


def test_a_server_killed_by_a_signal_on_the_first_request_is_named_with_its_log(gguf):
    with StandIn(gguf) as srv:
        judge = srv.judge(structured="off", max_retries=3)
        with pytest.raises(JudgeFatalError) as ei:
            run_jobs(judge, [_request()], progress=False)
        log = srv._log_path
    msg = str(ei.value)
    assert "was killed by SIGSEGV (signal 11)" in msg, msg
    assert MARKER in msg and "llama_decode: first request" in msg  # the log's tail
    assert f"full log: {log}" in msg and "\n" not in msg
    assert judge.stats.calls == 1  # stopped at once: no retries against a dead server
    assert Path(log).is_file() and MARKER in Path(log).read_text()  # a crashed server's log is kept


def test_a_clean_stop_deletes_the_log_and_the_registry_entry(gguf, tmp_path):
    srv = StandIn(gguf).start()
    log, entry = srv._log_path, tmp_path / "state" / "local-servers" / f"{srv.port}.json"
    assert log.is_file() and json.loads(entry.read_text())["pid"] == srv.proc.pid
    srv.stop()
    assert not log.exists() and not entry.exists()
    assert srv.death() is None


def test_a_server_killed_before_answering_says_so(gguf):
    class Aborts(StandIn):
        mode = "abort-at-start"

    with pytest.raises(LocalServerError) as ei:
        Aborts(gguf).start()
    msg = str(ei.value)
    assert "was killed by SIGABRT (signal 6)" in msg and "before answering" in msg and MARKER in msg, msg
    log = msg.rsplit("full log: ", 1)[1].split(" before answering")[0]
    assert Path(log).is_file()


def test_evallab_judge_in_another_process_names_the_cause(gguf, tmp_path):
    """`evallab judge` against a server another process started (as `evallab serve-local` does: its loop calls
    death(), which records the cause in the registry): exit 2 and one line with the signal and the log."""
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"item_id": "c", "instruction": "Name a colour.", "output_1": "Red.",
                                 "output_2": "Banana.", "gold": "1"}) + "\n")
    srv = StandIn(gguf).start()
    stop = threading.Event()

    def owner_loop():  # serve-local's loop
        while not stop.is_set() and srv.death() is None:
            time.sleep(0.2)

    t = threading.Thread(target=owner_loop, daemon=True)
    t.start()
    try:
        env = {**os.environ, "EVALLAB_STATE": str(tmp_path / "state")}
        r = subprocess.run([sys.executable, "-m", "evallab.cli", "judge", str(items), "--judge",
                            f"m@{srv.base_url}", "--out", str(tmp_path / "v.jsonl"), "--no-cache", "--no-progress",
                            "--orders", "ab"], capture_output=True, text=True, timeout=120, env=env)
    finally:
        stop.set()
        t.join(5)
        log = srv._log_path
        srv.stop()
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "was killed by SIGSEGV (signal 11)" in lines[0] and MARKER in lines[0] and f"full log: {log}" in lines[0]
    assert "Traceback" not in r.stderr


def test_serve_local_says_why_its_server_stopped(gguf, monkeypatch, capsys):
    class DiesLater(StandIn):
        mode = "segv-later"

    import evallab.judges._local as local

    monkeypatch.setattr(local, "LocalLlamaServer", DiesLater)
    code, out = run_cli(["serve-local", "--model", gguf], capsys)
    assert code == 2
    err = [ln for ln in out.splitlines() if ln.startswith("error: ")]
    assert len(err) == 1 and "was killed by SIGSEGV (signal 11)" in err[0] and MARKER in err[0], out
    assert "full log: " in err[0]


def test_server_death_is_none_for_a_port_evallab_did_not_start(gguf):
    assert server_death("http://127.0.0.1:9/v1") is None
    assert server_death("https://api.openai.com/v1") is None


def test_log_tail_keeps_the_last_lines_cut_to_length(tmp_path):
    p = tmp_path / "x.log"
    p.write_text("".join(f"line {i}\n\n" for i in range(20)) + "y" * 1000 + "\n")
    tail = log_tail(p, lines=3)
    assert tail.startswith("line 18 | line 19 | ") and tail.endswith("…") and len(tail) < 300
    assert log_tail(tmp_path / "missing.log") == "no output"


def test_describe_exit_names_signals_and_statuses():
    from evallab.judges._local import describe_exit

    assert describe_exit(-signal.SIGSEGV) == "was killed by SIGSEGV (signal 11)"
    assert describe_exit(-signal.SIGKILL) == "was killed by SIGKILL (signal 9)"
    assert describe_exit(1) == "exited with status 1"


def test_another_process_reads_the_signal_of_a_server_its_owner_has_not_reaped(gguf):
    """Before the owner notices (no cause in the registry yet), the dead server is a zombie whose exit code
    /proc/<pid>/stat still holds: server_death names the signal from it."""
    import urllib.request

    import psutil

    srv = StandIn(gguf).start()
    try:
        with pytest.raises(OSError):
            urllib.request.urlopen(urllib.request.Request(srv.base_url + "/chat/completions", data=b"{}"), timeout=10)
        proc = psutil.Process(srv.proc.pid)
        deadline = time.monotonic() + 10
        while proc.status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
            time.sleep(0.05)
        why = server_death(srv.base_url)
        assert why.startswith(f"the llama.cpp server (pid {proc.pid}, port {srv.port}) that evallab started was "
                              "killed by SIGSEGV (signal 11); last lines of its log: "), why
    finally:
        srv.stop()
