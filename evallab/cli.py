"""The ``evallab`` command.

Subcommands are registered by the modules that own them (see ``_register``), so each concept keeps its CLI next
to its code.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated

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


# every evallab group (the root and the groups registered by the *_cli modules) lists its commands in full
typer.core.TyperGroup.format_commands = _format_commands

app = typer.Typer(add_completion=False, rich_markup_mode=None, no_args_is_help=True,
                  pretty_exceptions_enable=False,
                  help="evallab: calibrate LLM judges (agreement, position bias, inflation, drift, gates).")


@app.callback()
def _main() -> None:
    """evallab: calibrate LLM judges. Run `evallab COMMAND --help` for a command's options."""


@app.command()
def report(
    config: Annotated[Path, typer.Option(help="The batch: reports.yaml")] = Path("reports.yaml"),
    out: Annotated[Path, typer.Option(help="Output folder for .ipynb/.html/.metrics.json/index.html")] = Path(
        "reports"),
    jobs: Annotated[int, typer.Option(min=1, help="Notebooks run at once by the local runner (one kernel "
                                                  "each)")] = 2,
    only: Annotated[list[str] | None, typer.Option(help="Run only these report names or grid entries "
                                                        "(repeatable)")] = None,
    scheduler: Annotated[str | None, typer.Option(help="Run each report as a task on the Dask scheduler at this "
                                                       "address, e.g. tcp://10.0.0.5:8786")] = None,
    local_cluster: Annotated[int, typer.Option(min=0, help="Start a local Dask cluster of N worker processes for "
                                                           "the batch (0: the local runner)")] = 0,
    ship_data: Annotated[bool, typer.Option(help="Send the notebook, its 'reads:' and path parameters with each "
                                                 "task (workers without the shared file system)")] = False,
) -> None:
    """Run the papermill batch of calibration reports and write OUT/index.html.

    A grid entry in reports.yaml runs once per combination and shows in the index as a comparison. With
    --scheduler or --local-cluster the runs are Dask tasks; their files come back and are written under OUT only.
    """
    from evallab.reporting.batch import run_report

    results = run_report(config, out, jobs=jobs, only=only, scheduler=scheduler, local_cluster=local_cluster,
                         ship_data=ship_data)
    failed = [r for r in results if r.status != "ok"]
    for r in results:
        where = f" (cell {r.cell})" if r.cell is not None else ""
        line = f"{r.status:6s} {r.name} {r.seconds:6.1f}s" + (f"  {where} {r.error}" if r.error else "")
        typer.echo(line, err=r.status != "ok")
    typer.echo(f"wrote {Path(out) / 'index.html'}")
    if failed:
        raise typer.Exit(1)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    ctx: typer.Context,
    notebook: Annotated[Path, typer.Argument(help="The report notebook, e.g. notebooks/02_position_bias.ipynb")],
    out: Annotated[Path, typer.Option(help="Output folder [default: reports/adhoc]")] = None,
    name: Annotated[str, typer.Option(help="Report name: the outputs' file stem (letters, digits, _ - .) "
                                           "[default: the notebook's stem]")] = "",
    list_: Annotated[bool, typer.Option("--list", help="List the notebook's parameters and exit")] = False,
) -> None:
    """Run one report notebook by hand: OUT/NAME.ipynb, OUT/NAME.html and OUT/NAME.metrics.json.

    Set parameters with -p NAME VALUE (repeatable; --list shows them). Parameters are checked before the kernel starts: an unknown name is refused with the closest valid one, a
    value of the wrong type names the parameter and the expected type. A VALUE is read as a literal (3, 0.5,
    true, [a, b]) unless the parameter is a str.
    """
    from evallab.paths import reports_dir
    from evallab.reporting.batch import ReportSpec, run_one
    from evallab.reporting.params import (
        check_parameters,
        check_report_name,
        expected_type,
        notebook_parameters,
        parse_value,
    )

    if not notebook.exists():
        raise EvallabError(f"{notebook}: no such notebook")
    declared = notebook_parameters(notebook)
    if list_:
        for p in declared.values():
            typer.echo(f"{p.name}: {expected_type(p) or '?'} = {p.default}" + (f"  # {p.help}" if p.help else ""))
        return
    args, pairs = list(ctx.args), []
    while args:
        flag = args.pop(0)
        if flag not in ("-p", "--parameter") or len(args) < 2:
            raise EvallabError(f"unexpected argument {flag!r}; set a parameter with -p NAME VALUE")
        pairs.append((args.pop(0), args.pop(0)))
    params = {}
    for key, text in pairs:
        p = declared.get(key)
        params[key] = parse_value(text, expected_type(p) if p else "")
    report_name = check_report_name(name or notebook.stem)
    check_parameters(notebook, params)
    dest = out if out is not None else reports_dir() / "adhoc"
    res = run_one(ReportSpec(report_name, notebook.resolve(), params), dest)
    for f in (res.notebook, res.html):
        if f:
            typer.echo(f"wrote {f}")
    mpath = Path(dest) / f"{report_name}.metrics.json"
    if mpath.exists():
        typer.echo(f"wrote {mpath}")
    if res.status != "ok":
        where = f"cell {res.cell}: " if res.cell is not None else ""
        typer.echo(f"failed {report_name}: {where}{res.error}", err=True)
        raise typer.Exit(1)
    typer.echo(f"ok     {report_name} {res.seconds:.1f}s")


def _register() -> None:
    """Attach the subcommands that live beside their modules (each module's ``register(app)``)."""
    from evallab import (
        drift_cli,
        import_cli,
        judges_cli,
        local_cli,
        plan_cli,
        rubrics_cli,
        scenarios_cli,
        triggers_cli,
    )

    for mod in (judges_cli, scenarios_cli, triggers_cli, rubrics_cli, drift_cli, import_cli, local_cli, plan_cli):
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


if __name__ == "__main__":
    main()
