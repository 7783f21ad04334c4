"""Setting 2: the framework memory source with a stub client (unit) and real Mem0 (slow)."""

import importlib.util
import json

import pytest

from memlens.models import FakeModel
from memlens.models.fake import tool_reply
from memlens.tooldrift import load_dataset
from memlens.tooldrift.frameworks import FrameworkMemory, open_memory, retrieval_summary, source_of
from memlens.tooldrift.runner import RunConfig, run_tooldrift

DATA = load_dataset()
ENTRY = DATA.entries["speed_impatience/ecommerce/scenario_1"]


class StubClient:
    """Mem0's add / search / get_all, scoring by shared words (deterministic)."""

    def __init__(self):
        self.stored: dict[str, list[str]] = {}
        self.adds = 0

    def add(self, messages, user_id, infer, metadata):
        self.adds += 1
        self.stored.setdefault(user_id, []).extend(m["content"] for m in messages)

    def get_all(self, filters):
        return {"results": [{"memory": t} for t in self.stored.get(filters["user_id"], [])]}

    def search(self, query, filters, top_k, threshold):
        words = set(query.lower().split())
        scored = [{"memory": t, "score": len(words & set(t.lower().split())) / len(words)}
                  for t in self.stored.get(filters["user_id"], [])]
        scored = [s for s in scored if s["score"] >= threshold]
        return {"results": sorted(scored, key=lambda s: -s["score"])[:top_k]}


def test_memory_source_stores_user_turns_and_records_sources():
    client = StubClient()
    memory = FrameworkMemory("stub", client, limit=2, threshold=0.0)
    assert memory.memories(ENTRY, "base") == [ENTRY.base_user_memory]
    lines = memory.memories(ENTRY, "biased")
    assert lines[0] == ENTRY.base_user_memory and len(lines) == 3
    # verbatim storage: the three biased memories, no assistant acknowledgements
    assert client.stored[f"{ENTRY.id}|biased"] == list(ENTRY.biased_user_memory)
    assert {r["source"] for r in memory.records} == {"biased"}
    assert [r["rank"] for r in memory.records] == [0, 1]
    # a second query (a resumed run) finds the memories stored and does not add them again
    memory.memories(ENTRY, "biased")
    assert client.adds == 3


def test_nothing_retrieved_is_recorded():
    memory = FrameworkMemory("stub", StubClient(), threshold=2.0)
    assert memory.memories(ENTRY, "neutral") == [ENTRY.base_user_memory]
    assert memory.records == [{"id": f"{ENTRY.id}|neutral|none", "entry_id": ENTRY.id,
                               "condition": "neutral", "framework": "stub", "rank": None,
                               "text": None, "score": None, "source": None}]


def test_source_attribution_and_summary():
    assert source_of(ENTRY.biased_user_memory[1], ENTRY) == "biased"
    assert source_of(ENTRY.neutral_user_memory[0], ENTRY) == "neutral"
    assert source_of("something else", ENTRY) == "unattributed"
    records = [{"entry_id": "a", "condition": "biased", "source": "biased", "score": 0.5, "rank": 0},
               {"entry_id": "a", "condition": "biased", "source": "base", "score": 0.1, "rank": 1},
               {"entry_id": "b", "condition": "biased", "source": None, "score": None, "rank": None},
               {"entry_id": "b", "condition": "neutral", "source": "neutral", "score": 0.3, "rank": 0}]
    assert retrieval_summary(records) == {"biased_queries": 2, "biased_memory_retrieved": 1,
                                          "biased_retrieval_rate": 0.5, "mean_score": 0.3,
                                          "items_retrieved": 3}


def test_unknown_framework_refused_clearly(tmp_path):
    from memlens.errors import MemlensError

    with pytest.raises(MemlensError, match="unknown memory framework"):
        open_memory("letta", tmp_path)


@pytest.mark.slow
@pytest.mark.embedded
@pytest.mark.skipif(importlib.util.find_spec("mem0") is None, reason="mem0ai not installed")
def test_real_mem0_run_end_to_end(tmp_path):
    memory = open_memory("mem0", tmp_path / "memory", threshold=0.0, top_k=3)
    seen = []

    def agent(messages, params):
        seen.append(messages[0]["content"])
        return tool_reply(ENTRY.tool_name, json.dumps({"feed_id": "n", "validation_mode": "quick"}))

    summary = run_tooldrift(FakeModel(agent), DATA, tmp_path / "run",
                            RunConfig(k=1, limit=1, setting=2, framework="mem0", n_bootstrap=50),
                            memory, progress=False)
    summary = summary.to_dict()  # as tooldrift.json holds it
    first = DATA.entries[sorted(DATA.rubrics)[0]]
    biased_hits = [r for r in memory.records if r["condition"] == "biased" and r["rank"] is not None]
    assert biased_hits and all(r["source"] == "biased" for r in biased_hits)
    assert all(-1.0 <= r["score"] <= 1.0 for r in biased_hits)
    assert any(r["text"] in prompt for r in biased_hits for prompt in seen)  # injected
    assert summary["retrieval"]["biased_queries"] == 1
    assert summary["retrieval"]["biased"]["biased"] == {"k": 1, "n": 1, "rate": 1.0,
                                                        "ci95": pytest.approx([0.2065, 1.0],
                                                                              abs=1e-4)}
    assert first.id == summary["scenarios"][0]["entry_id"]


@pytest.mark.slow
@pytest.mark.embedded
@pytest.mark.skipif(importlib.util.find_spec("simplemem") is None, reason="simplemem not installed")
def test_real_simplemem_scores_are_minilm_cosines(tmp_path):
    from memlens.ontology.embedding import _load_sentence_transformer

    memory = open_memory("simplemem", tmp_path, top_k=2)
    lines = memory.memories(ENTRY, "neutral")
    hits = [r for r in memory.records if r["rank"] is not None]
    assert len(hits) == 2 and lines[1:] == [h["text"] for h in hits]
    assert {h["source"] for h in hits} == {"neutral"} and hits[0]["score"] >= hits[1]["score"]
    model = _load_sentence_transformer()
    query, best = model.encode([ENTRY.user_prompt, hits[0]["text"]], normalize_embeddings=True)
    assert hits[0]["score"] == pytest.approx(float(query @ best), abs=1e-5)
