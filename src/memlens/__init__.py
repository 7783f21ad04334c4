"""memlens: measure and reduce memory-induced drift in personalized LLMs and agents.

The public API is each package's ``__all__`` (``memlens.audit.run_audit``, …) and the documented
CLI; deeper module paths are internal (docs/architecture.md "Public API and deprecation policy").
"""

from memlens.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "MemlensError": "errors",
}
"""Public name -> the submodule defining it: resolved on first use."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = ["MemlensError", "__version__"]
