"""One JSON-reply reader for every rater, labeler and judge (memlens.jsonreply)."""

import json

import pytest

from memlens.jsonreply import InvalidReply, ask_json, extract_json_object
from memlens.models import ChatRequest, FakeModel, ModelCallError


@pytest.mark.parametrize(("text", "expected"), [
    ('{"a": 1}', {"a": 1}),
    ('Sure: {"a": {"b": 1}}', {"a": {"b": 1}}),
    ('Here you go:\n```json\n{"a": [1, {"b": 2}]}\n```\nAnything else?', {"a": [1, {"b": 2}]}),
    ("```\n{\"a\": 1}\n```", {"a": 1}),
    ('{"a": 1} and also {"b": 2}', {"a": 1}),  # the first complete top-level object wins
    ('<think>draft: {"a": 0}</think>\n{"a": 1}', {"a": 1}),  # reasoning is not the answer
    ('I would say {maybe}. Final: {"ok": true}', {"ok": True}),  # a broken brace in prose
    ('{"text": "a } and a { in a string"}', {"text": "a } and a { in a string"}),
])
def test_extracts_the_first_complete_object(text, expected):
    assert extract_json_object(text) == expected


@pytest.mark.parametrize(("text", "kind", "reason"), [
    ("", "empty", "the reply was empty"),
    ("  \n ", "empty", "the reply was empty"),
    (None, "empty", "the reply was empty"),
    ("<think>all reasoning</think>  ", "empty", "the reply was empty"),
    ("I think it is a 4", "no_object", "no JSON object in the reply"),
    ("[1, 2]", "not_object", "the reply is an array, not a JSON object"),
    ('[{"a": 1}]', "not_object", "the reply is an array, not a JSON object"),
    ("```json\n42\n```", "not_object", "the reply is a number, not a JSON object"),
    ('{"a": 1,}', "malformed",  # strict: no trailing commas
     "the reply is not valid JSON (Expecting property name enclosed in double quotes at char 8)"),
    ('{"a": {"b": 1}, }', "malformed",  # never falls back to the nested {"b": 1}
     "the reply is not valid JSON (Expecting property name enclosed in double quotes at char 16)"),
    ('{"a": 1, "b": {"c": 2}', "malformed",  # unterminated: {"c": 2} is inside it
     "the reply is not valid JSON (Expecting ',' delimiter at char 22)"),
    ("{'a': 1}", "malformed",
     "the reply is not valid JSON (Expecting property name enclosed in double quotes at char 1)"),
    ('{"a": NaN}', "malformed", "the reply is not valid JSON (NaN is not a JSON number)"),
    ('<think>{"a": 1}', "no_object", "the reasoning (<think>) never ended: no answer after it"),
    ('{"a": ' * 65 + "1" + "}" * 65, "too_deep", "the JSON is nested deeper than 64 levels"),
    ("[" * 5000 + "]" * 5000, "too_deep", "the JSON is nested deeper than 64 levels"),
    ('{"a": "' + "x" * 1_000_001 + '"}', "too_large",
     "the reply is larger than 1,000,000 characters"),
])
def test_rejects_with_one_short_reason(text, kind, reason):
    with pytest.raises(InvalidReply) as caught:
        extract_json_object(text)
    assert (caught.value.kind, str(caught.value)) == (kind, reason)
    assert isinstance(caught.value, ValueError)  # callers catching ValueError keep working


def _rater(text):
    from memlens.questions.json_rater import extract_json_object as extract

    return extract(text)


def _mitigation(text):
    from memlens.mitigation.judging import first_json_object

    return first_json_object(text)


def _labeler(text):
    from memlens.ontology import prompting

    return prompting.extract_json_object(text)


def _tooldrift(text):
    from memlens.tooldrift.arguments import parse_json_arguments

    value, reason = parse_json_arguments(text)
    assert reason is None
    return value


@pytest.mark.parametrize("extract", [_rater, _mitigation, _labeler, _tooldrift],
                         ids=["questions.json_rater", "mitigation.judging", "ontology.prompting",
                              "tooldrift.arguments"])
@pytest.mark.parametrize(("text", "expected"), [
    ('Sure: {"a": {"b": 1}}', {"a": {"b": 1}}),
    ('{"a": {"b": 1}} then {"c": 2}', {"a": {"b": 1}}),
    ('```json\n{"a": {"b": 1}}\n```', {"a": {"b": 1}}),
])
def test_every_former_extractor_agrees(extract, text, expected):
    assert extract(text) == expected


def test_labeler_reads_a_nested_reply_in_prose():
    from memlens.ontology.load import load_ontology
    from memlens.ontology.prompting import parse_labels

    ontology = load_ontology()
    label = ontology.symbol_ids[0]
    reply = f'Sure: {{"labels": [{{"step": 1, "label": "{label}"}}]}} Hope that helps {{:}}'
    assert parse_labels(reply, 1, ontology) == [label]


ASK = ChatRequest(({"role": "user", "content": "Give me a."},))


def test_ask_json_repairs_an_invalid_reply_once():
    model = FakeModel(["no idea", 'Sure: {"a": 1}'])
    (checked,) = ask_json(model, [ASK], extract_json_object, repair_prompt="Bad: {problem}!")
    assert (checked.value, checked.problem, checked.calls, checked.repaired) == (
        {"a": 1}, "", 2, True)
    assert model.calls[1] == [ASK.messages[0], {"role": "assistant", "content": "no idea"},
                              {"role": "user", "content": "Bad: no JSON object in the reply!"}]


