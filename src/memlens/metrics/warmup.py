"""Compile an audit's kernels on a background thread while the model generates.

On a cold numba cache the drift kernels take seconds to compile (≈ 4–9 s on a busy 2-core
machine; loading them from the disk cache later ≈ 0.7–1.4 s). Started when the calls start,
that wait hides behind the model's; a drift call made meanwhile waits for the compile it needs
(numba compiles under one lock and reuses what the other thread compiled) instead of compiling
again.
"""

from __future__ import annotations

import threading

from memlens.metrics.path import dtw_path_batch


def _compile_drift_kernels() -> None:
    """Call ``drift_batch`` and ``dtw_path_batch`` once on a tiny encoded pair: the same argument
    types as an audit's calls, so numba compiles (or loads) exactly the kernels they use."""
    # Imported here, on the warm-up thread: importing numba is part of what it takes off the caller.
    from memlens.metrics.batch import drift_batch  # lazy: pulls numba
    from memlens.metrics.encoding import encode_pairs  # lazy: pulls numba

    a, b = encode_pairs([["a", "b"], []], [["b"], ["a"]])
    drift_batch(a, b)
    dtw_path_batch(a, b)


def _warm_up() -> None:
    try:
        _compile_drift_kernels()
    except Exception:  # noqa: BLE001 - best effort: the real call compiles again and reports
        pass


def warm_up_kernels() -> threading.Thread:
    """Start compiling (or loading from numba's disk cache) the kernels of the audit's drift and
    how-drift stages (``drift_batch``, ``dtw_path_batch``) on a daemon thread; return the thread.

    A failure there is ignored: the stage's own call compiles again and reports it.
    """
    thread = threading.Thread(target=_warm_up, name="memlens-kernel-warm-up", daemon=True)
    thread.start()
    return thread
