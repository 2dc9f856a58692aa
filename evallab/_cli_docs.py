"""``docs/cli.md``: the CLI reference, the ``--help`` of every ``evallab`` command and subcommand as the command line
prints it (``python -m evallab._cli_docs > docs/cli.md``, run by ``make docs``; tests/test_cli_page.py checks it is
current). The help is rendered at a fixed width of 100 columns, without colour, so the page does not depend on the
terminal that wrote it."""

from __future__ import annotations

import os
import re

WIDTH = 100
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def commands() -> list[tuple[str, ...]]:
    """Every command path of ``evallab`` (``()`` for ``evallab`` itself), depth first in ``--help`` order."""
    import typer.main

    from evallab.cli import app

    root = typer.main.get_command(app)
    found: list[tuple[str, ...]] = []

    def walk(cmd, path: tuple[str, ...]) -> None:  # typer's own click (typer._click): groups have list_commands
        found.append(path)
        if hasattr(cmd, "list_commands"):
            ctx = cmd.context_class(cmd, info_name=" ".join(("evallab", *path)))
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, (*path, name))

    walk(root, ())
    return found


def help_text(path: tuple[str, ...]) -> str:
    """The ``--help`` output of ``evallab PATH...`` at :data:`WIDTH` columns, without colour codes."""
    from typer.testing import CliRunner

    from evallab.cli import app

    env = {"COLUMNS": str(WIDTH), "TERM": "dumb", "NO_COLOR": "1", "_TYPER_FORCE_DISABLE_TERMINAL": "1"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        result = CliRunner().invoke(app, [*path, "--help"], prog_name="evallab",
                                    terminal_width=WIDTH, color=False)  # type: ignore[call-arg]
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if result.exit_code != 0:
        from evallab.errors import EvallabError

        raise EvallabError(f"evallab {' '.join(path)} --help exited {result.exit_code}: {result.output}")
    return "\n".join(line.rstrip() for line in _ANSI.sub("", result.output).strip("\n").splitlines())


def page() -> str:
    """The Markdown of ``docs/cli.md``."""
    out = ["# Command line reference", "",
           "Every `evallab` command with its `--help`, written by `make docs` (`python -m evallab._cli_docs`); the tests "
           "check it is current. Bad input stops with one line naming the file, the line or field, and what was "
           "expected (exit 2), never a traceback.", ""]
    for path in commands():
        out += [f"## `{' '.join(('evallab', *path))}`", "", "```text", help_text(path), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(page(), end="")
