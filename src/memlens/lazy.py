"""Lazy package faces: a package's names resolve on first use, so importing the package (or a
light submodule of it) does not import every heavy dependency (PEP 562).

A face is the package's public API (``__all__``, docs/architecture.md "Public API and deprecation
policy"); it may also keep a deprecated name alive for one minor release, warning on each use.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from types import ModuleType


def lazy_exports(package: str, exports: Mapping[str, str], *,
                 deprecated: Mapping[str, tuple[str, str]] | None = None
                 ) -> tuple[Callable, Callable]:
    """``(__getattr__, __dir__)`` for a package whose ``exports`` map each public name to the
    submodule (relative to ``package``) that defines it.

    ``deprecated`` maps an old name to ``(module, replacement)``: the absolute module that defines
    it now and what to use instead. The name still resolves (the same object) but warns with a
    ``DeprecationWarning`` naming the replacement; ``dir()`` leaves it out.

    A name exported from a submodule of the same name (``memlens.stats.analyze``, the function in
    the module ``memlens.stats.analyze``) stays the exported object after that submodule is
    imported, as an eager ``from .analyze import analyze`` would keep it.

    >>> getattr_, _ = lazy_exports("memlens", {"MemlensError": "errors"})
    >>> getattr_("MemlensError").__name__
    'MemlensError'
    """
    old_names = dict(deprecated or {})

    def __getattr__(name: str):
        if name in exports:
            return getattr(importlib.import_module(f"{package}.{exports[name]}"), name)
        if name in old_names:
            module, replacement = old_names[name]
            warnings.warn(f"{package}.{name} is deprecated and will be removed in the next minor "
                          f"release: use {replacement}", DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(module), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*exports, *vars(sys.modules[package])})

    _keep_exports_over_submodules(package, exports)
    return __getattr__, __dir__


def _keep_exports_over_submodules(package: str, exports: Mapping[str, str]) -> None:
    """Make ``package`` keep an exported name when the import system binds the same-named
    submodule on it (which it does after importing ``package.name``)."""
    same_named = {name for name, module in exports.items() if name == module}
    face = sys.modules.get(package)
    if not same_named or face is None:
        return

    class Face(type(face)):
        def __setattr__(self, name: str, value) -> None:
            if name in same_named and isinstance(value, ModuleType) and \
                    value.__name__ == f"{package}.{name}":
                value = getattr(value, name)
            super().__setattr__(name, value)

    face.__class__ = Face
