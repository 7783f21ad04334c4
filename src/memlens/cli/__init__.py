"""Command-line interface: argument parsing only; work is handed to the packages."""

__all__: list[str] = []  # nothing to import from here: the console script is memlens.cli.entry:run
