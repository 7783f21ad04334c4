"""What Ctrl-C does to the ``memlens`` command: one line on stderr and exit 130, at any moment.

Used by ``memlens.cli.main`` (a Ctrl-C while a command runs) and ``memlens.cli.entry`` (one while
the command's modules import). Imports nothing of memlens, so it is loaded before anything can go
wrong.
"""

from __future__ import annotations

import os
import signal
import sys

INTERRUPTED = "memlens: interrupted; everything finished so far is stored — re-run to resume."
"""The one line a Ctrl-C prints."""

EXIT_INTERRUPTED = 130
"""128 + SIGINT, what a shell reports for a command stopped by Ctrl-C."""


def say_interrupted() -> None:
    """Print ``INTERRUPTED`` on stderr (never failing: stderr may be closed)."""
    try:
        print(INTERRUPTED, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def exit_interrupted() -> None:
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
    os._exit(EXIT_INTERRUPTED)


def reraise_interrupt(unraisable) -> None:
    """``sys.unraisablehook``: a Ctrl-C that lands inside a callback Python cannot raise from
    (a weakref callback of the import system, a ``__del__``) would be printed as "Exception
    ignored" and lost, and the command would run on; it is raised again in the main thread."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        import _thread

        _thread.interrupt_main()
        return
    sys.__unraisablehook__(unraisable)
