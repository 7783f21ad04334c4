"""A narrowly scoped environment change for third-party libraries that read only env vars.

memlens never changes the process environment for good: library code passes explicit
arguments (local paths, ``local_files_only=True``, ``env=`` for subprocesses). Some libraries
offer no argument and read a variable once, at import (Mem0's ``MEM0_TELEMETRY`` / ``MEM0_DIR``,
datasets' ``HF_DATASETS_OFFLINE``); :func:`scoped_environ` sets such variables around that one
call and puts the previous values back afterwards, so the rest of the process (and the caller's
own settings) is unaffected.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


@contextlib.contextmanager
def scoped_environ(**values: str) -> Iterator[None]:
    """Set the environment variables ``values`` inside the ``with`` block only; on exit each one
    gets its previous value back (or is removed when it was unset), even after an exception."""
    previous = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
