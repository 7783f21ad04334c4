"""Model replies that must be one JSON object: extraction, validation, one repair turn.

Every rater, labeler and judge reads its reply with ``extract_json_object`` and asks through
``ask_json`` (call, validate, repair the invalid replies, validate again), so all of them accept
and reject the same replies with the same reasons. Model output is untrusted: nothing here raises
on garbage except ``InvalidReply`` from ``extract_json_object`` (a ``ValueError``), and
``ask_json`` records every problem instead of raising.

Extraction rules (``extract_json_object``):

* a reasoning model's ``<think>…</think>`` is dropped: only the text after the last
  ``</think>`` is the answer;
* prose before / after the object and a code fence (```` ```json … ``` ````) around it are
  ignored;
* several objects: the **first complete top-level object wins** (candidates are tried at each
  ``{`` with ``json.JSONDecoder().raw_decode``; an object nested inside a malformed one is never
  taken for the answer);
* strict JSON only: trailing commas, single quotes, comments, NaN / Infinity are refused (the
  reason names the character where decoding stopped), as are nesting deeper than
  ``memlens.jsonl.MAX_DEPTH`` and replies longer than ``MAX_REPLY_CHARS``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from memlens.engine import run_requests
from memlens.jsonl import MAX_DEPTH, _finite_float, _refuse_constant, _too_deep
from memlens.models.base import ChatRequest

MAX_REPLY_CHARS = 1_000_000
"""Longest reply text searched for a JSON object (longer replies are refused as too large)."""

DEFAULT_REPAIR_PROMPT = ("Your reply was invalid: {problem}. Reply again with only the JSON "
                         "object.")
"""The repair turn; ``{problem}`` is replaced by the validation problem."""

_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


class InvalidReply(ValueError):
    """A reply that is not the expected JSON object; the message is a short reason that can be
    shown back to the model in a repair turn. ``kind`` is one of ``empty``, ``too_large``,
    ``no_object``, ``not_object``, ``malformed``, ``too_deep`` or ``invalid`` (a validator's
    own check)."""

    def __init__(self, reason: str, kind: str = "invalid"):
        super().__init__(reason)
        self.kind = kind


def _answer_part(text: str) -> str:
    """The text after a reasoning model's last ``</think>`` (all of it when there is none);
    ``InvalidReply`` when a ``<think>`` never ends (the answer never came)."""
    end = text.rfind("</think>")
    if text.rfind("<think>") > end:
        raise InvalidReply("the reasoning (<think>) never ended: no answer after it", "no_object")
    return text[end + len("</think>"):] if end >= 0 else text


def _not_an_object(text: str) -> InvalidReply | None:
    """The problem when the whole reply (fences stripped) is JSON but not an object."""
    bare = text.strip().removeprefix("```json").strip("`\n ")
    try:
        whole = json.loads(bare)
    except RecursionError:
        return InvalidReply(f"the JSON is nested deeper than {MAX_DEPTH} levels", "too_deep")
    except ValueError:
        return None
    if whole is None or isinstance(whole, dict):
        return None
    kind = {list: "an array", str: "a string", bool: "true/false"}.get(type(whole), "a number")
    return InvalidReply(f"the reply is {kind}, not a JSON object", "not_object")


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the ``}`` closing the ``{`` at ``start`` (string-aware), else None."""
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _decode_at(text: str, start: int) -> Any:
    """``raw_decode`` at ``start`` under the limits; ``InvalidReply`` naming the problem."""
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise InvalidReply(f"the reply is not valid JSON ({error.msg} at char {error.pos})",
                           "malformed") from None
    except RecursionError:
        raise InvalidReply(f"the JSON is nested deeper than {MAX_DEPTH} levels",
                           "too_deep") from None
    except ValueError as error:  # NaN / Infinity, an overflowing float, too many int digits
        reason = str(error)
        if "integer string conversion" in reason:
            reason = f"an integer has more than {sys.get_int_max_str_digits()} digits"
        raise InvalidReply(f"the reply is not valid JSON ({reason})", "malformed") from None
    if _too_deep(value):
        raise InvalidReply(f"the JSON is nested deeper than {MAX_DEPTH} levels", "too_deep")
    return value


