"""Run coroutines from synchronous code on one private event-loop thread per backend.

API backends are async; their sync ``complete`` hands the coroutine to a ``LoopThread`` so it
works from any thread (e.g. the engine's thread pool) while one HTTP client and one concurrency
bound are shared.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """A daemon thread running an asyncio loop; ``run(coro)`` blocks until the result.

    >>> async def add(a, b):
    ...     return a + b
    >>> loop = LoopThread()
    >>> loop.run(add(2, 3))
    5
    >>> loop.close()
    """

    def __init__(self, name: str = "memlens-aio"):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop thread and return its result (or raise its exception)."""
        if self.loop.is_closed():
            raise RuntimeError("LoopThread is closed")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        """Stop the loop and join the thread."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        self.loop.close()
