"""The one decorator of every compiled kernel: numba ``njit(nogil=True)``, cached on disk if it can be.

numba looks for a writable cache directory in turn: ``NUMBA_CACHE_DIR``, the package's own
``__pycache__``, then the user cache directory (``~/.cache/numba``). When none is writable (a
read-only install run by a user without a home), ``njit(cache=True)`` raises at import; the
kernels are then compiled in memory on each run instead, quietly.
"""

from __future__ import annotations

from numba import njit


def kernel(function):
    """Compile ``function`` with numba on its first call (``nogil``), cached on disk where a
    cache directory is writable and in memory otherwise."""
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:  # numba: "cannot cache function ...: no locator available"
        return njit(nogil=True)(function)
