"""The ``memlens`` command: one sub-command module per concept, each with ``register(subparsers)``.

A sub-command module defines ``register(subparsers)`` which adds its parser(s) and sets
``func=<callable(args) -> int | None>`` as the parser default.
"""

from __future__ import annotations

import os
import sys

from memlens import __version__
from memlens.cli.call_flags import call_settings_for
from memlens.cli.interrupt import (
    EXIT_INTERRUPTED,
    exit_interrupted,
    reraise_interrupt,
    say_interrupted,
)
from memlens.errors import MemlensError
from memlens.textsafe import for_terminal

# Each module registers its own sub-commands; order is the order shown in --help.
COMMAND_MODULES = (
    "memlens.cli.audit_cmd",
    "memlens.cli.plan_cmd",
    "memlens.cli.analyze_cmd",
    "memlens.cli.gate_cmd",
    "memlens.cli.chat_cmd",
    "memlens.cli.content_cmd",
    "memlens.cli.label_cmd",
    "memlens.cli.tooldrift_cmd",
    "memlens.cli.mitigate_cmd",
    "memlens.cli.store_cmd",
    "memlens.cli.inspect_cmd",
)


def build_parser():
    """Build the top-level ``argparse`` parser with every sub-command registered."""
    import argparse
    import importlib

    parser = argparse.ArgumentParser(
        prog="memlens",
        description="Measure and reduce memory-induced drift in LLMs and agents.",
    )
    parser.add_argument("--version", action="version", version=f"memlens {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        module = importlib.import_module(module_name)
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit status.

    Everything runs inside the handlers, parser building (it imports every command module)
    included: Ctrl-C at any moment is exit 130 with one line, a closed output pipe
    (``memlens questions list | head -1``) is exit 141 with nothing printed. (The console script,
    ``memlens.cli.entry.run``, also catches a Ctrl-C while this module imports.)
    """
    if argv is None:  # the real command (not a call from Python)
        sys.unraisablehook = reraise_interrupt
    try:
        return _run(argv)
    except KeyboardInterrupt:
        say_interrupted()
        if argv is None:  # the real command (not a call from Python): leave now, quietly
            exit_interrupted()
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return 141  # 128 + SIGPIPE, what a command killed by the closed pipe would return


def _run(argv: list[str] | None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        with call_settings_for(args):
            status = args.func(args)
    except MemlensError as error:
        print(for_terminal(f"memlens: error: {error}"), file=sys.stderr)  # may quote file text
        return getattr(error, "exit_status", 2)  # 2 = bad input; see docs/audit.md
    except OSError as error:
        if error.filename is None or isinstance(error, BrokenPipeError):
            raise
        # the last line of defence for a path the file system refuses wherever it is first
        # touched (a name too long, a folder we may not enter): the path and the reason
        name = str(error.filename)
        name = name if len(name) <= 200 else f"{name[:100]}…{name[-100:]}"
        print(for_terminal(f"memlens: error: cannot use {name}: "
                           f"{error.strerror or error}"), file=sys.stderr)
        return 2
    return int(status or 0)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush does not fail again on the
    closed pipe (the Python docs' recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout replaced (tests) or already gone
        pass


if __name__ == "__main__":
    sys.exit(main())
