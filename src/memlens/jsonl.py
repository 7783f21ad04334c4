"""Reading JSON-lines files with errors that name the file and line.

The loaders of steps, labels, stimuli, questions, candidates, personas, preference pairs and
tool-call rows share this part; each keeps its own field validation on the rows it gets:

>>> rows = list(iter_json_objects('{"id": "a"}\\n\\n{"id": "b"}\\n', "steps.jsonl"))
>>> rows
[(1, {'id': 'a'}), (3, {'id': 'b'})]
>>> ids = UniqueIds("steps.jsonl")
>>> for number, row in rows:
...     ids.add(row["id"], number)
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterator
from pathlib import Path

from memlens.errors import MemlensError

_JSON_TYPES = {list: "an array", str: "a string", int: "a number", float: "a number",
               bool: "true/false", type(None): "null"}


def read_text(path: str | Path, what: str) -> str:
    """The whole UTF-8 text of a user's file; ``what`` names the file in errors.

    A missing file, an unreadable one (a folder, no permission) and bytes that are not UTF-8
    raise ``MemlensError`` naming the path (and, for bad bytes, the line and offset).

    >>> read_text("no/such/steps.jsonl", "steps file")
    Traceback (most recent call last):
    memlens.errors.MemlensError: no/such/steps.jsonl: steps file not found
    """
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MemlensError(f"{path}: {what} not found") from None
    except UnicodeDecodeError as error:
        line = error.object[:error.start].count(b"\n") + 1
        raise MemlensError(f"{path}:{line}: {what} is not UTF-8 text (byte "
                           f"0x{error.object[error.start]:02x} at offset {error.start})") from None
    except OSError as error:
        raise MemlensError(f"{path}: cannot read {what} ({error.strerror or error})") from None


def iter_json_objects(text: str, label: str,
                      expected: str = "a JSON object") -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for every non-blank line of JSON-lines ``text``.

    Line numbers are 1-based. A line that is not valid JSON or not a JSON object raises
    ``MemlensError`` as ``label:line: ...``; ``expected`` says what a line should be.

    >>> list(iter_json_objects('{"a": 1}\\n  \\n', "x.jsonl"))
    [(1, {'a': 1})]
    >>> list(iter_json_objects('{"a": 1}\\n{"a": \\n', "x.jsonl"))
    Traceback (most recent call last):
    memlens.errors.MemlensError: x.jsonl:2: invalid JSON (Expecting value)
    >>> list(iter_json_objects('["a"]', "x.jsonl", "a JSON object with field 'a'"))
    Traceback (most recent call last):
    memlens.errors.MemlensError: x.jsonl:1: expected a JSON object with field 'a', got an array
    """
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise MemlensError(f"{label}:{number}: invalid JSON ({error.msg})") from None
        if not isinstance(row, dict):
            kind = _JSON_TYPES.get(type(row), type(row).__name__)
            raise MemlensError(f"{label}:{number}: expected {expected}, got {kind}")
        yield number, row


class UniqueIds:
    """Remembers the line each id of one file was first on; a repeated id is a ``MemlensError``.

    >>> ids = UniqueIds("q.jsonl")
    >>> ids.add("a", 1)
    >>> ids.add("a", 4)
    Traceback (most recent call last):
    memlens.errors.MemlensError: q.jsonl:4: field 'id': duplicate id 'a' (first on line 1)
    """

    def __init__(self, label: str, field: str = "id") -> None:
        self.label = label
        self.field = field
        self._first: dict[Hashable, int] = {}

    def add(self, value: Hashable, line: int) -> None:
        """Record ``value`` seen on ``line``; raise if an earlier line had it."""
        if value in self._first:
            raise MemlensError(f"{self.label}:{line}: field '{self.field}': duplicate "
                               f"{self.field} {value!r} (first on line {self._first[value]})")
        self._first[value] = line
