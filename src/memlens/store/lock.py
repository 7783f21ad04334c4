"""One live process per run directory: an advisory ``flock`` on ``run_dir/memlens.lock``.

The kernel drops an ``flock`` when its holder dies, even on SIGKILL, so a lock left behind by a
killed run is simply taken over; a *live* holder makes the second process fail with a clear
message naming its pid. Within one process the lock is shared (reference-counted), so nested
``RunStore`` objects on the same directory work.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from memlens.errors import MemlensError

try:  # POSIX; on Windows fall back to a pid file checked for liveness
    import fcntl
except ImportError:  # pragma: no cover - exercised only on Windows
    fcntl = None

LOCK_NAME = "memlens.lock"
_held: dict[str, list] = {}  # real path -> [file descriptor, reference count]
_guard = threading.Lock()


def acquire(run_dir: Path) -> str:
    """Take the run-directory lock for this process; return the token to pass to ``release``.

    Raises ``MemlensError("run directory X is in use by pid N")`` while another live process
    holds it.
    """
    path = os.path.realpath(run_dir / LOCK_NAME)
    with _guard:
        if path in _held:
            _held[path][1] += 1
            return path
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _lock_fd(fd, run_dir)
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        _held[path] = [fd, 1]
        return path


def release(token: str) -> None:
    """Drop one reference to the lock; the last one unlocks and closes it."""
    with _guard:
        entry = _held.get(token)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            del _held[token]
            os.close(entry[0])  # closing the descriptor releases the flock


def _lock_fd(fd: int, run_dir: Path) -> None:
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            raise _in_use(fd, run_dir) from None
    holder = _read_pid(fd)
    if holder and holder != os.getpid() and _alive(holder):  # pragma: no cover - Windows path
        raise _in_use(fd, run_dir)


def _in_use(fd: int, run_dir: Path) -> MemlensError:
    pid = _read_pid(fd)
    who = f"pid {pid}" if pid else "another process"
    return MemlensError(f"run directory {run_dir} is in use by {who}; wait for it to finish or "
                        "stop it (a killed run's lock is taken over automatically)")


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:  # pragma: no cover - Windows path
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True
