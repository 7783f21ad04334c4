"""The LLM rater: valid verdicts, one repair attempt, recorded errors, caching via the store."""

import json

from memlens.models import ChatResponse, FakeModel, ModelCallError
from memlens.questions import Question
from memlens.questions.filtering import PROPERTIES, rate_questions
from memlens.questions.filtering.rater import RATER_PARAMS

Q1 = Question("q1", "Is it better to rent or buy?", "money", "housing")
Q2 = Question("q2", "What is the capital of France?", "misc", "misc")


def verdict(keep=True, **changes):
    data = {name: keep for name in PROPERTIES} | {"rationale": "because"} | changes
    return json.dumps(data)


def test_valid_verdicts_and_prompt():
    model = FakeModel([verdict(True), "```json\n" + verdict(False, stand_alone=True) + "\n```"])
    first, second = rate_questions([Q1, Q2], model)
    assert first.keep and first.error is None and first.rationale == "because"
    assert not second.keep and second.properties["stand_alone"] is True
    assert second.properties["unverifiable"] is False
    assert len(model.calls) == 2
    assert model.calls[0][-1] == {"role": "user", "content": f"Question: {Q1.text}"}
    assert RATER_PARAMS.temperature == 0.0 and RATER_PARAMS.json_schema is not None


def test_one_repair_attempt_then_recorded_error():
    def script(messages, params):
        question = messages[1]["content"]
        repairing = len(messages) > 2
        if "rent" in question:
            return verdict(True) if repairing else "I think yes!"
        return '{"reasoning_invoking": "maybe"}'

    model = FakeModel(script)
    repaired, broken = rate_questions([Q1, Q2], model)
    assert repaired.keep and repaired.error is None
    assert not broken.keep
    assert broken.error == ("rater_error: field 'reasoning_invoking' must be true or false "
                            "after one repair attempt")
    assert broken.raw == '{"reasoning_invoking": "maybe"}'
    assert len(model.calls) == 4
    repair_turn = model.calls[2][-1]["content"]
    assert repair_turn.startswith("That reply could not be used: no JSON object in the reply")


def test_failed_call_and_empty_reply_are_recorded():
    def script(messages, params):
        if "rent" in messages[1]["content"]:
            raise ModelCallError("timeout after 3 attempts", attempts=3)
        return ChatResponse(text="")

    failed, empty = rate_questions([Q1, Q2], FakeModel(script))
    assert failed.error.startswith("rater_error: call failed (") and "timeout" in failed.error
    assert empty.error == "rater_error: the reply was empty after one repair attempt"
    assert not failed.keep and not empty.keep


def test_cached_in_run_store(tmp_path):
    from memlens.store import RunStore

    model = FakeModel([verdict(True)])
    with RunStore(tmp_path / "run") as store:
        rate_questions([Q1], model, store=store)
        again = rate_questions([Q1], model, store=store)
    assert again[0].keep and len(model.calls) == 1
