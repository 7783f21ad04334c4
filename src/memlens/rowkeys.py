"""Composite row keys that cannot collide: ``join_key("a|x", "n") != join_key("a", "x|n")``.

Stage tables, cache tags and seed derivations key rows by several ids joined with ``|``. Ids
come from user files and may contain the separator, so every part is escaped first (``\\`` →
``\\\\``, ``|`` → ``\\|``): the joined key is injective, and a part without ``|`` or ``\\`` is
unchanged, so keys (and seeds) of existing runs stay what they were.
"""

from __future__ import annotations

SEPARATOR = "|"


def escape_part(part: object) -> str:
    """One key part with its backslashes and separators escaped.

    >>> escape_part("a|x"), escape_part("plain"), escape_part(3)
    ('a\\\\|x', 'plain', '3')
    """
    return str(part).replace("\\", "\\\\").replace(SEPARATOR, "\\" + SEPARATOR)


def join_key(*parts: object) -> str:
    """Escape and join ``parts`` with ``|``.

    >>> join_key("q1", "persona/age/young", 0)
    'q1|persona/age/young|0'
    >>> join_key("a|x", "n", 0) == join_key("a", "x|n", 0)
    False
    """
    return SEPARATOR.join(escape_part(part) for part in parts)


def split_key(key: str) -> list[str]:
    """Inverse of :func:`join_key` (parts come back as strings).

    >>> split_key(join_key("a|x", "b\\\\", 2))
    ['a|x', 'b\\\\', '2']
    """
    parts, current, chars = [], [], iter(key)
    for char in chars:
        if char == "\\":
            current.append(next(chars, ""))
        elif char == SEPARATOR:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def derive_seed(master_seed: int, *parts: object) -> int:
    """A 31-bit seed derived only from (master seed, parts): sha256 of :func:`join_key`.

    Stable across runs, processes and Python versions (not ``hash``); the one seed-derivation
    helper of the audit, the mitigation builders and tool drift.

    >>> derive_seed(0, "q1", "control/no_perturbation", 0) == derive_seed(0, "q1", "control/no_perturbation", 0)
    True
    >>> derive_seed(0, "a|x", "n", 0) != derive_seed(0, "a", "x|n", 0)
    True
    """
    import hashlib

    digest = hashlib.sha256(join_key(master_seed, *parts).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
