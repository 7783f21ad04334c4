"""Lazy package faces: a package's names resolve on first use, so importing the package (or a
light submodule of it) does not import every heavy dependency (PEP 562)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable, Callable]:
    """``(__getattr__, __dir__)`` for a package whose ``exports`` map each public name to the
    submodule (relative to ``package``) that defines it.

    >>> getattr_, _ = lazy_exports("memlens", {"MemlensError": "errors"})
    >>> getattr_("MemlensError").__name__
    'MemlensError'
    """

    def __getattr__(name: str):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{exports[name]}"), name)

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
