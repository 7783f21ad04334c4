"""An adaptive bound on calls in flight: slow start, additive increase, multiplicative decrease.

Like a TCP congestion window. The bound starts small (``INITIAL_LIMIT`` calls, or the ceiling if
that is lower) and opens as calls succeed: +1 per success while below the slow-start threshold
(about doubling per window of successes), then ``+1 / limit`` (about one slot per window), never
above the concurrency asked for (``ceiling``). Starting small means a server that refuses every
call (a wrong API key: HTTP 401) sees a handful of requests, not ``ceiling`` of them; a refusal
also drops the bound to one call until a call succeeds.

Three signals halve the bound (and set the slow-start threshold there), once per *epoch* — only
an attempt sent after the last decrease can lower it again, so one burst of signals from
attempts already in flight counts once:

- a throttled attempt (HTTP 429, or 529 "overloaded"): a rate-limited API;
- an attempt that ran out of its time limit: a local server queueing our calls;
- a successful attempt slower than ``BACKOFF_SHARE`` of the attempt time limit *and*
  ``LATENCY_GROWTH`` times the fastest attempt seen: calls queue towards a timeout (a
  one-slot llama.cpp server answers one call at a time; 32 queued 5-s calls wait 160 s).
  Between ``GROW_SHARE`` and ``BACKOFF_SHARE`` of the limit (with the same growth) the bound
  holds; past ``SLOW_START_EXIT_SHARE`` of it slow start ends (like TCP's HyStart, which
  leaves slow start when round trips grow), so the bound stops doubling while the queue that
  latency reports a window late is still short. Against an API whose calls take long but do not slow down as more are sent, the
  fastest attempt is slow too, so the bound keeps opening.

A slot is held per attempt (``memlens.models.api_base``): a call waiting to retry holds none,
so a lowered bound lowers the load the server sees as soon as attempts finish.

One ``AdaptiveLimit`` belongs to one event loop (it waits on an ``asyncio.Condition``).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

MIN_LIMIT = 1
"""The bound never falls below one call in flight."""
INITIAL_LIMIT = 2
"""Calls in flight before any has succeeded (slow start opens it from there). Two, not four:
a one-slot llama.cpp server on loaded cores took ≈ 34 s a call, so four queued calls already
passed a 120-s limit (9 timed-out attempts in 26 calls at 4; the abandoned ones kept the slot
busy)."""
GROW_SHARE = 0.25
"""A success slower than this share of the attempt time limit (and slowed down, see
``LATENCY_GROWTH``) does not open the bound."""
BACKOFF_SHARE = 0.5
"""A success slower than this share of the attempt time limit (and slowed down) halves it."""
LATENCY_GROWTH = 2.0
"""How many times the fastest attempt seen a slow attempt must take to count as queueing."""
SLOW_START_EXIT_SHARE = 0.125
"""A success slower than this share of the attempt time limit (and slowed down) ends slow
start: the bound then opens by about one slot per window instead of doubling. Slow start
reacts a window late (a call's latency shows the queue when it was sent, by which time the
bound has doubled): against a one-slot server with 0.1-s calls and a 2-s limit it reached 9-14
calls in flight (up to 1.4 s of queue) before the first back-off and timed a call out in 2 of
12 runs on a loaded machine (2 of 3 idle); ending slow start at 1/8 of the limit kept the peak
at 6-11 (7 in most runs) with no timeout (``tests/engine/test_concurrency_window.py``). Against an API at the default 120-s limit it
takes a 15-s call that is also twice the fastest to end slow start."""


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
    >>> window.bound  # slow start: INITIAL_LIMIT calls before the first success
    2
    >>> for _ in range(4):  # +1 per success below ssthresh
    ...     window.succeeded()
    >>> window.bound
    6
    >>> sent = window.epoch
    >>> window.throttled(sent); window.throttled(sent); window.limit  # one burst, one halving
    3.0
    >>> for _ in range(3):  # 3 + 1/3 + 1/3.33 + ...: about one slot per window of successes
    ...     window.succeeded()
    >>> round(window.limit, 2), window.bound
    (3.91, 3)
    >>> window.refused(); window.bound  # HTTP 401 / 403: one call at a time until a success
    1
    """

    ceiling: int
    limit: float = 0.0
    in_flight: int = 0
    peak_in_flight: int = 0
    throttles: int = 0
    """Throttled attempts seen (each may or may not have lowered the bound)."""
    timeouts: int = 0
    """Attempts that ran out of their time limit."""
    decreases: int = 0
    epoch: int = 0
    """Number of decreases so far; an attempt records it when sent (see ``throttled``)."""
    timeout_s: float | None = None
    """The attempt time limit the latency rule compares with (None: no latency rule)."""
    ssthresh: float = 0.0
    """Slow-start threshold: below it a success adds 1, above it ``1 / limit``."""
    fastest_s: float | None = None
    """The fastest successful attempt seen (the latency with no queue, as far as is known)."""
    events: list[WindowEvent] = field(default_factory=list)
    _condition: asyncio.Condition | None = None

    def __post_init__(self) -> None:
        if self.ceiling < MIN_LIMIT:
            raise ValueError("ceiling must be at least 1")
        self.limit = float(self.limit or min(self.ceiling, INITIAL_LIMIT))
        self.ssthresh = float(self.ssthresh or self.ceiling)

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
        self._decrease("throttled", sent_epoch)

    def timed_out(self, sent_epoch: int | None = None) -> None:
        """An attempt sent at ``sent_epoch`` ran out of its time limit: halve the bound (once
        per epoch, as ``throttled``)."""
        self.timeouts += 1
        self._decrease("timeout", sent_epoch)

    def refused(self) -> None:
        """A call refused with HTTP 401 / 403: one call at a time until one succeeds (a key
        that is refused costs a few requests, not a window of them)."""
        if self.limit > MIN_LIMIT:
            self.limit = float(MIN_LIMIT)
            self._event("refused")

    def succeeded(self, latency_s: float | None = None, sent_epoch: int | None = None) -> None:
        """A successful call whose last attempt took ``latency_s`` (None: unknown): open the
        bound (+1 in slow start, else ``+1 / limit``), hold it, or halve it when the attempt
        was slow enough to show queueing (see the module docstring)."""
        if latency_s is not None:
            slowed = self.fastest_s is not None and latency_s >= LATENCY_GROWTH * self.fastest_s
            self.fastest_s = latency_s if self.fastest_s is None else min(self.fastest_s,
                                                                            latency_s)
            if slowed and self.timeout_s:
                if latency_s >= BACKOFF_SHARE * self.timeout_s:
                    self._decrease("slow", sent_epoch)
                    return
                if latency_s >= GROW_SHARE * self.timeout_s:
                    return
                if latency_s >= SLOW_START_EXIT_SHARE * self.timeout_s:
                    self._end_slow_start()
        if self.limit >= self.ceiling:
            return
        before = self.bound
        step = 1.0 if self.limit < self.ssthresh else 1.0 / self.limit
        self.limit = min(float(self.ceiling), self.limit + step)
        if self.bound > before:  # waiting calls see it when this call leaves (__aexit__)
            self._event("recovered")

    def _end_slow_start(self) -> None:
        if self.limit < self.ssthresh:
            self.ssthresh = self.limit
            self._event("slow start ended")

    def set_ceiling(self, ceiling: int) -> None:
        """Change the concurrency asked for (the bound slow-starts again)."""
        if ceiling < MIN_LIMIT:
            raise ValueError("ceiling must be at least 1")
        self.ceiling = int(ceiling)
        self.limit = float(min(self.ceiling, INITIAL_LIMIT))
        self.ssthresh = float(self.ceiling)

    def _decrease(self, reason: str, sent_epoch: int | None) -> None:
        if sent_epoch is not None and sent_epoch != self.epoch:
            return  # sent under a higher bound that has been lowered since
        self.limit = max(float(MIN_LIMIT), self.limit / 2)
        self.ssthresh = self.limit
        self.decreases += 1
        self.epoch += 1
        self._event(reason)

    def _event(self, reason: str) -> None:
        self.events.append(WindowEvent(time.monotonic(), self.limit, reason))
        del self.events[:-1000]  # bounded memory on a long run

    def _cond(self) -> asyncio.Condition:
        if self._condition is None:
            self._condition = asyncio.Condition()
        return self._condition
