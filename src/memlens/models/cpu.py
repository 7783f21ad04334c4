"""Threads that fit the machine: the cores this process may use and how busy they are right
now (the 1-minute load average, ``os.getloadavg``).

Measured on 2 shared cores (``benchmarks/bench_embedded.py``, docs/models.md): llama.cpp with
2 threads runs faster than with 1 on idle cores but collapses 5-9× (or stalls) as soon as other
work takes a core, so a thread is only worth starting on a core that is free — and stays free.
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
    """Threads for a CPU-bound model: the cores other work leaves free (rounded), minus one kept
    for the rest of this process (an audit labels with torch while it generates), at least 1.

    On 2 cores that is 1 thread, whatever the load: llama.cpp's threads wait for each other, and
    2 threads next to any other work stalled (> 600 s for 32 tokens at load 17; ≈ 5-9× slower at
    load 10, docs/models.md). ``--threads N`` overrides.

    >>> auto_threads(cores=2, load=0.0), auto_threads(cores=2, load=3.0), auto_threads(1, 0.0)
    (1, 1, 1)
    >>> auto_threads(cores=8, load=0.1), auto_threads(cores=8, load=2.4)
    (7, 5)
    """
    return max(1, free_cores(cores, load) - 1)


MAX_REPLICAS = 8
"""At most this many model copies by default (each holds its weights and context in memory)."""


def free_cores(cores: int | None = None, load: float | None = None) -> int:
    """The cores other work leaves free now (rounded), at least 1.

    >>> free_cores(2, 0.0), free_cores(2, 0.4), free_cores(2, 0.6), free_cores(2, 5.0)
    (2, 2, 1, 1)
    """
    cores = available_cores() if cores is None else cores
    load = current_load() if load is None else load
    return max(1, min(cores, int(cores - load + 0.5)))


def auto_replicas(cores: int | None = None) -> int:
    """Independent single-thread copies of a small CPU model: one per core this process may use
    (at most ``MAX_REPLICAS``), whatever the load. Threads of one copy wait for each other at
    every layer and stall when another process takes a core; copies decode separate requests
    and never wait for each other, so a busy core slows one copy, not all. Measured on 2 cores
    (``benchmarks/bench_embedded.py``, docs/models.md): two copies gave 1.2-1.6x one copy's
    tokens/s with the cores quiet and 1.4-1.7x with a busy-looping process on one core. (The
    load average cannot tell: it lags by a minute and counts this process's own work.) A seeded
    request gives the same text on any copy. ``--replicas N`` overrides.

    >>> auto_replicas(2), auto_replicas(1), auto_replicas(32)
    (2, 1, 8)
    """
    return min(MAX_REPLICAS, available_cores() if cores is None else cores)
