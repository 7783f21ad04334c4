"""SimpleMem through its own retrieval path (``HybridRetriever.retrieve``), with the packaged
MiniLM; its LLM extraction and planning against a stub LLM on memlens' loopback server."""

import importlib.util
import json

import pytest

from memlens.errors import MemlensError
from memlens.models.loopback import LoopbackServer
from memlens.tooldrift.frameworks import open_memory

pytestmark = [pytest.mark.embedded,
              pytest.mark.skipif(importlib.util.find_spec("simplemem") is None,
                                 reason="simplemem not installed")]

QUERY = "Which laptop should I buy for programming?"
RELATED = ["I write code all day and want a laptop with a great keyboard for programming.",
           "For programming I need a laptop with lots of memory."]
UNRELATED = "My grandmother grows tomatoes in her garden every summer."


@pytest.fixture
def retrieve_calls(monkeypatch):
    """Count calls of SimpleMem's own public retrieval method (the real one still runs)."""
    from simplemem.core.hybrid_retriever import HybridRetriever

    calls = []
    real = HybridRetriever.retrieve

    def spy(self, query, *args, **kwargs):
        calls.append(query)
        return real(self, query, *args, **kwargs)

    monkeypatch.setattr(HybridRetriever, "retrieve", spy)
    return calls


def test_unrelated_memory_is_not_retrieved(tmp_path, retrieve_calls, capsys):
    from simplemem.database.vector_store import VectorStore

    from memlens.tooldrift.simplemem_adapter import SimpleMemClient

    client = SimpleMemClient(tmp_path, top_k=2)
    client.add([{"role": "user", "content": text} for text in [UNRELATED, *RELATED]],
               user_id="u1")
    hits = client.search(QUERY, filters={"user_id": "u1"}, top_k=2)["results"]
    assert retrieve_calls == [QUERY]  # SimpleMem's retrieve, not the vector table
    assert sorted(h["memory"] for h in hits) == sorted(RELATED)
    assert UNRELATED not in [h["memory"] for h in hits]
    assert hits[0]["score"] >= hits[1]["score"]
    # the unrelated memory is stored, ranked below both, and SimpleMem has no cut-off of its
    # own: with room for three it comes back too
    everything = client.search(QUERY, filters={"user_id": "u1"}, top_k=3)["results"]
    assert [h["memory"] for h in everything][-1] == UNRELATED
    assert everything[-1]["score"] < min(h["score"] for h in hits)
    # scores are the cosines of MiniLM vectors
    store = client._user("u1")["store"]
    assert isinstance(store, VectorStore)
    import numpy as np

    query = np.asarray(client._embedder.encode_single(QUERY, is_query=True), float)
    first = client._embedder.encode_single(hits[0]["memory"])
    expected = float(query @ first / (np.linalg.norm(query) * np.linalg.norm(first)))
    assert hits[0]["score"] == pytest.approx(expected, abs=1e-5)
    assert "Added 3 memory entries" not in capsys.readouterr().out  # SimpleMem's prints: log
    assert "Added 3 memory entries" in (tmp_path / "simplemem.log").read_text()
    settings = client.retrieval_settings()
    assert settings["semantic_top_k"] == 2 and settings["planning"] is False
    assert settings["mode"] == "dense search" and settings["score_cutoff"] is None


def stub_llm(request):
    """SimpleMem's three prompts: extraction (a JSON array of entries), the planner's analysis
    and its targeted queries."""
    system = request["messages"][0]["content"]
    prompt = request["messages"][-1]["content"]
    if "information extraction" in system:
        said = [line for line in prompt.splitlines() if "user:" in line]
        assert said, "the dialogue must reach the extraction prompt"
        return json.dumps([{"lossless_restatement": "EXTRACTED: the user programs on a laptop "
                            "all day and values the keyboard.", "keywords": ["laptop"],
                            "persons": [], "entities": [], "topic": "laptop"},
                           {"lossless_restatement": "EXTRACTED: the user's grandmother grows "
                            "tomatoes.", "keywords": ["tomatoes"], "persons": [],
                            "entities": [], "topic": "garden"}])
    if "requirement analyst" in system:
        return json.dumps({"question_type": "recommendation", "key_entities": ["laptop"],
                           "required_info": [{"info_type": "preference",
                                              "description": "laptop needs",
                                              "priority": "high"}],
                           "relationships": [], "minimal_queries_needed": 1})
    if "query generation" in system:
        return json.dumps({"reasoning": "one query", "queries": ["laptop keyboard programming"]})
    return "{}"


def test_llm_extraction_and_planning_through_framework_llm(tmp_path, retrieve_calls):
    with LoopbackServer(responder=stub_llm) as server:
        memory = open_memory("simplemem", tmp_path, llm=f"openai:stub@{server.base_url}",
                             top_k=1)
        client = memory.client
        client.add([{"role": "user", "content": RELATED[0]},
                    {"role": "assistant", "content": "Noted."},
                    {"role": "user", "content": UNRELATED}], user_id="u2", infer=True)
        stored = [r["memory"] for r in client.get_all(filters={"user_id": "u2"})["results"]]
        hits = client.search(QUERY, filters={"user_id": "u2"}, top_k=1)["results"]
        systems = [r.body["messages"][0]["content"] for r in server.requests]
    assert memory.infer is True
    assert all(text.startswith("EXTRACTED:") for text in stored) and len(stored) == 2
    assert [h["memory"] for h in hits] == [stored[0]]  # planner's query, top 1
    assert retrieve_calls == [QUERY]
    assert sum("information extraction" in s for s in systems) == 1
    assert sum("requirement analyst" in s for s in systems) == 1
    assert sum("query generation" in s for s in systems) == 1
    settings = memory.retrieval_settings()
    assert settings["planning"] is True and settings["llm_extraction"] is True
    assert settings["storage"].startswith("llm extraction")


def test_framework_llm_must_be_an_openai_endpoint(tmp_path):
    with pytest.raises(MemlensError, match="SimpleMem takes an OpenAI-compatible model"):
        open_memory("simplemem", tmp_path, llm="anthropic:claude")
    from memlens.tooldrift.simplemem_adapter import SimpleMemClient

    with pytest.raises(MemlensError, match="LLM extraction needs --framework-llm"):
        SimpleMemClient(tmp_path).add([{"role": "user", "content": "x"}], "u", infer=True)
