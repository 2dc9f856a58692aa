"""Start ``evallab label`` as a child process and read its URL (shared by the labelling tests)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from evallab.paths import REPO_ROOT


def pairwise_items(path: Path, n: int = 20) -> Path:
    pd.DataFrame({"item_id": [f"q{i:02d}" for i in range(n)], "instruction": [f"Instruction {i}" for i in range(n)],
                  "output_1": [f"first output {i}" for i in range(n)],
                  "output_2": [f"second output {i}" for i in range(n)],
                  "gold": ["1"] * n, "verdict": ["2"] * n}).to_csv(path, index=False)
    return path


def start(items: Path, out: Path, annotator: str, *extra: str, timeout: float = 30.0):
    """The server process and its URL (``http://127.0.0.1:PORT/?token=...``)."""
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "evallab", "label", str(items), "--out", str(out),
                             "--annotator", annotator, "--no-browser", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "http://" in line:
            return proc, line.strip().split(" ")[-1]
        if proc.poll() is not None:
            raise AssertionError(f"evallab label exited {proc.returncode}: {proc.stderr.read()}")
    proc.kill()
    raise AssertionError("evallab label printed no URL")


def kill(proc) -> None:
    proc.kill()  # SIGKILL: no clean shutdown, as a crash or a closed laptop
    proc.wait(timeout=10)
