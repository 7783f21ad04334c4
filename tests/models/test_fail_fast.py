"""Fail fast against broken servers (real HTTP on 127.0.0.1): per-attempt wall-time limits that
slow bodies cannot stretch, a per-call deadline, and connection errors named as such."""

import socket
import time

import pytest

from memlens.models import GenerationParams, ModelCallError
from memlens.models.loopback import LoopbackServer
from memlens.models.openai_compat import OpenAIModel
from memlens.models.retry import AuthenticationFailed, RetryPolicy

USER = [{"role": "user", "content": "hi"}]


def call(base_url, timeout_s, attempts, base_delay_s=0.05):
    model = OpenAIModel("m", base_url, timeout_s=timeout_s,
                        retry=RetryPolicy(max_attempts=attempts, base_delay_s=base_delay_s, seed=0))
    started = time.monotonic()
    try:
        with pytest.raises(ModelCallError) as failure:
            model.complete(USER, GenerationParams())
    finally:
        model.close()
    return failure.value, time.monotonic() - started, model


def test_hanging_server_each_call_ends_within_its_deadline():
    with LoopbackServer(faults=lambda index, body: "hang", hang_s=10) as server:
        error, elapsed, model = call(server.base_url, 0.5, 2)
        requests = len(server.requests)
    # deadline = 0.5 s x 2 attempts + the backoff ceiling 0.05 s
    assert model.call_deadline_s == pytest.approx(1.05)
    # the bound is the behaviour (the server hangs 10 s); the slack absorbs a loaded machine
    assert 1.0 <= elapsed < 1.05 + 1.5
    assert requests == 2
    assert error.reason == "gave up after 2 attempts: timeout after 0.5s"


def test_trickling_body_cannot_outlive_the_timeout():
    # one byte every 0.2 s: every read succeeds well within 0.5 s, the whole body takes minutes
    with LoopbackServer(faults=lambda index, body: "trickle:0.2") as server:
        error, elapsed, _ = call(server.base_url, 0.5, 2)
    assert elapsed < 1.05 + 1.5  # the whole body would take minutes
    assert error.reason == "gave up after 2 attempts: timeout after 0.5s"


@pytest.mark.parametrize("fault", ["close", "reset"])
def test_closed_connection_is_a_connection_error_not_a_timeout(fault):
    with LoopbackServer(faults=[fault] * 2) as server:
        error, elapsed, _ = call(server.base_url, 5, 2)
    assert error.reason.startswith("gave up after 2 attempts: connection error: connection ")
    assert "timeout" not in error.reason and elapsed < 4  # not the 2 x 5 s timeout


def test_refused_connection_is_named():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    error, _, _ = call(f"http://127.0.0.1:{port}/v1", 5, 1)
    assert error.reason.startswith("gave up after 1 attempt: connection error: connection refused")


@pytest.mark.parametrize("status", [401, 403])
def test_auth_refusal_is_final_and_typed(status, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    with LoopbackServer(faults=[str(status)] * 3) as server:
        error, _, _ = call(server.base_url, 5, 3)
        requests = len(server.requests)
    assert isinstance(error, AuthenticationFailed) and error.status == status
    assert requests == 1 and error.attempts == 1
    assert error.reason.startswith(f"HTTP {status}: ") and "check the API key variable" in error.reason
    assert "sk-secret-123" not in error.reason
