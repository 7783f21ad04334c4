"""``--timeout SECONDS`` / ``--attempts N`` (API models) and ``--threads N`` / ``--parallel N`` /
``--replicas N`` (the embedded model) for every command that calls a model.

The values reach API backends (OpenAI-compatible, Anthropic) through
``memlens.models.registry.call_settings``, so models that library code builds from model strings
(labelers, raters, judges) get them too; local backends ignore them.
"""

from __future__ import annotations

import argparse

from memlens.cli import argtypes as at


def add_call_flags(parser: argparse.ArgumentParser, *, attempts_flag: str = "--attempts",
                   default_timeout: float | None = None,
                   default_attempts: int | None = None) -> None:
    """Add the timeout and attempts flags (dests ``call_timeout`` / ``call_attempts``)."""
    timeout_default = f"{default_timeout:g}" if default_timeout else "120"
    parser.add_argument("--timeout", dest="call_timeout", type=at.seconds,
                        default=default_timeout, metavar="SECONDS",
                        help="API models: wall-time limit of one attempt, slow replies included "
                             f"(default {timeout_default}, at most {at.MAX_TIMEOUT_S:g}); a call with all its retries takes at "
                             "most SECONDS x attempts plus the backoff waits")
    parser.add_argument(attempts_flag, dest="call_attempts", type=at.attempts,
                        default=default_attempts, metavar="N",
                        help="API models: attempts per call on 429 / 5xx / timeouts / connection "
                             f"errors (default {default_attempts or 6}, at most {at.MAX_ATTEMPTS})")
    parser.add_argument("--threads", dest="model_threads", type=at.int_range(1, 256),
                        metavar="N",
                        help="embedded model: CPU threads of each copy (default 1 with several "
                             "copies, else the cores other work leaves free now, minus one; never "
                             "changes a reply)")
    parser.add_argument("--replicas", dest="model_replicas", type=at.int_range(1, 64),
                        metavar="N",
                        help="embedded model: copies of the model decoding separate requests at "
                             "once (default: one per core, at most 8; never changes a reply)")
    parser.add_argument("--parallel", dest="model_parallel", type=at.int_range(1, 256),
                        metavar="N",
                        help="embedded model: requests decoded together (continuous batching; "
                             "default 1: with more, the same seeded request can give other text)")


def call_settings_for(args: argparse.Namespace):
    """The ``call_settings`` and ``embedded_settings`` contexts of a parsed command line (no-op
    without the flags)."""
    # lazy: keeps memlens --help light
    import contextlib

    from memlens.models.registry import call_settings, embedded_settings

    stack = contextlib.ExitStack()
    stack.enter_context(call_settings(getattr(args, "call_timeout", None),
                                      getattr(args, "call_attempts", None)))
    stack.enter_context(embedded_settings(getattr(args, "model_threads", None),
                                          getattr(args, "model_parallel", None),
                                          getattr(args, "model_replicas", None)))
    return stack


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
