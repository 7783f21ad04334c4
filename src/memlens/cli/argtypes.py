"""argparse ``type=`` helpers: every numeric or path flag is checked when it is parsed.

A bad value is an argparse error (``memlens COMMAND: error: argument --seed: ...``, exit 2),
never a traceback or a silently accepted nonsense value.

>>> nonneg_int("3"), positive_int("1"), finite_float(0, 5)("0.7")
(3, 1, 0.7)
>>> finite_float(0, 5)("inf")
Traceback (most recent call last):
argparse.ArgumentTypeError: must be a finite number from 0 to 5, got 'inf'
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

MAX_COUNT = 10**9
"""Largest count any flag accepts (samples, limits, replicates…): beyond it is a typo."""


def int_range(low: int, high: int = MAX_COUNT) -> Callable[[str], int]:
    """argparse type: an integer from ``low`` to ``high`` (inclusive).

    >>> int_range(1, 10)("10")
    10
    >>> int_range(1, 10)("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be an integer from 1 to 10, got '0'
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:  # also a number over Python's integer-digits limit
            raise argparse.ArgumentTypeError(f"expected an integer, got {text[:40]!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be an integer from {low} to {high}, got "
                                             f"{text[:40]!r}")
        return value

    parse.__name__ = "integer"  # argparse names the type in "invalid integer value"
    return parse


nonneg_int = int_range(0)
"""argparse type: an integer >= 0 (seeds)."""
positive_int = int_range(1)
"""argparse type: an integer >= 1 (counts, token limits, replicates)."""


def finite_float(low: float, high: float, *, low_open: bool = False) -> Callable[[str], float]:
    """argparse type: a finite number from ``low`` to ``high`` (``low_open``: ``low`` excluded).

    >>> finite_float(0, 1)("0.5")
    0.5
    >>> finite_float(0, 1, low_open=True)("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be a finite number > 0 and <= 1, got '0'
    """
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text[:40]!r}") from None
        inside = low < value <= high if low_open else low <= value <= high
        if not (math.isfinite(value) and inside):
            span = f"> {low:g} and <= {high:g}" if low_open else f"from {low:g} to {high:g}"
            raise argparse.ArgumentTypeError(f"must be a finite number {span}, got {text[:40]!r}")
        return value

    parse.__name__ = "number"
    return parse


unit_interval = finite_float(0.0, 1.0)
"""argparse type: a probability / threshold / fraction in [0, 1]."""
temperature = finite_float(0.0, 5.0)
"""argparse type: a sampling temperature in [0, 5]."""
top_p = finite_float(0.0, 1.0, low_open=True)
"""argparse type: a nucleus mass in (0, 1]."""


def out_file(text: str) -> str:
    """argparse type: a path to write a file to — not an existing directory.

    >>> out_file("labels.jsonl")
    'labels.jsonl'
    >>> out_file(".")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: '.' is a directory; give a file path
    """
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a file path, got ''")
    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory; give a file path")
    return text


def out_dir(text: str) -> str:
    """argparse type: a directory to write into — not an existing file.

    >>> out_dir("runs/a")
    'runs/a'
    """
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a directory path, got ''")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file; give a directory path")
    return text


def out_dir_path(text: str) -> Path:
    """``out_dir`` as a ``Path`` (for commands that take ``type=Path``)."""
    return Path(out_dir(text))


max_tokens = int_range(1, 1_000_000)
"""argparse type: new tokens per reply, 1 to 1,000,000."""

MAX_ATTEMPTS = 100
"""Most attempts per model call a flag accepts: more is never useful, and the backoff of a
huge count overflowed a float (``--attempts 2000`` was an ``OverflowError`` in every call)."""
MAX_TIMEOUT_S = 86_400.0
"""Longest per-attempt timeout a flag accepts (one day); beyond it waits overflow."""

attempts = int_range(1, MAX_ATTEMPTS)
"""argparse type: attempts per model call, 1 to ``MAX_ATTEMPTS``."""
seconds = finite_float(0.0, MAX_TIMEOUT_S, low_open=True)
"""argparse type: a timeout in seconds, > 0 and at most ``MAX_TIMEOUT_S``."""
bootstrap = int_range(1, 10_000_000)
"""argparse type: bootstrap replicates, 1 to 10,000,000."""
seed = int_range(0, 2**32 - 1)
"""argparse type: a random seed, 0 to 2**32 - 1 (numpy's range)."""
