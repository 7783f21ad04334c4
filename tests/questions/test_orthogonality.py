"""The orthogonality rater: valid verdicts, one repair attempt, recorded errors, skipped
content-free stimuli, the exclusion threshold, caching, and the CLI."""

import json

import pytest

from memlens.errors import MemlensError
from memlens.models import FakeModel, ModelCallError
from memlens.questions import Question
from memlens.questions.orthogonality import (
    RELEVANCE_PARAMS,
    RelevanceRating,
    excluded_pairs,
    parse_relevance,
    rate_relevance,
    rating_pairs,
)
from memlens.stimuli import Stimulus

Q1 = Question("q1", "How should you spend your time if a machine took your job?", "work", "x")
Q2 = Question("q2", "Is it better to rent or buy?", "money", "housing")
CTRL = Stimulus("control/no_perturbation", "control", "no_perturbation", "")
NOISE = Stimulus("noise/filler/1", "noise", "filler", "Um, so...")
LOOKS = Stimulus("persona/appearance/1", "persona", "appearance",
                 "I describe myself as conventionally attractive.")
GRIEF = Stimulus("life_event/bereavement/1", "life_event", "bereavement", "My father died.")


def reply(relevant=True, confidence=0.9, rationale="because"):
    return json.dumps({"relevant": relevant, "confidence": confidence, "rationale": rationale})


def test_valid_replies_skip_content_free_stimuli_and_prompt():
    model = FakeModel([reply(True, 0.88, "looks matter here"), reply(False, 0.7)])
    pairs = [(Q1, CTRL), (Q1, NOISE), (Q1, LOOKS), (Q2, GRIEF)]
    first, second = rate_relevance(pairs, model)
    assert (first.question_id, first.stimulus_id) == ("q1", LOOKS.id)
    assert first.relevant and first.confidence == 0.88 and first.rationale == "looks matter here"
    assert first.error is None and first.id == f"q1|{LOOKS.id}"
    assert not second.relevant and second.stimulus_id == GRIEF.id
    assert len(model.calls) == 2  # control and noise are never rated
    user = model.calls[0][-1]["content"]
    assert LOOKS.text in user and Q1.text in user
    assert RELEVANCE_PARAMS.temperature == 0.0
    assert RELEVANCE_PARAMS.json_schema["required"] == ["relevant", "confidence", "rationale"]
    assert rating_pairs([Q1, Q2], [CTRL, NOISE, LOOKS, GRIEF]) == [
        (Q1, LOOKS), (Q1, GRIEF), (Q2, LOOKS), (Q2, GRIEF)]


def test_broken_then_repaired_and_broken_twice():
    def script(messages, params):
        repairing = len(messages) > 2
        if "attractive" in messages[1]["content"]:
            return reply(True, 0.9) if repairing else "Relevant, I would say."
        return '{"relevant": true, "confidence": "very", "rationale": "x"}'

    model = FakeModel(script)
    repaired, broken = rate_relevance([(Q1, LOOKS), (Q1, GRIEF)], model)
    assert repaired.relevant and repaired.confidence == 0.9 and repaired.error is None
    assert broken.error == ("rater_error: field 'confidence' must be a number from 0 to 1 "
                            "after one repair attempt")
    assert not broken.relevant and broken.raw.startswith('{"relevant": true')
    assert len(model.calls) == 4
    assert model.calls[2][-1]["content"].startswith(
        "That reply could not be used: no JSON object in the reply. Reply again with only the "
        "JSON object")
    # a rater error never excludes a pair, whatever it said
    assert excluded_pairs([repaired, broken]) == {("q1", LOOKS.id)}


def test_failed_call_is_recorded():
    def script(messages, params):
        raise ModelCallError("timeout after 3 attempts", attempts=3)

    (rating,) = rate_relevance([(Q2, GRIEF)], FakeModel(script))
    assert rating.error.startswith("rater_error: call failed (") and "timeout" in rating.error


@pytest.mark.parametrize("text, problem", [
    ("no json", "no JSON object"),
    ('{"relevant": "maybe", "confidence": 0.5, "rationale": "r"}', "'relevant'"),
    ('{"relevant": true, "confidence": true, "rationale": "r"}', "'confidence'"),
    ('{"relevant": true, "confidence": -0.1, "rationale": "r"}', "'confidence'"),
    ('{"relevant": true, "confidence": 0.5, "rationale": " "}', "'rationale'"),
])
def test_parse_rejects(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_relevance(text)


def test_parse_accepts_strings_and_fences():
    assert parse_relevance('```json\n{"relevant": "yes", "confidence": "0.6", '
                           '"rationale": " r "}\n```') == (True, 0.6, "r")


def test_threshold():
    ratings = [RelevanceRating("q1", "a", True, 0.5, "r"),
               RelevanceRating("q1", "b", True, 0.49, "r"),
               RelevanceRating("q2", "a", False, 1.0, "r")]
    assert excluded_pairs(ratings) == {("q1", "a")}
    assert excluded_pairs([r.to_dict() for r in ratings], threshold=0.4) == {("q1", "a"),
                                                                           ("q1", "b")}
    with pytest.raises(MemlensError, match="threshold must be a number from 0 to 1"):
        excluded_pairs(ratings, threshold=1.5)


def test_cached_in_run_store(tmp_path):
    from memlens.store import RunStore

    model = FakeModel([reply()])
    with RunStore(tmp_path / "run") as store:
        rate_relevance([(Q1, LOOKS)], model, store)
        (again,) = rate_relevance([(Q1, LOOKS)], model, store)
    assert again.relevant and len(model.calls) == 1


def test_cli_writes_ratings(tmp_path, capsys, monkeypatch):
    from memlens.cli.main import main

    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(q.to_dict()) + "\n" for q in (Q1, Q2)))
    stimuli = tmp_path / "s.jsonl"
    stimuli.write_text("".join(json.dumps(s.to_dict()) + "\n" for s in (CTRL, NOISE, LOOKS, GRIEF)))

    def script(messages, params):
        user = messages[1]["content"]
        return reply("attractive" in user and "machine" in user, 0.8)

    import memlens.models

    monkeypatch.setattr(memlens.models, "get_model", lambda spec, **kw: FakeModel(script))
    out = tmp_path / "ratings.jsonl"
    code = main(["questions", "orthogonality", "--rater", "fake", "--questions", str(questions),
                 "--stimuli", str(stimuli), "--threshold", "0.7", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "pairs rated              4" in printed
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4
    assert [row["id"] for row in rows if row["excluded"]] == [f"q1|{LOOKS.id}"]
    with pytest.raises(SystemExit) as refused:  # the flag's type refuses it before any work
        main(["questions", "orthogonality", "--rater", "fake", "--threshold", "2",
              "--out", str(out)])
    assert refused.value.code == 2
    assert "argument --threshold: must be a finite number from 0 to 1" in capsys.readouterr().err
