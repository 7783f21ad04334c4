"""The embedded labeler: MiniLM sentence embeddings against per-symbol prototypes, offline.

Each symbol's prototype is the normalised mean of the embeddings of its definition, its name with
its cue phrases, its include rules and its example steps. A step gets the symbol whose prototype
is most cosine-similar. Measured on the 110 hand-labeled steps in
``tests/ontology/fixtures/labeled_steps.jsonl`` this beat nearest-example kNN (k = 1..3) and
definition-only prototypes (see docs/ontology.md). Optionally a logistic-regression classifier
trained on labeled steps (``fit``) replaces the prototypes; it is saved as plain arrays
(``.npz``, read with ``allow_pickle=False``) and applied with numpy, so loading a classifier file
cannot run code.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np

from memlens.errors import MemlensError, missing_extra
from memlens.jsonl import read_bytes
from memlens.ontology.abstention import abstain_mask, prototype_extras
from memlens.ontology.embedding import CachedEncoder
from memlens.ontology.schema import UNLABELED, Ontology, Symbol

EMBEDDING_MODEL = "all-MiniLM-L6-v2"
EMBEDDING_DIM = 384
"""Width of the MiniLM embeddings a saved classifier must be trained on."""
MAX_CLASSIFIER_BYTES = 64 << 20
"""Largest classifier file, and largest total its arrays may unpack to (an 11-class classifier
is 34 KB): a small zip bomb is refused before anything is decompressed."""
CLASSIFIER_FORMAT = "memlens-linear-classifier/1"
_PICKLE_HELP = ("it is a pickle (the old classifier format), which can run any code when loaded; "
                "if you trained it yourself, convert it once with 'memlens ontology "
                "convert-classifier OLD NEW --trust-pickle' and use NEW")


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
    whitespace-only steps are ``unlabeled``. Opt-in for real, messy steps
    (``memlens.ontology.abstention``, docs/ontology.md): ``abstain`` leaves steps closest to the
    bundled no-value prototype ``unlabeled``, ``min_margin`` also those whose best symbol beats
    the second by less than that cosine, ``extra_examples`` adds the bundled realistic examples
    to the prototypes. All three need the prototypes (not a classifier).
    """

    def __init__(self, ontology: Ontology, encoder: CachedEncoder | None = None,
                 classifier_path: str | Path | None = None, *, abstain: bool = False,
                 min_margin: float = 0.0, extra_examples: bool = False):
        self.ontology = ontology
        self.encoder = encoder or CachedEncoder()
        if min_margin < 0 or not np.isfinite(min_margin):
            raise MemlensError(f"min_margin must be a cosine difference >= 0, got {min_margin}")
        self.abstain, self.min_margin, self.extra_examples = abstain, min_margin, extra_examples
        self._non_value: np.ndarray | None = None
        self._prototypes: np.ndarray | None = None
        self._classifier = None
        self._classifier_digest = ""
        if classifier_path is not None:
            if abstain or min_margin or extra_examples:
                raise MemlensError("abstain, min_margin and extra_examples apply to the "
                                   "prototypes, not to a classifier")
            self.load_classifier(classifier_path)

    @property
    def labeler_id(self) -> str:
        """Identifies the labeler's behaviour (for cache keys and manifests)."""
        base = f"embedded:all-MiniLM-L6-v2:prototype:{self.ontology.content_hash()[:12]}"
        base += (":extra" if self.extra_examples else "") + (":abstain" if self.abstain else "")
        base += f":margin{self.min_margin:g}" if self.min_margin else ""
        return base + (f":clf-{self._classifier_digest}" if self._classifier is not None else "")

    def prototypes(self) -> np.ndarray:
        """(symbols × d) matrix of unit-length prototypes, in ``ontology.symbol_ids`` order."""
        if self._prototypes is None:
            rows = []
            extras = prototype_extras()["examples"] if self.extra_examples else {}
            for symbol in self.ontology.symbols:
                texts = prototype_texts(symbol) + extras.get(symbol.id, [])
                mean = self.encoder.encode(texts).mean(axis=0)
                rows.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
            self._prototypes = np.stack(rows)
        return self._prototypes

    def non_value_prototype(self) -> np.ndarray:
        """Unit-length mean embedding of the bundled no-value steps (``abstain``)."""
        if self._non_value is None:
            mean = self.encoder.encode(prototype_extras()["non_value"]).mean(axis=0)
            self._non_value = mean / max(float(np.linalg.norm(mean)), 1e-12)
        return self._non_value

    def label_texts(self, texts: list[str]) -> list[str]:
        """One symbol id per text (``unlabeled`` for empty text)."""
        kept = [index for index, text in enumerate(texts) if text and text.strip()]
        labels = [UNLABELED] * len(texts)
        if not kept:
            return labels
        vectors = self.encoder.encode([texts[index].strip() for index in kept])
        if self._classifier is not None:
            predicted = self._classifier.predict(vectors)
        else:
            scores = vectors @ self.prototypes().T
            predicted = [self.ontology.symbol_ids[column] for column in np.argmax(scores, axis=1)]
            if self.abstain or self.min_margin:
                non_value = vectors @ self.non_value_prototype() if self.abstain else None
                for row in np.flatnonzero(abstain_mask(scores, non_value, self.min_margin)):
                    predicted[row] = UNLABELED
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
        self._set_classifier(LinearClassifier.from_sklearn(classifier))
        return self

    def _set_classifier(self, classifier: LinearClassifier) -> None:
        self._classifier = classifier
        self._classifier_digest = classifier.digest()[:12]

    def save_classifier(self, path: str | Path) -> Path:
        """Write the trained classifier (arrays plus JSON metadata with the ontology hash it was
        trained for) to ``path`` as ``.npz``; loading it never runs code."""
        if self._classifier is None:
            raise MemlensError("no classifier to save: call fit(texts, labels) first")
        return self._classifier.save(path, self.ontology.content_hash())

    def load_classifier(self, path: str | Path) -> None:
        """Load a classifier saved by ``save_classifier`` (refuses one from another ontology, and
        old pickle files, which could run code: see ``convert_pickle_classifier``)."""
        classifier, ontology_sha256 = LinearClassifier.load(path)
        if self.encoder.uses_minilm and classifier.width != EMBEDDING_DIM:
            raise MemlensError(f"classifier {path} was trained on {classifier.width}-dimensional "
                               f"embeddings, not the {EMBEDDING_DIM} of {EMBEDDING_MODEL}; "
                               "re-train it with fit()")
        if ontology_sha256 != self.ontology.content_hash():
            raise MemlensError(f"classifier {path} was trained for a different ontology "
                               "version; re-train it with fit()")
        unknown = sorted(set(classifier.classes) - set(self.ontology.symbol_ids))
        if unknown:
            raise MemlensError(f"classifier {path} predicts unknown symbol(s) "
                               f"{', '.join(map(repr, unknown))}")
        self._set_classifier(classifier)


