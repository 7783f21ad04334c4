"""Sub-commands of `memlens` (placeholder until its issue lands: registers nothing)."""


def register(subparsers) -> None:
    """Add this module's sub-commands to `subparsers`."""
