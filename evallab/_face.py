"""A package face whose names load on first use (PEP 562): ``__getattr__`` and ``__dir__`` for a package
``__init__`` that re-exports names from its private modules without importing them all at once."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_face(package: str, exports: Mapping[str, str | tuple[str, str]]
              ) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public names are the keys of ``exports`` (each
    mapped to the private module, relative to the package, that defines it — or to ``(module, name there)`` when
    the face names it otherwise, ``(module, None)`` for a public submodule; a module starting with ``evallab.`` is
    absolute).

    A name is imported from its module on first use and stored in the package, so later look-ups skip
    ``__getattr__``; an unknown name is an :class:`AttributeError`, as for any module.
    """
    names = sorted(exports)

    def __getattr__(name: str):
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = module if isinstance(module, tuple) else (module, name)
        found = importlib.import_module(module if module.startswith("evallab.") else f"{package}.{module}")
        value = found if attr is None else getattr(found, attr)  # (module, None): the (public) submodule itself
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:  # the face: its lazy names and what it defines itself (``__all__``)
        return sorted(set(names) | set(getattr(sys.modules[package], "__all__", ())))

    return __getattr__, __dir__
