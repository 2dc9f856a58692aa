"""No import cycles anywhere in the package.

The graph is built statically with :mod:`ast` from every module under ``evallab/``: an edge A → B for every
``import`` or ``from ... import`` of an evallab module B in A, at module level or inside a function (a lazy import
still ties the two modules together), with relative imports resolved and ``from evallab.x import y`` read as an
import of the module ``evallab.x.y`` when ``y`` is a submodule. Imports under ``if TYPE_CHECKING:`` never run and
are left out. Importing a submodule also runs its parent package's ``__init__``; that edge is not drawn (every
module importing a sibling would otherwise close a "cycle" through its own package).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "evallab"


def module_files(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__.py``)."""
    out = {}
    for f in sorted((root / package).rglob("*.py")):
        parts = list(f.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node, skipping the bodies of ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _known(name: str, modules) -> str | None:
    """The longest prefix of ``name`` that is a module of the package (``evallab.a.b.attr`` → ``evallab.a.b``)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        cand = ".".join(parts[:i])
        if cand in modules:
            return cand
    return None


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module → the package's modules it imports (anywhere in its file)."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        here = mod.split(".") if is_pkg else mod.split(".")[:-1]  # the package relative imports start from
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                    source = ".".join([*base, node.module] if node.module else base)
                else:
                    source = node.module or ""
                for a in node.names:
                    sub = f"{source}.{a.name}"
                    targets.append(sub if sub in modules else source)
            for t in targets:
                if t == PACKAGE or t.startswith(PACKAGE + "."):
                    k = _known(t, modules)
                    if k is not None:
                        graph[mod].add(k)
    return graph


def cyclic_components(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components that hold a cycle (more than one module, or a module importing itself),
    each sorted, found with Tarjan's algorithm (iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in graph[v]:
                    components.append(sorted(comp))
    return sorted(components)


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per cyclic component (:func:`cyclic_components`), each a path ``[a, b, ..., a]`` along the
    edges; sorted, so a failure reads the same on every run."""
    return sorted(_cycle_in(graph, set(c)) for c in cyclic_components(graph))


def _cycle_in(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first search inside the component)."""
    start = min(comp)
    if start in graph[start]:
        return [start, start]
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & comp):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [*reversed(path), start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start} in its component")  # pragma: no cover


def test_no_import_cycles():
    graph = import_graph(module_files())
    comps = cyclic_components(graph)
    lines = [f"  {' -> '.join(_cycle_in(graph, set(c)))}   (modules in the cycle's component: {', '.join(c)})"
             for c in comps]
    assert not comps, "import cycles in evallab:\n" + "\n".join(lines)


# ----------------------------------------------------------------------------------- the checker itself
def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        p = tmp_path / PACKAGE / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return module_files(tmp_path)


def test_graph_reads_every_kind_of_import(tmp_path):
    mods = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from evallab.sub import b\nimport evallab.c as c\n",
        "c.py": "def f():\n    from .sub.b import thing\n    from . import a\n",
        "sub/__init__.py": "from .b import thing\n",
        "sub/b.py": "from ..c import f\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                    "    from evallab import a\nimport os\nthing = 1\n",
    })
    g = import_graph(mods)
    assert g == {"evallab": set(), "evallab.a": {"evallab.sub.b", "evallab.c"},
                 "evallab.c": {"evallab.sub.b", "evallab.a"}, "evallab.sub": {"evallab.sub.b"},
                 "evallab.sub.b": {"evallab.c"}}
    # one component {a, c, sub.b}; its shortest cycle through a: a -> c -> a (function-level in c)
    assert find_cycles(g) == [["evallab.a", "evallab.c", "evallab.a"]]
    assert cyclic_components(g) == [["evallab.a", "evallab.c", "evallab.sub.b"]]
    assert find_cycles({"x": {"y"}, "y": {"z"}, "z": set()}) == []
    assert find_cycles({"x": {"x"}}) == [["x", "x"]]
    assert find_cycles({"p": {"q"}, "q": {"p"}, "r": {"s"}, "s": {"t"}, "t": {"r"}}) == [
        ["p", "q", "p"], ["r", "s", "t", "r"]]

