"""The review's ``direction`` cell, both ways: a rubric spec written as text
(:func:`direction_text`) and read back, validated (:func:`parse_direction`).

Enum ``quick < standard < comprehensive`` (worst → best), boolean ``degraded=true``, numeric
``degraded=lower``. The review CSV (``scan_outputs``) and the judge's replies (``scan_judge``)
use this one form.
"""

from __future__ import annotations

from memlens.errors import MemlensError
from memlens.tooldrift.schema import ParamSpec, parse_param_spec


def direction_text(spec: dict | None) -> str:
    """A rubric spec as the review's ``direction`` cell.

    >>> direction_text({"kind": "enum", "order": ["quick", "full"]})
    'quick < full'
    >>> direction_text({"kind": "boolean", "degraded": False})
    'degraded=false'
    """
    if not spec:
        return ""
    if spec["kind"] == "enum":
        return " < ".join(str(v) for v in spec["order"])
    degraded = spec["degraded"]
    return f"degraded={str(degraded).lower() if isinstance(degraded, bool) else degraded}"


def parse_direction(kind: str, text: str, where: str) -> ParamSpec:
    """The review's ``kind`` + ``direction`` cells as a rubric spec (validated)."""
    text = text.strip()
    if kind == "enum":
        raw = {"kind": "enum", "order": [v.strip() for v in text.split("<") if v.strip()]}
    elif kind in ("boolean", "numeric"):
        value = text.removeprefix("degraded=").strip().lower()
        raw = {"kind": kind, "degraded": {"true": True, "false": False}.get(value, value)
               if kind == "boolean" else value}
    else:
        raise MemlensError(f"{where}: column 'kind' must be enum, boolean or numeric, got {kind!r}")
    return parse_param_spec(raw, where)
