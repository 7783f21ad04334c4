"""Threads that fit the machine: the cores this process may use and how busy they are right
now (the 1-minute load average, ``os.getloadavg``).

Measured on 2 shared cores (``benchmarks/bench_embedded.py``, docs/models.md): llama.cpp with
2 threads runs faster than with 1 on idle cores but collapses 5-9× as soon as other work takes
a core, so a thread is only worth starting on a core that is free.
"""

from __future__ import annotations

import os


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity; ``os.cpu_count()`` where there is none).

    >>> available_cores() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def current_load() -> float:
    """The 1-minute load average (runnable processes), 0.0 where the system has none."""
    try:
        return max(0.0, os.getloadavg()[0])
    except (AttributeError, OSError):
        return 0.0


def auto_threads(cores: int | None = None, load: float | None = None) -> int:
    """Threads for a CPU-bound model: the cores not busy with other work, rounded, at least 1.

    >>> auto_threads(cores=2, load=0.2), auto_threads(cores=2, load=0.7), auto_threads(2, 3.0)
    (2, 1, 1)
    >>> auto_threads(cores=8, load=2.4)
    6
    """
    cores = available_cores() if cores is None else cores
    load = current_load() if load is None else load
    return max(1, min(cores, int(cores - load + 0.5)))
