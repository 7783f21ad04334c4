"""``number()``: the one formatter for statistics shown to people — never a 20-digit number.

Non-finite values (NaN, ±inf) and non-numbers print as ``n/a``; values whose magnitude is at least
``LARGE`` (e.g. an elevation in % over a floor of ~0) print in scientific notation.
"""

from __future__ import annotations

import math

LARGE = 1e6
"""From this magnitude on a value prints as ``1.23e+18``, not as all its digits."""


def number(value: object, spec: str = ".3f", missing: str = "n/a") -> str:
    """``value`` formatted with ``spec`` when finite and moderate, else scientific or ``missing``.

    >>> number(0.12345), number(3.0, "+.1f"), number(None), number(float("nan"))
    ('0.123', '+3.0', 'n/a', 'n/a')
    >>> number(5100940777432016896.0, "+.1f"), number(float("-inf"), "+.1f")
    ('+5.10e+18', 'n/a')
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        try:
            value = float(value)  # numpy scalars
        except (TypeError, ValueError):
            return missing
    if not math.isfinite(value):
        return missing
    if abs(value) >= LARGE:
        return format(value, "+.2e" if spec.startswith("+") else ".2e")
    return format(value, spec)
