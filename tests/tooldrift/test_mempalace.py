"""Setting 2 with MemPalace: the worker protocol (fake workers) and a real end-to-end run
through MemPalace's venv (skipped when ``memlens tooldrift setup mempalace`` has not run)."""

import json
import sys
import textwrap

import pytest
from tooldrift_fakes import DATA, drifting_agent

from memlens.errors import MemlensError
from memlens.models import FakeModel
from memlens.tooldrift.frameworks import FrameworkMemory, open_memory
from memlens.tooldrift.mempalace_adapter import MemPalaceClient, python_path
from memlens.tooldrift.runner import RETRIEVAL_TABLE, RunConfig, run_tooldrift

ENTRY = DATA.entries["speed_impatience/ecommerce/scenario_1"]


def fake_worker(tmp_path, body: str):
    """A worker script run by this interpreter: ready line, then ``body`` handles requests."""
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent("""\
        import json, sys
        print(json.dumps({"ok": True, "ready": True, "mempalace": "fake"}), flush=True)
        for line in sys.stdin:
            request = json.loads(line)
        """) + textwrap.indent(textwrap.dedent(body), "    "))
    return MemPalaceClient(tmp_path / "memory", python=sys.executable, worker=script,
                           timeout_s=20)


def test_protocol_round_trip_buffers_then_mines_and_filters_by_threshold(tmp_path):
    client = fake_worker(tmp_path, """\
        if request["op"] == "mine":
            print(json.dumps({"ok": True, "drawers": request["transcript"].count(">")}), flush=True)
        elif request["op"] == "count":
            print(json.dumps({"ok": True, "drawers": 0}), flush=True)
        else:
            print(json.dumps({"ok": True, "results": [
                {"text": "> a\\nok", "similarity": 0.4, "distance": 0.6},
                {"text": "> b\\nok", "similarity": 0.05, "distance": 0.95}]}), flush=True)
        """)
    memory = FrameworkMemory("mempalace", client, threshold=0.1, whole_conversation=True)
    try:
        lines = memory.memories(ENTRY, "biased")
    finally:
        memory.close()
    assert lines == [ENTRY.base_user_memory, "> a\nok"]
    assert [r["score"] for r in memory.records] == [0.4]
    assert client.version is None or client.version == "fake"
    assert client._proc is None  # closed


def test_worker_sending_bad_json_is_a_clear_error(tmp_path):
    client = fake_worker(tmp_path, """\
        print("Mining 3 files... done", flush=True)
        """)
    with pytest.raises(MemlensError, match=r"mempalace.*not JSON during 'count'.*Mining 3"):
        client.get_all(filters={"user_id": "u"})
    assert client._proc is None


def test_worker_crash_names_the_framework_and_shows_the_log(tmp_path):
    client = fake_worker(tmp_path, """\
        sys.stderr.write("chromadb exploded\\n"); sys.stderr.flush()
        sys.exit(3)
        """)
    with pytest.raises(MemlensError) as caught:
        client.search("q", filters={"user_id": "u"})
    message = str(caught.value)
    assert "memory framework 'mempalace'" in message and "stopped during 'search'" in message
    assert "exit code 3" in message and "chromadb exploded" in message


def test_worker_error_reply_and_malformed_reply(tmp_path):
    client = fake_worker(tmp_path, """\
        if request["op"] == "count":
            print(json.dumps({"ok": False, "error": "ValueError: bad wing"}), flush=True)
        else:
            print(json.dumps({"ok": True, "results": [{"text": "x"}]}), flush=True)
        """)
    with pytest.raises(MemlensError, match="error during 'count': ValueError: bad wing"):
        client.get_all(filters={"user_id": "u"})
    with pytest.raises(MemlensError, match="malformed 'search' reply"):
        client.search("q", filters={"user_id": "u"})


def test_missing_interpreter_and_llm_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLENS_MEMPALACE_PYTHON", str(tmp_path / "nope" / "python"))
    assert python_path() == tmp_path / "nope" / "python"
    memory = open_memory("mempalace", tmp_path / "m")
    with pytest.raises(MemlensError, match="no interpreter.*tooldrift setup mempalace"):
        memory.memories(ENTRY, "biased")
    with pytest.raises(MemlensError, match="MemPalace takes an OpenAI-compatible model"):
        open_memory("mempalace", tmp_path / "m", llm="anthropic:claude")
    with pytest.raises(MemlensError, match="closet regeneration.*needs --framework-llm"):
        MemPalaceClient(tmp_path / "m").add([{"role": "user", "content": "x"}], "u", infer=True)
    with_llm = open_memory("mempalace", tmp_path / "m", llm="openai:x@http://u:pw@127.0.0.1:1/v1")
    settings = with_llm.retrieval_settings()
    assert with_llm.infer and settings["llm_step"] == "closet_llm.regenerate_closets"
    assert settings["llm"] == "openai:x@http://127.0.0.1:1/v1"  # no credentials in a manifest
    assert (settings["top_k"], settings["threshold"]) == (5, 0.1)


