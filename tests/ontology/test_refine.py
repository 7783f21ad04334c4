"""The refinement loop end to end with scripted FakeModel labelers and reviser."""

import json

import pytest

from memlens.errors import MemlensError
from memlens.models import FakeModel
from memlens.ontology import load_ontology
from memlens.ontology.llm_labeler import LLMLabeler
from memlens.ontology.refine import refine

ONTOLOGY = load_ontology()
NORMS, COST = "social.norms_communication", "practical.resources_cost"
RESPONSES = [["Say thank you.", "It costs ten dollars."], ["Be polite."]]


def labels_reply(messages, chosen):
    n_steps = messages[-1]["content"].count("\nStep ")
    return json.dumps({"labels": [{"step": i + 1, "label": chosen} for i in range(n_steps)]})


def make_labelers():
    """Labeler A always says NORMS. Labeler B says COST until the definition of NORMS carries
    the word 'REVISED', then agrees with A."""
    def b_script(messages, params):
        agrees = "REVISED" in messages[-1]["content"]
        return labels_reply(messages, NORMS if agrees else COST)

    return {
        "a": lambda o: LLMLabeler(FakeModel(lambda m, p: labels_reply(m, NORMS)), o),
        "b": lambda o: LLMLabeler(FakeModel(b_script), o),
    }


def revised_ontology_json(ontology=ONTOLOGY) -> str:
    data = ontology.model_dump(mode="json")
    for symbol in data["symbols"]:
        if symbol["id"] == NORMS:
            symbol["definition"] = "REVISED: " + symbol["definition"]
    return json.dumps(data)


def test_refine_reaches_threshold_and_keeps_every_version(tmp_path):
    reviser = FakeModel(["Here you go: not json", revised_ontology_json()])
    result = refine(make_labelers(), RESPONSES, reviser, ONTOLOGY, tmp_path, threshold=0.8)
    assert [h["mean_agreement"] for h in result.history] == [0.0, 1.0]
    assert [h["revision"] for h in result.history] == ["initial", "repaired"]
    assert result.best_version == 1
    assert result.best.symbol(NORMS).definition.startswith("REVISED")
    assert (tmp_path / "v0.json").exists() and (tmp_path / "v1.json").exists()
    lines = (tmp_path / "history.jsonl").read_text().splitlines()
    assert [json.loads(line)["version"] for line in lines] == [0, 1]
    assert "no JSON object" in reviser.calls[1][-1]["content"]
    assert json.loads(lines[0])["disagreements"] == 3


def test_refine_rejects_changed_ids_and_stops_with_record(tmp_path):
    data = json.loads(revised_ontology_json())
    data["symbols"][0]["id"] = "social.harmony"
    reviser = FakeModel([json.dumps(data)])
    result = refine(make_labelers(), RESPONSES, reviser, ONTOLOGY, tmp_path, threshold=0.8)
    assert result.history[-1]["revision"] == "failed"
    assert "ids must stay exactly the same" in result.history[-1]["reason"]
    assert result.best_version == 0
    assert len(reviser.calls) == 2  # one attempt plus one repair


def test_refine_stops_at_max_iter(tmp_path):
    reviser = FakeModel([json.dumps(ONTOLOGY.model_dump(mode="json"))])  # never helps
    result = refine(make_labelers(), RESPONSES, reviser, ONTOLOGY, tmp_path, max_iter=2)
    assert [h["version"] for h in result.history] == [0, 1, 2]
    assert all(h["mean_agreement"] == 0.0 for h in result.history)


def test_refine_bad_arguments(tmp_path):
    with pytest.raises(MemlensError, match="at least two labelers"):
        refine({"a": make_labelers()["a"]}, RESPONSES, FakeModel(), ONTOLOGY, tmp_path)
    with pytest.raises(MemlensError, match="threshold"):
        refine(make_labelers(), RESPONSES, FakeModel(), ONTOLOGY, tmp_path, threshold=1.5)
