"""Rows read back from the run store are checked where they are read: a torn or edited row is one
``StoreDamaged`` error naming the store, the table, the row and the field, never a traceback in
whatever command happened to read it (``report``, ``compare``, ``plan --pilot``, ``store
export``, ``gate``).

Every stored value must be JSON, and every stage-table row a JSON object. A pipeline that owns a
stage table declares its row type (a ``TypedDict``) with ``declare_row_type``; from then on each
row of that table is checked on every read: its required keys are present and every value has
its declared type (``str``, ``int``, ``float``, ``bool``, ``list[str]``, ``... | None``).

>>> from typing import TypedDict
>>> class Row(TypedDict):
...     id: str
...     dtw: float
>>> declare_row_type("doc_rows", Row)
>>> check_row("doc_rows", "a", {"id": "a", "dtw": 0.5}, "run/memlens.sqlite")
>>> check_row("doc_rows", "a", {"id": "a", "dtw": "x"}, "run/memlens.sqlite")
Traceback (most recent call last):
memlens.store.rowtypes.StoreDamaged: run store run/memlens.sqlite is damaged: table 'doc_rows', row 'a': field 'dtw' should be a number, got a string; it was changed outside memlens or torn — restore the run directory from a copy or re-run into a new one
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable
from typing import Any

from memlens.errors import MemlensError


class StoreDamaged(MemlensError):
    """A value in the run store is not what memlens wrote (torn, edited, wrong type)."""


_Check = Callable[[Any], bool]
_ROW_TYPES: dict[str, tuple[frozenset[str], tuple[tuple[str, _Check, str], ...]]] = {}
_JSON_NAMES = {str: "a string", int: "a number", float: "a number", bool: "true/false",
               list: "an array", dict: "an object", type(None): "null"}
_REMEDY = ("it was changed outside memlens or torn — restore the run directory from a copy or "
           "re-run into a new one")


def damaged(path: object, where: str, problem: str) -> StoreDamaged:
    """The error for a bad stored value: ``where`` is e.g. ``table 'x', row 'k'``."""
    return StoreDamaged(f"run store {path} is damaged: {where}: {problem}; {_REMEDY}")


def load_json(text: Any, path: object, where: str) -> Any:
    """``json.loads`` of a stored value; anything that is not JSON text is ``StoreDamaged``."""
    if not isinstance(text, str | bytes):
        raise damaged(path, where, f"expected JSON text, got {type(text).__name__}")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        reason = " ".join(str(error).split()[:12])
        raise damaged(path, where, f"not valid JSON ({reason})") from None


_SIMPLE = {str: ({str}, "a string"), int: ({int}, "an integer"), float: ({int, float}, "a number"),
           bool: ({bool}, "true/false"), type(None): ({type(None)}, "null")}


def _simple(annotation: Any) -> tuple[set[type], str] | None:
    """The exact JSON value types of a plain or union-of-plain annotation (fast to check)."""
    if annotation is None:
        annotation = type(None)
    if annotation in _SIMPLE:
        return _SIMPLE[annotation]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        parts = [_simple(arg) for arg in typing.get_args(annotation)]
        if all(parts):
            return set().union(*(kinds for kinds, _ in parts)), " or ".join(n for _, n in parts)
    return None


def _checker(annotation: Any) -> tuple[_Check, str]:
    """A predicate for values of ``annotation`` and how to name it in errors."""
    simple = _simple(annotation)
    if simple is not None:
        kinds, name = simple
        return (lambda value: type(value) in kinds), name
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        parts = [_checker(arg) for arg in typing.get_args(annotation)]
        return (lambda value: any(check(value) for check, _ in parts),
                " or ".join(name for _, name in parts))
    if origin is list or annotation is list:
        (item,) = typing.get_args(annotation) or (Any,)
        if item is Any:
            return (lambda value: type(value) is list), "an array"
        check, name = _checker(item)
        plural = f"an array of {name.removeprefix('a ').removeprefix('an ')}s"
        item_kinds = (_simple(item) or (None,))[0]
        if item_kinds is not None:
            return (lambda value: type(value) is list
                    and all(type(v) in item_kinds for v in value)), plural
        return (lambda value: type(value) is list and all(check(v) for v in value)), plural
    if origin is dict or annotation is dict:
        return (lambda value: type(value) is dict), "an object"
    return (lambda value: True), "anything"


def declare_row_type(table: str, row_type: type, required: frozenset[str] | None = None) -> None:
    """Check every row read from stage table ``table`` against ``row_type`` (a ``TypedDict``).

    ``required`` names the keys a row must have (default: the type's required keys). Stores
    written by earlier releases lack keys added since (readers use ``.get`` for them), so a
    table whose type grew over time passes the keys every release wrote; the other fields are
    type-checked whenever present."""
    hints = typing.get_type_hints(row_type)
    fields = tuple((name, *_checker(hint)) for name, hint in hints.items())
    keys = frozenset(row_type.__required_keys__) if required is None else frozenset(required)
    _ROW_TYPES[table] = (keys, fields)


def check_row(table: str, key: str, row: Any, path: object) -> None:
    """``StoreDamaged`` unless ``row`` (read from ``table`` under ``key``) is a JSON object that
    fits the table's declared row type (any object, if none was declared)."""
    if not isinstance(row, dict):
        kind = _JSON_NAMES.get(type(row), type(row).__name__)
        raise damaged(path, f"table '{table}', row '{key}'", f"expected a JSON object, got {kind}")
    declared = _ROW_TYPES.get(table)
    if declared is None:
        return
    required, fields = declared
    missing = required - row.keys()
    if missing:
        raise damaged(path, f"table '{table}', row '{key}'",
                      f"missing field(s) {', '.join(sorted(missing))}")
    for name, check, expected in fields:
        if name in row and not check(row[name]):
            kind = _JSON_NAMES.get(type(row[name]), type(row[name]).__name__)
            raise damaged(path, f"table '{table}', row '{key}'",
                          f"field '{name}' should be {expected}, got {kind}")