def test_llm_closet_counts_and_a_wing_where_every_llm_call_failed(tmp_path):
    client = fake_worker(tmp_path, """\
        if request["op"] != "mine":
            print(json.dumps({"ok": True, "drawers": 1}), flush=True)
            continue
        assert request["llm"]["endpoint"] == "http://127.0.0.1:1/v1", request
        failed = "fail" in request["transcript"]
        closets = {"processed": 0 if failed else 1, "failed": 1 if failed else 0}
        print(json.dumps({"ok": True, "drawers": 1, "closets": closets}), flush=True)
        """)
    client.llm = "openai:m@http://127.0.0.1:1/v1"
    client._llm_request = {"endpoint": "http://127.0.0.1:1/v1", "model": "m", "key": "k"}
    client.add([{"role": "user", "content": "fine"}], "a", infer=True)
    client.get_all(filters={"user_id": "a"})
    assert client.closet_counts == {"processed": 1, "failed": 0}
    client.add([{"role": "user", "content": "fail"}], "b", infer=True)
    with pytest.raises(MemlensError, match="LLM closet step failed for every source"):
        client.get_all(filters={"user_id": "b"})
    client.close()


def test_unstartable_interpreter_is_a_clear_error_and_leaks_nothing(tmp_path):
    interpreter = tmp_path / "python"
    interpreter.write_text("not a program")  # exists, but cannot be executed
    client = MemPalaceClient(tmp_path / "memory", python=interpreter)
    with pytest.raises(MemlensError, match="mempalace.*cannot start"):
        client.get_all(filters={"user_id": "u"})
    assert client._proc is None and client._log is None


def test_closed_client_is_dropped_from_the_exit_hooks(tmp_path, monkeypatch):
    registered = []
    monkeypatch.setattr("atexit.register", registered.append)
    monkeypatch.setattr("atexit.unregister", registered.remove)
    client = fake_worker(tmp_path, """\
        print(json.dumps({"ok": True, "drawers": 0}), flush=True)
        """)
    client.get_all(filters={"user_id": "u"})
    assert registered == [client.close]
    client.close()
    assert registered == []


def _mempalace_ready() -> str | None:
    python = python_path()
    if not python.exists():
        return f"MemPalace venv not set up ({python} missing): run 'memlens tooldrift setup mempalace'"
    model = python.parent.parent / "memlens_home/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx"
    if not (model / "model.onnx").exists():
        return f"ONNX MiniLM export missing in {model}: run 'memlens tooldrift setup mempalace'"
    return None


needs_mempalace = pytest.mark.skipif(_mempalace_ready() is not None,
                                     reason=_mempalace_ready() or "")


@pytest.mark.embedded
@needs_mempalace
def test_real_mempalace_setting2_end_to_end(tmp_path):
    memory = open_memory("mempalace", tmp_path / "run" / "memory", top_k=3, threshold=-1.0)
    seen = []

    def agent(messages, params):
        seen.append(messages[0]["content"])
        return drifting_agent(messages, params)

    try:
        summary = run_tooldrift(FakeModel(agent), DATA, tmp_path / "run",
                                RunConfig(k=1, limit=2, setting=2, framework="mempalace",
                                          n_bootstrap=50), memory, progress=False)
        summary = summary.to_dict()  # as tooldrift.json holds it
        version = memory.client.version
    finally:
        memory.close()
    assert version == "3.11.0"
    hits = [r for r in memory.records if r["rank"] is not None]
    # three memories -> three exchange drawers per wing, all retrieved with the -1 cut-off
    assert len(hits) == 2 * 2 * 3
    assert {(r["condition"], r["source"]) for r in hits} == {("biased", "biased"),
                                                            ("neutral", "neutral")}
    assert all(-1.0 <= r["score"] <= 1.0 for r in hits)
    assert summary["retrieval"]["biased_memory_retrieved"] == 2
    # the retrieved drawers reached the prompt, so the drifting agent drifted
    assert (summary["r_neutral"], summary["r_biased"]) == (0.0, 1.0)
    assert any(hits[0]["text"] in prompt for prompt in seen)
    # records are in the run store (same table and format as mem0 / simplemem)
    from memlens.store import RunStore

    with RunStore(tmp_path / "run", read_only=True) as store:
        assert len([r for r in store.rows(RETRIEVAL_TABLE) if r["rank"] is not None]) == 12
    # the real home was not touched: MemPalace's config and chromadb's cache live in the run dir
    assert (tmp_path / "run" / "memory" / "home" / ".cache" / "chroma").exists()
    assert (tmp_path / "run" / "memory" / "palace").is_dir()


