"""Shared machinery of the LLM raters that reply with one JSON object (the question rater of
``memlens.questions.filtering`` and the orthogonality rater).

Every request goes through ``memlens.engine.run_requests`` (cached in the run store when one is
given). A reply that ``parse`` rejects gets one repair call — the bad reply is shown back with
the problem — and a reply still invalid, or a failed call, becomes an outcome whose ``error``
starts with ``rater_error:``. Model garbage is recorded, never raised.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from memlens.models.base import ChatRequest


@dataclass
class JsonOutcome:
    """One request's result: the parsed ``value`` or an ``error`` (``rater_error: …``);
    ``raw`` is the last reply text."""

    value: Any = None
    error: str | None = None
    raw: str = ""


def extract_json_object(text: str | None) -> dict:
    """The JSON object in a reply (alone, or wrapped in prose / a code fence); ``ValueError``
    naming the problem otherwise.

    >>> extract_json_object('Sure: ```json\\n{"a": 1}\\n```')
    {'a': 1}
    >>> extract_json_object("nope")
    Traceback (most recent call last):
    ...
    ValueError: no JSON object in the reply
    """
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    if not match:
        raise ValueError("no JSON object in the reply")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as error:
        raise ValueError(f"invalid JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("the JSON is not an object")
    return data


def as_bool(value: Any, name: str) -> bool:
    """A JSON boolean (or the strings true/false/yes/no); ``ValueError`` otherwise."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        value = value.strip().lower() in ("true", "yes")
    if not isinstance(value, bool):
        raise ValueError(f"field '{name}' must be true or false")
    return value


def complete_all(model, requests: Sequence[ChatRequest], store=None, desc: str = "rating") -> list:
    """Run ``requests`` through ``memlens.engine.run_requests`` (cached in ``store`` when given);
    one response or ``ModelCallError`` per request, in order."""
    from memlens.engine import run_requests

    return run_requests(model, list(requests), store, progress=False, desc=desc)


def rate_json(model, requests: Sequence[ChatRequest], parse: Callable[[str], Any], *,
              repair_hint: str, store=None, desc: str = "rating") -> list[JsonOutcome]:
    """Answer every request, validate each reply with ``parse`` (raises ``ValueError``), repair
    an invalid reply once; one ``JsonOutcome`` per request, in order.

    ``repair_hint`` ends the repair turn: ``"That reply could not be used: <problem>. Reply again
    with only the JSON object, <repair_hint>"``.
    """
    requests = list(requests)
    outcomes: list[JsonOutcome | None] = [None] * len(requests)
    repairs: list[tuple[int, ChatRequest]] = []
    for index, result in enumerate(complete_all(model, requests, store, desc)):
        outcome, problem = _outcome(result, parse)
        if problem is None:
            outcomes[index] = outcome
        else:
            repairs.append((index, _repair_request(requests[index], result.text, problem,
                                                   repair_hint)))
    repaired = complete_all(model, [r for _, r in repairs], store, desc) if repairs else []
    for (index, _), result in zip(repairs, repaired, strict=True):
        outcomes[index], _ = _outcome(result, parse, after_repair=True)
    return outcomes  # type: ignore[return-value]


def _outcome(result, parse, after_repair: bool = False) -> tuple[JsonOutcome, str | None]:
    """The outcome of one result, and the problem to repair (None: nothing to repair)."""
    if not hasattr(result, "text"):  # a ModelCallError: the call failed for good
        reason = getattr(result, "reason", str(result))
        return JsonOutcome(error=f"rater_error: call failed ({reason})"), None
    try:
        value = parse(result.text)
    except ValueError as problem:
        suffix = " after one repair attempt" if after_repair else ""
        return (JsonOutcome(error=f"rater_error: {problem}{suffix}", raw=result.text or ""),
                None if after_repair else str(problem))
    return JsonOutcome(value=value, raw=result.text or ""), None


def _repair_request(request: ChatRequest, bad_reply: str, problem: str,
                    repair_hint: str) -> ChatRequest:
    messages = (*request.messages, {"role": "assistant", "content": bad_reply or ""},
                {"role": "user", "content": f"That reply could not be used: {problem}. Reply "
                 f"again with only the JSON object, {repair_hint}"})
    return ChatRequest(messages, request.params, tag=request.tag + "/repair")
