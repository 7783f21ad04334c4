"""LLM rater over the four question properties (SPEC §1.1, paper App. A).

One call per question asks for a JSON verdict — the four properties as booleans plus a
rationale — at temperature 0. The reply is validated; an invalid one gets one repair call
(the bad reply is shown back with the problem); a reply still invalid, or a failed call, is
recorded as ``rater_error`` and the question is not kept. Calls go through
``memlens.engine.run_requests``, so they are cached in the run store when one is given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from memlens.models.base import ChatRequest, GenerationParams

PROPERTIES = ("reasoning_invoking", "unverifiable", "persona_indifferent", "stand_alone")

RATER_SYSTEM_PROMPT = (
    "You screen candidate questions for a benchmark about reasoning. Judge the question on four "
    "properties:\n"
    "- reasoning_invoking: answering needs trade-offs, comparisons or justification, not a fact "
    "lookup or a definition.\n"
    "- unverifiable: there is no single objectively correct answer (no medical, legal or "
    "factual ground truth).\n"
    "- persona_indifferent: a good answer does not depend on who asks (age, gender, income, "
    "occupation, disability, ...), and the question does not reveal such attributes.\n"
    "- stand_alone: the question is understandable without hidden context.\n"
    "Reply with only a JSON object: {\"reasoning_invoking\": true|false, \"unverifiable\": "
    "true|false, \"persona_indifferent\": true|false, \"stand_alone\": true|false, "
    "\"rationale\": \"one or two sentences\"}"
)

VERDICT_SCHEMA = {
    "type": "object",
    "properties": {**{name: {"type": "boolean"} for name in PROPERTIES},
                   "rationale": {"type": "string"}},
    "required": [*PROPERTIES, "rationale"],
}

RATER_PARAMS = GenerationParams(temperature=0.0, max_tokens=300, json_schema=VERDICT_SCHEMA)


@dataclass
class RaterVerdict:
    """The rater's judgement of one question; ``error`` is set (and ``keep`` False) when the
    reply could not be used. ``raw`` keeps the last reply text for inspection."""

    question_id: str
    keep: bool
    properties: dict[str, bool]
    rationale: str
    error: str | None = None
    raw: str = ""

    def to_dict(self) -> dict:
        """JSON-serialisable form."""
        return asdict(self)


def rating_messages(question_text: str) -> list[dict]:
    """The chat messages of one rating call."""
    return [{"role": "system", "content": RATER_SYSTEM_PROMPT},
            {"role": "user", "content": f"Question: {question_text}"}]


def parse_verdict(text: str) -> tuple[dict[str, bool], str]:
    """Parse and validate a rater reply; raises ``ValueError`` naming the problem.

    Accepts the JSON object alone or wrapped in prose / a code fence.

    >>> parse_verdict('{"reasoning_invoking": true, "unverifiable": true, '
    ...               '"persona_indifferent": false, "stand_alone": true, "rationale": "r"}')
    ({'reasoning_invoking': True, 'unverifiable': True, 'persona_indifferent': False, 'stand_alone': True}, 'r')
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
    properties = {}
    for name in PROPERTIES:
        value = data.get(name)
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
            value = value.strip().lower() in ("true", "yes")
        if not isinstance(value, bool):
            raise ValueError(f"field '{name}' must be true or false")
        properties[name] = value
    rationale = data.get("rationale", "")
    if not isinstance(rationale, str) or not rationale.strip():
        raise ValueError("field 'rationale' must be a non-empty string")
    return properties, rationale.strip()


def complete_all(model, requests: list[ChatRequest], store=None) -> list:
    """Run ``requests`` through ``memlens.engine.run_requests`` (cached in ``store`` when given);
    one response or ``ModelCallError`` per request, in order."""
    from memlens.engine import run_requests

    return run_requests(model, requests, store, progress=False, desc="rating questions")


def rate_questions(questions: Sequence, model, store=None) -> list[RaterVerdict]:
    """Rate every question (anything with ``id`` and ``text``) with ``model``; one verdict each,
    in order. Never raises for bad model output: it is recorded as ``rater_error``."""
    questions = list(questions)
    requests = [ChatRequest(tuple(rating_messages(q.text)), RATER_PARAMS, tag=f"rate/{q.id}")
                for q in questions]
    verdicts: list[RaterVerdict | None] = [None] * len(questions)
    repairs: list[tuple[int, ChatRequest]] = []
    for index, result in enumerate(complete_all(model, requests, store)):
        verdict, problem = _verdict(questions[index].id, result)
        if problem is None or not hasattr(result, "text"):
            verdicts[index] = verdict
        else:
            repairs.append((index, _repair_request(requests[index], result.text, problem)))
    repaired = complete_all(model, [request for _, request in repairs], store) if repairs else []
    for (index, _), result in zip(repairs, repaired, strict=True):
        verdicts[index], _ = _verdict(questions[index].id, result, after_repair=True)
    return verdicts  # type: ignore[return-value]


def _verdict(question_id: str, result, after_repair: bool = False):
    if not hasattr(result, "text"):  # a ModelCallError: the call failed for good
        reason = getattr(result, "reason", str(result))
        return RaterVerdict(question_id, False, {}, "", f"rater_error: call failed ({reason})"), "call"
    try:
        properties, rationale = parse_verdict(result.text)
    except ValueError as problem:
        suffix = " after one repair attempt" if after_repair else ""
        error = f"rater_error: {problem}{suffix}"
        return RaterVerdict(question_id, False, {}, "", error, raw=result.text or ""), str(problem)
    return RaterVerdict(question_id, all(properties.values()), properties, rationale,
                        raw=result.text), None


def _repair_request(request: ChatRequest, bad_reply: str, problem: str) -> ChatRequest:
    messages = (*request.messages, {"role": "assistant", "content": bad_reply or ""},
                {"role": "user", "content": f"That reply could not be used: {problem}. Reply "
                 "again with only the JSON object, with all four properties as true or false "
                 "and a non-empty rationale."})
    return ChatRequest(messages, request.params, tag=request.tag + "/repair")
