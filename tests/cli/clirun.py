"""Run ``memlens`` in-process for CLI tests: exit status and stderr, argparse exits included."""

from memlens.cli.main import main


def run(argv: list[str], capsys) -> tuple[int, str]:
    """Exit status and stderr of ``memlens argv`` run in-process (argparse exits included)."""
    try:
        status = main(argv)
    except SystemExit as done:
        status = done.code
    return status, capsys.readouterr().err
