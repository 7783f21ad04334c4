"""Command-line interface: argument parsing only; work is handed to the packages."""

__all__: list[str] = []  # nothing to import from here: the entry point is memlens.cli.main:main
