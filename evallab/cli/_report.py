"""``evallab report`` (:func:`evallab.reporting._batch.run_report`) and ``evallab run``
(:func:`evallab.reporting._batch.run_notebook`; ``--list``: :func:`evallab.reporting._params.notebook_parameters`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer

from evallab.errors import EvallabError


def report(
    config: Annotated[Path, typer.Option(help="The batch: reports.yaml")] = Path("reports.yaml"),
    out: Annotated[Path, typer.Option(help="Output folder for .ipynb/.html/.metrics.json/index.html")] = Path(
        "reports"),
    jobs: Annotated[int, typer.Option(min=1, help="Notebooks run at once by the local runner (one kernel "
                                                  "each, its BLAS/OpenMP threads limited to cores / jobs unless "
                                                  "OMP_NUM_THREADS etc. are set)")] = 2,
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
    Exit 1 if a report failed; 2 if every failure was bad input (a malformed table, a bad parameter: its one line).
    """
    from evallab.reporting._batch import run_report

    results = run_report(config, out, jobs=jobs, only=only, scheduler=scheduler, local_cluster=local_cluster,
                         ship_data=ship_data)
    for r in results:
        where = f" (cell {r.cell})" if r.cell is not None else ""
        error = f"error: {input_line(r.input_error)}" if r.input_error else r.error
        line = f"{r.status:6s} {r.name} {r.seconds:6.1f}s" + (f"  {where} {error}" if error else "")
        typer.echo(line, err=r.status != "ok")
    typer.echo(f"wrote {Path(out) / 'index.html'}")
    failed = [r for r in results if r.status != "ok"]
    if failed:  # bad input only (a malformed table, a bad parameter): 2, as a command refusing its input
        raise typer.Exit(2 if all(r.input_error for r in failed) else 1)


def input_line(message: str, typed: Mapping[str, str] | None = None) -> str:
    """A report's bad-input error (:attr:`ReportResult.input_error`) as the one line the command prints: each path
    ``evallab run`` made absolute shown as typed (``typed``: absolute → as typed), the others relative to the
    project (:func:`evallab.reporting._batch_export.tidy_paths`, not shortened: the user must find the file); one
    line however the message is wrapped."""
    from evallab.reporting._batch_export import tidy_paths

    for absolute, as_typed in sorted((typed or {}).items(), key=lambda kv: -len(kv[0])):
        message = message.replace(absolute, as_typed)
    return " ".join(tidy_paths(message, shorten=False).split())


def _parameter_pairs(args: list[str]) -> dict[str, str]:
    """``-p NAME VALUE`` (or ``--parameter``), repeatable, as typed: NAME → VALUE text."""
    args, pairs = list(args), {}
    while args:
        flag = args.pop(0)
        if flag not in ("-p", "--parameter") or len(args) < 2:
            raise EvallabError(f"unexpected argument {flag!r}; set a parameter with -p NAME VALUE")
        key = args.pop(0)
        pairs[key] = args.pop(0)
    return pairs


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
    true, [a, b]) unless the parameter is a str. A report that stops on bad input (a malformed table) prints its
    one line and exits 2, its partial HTML written; any other failure exits 1.
    """
    if list_:
        from evallab.reporting._params import notebook_parameters

        for p in notebook_parameters(notebook).values():
            typer.echo(str(p))
        return
    from evallab.reporting._batch import run_notebook

    pairs, typed = _parameter_pairs(ctx.args), {}
    for key, value in pairs.items():  # the kernel runs in the notebook's folder: a path typed from here made absolute
        if key.endswith("_path") and value and not Path(value).is_absolute() and Path(value).exists() \
                and not (Path(notebook).parent / value).exists():
            pairs[key] = str(Path(value).resolve())
            typed[pairs[key]] = value
    res = run_notebook(notebook, pairs, out_dir=out, name=name, from_text=True)
    for f in (res.notebook, res.html):
        if f:
            typer.echo(f"wrote {f}")
    metrics = Path(res.notebook).with_name(f"{res.name}.metrics.json") if res.notebook else None
    if metrics is not None and metrics.exists():
        typer.echo(f"wrote {metrics}")
    if res.input_error:  # bad input (a malformed table, a design it cannot support): its one line, exit 2
        typer.echo(f"error: {input_line(res.input_error, typed)}", err=True)
        raise typer.Exit(2)
    if res.status != "ok":
        where = f"cell {res.cell}: " if res.cell is not None else ""
        typer.echo(f"failed {res.name}: {where}{res.error}", err=True)
        raise typer.Exit(1)
    typer.echo(f"ok     {res.name} {res.seconds:.1f}s")


def register(app: typer.Typer) -> None:
    """Attach ``report`` and ``run``."""
    app.command("report")(report)
    app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(run)
