"""Overlapped chunks (generate chunk i + 1 while chunk i is labelled) store exactly the rows of
the sequential chunk loop, keep --concurrency as one bound for both stages, and an interrupted
overlapped run resumes to the same tables."""

import asyncio
import sys
import threading
from functools import cache
from pathlib import Path

import pytest

from memlens.audit import build_config
from memlens.audit.chunks import question_chunks, run_chunks
from memlens.audit.drift import DRIFT_TABLE, PAIRS_TABLE
from memlens.audit.generate import STEPS_TABLE
from memlens.audit.labels import LABELS_TABLE
from memlens.audit.pipeline import labeler_options, plan_cells
from memlens.engine import run_requests
from memlens.engine.slots import shared_slots
from memlens.models import ChatRequest, ChatResponse
from memlens.models.loopback import LoopbackServer
from memlens.store import RunStore

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

SIZE = 8  # cells per chunk: the 4 scripted questions (8-9 cells each) make 4 chunks
TABLES = (STEPS_TABLE, LABELS_TABLE, PAIRS_TABLE, DRIFT_TABLE)


def tables(run_dir) -> dict:
    with RunStore(run_dir) as store:
        return {table: {row["id"]: row for row in store.rows(table)} for table in TABLES}


class StopAfter:
    """The audited model, raising KeyboardInterrupt (Ctrl-C) on its ``after``-th call."""

    def __init__(self, model, after: int):
        self.model, self.after, self.model_id, self.calls = model, after, model.model_id, 0

    async def acomplete(self, messages, params):
        self.calls += 1
        if self.calls == self.after:
            raise KeyboardInterrupt
        return await self.model.acomplete(messages, params)

    async def aclose(self):
        await self.model.aclose()


def run(config, run_dir, *, overlap: bool, stop_after: int | None = None):
    from memlens.models import get_model
    from memlens.ontology import get_labeler, load_ontology

    cells, _ = plan_cells(config)
    make_model = cache(lambda: get_model(config.model) if stop_after is None
                       else StopAfter(get_model(config.model), stop_after))
    with RunStore(run_dir) as store:
        make_labeler = cache(lambda: get_labeler(
            config.labeler, ontology=load_ontology(config.ontology), store=store,
            **labeler_options(config)))
        return run_chunks(cells, config, store, make_model, make_labeler, size=SIZE,
                          progress=False, overlap=overlap)


@pytest.fixture
def scripted_config(tmp_path):
    questions, stimuli = scripted.write_inputs(tmp_path)
    with LoopbackServer(responder=scripted.make_responder(3), faults=scripted.faults_for(3),
                        latency_s=0.02) as server:
        yield server, build_config({
            "model": f"openai:scripted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}", "questions": questions,
            "stimuli": stimuli, "seed": 3, "max_tokens": 64, "samples": 1, "baselines": 1,
            "concurrency": 2})


def test_overlapped_rows_equal_sequential_and_share_the_bound(tmp_path, scripted_config):
    server, config = scripted_config
    assert len(question_chunks(plan_cells(config)[0], SIZE)) == 4
    sequential = run(config, tmp_path / "sequential", overlap=False)
    server.peak_in_flight = 0
    overlapped = run(config, tmp_path / "overlapped", overlap=True)
    assert server.peak_in_flight <= 2  # generation + labeler calls together: --concurrency 2
    assert overlapped.peak_in_flight == 2
    expected = tables(tmp_path / "sequential")
    assert len(expected[STEPS_TABLE]) == 32 and len(expected[DRIFT_TABLE]) == 25
    assert tables(tmp_path / "overlapped") == expected  # exact: every row of every table
    assert (overlapped.calls, overlapped.labels, overlapped.drift) == \
        (sequential.calls, sequential.labels, sequential.drift)
    assert overlapped.calls == {"cells": 32, "pending": 32, "failed": 1}
    seconds = overlapped.seconds
    busy = seconds["generate"] + seconds["label"] + seconds["drift"]
    assert seconds["overlapped"] == pytest.approx(max(0.0, busy - seconds["chunks"]))
    assert sequential.seconds["overlapped"] <= 0.05 * sequential.seconds["chunks"]


