"""API keys: read from the environment only, and kept out of every message.

A key is never part of a model id, a repr, a log line, an error or the run store; neither are
credentials written into a base URL (``memlens.models.public``).
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

from memlens.errors import MemlensError
from memlens.models.public import scrub_credentials

LOCAL_PLACEHOLDER_KEY = "memlens-local-no-key"
"""Sent to a loopback / private server when no key is set (the SDKs insist on one)."""


def is_local_url(base_url: str | None) -> bool:
    """True for servers on this machine (127.0.0.0/8, localhost, ::1).

    >>> is_local_url("http://127.0.0.1:8000/v1"), is_local_url("http://localhost/v1")
    (True, True)
    >>> is_local_url("https://api.openai.com/v1"), is_local_url(None)
    (False, False)
    """
    if not base_url:
        return False
    host = urlparse(base_url).hostname or ""
    return host == "localhost" or host.startswith("127.") or host == "::1"


def resolve_api_key(env_name: str, base_url: str | None, backend: str) -> str:
    """Return the key from ``$env_name``; a placeholder for a local server without one.

    Raises ``MemlensError`` naming the variable (never a value) when a remote server needs a key.
    """
    key = os.environ.get(env_name, "").strip()
    if key:
        return key
    if is_local_url(base_url):
        return LOCAL_PLACEHOLDER_KEY
    raise MemlensError(
        f"the {backend} backend needs an API key: set the environment variable {env_name} "
        f"(or choose another variable with api_key_env=… / --api-key-env)"
    )


def redact(text: str, secret: str | None) -> str:
    """Replace every occurrence of ``secret`` in ``text`` with ``[redacted]``, and drop
    credentials from any URL in it (``memlens.models.public.scrub_credentials``).

    >>> redact("bad key sk-123 given", "sk-123")
    'bad key [redacted] given'
    >>> redact("no route to http://me:pw@h/v1", None)
    'no route to http://h/v1'
    """
    if secret and secret != LOCAL_PLACEHOLDER_KEY:
        text = text.replace(secret, "[redacted]")
    return scrub_credentials(text)
