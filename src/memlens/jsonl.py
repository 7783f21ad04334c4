"""Reading JSON-lines files with errors that name the file and line.

The loaders of steps, labels, stimuli, questions, candidates, personas, preference pairs and
tool-call rows share this part; each keeps its own field validation on the rows it gets.
Whole JSON / YAML documents (configs, ontologies, MemDrift files, JSON schemas) are read with
``read_document`` / ``parse_json`` / ``parse_yaml``. Every path enforces the same limits:
files up to ``MAX_FILE_BYTES``, nesting up to ``MAX_DEPTH`` levels, no NaN / Infinity, no
integer beyond Python's digit limit, and YAML aliases may not expand past ``MAX_YAML_NODES``:

>>> rows = list(iter_json_objects('{"id": "a"}\\n\\n{"id": "b"}\\n', "steps.jsonl"))
>>> rows
[(1, {'id': 'a'}), (3, {'id': 'b'})]
>>> ids = UniqueIds("steps.jsonl")
>>> for number, row in rows:
...     ids.add(row["id"], number)
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import Any

from memlens.errors import MemlensError

_JSON_TYPES = {list: "an array", str: "a string", int: "a number", float: "a number",
               bool: "true/false", type(None): "null"}


MAX_FILE_BYTES = 1 << 30
"""Largest user file read into memory (1 GiB); larger files are refused, not read."""
MAX_DEPTH = 64
"""Deepest nesting of arrays / objects accepted in a JSON or YAML value."""
MAX_YAML_NODES = 1_000_000
"""Most YAML nodes a document may hold once its aliases are expanded ("billion laughs")."""


DEVICE_MAX_BYTES = 16 << 20
"""Most bytes read from a device given as a file (``/dev/stdin`` of a terminal, ``/dev/null``):
``/dev/zero`` never ends, so it is refused after this many, not after ``MAX_FILE_BYTES``."""


def read_bytes(path: str | Path, what: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a user's file, read only after its size was checked; ``what`` names the file.

    A missing or unreadable file (a folder, no permission) and a file over ``max_bytes`` raise
    ``MemlensError`` naming the path before anything is read; a pipe is read up to
    ``max_bytes`` + 1 bytes at most, a device (no size) up to ``DEVICE_MAX_BYTES`` + 1.

    >>> read_bytes("/dev/null", "steps file")
    b''
    >>> read_bytes("/dev/zero", "steps file")
    Traceback (most recent call last):
    memlens.errors.MemlensError: /dev/zero: steps file is a device that gives more than 16,777,216 bytes; give a file
    """
    import stat

    path = Path(path)
    try:
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            device = stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
            if info.st_size > max_bytes and not device:
                raise MemlensError(f"{path}: {what} is larger than the {max_bytes:,}-byte limit "
                                   f"({info.st_size:,} bytes)")
            limit = min(max_bytes, DEVICE_MAX_BYTES) if device else max_bytes
            data = handle.read(limit + 1)  # a pipe or device has no size: bounded all the same
    except FileNotFoundError:
        raise MemlensError(f"{path}: {what} not found") from None
    except OSError as error:
        raise MemlensError(f"{path}: cannot read {what} ({error.strerror or error})") from None
    if len(data) > limit:
        if device:
            raise MemlensError(f"{path}: {what} is a device that gives more than {limit:,} "
                               "bytes; give a file")
        raise MemlensError(f"{path}: {what} is larger than the {max_bytes:,}-byte limit")
    return data


