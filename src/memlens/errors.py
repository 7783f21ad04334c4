"""The one exception type that reaches users as a clear message instead of a traceback."""


class MemlensError(Exception):
    """A problem with the user's input or environment, phrased for the user.

    The CLI prints ``memlens: error: <message>`` and exits with status 2. The message names
    what is wrong: the file, line, field or flag, and, where it helps, how to fix it.
    """


def missing_extra(package: str, extra: str) -> MemlensError:
    """Return the error raised when an optional dependency is not installed.

    >>> str(missing_extra("vllm", "vllm"))
    "this feature needs the 'vllm' package: pip install 'memlens[vllm]'"
    """
    return MemlensError(f"this feature needs the '{package}' package: pip install 'memlens[{extra}]'")