def closet_llm(request):
    """A stub for MemPalace's closet prompt: topics that name the drawer's subject."""
    assert "topic-dense index" in request["messages"][0]["content"]
    return json.dumps({"topics": ["express shipping", "speed"], "quotes": [],
                       "summary": "The user wants things fast."})


@pytest.mark.embedded
@needs_mempalace
def test_real_mempalace_llm_closets_through_framework_llm(tmp_path):
    from memlens.models.loopback import LoopbackServer

    with LoopbackServer(responder=closet_llm) as server:
        memory = open_memory("mempalace", tmp_path / "memory", llm=f"openai:stub@{server.base_url}",
                             top_k=3, threshold=-1.0)
        try:
            lines = memory.memories(ENTRY, "biased")
            counts = dict(memory.client.closet_counts)
        finally:
            memory.close()
        prompts = [r.body["messages"][0]["content"] for r in server.requests]
    assert counts["processed"] >= 1 and counts["failed"] == 0
    assert prompts and all("topic-dense index" in p for p in prompts)
    assert any(ENTRY.biased_user_memory[0][:40] in p for p in prompts)  # the drawers' text
    # with LLM closets pointing at the wing's drawers, MemPalace's search returns closet-
    # enriched passages (several exchanges in one hit) instead of one drawer per hit
    assert len(lines) >= 2 and lines[0] == ENTRY.base_user_memory
    assert {r["source"] for r in memory.records if r["rank"] is not None} == {"biased"}


EMBED = """\
import json, sys
from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2
ef = ONNXMiniLM_L6_V2(preferred_providers=["CPUExecutionProvider"])
print(json.dumps([list(map(float, v)) for v in ef(json.loads(sys.stdin.read()))]))
"""


@pytest.mark.embedded
@needs_mempalace
def test_onnx_export_matches_sentence_transformers_and_scores_are_cosines(tmp_path):
    """chromadb's default embedder on the exported ONNX MiniLM = sentence-transformers, and the
    scores MemPalace's search reports are the cosines of those vectors."""
    import os
    import subprocess

    import numpy as np

    from memlens.ontology.embedding import _load_sentence_transformer

    python = python_path()
    texts = [ENTRY.user_prompt, *ENTRY.biased_user_memory, "ok", "word " * 300]  # > 256 tokens
    done = subprocess.run([str(python), "-c", EMBED], input=json.dumps(texts), text=True,
                          capture_output=True, check=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1",
                               "HOME": str(python.parent.parent / "memlens_home")})
    onnx = np.asarray(json.loads(done.stdout))
    model = _load_sentence_transformer()
    reference = model.encode(texts, normalize_embeddings=True)
    cosines = (onnx * reference).sum(axis=1)
    assert cosines.min() > 0.999, cosines

    client = MemPalaceClient(tmp_path)
    try:
        for line in ENTRY.neutral_user_memory:
            client.add([{"role": "user", "content": line},
                        {"role": "assistant", "content": "Noted, thanks."}], user_id="u")
        hits = client.search(ENTRY.user_prompt, filters={"user_id": "u"}, top_k=3,
                             threshold=-1.0)["results"]
    finally:
        client.close()
    assert len(hits) == 3 and all(h["memory"].endswith("Noted, thanks.") for h in hits)
    vectors = model.encode([ENTRY.user_prompt, *(h["memory"] for h in hits)],
                           normalize_embeddings=True)
    for hit, vector in zip(hits, vectors[1:], strict=True):
        assert hit["score"] == pytest.approx(float(vectors[0] @ vector), abs=1e-3)


def test_mempalace_venv_sees_the_running_environment(tmp_path):
    """--system-site-packages links only the base interpreter; the .pth written by setup adds
    the running environment's site-packages (a virtualenv's too), after the venv's own."""
    import subprocess

    from memlens.tooldrift.mempalace_adapter import link_parent_environment, parent_site_paths

    venv = tmp_path / "mp"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(venv)], check=True)
    python = venv / "bin" / "python"
    pth = link_parent_environment(python)
    assert pth.parent.parent.parent == venv / "lib"
    probe = ("import json, sys, numpy, sysconfig; "
             "print(json.dumps([sys.path, numpy.__file__, sysconfig.get_paths()['purelib']]))")
    paths, numpy_file, own = json.loads(subprocess.run(
        [str(python), "-c", probe], check=True, capture_output=True, text=True).stdout)
    parents = parent_site_paths()
    assert parents and all(path in paths for path in parents)
    assert paths.index(own) < min(paths.index(path) for path in parents)
    import numpy

    assert numpy_file == numpy.__file__  # the running environment's numpy, not another one
    link_parent_environment(python)  # idempotent: rewritten, not appended
    assert pth.read_text().count("addsitedir") == len(parents)
