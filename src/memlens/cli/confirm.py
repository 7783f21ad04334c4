"""No default may start hours of work unasked: a run whose estimated time exceeds
``LONG_RUN_S`` asks for confirmation on a terminal and is refused elsewhere unless ``--yes``.

The estimate is the plan's calls and tokens at the backend's expected rate
(``memlens.models.throughput``); it is printed either way, so the decision is the user's.
"""

from __future__ import annotations

import sys

from memlens.errors import MemlensError
from memlens.models.throughput import format_duration

LONG_RUN_S = 3600.0
"""Runs estimated to take longer than this (1 hour) need ``--yes`` or a "y" on a terminal."""


def estimate_line(calls: int, completion_tokens: int, prompt_tokens: int, throughput) -> str:
    """``"1,200 calls, ≤ 192,000 completion + ~45,000 prompt tokens: ~1.4 h (…source…)"``.

    >>> from memlens.models.throughput import Throughput
    >>> estimate_line(256, 40960, 28000, Throughput(40.0, "measured"))
    '256 calls, at most 40,960 completion + ~28,000 prompt tokens: estimated ~18 min (measured)'
    """

    seconds = throughput.seconds(completion_tokens, prompt_tokens)
    return (f"{calls:,} calls, at most {completion_tokens:,} completion + ~{prompt_tokens:,} "
            f"prompt tokens: estimated {format_duration(seconds)} ({throughput.source})")


def confirm_long_run(what: str, calls: int, completion_tokens: int, prompt_tokens: int,
                     throughput, *, yes: bool, smaller: str) -> None:
    """Return when the run may start: short enough, ``yes``, or confirmed on a terminal.
    Otherwise ``MemlensError`` naming calls, tokens, the estimate, ``--yes`` and ``smaller``
    (how to plan a smaller run)."""
    seconds = throughput.seconds(completion_tokens, prompt_tokens)
    if yes or seconds <= LONG_RUN_S:
        return
    line = estimate_line(calls, completion_tokens, prompt_tokens, throughput)
    if sys.stdin.isatty() and sys.stderr.isatty():
        print(f"memlens: {what}: {line}.", file=sys.stderr)
        try:
            answer = input("Start it? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() in ("y", "yes"):
            return
        raise MemlensError(f"{what} not started; {smaller}")
    raise MemlensError(f"{what}: {line}, more than {LONG_RUN_S / 3600:g} hour: not started "
                       f"without confirmation. Pass --yes to start it anyway, or {smaller}")
