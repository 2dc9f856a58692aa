"""Where bundled data and generated reports live.

The bundled data ship in the repository's ``data/`` folder; nothing is fetched at run time.
``EVALLAB_DATA`` and ``EVALLAB_REPORTS`` override the defaults.
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
