"""``evallab report`` (:func:`evallab.reporting._batch.run_report`) and ``evallab run``
(:func:`evallab.reporting._batch.run_notebook`; ``--list``: :func:`evallab.reporting._params.notebook_parameters`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evallab.errors import EvallabError


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
    from evallab.reporting._batch import run_report

    results = run_report(config, out, jobs=jobs, only=only, scheduler=scheduler, local_cluster=local_cluster,
                         ship_data=ship_data)
    for r in results:
        where = f" (cell {r.cell})" if r.cell is not None else ""
        line = f"{r.status:6s} {r.name} {r.seconds:6.1f}s" + (f"  {where} {r.error}" if r.error else "")
        typer.echo(line, err=r.status != "ok")
    typer.echo(f"wrote {Path(out) / 'index.html'}")
    if any(r.status != "ok" for r in results):
        raise typer.Exit(1)


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
    true, [a, b]) unless the parameter is a str.
    """
    if list_:
        from evallab.reporting._params import notebook_parameters

        for p in notebook_parameters(notebook).values():
            typer.echo(str(p))
        return
    from evallab.reporting._batch import run_notebook

    pairs = _parameter_pairs(ctx.args)
    for key, value in pairs.items():  # the kernel runs in the notebook's folder: a path typed from here made absolute
        if key.endswith("_path") and value and not Path(value).is_absolute() and Path(value).exists() \
                and not (Path(notebook).parent / value).exists():
            pairs[key] = str(Path(value).resolve())
    res = run_notebook(notebook, pairs, out_dir=out, name=name, from_text=True)
    for f in (res.notebook, res.html):
        if f:
            typer.echo(f"wrote {f}")
    metrics = Path(res.notebook).with_name(f"{res.name}.metrics.json") if res.notebook else None
    if metrics is not None and metrics.exists():
        typer.echo(f"wrote {metrics}")
    if res.status != "ok":
        where = f"cell {res.cell}: " if res.cell is not None else ""
        typer.echo(f"failed {res.name}: {where}{res.error}", err=True)
        raise typer.Exit(1)
    typer.echo(f"ok     {res.name} {res.seconds:.1f}s")


def register(app: typer.Typer) -> None:
    """Attach ``report`` and ``run``."""
    app.command("report")(report)
    app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(run)
