"""Setting 2 through the adapter registry: the reference arms (full context, naive RAG), LangMem
and Graphiti on embedded Kuzu, each driven through its own storage and retrieval path with a
deterministic encoder whose cosines are computed by hand; one real-MiniLM run end to end."""

import importlib.util
import json

import numpy as np
import pytest

from memlens.errors import MemlensError
from memlens.ontology.embedding import CachedEncoder
from memlens.tooldrift import load_dataset
from memlens.tooldrift.frameworks import (
    DEFAULT_THRESHOLDS,
    FRAMEWORKS,
    REGISTRY,
    FrameworkMemory,
    open_memory,
)
from memlens.tooldrift.reference_arms import FullContextClient, NaiveRagClient

QUERY = "catalog feed merge"
VECTORS = {QUERY: [1.0, 0.0, 0.0],
           "alpha note": [0.8, 0.6, 0.0],        # cosine 0.8 with the query
           "beta tomatoes grow": [0.3, 0.954, 0.0],  # cosine 0.3 (vector normalised)
           "catalog habit": [0.0, 1.0, 0.0]}     # cosine 0, shares the word "catalog"
MEMORIES = ["beta tomatoes grow", "alpha note", "catalog habit"]
COSINE = {"alpha note": 0.8, "beta tomatoes grow": 0.3 / np.hypot(0.3, 0.954),
          "catalog habit": 0.0}


def stub_encoder():
    """Vectors from ``VECTORS``; any other text (node names, 'user') on the third axis. The
    LangGraph store embeds a value as its JSON text: ``{"content": …}`` maps like its content."""
    def vector(text):
        if text.startswith("{"):
            text = json.loads(text).get("content", text)
        return VECTORS.get(text, [0.0, 0.0, 1.0])

    return CachedEncoder(encode_fn=lambda texts: [vector(t) for t in texts])


def turns(texts):
    out = []
    for text in texts:
        out += [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]
    return out


def test_registry_is_the_cli_choice_and_has_the_reference_arms():
    from memlens.cli.main import build_parser

    assert {"mem0", "mempalace", "simplemem", "langmem", "graphiti", "full_context",
            "naive_rag"} <= set(FRAMEWORKS)
    assert [name for name, f in REGISTRY.items() if f.reference] == ["full_context", "naive_rag"]
    assert DEFAULT_THRESHOLDS["graphiti"] == 0.6 and DEFAULT_THRESHOLDS["naive_rag"] == -1.0
    parser = build_parser()
    args = parser.parse_args(["tooldrift", "run", "--model", "fake", "--out", "x",
                              "--setting", "2", "--framework", "naive_rag"])
    assert args.framework == "naive_rag"


def test_full_context_returns_every_memory_in_storage_order():
    client = FullContextClient()
    client.add(turns(MEMORIES), user_id="u")
    hits = client.search(QUERY, filters={"user_id": "u"}, top_k=1, threshold=0.99)["results"]
    assert [h["memory"] for h in hits] == MEMORIES  # top-k and cut-off do not apply
    assert client.get_all({"user_id": "other"}) == {"results": []}
    with pytest.raises(MemlensError, match="no LLM step"):
        client.add(turns(["x"]), user_id="u", infer=True)


def test_naive_rag_is_cosine_top_k():
    client = NaiveRagClient(encoder=stub_encoder())
    client.add(turns(MEMORIES), user_id="u")
    hits = client.search(QUERY, filters={"user_id": "u"}, top_k=2)["results"]
    assert [h["memory"] for h in hits] == ["alpha note", "beta tomatoes grow"]
    assert [h["score"] for h in hits] == pytest.approx([0.8, COSINE["beta tomatoes grow"]],
                                                       abs=1e-6)
    cut = client.search(QUERY, filters={"user_id": "u"}, top_k=3, threshold=0.5)["results"]
    assert [h["memory"] for h in cut] == ["alpha note"]


def test_memory_source_over_naive_rag_records_biased_hits():
    data = load_dataset()
    entry = data.entries["speed_impatience/ecommerce/scenario_1"]
    vectors = {entry.user_prompt: [1.0, 0.0]}
    vectors.update({line: [1.0, 0.1] for line in entry.biased_user_memory[:1]})
    encoder = CachedEncoder(encode_fn=lambda texts: [vectors.get(t, [0.0, 1.0]) for t in texts])
    memory = FrameworkMemory("naive_rag", NaiveRagClient(encoder=encoder), limit=1, threshold=-1)
    lines = memory.memories(entry, "biased")
    assert lines == [entry.base_user_memory, entry.biased_user_memory[0]]
    assert [(r["rank"], r["source"]) for r in memory.records] == [(0, "biased")]
    assert memory.records[0]["score"] == pytest.approx(1 / np.hypot(1, 0.1), abs=1e-6)
    assert memory.retrieval_settings()["framework"] == "naive_rag"


def test_verbatim_only_systems_refuse_an_extraction_llm(tmp_path):
    for name in ("full_context", "naive_rag"):
        with pytest.raises(MemlensError, match="verbatim storage only"):
            open_memory(name, tmp_path / name, llm="openai:m@http://127.0.0.1:9/v1")


