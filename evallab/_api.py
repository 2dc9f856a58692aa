"""The public surface in one place: every name a face exports (issue 25, item 1).

A face is a package's ``__init__`` (or a public module) with ``__all__``; what it does not list is private. This
module walks the faces, so ``docs/api.md`` (written by ``make api``, checked by the tests) is the list a newcomer
reads, and the count in it is the count of the public surface.
"""

from __future__ import annotations

import importlib
import inspect

#: the faces, in the order a notebook meets them
FACES = ("evallab", "evallab.verdicts", "evallab.datasets", "evallab.importers", "evallab.metrics",
         "evallab.judges", "evallab.experiments", "evallab.skills", "evallab.reporting",
         "evallab.reporting.sections", *(f"evallab.reporting.sections.{m}" for m in (
             "agreement", "position", "inflation", "triggers", "drift", "gaming", "corrected", "scales",
             "score_studies", "study", "labels")),
         "evallab.errors", "evallab.simulation", "evallab.testing", "evallab.paths")


def _summary(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    first = doc.strip().split("\n\n")[0].replace("\n", " ").strip()
    return first if len(first) <= 160 else first[:157].rstrip() + "..."


def _constant(obj) -> str:
    """A constant's value as the page shows it: short reprs as they are; a path or a long value by its type."""
    from pathlib import PurePath

    if isinstance(obj, PurePath):
        return "a path (the folder evallab runs from)"
    text = repr(obj)
    return text if len(text) <= 80 else f"a {type(obj).__name__} of {len(obj):,} items" if hasattr(obj, "__len__") \
        else text[:77] + "..."


def public_names(faces=FACES) -> dict[str, list[str]]:
    """Face → its ``__all__`` (sorted). Raises ``AttributeError`` for a face without ``__all__``."""
    return {f: sorted(importlib.import_module(f).__all__) for f in faces}


def api_markdown(faces=FACES) -> str:
    """``docs/api.md``: one table per face (name, kind, first line of its docstring), and the counts."""
    names = public_names(faces)
    seen: dict[int, str] = {}
    out = ["# evallab's public API", "",
           "Every name a face exports, with the first line of its docstring (`help(name)` has the rest: "
           "parameters, returns with units, the source of each method, an example). Everything else is private: "
           "modules whose name starts with `_` may change without notice. Written by `make api`; the tests check "
           "it is current.", ""]
    rows = []
    for face, ns in names.items():
        mod = importlib.import_module(face)
        out += [f"## `{face}`", "", _summary(mod), "", "| name | kind | what it is |", "|---|---|---|"]
        for n in ns:
            obj = getattr(mod, n)
            kind = "module" if inspect.ismodule(obj) else "class" if inspect.isclass(obj) else \
                "function" if callable(obj) else "constant"
            again = seen.get(id(obj)) if kind != "constant" else None
            what = f"same as `{again}`" if again else _summary(obj) if kind != "constant" else _constant(obj)
            seen.setdefault(id(obj), f"{face}.{n}")
            out.append(f"| `{n}` | {kind} | {what.replace('|', '/')} |")
        out.append("")
        rows.append((face, len(ns)))
    lib, sec = distinct_counts(faces)
    out += ["## Counts", "", "| face | names |", "|---|---|", *[f"| `{f}` | {k} |" for f, k in rows],
            f"| **all faces** | **{sum(k for _, k in rows)}** ({len(seen)} distinct objects; a name re-exported "
            f"by `evallab` counts once) |", "",
            f"Of the {len(seen)} distinct objects, {lib} are the library (data, estimators, judges, experiments, "
            f"skills, the report context and batch, errors, simulation) and {sec} are the report sections: one "
            "function per section of a bundled report, each called by one cell of its notebook "
            "(`evallab.reporting.sections.*`).", ""]
    return "\n".join(out)


def distinct_counts(faces=FACES) -> tuple[int, int]:
    """(library, report sections): distinct public objects outside and inside ``evallab.reporting.sections``.

    An object exported by both (none today) counts as library."""
    lib: set[int] = set()
    sec: set[int] = set()
    for face, ns in public_names(faces).items():
        mod = importlib.import_module(face)
        (sec if face.startswith("evallab.reporting.sections") else lib).update(id(getattr(mod, n)) for n in ns)
    return len(lib), len(sec - lib)


def main() -> None:  # python -m evallab._api > docs/api.md
    print(api_markdown(), end="")


if __name__ == "__main__":
    main()
