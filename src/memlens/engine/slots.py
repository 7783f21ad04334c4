"""One bound on model calls in flight shared by stages that run at the same time.

An overlapped audit (``memlens.audit.chunks.run_chunks``) generates one chunk while a worker
thread labels the previous one: two ``run_requests`` on two event loops. Inside
``shared_slots(n)`` every call made by ``memlens.engine.dispatch`` (async and thread modes) first
takes one of ``n`` slots, whichever thread or event loop it runs on, so ``--concurrency`` bounds
the calls of both stages together; a slot freed by one stage's last, partly filled wave goes to
the other stage at once. Batch backends (``complete_batch``) are not bounded by it: a batch is
one call of many prompts.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

_SLOTS: contextvars.ContextVar[CallSlots | None] = contextvars.ContextVar(
    "memlens_call_slots", default=None)
_FIRST: contextvars.ContextVar[bool] = contextvars.ContextVar("memlens_slots_first",
                                                              default=False)


class CallSlots:
    """``total`` slots for calls in flight, taken and given back from any thread or event loop;
    a freed slot goes to the longest waiting ``first`` call, else the longest waiting other
    call. ``peak`` is the most ever taken at once."""

    def __init__(self, total: int):
        self.total = total
        self.taken = 0
        self.peak = 0
        self._lock = threading.Lock()
        self._waiters: deque = deque()  # (loop, future) or (None, threading.Event)
        self._first: deque = deque()  # the same, of ``first`` calls

    def _take(self) -> None:  # under the lock
        self.taken += 1
        self.peak = max(self.peak, self.taken)

    async def acquire(self, first: bool = False) -> None:
        """Wait (on this event loop) for a free slot; ``first`` calls are served first."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self.taken < self.total and not self._waiters and not self._first:
                self._take()
                return
            entry = (loop, loop.create_future())
            queue = self._first if first else self._waiters
            queue.append(entry)
        try:
            await entry[1]
        except asyncio.CancelledError:
            with self._lock:
                queued = entry in queue
                if queued:
                    queue.remove(entry)
            if not queued and entry[1].done() and not entry[1].cancelled():
                self.release()  # the slot arrived as the task was cancelled: give it back
            raise  # (a cancelled future's slot is passed on by _deliver)

    def acquire_sync(self, first: bool = False) -> None:
        """Block this thread until a slot is free; ``first`` calls are served first."""
        with self._lock:
            if self.taken < self.total and not self._waiters and not self._first:
                self._take()
                return
            entry = (None, threading.Event())
            (self._first if first else self._waiters).append(entry)
        entry[1].wait()

    def release(self) -> None:
        """Give a slot back: straight to the longest waiter, if any (``first`` ones first)."""
        with self._lock:
            self.taken -= 1
            while self._first or self._waiters:
                loop, waiter = (self._first or self._waiters).popleft()
                self._take()
                if loop is None:
                    waiter.set()
                    return
                try:
                    loop.call_soon_threadsafe(self._deliver, waiter)
                    return
                except RuntimeError:  # that loop has closed: its waiter is gone
                    self.taken -= 1

    def _deliver(self, future: asyncio.Future) -> None:
        if future.done():  # cancelled while the slot was on its way: pass it on
            self.release()
        else:
            future.set_result(None)


@contextmanager
def shared_slots(total: int) -> Iterator[CallSlots]:
    """Every engine call in this block (and in threads started with a copy of its context)
    takes one of ``total`` slots."""
    slots = CallSlots(total)
    token = _SLOTS.set(slots)
    try:
        yield slots
    finally:
        _SLOTS.reset(token)


def current_slots() -> CallSlots | None:
    """The shared slots of the enclosing ``shared_slots`` block, if any."""
    return _SLOTS.get()


@contextmanager
def slots_first() -> Iterator[None]:
    """Calls made in this block are served before the other waiting calls (an overlapped
    audit's labeler: a chunk labelled at once is a chunk whose drift rows are stored)."""
    token = _FIRST.set(True)
    try:
        yield
    finally:
        _FIRST.reset(token)


def served_first() -> bool:
    """Whether calls made here are served first (``slots_first``)."""
    return _FIRST.get()
