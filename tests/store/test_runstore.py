import json
import sqlite3

import pytest

from memlens.errors import MemlensError
from memlens.models import ChatRequest, ChatResponse, GenerationParams, ToolCall
from memlens.store import DB_NAME, RunStore, file_sha256

ASK = ChatRequest(({"role": "user", "content": "Is 7 prime?"},), GenerationParams(max_tokens=8),
                  sample_index=2, tag="q7/0")


def test_database_is_wal_with_normal_sync(tmp_path):
    with RunStore(tmp_path / "run") as store:
        assert (tmp_path / "run" / DB_NAME).is_file()
        assert store._query("PRAGMA journal_mode")[0][0] == "wal"
        assert store._query("PRAGMA synchronous")[0][0] == 1  # NORMAL


def test_manifest_merges_and_records_version(tmp_path):
    with RunStore(tmp_path) as store:
        store.write_manifest({"seed": 3, "models": ["fake"]})
        store.write_manifest({"seed": 4, "config": {"n_samples": 2}})
        manifest = store.read_manifest()
    assert manifest["seed"] == 4
    assert manifest["models"] == ["fake"]
    assert manifest["config"] == {"n_samples": 2}
    assert manifest["memlens_version"] == "0.1.0"


def test_manifest_never_stores_secrets(tmp_path):
    with RunStore(tmp_path) as store:
        store.write_manifest({"backend": {"api_key": "sk-live-123456", "base_url": "u"}})
        assert store.read_manifest()["backend"] == {"api_key": "<redacted>", "base_url": "u"}
    assert b"sk-live-123456" not in (tmp_path / DB_NAME).read_bytes()


def test_response_roundtrip_and_columns(tmp_path):
    reply = ChatResponse("yes", prompt_tokens=5, completion_tokens=1, latency_s=0.25,
                         tool_calls=[ToolCall("check", '{"n": 7}')])
    key = ASK.cache_key("fake")
    with RunStore(tmp_path) as store:
        assert store.get_response(key) is None
        store.put_response(key, ASK, reply, model_id="fake")
        assert store.get_response(key) == reply
        record = store.records("responses")[0]
    assert record["model_id"] == "fake" and record["tag"] == "q7/0"
    assert record["sample_index"] == 2
    assert json.loads(record["messages"]) == [{"role": "user", "content": "Is 7 prime?"}]
    assert json.loads(record["params"])["max_tokens"] == 8
    assert (record["prompt_tokens"], record["completion_tokens"], record["latency_s"]) == (5, 1, 0.25)
    assert record["created_at"].endswith("+00:00")


def test_failures_accumulate_attempts_and_success_replaces_them(tmp_path):
    key = ASK.cache_key("fake")
    with RunStore(tmp_path) as store:
        store.put_failure(key, ASK, "HTTP 503", attempts=3)
        store.put_failure(key, ASK, "timeout", attempts=2)
        [failure] = store.failures()
        assert (failure["reason"], failure["attempts"]) == ("timeout", 5)
        assert failure["messages"][0]["content"] == "Is 7 prime?"
        assert store.get_response(key) is None  # a failure is not a cache hit
        store.put_response(key, ASK, ChatResponse("ok"))
        assert store.failures() == []


def test_failure_reason_is_scrubbed_of_env_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-abcdef123456")
    with RunStore(tmp_path) as store:
        store.put_failure("k", ASK, "401: bad key sk-test-abcdef123456", attempts=1)
        assert store.failures()[0]["reason"] == "401: bad key <redacted>"


def test_cached_responses_bulk_lookup_beyond_chunk(tmp_path):
    with RunStore(tmp_path) as store:
        store.put_results([(f"k{i}", ASK, ChatResponse(f"r{i}")) for i in range(1200)])
        found = store.cached_responses([f"k{i}" for i in range(0, 1300, 2)])
        assert len(found) == 600 and found["k1198"].text == "r1198"
        assert store.usage()["responses"] == 1200


