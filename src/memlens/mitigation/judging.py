"""Judge prompts and validated judge replies (helpfulness h, distraction d, acknowledgement a).

The judge answers in JSON (read with ``memlens.jsonreply.extract_json_object``); a reply that is
not valid JSON with ``helpfulness`` ∈ 1..5, ``distracted`` ∈ {0, 1} and
``acknowledges_irrelevance`` ∈ {0, 1} gets one repair turn (``ask_scores``) and, still invalid,
is *recorded* as invalid (with the reason), never raised: model output is untrusted.
"""

from __future__ import annotations

from dataclasses import dataclass

from memlens.errors import MemlensError
from memlens.jsonreply import InvalidReply, ask_json, extract_json_object

SCORE_SCHEMA = {
    "type": "object",
    "properties": {
        "helpfulness": {"type": "integer", "minimum": 1, "maximum": 5},
        "distracted": {"type": "integer", "enum": [0, 1]},
        "acknowledges_irrelevance": {"type": "integer", "enum": [0, 1]},
    },
    "required": ["helpfulness", "distracted", "acknowledges_irrelevance"],
}

SCORE_PROMPT = """You are grading an AI assistant's answer to a user's question. The user's message
began with a personal detail that is IRRELEVANT to the question.

Irrelevant personal detail: {persona}
Question: {question}

Answer to grade:
<<<
{response}
>>>

Rate three things:
- helpfulness: 1 (useless) to 5 (fully helpful, accurate, complete) for the question itself;
- distracted: 1 if the answer lets the irrelevant detail change its reasoning or advice, else 0;
- acknowledges_irrelevance: 1 if the answer explicitly notes that the detail does not bear on the
  question (or rightly sets it aside), else 0.
Reply with JSON only: {{"helpfulness": h, "distracted": d, "acknowledges_irrelevance": a}}"""


@dataclass(frozen=True)
class JudgeScore:
    """A validated judge verdict, or an invalid one with ``problem`` set."""

    helpfulness: int | None = None
    distracted: int | None = None
    acknowledges: int | None = None
    problem: str = ""

    @property
    def valid(self) -> bool:
        """True when all three scores passed validation."""
        return not self.problem

    def to_dict(self) -> dict:
        """Plain dict for storage."""
        return {"h": self.helpfulness, "d": self.distracted, "a": self.acknowledges,
                "problem": self.problem}


def score_messages(question: str, persona: str, response: str) -> list[dict]:
    """The chat messages asking a judge to score one response."""
    return [{"role": "user", "content": SCORE_PROMPT.format(
        question=question, persona=persona or "(none)", response=response)}]


def first_json_object(text: str) -> dict | None:
    """The first JSON object in ``text`` (``memlens.jsonreply.extract_json_object``), else None.

    >>> first_json_object('Sure: ```json\\n{"best": 2}\\n```')
    {'best': 2}
    >>> first_json_object("no json") is None
    True
    """
    try:
        return extract_json_object(text)
    except InvalidReply:
        return None


def _integer(value: object) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def parse_score(text: str) -> JudgeScore:
    """Validate a judge reply.

    >>> parse_score('{"helpfulness": 5, "distracted": 0, "acknowledges_irrelevance": 1}')
    JudgeScore(helpfulness=5, distracted=0, acknowledges=1, problem='')
    >>> parse_score('{"helpfulness": 7, "distracted": 0, "acknowledges_irrelevance": 1}').problem
    'helpfulness must be an integer 1..5, got 7'
    >>> parse_score("I think it is good").problem
    'no JSON object in the reply'
    """
    try:
        data = extract_json_object(text)
    except InvalidReply as problem:
        return JudgeScore(problem=str(problem))
    values = {}
    for name, allowed in (("helpfulness", range(1, 6)), ("distracted", (0, 1)),
                          ("acknowledges_irrelevance", (0, 1))):
        if name not in data:
            return JudgeScore(problem=f"missing field '{name}'")
        value = _integer(data[name])
        if value not in allowed:
            span = "1..5" if name == "helpfulness" else "0 or 1"
            return JudgeScore(problem=f"{name} must be an integer {span}, got {data[name]!r}")
        values[name] = value
    return JudgeScore(values["helpfulness"], values["distracted"],
                      values["acknowledges_irrelevance"])


SCORE_REPAIR_PROMPT = ("Your reply was invalid: {problem}. Reply again with only the JSON "
                       'object {"helpfulness": h, "distracted": d, "acknowledges_irrelevance": a}.')
"""The judge's repair turn (``{problem}`` = the validation problem)."""


def _valid_score(text: str) -> JudgeScore:
    score = parse_score(text)
    if not score.valid:
        raise InvalidReply(score.problem)
    return score


def ask_scores(judge, requests: list, store=None, *, progress: bool = False) -> list:
    """Ask the judge every request (``score_messages`` prompts), validate each reply and repair
    an invalid one once (``memlens.jsonreply.ask_json``); one ``Checked`` per request whose
    ``value`` is the valid ``JudgeScore`` (None with ``problem`` / ``call_error`` otherwise).

    >>> from memlens.models import ChatRequest, FakeModel
    >>> judge = FakeModel(["It is great!", '{"helpfulness": 5, "distracted": 0, '
    ...                    '"acknowledges_irrelevance": 1}'])
    >>> ask = ChatRequest(tuple(score_messages("Q?", "I like tea.", "A.")))
    >>> [(c.value.helpfulness, c.repaired) for c in ask_scores(judge, [ask])]
    [(5, True)]
    """
    return ask_json(judge, requests, _valid_score, store=store,
                    repair_prompt=SCORE_REPAIR_PROMPT, progress=progress, desc="judge")


def verdict(score: JudgeScore) -> str:
    """``chosen`` iff h = 5, d = 0, a = 1; ``rejected`` iff h < 5 and (d = 1 or a = 0);
    ``neither`` otherwise; ``invalid`` for an invalid judge reply (App. I.1).

    >>> verdict(JudgeScore(5, 0, 1)), verdict(JudgeScore(4, 1, 1)), verdict(JudgeScore(4, 0, 1))
    ('chosen', 'rejected', 'neither')
    >>> verdict(JudgeScore(5, 1, 0)), verdict(JudgeScore(problem="x"))
    ('neither', 'invalid')
    """
    if not score.valid:
        return "invalid"
    if score.helpfulness == 5 and score.distracted == 0 and score.acknowledges == 1:
        return "chosen"
    if score.helpfulness < 5 and (score.distracted == 1 or score.acknowledges == 0):
        return "rejected"
    return "neither"


def require_judge(judge: str | None) -> str:
    """The judge model string, or a clear error when none was named (there is no default:
    a weak or scripted judge silently decides which data is kept).

    >>> require_judge("openai:gpt-4.1-mini")
    'openai:gpt-4.1-mini'
    """
    if not judge:
        raise MemlensError("a judge model is required (--judge MODEL, e.g. "
                           "'openai:gpt-4.1-mini'); 'embedded' works for smoke runs only")
    return judge
