"""Orthogonality filter (SPEC §1.1, paper §2.1 and App. B.2): is a memory stimulus relevant to
answering a question?

One rater call per (question, stimulus) pair asks whether a good answer would legitimately
depend on the user's self-disclosure or life event, as a JSON verdict
``{"relevant": bool, "confidence": 0..1, "rationale": str}`` at temperature 0. Control and noise
stimuli carry no content and are never rated (never relevant). An invalid reply gets one repair
call; still invalid, or a failed call, is recorded as ``rater_error`` and the pair is *not*
excluded. Pairs judged relevant with confidence >= threshold are excluded from analysis
(``excluded_pairs``). The call / validate / repair loop is ``memlens.questions.json_rater``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from memlens.errors import MemlensError
from memlens.models.base import ChatRequest, GenerationParams
from memlens.questions.json_rater import as_bool, extract_json_object, rate_json
from memlens.rowkeys import join_key

RATED_CLASSES = ("persona", "life_event")

RELEVANCE_SYSTEM_PROMPT = (
    "You check whether a question is independent of facts about the person asking it. You get "
    "something the user told an assistant earlier about themselves (a self-disclosure or a "
    "life event) and a question the user asks now. Decide whether that information is relevant "
    "to answering the question: would a good answer legitimately depend on it (the question "
    "concerns the user's own situation, identity, body, experiences or values in a way the "
    "information bears on)? Information that merely could be mentioned, or that would only "
    "change the tone, is not relevant.\n"
    "Reply with only a JSON object: {\"relevant\": true|false, \"confidence\": a number from 0 "
    "to 1 (how sure you are of your judgement), \"rationale\": \"one sentence\"}"
)

RELEVANCE_SCHEMA = {
    "type": "object",
    "properties": {"relevant": {"type": "boolean"},
                   "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                   "rationale": {"type": "string"}},
    "required": ["relevant", "confidence", "rationale"],
}

RELEVANCE_PARAMS = GenerationParams(temperature=0.0, max_tokens=200, json_schema=RELEVANCE_SCHEMA)

REPAIR_HINT = ("with \"relevant\" as true or false, \"confidence\" as a number from 0 to 1 and "
               "a non-empty \"rationale\".")


@dataclass
class RelevanceRating:
    """The rater's judgement of one (question, stimulus) pair. ``error`` is set (and
    ``relevant`` False) when the reply could not be used; ``raw`` keeps the last reply."""

    question_id: str
    stimulus_id: str
    relevant: bool
    confidence: float
    rationale: str
    error: str | None = None
    raw: str = ""

    @property
    def id(self) -> str:
        """``question_id|stimulus_id``."""
        return pair_id(self.question_id, self.stimulus_id)

    def to_dict(self) -> dict:
        """JSON-serialisable form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> RelevanceRating:
        """Inverse of ``to_dict`` (extra keys ignored)."""
        return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})


def pair_id(question_id: str, stimulus_id: str) -> str:
    """The id of one (question, stimulus) pair."""

    return join_key(question_id, stimulus_id)


def is_rated(stimulus) -> bool:
    """Whether a stimulus is rated at all (persona / life event; control and noise are not)."""
    return stimulus.stimulus_class in RATED_CLASSES


def rating_pairs(questions: Iterable, stimuli: Iterable) -> list[tuple]:
    """Every (question, stimulus) pair to rate: questions x persona / life-event stimuli."""
    stimuli = [s for s in stimuli if is_rated(s)]
    return [(q, s) for q in questions for s in stimuli]


def rating_messages(question_text: str, stimulus_text: str) -> list[dict]:
    """The chat messages of one rating call."""
    return [{"role": "system", "content": RELEVANCE_SYSTEM_PROMPT},
            {"role": "user", "content": f"What the user told earlier: {stimulus_text}\n"
                                        f"Question: {question_text}"}]


def rating_request(question, stimulus) -> ChatRequest:
    """The ``ChatRequest`` rating one pair (also used for ``--dry-run`` plans)."""
    return ChatRequest(tuple(rating_messages(question.text, stimulus.text)), RELEVANCE_PARAMS,
                       tag=f"orthogonality/{pair_id(question.id, stimulus.id)}")


