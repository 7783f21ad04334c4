import asyncio

import pytest
from engine_fakes import AsyncFake, BatchFake, ThreadFake, ask

from memlens.engine import run_requests
from memlens.errors import MemlensError
from memlens.models import ChatResponse, FakeModel, ModelCallError
from memlens.store import RunStore


def texts(results):
    return [r.text if isinstance(r, ChatResponse) else f"ERR {r.reason}" for r in results]


@pytest.mark.parametrize("make", [lambda: AsyncFake(0.001), lambda: ThreadFake(0.001, 4),
                                  BatchFake])
def test_order_duplicates_and_resume(tmp_path, make):
    requests = [ask(f"q{i % 7}") for i in range(20)]
    model = make()
    with RunStore(tmp_path) as store:
        first = run_requests(model, requests, store, progress=False)
        assert texts(first) == [f"re: q{i % 7}" for i in range(20)]
        assert sorted(model.calls) == [f"q{i}" for i in range(7)]  # duplicates computed once
        assert store.usage()["responses"] == 7
        again = make()
        second = run_requests(again, requests + [ask("new")], store, progress=False)
    assert again.calls == ["new"]  # everything else came from the store
    assert texts(second) == texts(first) + ["re: new"]
    assert second[0].completion_tokens == 2


@pytest.mark.parametrize("make", [AsyncFake, lambda: ThreadFake(0, 2), BatchFake])
def test_failures_are_recorded_returned_and_retried(tmp_path, make):
    requests = [ask("ok1"), ask("fail1"), ask("crash1"), ask("garbage1"), ask("ok2")]
    with RunStore(tmp_path) as store:
        results = run_requests(make(), requests, store, progress=False)
        assert texts(results) == ["re: ok1", "ERR scripted failure for fail1",
                                  "ERR ValueError: backend bug",
                                  "ERR backend returned NoneType, not a ChatResponse", "re: ok2"]
        assert results[1].attempts == 3
        failures = {f["tag"] if f["tag"] else f["messages"][0]["content"]: f["attempts"]
                    for f in store.failures()}
        assert failures == {"fail1": 3, "crash1": 1, "garbage1": 1}
        retry = make()
        run_requests(retry, requests, store, progress=False)
        assert sorted(retry.calls) == ["crash1", "fail1", "garbage1"]  # failures are retried
        assert {f["messages"][0]["content"]: f["attempts"] for f in store.failures()} == \
            {"fail1": 6, "crash1": 2, "garbage1": 2}


@pytest.mark.parametrize("make, expected", [(lambda: AsyncFake(0.01), 8),
                                            (lambda: ThreadFake(0.01, 8), 8)])
def test_concurrency_bound_is_reached_and_respected(make, expected):
    model = make()
    run_requests(model, [ask(f"q{i}") for i in range(64)], concurrency=8, progress=False)
    assert model.peak == expected and len(model.calls) == 64


def test_default_concurrency_comes_from_the_model():
    model = AsyncFake(0.01, max_concurrency=3)
    run_requests(model, [ask(f"q{i}") for i in range(20)], progress=False)
    assert model.peak == 3
    sync = ThreadFake(0.005)  # no max_concurrency: one thread, never concurrent
    run_requests(sync, [ask(f"q{i}") for i in range(10)], progress=False)
    assert sync.peak == 1


def test_batches_group_by_params_and_respect_size():
    model = BatchFake()
    requests = [ask(f"q{i}", temperature=0.0 if i % 2 else 1.0) for i in range(10)]
    results = run_requests(model, requests, concurrency=3, progress=False)
    assert texts(results) == [f"re: q{i}" for i in range(10)]
    assert model.batches == [(3, 1.0), (2, 1.0), (3, 0.0), (2, 0.0)]


def test_batch_with_wrong_reply_count_fails_the_chunk():
    results = run_requests(BatchFake(short_by=1), [ask("a"), ask("b")], progress=False)
    assert texts(results) == ["ERR backend returned 1 replies for 2 prompts"] * 2


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_concurrency(bad):
    with pytest.raises(MemlensError, match="concurrency must be a positive integer"):
        run_requests(FakeModel(), [ask("x")], concurrency=bad, progress=False)


def test_no_requests_and_all_cached_make_no_bar(tmp_path, capsys):
    assert run_requests(FakeModel(), [], progress=True) == []
    assert capsys.readouterr().err == ""


def test_progress_bar_shows_cached_and_failed(tmp_path, capsys):
    with RunStore(tmp_path) as store:
        run_requests(AsyncFake(), [ask("ok")], store, progress=False)
        run_requests(AsyncFake(), [ask("ok"), ask("fail"), ask("ok2")], store, desc="gen")
    err = capsys.readouterr().err
    assert "gen: 100%" in err and "2/2" in err and "cached=1 failed=1" in err and "call/s" in err


def test_runs_inside_a_running_event_loop():
    async def notebook_cell():
        return run_requests(AsyncFake(0.001), [ask("a"), ask("b")], progress=False)

    assert texts(asyncio.run(notebook_cell())) == ["re: a", "re: b"]


class Interrupting(ThreadFake):
    """Ctrl-C arrives during the 6th call."""

    def complete(self, messages, params):
        if len(self.calls) == 5:
            raise KeyboardInterrupt
        return super().complete(messages, params)


class AsyncInterrupting(AsyncFake):
    async def acomplete(self, messages, params):
        if len(self.calls) == 5:
            raise KeyboardInterrupt
        return await super().acomplete(messages, params)


@pytest.mark.parametrize("make", [Interrupting, AsyncInterrupting])
def test_ctrl_c_keeps_finished_calls_and_reraises(tmp_path, make):
    requests = [ask(f"q{i}") for i in range(20)]
    with RunStore(tmp_path) as store:
        with pytest.raises(KeyboardInterrupt):
            run_requests(make(), requests, store, concurrency=1, progress=False)
        assert store.usage()["responses"] == 5
        assert store._query("PRAGMA integrity_check") == [("ok",)]
        resumed = ThreadFake(model_id=make().model_id)
        results = run_requests(resumed, requests, store, progress=False)
    assert resumed.calls == [f"q{i}" for i in range(5, 20)]
    assert texts(results) == [f"re: q{i}" for i in range(20)]


def test_store_write_error_surfaces(tmp_path):
    store = RunStore(tmp_path)
    store.close()
    with pytest.raises(MemlensError, match="is closed"):
        run_requests(FakeModel(), [ask("x")], store, progress=False)


def test_results_without_store_match_model_failures():
    results = run_requests(ThreadFake(), [ask("fail")], progress=False)
    assert isinstance(results[0], ModelCallError)
