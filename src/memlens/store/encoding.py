"""JSON encoding for the run store, identifier checks, and secret redaction."""

from __future__ import annotations

import json
import math
import os
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

from memlens.errors import MemlensError

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
RESERVED_TABLES = frozenset({"manifest", "responses", "failures"})
_SECRET_NAME = re.compile(r"(api[_-]?key|secret|password|passwd|authorization|token)$", re.I)
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD", re.I)
REDACTED = "<redacted>"


def check_table_name(table: str) -> str:
    """Return ``table`` if it is a plain identifier usable as a stage-table name.

    >>> check_table_name("drift_rows")
    'drift_rows'
    >>> check_table_name("x; DROP TABLE responses")
    Traceback (most recent call last):
    ...
    memlens.errors.MemlensError: invalid table name 'x; DROP TABLE responses': use letters, digits and '_' (max 63, not starting with a digit)
    """
    if not isinstance(table, str) or not _IDENTIFIER.fullmatch(table):
        raise MemlensError(f"invalid table name {table!r}: use letters, digits and '_' "
                           "(max 63, not starting with a digit)")
    return table


def _default(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    if isinstance(value, (Path, datetime, date)):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def to_json(value: Any, where: str) -> str:
    """Serialise ``value`` compactly; ``where`` names it in the error when that fails.

    NaN / infinity become ``null`` (JSON has no such numbers).

    >>> to_json({"b": 1, "a": [1.5, float("nan")]}, "row 0")
    '{"b":1,"a":[1.5,null]}'
    """
    try:
        return json.dumps(_finite(value), separators=(",", ":"), ensure_ascii=False,
                          default=_default, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise MemlensError(f"cannot store {where}: {error}") from None


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def redact_mapping(value: Any) -> Any:
    """Replace values stored under secret-looking names (``api_key``, ``token``…) by a marker,
    and drop credentials from URLs in string values.

    >>> redact_mapping({"model": "m", "openai": {"api_key": "sk-1", "n": 2}})
    {'model': 'm', 'openai': {'api_key': '<redacted>', 'n': 2}}
    """
    if isinstance(value, dict):
        return {key: REDACTED if _SECRET_NAME.search(str(key)) and item else redact_mapping(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [redact_mapping(item) for item in value]
    if isinstance(value, str):  # e.g. a model string with credentials in its base URL
        from memlens.models.public import scrub_credentials  # lazy: keeps memlens --help light

        return scrub_credentials(value)
    return value


def redact_text(text: str) -> str:
    """Remove the values of secret environment variables (``*_API_KEY``, ``*_TOKEN``…) from
    ``text`` — used on failure reasons, which quote backend error messages."""
    for name, secret in os.environ.items():
        if len(secret) >= 8 and _SECRET_ENV.search(name) and secret in text:
            text = text.replace(secret, REDACTED)
    from memlens.models.public import scrub_credentials  # lazy: keeps memlens --help light

    return scrub_credentials(text)
