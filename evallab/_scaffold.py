"""``evallab init DIR``: a study folder a user owns, started from the bundled notebooks and batch file.

The folder gets

- ``reports.yaml`` — the batch (:mod:`evallab.reporting._batch_config`), its entries pointing at the copied
  notebooks; ``sweeps.yaml`` — the example parameter sweep;
- ``notebooks/`` — the report notebooks (and the gaming gate's manifest), copied from the package;
- ``data/README.md`` — where the user's tidy verdict tables go, with the table's columns (from
  :mod:`evallab.verdicts`);
- ``README.md`` — the commands of a study; ``.gitignore`` — reports, the reply cache, lock files, checkpoints.

The notebooks' defaults read the bundled data inside the package (:func:`evallab.paths.data_dir`), so
``evallab report`` in the new folder runs offline as it is. Existing files are never overwritten unless
``force=True``; a refusal names every file in the way and writes nothing.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from evallab.errors import EvallabError
from evallab.paths import _bundle

GITIGNORE = """\
# evallab: generated files (evallab report / run write reports/, a live judge's reply cache goes to .evallab-cache/)
reports/
.evallab-cache/
*.lock
*.lock.owner
.ipynb_checkpoints/
__pycache__/
"""

README = """\
# {name}: an evallab study

Made by `evallab init` (evallab {version}). Everything here is yours to edit.

| path | what |
|---|---|
| `reports.yaml` | the batch: one entry per report (notebook + parameters) |
| `sweeps.yaml` | an example parameter grid (`evallab report --config sweeps.yaml --out reports/sweep`) |
| `notebooks/` | the report notebooks; each starts with a `parameters` cell |
| `data/` | your own verdict tables (see `data/README.md` for the columns) |
| `reports/` | what the commands write (HTML, executed notebooks, `*.metrics.json`; git-ignored) |

```bash
evallab report                                    # every report of reports.yaml -> reports/index.html
evallab run notebooks/01_judge_agreement.ipynb --list                 # a notebook's parameters
evallab import my_judge_output.json --out data/verdicts.csv           # MT-Bench, AlpacaEval, inspect, promptfoo ...
evallab run notebooks/01_judge_agreement.ipynb -p verdicts_path data/verdicts.csv
```

With no `verdicts_path` the notebooks read the data bundled with evallab (LLMBar, AlpacaEval, keryx, MeowKit;
their sources and licences ship beside them: `python -c "import evallab.paths as p; print(p.data_dir())"`).
To run your table in the batch, set `verdicts_path: data/verdicts.csv` in an entry's `parameters`.
The notebooks open in JupyterLab (`jupyter lab notebooks/`) and "Run all" works with their defaults.
"""

DATA_README = """\
# Your verdict tables

Put your judges' verdicts here as a tidy table (`.csv`, `.jsonl` or `.parquet`): one row per judge reply.
`evallab import FILE... --out data/verdicts.csv` converts MT-Bench, AlpacaEval, Arena-Hard, inspect, promptfoo
and JudgeBench outputs, or any table with `--map TIDY=SOURCE`. Then point a notebook at it:
`evallab run notebooks/01_judge_agreement.ipynb -p verdicts_path data/verdicts.csv`.

Required columns: {required}. The others default to {defaults}.
One reply per key ({key}).

{columns}
"""


@dataclass
class InitResult:
    """What :func:`init_study` wrote: the folder and the files (relative to it)."""

    folder: Path
    written: list[str] = field(default_factory=list)
    overwritten: list[str] = field(default_factory=list)


def _schema_text() -> str:
    from evallab import verdicts

    doc = verdicts.__doc__ or ""
    table = doc.split("Columns\n-------\n", 1)[-1].split("\nThe key is", 1)[0].strip("\n")
    return "```text\n" + table + "\n```"


def _batch_file(name: str) -> str:
    """The bundled batch file ``name`` for a study: ``reads`` keeps only the study's own files (the bundled data a
    report reads ship inside the package, on every worker too)."""
    src = _bundle(name)
    doc = yaml.safe_load(src.read_text(encoding="utf-8"))
    for entry in doc.get("reports", []):
        reads = [r for r in entry.get("reads") or [] if not str(r).startswith("data/")]
        if reads:
            entry["reads"] = reads
        else:
            entry.pop("reads", None)
    head = [ln for ln in src.read_text(encoding="utf-8").splitlines() if ln.startswith("#")]
    head = [ln.replace("`make report` / ", "") for ln in head
            if "`reads`" not in ln and "make bench" not in ln and "--ship-data" not in ln]
    note = ["# Written by `evallab init`; the notebook paths are relative to this file. Without verdicts_path the",
            "# notebooks read the data bundled with evallab."]
    return "\n".join(note + head) + "\n" + yaml.safe_dump(doc, sort_keys=False, width=110, allow_unicode=True)


def _files(name: str) -> dict[str, str | Path]:
    """Relative path → text to write or bundled file to copy."""
    import evallab

    out: dict[str, str | Path] = {}
    for nb in sorted(_bundle("notebooks").iterdir()):
        if nb.is_file() and nb.suffix in (".ipynb", ".yaml", ".yml", ".md"):
            out[f"notebooks/{nb.name}"] = nb
    out["reports.yaml"] = _batch_file("reports.yaml")
    out["sweeps.yaml"] = _batch_file("sweeps.yaml")
    out["README.md"] = README.format(name=name, version=evallab.__version__)
    from evallab import verdicts

    out["data/README.md"] = DATA_README.format(
        required=", ".join(f"`{c}`" for c in verdicts.REQUIRED),
        defaults=", ".join(f"`{k}={v!r}`" for k, v in verdicts.DEFAULTS.items()),
        key=", ".join(verdicts.KEY), columns=_schema_text())
    out[".gitignore"] = GITIGNORE
    return out


def init_study(folder: str | Path, *, force: bool = False) -> InitResult:
    """Scaffold a study folder (see the module docstring); the folder may exist.

    Parameters
    ----------
    folder : str or Path
        The study folder (created, with parents, when missing).
    force : bool, default False
        Overwrite files that exist (they are listed in ``InitResult.overwritten``).

    Returns
    -------
    InitResult

    Raises
    ------
    EvallabError
        ``folder`` is a file, or (without ``force``) some of the files exist: one line naming them; nothing is
        written then.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise EvallabError(f"{folder}: is a file; expected a folder for the study")
    files = _files(folder.resolve().name or "study")
    existing = [rel for rel in files if (folder / rel).exists()]
    if existing and not force:
        raise EvallabError(f"{folder}: would overwrite {', '.join(existing)}; pass --force (force=True) to "
                           "replace them, or choose an empty folder")
    res = InitResult(folder)
    for rel, what in files.items():
        dest = folder / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(what, Path):
            shutil.copyfile(what, dest)
        else:
            dest.write_text(what, encoding="utf-8")
        (res.overwritten if rel in existing else res.written).append(rel)
    return res
