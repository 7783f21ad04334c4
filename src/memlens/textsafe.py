"""Untrusted text (model output, user files) made safe to show in a terminal or an HTML page.

Bidirectional overrides / isolates / marks (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
U+061C) can make shown text read differently from what it is, and C0 / C1 control characters
(ESC, NUL, CR, …; ``\\n`` and ``\\t`` are kept) can rewrite a terminal. ``neutralise`` replaces
each with its visible ``\\uXXXX`` escape — which, inside a JSON string, decodes back to the same
character, so JSON output stays lossless.
"""

from __future__ import annotations

import html
import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def neutralise(text: str) -> str:
    """``text`` with every bidi-control and C0/C1 control character (but newline and tab)
    replaced by its visible ``\\uXXXX`` escape.

    >>> neutralise("ok\\u202eevil\\x1b[2J\\r\\n\\tend")
    'ok\\\\u202eevil\\\\u001b[2J\\\\u000d\\n\\tend'
    """
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def for_terminal(value: object) -> str:
    """``str(value)`` ready to print: ``neutralise``d."""
    return neutralise(str(value))


def escape_html(value: object, quote: bool = True) -> str:
    """``str(value)`` escaped for HTML text or an attribute, and ``neutralise``d.

    >>> escape_html("<b>\\u202e</b>")
    '&lt;b&gt;\\\\u202e&lt;/b&gt;'
    """
    return html.escape(neutralise(str(value)), quote=quote)