@pytest.mark.skipif(importlib.util.find_spec("langmem") is None, reason="langmem not installed")
def test_langmem_tools_store_and_search(monkeypatch):
    import langmem.knowledge.tools as tools

    from memlens.tooldrift.langmem_adapter import NAMESPACE, LangMemClient

    client = LangMemClient(encoder=stub_encoder(), dims=3, top_k=2)
    client.add(turns(MEMORIES), user_id="u")
    stored = client.store.search((NAMESPACE, "u"), limit=10)
    assert sorted(item.value["content"] for item in stored) == sorted(MEMORIES)  # user turns only
    assert tools.create_search_memory_tool is client._search_tool  # LangMem's own tool
    hits = client.search(QUERY, filters={"user_id": "u"})["results"]
    assert [h["memory"] for h in hits] == ["alpha note", "beta tomatoes grow"]
    assert [h["score"] for h in hits] == pytest.approx([0.8, COSINE["beta tomatoes grow"]],
                                                       abs=1e-5)
    everything = client.search(QUERY, filters={"user_id": "u"}, top_k=3)["results"]
    assert everything[-1] == {"memory": "catalog habit", "score": pytest.approx(0.0, abs=1e-6)}
    assert client.search(QUERY, filters={"user_id": "u"}, top_k=3,
                         threshold=0.5)["results"] == hits[:1]
    assert len(client.get_all({"user_id": "u"})["results"]) == 3
    with pytest.raises(MemlensError, match="not wired"):
        client.add(turns(["x"]), user_id="u", infer=True)


@pytest.mark.skipif(importlib.util.find_spec("graphiti_core") is None
                    or importlib.util.find_spec("kuzu") is None,
                    reason="graphiti-core[kuzu] not installed")
def test_graphiti_hybrid_search_on_kuzu(tmp_path):
    from memlens.tooldrift.graphiti_adapter import GraphitiClient

    client = GraphitiClient(tmp_path, encoder=stub_encoder(), top_k=5)
    try:
        assert client.get_all({"user_id": "u"}) == {"results": []}
        client.add(turns(MEMORIES), user_id="u")
        assert sorted(r["memory"] for r in client.get_all({"user_id": "u"})["results"]) \
            == sorted(MEMORIES)
        hits = {h["memory"]: h["score"] for h in
                client.search(QUERY, filters={"user_id": "u"})["results"]}
        # cosine 0.8 > Graphiti's 0.6; "catalog habit" by BM25 alone (cosine 0); 0.3 neither
        assert set(hits) == {"alpha note", "catalog habit"}
        assert hits["alpha note"] == pytest.approx(0.8, abs=1e-6)
        assert hits["catalog habit"] == pytest.approx(0.0, abs=1e-6)
        low = client.search(QUERY, filters={"user_id": "u"}, threshold=0.2)["results"]
        assert {h["memory"] for h in low} == set(MEMORIES)
        assert client.search(QUERY, filters={"user_id": "other"})["results"] == []
        assert client.retrieval_settings()["score_cutoff"].startswith("cosine > 0.6")
    finally:
        client.close()
    reopened = GraphitiClient(tmp_path, encoder=stub_encoder())  # indexes exist: no error
    try:
        assert len(reopened.get_all({"user_id": "u"})["results"]) == 3
    finally:
        reopened.close()


@pytest.mark.slow
@pytest.mark.embedded
def test_naive_rag_run_end_to_end_with_minilm(tmp_path):
    from memlens.models import FakeModel
    from memlens.models.fake import tool_reply
    from memlens.ontology.embedding import _load_sentence_transformer
    from memlens.tooldrift.runner import RunConfig, run_tooldrift

    data = load_dataset()
    entry = data.entries[sorted(data.rubrics)[0]]
    memory = open_memory("naive_rag", tmp_path / "memory", top_k=1)
    seen = []

    def agent(messages, params):
        seen.append(messages[0]["content"])
        return tool_reply(entry.tool_name, json.dumps({}))

    summary = run_tooldrift(FakeModel(agent), data, tmp_path / "run",
                            RunConfig(k=1, limit=1, setting=2, framework="naive_rag",
                                      n_bootstrap=50), memory, progress=False)
    summary = summary.to_dict()  # as tooldrift.json holds it
    hit = next(r for r in memory.records if r["condition"] == "biased")
    model = _load_sentence_transformer()
    query, *lines = model.encode([entry.user_prompt, *entry.biased_user_memory],
                                 normalize_embeddings=True)
    cosines = [float(query @ line) for line in lines]
    assert hit["text"] == entry.biased_user_memory[int(np.argmax(cosines))]
    assert hit["score"] == pytest.approx(max(cosines), abs=1e-5)
    assert any(hit["text"] in prompt for prompt in seen)
    assert summary["retrieval"]["biased"]["biased"]["k"] == 1
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text()) \
        if (tmp_path / "run" / "manifest.json").exists() else None
    assert manifest is None or "naive_rag" in json.dumps(manifest)
