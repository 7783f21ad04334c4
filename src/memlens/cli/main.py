"""The ``memlens`` command: one sub-command module per concept, each with ``register(subparsers)``.

A sub-command module defines ``register(subparsers)`` which adds its parser(s) and sets
``func=<callable(args) -> int | None>`` as the parser default.
"""

from __future__ import annotations

import os
import signal
import sys

from memlens import __version__
from memlens.errors import MemlensError

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
    (``memlens questions list | head -1``) is exit 141 with nothing printed.
    """
    if argv is None:  # the real command (not a call from Python)
        sys.unraisablehook = _reraise_interrupt
    try:
        return _run(argv)
    except KeyboardInterrupt:
        print("memlens: interrupted; everything finished so far is stored — re-run to resume.",
              file=sys.stderr)
        if argv is None:  # the real command (not a call from Python): leave now, quietly
            _exit_interrupted()
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 141  # 128 + SIGPIPE, what a command killed by the closed pipe would return


def _run(argv: list[str] | None) -> int:
    from memlens.textsafe import for_terminal

    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        from memlens.cli.call_flags import call_settings_for

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


def _reraise_interrupt(unraisable) -> None:
    """``sys.unraisablehook``: a Ctrl-C that lands inside a callback Python cannot raise from
    (a weakref callback of the import system, a ``__del__``) would be printed as "Exception
    ignored" and lost, and the command would run on; it is raised again in the main thread."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        import _thread

        _thread.interrupt_main()
        return
    sys.__unraisablehook__(unraisable)


def _exit_interrupted() -> None:
    """Exit 130 at once after Ctrl-C: further Ctrl-Cs are ignored, exit handlers run and the
    streams are flushed, then the interpreter is left without its shutdown (which would turn a
    Ctrl-C seen while a library ran code through ``PyRun_*`` into death by SIGINT, or print a
    second traceback while threads are joined)."""
    import atexit

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - nothing may stop the exit
        pass
    os._exit(130)


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
