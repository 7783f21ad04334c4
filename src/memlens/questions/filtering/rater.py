"""LLM rater over the four question properties (SPEC §1.1, paper App. A).

One call per question asks for a JSON verdict — the four properties as booleans plus a
rationale — at temperature 0. The reply is validated; an invalid one gets one repair call
(the bad reply is shown back with the problem); a reply still invalid, or a failed call, is
recorded as ``rater_error`` and the question is not kept. Calls go through
``memlens.engine.run_requests``, so they are cached in the run store when one is given (the
call / validate / repair loop is ``memlens.questions.json_rater``, shared with the
orthogonality rater).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from memlens.models.base import ChatRequest, GenerationParams
from memlens.questions.json_rater import as_bool, extract_json_object, rate_json

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
    data = extract_json_object(text)
    properties = {name: as_bool(data.get(name), name) for name in PROPERTIES}
    rationale = data.get("rationale", "")
    if not isinstance(rationale, str) or not rationale.strip():
        raise ValueError("field 'rationale' must be a non-empty string")
    return properties, rationale.strip()


REPAIR_HINT = "with all four properties as true or false and a non-empty rationale."


def rate_questions(questions: Sequence, model, store=None) -> list[RaterVerdict]:
    """Rate every question (anything with ``id`` and ``text``) with ``model``; one verdict each,
    in order. Never raises for bad model output: it is recorded as ``rater_error``."""
    questions = list(questions)
    requests = [ChatRequest(tuple(rating_messages(q.text)), RATER_PARAMS, tag=f"rate/{q.id}")
                for q in questions]
    outcomes = rate_json(model, requests, parse_verdict, repair_hint=REPAIR_HINT, store=store,
                         desc="rating questions")
    verdicts = []
    for question, outcome in zip(questions, outcomes, strict=True):
        if outcome.error is not None:
            verdicts.append(RaterVerdict(question.id, False, {}, "", outcome.error, raw=outcome.raw))
        else:
            properties, rationale = outcome.value
            verdicts.append(RaterVerdict(question.id, all(properties.values()), properties,
                                         rationale, raw=outcome.raw))
    return verdicts
