"""The ``memlens`` console script (``[project.scripts]``): ``memlens.cli.main.main``, with Ctrl-C
caught from this module on — also while the command's modules import, before ``main`` runs — as
exit 130 with one line.

Importing this module is what makes it the script: until ``run`` starts (the generated script
still runs a line of its own in between), SIGINT prints the line and leaves at once — nothing is
stored yet. ``run`` hands SIGINT back to Python (``KeyboardInterrupt``), caught around the import
of ``memlens.cli.main`` here and by ``main`` itself once it runs (stores closed first).

Before this module, Ctrl-C is the interpreter's: its start-up, ``site``, the generated script's
``import re`` and finding the ``memlens`` package (tens of milliseconds) print Python's
``KeyboardInterrupt``.
"""

from __future__ import annotations

import signal
import sys

from memlens.cli.interrupt import (
    EXIT_INTERRUPTED,
    exit_interrupted,
    reraise_interrupt,
    say_interrupted,
)


def _leave(signum, frame) -> None:
    """SIGINT before ``run``: the one line, exit 130."""
    say_interrupted()
    exit_interrupted()


signal.signal(signal.SIGINT, _leave)


def run() -> int:
    """Run the command line in ``sys.argv``; returns the exit status (130 after Ctrl-C)."""
    sys.unraisablehook = reraise_interrupt  # a Ctrl-C inside an import-system callback, too
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from memlens.cli.main import main  # lazy: in the try: a Ctrl-C while it imports is caught

        return main()
    except KeyboardInterrupt:
        say_interrupted()
        exit_interrupted()
        return EXIT_INTERRUPTED  # not reached: exit_interrupted leaves the process