def read_text(path: str | Path, what: str, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The whole UTF-8 text of a user's file (read by :func:`read_bytes`, so size-checked first);
    ``what`` names the file in errors.

    Bytes that are not UTF-8 raise ``MemlensError`` naming the path, the line and offset.

    >>> read_text("no/such/steps.jsonl", "steps file")
    Traceback (most recent call last):
    memlens.errors.MemlensError: no/such/steps.jsonl: steps file not found
    """
    data = read_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = error.object[:error.start].count(b"\n") + 1
        raise MemlensError(f"{path}:{line}: {what} is not UTF-8 text (byte "
                           f"0x{error.object[error.start]:02x} at offset {error.start})") from None


def bundled_or_file(path: str | Path | None, bundled: str, what: str) -> tuple[str, str]:
    """``(label, text)`` of the package data file ``data/<bundled>`` when ``path`` is None, else
    of the user's file (read with :func:`read_text`; ``what`` names it in errors).

    >>> bundled_or_file(None, "stimuli/stimuli.jsonl", "stimulus file")[0]
    'stimuli.jsonl (bundled)'
    """
    if path is None:
        from importlib import resources

        source = resources.files("memlens").joinpath(f"data/{bundled}")
        return f"{Path(bundled).name} (bundled)", source.read_text(encoding="utf-8")
    return str(path), read_text(path, what)


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
        row = parse_json(line, label, first_line=number)
        if not isinstance(row, dict):
            kind = _JSON_TYPES.get(type(row), type(row).__name__)
            raise MemlensError(f"{label}:{number}: expected {expected}, got {kind}")
        yield number, row


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is too large")
    return value


def _too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests lists / dicts more than ``limit`` levels (iterative walk)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) \
            else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _line_of(text: str, pattern: str) -> int | None:
    match = re.search(pattern, text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def parse_json(text: str, label: str, first_line: int = 1, problem: str = "invalid JSON") -> Any:
    """Parse one JSON value under the limits; problems -> ``MemlensError`` as ``label:line: ...``.

    ``first_line`` is the file line ``text`` starts on (for one line of a JSON-lines file);
    ``problem`` is the phrase before the reason in errors.

    >>> parse_json('{"a": [1, 2.5]}', "x.json")
    {'a': [1, 2.5]}
    >>> parse_json('[' * 100 + ']' * 100, "x.json")
    Traceback (most recent call last):
    memlens.errors.MemlensError: x.json:1: invalid JSON (nested deeper than 64 levels)
    >>> parse_json('{"a": NaN}', "x.json", first_line=7)
    Traceback (most recent call last):
    memlens.errors.MemlensError: x.json:7: invalid JSON (NaN is not a JSON number)
    """
    def fail(line: int | None, reason: str) -> MemlensError:
        return MemlensError(f"{label}:{first_line + (line or 1) - 1}: {problem} ({reason})")

    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as error:
        raise fail(error.lineno, error.msg) from None
    except RecursionError:
        raise fail(_line_of(text, r"[\[{]"), f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:  # NaN / Infinity / overflowing float / int-digits limit
        limit = sys.get_int_max_str_digits()
        if "integer string conversion" in str(error):
            raise fail(_line_of(text, rf"\d{{{limit + 1},}}"),
                       f"an integer has more than {limit} digits") from None
        raise fail(_line_of(text, r"NaN|-?Infinity|\d[eE]\+?\d{3,}"), str(error)) from None
    if _too_deep(value):
        raise fail(_line_of(text, r"[\[{]"), f"nested deeper than {MAX_DEPTH} levels")
    return value


def _check_yaml_nodes(node: Any, label: str, problem: str) -> None:
    """Refuse a composed YAML graph deeper than ``MAX_DEPTH`` or, with aliases expanded, larger
    than ``MAX_YAML_NODES`` nodes (an alias is a shared node, counted at every use)."""
    import yaml

    count = 0
    stack = [(node, 1)]
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > MAX_YAML_NODES:
            raise MemlensError(f"{label}: {problem} (more than {MAX_YAML_NODES:,} values once "
                               "aliases are expanded)")
        if isinstance(item, yaml.ScalarNode):
            continue
        if depth > MAX_DEPTH:
            raise MemlensError(f"{label}:{item.start_mark.line + 1}: {problem} (nested "
                               f"deeper than {MAX_DEPTH} levels)")
        children = item.value if isinstance(item, yaml.SequenceNode) else \
            [part for pair in item.value for part in pair]
        stack.extend((child, depth + 1) for child in children)


def _check_yaml_values(value: Any, label: str, problem: str) -> None:
    """Refuse NaN / infinite numbers and over-long integers in constructed YAML data."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict):
            stack.extend((key, where) for key in item)
            stack.extend((child, f"{where}.{key}".lstrip(".")) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(item))
        elif isinstance(item, float) and not math.isfinite(item):
            at = f" of field '{where[:80]}'" if where else ""
            raise MemlensError(f"{label}: {problem} (value {item}{at} is not a finite number)")


def parse_yaml(text: str, label: str, problem: str = "invalid YAML") -> Any:
    """Parse one YAML document safely (``yaml.SafeLoader``: no tags that run code) under the
    limits; problems -> ``MemlensError`` naming ``label`` and, where known, the line.

    >>> parse_yaml("a: [1, 2]", "c.yaml")
    {'a': [1, 2]}
    >>> parse_yaml("a: &x [1, 2]\\nb: [*x, *x]", "c.yaml")
    {'a': [1, 2], 'b': [[1, 2], [1, 2]]}
    >>> parse_yaml("a: .nan", "c.yaml")
    Traceback (most recent call last):
    memlens.errors.MemlensError: c.yaml: invalid YAML (value nan of field 'a' is not a finite number)
    """
    import yaml

    loader = None
    try:
        loader = yaml.SafeLoader(text)  # its reader already refuses control characters
        node = loader.get_single_node()
        if node is None:
            return None
        _check_yaml_nodes(node, label, problem)
        value = loader.construct_document(node)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{label}:{mark.line + 1}" if mark is not None else label
        reason = " ".join(str(getattr(error, "problem", None) or error).split()[:30])
        raise MemlensError(f"{where}: {problem} ({reason})") from None
    except RecursionError:
        raise MemlensError(f"{label}: {problem} (nested deeper than {MAX_DEPTH} levels)") \
            from None
    except ValueError as error:  # an integer over Python's digit limit
        raise MemlensError(f"{label}: {problem} ({' '.join(str(error).split()[:12])})") \
            from None
    finally:
        if loader is not None:
            loader.dispose()
    _check_yaml_values(value, label, problem)
    return value


def parse_document(text: str, label: str, yaml_syntax: bool, problem: str | None = None) -> Any:
    """``parse_yaml`` or ``parse_json`` of a whole document (``problem``: see ``parse_json``)."""
    if yaml_syntax:
        return parse_yaml(text, label, problem or "invalid YAML")
    return parse_json(text, label, problem=problem or "invalid JSON")


def read_document(path: str | Path, what: str, max_bytes: int = MAX_FILE_BYTES,
                  problem: str | None = None) -> Any:
    """Read and parse a JSON or, for ``.yaml`` / ``.yml`` files, YAML document under the limits.

    >>> read_document("no/such/config.yaml", "audit config")
    Traceback (most recent call last):
    memlens.errors.MemlensError: no/such/config.yaml: audit config not found
    """
    path = Path(path)
    text = read_text(path, what, max_bytes)
    return parse_document(text, str(path), path.suffix.lower() in (".yaml", ".yml"), problem)


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
