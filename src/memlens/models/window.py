"""An adaptive bound on calls in flight: additive increase, multiplicative decrease (AIMD).

Like a TCP congestion window: the bound starts at the concurrency asked for (``ceiling``); a
throttled attempt (HTTP 429, or 529 "overloaded") halves it — once per *epoch*: only an attempt
sent after the last decrease can lower it again, so one burst of 429s from attempts that were
already in flight counts as one signal — and every successful call adds ``1 / limit``, so the
bound climbs back by about one slot per window of successes, never above the ceiling. A slot is
held per attempt (``memlens.models.api_base``): a call waiting to retry holds none, so a
lowered bound lowers the load the server sees as soon as attempts finish.

One ``AdaptiveLimit`` belongs to one event loop (it waits on an ``asyncio.Condition``).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

MIN_LIMIT = 1
"""The bound never falls below one call in flight."""


@dataclass
class WindowEvent:
    """One change of the bound (kept for tests, benchmarks and the progress line)."""

    at: float
    limit: float
    reason: str


@dataclass
class AdaptiveLimit:
    """At most ``floor(limit)`` holders at once; ``limit`` adapts between 1 and ``ceiling``.

    >>> window = AdaptiveLimit(8)
    >>> sent = window.epoch
    >>> window.throttled(sent); window.throttled(sent); window.limit  # one burst, one halving
    4.0
    >>> for _ in range(5):  # 4 + 1/4 + 1/4.25 + ... : about one slot per window of successes
    ...     window.succeeded()
    >>> round(window.limit, 2), window.bound
    (5.12, 5)
    """

    ceiling: int
    limit: float = 0.0
    in_flight: int = 0
    peak_in_flight: int = 0
    throttles: int = 0
    """Throttled attempts seen (each may or may not have lowered the bound)."""
    decreases: int = 0
    epoch: int = 0
    """Number of decreases so far; an attempt records it when sent (see ``throttled``)."""
    events: list[WindowEvent] = field(default_factory=list)
    _condition: asyncio.Condition | None = None

    def __post_init__(self) -> None:
        if self.ceiling < MIN_LIMIT:
            raise ValueError("ceiling must be at least 1")
        self.limit = float(self.limit or self.ceiling)

    @property
    def bound(self) -> int:
        """How many calls may be in flight now."""
        return max(MIN_LIMIT, int(self.limit))

    async def __aenter__(self) -> AdaptiveLimit:
        condition = self._cond()
        async with condition:
            await condition.wait_for(lambda: self.in_flight < self.bound)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        condition = self._cond()
        async with condition:
            self.in_flight -= 1
            condition.notify_all()

    def throttled(self, sent_epoch: int | None = None) -> None:
        """A throttled attempt sent at ``sent_epoch`` (default: now): halve the bound, unless
        it was lowered since that attempt was sent (it was sent under the higher bound)."""
        self.throttles += 1
        if sent_epoch is not None and sent_epoch != self.epoch:
            return
        self.limit = max(float(MIN_LIMIT), self.limit / 2)
        self.decreases += 1
        self.epoch += 1
        self._event("throttled")

    def succeeded(self) -> None:
        """A successful call: grow the bound by ``1 / limit`` (about +1 per window)."""
        if self.limit >= self.ceiling:
            return
        before = self.bound
        self.limit = min(float(self.ceiling), self.limit + 1.0 / self.limit)
        if self.bound > before:  # waiting calls see it when this call leaves (__aexit__)
            self._event("recovered")

    def set_ceiling(self, ceiling: int) -> None:
        """Change the concurrency asked for (the bound starts there again)."""
        if ceiling < MIN_LIMIT:
            raise ValueError("ceiling must be at least 1")
        self.ceiling = int(ceiling)
        self.limit = float(ceiling)

    def _event(self, reason: str) -> None:
        self.events.append(WindowEvent(time.monotonic(), self.limit, reason))
        del self.events[:-1000]  # bounded memory on a long run

    def _cond(self) -> asyncio.Condition:
        if self._condition is None:
            self._condition = asyncio.Condition()
        return self._condition
