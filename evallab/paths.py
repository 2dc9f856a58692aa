"""Where bundled data and generated reports live.

The bundled data ship in the repository's ``data/`` folder; nothing is fetched at run time.
``EVALLAB_DATA`` and ``EVALLAB_REPORTS`` override the defaults; ``EVALLAB_STATE`` the folder of run state (the local
servers' registry and logs, :func:`state_dir`).
"""

from __future__ import annotations

import os
from pathlib import Path

#: the repository root when evallab is installed from a checkout (``pip install -e .``)
REPO_ROOT = Path(__file__).resolve().parents[1]


def data_dir(name: str | None = None) -> Path:
    """The bundled data folder (or one dataset's subfolder, e.g. ``data_dir("llmbar")``)."""
    base = Path(os.environ.get("EVALLAB_DATA") or REPO_ROOT / "data")
    return base / name if name else base


def reports_dir() -> Path:
    """Where reports and ``*.metrics.json`` are written: ``EVALLAB_REPORTS`` or ``<repo>/reports``."""
    return Path(os.environ.get("EVALLAB_REPORTS") or REPO_ROOT / "reports")


def state_dir() -> Path:
    """Per-user run state (the local llama.cpp servers' registry, their logs): ``EVALLAB_STATE`` or
    platformdirs' user state folder for ``evallab`` (``~/.local/state/evallab`` on Linux)."""
    env = os.environ.get("EVALLAB_STATE")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_state_dir("evallab"))


def log_dir() -> Path:
    """Where evallab keeps the logs of the servers it starts: ``<state_dir>/logs``."""
    return state_dir() / "logs"

__all__ = ["REPO_ROOT", "data_dir", "log_dir", "reports_dir", "state_dir"]
