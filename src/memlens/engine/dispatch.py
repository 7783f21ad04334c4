"""Three ways to run the calls: asyncio (API backends), a thread pool (sync backends), and
batches (vLLM / batch-capable backends). Each hands every outcome to ``on_result`` in the
calling thread as soon as it exists, and stops launching new calls on Ctrl-C or when
``on_result`` raises (e.g. the engine's circuit breaker): outcomes that already exist are still
handed on, calls in flight are abandoned, and the first error is re-raised."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from memlens.engine.calls import Outcome, as_failure, call_async, call_sync, checked
from memlens.engine.slots import CallSlots, current_slots, served_first
from memlens.models.base import ChatModel, ChatRequest, ModelCallError

Item = tuple[str, ChatRequest]  # (cache key, request)
OnResult = Callable[[str, ChatRequest, Outcome], None]


class Until(Sequence):
    """``items`` that stop being handed out once ``stop`` is set: the dispatchers below take
    their next call from one shared iterator (``run_batches`` checks between batches), so no
    call is launched after ``stop`` while the calls in flight finish. ``len`` stays the full
    count (it sizes the worker pool).

    >>> import threading
    >>> stop = threading.Event()
    >>> items = Until([("a", None), ("b", None)], stop)
    >>> taken = iter(items)
    >>> next(taken)[0]; stop.set(); list(taken), len(items), items.stopped
    'a'
    ([], 2, True)
    """

    def __init__(self, items: Sequence[Item], stop: threading.Event):
        self.items, self.stop = items, stop

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]

    def __iter__(self):
        for item in self.items:
            if self.stop.is_set():
                return
            yield item

    @property
    def stopped(self) -> bool:
        """Whether ``stop`` has been set."""
        return self.stop.is_set()


def mode_of(model: ChatModel) -> str:
    """``"batch"`` if the model has ``complete_batch``, ``"async"`` if it has a coroutine
    ``acomplete``, else ``"threads"``."""
    if callable(getattr(model, "complete_batch", None)):
        return "batch"
    if inspect.iscoroutinefunction(getattr(model, "acomplete", None)):
        return "async"
    return "threads"


def run_async(model: ChatModel, items: Sequence[Item], on_result: OnResult,
              concurrency: int) -> None:
    """At most ``concurrency`` ``acomplete`` calls in flight, on a fresh event loop (on a helper
    thread when the caller is itself inside a running loop, e.g. a notebook); inside
    ``memlens.engine.slots.shared_slots`` each call also takes one of its shared slots."""
    slots, first = current_slots(), served_first()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(_workers(model, items, on_result, concurrency, slots, first))
        return
    failure: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(_workers(model, items, on_result, concurrency, slots, first))
        except BaseException as error:
            failure.append(error)

    helper = threading.Thread(target=target, name="memlens-event-loop")
    helper.start()
    helper.join()
    if failure:
        raise failure[0]


async def _workers(model: ChatModel, items: Sequence[Item], on_result: OnResult,
                   concurrency: int, slots: CallSlots | None = None,
                   first: bool = False) -> None:
    pending = iter(items)  # shared by the workers; next() never yields to the loop

    async def worker() -> None:
        for key, request in pending:
            if slots is None:
                outcome = await call_async(model, request)
            else:
                await slots.acquire(first)
                try:
                    outcome = await call_async(model, request)
                finally:
                    slots.release()
            on_result(key, request, outcome)

    tasks = [asyncio.ensure_future(worker()) for _ in range(min(concurrency, len(items)))]
    try:
        done, running = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in running:  # on_result raised in some worker: abandon the calls in flight
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        for task in tasks:
            if task in done and task.exception() is not None:
                raise task.exception()
    finally:
        for task in tasks:
            task.cancel()
        closer = getattr(model, "aclose", None)  # API backends: close this loop's HTTP client
        if inspect.iscoroutinefunction(closer):
            await closer()


def run_threads(model: ChatModel, items: Sequence[Item], on_result: OnResult,
                concurrency: int) -> None:
    """``complete`` on ``concurrency`` threads; at most 2 × concurrency calls are queued so
    Ctrl-C stops launching quickly (calls already running finish; their results are dropped).
    Inside ``memlens.engine.slots.shared_slots`` each call also takes one of its slots."""
    slots = current_slots()
    call = call_sync if slots is None else _bounded_call(slots)
    pending = iter(items)
    in_flight: dict[Future, Item] = {}
    executor = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="memlens-call")
    try:
        while True:
            for key, request in pending:
                in_flight[executor.submit(call, model, request)] = (key, request)
                if len(in_flight) >= 2 * concurrency:
                    break
            if not in_flight:
                return
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            # an exception here is Ctrl-C (call_sync catches the rest): store the others first
            handed = [(in_flight.pop(future), future) for future in
                      sorted(done, key=lambda finished: finished.exception() is not None)]
            _hand_on(on_result, ((key, request, future.result())
                                 for (key, request), future in handed))
    finally:
        executor.shutdown(wait=False, cancel_futures=True)


def _bounded_call(slots: CallSlots):
    first = served_first()  # read here: the pool's threads do not share this context

    def call(model: ChatModel, request: ChatRequest) -> Outcome:
        slots.acquire_sync(first)
        try:
            return call_sync(model, request)
        finally:
            slots.release()

    return call


def run_batches(model: ChatModel, items: Sequence[Item], on_result: OnResult,
                batch_size: int) -> None:
    """``complete_batch`` on chunks of up to ``batch_size`` requests sharing their generation
    parameters; each chunk's outcomes are handed on as it returns. A backend may put an
    exception in place of a reply to fail just that prompt."""
    for chunk in _chunks(items, batch_size):
        if getattr(items, "stopped", False):
            return  # ``Until``: stopped between batches
        params = chunk[0][1].params
        start = time.perf_counter()
        try:
            replies = list(model.complete_batch([list(r.messages) for _, r in chunk], params))
        except Exception as error:
            replies = [as_failure(error)] * len(chunk)
        if len(replies) != len(chunk):
            replies = [ModelCallError(f"backend returned {len(replies)} replies for "
                                      f"{len(chunk)} prompts")] * len(chunk)
        elapsed = (time.perf_counter() - start) / len(chunk)
        _hand_on(on_result, (
            (key, request, as_failure(reply) if isinstance(reply, Exception)
             else checked(reply, elapsed))
            for (key, request), reply in zip(chunk, replies, strict=True)))


def _hand_on(on_result: OnResult, outcomes) -> None:
    """Hand every ``(key, request, outcome)`` to ``on_result``, even after it raised, then
    re-raise its first error: outcomes that exist are never dropped."""
    first: Exception | None = None
    for key, request, outcome in outcomes:
        try:
            on_result(key, request, outcome)
        except Exception as error:  # e.g. the circuit breaker; Ctrl-C passes straight through
            first = first or error
    if first is not None:
        raise first


def _chunks(items: Sequence[Item], size: int) -> list[list[Item]]:
    """Group by generation parameters (one ``complete_batch`` call takes one ``params``),
    then cut each group into chunks of ``size``."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        signature = json.dumps(item[1].params.to_dict(), sort_keys=True, default=str)
        groups.setdefault(signature, []).append(item)
    return [group[start:start + size] for group in groups.values()
            for start in range(0, len(group), size)]
