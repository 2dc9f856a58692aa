"""The ``evallab`` command: a thin layer over the library.

One private module per command group (``_init``: ``init``; ``_report``: ``report``, ``run``; ``_judge``: ``judge``;
``_import``: ``import``; ``_drift``: ``drift``, ``drift-replay``; ``_local``: ``serve-local``, ``live``; ``_plan``:
``plan``; ``_label``: ``label``;
``_rubrics``: ``rubrics``; ``_inflation``: ``inflation``; ``_scenarios``: ``validate``, ``judge-check``;
``_manifests``: ``manifests``; ``_triggers``: ``triggers``). Each command parses its arguments, calls the library
function that does the work (named in its module) and prints the result; the library is imported inside the
command, so ``evallab --help`` (and every process that imports this package) loads neither pandas nor scipy.

:func:`main` is the entry point (``[project.scripts] evallab``, ``python -m evallab.cli``).
"""

from __future__ import annotations

import re
import sys

import typer

from evallab.errors import EvallabError


def _format_commands(self, ctx, formatter) -> None:
    """A group's command list with each command's whole first sentence, wrapped at the terminal width (click
    cuts it with "..." to fit one line)."""
    rows = []
    for sub in self.list_commands(ctx):
        cmd = self.get_command(ctx, sub)
        if cmd is not None and not cmd.hidden:
            rows.append((sub, cmd.get_short_help_str(limit=10_000)))
    if rows:
        with formatter.section("Commands"):
            formatter.write_dl(rows)


# every evallab group (the root and the groups registered by the command modules) lists its commands in full
typer.core.TyperGroup.format_commands = _format_commands

app = typer.Typer(add_completion=False, rich_markup_mode=None, no_args_is_help=True,
                  pretty_exceptions_enable=False,
                  help="evallab: calibrate LLM judges (agreement, position bias, inflation, drift, gates).")


def _print_version(value: bool) -> None:
    if value:
        from evallab import __version__

        typer.echo(f"evallab {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                       help="Print evallab's version and exit")) -> None:
    """evallab: calibrate LLM judges. Run `evallab COMMAND --help` for a command's options."""


def _register() -> None:
    """Attach every command group's commands (each module's ``register(app)``), in the order ``--help`` lists them."""
    from evallab.cli import (
        _drift,
        _import,
        _inflation,
        _init,
        _judge,
        _label,
        _local,
        _manifests,
        _plan,
        _report,
        _rubrics,
        _scenarios,
        _study,
        _triggers,
    )

    for mod in (_init, _report, _judge, _scenarios, _manifests, _triggers, _rubrics, _inflation, _drift, _import,
                _local, _plan, _label, _study):
        mod.register(app)


_register()


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _input_error(exc: BaseException) -> str | None:
    """One line for an input error that escaped a loader (file system, decoding, JSON/YAML syntax, a user regex),
    or ``None`` when ``exc`` is not one."""
    import json

    import regex
    import yaml

    if isinstance(exc, OSError) and not isinstance(exc, TimeoutError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    if isinstance(exc, TimeoutError):
        return f"timed out: {exc}; expected input that can be processed in bounded time (e.g. a regex without " \
               "catastrophic backtracking)"
    if isinstance(exc, UnicodeError):
        return f"not UTF-8 text ({exc}); expected UTF-8"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    if isinstance(exc, yaml.YAMLError):
        return f"not valid YAML: {exc}"
    if isinstance(exc, (regex.error, re.error)):
        return f"a regular expression does not compile: {exc}"
    return None


def main() -> None:
    """Entry point: turns evallab's own errors — and input errors that escaped a loader (``OSError``,
    ``UnicodeError``, JSON/YAML syntax errors, a regex that does not compile or times out) — into a one-line
    ``error: ...`` message on stderr and exit status 2 (no traceback). Any other exception is a bug and keeps its
    traceback. A data warning (e.g. :class:`evallab.verdicts.SnapshotWarning`) is printed as one line,
    ``warning: ...``, without the source line Python would show."""
    import warnings

    default_show = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, UserWarning) and category.__module__.startswith("evallab"):
            typer.echo(f"warning: {message}", err=True)
        else:
            default_show(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        app(standalone_mode=True)
    except EvallabError as exc:
        typer.echo(f"error: {_one_line(exc)}", err=True)
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - narrowed by _input_error; anything else is re-raised
        msg = _input_error(exc)
        if msg is None:
            raise
        typer.echo(f"error: {_one_line(msg)}", err=True)
        sys.exit(2)
    finally:
        warnings.showwarning = default_show
