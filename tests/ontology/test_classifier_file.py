"""The labeler classifier file: plain arrays (.npz, no pickle), so loading one runs no code;
old pickles are refused unread and converted only on request."""

import hashlib
import json
import pickle

import numpy as np
import pytest

from memlens.cli.main import main
from memlens.errors import MemlensError
from memlens.ontology import load_ontology
from memlens.ontology.embedded_labeler import EmbeddedLabeler, LinearClassifier
from memlens.ontology.embedding import CachedEncoder

ONTOLOGY = load_ontology()


def random_encoder(dim=16):
    """A deterministic pseudo-embedding per text (hash-seeded), so many classes are separable."""
    def encode(texts):
        return np.stack([np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16))
                         .normal(size=dim) for t in texts])
    return CachedEncoder(encode_fn=encode)


def fitted(classes=None):
    classes = classes or ONTOLOGY.symbol_ids
    labeler = EmbeddedLabeler(ONTOLOGY, encoder=random_encoder())
    texts = [f"step {i}" for i in range(60)]
    labels = [classes[i % len(classes)] for i in range(60)]
    return labeler.fit(texts, labels, with_ontology=len(classes) == len(ONTOLOGY.symbol_ids))


class Planted:
    """Unpickling this creates ``marker`` (what a hostile classifier file would do)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_planted_pickle_runs_no_code_and_says_how_to_convert(tmp_path, capsys):
    marker = tmp_path / "pwned"
    evil = tmp_path / "clf.pkl"
    evil.write_bytes(pickle.dumps({"ontology_sha256": ONTOLOGY.content_hash(),
                                   "classifier": Planted(marker)}))
    steps = tmp_path / "steps.jsonl"
    steps.write_text('{"id": "1", "text": "Plan it."}\n')
    assert main(["label", "--in", str(steps), "--out", str(tmp_path / "o.jsonl"),
                 "--classifier", str(evil)]) == 2
    err = capsys.readouterr().err
    assert not marker.exists()
    assert "pickle" in err and "convert-classifier" in err and "--trust-pickle" in err
    with pytest.raises(MemlensError, match="can run any code"):
        EmbeddedLabeler(ONTOLOGY, encoder=random_encoder(), classifier_path=evil)
    assert not marker.exists()
    # converting without --trust-pickle refuses, still without unpickling
    assert main(["ontology", "convert-classifier", str(evil), str(tmp_path / "new.npz")]) == 2
    assert "--trust-pickle" in capsys.readouterr().err and not marker.exists()


def test_predictions_equal_sklearn_and_survive_the_round_trip(tmp_path):
    from sklearn.linear_model import LogisticRegression

    labeler = fitted()
    rng = np.random.default_rng(7)
    train = rng.normal(size=(80, 16))
    labels = [ONTOLOGY.symbol_ids[i % 11] for i in range(80)]
    for n_classes in (11, 2):
        keep = [i for i, label in enumerate(labels) if label in ONTOLOGY.symbol_ids[:n_classes]]
        sk = LogisticRegression(max_iter=2000, C=10.0).fit(train[keep], np.array(labels)[keep])
        test = rng.normal(size=(200, 16))
        assert LinearClassifier.from_sklearn(sk).predict(test) == list(sk.predict(test))
    texts = [f"held out {i}" for i in range(100)]
    path = labeler.save_classifier(tmp_path / "clf.npz")
    reloaded = EmbeddedLabeler(ONTOLOGY, encoder=random_encoder(), classifier_path=path)
    before = labeler.label_texts(texts)
    assert reloaded.label_texts(texts) == before and len(set(before)) > 5
    assert reloaded.labeler_id == labeler.labeler_id


def test_digest_is_of_the_safe_arrays(tmp_path):
    labeler = fitted()
    path = labeler.save_classifier(tmp_path / "clf.npz")
    with np.load(path, allow_pickle=False) as arrays:
        meta = json.loads(arrays["meta"].tobytes())
        coef, intercept = arrays["coef"], arrays["intercept"]
    assert meta["format"] == "memlens-linear-classifier/1"
    assert meta["ontology_sha256"] == ONTOLOGY.content_hash()
    assert meta["embedding_model"] == "all-MiniLM-L6-v2" and meta["classes"] == sorted(ONTOLOGY.symbol_ids)
    hasher = hashlib.sha256(json.dumps(meta["classes"]).encode())
    for array in (coef, intercept):
        hasher.update(repr(array.shape).encode() + array.astype("<f8").tobytes())
    assert labeler.labeler_id.endswith(f":clf-{hasher.hexdigest()[:12]}")
    # a changed coefficient is a different labeler (another cache key)
    np.savez(tmp_path / "edited.npz", coef=coef + 1e-9, intercept=intercept,
             meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    edited = EmbeddedLabeler(ONTOLOGY, encoder=random_encoder(),
                             classifier_path=tmp_path / "edited.npz")
    assert edited.labeler_id != labeler.labeler_id


def test_convert_trusted_pickle_keeps_predictions(tmp_path, capsys):
    labeler = fitted()
    from sklearn.linear_model import LogisticRegression

    sk = LogisticRegression(max_iter=2000, C=10.0, random_state=0)
    texts = [f"step {i}" for i in range(60)]
    labels = [ONTOLOGY.symbol_ids[i % 11] for i in range(60)]
    sk.fit(labeler.encoder.encode(texts), labels)
    old = tmp_path / "old.pkl"  # exactly what save_classifier used to write
    old.write_bytes(pickle.dumps({"ontology_sha256": ONTOLOGY.content_hash(), "classifier": sk}))
    assert main(["ontology", "convert-classifier", str(old), str(tmp_path / "new.npz"),
                 "--trust-pickle"]) == 0
    assert "wrote" in capsys.readouterr().out
    converted = EmbeddedLabeler(ONTOLOGY, encoder=random_encoder(),
                                classifier_path=tmp_path / "new.npz")
    held_out = [f"other {i}" for i in range(50)]
    assert converted.label_texts(held_out) == list(sk.predict(labeler.encoder.encode(held_out)))


@pytest.mark.parametrize("content,message", [
    (b"not a classifier", "not a memlens labeler classifier"),
    (b"PK\x03\x04broken zip", "not a memlens labeler classifier"),
])
def test_other_files_are_one_clear_error(tmp_path, content, message):
    path = tmp_path / "x.npz"
    path.write_bytes(content)
    with pytest.raises(MemlensError, match=message):
        EmbeddedLabeler(ONTOLOGY, encoder=random_encoder(), classifier_path=path)


def test_object_arrays_are_refused_unread(tmp_path):
    marker = tmp_path / "pwned"
    meta = {"format": "memlens-linear-classifier/1", "ontology_sha256": ONTOLOGY.content_hash(),
            "embedding_model": "all-MiniLM-L6-v2", "classes": sorted(ONTOLOGY.symbol_ids)}
    np.savez(tmp_path / "evil.npz", coef=np.array([Planted(marker)], dtype=object),
             intercept=np.zeros(11), meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    with pytest.raises(MemlensError, match="not a memlens labeler classifier"):
        EmbeddedLabeler(ONTOLOGY, encoder=random_encoder(), classifier_path=tmp_path / "evil.npz")
    assert not marker.exists()