def test_interrupted_overlapped_run_resumes_to_the_same_tables(tmp_path, scripted_config):
    _, config = scripted_config
    run(config, tmp_path / "clean", overlap=False)
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C during the third chunk's generation
        run(config, tmp_path / "cut", overlap=True, stop_after=19)
    cut = tables(tmp_path / "cut")
    # the chunks labelled before the interrupt kept their labels and drift rows
    # (q2's job may have been queued, not started, at the interrupt: then it is left to resume)
    assert "q1" in {row["question_id"] for row in cut[DRIFT_TABLE].values()} <= {"q1", "q2"}
    resumed = run(config, tmp_path / "cut", overlap=True)
    assert len(cut[STEPS_TABLE]) == 16  # q1, q2: chunk 3's finished calls are cached only
    assert resumed.calls["pending"] == 16
    assert tables(tmp_path / "cut") == tables(tmp_path / "clean")


class Counting:
    """An async model that records how many of its calls are in flight at once."""

    model_id = "counting"

    def __init__(self, lock: threading.Lock, state: dict):
        self.lock, self.state = lock, state

    async def acomplete(self, messages, params):
        with self.lock:
            self.state["now"] += 1
            self.state["peak"] = max(self.state["peak"], self.state["now"])
        await asyncio.sleep(0.01)
        with self.lock:
            self.state["now"] -= 1
        return ChatResponse(text="ok")


def test_two_runs_on_two_threads_share_the_slots():
    lock, state = threading.Lock(), {"now": 0, "peak": 0}
    ask = [ChatRequest(({"role": "user", "content": f"q{i}"},)) for i in range(40)]
    with shared_slots(3) as slots:
        import contextvars

        context = contextvars.copy_context()
        other = threading.Thread(target=context.run, args=(
            run_requests, Counting(lock, state), ask[:20]), kwargs={
            "concurrency": 3, "progress": False})
        other.start()
        replies = run_requests(Counting(lock, state), ask[20:], concurrency=3, progress=False)
        other.join()
    assert [reply.text for reply in replies] == ["ok"] * 20
    assert state["peak"] == 3 and slots.peak == 3 and slots.taken == 0


def test_a_cancelled_waiter_gives_its_slot_back():
    from memlens.engine.slots import CallSlots

    async def scenario():
        slots = CallSlots(1)
        await slots.acquire()
        waiting = asyncio.ensure_future(slots.acquire())
        await asyncio.sleep(0)
        waiting.cancel()  # queued: removed from the queue
        await asyncio.gather(waiting, return_exceptions=True)
        handed = asyncio.ensure_future(slots.acquire())
        await asyncio.sleep(0)
        slots.release()  # the slot is on its way to ``handed``...
        handed.cancel()  # ...which is cancelled first: the slot is passed on, not lost
        await asyncio.gather(handed, return_exceptions=True)
        await asyncio.sleep(0)
        return slots.taken, slots.peak

    assert asyncio.run(scenario()) == (0, 1)


def test_on_outcome_sees_every_request_once_and_can_stop_the_run(tmp_path):
    from memlens.models import FakeModel

    ask = [ChatRequest(({"role": "user", "content": f"q{i}"},)) for i in range(6)]
    seen: list[tuple[int, str]] = []
    with RunStore(tmp_path) as store:
        run_requests(FakeModel(["a"]), ask[:2], store, progress=False)  # 0, 1 now stored
        replies = run_requests(FakeModel(["b"]), ask + ask[:1], store, concurrency=1,
                               progress=False,
                               on_outcome=lambda index, reply: seen.append((index, reply.text)))
        assert [reply.text for reply in replies] == ["a", "a", "b", "b", "b", "b", "a"]
        assert sorted(seen) == sorted(enumerate(reply.text for reply in replies))
        assert seen[:3] == [(0, "a"), (1, "a"), (6, "a")]  # the stored ones come first

        def stop(index, reply):
            raise KeyError("stop")

        more = [ChatRequest(({"role": "user", "content": f"r{i}"},)) for i in range(5)]
        model = Counting(threading.Lock(), {"now": 0, "peak": 0})  # async: one call at a time
        with pytest.raises(KeyError):
            run_requests(model, more, store, concurrency=1, progress=False, on_outcome=stop)
        assert len(store.cached_responses(
            [request.cache_key(model.model_id) for request in more])) == 1  # stored, then stop
