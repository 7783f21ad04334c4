"""The embedded labeler: unit tests with a scripted encoder, then the real MiniLM on the
110 hand-labeled held-out steps (none of them is an ontology example)."""

import json
from pathlib import Path

import numpy as np
import pytest

from memlens.errors import MemlensError
from memlens.ontology import UNLABELED, get_labeler, load_ontology
from memlens.ontology.embedded_labeler import EmbeddedLabeler, prototype_texts
from memlens.ontology.embedding import CachedEncoder

FIXTURE = Path(__file__).parent / "fixtures" / "labeled_steps.jsonl"
ONTOLOGY = load_ontology()


def load_fixture() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]


def keyword_encoder() -> CachedEncoder:
    """One axis per symbol: a text points along the symbol whose id-word it contains."""
    words = [symbol_id.split(".")[1].split("_")[0] for symbol_id in ONTOLOGY.symbol_ids]

    def encode(texts):
        out = np.full((len(texts), len(words)), 0.01)
        for row, text in enumerate(texts):
            for column, word in enumerate(words):
                out[row, column] += text.lower().count(word)
        return out

    return CachedEncoder(encode_fn=encode)


def test_fixture_is_varied_and_has_no_leakage():
    rows = load_fixture()
    assert len(rows) >= 100
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["label"] for r in rows} == set(ONTOLOGY.symbol_ids)
    ontology_texts = {t for s in ONTOLOGY.symbols for t in prototype_texts(s)}
    assert not ontology_texts & {r["text"] for r in rows}
    assert all(ONTOLOGY.root_of(r["label"]) == r["root"] for r in rows)


def test_labels_by_nearest_prototype_with_unit_encoder():
    labeler = EmbeddedLabeler(ONTOLOGY, encoder=keyword_encoder())
    steps = [["planning planning", " ", "ethical duty"], [], ["autonomy"]]
    assert labeler.label(steps) == [
        ["practical.planning_feasibility", UNLABELED, "protective.ethical_responsibility"], [],
        ["personal.autonomy_authenticity"]]


def test_encoder_cache_encodes_each_text_once():
    encoder = keyword_encoder()
    labeler = EmbeddedLabeler(ONTOLOGY, encoder=encoder)
    labeler.label([["fairness", "fairness"]])
    after_first = encoder.encoded
    labeler.label([["fairness"], ["fairness"]])
    assert encoder.encoded == after_first
    assert after_first == 1 + sum(len(set(prototype_texts(s))) for s in ONTOLOGY.symbols) - (
        sum(len(prototype_texts(s)) for s in ONTOLOGY.symbols)
        - len({t for s in ONTOLOGY.symbols for t in prototype_texts(s)}))


def test_fit_rejects_bad_labels():
    labeler = EmbeddedLabeler(ONTOLOGY, encoder=keyword_encoder())
    with pytest.raises(MemlensError, match="unknown label"):
        labeler.fit(["a", "b"], ["social.harmony", "practical.resources_cost"])
    with pytest.raises(MemlensError, match="one label per text"):
        labeler.fit(["a"], [])
    with pytest.raises(MemlensError, match="no classifier"):
        labeler.save_classifier("x.pkl")


def test_classifier_save_load_and_wrong_ontology(tmp_path):
    labeler = EmbeddedLabeler(ONTOLOGY, encoder=keyword_encoder())
    labeler.fit(["fairness", "planning", "fairness share"],
                ["social.fairness_reciprocity", "practical.planning_feasibility",
                 "social.fairness_reciprocity"])
    path = labeler.save_classifier(tmp_path / "clf.pkl")
    reloaded = EmbeddedLabeler(ONTOLOGY, encoder=keyword_encoder(), classifier_path=path)
    assert reloaded.labeler_id == labeler.labeler_id and ":clf-" in labeler.labeler_id
    assert reloaded.label([["planning"]]) == [["practical.planning_feasibility"]]
    with pytest.raises(MemlensError, match="different ontology"):
        EmbeddedLabeler(load_ontology("driftlens-v1-alt"), encoder=keyword_encoder(),
                        classifier_path=path)
    (tmp_path / "bad.pkl").write_text("not a pickle")
    with pytest.raises(MemlensError, match="cannot read classifier"):
        EmbeddedLabeler(ONTOLOGY, classifier_path=tmp_path / "bad.pkl")


@pytest.fixture(scope="module")
def minilm_labeler():
    return get_labeler("embedded", ontology=ONTOLOGY)


def accuracy(labeler, rows) -> tuple[float, float]:
    predicted = labeler.label([[r["text"]] for r in rows])
    labels = [p[0] for p in predicted]
    sub = np.mean([p == r["label"] for p, r in zip(labels, rows, strict=True)])
    root = np.mean([ONTOLOGY.root_of(p) == r["root"] for p, r in zip(labels, rows, strict=True)])
    return float(sub), float(root)


@pytest.mark.embedded
def test_minilm_accuracy_on_held_out_steps(minilm_labeler):
    sub, root = accuracy(minilm_labeler, load_fixture())
    # Measured 0.836 / 0.900 (docs/ontology.md); the floor leaves room for library versions.
    assert root >= 0.85
    assert sub >= 0.78


@pytest.mark.embedded
def test_minilm_classifier_cross_validated(minilm_labeler):
    rows = load_fixture()
    rng = np.random.default_rng(0)
    order = rng.permutation(len(rows))
    train, test = [rows[i] for i in order[:70]], [rows[i] for i in order[70:]]
    labeler = EmbeddedLabeler(ONTOLOGY, encoder=minilm_labeler.encoder)
    labeler.fit([r["text"] for r in train], [r["label"] for r in train], seed=0)
    sub, root = accuracy(labeler, test)
    # Measured 0.825 / 0.925 on this 40-step split (prototypes alone: 0.875 / 0.925) —
    # with 70 training steps the classifier does not beat the prototypes; it is for users
    # with larger labeled sets.
    assert root >= 0.85 and sub >= 0.75
