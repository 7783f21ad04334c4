"""Content hashes of data files, for the run manifest."""

from __future__ import annotations

import hashlib
from pathlib import Path

from memlens.errors import MemlensError

_CHUNK = 1 << 20


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB chunks).

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile(delete=False) as handle:
    ...     _ = handle.write(b"abc")
    >>> file_sha256(handle.name)
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    >>> os.unlink(handle.name)
    """
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while block := handle.read(_CHUNK):
                digest.update(block)
    except OSError as error:
        raise MemlensError(f"cannot hash data file '{path}': {error.strerror}") from None
    return digest.hexdigest()
