"""The ``memlens`` command: one sub-command module per concept, each with ``register(subparsers)``.

A sub-command module defines ``register(subparsers)`` which adds its parser(s) and sets
``func=<callable(args) -> int | None>`` as the parser default.
"""

from __future__ import annotations

import argparse
import importlib
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
)


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every sub-command registered."""
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
    """Run the CLI; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from memlens.cli.call_flags import call_settings_for

    try:
        with call_settings_for(args):
            status = args.func(args)
    except MemlensError as error:
        from memlens.textsafe import for_terminal

        print(for_terminal(f"memlens: error: {error}"), file=sys.stderr)  # may quote file text
        return getattr(error, "exit_status", 2)  # 2 = bad input; see docs/audit.md
    except KeyboardInterrupt:
        print("memlens: interrupted; everything finished so far is stored — re-run to resume.",
              file=sys.stderr)
        return 130
    return int(status or 0)


if __name__ == "__main__":
    sys.exit(main())