def test_stage_tables_upsert_keep_order_and_delete(tmp_path):
    with RunStore(tmp_path) as store:
        store.put_rows("drift", [{"id": 1, "dtw": 0.5}, {"id": 2, "dtw": 0.25}])
        store.put_rows("drift", [{"id": 1, "dtw": 0.75}, {"id": 3, "dtw": 0.0}])
        assert store.rows("drift") == [{"id": 1, "dtw": 0.75}, {"id": 2, "dtw": 0.25},
                                       {"id": 3, "dtw": 0.0}]
        assert store.row_keys("drift") == {"1", "2", "3"}
        store.put_rows("steps", [{"sid": "a", "text": "x"}], key="sid")
        assert store.tables() == ["drift", "steps"]
        store.delete_table("drift")
        assert store.rows("drift") == [] and store.row_keys("drift") == set()


def test_put_rows_is_one_transaction(tmp_path):
    with RunStore(tmp_path) as store:
        with pytest.raises(MemlensError, match="row 1 for table 'drift' has no key field 'id'"):
            store.put_rows("drift", [{"id": 1}, {"name": "no id"}])
        assert store.rows("drift") == []
        with pytest.raises(MemlensError, match="row 0 of table 'drift'"):
            store.put_rows("drift", [{"id": 1, "x": object()}])


def test_numpy_values_are_stored_as_plain_json(tmp_path):
    np = pytest.importorskip("numpy")
    with RunStore(tmp_path) as store:
        store.put_rows("t", [{"id": np.int64(1), "v": np.float32(0.5), "a": np.arange(3),
                              "nan": float("nan")}])
        assert store.rows("t") == [{"id": 1, "v": 0.5, "a": [0, 1, 2], "nan": None}]


@pytest.mark.parametrize("name", ["1abc", "a-b", "x; DROP TABLE responses", "", "é"])
def test_bad_table_names_are_refused(tmp_path, name):
    with RunStore(tmp_path) as store, pytest.raises(MemlensError, match="invalid table name"):
        store.put_rows(name, [{"id": 1}])


def test_builtin_tables_cannot_be_stage_tables(tmp_path):
    with RunStore(tmp_path) as store, pytest.raises(MemlensError, match="built-in table"):
        store.put_rows("responses", [{"id": 1}])


def test_data_survives_reopen(tmp_path):
    with RunStore(tmp_path) as store:
        store.put_rows("labels", [{"id": "a", "symbol": "S1"}])
        store.put_response("k", ASK, ChatResponse("kept"))
    with RunStore(tmp_path) as store:
        assert store.rows("labels") == [{"id": "a", "symbol": "S1"}]
        assert store.get_response("k").text == "kept"


def test_garbage_database_file_is_a_clear_error(tmp_path):
    (tmp_path / DB_NAME).write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(MemlensError, match=f"{DB_NAME} is not a memlens run store"):
        RunStore(tmp_path)
    # the failed open released the lock: a valid store can now be made here
    (tmp_path / DB_NAME).unlink()
    RunStore(tmp_path).close()


def test_newer_schema_is_refused(tmp_path):
    sqlite3.connect(tmp_path / DB_NAME).execute("PRAGMA user_version=99").connection.close()
    with pytest.raises(MemlensError, match="newer memlens"):
        RunStore(tmp_path)


def test_run_dir_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(MemlensError, match="is not a directory"):
        RunStore(tmp_path / "f")


def test_read_only_store(tmp_path):
    with pytest.raises(MemlensError, match="no run store in"):
        RunStore(tmp_path / "missing", read_only=True)
    with RunStore(tmp_path) as writer:
        writer.put_rows("t", [{"id": 1}])
        with RunStore(tmp_path, read_only=True) as reader:  # no lock needed
            assert reader.rows("t") == [{"id": 1}]
            with pytest.raises(MemlensError, match="read-only"):
                reader.put_rows("t", [{"id": 2}])


def test_file_sha256_matches_hashlib(tmp_path):
    import hashlib

    data = bytes(range(256)) * 9000  # > 1 MiB: several chunks
    (tmp_path / "d.bin").write_bytes(data)
    assert file_sha256(tmp_path / "d.bin") == hashlib.sha256(data).hexdigest()
    with pytest.raises(MemlensError, match="cannot hash data file .*nope"):
        file_sha256(tmp_path / "nope")


def test_unusable_run_directory_is_a_clear_error(tmp_path):
    """A run directory that cannot be created (a parent that is a file) is one clear message."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(MemlensError, match="cannot use run directory .*file/run"):
        RunStore(blocker / "run")
