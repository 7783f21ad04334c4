"""Shared machinery of the LLM raters that reply with one JSON object (the question rater of
``memlens.questions.filtering`` and the orthogonality rater).

Every request goes through ``memlens.jsonreply.ask_json`` (``memlens.engine.run_requests``,
cached in the run store when one is given; replies read with ``extract_json_object``). A reply that ``parse`` rejects gets one repair call — the bad reply is shown back with
the problem — and a reply still invalid, or a failed call, becomes an outcome whose ``error``
starts with ``rater_error:``. Model garbage is recorded, never raised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from memlens.jsonreply import Checked, ask_json, extract_json_object
from memlens.models.base import ChatRequest

__all__ = ["JsonOutcome", "as_bool", "extract_json_object", "rate_json"]


@dataclass
class JsonOutcome:
    """One request's result: the parsed ``value`` or an ``error`` (``rater_error: …``);
    ``raw`` is the last reply text."""

    value: Any = None
    error: str | None = None
    raw: str = ""


def as_bool(value: Any, name: str) -> bool:
    """A JSON boolean (or the strings true/false/yes/no); ``ValueError`` otherwise."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        value = value.strip().lower() in ("true", "yes")
    if not isinstance(value, bool):
        raise ValueError(f"field '{name}' must be true or false")
    return value


def rate_json(model, requests: Sequence[ChatRequest], parse: Callable[[str], Any], *,
              repair_hint: str, store=None, desc: str = "rating") -> list[JsonOutcome]:
    """Answer every request, validate each reply with ``parse`` (raises ``ValueError``), repair
    an invalid reply once (``memlens.jsonreply.ask_json``); one ``JsonOutcome`` per request,
    in order.

    ``repair_hint`` ends the repair turn: ``"That reply could not be used: <problem>. Reply again
    with only the JSON object, <repair_hint>"``.
    """
    prompt = ("That reply could not be used: {problem}. Reply again with only the JSON object, "
              + repair_hint)
    return [_outcome(checked) for checked in ask_json(
        model, requests, parse, store=store, repair_prompt=prompt, desc=desc)]


def _outcome(checked: Checked) -> JsonOutcome:
    if checked.ok:
        return JsonOutcome(value=checked.value, raw=checked.reply)
    if checked.failed_call:
        return JsonOutcome(error=f"rater_error: call failed ({checked.call_error})")
    suffix = " after one repair attempt" if checked.calls > 1 else ""
    return JsonOutcome(error=f"rater_error: {checked.problem}{suffix}", raw=checked.reply)
