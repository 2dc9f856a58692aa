"""Run the ``evallab`` command in-process, as a user would type it (exit code and captured output)."""

from __future__ import annotations

import sys

import pytest


def run_cli(args, capsys) -> tuple[int, str]:
    """``evallab ARGS...`` through :func:`evallab.cli.main`; returns (exit code, stdout + stderr)."""
    from evallab.cli import main

    old = sys.argv
    sys.argv = ["evallab", *map(str, args)]
    try:
        with pytest.raises(SystemExit) as ei:
            main()
    finally:
        sys.argv = old
    out = capsys.readouterr()
    return ei.value.code, out.out + out.err