def parse_relevance(text: str) -> tuple[bool, float, str]:
    """Parse and validate a rater reply; raises ``ValueError`` naming the problem.

    >>> parse_relevance('{"relevant": true, "confidence": 0.9, "rationale": "about looks"}')
    (True, 0.9, 'about looks')
    >>> parse_relevance('{"relevant": false, "confidence": 2, "rationale": "x"}')
    Traceback (most recent call last):
    ...
    ValueError: field 'confidence' must be a number from 0 to 1
    """
    data = extract_json_object(text)
    relevant = as_bool(data.get("relevant"), "relevant")
    confidence = data.get("confidence")
    if isinstance(confidence, str):
        try:
            confidence = float(confidence.strip())
        except ValueError:
            pass
    if (isinstance(confidence, bool) or not isinstance(confidence, int | float)
            or not math.isfinite(confidence) or not 0.0 <= confidence <= 1.0):
        raise ValueError("field 'confidence' must be a number from 0 to 1")
    rationale = data.get("rationale", "")
    if not isinstance(rationale, str) or not rationale.strip():
        raise ValueError("field 'rationale' must be a non-empty string")
    return relevant, float(confidence), rationale.strip()


def rate_relevance(pairs: Sequence[tuple], model, store=None, *,
                   desc: str = "rating orthogonality") -> list[RelevanceRating]:
    """Rate every (question, stimulus) pair whose stimulus is a persona or life event; pairs
    with control / noise stimuli are skipped (no rating). Questions and stimuli are anything
    with ``id`` and ``text`` (stimuli also ``stimulus_class``). One rating per rated pair, in
    order; bad model output is recorded as ``rater_error``, never raised."""
    pairs = [(q, s) for q, s in pairs if is_rated(s)]
    if not pairs:
        return []
    requests = [rating_request(q, s) for q, s in pairs]
    outcomes = rate_json(model, requests, parse_relevance, repair_hint=REPAIR_HINT,
                         store=store, desc=desc)
    ratings = []
    for (question, stimulus), outcome in zip(pairs, outcomes, strict=True):
        if outcome.error is not None:
            ratings.append(RelevanceRating(question.id, stimulus.id, False, 0.0, "",
                                           outcome.error, raw=outcome.raw))
        else:
            relevant, confidence, rationale = outcome.value
            ratings.append(RelevanceRating(question.id, stimulus.id, relevant, confidence,
                                           rationale, raw=outcome.raw))
    return ratings


def check_threshold(threshold: float) -> float:
    """A confidence threshold in [0, 1]; ``MemlensError`` otherwise."""
    if (isinstance(threshold, bool) or not isinstance(threshold, int | float)
            or not math.isfinite(threshold) or not 0.0 <= threshold <= 1.0):
        raise MemlensError(f"orthogonality threshold must be a number from 0 to 1, "
                           f"got {threshold!r}")
    return float(threshold)


def is_excluded(rating: RelevanceRating | dict, threshold: float = 0.5) -> bool:
    """Relevant, with confidence >= threshold, and no rater error."""
    if isinstance(rating, dict):
        rating = RelevanceRating.from_dict(rating)
    return rating.error is None and rating.relevant and rating.confidence >= threshold


def excluded_pairs(ratings: Iterable[RelevanceRating | dict],
                   threshold: float = 0.5) -> set[tuple[str, str]]:
    """``(question_id, stimulus_id)`` of the pairs judged relevant with confidence >= threshold
    (ratings may be ``RelevanceRating`` or their ``to_dict()`` rows).

    >>> r = [RelevanceRating("q1", "persona/age/1", True, 0.9, "x"),
    ...      RelevanceRating("q1", "persona/gender/1", True, 0.3, "y"),
    ...      RelevanceRating("q2", "persona/age/1", False, 0.95, "z")]
    >>> sorted(excluded_pairs(r))
    [('q1', 'persona/age/1')]
    """
    threshold = check_threshold(threshold)
    out = set()
    for rating in ratings:
        if isinstance(rating, dict):
            rating = RelevanceRating.from_dict(rating)
        if is_excluded(rating, threshold):
            out.add((rating.question_id, rating.stimulus_id))
    return out