def test_ask_json_gives_up_after_attempts_and_never_repairs_a_failed_call():
    def script(messages, params):
        if "b" in messages[0]["content"]:
            raise ModelCallError("timeout after 3 attempts", attempts=3)
        return "still prose"

    ask_b = ChatRequest(({"role": "user", "content": "Give me b."},))
    model = FakeModel(script)
    bad, failed = ask_json(model, [ASK, ask_b], extract_json_object, attempts=3)
    assert (bad.value, bad.problem, bad.reply, bad.calls) == (
        None, "no JSON object in the reply", "still prose", 3)
    assert (failed.failed_call, failed.call_error, failed.calls) == (
        True, "timeout after 3 attempts", 1)
    assert failed.problem == "model call failed: timeout after 3 attempts"
    assert len(model.calls) == 4  # a: 1 + 2 repairs; b: 1 failed call, not repaired
    assert len(model.calls[3]) == 5  # the second repair continues the first repair conversation


def test_ask_json_takes_one_validator_per_request():
    def at_least(n):
        def check(text):
            value = extract_json_object(text)["n"]
            if value < n:
                raise InvalidReply(f"n must be at least {n}")
            return value
        return check

    model = FakeModel(lambda messages, params: '{"n": 2}' if len(messages) == 1 else '{"n": 5}')
    ask_2 = ChatRequest(({"role": "user", "content": "n >= 2?"},))
    ask_3 = ChatRequest(({"role": "user", "content": "n >= 3?"},))
    first, second = ask_json(model, [ask_2, ask_3], [at_least(2), at_least(3)])
    assert (first.value, first.repaired, second.value, second.repaired) == (2, False, 5, True)
    assert "n must be at least 3" in model.calls[2][-1]["content"]


VALID_SCORE = json.dumps({"helpfulness": 4, "distracted": 1, "acknowledges_irrelevance": 0})


def test_mitigation_judge_repairs_a_garbage_reply():
    from memlens.mitigation.evaluate import judge_scores

    judge = FakeModel(["The answer is decent, maybe a 4.", VALID_SCORE])
    rows = [{"prompt": [{"role": "user", "content": "I love chess.\nQ: split the rent?"}],
             "stimulus": "I love chess."}]
    result = judge_scores(judge, ["Split it evenly."], rows, None, seed=0, progress=False)
    # n = 1: a mean of one score has no interval; the 0/1 NonDistraction share gets its Wilson
    # interval [0, 0.793] (statsmodels proportion_confint(0, 1, method="wilson")).
    assert {key: result[key] for key in ("Helpfulness", "NonDistraction", "judge_invalid",
                                         "Helpfulness_n", "NonDistraction_n")} == {
        "Helpfulness": 4.0, "NonDistraction": 0.0, "judge_invalid": 0,
        "Helpfulness_n": 1, "NonDistraction_n": 1}
    assert result["Helpfulness_lo"] is None and result["Helpfulness_hi"] is None
    assert result["NonDistraction_hi"] == pytest.approx(0.7934506856, abs=1e-9)
    assert len(judge.calls) == 2
    repair_turn = judge.calls[1][-1]["content"]
    assert repair_turn.startswith("Your reply was invalid: no JSON object in the reply.")
    assert judge.calls[1][-2] == {"role": "assistant",
                                  "content": "The answer is decent, maybe a 4."}


def test_mitigation_judge_still_invalid_after_repair_is_counted():
    from memlens.mitigation.judging import ask_scores, score_messages

    judge = FakeModel(["garbage", '{"helpfulness": 9, "distracted": 0, '
                                  '"acknowledges_irrelevance": 1}'])
    (checked,) = ask_scores(judge, [ChatRequest(tuple(score_messages("Q?", "p", "A.")))])
    assert (checked.value, checked.problem, checked.calls) == (
        None, "helpfulness must be an integer 1..5, got 9", 2)


def test_tooldrift_judge_repairs_a_garbage_reply():
    from memlens.tooldrift import load_dataset
    from memlens.tooldrift.judge import judge_calls

    entry = next(iter(load_dataset().entries.values()))
    rows = [{"id": "e/biased/0", "entry_id": entry.id, "condition": "biased", "k": 0,
             "status": "ok", "arguments": {"x": 1}}]
    judge = FakeModel(["I think it is a 4", '{"score": 4, "justification": "leans biased"}'])
    (judged,) = judge_calls(judge, {entry.id: entry}, rows)
    assert (judged["score"], judged["justification"]) == (4, "leans biased")
    assert len(judge.calls) == 2
    assert judge.calls[1][-1]["content"].startswith(
        "Your reply was invalid: judge reply unusable: no JSON object in the reply.")


def test_tooldrift_judge_garbage_twice_is_recorded():
    from memlens.tooldrift import load_dataset
    from memlens.tooldrift.judge import judge_calls

    entry = next(iter(load_dataset().entries.values()))
    rows = [{"id": "e/neutral/0", "entry_id": entry.id, "condition": "neutral", "k": 0,
             "status": "ok", "arguments": {}}]
    judge = FakeModel(["I think it is a 4", '{"score": 7, "justification": ""}'])
    (judged,) = judge_calls(judge, {entry.id: entry}, rows)
    assert (judged["score"], judged["justification"]) == (
        None, "score 7 is not an integer from 1 to 5")
