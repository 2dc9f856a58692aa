"""The registry of the llama.cpp servers evallab starts, and how a dead one is described.

:class:`evallab.judges._local.LocalLlamaServer` registers each server it starts in
``<state_dir>/local-servers/<port>.json`` (pid, port, log path; the cause of death once its owner notices it), so
that a judge in any process that finds the port closed can say why (:func:`server_death`) instead of "connection
refused". Both the server (:mod:`evallab.judges._local`) and the judge client (:mod:`evallab.judges._client`) use
this module; neither imports the other for it.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from evallab.paths import state_dir


def describe_exit(code: int) -> str:
    """How a process ended, from :attr:`subprocess.Popen.returncode`: ``"killed by SIGSEGV (signal 11)"`` for a
    negative code (the signal's name from :mod:`signal`), ``"exited with status N"`` otherwise."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "an unknown signal"
        return f"was killed by {name} (signal {-code})"
    return f"exited with status {code}"


#: how many of a dead server's last log lines an error quotes, and how much of each
TAIL_LINES, TAIL_CHARS = 6, 240


def log_tail(path: str | os.PathLike | None, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` non-blank lines of a log, each cut to :data:`TAIL_CHARS`, joined by `` | `` (one line);
    ``"no output"`` when the log is empty or unreadable. Reads at most the last 64 KiB."""
    if path is None:
        return "no output"
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 65536))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return "no output"
    kept = [ln.strip() for ln in text.splitlines() if ln.strip()][-lines:]
    return " | ".join(ln if len(ln) <= TAIL_CHARS else ln[:TAIL_CHARS] + "…" for ln in kept) or "no output"


def _registry(port: int) -> Path:
    return state_dir() / "local-servers" / f"{int(port)}.json"


def _register(port: int, entry: dict) -> None:
    """Write a server's registry entry atomically (a reader never sees half a file)."""
    import json

    path = _registry(port)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(entry), "utf-8")
        os.replace(tmp, path)


def _unregister(port: int) -> None:
    with contextlib.suppress(OSError):
        _registry(port).unlink()


def _exit_of(pid: int) -> tuple[bool, int | None]:
    """Whether ``pid`` no longer runs (absent, or a zombie its parent has not reaped yet), and for a zombie its
    exit as :attr:`subprocess.Popen.returncode` gives it (``-11`` for SIGSEGV), read from the ``exit_code`` field
    (52) of ``/proc/<pid>/stat`` (proc(5), Linux 3.5+); ``None`` where unknown."""
    import psutil

    try:
        if psutil.Process(int(pid)).status() != psutil.STATUS_ZOMBIE:
            return False, None
    except (psutil.NoSuchProcess, ValueError):
        return True, None
    except psutil.Error:
        return False, None
    try:
        fields = Path(f"/proc/{int(pid)}/stat").read_text().rsplit(")", 1)[1].split()
        status = int(fields[49])  # fields 3..52 follow the command name; exit_code is field 52
    except (OSError, IndexError, ValueError):
        return True, None
    return True, (-(status & 0x7F) if status & 0x7F else (status >> 8) & 0xFF)


def server_death(base_url: str) -> str | None:
    """Why the evallab-started llama.cpp server behind ``base_url`` is gone, for a judge that found its port
    closed: the cause its owner recorded (:meth:`LocalLlamaServer.death`), or — when the owner has not noticed
    yet or died with it — that the process no longer runs, with its log's last lines and the log's path.

    Returns ``None`` when no evallab server is registered on that loopback port (not ours: the caller keeps its
    own message), and ``""`` while the registered process still runs (it may be on its way down: ask again).
    """
    import json
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(base_url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if host not in ("127.0.0.1", "localhost", "::1") or port is None:
        return None
    try:
        entry = json.loads(_registry(port).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict):
        return None
    if entry.get("cause"):
        return str(entry["cause"])
    pid = entry.get("pid")
    if not isinstance(pid, int):
        return None
    gone, code = _exit_of(pid)
    if not gone:
        return ""
    how = describe_exit(code) if code is not None else "is no longer running"
    return (f"the llama.cpp server (pid {pid}, port {port}) that evallab started {how}; last lines of its log: "
            f"{log_tail(entry.get('log'))}; full log: {entry.get('log')}")
