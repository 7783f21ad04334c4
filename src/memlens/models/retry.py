"""Retry policy for API backends: jittered exponential backoff that honours ``Retry-After``.

Kept SDK-free so the timing rules are plain functions with doctests; backends classify their own
exceptions into a ``Failure`` and hand the loop to ``call_with_retries``.
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

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Delay after failed attempt number ``attempt`` (1-based): ``min(cap, base·2^(a-1))``
        scaled by a uniform jitter factor in [0.5, 1].

        >>> policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0)
        >>> rng = random.Random(0)
        >>> [0.5 <= policy.backoff(1, rng) <= 1.0, 1.0 <= policy.backoff(2, rng) <= 2.0,
        ...  2.5 <= policy.backoff(9, rng) <= 5.0]
        [True, True, True]
        """
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return ceiling * rng.uniform(0.5, 1.0)


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


async def call_with_retries(attempt_call: Callable[[], Awaitable[T]],
                            classify: Callable[[BaseException], Failure | None],
                            policy: RetryPolicy,
                            sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> T:
    """Await ``attempt_call()`` until it succeeds, retrying what ``classify`` calls retryable.

    ``classify`` returns None for exceptions that are not call failures (they propagate).
    Raises ``ModelCallError(reason, attempts)`` when the attempts run out or a failure is final.
    """
    rng = random.Random(policy.seed)
    reasons: list[str] = []
    for attempt in range(1, policy.max_attempts + 1):
        try:
            return await attempt_call()
        except ModelCallError as error:  # already final (e.g. a malformed body)
            raise ModelCallError(error.reason, attempt) from None
        except Exception as error:  # noqa: BLE001 - classified below, re-raised if unknown
            failure = classify(error)
            if failure is None:
                raise
        reasons.append(failure.reason)
        if not failure.retryable:
            raise ModelCallError(failure.reason, attempt)
        if attempt == policy.max_attempts:
            break
        delay = policy.backoff(attempt, rng)
        if failure.retry_after_s is not None:
            delay = min(failure.retry_after_s, policy.max_retry_after_s)
        await sleep(delay)
    plural = "s" if policy.max_attempts != 1 else ""
    raise ModelCallError(f"gave up after {policy.max_attempts} attempt{plural}: {reasons[-1]}",
                         policy.max_attempts)