class LinearClassifier:
    """A multinomial (or binary) logistic regression as plain arrays: ``coef`` (k × d, or 1 × d
    for two classes), ``intercept`` (k or 1) and ``classes``; predicts exactly as scikit-learn's
    ``LogisticRegression.predict`` (argmax of ``X @ coef.T + intercept``)."""

    def __init__(self, coef: np.ndarray, intercept: np.ndarray, classes: list[str]):
        self.coef = np.asarray(coef, dtype=np.float64)
        self.intercept = np.asarray(intercept, dtype=np.float64)
        self.classes = [str(label) for label in classes]
        rows = 1 if len(self.classes) == 2 else len(self.classes)
        if (self.coef.ndim != 2 or self.coef.shape[0] != rows or self.intercept.shape != (rows,)
                or len(self.classes) < 2 or not np.isfinite(self.coef).all()
                or not np.isfinite(self.intercept).all()):
            raise ValueError(f"coef {self.coef.shape}, intercept {self.intercept.shape} and "
                             f"{len(self.classes)} classes do not fit together")

    @classmethod
    def from_sklearn(cls, estimator) -> LinearClassifier:
        """The arrays of a fitted ``sklearn.linear_model.LogisticRegression``."""
        return cls(estimator.coef_, estimator.intercept_, list(estimator.classes_))

    @property
    def width(self) -> int:
        """The embedding width the classifier was trained on."""
        return int(self.coef.shape[1])

    def decision(self, vectors: np.ndarray) -> np.ndarray:
        """``X @ coef.T + intercept`` (n × k, or n for two classes)."""
        vectors = np.asarray(vectors)
        if vectors.ndim == 2 and len(vectors) and vectors.shape[1] != self.width:
            raise MemlensError(f"the classifier was trained on {self.width}-dimensional "
                               f"embeddings, the encoder gives {vectors.shape[1]}; re-train it "
                               "with fit()")
        scores = np.asarray(vectors, dtype=np.float64) @ self.coef.T + self.intercept
        return scores[:, 0] if len(self.classes) == 2 else scores

    def predict(self, vectors: np.ndarray) -> list[str]:
        """The class of each row of ``vectors``."""
        scores = self.decision(vectors)
        best = (scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)
        return [self.classes[index] for index in best]

    def digest(self) -> str:
        """sha256 of the arrays and classes (what the labeler id and cache keys carry)."""
        hasher = hashlib.sha256(json.dumps(self.classes).encode())
        for array in (self.coef, self.intercept):
            hasher.update(repr(array.shape).encode())
            hasher.update(np.ascontiguousarray(array, dtype="<f8").tobytes())
        return hasher.hexdigest()

    def save(self, path: str | Path, ontology_sha256: str) -> Path:
        """Write ``.npz``: ``coef``, ``intercept`` and ``meta`` (UTF-8 JSON bytes)."""
        meta = {"format": CLASSIFIER_FORMAT, "ontology_sha256": ontology_sha256,
                "embedding_model": EMBEDDING_MODEL, "classes": self.classes}
        buffer = io.BytesIO()
        np.savez(buffer, coef=self.coef, intercept=self.intercept,
                 meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
        path = Path(path)
        path.write_bytes(buffer.getvalue())
        return path

    @classmethod
    def load(cls, path: str | Path) -> tuple[LinearClassifier, str]:
        """(classifier, ontology sha256) from a file written by ``save``; ``MemlensError`` for
        anything else (old pickles are refused unread, with how to convert them)."""

        data = read_bytes(path, "classifier file", MAX_CLASSIFIER_BYTES)
        if data[:1] == b"\x80":
            raise MemlensError(f"classifier file {path} was not loaded: {_PICKLE_HELP}")
        not_ours = f"cannot read classifier file {path}: not a memlens labeler classifier (.npz)"
        if not data.startswith(b"PK"):
            raise MemlensError(not_ours)
        _check_unpacked_size(data, not_ours)
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                meta = json.loads(arrays["meta"].tobytes().decode("utf-8"))
                coef, intercept = arrays["coef"], arrays["intercept"]
        except (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile,
                UnicodeDecodeError, MemoryError) as error:
            raise MemlensError(f"{not_ours}: {error}") from None
        if not isinstance(meta, dict) or meta.get("format") != CLASSIFIER_FORMAT:
            raise MemlensError(f"{not_ours}: format is not {CLASSIFIER_FORMAT}")
        if meta.get("embedding_model") != EMBEDDING_MODEL:
            raise MemlensError(f"classifier {path} was trained on {meta.get('embedding_model')!r} "
                               f"embeddings, not {EMBEDDING_MODEL}")
        try:
            classifier = cls(coef, intercept, list(meta.get("classes") or []))
        except (TypeError, ValueError) as error:
            raise MemlensError(f"{not_ours}: {error}") from None
        return classifier, str(meta.get("ontology_sha256"))


def _check_unpacked_size(data: bytes, not_ours: str) -> None:
    """Refuse a ``.npz`` whose members would unpack (or whose arrays would allocate) beyond
    ``MAX_CLASSIFIER_BYTES``, judged from the zip directory and the ``.npy`` headers alone."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            total = sum(member.file_size for member in members)
            if total > MAX_CLASSIFIER_BYTES:
                raise MemlensError(f"{not_ours}: its arrays unpack to {total:,} bytes, over the "
                                   f"{MAX_CLASSIFIER_BYTES:,}-byte limit")
            for member in members:
                with archive.open(member) as handle:
                    version = np.lib.format.read_magic(handle)
                    read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                                   (2, 0): np.lib.format.read_array_header_2_0}.get(version)
                    if read_header is None:
                        continue  # np.load checks it; its member size is bounded above
                    shape, _, dtype = read_header(handle)
                if int(np.prod(shape, dtype=np.float64)) * dtype.itemsize > member.file_size:
                    raise MemlensError(f"{not_ours}: array {member.filename!r} claims shape "
                                       f"{shape}, more than its {member.file_size:,} bytes")
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as error:
        raise MemlensError(f"{not_ours}: {error}") from None


def convert_pickle_classifier(old: str | Path, new: str | Path, *, trust_pickle: bool) -> Path:
    """Rewrite an old pickled classifier (``{"ontology_sha256", "classifier"}``) as ``.npz``.

    Unpickling runs whatever code the file holds, so this refuses unless ``trust_pickle`` (the
    caller vouches that the file is their own).
    """
    if not trust_pickle:
        raise MemlensError(f"converting {old} unpickles it, which runs any code the file holds; "
                           "pass --trust-pickle only for a file you made yourself")
    import pickle

    data = read_bytes(old, "pickled classifier", MAX_CLASSIFIER_BYTES)
    try:
        payload = pickle.loads(data)
    except Exception as error:  # an untrusted pickle can raise anything
        raise MemlensError(f"cannot read pickled classifier {old}: {error}") from None
    estimator = payload.get("classifier") if isinstance(payload, dict) else None
    try:
        classifier = LinearClassifier.from_sklearn(estimator)
    except (AttributeError, TypeError, ValueError):
        raise MemlensError(f"{old} is not a pickled memlens labeler classifier") from None
    return classifier.save(new, str(payload.get("ontology_sha256")))
