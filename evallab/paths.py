"""Where bundled data and generated reports live.

Read: the bundled data (``data/``), the notebooks and the batch files (``reports.yaml``, ``sweeps.yaml``). In a
checkout (``pip install -e .``) they are the repository's own folders; in an installed wheel they ship inside the
package, under ``evallab/_bundled/`` (``pyproject.toml``: ``tool.hatch.build.targets.wheel.force-include``), and are
found with :mod:`importlib.resources`. Nothing is fetched at run time, and no path is resolved against a repository
root that an installed package does not have.

Written: reports, the reply cache and run state — never inside the installed package:

- reports (:func:`reports_dir`): ``EVALLAB_REPORTS``; else ``reports/`` of the project the current folder is in —
  the checkout when running inside it, or the study folder (the nearest folder up from the current one holding a
  ``reports.yaml``, as ``evallab init`` writes); else ``./reports``;
- the reply cache: ``EVALLAB_CACHE``; else ``.evallab-cache/`` of that project; else platformdirs' user cache folder
  for ``evallab`` (``~/.cache/evallab`` on Linux);
- run state (:func:`state_dir`): ``EVALLAB_STATE``; else platformdirs' user state folder.

``EVALLAB_DATA`` overrides the bundled data folder.
"""

from __future__ import annotations

import os
from pathlib import Path

#: the repository root when evallab is installed from a checkout (``pip install -e .``); in an installed wheel the
#: folder holding the package (site-packages), which nothing is read from or written to
REPO_ROOT = Path(__file__).resolve().parents[1]

#: what the wheel ships under ``evallab/_bundled/`` (a checkout keeps them at its root)
_BUNDLED = ("data", "notebooks", "reports.yaml", "sweeps.yaml")


def _is_checkout() -> bool:
    """True when this package is the ``evallab/`` folder of a checkout (its ``pyproject.toml``, ``data/`` and
    ``notebooks/`` beside it), False in an installed wheel."""
    return all((REPO_ROOT / p).exists() for p in ("pyproject.toml", "data", "notebooks")) \
        and not (Path(__file__).resolve().parent / "_bundled").is_dir()


def _bundle(*parts: str) -> Path:
    """A bundled file or folder: ``_bundle("data", "llmbar")``, ``_bundle("notebooks")``,
    ``_bundle("reports.yaml")``. The checkout's own path in a checkout; the package's copy
    (``importlib.resources.files("evallab") / "_bundled" / ...``) in an installed wheel.

    Raises
    ------
    EvallabError
        ``parts[0]`` is not one of ``data``, ``notebooks``, ``reports.yaml``, ``sweeps.yaml``.
    """
    if not parts or parts[0] not in _BUNDLED:
        from evallab.errors import EvallabError

        raise EvallabError(f"{parts!r}: expected a path under one of {_BUNDLED}")
    if _is_checkout():
        return REPO_ROOT.joinpath(*parts)
    from importlib.resources import files

    res = files("evallab").joinpath("_bundled", *parts)
    return Path(str(res))  # a regular install: a real folder (zip imports are not supported)


def _project_dir(cwd: Path | None = None) -> Path | None:
    """The project the current folder belongs to: the checkout when ``cwd`` is inside it, else the nearest folder
    from ``cwd`` up holding a ``reports.yaml`` (a study folder, ``evallab init``), else ``None``."""
    cwd = Path(cwd or Path.cwd()).resolve()
    if _is_checkout() and cwd.is_relative_to(REPO_ROOT):
        return REPO_ROOT
    for folder in (cwd, *cwd.parents):
        if (folder / "reports.yaml").is_file():
            return folder
    return None


def _project_roots() -> list[str]:
    """The folders a shown path is made relative to, in this order: the project (:func:`_project_dir`), the
    bundled files' folder (an installed wheel), the repository root."""
    roots = (_project_dir(), _bundle("data").parent, REPO_ROOT)
    return list(dict.fromkeys(str(r) for r in roots if r is not None))


def _strip_roots(text: str, roots: list[str]) -> str:
    """``text`` with each of ``roots`` (absolute folders) removed before a ``/``, and a bare root shown as "."."""
    for root in roots:
        text = text.replace(root + "/", "").replace(root, ".")
    return text


def _resolve(path: str | os.PathLike) -> Path:
    """A path as a report parameter gives it: absolute as is; relative from the project (:func:`_project_dir`) or
    the current folder when it exists there; else a ``data/...`` path is taken from the bundled data (so a
    notebook's default such as ``data/live/smollm2`` works in a study folder and in an installed package)."""
    p = Path(path)
    if p.is_absolute():
        return p
    for base in (_project_dir(), Path.cwd()):
        if base is not None and (base / p).exists():
            return base / p
    if p.parts and p.parts[0] == "data":
        return data_dir().joinpath(*p.parts[1:])
    return (_project_dir() or Path.cwd()) / p


def data_dir(name: str | None = None) -> Path:
    """The bundled data folder (or one dataset's subfolder, e.g. ``data_dir("llmbar")``).

    ``EVALLAB_DATA``, else the checkout's ``data/`` or the installed package's copy."""
    env = os.environ.get("EVALLAB_DATA")
    base = Path(env) if env else _bundle("data")
    return base / name if name else base


def reports_dir() -> Path:
    """Where reports and ``*.metrics.json`` are written: ``EVALLAB_REPORTS`` or ``reports/`` of the project.

    The project is the checkout or study folder the current folder is in; outside any, the current folder."""
    env = os.environ.get("EVALLAB_REPORTS")
    return Path(env) if env else (_project_dir() or Path.cwd()) / "reports"


def _cache_dir() -> Path:
    """The reply cache's folder: ``EVALLAB_CACHE``, else ``.evallab-cache/`` of the checkout or study folder the
    current folder is in, else platformdirs' user cache folder for ``evallab`` (``~/.cache/evallab`` on Linux)."""
    env = os.environ.get("EVALLAB_CACHE")
    if env:
        return Path(env)
    project = _project_dir()
    if project is not None:
        return project / ".evallab-cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir("evallab"))


def state_dir() -> Path:
    """Per-user run state (the local llama.cpp servers' registry, their logs): ``EVALLAB_STATE`` or
    platformdirs' user state folder for ``evallab`` (``~/.local/state/evallab`` on Linux)."""
    env = os.environ.get("EVALLAB_STATE")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_state_dir("evallab"))


def log_dir() -> Path:
    """Where evallab keeps the logs of the servers it starts: ``<state_dir>/logs``."""
    return state_dir() / "logs"

__all__ = ["REPO_ROOT", "data_dir", "reports_dir"]
