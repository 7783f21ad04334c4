"""``run_requests``: the cache-aware, resumable, concurrent runner every stage uses."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from memlens.engine import dispatch
from memlens.engine.breaker import CallBreaker
from memlens.engine.calls import Outcome
from memlens.engine.progress import RunProgress
from memlens.engine.writer import ResultWriter
from memlens.errors import MemlensError
from memlens.models.base import ChatModel, ChatRequest, ModelCallError
from memlens.store import RunStore

DEFAULT_CONCURRENCY = {"async": 16, "threads": 1, "batch": 64}


def resolve_concurrency(model: ChatModel, mode: str, concurrency: int | None) -> int:
    """The explicit ``concurrency``, else ``model.max_concurrency``, else the mode default
    (16 async calls, 1 thread for a sync backend not declaring itself thread-safe, batches
    of 64)."""
    value = concurrency if concurrency is not None else getattr(model, "max_concurrency", None)
    value = value if value is not None else DEFAULT_CONCURRENCY[mode]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise MemlensError(f"concurrency must be a positive integer, got {value!r}")
    return value


def run_requests(model: ChatModel, requests: Sequence[ChatRequest],
                 store: RunStore | None = None, *, concurrency: int | None = None,
                 progress: bool = True, desc: str = "",
                 stop_early: bool = True,
                 on_outcome: Callable[[int, Outcome], None] | None = None,
                 stop: threading.Event | None = None) -> list[Outcome]:
    """Answer every request, in order, calling the model only for what ``store`` lacks.

    Returns one ``ChatResponse`` or ``ModelCallError`` per request (same order). Identical
    requests are computed once. Stored failures are *not* cache hits: they are retried. Each
    outcome is written to ``store`` the moment it arrives, so a kill loses at most the calls in
    flight; Ctrl-C stops launching calls, stores what has finished and re-raises
    ``KeyboardInterrupt``.

    With ``stop_early`` (the default) the circuit breaker of ``memlens.engine.breaker`` stops a
    run that cannot succeed (consecutive 401 / 403, or most recent calls failing) by raising
    ``RunStopped``; what finished is stored, so the same call resumes it.

    ``stop`` (set from another thread) ends the run gracefully: no call is launched once it is
    set, the calls in flight finish and are stored (none is paid twice on resume), and the
    requests never sent stay ``None`` in the returned list.

    ``on_outcome(index, outcome)`` is called once per request as its outcome is known: at once
    for the stored ones, then as each call finishes (on the runner's thread or event loop, after
    the outcome was queued for the store). An exception it raises stops the run as the breaker's
    does (no new call; what finished is stored) and is re-raised.

    >>> from memlens.models import FakeModel
    >>> ask = ChatRequest(({"role": "user", "content": "hi"},))
    >>> model = FakeModel(["hello"])
    >>> [reply.text for reply in run_requests(model, [ask, ask], progress=False)], len(model.calls)
    (['hello', 'hello'], 1)
    """
    requests = list(requests)
    keys = [request.cache_key(model.model_id) for request in requests]
    results: list[Outcome | None] = [None] * len(requests)
    cached = store.cached_responses(keys) if store is not None else {}
    positions: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        if key in cached:
            results[index] = cached[key]
        else:
            positions.setdefault(key, []).append(index)
    if on_outcome is not None:
        for index, outcome in enumerate(results):
            if outcome is not None:
                on_outcome(index, outcome)
    items = [(key, requests[indexes[0]]) for key, indexes in positions.items()]
    if items:
        _run_calls(model, items, positions, results, store, concurrency=concurrency,
                   cached=len(requests) - sum(map(len, positions.values())),
                   progress=progress, desc=desc, stop_early=stop_early, on_outcome=on_outcome,
                   stop=stop)
    return results  # type: ignore[return-value]  # every slot is filled


def _run_calls(model: ChatModel, items: list[tuple[str, ChatRequest]],
               positions: dict[str, list[int]], results: list, store: RunStore | None, *,
               concurrency: int | None, cached: int, progress: bool, desc: str,
               stop_early: bool, on_outcome: Callable[[int, Outcome], None] | None,
               stop: threading.Event | None = None) -> None:
    mode = dispatch.mode_of(model)
    width = resolve_concurrency(model, mode, concurrency)
    use = getattr(model, "use_concurrency", None)
    if concurrency is not None and callable(use):
        use(width)  # an API backend's own bound (default 32) must not cap --concurrency
    window = getattr(model, "window", None) if mode == "async" else None
    writer = ResultWriter(store, model.model_id) if store is not None else None
    bar = RunProgress(len(items), cached, desc, enabled=progress)
    breaker = CallBreaker(model) if stop_early else None

    def on_result(key: str, request: ChatRequest, outcome: Outcome) -> None:
        if writer is not None:
            writer.submit(key, request, outcome)
        for index in positions[key]:
            results[index] = outcome
            if on_outcome is not None:
                on_outcome(index, outcome)
        bar.advance(isinstance(outcome, ModelCallError))
        if callable(window):  # runs on the event loop: the backend's adaptive bound
            bound = window()
            if bound is not None:
                bar.window(bound.bound, width)
        if breaker is not None:
            breaker.record(outcome)  # raises RunStopped: stored first, so the run resumes

    run = {"async": dispatch.run_async, "threads": dispatch.run_threads,
           "batch": dispatch.run_batches}[mode]
    try:
        run(model, items if stop is None else dispatch.Until(items, stop), on_result, width)
    except BaseException:
        if writer is not None:
            writer.close(raise_error=False)  # keep what finished; the original error wins
        raise
    finally:
        bar.close()
    if writer is not None:
        writer.close()
