"""Each framework's retrieval settings reach the run manifest (stub clients, no framework)."""

from tooldrift_fakes import DATA, drifting_agent

from memlens.models import FakeModel
from memlens.store import RunStore
from memlens.tooldrift.frameworks import FrameworkMemory
from memlens.tooldrift.runner import RunConfig, run_tooldrift


class Client:
    """Mem0's add / search / get_all: stores the user turns, retrieves nothing."""

    def __init__(self):
        self.stored = {}

    def add(self, messages, user_id, infer, metadata):
        self.stored.setdefault(user_id, []).extend(m["content"] for m in messages)

    def get_all(self, filters):
        return {"results": [{"memory": t} for t in self.stored.get(filters["user_id"], [])]}

    def search(self, query, filters, top_k, threshold):
        return {"results": []}


class OwnSettings(Client):
    def retrieval_settings(self):
        return {"framework": "x", "mode": "dense search", "semantic_top_k": 7}


def test_mem0_settings_and_a_clients_own_settings():
    mem0 = FrameworkMemory("mem0", Client(), limit=3, threshold=0.1).retrieval_settings()
    assert mem0["framework"] == "mem0" and mem0["score_cutoff"] == "score >= 0.1"
    assert (mem0["top_k"], mem0["threshold"], mem0["llm_extraction"]) == (3, 0.1, False)
    assert mem0["storage"] == "verbatim user turns"
    own = FrameworkMemory("x", OwnSettings(), infer=True, limit=7, threshold=-1.0)
    assert own.retrieval_settings() == {"framework": "x", "mode": "dense search",
                                        "semantic_top_k": 7, "top_k": 7, "threshold": -1.0,
                                        "llm_extraction": True}


def test_settings_are_in_the_run_manifest(tmp_path):
    memory = FrameworkMemory("x", OwnSettings(), limit=7, threshold=-1.0)
    run_tooldrift(FakeModel(drifting_agent), DATA, tmp_path / "run",
                  RunConfig(k=1, limit=1, setting=2, framework="x", n_bootstrap=20), memory,
                  progress=False)
    with RunStore(tmp_path / "run", read_only=True) as store:
        manifest = store.read_manifest()["tooldrift"]
    config = manifest["config"]
    assert config["retrieval_settings"]["semantic_top_k"] == 7
    assert config["retrieval_settings"]["threshold"] == -1.0
