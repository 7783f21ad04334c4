"""Pydantic-validated configs: ``ValidationError`` as one ``MemlensError`` line, and the parts
the configs share.

``validation_message`` is the one conversion from ``pydantic.ValidationError`` to the message a
user reads (audit config, mitigation settings and builders, tool-drift run config): it names
where each bad value came from (file, flag, class) and what was expected. ``config_dataclass``
is a pydantic dataclass that refuses unknown fields and wrong or out-of-range values when it is
constructed, with that message; ``Count``, ``Seed``, ``Temperature``… are the constrained field
types the run configs share (the same ranges as the CLI's ``memlens.cli.argtypes``).

>>> @config_dataclass
... class Demo:
...     count: int = 1
>>> Demo(count="many")
Traceback (most recent call last):
memlens.errors.MemlensError: Demo: field 'count': Input should be a valid integer, unable to parse string as an integer (got 'many')
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Iterable
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.dataclasses import dataclass as pydantic_dataclass

from memlens.errors import MemlensError

UNKNOWN_FIELD = frozenset({"extra_forbidden", "unexpected_keyword_argument"})
"""Pydantic error types of a key the model does not have (models / dataclasses)."""

MAX_COUNT = 10**9
"""Largest count a config accepts (as ``memlens.cli.argtypes.MAX_COUNT``): beyond it is a typo."""

Count = Annotated[int, Field(ge=1, le=MAX_COUNT)]
"""A count of at least 1 (samples, candidates, limits, replicates)."""
CountOrZero = Annotated[int, Field(ge=0, le=MAX_COUNT)]
"""A count that may be 0."""
Seed = Annotated[int, Field(ge=0)]
"""A sampling seed."""
Temperature = Annotated[float, Field(ge=0, le=5, allow_inf_nan=False)]
"""A sampling temperature in [0, 5]."""
TopP = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
"""A nucleus mass in (0, 1]."""
MaxTokens = Annotated[int, Field(ge=1, le=1_000_000)]
"""New tokens per reply."""
UnitFraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
"""A share, probability or threshold in [0, 1]."""
SplitFraction = Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]
"""Held-out share of a train / test split, in [0, 1) (0: no test split)."""
PathText = Annotated[str, BeforeValidator(lambda v: os.fspath(v) if isinstance(v, os.PathLike)
                                          else v)]
"""A file or folder path, kept as text (a ``Path`` given is turned into its text)."""

Describe = Callable[[dict], str]
"""Phrases one pydantic error item (``ValidationError.errors()``) for the user."""


def field_of(item: dict) -> str:
    """The dotted location of one pydantic error item (``(top level)`` when empty).

    >>> field_of({"loc": ("turns", 0, "role")}), field_of({"loc": ()})
    ('turns.0.role', '(top level)')
    """
    return ".".join(str(part) for part in item["loc"]) or "(top level)"


def _shown(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def validation_message(error: ValidationError, source: str | Callable[[str], str],
                       valid_keys: Iterable[str] = (), *, key_word: str = "field",
                       show_input: bool = False, describe: Describe | None = None) -> str:
    """One line for every problem in ``error``: ``source: field 'x': <what was expected>``.

    ``source`` names where the values came from: one string (``c.yaml``, a class name) put
    before all problems, or a function of the top-level field name (e.g. the file for a value
    read from it, the flag for one given on the command line) put before each problem.
    ``describe`` phrases an item itself (default: pydantic's message after ``key_word 'x':``,
    the bad value appended when ``show_input``; an unknown key lists ``valid_keys``).
    """
    valid = ", ".join(valid_keys)

    def default(item: dict) -> str:
        field = field_of(item)
        if item["type"] in UNKNOWN_FIELD:
            return f"unknown key {field!r} (valid keys: {valid})"
        text = f"{key_word} {field!r}: {' '.join(str(item['msg']).split())}"
        return f"{text} (got {_shown(item.get('input'))})" if show_input else text

    phrase = describe or default
    parts = []
    for item in error.errors(include_url=False):
        text = phrase(item)
        if callable(source):
            text = f"{source(str(item['loc'][0]) if item['loc'] else '')}: {text}"
        parts.append(text)
    joined = "; ".join(parts)
    return joined if callable(source) else f"{source}: {joined}"


def config_dataclass(cls: type | None = None, *,
                     describe: Callable[[type, dict], str] | None = None):
    """``pydantic.dataclasses.dataclass`` for configs: unknown fields are refused and
    constructing it with a wrong type or an out-of-range value raises ``MemlensError`` naming
    the class and the field (``describe(cls, item)`` may phrase each problem instead).

    ``dataclasses.fields`` / ``asdict`` / ``replace`` keep working; assignment is not validated.
    """
    def build(target: type) -> type:
        built = pydantic_dataclass(target, config=ConfigDict(extra="forbid"))
        init = built.__init__

        @functools.wraps(init)
        def __init__(self, *args, **kwargs) -> None:
            try:
                init(self, *args, **kwargs)
            except ValidationError as error:
                kind = type(self)
                phrase = functools.partial(describe, kind) if describe else None
                names = [f.name for f in dataclasses.fields(kind)]
                raise MemlensError(validation_message(error, kind.__name__, names,
                                                      show_input=True, describe=phrase)) from None

        built.__init__ = __init__
        return built

    return build if cls is None else build(cls)
