"""The LLM labeler against scripted FakeModel replies: valid, repaired, garbage, empty, failing."""

import json

import pytest

from memlens.models import ChatResponse, FakeModel, ModelCallError
from memlens.ontology import UNLABELED, get_labeler, load_ontology
from memlens.ontology.llm_labeler import LLMLabeler
from memlens.ontology.prompting import InvalidReply, label_messages, parse_labels
from memlens.store import RunStore

ONTOLOGY = load_ontology()
NORMS, COST, SAFETY = ("social.norms_communication", "practical.resources_cost",
                       "protective.safety_wellbeing_risk")


def reply(*labels: str) -> str:
    return json.dumps({"labels": [{"step": i, "label": x} for i, x in enumerate(labels, 1)]})


def labeler_for(replies, store=None) -> tuple[LLMLabeler, FakeModel]:
    model = FakeModel(replies)
    return LLMLabeler(model, ONTOLOGY, store=store), model


def test_valid_reply_one_call_per_response():
    labeler, model = labeler_for([reply(NORMS, COST), reply(SAFETY)])
    assert labeler.label([["say thanks", "it costs 5"], ["wear a helmet"]]) == [
        [NORMS, COST], [SAFETY]]
    assert len(model.calls) == 2
    assert labeler.counts.valid_first_try == 2 and labeler.counts.unlabeled == 0


def test_prompt_contains_ontology_steps_and_temperature_zero():
    seen = []

    def script(messages, params):
        seen.append(params)
        return reply(NORMS)

    LLMLabeler(FakeModel(script), ONTOLOGY).label([["Be polite."]])
    prompt = label_messages(ONTOLOGY, ["Be polite."])[1]["content"]
    assert "Step 1: Be polite." in prompt
    for symbol in ONTOLOGY.symbols:
        assert f"[{symbol.id}]" in prompt and symbol.definition in prompt
        assert all(rule in prompt for rule in symbol.exclude)
    assert seen[0].temperature == 0.0
    assert seen[0].json_schema["properties"]["labels"]["items"]["properties"]["label"][
        "enum"] == ONTOLOGY.symbol_ids


def test_unknown_label_is_repaired_with_the_validation_error():
    labeler, model = labeler_for([reply("social.harmony"), reply(NORMS)])
    assert labeler.label([["Be polite."]]) == [[NORMS]]
    repair_turn = model.calls[1][-1]["content"]
    assert "unknown label 'social.harmony'" in repair_turn
    assert model.calls[1][-2] == {"role": "assistant", "content": reply("social.harmony")}
    assert labeler.counts.repaired == 1


def test_broken_json_then_repaired():
    labeler, model = labeler_for(['{"labels": [{"step": 1, "label": ', "```json\n"
                                  + reply(COST, NORMS) + "\n```"])
    assert labeler.label([["a", "b"]]) == [[COST, NORMS]]
    assert "not valid JSON" in model.calls[1][-1]["content"]


def test_broken_twice_gives_unlabeled_and_is_recorded():
    labeler, model = labeler_for(["I think step one is social.", "still prose"])
    assert labeler.label([["a", "b", "c"]]) == [[UNLABELED] * 3]
    assert len(model.calls) == 2
    assert labeler.counts.unlabeled == 1
    assert labeler.counts.problems[0]["reply"] == "still prose"


def test_empty_response_and_empty_step_list():
    labeler, model = labeler_for(["", ""])
    assert labeler.label([["a"], []]) == [[UNLABELED], []]
    assert len(model.calls) == 2  # the empty step list costs no call
    assert labeler.counts.problems[0]["reason"] == "the reply was empty"


def test_wrong_count_then_fixed_and_mixed_batch():
    labeler, _ = labeler_for([reply(NORMS), "garbage", reply(NORMS, COST), "garbage"])
    # response 0: count wrong then fixed; response 1: garbage twice
    result = labeler.label([["a", "b"], ["c"]])
    assert result == [[NORMS, COST], [UNLABELED]]


def test_failed_call_becomes_unlabeled_without_repair():
    def script(messages, params):
        raise ModelCallError("timeout after 3 attempts", attempts=3)

    labeler = LLMLabeler(FakeModel(script), ONTOLOGY)
    assert labeler.label([["a"]]) == [[UNLABELED]]
    assert "timeout" in labeler.counts.problems[0]["reason"]


def test_store_caches_calls(tmp_path):
    with RunStore(tmp_path / "run") as store:
        first, model = labeler_for([reply(NORMS, COST)], store=store)
        assert first.label([["a", "b"]]) == [[NORMS, COST]]
        again, model2 = labeler_for(lambda m, p: ChatResponse(text="never"), store=store)
        assert again.label([["a", "b"]]) == [[NORMS, COST]]
        assert model2.calls == []


def test_get_labeler_builds_llm_labeler_from_model_string():
    labeler = get_labeler("fake", seed=3, temperature=1.0)
    assert isinstance(labeler, LLMLabeler)
    assert labeler.labeler_id.startswith("llm:fake:t1.0:s3:")


@pytest.mark.parametrize(
    "text,problem",
    [
        ('{"labels": [{"step": 1, "label": "x"}]}', "unknown label 'x'"),
        ('{"labels": [{"step": 1, "label": "' + NORMS + '"}, {"step": 1, "label": "'
         + NORMS + '"}]}', "labeled twice"),
        ('{"labels": [{"step": 3, "label": "' + NORMS + '"}, {"step": 1, "label": "'
         + NORMS + '"}]}', "step number from 1 to 2"),
        ('{"steps": []}', '"labels" list'),
        ("[1]", '"labels" list'),
        ("   ", "empty"),
    ],
)
def test_parse_labels_rejects(text, problem):
    with pytest.raises(InvalidReply, match=problem):
        parse_labels(text, 2 if "labeled twice" in problem or "step number" in problem else 1,
                     ONTOLOGY)


def test_llm_labeler_over_real_http_with_repair(tmp_path, monkeypatch):
    """The CLI with an OpenAI-compatible model string against the loopback server."""
    from memlens.cli.main import main
    from memlens.models.loopback import LoopbackServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-secret")
    bodies = []

    def responder(body):
        bodies.append(body)
        last = body["messages"][-1]["content"]
        if "Your reply was invalid" in last:
            return reply(NORMS, COST)
        if "Lock the door" in last:
            return reply(SAFETY)
        return "Sure! Step 1 is about manners."  # invalid: repaired on the second call

    steps = tmp_path / "steps.jsonl"
    steps.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "text": "Say thanks.", "response_id": "r1"},
        {"id": "b", "text": "It is cheap.", "response_id": "r1"},
        {"id": "c", "text": "Lock the door."}]))
    out = tmp_path / "labels.jsonl"
    with LoopbackServer(responder=responder) as server:
        status = main(["label", "--labeler", f"openai:labeler@{server.base_url}",
                       "--in", str(steps), "--out", str(out)])
    assert status == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], r["label"], r["root"]) for r in rows] == [
        ("a", NORMS, "Social"), ("b", COST, "Practical"), ("c", SAFETY, "Protective")]
    assert len(bodies) == 3
    assert all(body["temperature"] == 0.0 for body in bodies)
    schema = bodies[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["labels"]["items"]["properties"]["label"]["enum"][0] == (
        "social.fairness_reciprocity")
    assert not (tmp_path / "labels.problems.jsonl").exists()