def extract_json_object(text: str | None) -> dict:
    """The first complete top-level JSON object of a reply (see the module docstring for the
    rules); ``InvalidReply`` with a short reason otherwise.

    >>> extract_json_object('Sure: ```json\\n{"a": {"b": 1}}\\n``` Anything else?')
    {'a': {'b': 1}}
    >>> extract_json_object('<think>maybe {"a": 0}</think> {"a": 1} {"a": 2}')
    {'a': 1}
    >>> extract_json_object('{"a": 1,}')
    Traceback (most recent call last):
    memlens.jsonreply.InvalidReply: the reply is not valid JSON (Expecting property name \
enclosed in double quotes at char 8)
    >>> extract_json_object("no json here")
    Traceback (most recent call last):
    memlens.jsonreply.InvalidReply: no JSON object in the reply
    """
    text = text or ""
    if len(text) > MAX_REPLY_CHARS:
        raise InvalidReply(f"the reply is larger than {MAX_REPLY_CHARS:,} characters",
                           "too_large")
    text = _answer_part(text)
    if not text.strip():
        raise InvalidReply("the reply was empty", "empty")
    first_problem: InvalidReply | None = None
    position = text.find("{")
    if position < 0 or text.lstrip()[:1] in ("[", '"'):
        other = _not_an_object(text)  # JSON of another type: say so rather than "no object"
        if other is not None:
            raise other
    while position >= 0:
        try:
            value = _decode_at(text, position)
        except InvalidReply as problem:
            first_problem = first_problem or problem
            if problem.kind == "too_deep":
                raise
            end = _balanced_end(text, position)
            if end is None:  # never closes: every later "{" lies inside this broken object
                break
            position = text.find("{", end)  # objects nested in a broken one are not answers
            continue
        if isinstance(value, dict):
            return value
        position = text.find("{", position + 1)  # pragma: no cover - raw_decode at "{" is a dict
    raise first_problem or InvalidReply("no JSON object in the reply", "no_object")


@dataclass
class Checked:
    """One request's outcome in ``ask_json``: the validated ``value``, or ``problem`` (why
    there is none). ``reply`` is the last reply text ("" after a failed call), ``calls`` the
    model calls spent, ``call_error`` the reason of a call that failed for good."""

    value: Any = None
    problem: str = ""
    reply: str = ""
    calls: int = 0
    call_error: str = ""

    @property
    def ok(self) -> bool:
        """True when a reply validated."""
        return not self.problem

    @property
    def repaired(self) -> bool:
        """True when the value came from a repair turn."""
        return self.ok and self.calls > 1

    @property
    def failed_call(self) -> bool:
        """True when there is no value because a model call failed (not a bad reply)."""
        return bool(self.call_error)


def repair_request(request, reply: str, problem: str,
                   repair_prompt: str = DEFAULT_REPAIR_PROMPT):
    """``request`` continued with the invalid ``reply`` and a user turn naming ``problem``:
    ``[*messages, assistant reply, user repair_prompt]`` (same parameters, tag + "/repair")."""

    messages = (*request.messages, {"role": "assistant", "content": reply or ""},
                {"role": "user", "content": repair_prompt.replace("{problem}", problem)})
    return ChatRequest(messages, request.params, sample_index=request.sample_index,
                       tag=request.tag + "/repair")


def _check(outcome, validate: Callable[[str], Any], calls: int) -> Checked:
    if not hasattr(outcome, "text"):  # a ModelCallError: the call failed for good
        reason = str(getattr(outcome, "reason", outcome))
        return Checked(problem=f"model call failed: {reason}", calls=calls, call_error=reason)
    try:
        return Checked(value=validate(outcome.text), reply=outcome.text or "", calls=calls)
    except ValueError as problem:
        return Checked(problem=str(problem) or type(problem).__name__,
                       reply=outcome.text or "", calls=calls)


def ask_json(model, requests: Sequence,
             validate: Callable[[str], Any] | Sequence[Callable[[str], Any]], *, store=None,
             repair_prompt: str = DEFAULT_REPAIR_PROMPT, attempts: int = 2,
             progress: bool = False, desc: str = "json") -> list[Checked]:
    """Ask every request, validate each reply, repair the invalid ones; one ``Checked`` each.

    Calls go in batches through ``memlens.engine.run_requests`` (cached in ``store`` when
    given): first all requests, then — up to ``attempts - 1`` times — the repair conversations
    of the replies ``validate`` rejected (``validate(text)`` returns the value or raises
    ``ValueError``, e.g. ``InvalidReply``; its message is the problem shown to the model in
    ``repair_prompt``); ``validate`` may also be a list, one validator per request. A failed
    call is not repaired: it is recorded with ``call_error``.

    >>> from memlens.models import ChatRequest, FakeModel
    >>> model = FakeModel(["Sure! a=1", 'Sure: {"a": 1}'])
    >>> ask = ChatRequest(({"role": "user", "content": "a?"},))
    >>> (checked,) = ask_json(model, [ask], extract_json_object)
    >>> checked.value, checked.repaired, model.calls[1][-1]["content"]
    ({'a': 1}, True, 'Your reply was invalid: no JSON object in the reply. Reply again with \
only the JSON object.')
    """

    requests = list(requests)
    validators = [validate] * len(requests) if callable(validate) else list(validate)
    if len(validators) != len(requests):
        raise ValueError(f"{len(validators)} validators for {len(requests)} requests")
    results: list[Checked] = [Checked()] * len(requests)
    todo = list(range(len(requests)))
    for attempt in range(1, max(1, attempts) + 1):
        if not todo:
            break
        label = desc if attempt == 1 else f"{desc}-repair"
        outcomes = run_requests(model, [requests[i] for i in todo], store, progress=progress,
                                desc=label)
        retry = []
        for index, outcome in zip(todo, outcomes, strict=True):
            results[index] = _check(outcome, validators[index], attempt)
            if not results[index].ok and not results[index].failed_call and attempt < attempts:
                requests[index] = repair_request(requests[index], outcome.text,
                                                 results[index].problem, repair_prompt)
                retry.append(index)
        todo = retry
    return results
