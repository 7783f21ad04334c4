"""``--timeout SECONDS`` / ``--attempts N`` for every command that calls a model.

The values reach API backends (OpenAI-compatible, Anthropic) through
``memlens.models.registry.call_settings``, so models that library code builds from model strings
(labelers, raters, judges) get them too; local backends ignore them.
"""

from __future__ import annotations

import argparse
import math


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0.

    >>> positive_seconds("0.5")
    0.5
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text!r}")
    return value


def positive_count(text: str) -> int:
    """argparse type: an integer >= 1.

    >>> positive_count("2")
    2
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def add_call_flags(parser: argparse.ArgumentParser, *, attempts_flag: str = "--attempts",
                   default_timeout: float | None = None,
                   default_attempts: int | None = None) -> None:
    """Add the timeout and attempts flags (dests ``call_timeout`` / ``call_attempts``)."""
    timeout_default = f"{default_timeout:g}" if default_timeout else "120"
    parser.add_argument("--timeout", dest="call_timeout", type=positive_seconds,
                        default=default_timeout, metavar="SECONDS",
                        help="API models: wall-time limit of one attempt, slow replies included "
                             f"(default {timeout_default}); a call with all its retries takes at "
                             "most SECONDS x attempts plus the backoff waits")
    parser.add_argument(attempts_flag, dest="call_attempts", type=positive_count,
                        default=default_attempts, metavar="N",
                        help="API models: attempts per call on 429 / 5xx / timeouts / connection "
                             f"errors (default {default_attempts or 6})")


def call_settings_for(args: argparse.Namespace):
    """The ``call_settings`` context of a parsed command line (no-op without the flags)."""
    from memlens.models.registry import call_settings

    return call_settings(getattr(args, "call_timeout", None), getattr(args, "call_attempts", None))


FAILED_CALLS_EXIT = 3
"""Exit status of a run that finished but has failed calls (re-running retries them)."""


def finished_status(failed: int, total: int, what: str = "calls") -> int:
    """0, or ``FAILED_CALLS_EXIT`` with a note on stderr when ``failed`` of ``total`` calls
    failed (the results written so far are complete except for those calls)."""
    import sys

    if not failed:
        return 0
    print(f"memlens: finished, but {failed} of {total} {what} failed; re-run the same command to "
          "retry them (exit status 3)", file=sys.stderr)
    return FAILED_CALLS_EXIT
