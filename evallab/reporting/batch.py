"""The papermill batch: notebooks → executed notebooks → HTML reports → ``index.html``.

``reports.yaml`` lists the batch::

    reports:
      - name: 01_judge_agreement            # report name: reports/<name>.html, <name>.metrics.json
        notebook: notebooks/01_judge_agreement.ipynb
        parameters: {n_resamples: 1000}     # papermill parameters (literals)

:func:`run_batch` runs every entry through papermill (in parallel, one kernel per worker), exports HTML without
input cells (nbconvert), and writes ``index.html`` with each report's headline numbers (read from the
``<name>.metrics.json`` the notebook wrote through :func:`save_metrics`) and a link. A failing notebook is
reported with its cell and error while the others finish.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import yaml

from evallab.errors import DataError
from evallab.paths import REPO_ROOT, reports_dir
from evallab.reporting.params import ParameterError, check_parameters, check_report_name


@dataclass
class ReportSpec:
    """One entry of ``reports.yaml``."""

    name: str
    notebook: Path
    parameters: dict = field(default_factory=dict)
    title: str = ""


@dataclass
class ReportResult:
    """What happened to one report of the batch."""

    name: str
    status: str  # "ok" or "failed"
    seconds: float
    html: str | None = None
    notebook: str | None = None
    cell: int | None = None  # failing code cell, 1-based, counted in the source notebook
    error: str | None = None
    metrics: dict = field(default_factory=dict)
    title: str = ""


def load_config(path: str | Path) -> list[ReportSpec]:
    """Read and check ``reports.yaml``.

    Raises
    ------
    DataError
        Missing file, invalid YAML, a missing ``reports`` list, an entry without ``name``/``notebook``, a
        duplicated name, a notebook that does not exist, or ``parameters`` that are not a mapping.
    """
    path = Path(path)
    if not path.exists():
        raise DataError("no such file; expected a reports.yaml listing the batch", path=str(path))
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DataError(f"not valid YAML ({exc})", path=str(path)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("reports"), list):
        raise DataError("expected a mapping with a 'reports' list", path=str(path), column="reports")
    specs, seen = [], set()
    for i, e in enumerate(doc["reports"], start=1):
        if not isinstance(e, dict):
            raise DataError(f"entry {i} is a {type(e).__name__}; expected a mapping", path=str(path), row=i)
        for k in ("name", "notebook"):
            if not isinstance(e.get(k), str) or not e[k]:
                raise DataError(f"entry {i} has no '{k}' string", path=str(path), row=i, column=k)
        if e["name"] in seen:
            raise DataError(f"duplicated report name {e['name']!r}", path=str(path), row=i, column="name")
        seen.add(e["name"])
        try:
            check_report_name(e["name"])
        except ParameterError as exc:
            raise DataError(str(exc), path=str(path), row=i, column="name") from None
        nb = Path(e["notebook"])
        nb = nb if nb.is_absolute() else (path.parent / nb)
        if not nb.exists():
            raise DataError(f"notebook {e['notebook']!r} does not exist", path=str(path), row=i, column="notebook")
        params = e.get("parameters") or {}
        if not isinstance(params, dict):
            raise DataError("'parameters' must be a mapping of literals", path=str(path), row=i,
                            column="parameters")
        specs.append(ReportSpec(e["name"], nb.resolve(), params, str(e.get("title", ""))))
    return specs


def _jsonable(x):
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    try:
        import pandas as pd

        if x is pd.NA or x is pd.NaT:
            return None
    except ImportError:  # pragma: no cover
        pass
    return str(x)


def save_metrics(report_name: str, metrics: Mapping, *, title: str = "", reports_dir_: str | Path = "",
                 headline: Sequence[str] | None = None) -> Path:
    """Write a notebook's headline numbers to ``<reports_dir>/<report_name>.metrics.json``.

    Parameters
    ----------
    report_name : the report's name (file stem).
    metrics : mapping of metric name → number/string/list/dict (numpy scalars and NaN are converted; NaN → null).
    title : the report's title for ``index.html``.
    reports_dir_ : folder; ``""`` (a notebook run by hand) means ``<reports>/adhoc`` (see
        :func:`evallab.paths.reports_dir`), so a hand run never overwrites the batch's reports; the batch
        always passes its output folder.
    headline : the metric names to show in ``index.html`` (default: every top-level scalar).

    Returns the path written. The file is ``{"report", "title", "written_at", "headline", "metrics"}``.
    """
    check_report_name(report_name)
    out = Path(reports_dir_) if reports_dir_ else reports_dir() / "adhoc"
    out.mkdir(parents=True, exist_ok=True)
    m = _jsonable(dict(metrics))
    if headline is None:
        headline = [k for k, v in m.items() if isinstance(v, (int, float, str, bool)) or v is None]
    doc = {"report": report_name, "title": title,
           "written_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
           "headline": list(headline), "metrics": m}
    path = out / f"{report_name}.metrics.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def _title(nb_path: Path) -> str:
    try:
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for c in nb.get("cells", []):
            if c.get("cell_type") == "markdown":
                for line in "".join(c.get("source", "")).splitlines():
                    if line.startswith("#"):
                        return line.lstrip("#").strip()
    except (OSError, ValueError):
        pass
    return nb_path.stem


def export_html(ipynb: Path, html_path: Path) -> None:
    """Export an executed notebook to HTML without input cells or prompts (nbconvert)."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(ipynb), as_version=4)
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb)
    html_path.write_text(body, encoding="utf-8")


