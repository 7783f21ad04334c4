"""The run store refuses damaged or foreign files, reports a full disk clearly without losing
committed rows, and checkpoints its WAL into the main file during a run."""

import sqlite3

import pytest

from memlens.engine import run_requests
from memlens.errors import MemlensError
from memlens.models import ChatRequest, ChatResponse, FakeModel
from memlens.store import DB_NAME, RunStore, StoreWriteError
from memlens.store.runstore import _SCHEMA, APPLICATION_ID, CHECKPOINT_EVERY_COMMITS


def _ask(index: int) -> ChatRequest:
    return ChatRequest(({"role": "user", "content": f"question {index}"},))


def test_empty_store_file_is_refused_not_replaced(tmp_path):
    (tmp_path / DB_NAME).write_bytes(b"")
    for read_only in (False, True):
        with pytest.raises(MemlensError, match=rf"{DB_NAME} is empty \(0 bytes\).*refusing"):
            RunStore(tmp_path, read_only=read_only)
    assert (tmp_path / DB_NAME).stat().st_size == 0  # untouched


def test_non_sqlite_store_file_is_refused(tmp_path):
    (tmp_path / DB_NAME).write_bytes(b"PK\x03\x04 a zip archive, say" * 200)
    with pytest.raises(MemlensError, match=rf"{DB_NAME} is not a memlens run store \(not an "
                                           "SQLite database\\)"):
        RunStore(tmp_path)
    assert (tmp_path / DB_NAME).read_bytes().startswith(b"PK\x03\x04")


def test_foreign_sqlite_file_is_refused(tmp_path):
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute("CREATE TABLE users (name TEXT)")
    conn.commit()
    conn.close()
    for read_only in (False, True):
        with pytest.raises(MemlensError, match=rf"{DB_NAME} is an SQLite database but not a "
                                               "memlens run store .*its tables: users"):
            RunStore(tmp_path, read_only=read_only)
    conn = sqlite3.connect(tmp_path / DB_NAME)
    assert [n for (n,) in conn.execute("SELECT name FROM sqlite_master")] == ["users"]
    conn.close()


def test_new_store_is_marked_and_built_in_one_step(tmp_path):
    with RunStore(tmp_path) as store:
        assert store._query("PRAGMA application_id")[0][0] == APPLICATION_ID == 0x6D6C6E73
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memlens.lock", DB_NAME]


def test_store_of_an_older_memlens_without_marker_still_opens(tmp_path):
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.executescript(_SCHEMA)
    conn.execute("INSERT INTO manifest VALUES ('memlens_version', '\"0.1.0\"')")
    conn.commit()
    conn.close()
    with RunStore(tmp_path, read_only=True) as store:
        assert store.read_manifest()["memlens_version"] == "0.1.0"
    with RunStore(tmp_path) as store:
        assert store.read_manifest()["memlens_version"] == "0.1.0"
        assert store._query("PRAGMA application_id")[0][0] == APPLICATION_ID  # now marked


def test_wal_is_checkpointed_into_the_main_file_during_a_run(tmp_path):
    with RunStore(tmp_path) as store:
        start = (tmp_path / DB_NAME).stat().st_size
        for index in range(CHECKPOINT_EVERY_COMMITS):
            store.put_response(f"k{index}", _ask(index), ChatResponse("x" * 2000))
        # 100 responses of 2 kB: at least 200 kB are in the main file while the store is open
        assert (tmp_path / DB_NAME).stat().st_size > start + 200_000
        with RunStore(tmp_path, read_only=True) as reader:  # a reader keeps the WAL alive
            assert reader.usage()["responses"] == 100
            store.put_response("last", _ask(-1), ChatResponse("y" * 2000))
            store.close()  # TRUNCATE checkpoint although a reader is connected
            assert (tmp_path / f"{DB_NAME}-wal").stat().st_size == 0
            assert reader.get_response("last").text == "y" * 2000


def _limit_pages(store: RunStore, spare: int) -> None:
    pages = store._query("PRAGMA page_count")[0][0]
    store._query(f"PRAGMA max_page_count={pages + spare}")


def test_disk_full_during_put_rows_is_one_clear_error_and_keeps_committed_rows(tmp_path):
    with RunStore(tmp_path / "run") as store:
        store.put_rows("labels", [{"id": "a", "text": "kept"}])
        _limit_pages(store, 3)
        big = [{"id": str(i), "text": "z" * 4000} for i in range(20)]
        with pytest.raises(StoreWriteError, match=r"cannot write to the run store in .*run: the "
                                                  r"disk is full \(database or disk is full\)"):
            store.put_rows("labels", big)
        assert store.rows("labels") == [{"id": "a", "text": "kept"}]
        _limit_pages(store, 1000)  # space freed: the same store writes again
        store.put_rows("labels", big)
        assert len(store.rows("labels")) == 21
    with RunStore(tmp_path / "run") as store:
        assert len(store.rows("labels")) == 21


def test_failed_batch_commit_keeps_every_result_that_still_fits(tmp_path):
    with RunStore(tmp_path) as store:
        _limit_pages(store, 8)
        batch = [(f"k{i:02d}", _ask(i), ChatResponse("r" * 3000)) for i in range(16)]
        with pytest.raises(StoreWriteError, match=r"disk is full") as error:
            store.put_results(batch)  # the 16 together need more than 8 pages
        kept = store.response_keys()
        assert 0 < len(kept) < 16
        assert kept == {f"k{i:02d}" for i in range(len(kept))}  # stored one by one, in order
        assert f"({len(kept)} of the 16 results in the failed commit were then stored" \
               in str(error.value)


def test_a_full_disk_stops_a_run_with_one_clear_error(tmp_path):
    model = FakeModel(lambda messages, params: "answer " + "a" * 3000)
    with RunStore(tmp_path / "run") as store:
        _limit_pages(store, 20)
        with pytest.raises(MemlensError, match=r"cannot write to the run store in .*run: the "
                                               "disk is full"):
            run_requests(model, [_ask(i) for i in range(200)], store, progress=False)
        stored = store.usage()["responses"]
        assert stored > 0 and stored == len(store.response_keys())
