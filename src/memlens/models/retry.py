"""Retry policy for API backends: jittered exponential backoff that honours ``Retry-After``.

Kept SDK-free so the timing rules are plain functions with doctests; backends classify their own
exceptions into a ``Failure`` and hand the loop to ``call_with_retries``.

Two budgets: ``max_attempts`` for transient failures (429 / 5xx / timeouts / connection errors),
and ``malformed_retries`` extra tries for garbled or empty HTTP-200 replies. An optional
``deadline_s`` bounds the whole call, retries and waits included.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from memlens.models.base import ModelCallError

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
THROTTLE_STATUS = frozenset({429, 529})
"""Statuses that mean \"send less\": they lower the adaptive concurrency bound."""
"""HTTP statuses worth another try (529 is Anthropic's "overloaded")."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait between attempts (seconds)."""

    max_attempts: int = 6
    """Total attempts including the first."""
    base_delay_s: float = 0.5
    """Delay before the second attempt, before jitter; doubles each attempt."""
    max_delay_s: float = 30.0
    """Cap on one backoff delay."""
    max_retry_after_s: float = 120.0
    """Cap on a server-requested ``Retry-After`` wait."""
    seed: int | None = None
    """Seed of the jitter generator (None: a fresh, unseeded generator)."""
    malformed_retries: int = 2
    """Extra tries (no backoff) after a garbled / empty HTTP-200 reply, apart from
    ``max_attempts``."""

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Delay after failed attempt number ``attempt`` (1-based): ``min(cap, base·2^(a-1))``
        scaled by a uniform jitter factor in [0.5, 1].

        >>> policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0)
        >>> rng = random.Random(0)
        >>> [0.5 <= policy.backoff(1, rng) <= 1.0, 1.0 <= policy.backoff(2, rng) <= 2.0,
        ...  2.5 <= policy.backoff(9, rng) <= 5.0]
        [True, True, True]
        """
        return self.ceiling(attempt) * rng.uniform(0.5, 1.0)

    def ceiling(self, attempt: int) -> float:
        """The backoff delay after failed attempt ``attempt`` before jitter.

        >>> RetryPolicy(base_delay_s=0.5, max_delay_s=3.0).ceiling(4)
        3.0
        >>> RetryPolicy().ceiling(5000)
        30.0
        """
        doublings = min(max(attempt - 1, 0), 64)  # past the cap anyway; 2.0 ** 1024 overflows
        return min(self.max_delay_s, self.base_delay_s * 2 ** doublings)

    def backoff_budget_s(self) -> float:
        """The longest the backoff waits of one call can add up to (no ``Retry-After``).

        >>> RetryPolicy(max_attempts=4, base_delay_s=0.5, max_delay_s=30.0).backoff_budget_s()
        3.5
        """
        return sum(self.ceiling(attempt) for attempt in range(1, self.max_attempts))


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date), or None.

    >>> parse_retry_after("3")
    3.0
    >>> parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0)
    10.0
    >>> parse_retry_after("soon") is None, parse_retry_after(None) is None
    (True, True)
    """
    if value is None:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, moment.timestamp() - current)


@dataclass(frozen=True)
class Failure:
    """One failed attempt as a backend sees it."""

    reason: str
    retryable: bool
    retry_after_s: float | None = None
    auth_status: int | None = None
    """401 / 403 when the server refused the credentials (the call fails as
    ``AuthenticationFailed``)."""
    throttled: bool = False
    """The server said it is overloaded (HTTP 429 / 529): the adaptive concurrency bound
    (``memlens.models.window``) backs off."""


class MalformedReply(ModelCallError):
    """An HTTP-200 reply that cannot be used (not JSON, no choices, empty content): retried
    ``RetryPolicy.malformed_retries`` times, then recorded."""


class AuthenticationFailed(ModelCallError):
    """A call refused with HTTP 401 / 403: the key is missing, wrong or lacks access. Never
    retried; the engine stops a run on consecutive ones (``memlens.engine.breaker``)."""

    def __init__(self, reason: str, attempts: int = 1, status: int = 401):
        super().__init__(reason, attempts)
        self.status = status


async def call_with_retries(attempt_call: Callable[[], Awaitable[T]],
                            classify: Callable[[BaseException], Failure | None],
                            policy: RetryPolicy,
                            sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                            deadline_s: float | None = None) -> T:
    """Await ``attempt_call()`` until it succeeds, retrying what ``classify`` calls retryable.

    ``classify`` returns None for exceptions that are not call failures (they propagate).
    A ``MalformedReply`` is retried at once, at most ``policy.malformed_retries`` times.
    With ``deadline_s`` no wait (backoff or ``Retry-After``) may end past that many seconds
    from the start: the call gives up instead. Each attempt must bound its own time (the API
    backends give it ``min(timeout, time left)``).
    Raises ``ModelCallError(reason, attempts)`` (``AuthenticationFailed`` for 401 / 403) when
    the attempts run out, the deadline passes or a failure is final.
    """
    rng = random.Random(policy.seed)
    clock = time.monotonic
    ends_at = None if deadline_s is None else clock() + deadline_s
    attempt, transient, malformed = 0, 0, 0
    while True:
        attempt += 1
        try:
            return await attempt_call()
        except MalformedReply as error:
            malformed += 1
            if malformed > policy.malformed_retries:
                raise ModelCallError(f"{error.reason} ({malformed} tries)", attempt) from None
            continue
        except ModelCallError as error:  # already final
            raise ModelCallError(error.reason, attempt) from None
        except Exception as error:  # noqa: BLE001 - classified below, re-raised if unknown
            failure = classify(error)
            if failure is None:
                raise
        if failure.auth_status is not None:
            raise AuthenticationFailed(failure.reason, attempt, failure.auth_status)
        if not failure.retryable:
            raise ModelCallError(failure.reason, attempt)
        transient += 1
        if transient >= policy.max_attempts:
            break
        delay = policy.backoff(transient, rng)
        if failure.retry_after_s is not None:
            delay = min(failure.retry_after_s, policy.max_retry_after_s)
        if ends_at is not None and clock() + delay >= ends_at:
            raise ModelCallError(_past_deadline(deadline_s, attempt, failure.reason), attempt)
        await sleep(delay)
    plural = "s" if attempt != 1 else ""
    raise ModelCallError(f"gave up after {attempt} attempt{plural}: {failure.reason}", attempt)


def _past_deadline(deadline_s: float | None, attempts: int, last: str) -> str:
    """The reason of a call whose next wait would run past its deadline.

    >>> _past_deadline(2.0, 3, "HTTP 429: slow down")
    'gave up after 3 attempts (the next wait would pass the call deadline of 2s): HTTP 429: slow down'
    """
    plural = "s" if attempts != 1 else ""
    return (f"gave up after {attempts} attempt{plural} (the next wait would pass the call "
            f"deadline of {deadline_s:g}s): {last}")
