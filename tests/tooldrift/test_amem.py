"""A-MEM (``a-mem``) through its own note building and agentic search, with the packaged MiniLM
and a stub LLM on memlens' loopback server answering its analysis and evolution prompts."""

import importlib.util
import json

import numpy as np
import pytest

from memlens.errors import MemlensError
from memlens.models.loopback import LoopbackServer
from memlens.tooldrift.frameworks import open_memory

pytestmark = [pytest.mark.embedded, pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("agentic_memory") is None,
                                 reason="a-mem not installed")]

QUERY = "Which laptop should I buy for programming?"
RELATED = "For programming I need a laptop with lots of memory."
UNRELATED = "My grandmother grows tomatoes in her garden every summer."


def stub_llm(seen):
    def responder(request):
        prompt = request["messages"][-1]["content"]
        seen.append(prompt)
        if "structured analysis" in prompt:
            content = prompt.rsplit("Content for analysis:", 1)[-1]
            word = "computing" if "laptop" in content else "gardening"
            return json.dumps({"keywords": [word, "habit", "note"],
                               "context": f"A note about {word}.", "tags": [word, "personal"]})
        return json.dumps({"should_evolve": False, "actions": [], "suggested_connections": [],
                           "tags_to_update": [], "new_context_neighborhood": [],
                           "new_tags_neighborhood": []})
    return responder


def test_amem_needs_an_llm(tmp_path):
    with pytest.raises(MemlensError, match="needs|--framework-llm openai:MODEL@BASE_URL"):
        open_memory("amem", tmp_path)


def test_amem_builds_notes_with_its_llm_and_searches(tmp_path):
    from memlens.ontology.embedding import CachedEncoder

    seen = []
    with LoopbackServer(responder=stub_llm(seen)) as server:
        memory = open_memory("amem", tmp_path, llm=f"openai:stub@{server.base_url}", top_k=1)
        client = memory.client
        client.add([{"role": "user", "content": UNRELATED},
                    {"role": "assistant", "content": "Noted."},
                    {"role": "user", "content": RELATED}], user_id="u1")
        # A-MEM's own LLM steps ran: two analyses, one evolution (the store was not empty)
        assert sum("structured analysis" in p for p in seen) == 2
        assert sum("memory evolution agent" in p for p in seen) == 1
        assert client.analysis_failures == 0
        stored = client._system("u1").retriever.collection.get(include=["metadatas"])
        contexts = sorted(m["context"] for m in stored["metadatas"])
        assert contexts == ["A note about computing.", "A note about gardening."]
        hits = client.search(QUERY, filters={"user_id": "u1"})["results"]
        assert [h["memory"] for h in hits] == [RELATED]
        enhanced = next(m["enhanced_content"] for m in stored["metadatas"]
                        if m["content"] == RELATED)
        assert "keywords: computing, habit, note" in enhanced
        vectors = CachedEncoder().encode([QUERY, enhanced])
        assert hits[0]["score"] == pytest.approx(float(np.dot(*vectors)), abs=1e-5)
        both = client.search(QUERY, filters={"user_id": "u1"}, top_k=2)["results"]
        assert [h["memory"] for h in both] == [RELATED, UNRELATED]
        assert client.search(QUERY, filters={"user_id": "u1"}, top_k=2,
                             threshold=both[1]["score"] + 1e-6)["results"] == hits
        assert len(client.get_all({"user_id": "u1"})["results"]) == 2
        settings = memory.retrieval_settings()
        assert settings["framework"] == "amem" and settings["llm_extraction"] is True
        assert server.base_url.split("//")[1] in settings["llm"]
