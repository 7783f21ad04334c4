"""The embedded labeler: MiniLM sentence embeddings against per-symbol prototypes, offline.

Each symbol's prototype is the normalised mean of the embeddings of its definition, its name with
its cue phrases, its include rules and its example steps. A step gets the symbol whose prototype
is most cosine-similar. Measured on the 110 hand-labeled steps in
``tests/ontology/fixtures/labeled_steps.jsonl`` this beat nearest-example kNN (k = 1..3) and
definition-only prototypes (see docs/ontology.md). Optionally a logistic-regression classifier
trained on labeled steps (``fit``) replaces the prototypes.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import numpy as np

from memlens.errors import MemlensError, missing_extra
from memlens.ontology.embedding import CachedEncoder
from memlens.ontology.schema import UNLABELED, Ontology, Symbol


def prototype_texts(symbol: Symbol) -> list[str]:
    """The texts whose embeddings are averaged into ``symbol``'s prototype."""
    texts = [symbol.definition]
    if symbol.triggers.cue_phrases:
        texts.append(f"{symbol.name}: " + ", ".join(symbol.triggers.cue_phrases))
    return texts + list(symbol.include) + list(symbol.examples)


class EmbeddedLabeler:
    """Label steps by nearest prototype (or a trained classifier) in MiniLM space.

    ``encoder`` defaults to a ``CachedEncoder`` over MiniLM; pass one with ``encode_fn`` in unit
    tests. ``classifier_path`` loads a classifier saved by ``save_classifier``. Empty or
    whitespace-only steps are ``unlabeled``.
    """

    def __init__(self, ontology: Ontology, encoder: CachedEncoder | None = None,
                 classifier_path: str | Path | None = None):
        self.ontology = ontology
        self.encoder = encoder or CachedEncoder()
        self._prototypes: np.ndarray | None = None
        self._classifier = None
        self._classifier_digest = ""
        if classifier_path is not None:
            self.load_classifier(classifier_path)

    @property
    def labeler_id(self) -> str:
        """Identifies the labeler's behaviour (for cache keys and manifests)."""
        base = f"embedded:all-MiniLM-L6-v2:prototype:{self.ontology.content_hash()[:12]}"
        return base + (f":clf-{self._classifier_digest}" if self._classifier is not None else "")

    def prototypes(self) -> np.ndarray:
        """(symbols × d) matrix of unit-length prototypes, in ``ontology.symbol_ids`` order."""
        if self._prototypes is None:
            rows = []
            for symbol in self.ontology.symbols:
                mean = self.encoder.encode(prototype_texts(symbol)).mean(axis=0)
                rows.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
            self._prototypes = np.stack(rows)
        return self._prototypes

    def label_texts(self, texts: list[str]) -> list[str]:
        """One symbol id per text (``unlabeled`` for empty text)."""
        kept = [index for index, text in enumerate(texts) if text and text.strip()]
        labels = [UNLABELED] * len(texts)
        if not kept:
            return labels
        vectors = self.encoder.encode([texts[index].strip() for index in kept])
        if self._classifier is not None:
            predicted = list(self._classifier.predict(vectors))
        else:
            best = np.argmax(vectors @ self.prototypes().T, axis=1)
            predicted = [self.ontology.symbol_ids[column] for column in best]
        for index, label in zip(kept, predicted, strict=True):
            labels[index] = str(label)
        return labels

    def label(self, responses: list[list[str]]) -> list[list[str]]:
        """Label every step of every response; all steps are encoded in one batched pass."""
        flat = [step for steps in responses for step in steps]
        labels = self.label_texts(flat)
        result, position = [], 0
        for steps in responses:
            result.append(labels[position:position + len(steps)])
            position += len(steps)
        return result

    def fit(self, texts: list[str], labels: list[str], seed: int = 0,
            with_ontology: bool = True) -> EmbeddedLabeler:
        """Train a logistic-regression classifier on labeled steps; it replaces the prototypes.

        With ``with_ontology`` the prototype texts of every symbol (definition, cues, include
        rules, examples) are added as training rows: on 70 labeled steps this lifted held-out
        subcategory accuracy from about 0.6 to about 0.85 (docs/ontology.md). Raises ``MemlensError`` for unknown labels, mismatched lengths or fewer than two classes.
        """
        if len(texts) != len(labels):
            raise MemlensError(f"fit needs one label per text ({len(texts)} texts, "
                               f"{len(labels)} labels)")
        unknown = sorted(set(labels) - set(self.ontology.symbol_ids))
        if unknown:
            raise MemlensError(f"fit: unknown label(s) {', '.join(map(repr, unknown))}; "
                               f"expected ids from ontology {self.ontology.name}")
        if len(set(labels)) < 2:
            raise MemlensError("fit needs labeled steps from at least two symbols")
        try:
            from sklearn.linear_model import LogisticRegression
        except ImportError:
            raise missing_extra("scikit-learn", "embedded") from None

        texts, labels = list(texts), list(labels)
        if with_ontology:
            for symbol in self.ontology.symbols:
                extra = prototype_texts(symbol)
                texts += extra
                labels += [symbol.id] * len(extra)
        classifier = LogisticRegression(max_iter=2000, C=10.0, random_state=seed)
        classifier.fit(self.encoder.encode(texts), labels)
        self._set_classifier(classifier)
        return self

    def _set_classifier(self, classifier) -> None:
        self._classifier = classifier
        self._classifier_digest = hashlib.sha256(pickle.dumps(classifier)).hexdigest()[:12]

    def save_classifier(self, path: str | Path) -> Path:
        """Write the trained classifier (with the ontology hash it was trained for) to ``path``."""
        if self._classifier is None:
            raise MemlensError("no classifier to save: call fit(texts, labels) first")
        path = Path(path)
        payload = {"ontology_sha256": self.ontology.content_hash(), "classifier": self._classifier}
        path.write_bytes(pickle.dumps(payload))
        return path

    def load_classifier(self, path: str | Path) -> None:
        """Load a classifier saved by ``save_classifier`` (refuses one from another ontology).

        The file is a pickle: load only classifiers you trained yourself.
        """
        try:
            payload = pickle.loads(Path(path).read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError) as error:
            raise MemlensError(f"cannot read classifier file {path}: {error}") from None
        if not isinstance(payload, dict) or "classifier" not in payload:
            raise MemlensError(f"{path} is not a memlens labeler classifier")
        if payload.get("ontology_sha256") != self.ontology.content_hash():
            raise MemlensError(f"classifier {path} was trained for a different ontology "
                               "version; re-train it with fit()")
        self._set_classifier(payload["classifier"])
