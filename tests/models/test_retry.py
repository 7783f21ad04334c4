"""Retry rules as plain functions: delays chosen, caps, final failures."""

import asyncio
import email.utils
import time

import pytest

from memlens.models import ModelCallError
from memlens.models.api_base import status_failure
from memlens.models.retry import Failure, RetryPolicy, call_with_retries


def run_with(failures, policy):
    """Drive call_with_retries with scripted failures; return (result or error, slept delays)."""
    slept, attempts = [], iter(failures)

    async def attempt():
        failure = next(attempts)
        if failure is None:
            return "done"
        raise RuntimeError(failure)

    def classify(error):
        reason = error.args[0]
        return reason if isinstance(reason, Failure) else None  # None: not a call failure

    async def sleep(delay):
        slept.append(delay)

    async def main():
        try:
            return await call_with_retries(attempt, classify, policy, sleep=sleep)
        except ModelCallError as error:
            return error

    return asyncio.run(main()), slept


def test_backoff_doubles_within_jitter_and_retry_after_wins():
    policy = RetryPolicy(max_attempts=5, base_delay_s=1.0, max_delay_s=3.0, max_retry_after_s=10,
                         seed=42)
    transient = Failure("HTTP 500", True)
    result, slept = run_with([transient, transient, transient,
                              Failure("HTTP 429", True, retry_after_s=60.0), None], policy)
    assert result == "done"
    assert 0.5 <= slept[0] <= 1.0 and 1.0 <= slept[1] <= 2.0 and 1.5 <= slept[2] <= 3.0
    assert slept[3] == 10  # Retry-After of 60 s capped at max_retry_after_s
    again, slept_again = run_with([transient, transient, transient,
                                   Failure("HTTP 429", True, retry_after_s=60.0), None], policy)
    assert slept_again == slept  # same seed, same jitter


def test_final_failure_and_exhaustion():
    policy = RetryPolicy(max_attempts=3, base_delay_s=0.1, seed=0)
    error, slept = run_with([Failure("HTTP 500", True), Failure("HTTP 401: bad key", False)], policy)
    assert (error.reason, error.attempts, len(slept)) == ("HTTP 401: bad key", 2, 1)
    error, slept = run_with([Failure("timeout after 1s", True)] * 3, policy)
    assert (error.reason, error.attempts, len(slept)) == (
        "gave up after 3 attempts: timeout after 1s", 3, 2)


def test_unclassified_exceptions_propagate():
    with pytest.raises(RuntimeError, match="bug"):
        run_with(["bug"], RetryPolicy())


def test_status_failure_reads_headers():
    assert status_failure(429, "slow down", {"retry-after-ms": "1500"}).retry_after_s == 1.5
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    waited = status_failure(503, "busy", {"retry-after": future}).retry_after_s
    assert 28 <= waited <= 30
    final = status_failure(404, "no such model", {})
    assert (final.retryable, final.retry_after_s) == (False, None)
    assert final.reason == "HTTP 404: no such model (check the model name and base URL)"
    assert status_failure(529, "overloaded", None).retryable