def _code_cell_number(ipynb: Path, cell_index: int) -> int:
    """1-based number of the failing code cell in the SOURCE notebook (papermill's injected cell not counted)."""
    try:
        cells = [c for c in json.loads(ipynb.read_text(encoding="utf-8"))["cells"]
                 if "papermill-error-cell-tag" not in c.get("metadata", {}).get("tags", [])]
    except (OSError, ValueError, KeyError):
        return cell_index
    n = 0
    for c in cells[: cell_index + 1]:
        if c.get("cell_type") == "code" and "injected-parameters" not in c.get("metadata", {}).get("tags", []):
            n += 1
    return n


def run_one(spec: ReportSpec, out_dir: str | Path, *, kernel: str = "python3", timeout: int = 1800,
            extra_parameters: Mapping | None = None) -> ReportResult:
    """Execute one report notebook with papermill and export it; never raises for a notebook error."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    out = Path(out_dir).resolve()
    t0 = time.perf_counter()
    res = ReportResult(spec.name, "ok", 0.0, title=spec.title or _title(spec.notebook))
    user_params = {**spec.parameters, **(extra_parameters or {})}
    try:  # before anything is written or deleted, and before a kernel starts
        check_report_name(spec.name)
        check_parameters(spec.notebook, user_params, where=spec.name)
    except ParameterError as exc:
        res.status, res.error = "failed", str(exc)
        return res
    out.mkdir(parents=True, exist_ok=True)
    ipynb, html_path = out / f"{spec.name}.ipynb", out / f"{spec.name}.html"
    assert ipynb.parent == out and html_path.parent == out
    (out / f"{spec.name}.metrics.json").unlink(missing_ok=True)
    params = {**user_params, "report_name": spec.name, "reports_dir": str(out)}
    res.notebook = str(ipynb)
    # kernels draw with matplotlib's inline backend (Agg-based, headless) so figures land in the report, whatever
    # MPLBACKEND the caller set for itself (e.g. Agg in tests)
    saved = os.environ.get("MPLBACKEND")
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    try:
        pm.execute_notebook(str(spec.notebook), str(ipynb), parameters=params, kernel_name=kernel,
                            cwd=str(spec.notebook.parent), progress_bar=False, log_output=False,
                            execution_timeout=timeout,
                            # the kernel's own log lines ("running over TCP", a shutdown KeyboardInterrupt) are noise
                            extra_arguments=["--IPKernelApp.log_level=CRITICAL"])
    except PapermillExecutionError as exc:
        res.status, res.cell = "failed", _code_cell_number(ipynb, int(exc.cell_index))
        first = next((ln for ln in str(exc.source).splitlines() if ln.strip()), "")
        res.error = f"{exc.ename}: {exc.evalue} [in: {first[:80]}]"
    except Exception as exc:  # kernel death, bad parameters, unreadable notebook: report, do not stop the batch
        res.status, res.error = "failed", f"{type(exc).__name__}: {exc}"
    finally:
        if saved is None:
            os.environ.pop("MPLBACKEND", None)
        else:
            os.environ["MPLBACKEND"] = saved
    if ipynb.exists():
        try:
            export_html(ipynb, html_path)
            res.html = str(html_path)
        except Exception as exc:  # pragma: no cover - nbconvert failure is reported like a notebook failure
            res.status = "failed"
            res.error = (res.error + "; " if res.error else "") + f"HTML export failed: {exc}"
    mpath = out / f"{spec.name}.metrics.json"
    if mpath.exists():
        try:
            doc = json.loads(mpath.read_text(encoding="utf-8"))
            res.metrics = {k: doc["metrics"].get(k) for k in doc.get("headline", [])}
            res.title = doc.get("title") or res.title
        except (ValueError, KeyError):
            res.metrics = {}
    elif res.status == "ok":
        res.status, res.error = "failed", f"the notebook wrote no {mpath.name}"
    res.seconds = time.perf_counter() - t0
    return res


def run_batch(specs: Sequence[ReportSpec], out_dir: str | Path = "", *, jobs: int = 2, kernel: str = "python3",
              progress: bool = True, extra_parameters: Mapping | None = None,
              index_names: Sequence[str] | None = None) -> list[ReportResult]:
    """Run every report (``jobs`` at a time, each in its own process and kernel) and write ``index.html``.

    Returns the results in the order of ``specs``; failed notebooks have ``status="failed"`` with the cell index
    and error. ``index.html`` is written even when some fail. ``index_names`` (the whole batch, when only some
    reports are re-run) keeps the other reports' previous entries (from ``batch.json``) in the index, in that
    order.
    """
    from tqdm.auto import tqdm

    out = Path(out_dir) if out_dir else reports_dir()
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, ReportResult] = {}
    bar = tqdm(total=len(specs), desc="reports", unit="nb", disable=not progress)
    if jobs <= 1 or len(specs) <= 1:
        for s in specs:
            results[s.name] = run_one(s, out, kernel=kernel, extra_parameters=extra_parameters)
            bar.set_postfix_str(f"{s.name}: {results[s.name].status}")
            bar.update()
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futs = {pool.submit(run_one, s, out, kernel=kernel, extra_parameters=extra_parameters): s
                    for s in specs}
            for f in as_completed(futs):
                s = futs[f]
                try:
                    results[s.name] = f.result()
                except Exception as exc:  # worker died
                    results[s.name] = ReportResult(s.name, "failed", 0.0, error=f"{type(exc).__name__}: {exc}")
                bar.set_postfix_str(f"{s.name}: {results[s.name].status}")
                bar.update()
    bar.close()
    ordered = [results[s.name] for s in specs]
    index = ordered
    if index_names:
        previous = {}
        try:
            previous = {d["name"]: ReportResult(**d) for d in json.loads((out / "batch.json").read_text())}
        except (OSError, ValueError, TypeError, KeyError):
            pass
        merged = {**{k: v for k, v in previous.items() if v.html and Path(v.html).exists()}, **results}
        index = [merged[n] for n in index_names if n in merged]
    write_index(index, out)
    return ordered


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, dict)):
        return html.escape(json.dumps(v)[:200])
    return html.escape(str(v))


def write_index(results: Sequence[ReportResult], out_dir: str | Path) -> Path:
    """Write ``index.html``: one section per report with status, headline numbers and a link."""
    out = Path(out_dir)
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>evallab calibration reports</title>",
        "<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}"
        ".failed{color:#b00020}.ok{color:#1b5e20}</style></head><body>",
        "<h1>evallab calibration reports</h1>",
        f"<p>Generated {now} by <code>evallab report</code>. Each report is a papermill run of a notebook in "
        "<code>notebooks/</code>; click a title to open it.</p>",
    ]
    for r in results:
        link = f"<a href='{html.escape(Path(r.html).name)}'>{html.escape(r.title or r.name)}</a>" if r.html else \
            html.escape(r.title or r.name)
        parts.append(f"<h2>{link}</h2><p class='{r.status}'>status: <b>{r.status}</b> "
                     f"({r.seconds:.1f} s)</p>")
        if r.status == "failed":
            cell = f"cell {r.cell}: " if r.cell is not None else ""
            parts.append(f"<pre class='failed'>{html.escape(cell + (r.error or ''))}</pre>")
        if r.metrics:
            rows = "".join(f"<tr><th>{html.escape(k.replace('_', ' '))}</th><td>{_fmt(v)}</td></tr>"
                           for k, v in r.metrics.items())
            parts.append(f"<table>{rows}</table>")
    parts.append("</body></html>")
    path = out / "index.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    (out / "batch.json").write_text(json.dumps([asdict(r) for r in results], indent=2, default=str),
                                    encoding="utf-8")
    return path


DEFAULT_CONFIG = REPO_ROOT / "reports.yaml"
