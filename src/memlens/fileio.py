"""Crash-safe output files: write a temporary file beside the target, fsync it, ``os.replace``.

A kill at any moment leaves either the old file or the complete new one, never a truncated or
0-byte file; a failed write (disk full, permission denied…) is one ``MemlensError`` naming the
file, the temporary file is removed and the old file stays as it was.

- ``atomic_write_text(path, text)`` / ``atomic_write_bytes(path, data)`` for content in memory;
- ``atomic_path(path)`` for writers that want a path (matplotlib ``savefig``, pandas ``to_csv``
  / ``to_parquet``): they write to the yielded temporary path, which replaces ``path`` when the
  ``with`` block ends without an exception;
- ``append_text(path, text)`` for append-only logs (kept appends; errors made clear);
- ``output_dir(path)`` opens an output folder: created if missing and checked writable, a
  folder that cannot be created or written (read-only, a file in the way) is one
  ``MemlensError`` before anything is computed into it.

A temporary file carries the writing process's id (``.<name>.<pid>-<random>.tmp<suffix>``). A
process killed mid-write (``kill -9``) leaves its temporary file behind; the next write into the
same folder removes every such file whose process is gone (and older-format ones over an hour
old), so killed writes do not pile up hidden files.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memlens.errors import MemlensError

_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_TEMPORARY = re.compile(r"^\..+\.(?:(?P<pid>\d+)-)?[0-9a-f]{8}\.tmp(?:\.[^.]*)?$")
"""Names of ``atomic_path``'s temporary files: with the writer's pid, or (older) without."""
_OLD_TEMPORARY_AGE_S = 3600.0


def describe_os_error(error: OSError) -> str:
    """A short phrase for an ``OSError``: disk full is said plainly.

    >>> import errno
    >>> describe_os_error(OSError(errno.ENOSPC, "No space left on device"))
    'the disk is full (No space left on device)'
    >>> describe_os_error(OSError(errno.EACCES, "Permission denied"))
    'Permission denied'
    """
    reason = error.strerror or str(error) or type(error).__name__
    return f"the disk is full ({reason})" if error.errno in _DISK_FULL else reason


def write_error(path: str | Path, error: OSError) -> MemlensError:
    """The ``MemlensError`` for a failed write of ``path``."""
    return MemlensError(f"cannot write {path}: {describe_os_error(error)}; "
                        "the previous version of the file (if any) was left unchanged")


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path in ``path``'s directory (same suffix, so writers that pick the
    format from it still work); on a clean exit it is fsynced and atomically renamed to
    ``path``. On any exception the temporary file is removed, ``path`` is untouched, and an
    ``OSError`` becomes a ``MemlensError`` naming ``path``.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = Path(folder) / "out.txt"
    ...     with atomic_path(target) as temporary:
    ...         _ = temporary.write_text("new")
    ...     target.read_text(), sorted(p.name for p in Path(folder).iterdir())
    ('new', ['out.txt'])
    """
    path = Path(path)
    remove_stale_temporaries(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
                               f"{path.suffix}")
    try:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        yield temporary
        _fsync_file(temporary)
        os.replace(temporary, path)
    except OSError as error:
        raise write_error(path, error) from None
    finally:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass  # best effort: the directory itself may be gone or unwritable
    fsync_directory(path.parent)


def remove_stale_temporaries(directory: str | Path) -> int:
    """Remove the temporary files that killed writes left in ``directory`` (their process is
    gone; older-format names: over an hour old); return how many. Best effort: a folder that
    cannot be listed or a file that cannot be removed is left alone.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = (Path(folder) / ".fig.svg.999999999-0123abcd.tmp.svg").write_text("torn")
    ...     _ = (Path(folder) / f".fig.svg.{os.getpid()}-0123abcd.tmp.svg").write_text("mine")
    ...     removed = remove_stale_temporaries(folder)
    ...     left = [p.name.startswith(f".fig.svg.{os.getpid()}-") for p in Path(folder).iterdir()]
    >>> removed, left
    (1, [True])
    """
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        match = _TEMPORARY.match(entry.name)
        if match is None:
            continue
        try:
            if match["pid"] is not None:
                stale = not _process_alive(int(match["pid"]))
            else:
                stale = time.time() - entry.stat().st_mtime > _OLD_TEMPORARY_AGE_S
            if stale and entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed += 1
        except (OSError, ValueError):
            continue
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process (or not a pid we can ask about): keep its file
    return True


def output_dir(path: str | Path, what: str = "output folder") -> Path:
    """Open the folder ``path`` for writing: create it (and its parents) if missing, check that
    a file can be created in it, and remove stale temporary files of killed writes there.

    A folder that cannot be created or written (read-only, no permission, a file in the way,
    disk full) is one ``MemlensError`` naming it, raised before any work is done.

    >>> output_dir("/dev/null/out")
    Traceback (most recent call last):
    memlens.errors.MemlensError: cannot write to the output folder /dev/null/out: Not a directory
    """
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".memlens-write-check.{os.getpid()}-{secrets.token_hex(4)}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as error:
        raise MemlensError(f"cannot write to the {what} {folder}: "
                           f"{describe_os_error(error)}") from None
    remove_stale_temporaries(folder)
    return folder


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (see ``atomic_path``)."""
    with atomic_path(path) as temporary:
        fd = os.open(temporary, os.O_WRONLY | os.O_TRUNC)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    """Replace ``path`` with ``text`` atomically (see ``atomic_path``)."""
    atomic_write_bytes(path, text.encode(encoding))


def append_text(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    """Append ``text`` to ``path`` (created if missing), flushed and fsynced; an ``OSError`` is a
    ``MemlensError`` naming the file. A failed append may leave a partial last line."""
    try:
        with open(path, "a", encoding=encoding) as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as error:
        raise MemlensError(f"cannot append to {path}: {describe_os_error(error)}") from None


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_directory(directory: Path) -> None:
    """Make a rename inside ``directory`` durable (best effort: not every platform can fsync a
    folder)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
