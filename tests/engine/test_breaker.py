"""The engine's circuit breaker: a run against a server that cannot succeed stops early with
one clear error, and everything finished before stays in the store (so the run resumes)."""

import random

import pytest

from memlens.engine import AuthenticationStopped, FailureRateStopped, RunStopped, run_requests
from memlens.engine.breaker import CallBreaker
from memlens.models import ChatRequest, ChatResponse, GenerationParams, ModelCallError
from memlens.models.loopback import LoopbackServer
from memlens.models.openai_compat import OpenAIModel
from memlens.models.retry import AuthenticationFailed, RetryPolicy
from memlens.store import RunStore


def asks(count):
    return [ChatRequest(({"role": "user", "content": f"q{i}"},), GenerationParams())
            for i in range(count)]


def model_for(server, attempts=1):
    return OpenAIModel("m", server.base_url, timeout_s=5, max_concurrency=1,
                       retry=RetryPolicy(max_attempts=attempts, base_delay_s=0.01, seed=0))


def test_401_stops_the_run_after_two_refusals_and_keeps_what_finished(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-print")
    with LoopbackServer(faults=["ok", "ok"] + ["401"] * 50) as server, \
            RunStore(tmp_path / "run") as store:
        model = model_for(server, attempts=3)
        with pytest.raises(AuthenticationStopped) as stopped:
            run_requests(model, asks(30), store, progress=False)
        model.close()
        requests = len(server.requests)
        stored = len(store.cached_responses([r.cache_key(model.model_id) for r in asks(30)]))
    message = str(stopped.value)
    assert requests == 4  # 2 answered, then 2 refusals in a row; the other 26 never sent
    assert stored == 2
    assert "HTTP 401" in message and "check $OPENAI_API_KEY" in message and "Re-run" in message
    assert "sk-do-not-print" not in message
    assert isinstance(stopped.value, RunStopped) and stopped.value.exit_status == 2


def test_all_500s_trip_the_breaker_after_ten_calls(tmp_path):
    with LoopbackServer(faults=lambda index, body: "500") as server, \
            RunStore(tmp_path / "run") as store:
        model = model_for(server)
        with pytest.raises(FailureRateStopped, match=r"10 of the last 10 calls failed .*"
                                                     r"re-run the same command to resume"):
            run_requests(model, asks(40), store, progress=False)
        model.close()
        assert len(server.requests) == 10
        assert len(store.failures()) == 10  # recorded, and retried by the next run


def test_twenty_percent_500s_do_not_trip_it():
    failing = set(random.Random(7).sample(range(60), 12))  # 20 %, at seeded places
    faults = ["500" if index in failing else "ok" for index in range(60)]
    with LoopbackServer(faults=faults) as server:
        model = model_for(server)
        results = run_requests(model, asks(60), progress=False)
        model.close()
    failed = sum(isinstance(result, ModelCallError) for result in results)
    assert failed == faults.count("500") == 12
    assert len(server.requests) == 60


def test_breaker_rules_by_hand():
    breaker = CallBreaker("m")
    ok, bad = ChatResponse("x"), ModelCallError("HTTP 500")
    for outcome in [bad] * 5 + [ok] * 4:  # 9 finished: below the minimum of 10
        breaker.record(outcome)
    breaker.record(ok)  # 10 finished, 5 of 10 failed: not more than half
    with pytest.raises(FailureRateStopped, match="6 of the last 11 calls failed"):
        breaker.record(bad)
    auth = CallBreaker("m")
    auth.record(AuthenticationFailed("HTTP 401", status=401))
    auth.record(ok)  # a success in between resets the streak
    auth.record(AuthenticationFailed("HTTP 401", status=401))
    with pytest.raises(AuthenticationStopped, match="refused 2 calls in a row with HTTP 403"):
        auth.record(AuthenticationFailed("HTTP 403", status=403))


def test_stop_early_off_records_every_failure():
    with LoopbackServer(faults=lambda index, body: "500") as server:
        model = model_for(server)
        results = run_requests(model, asks(12), progress=False, stop_early=False)
        model.close()
    assert all(isinstance(result, ModelCallError) for result in results)
    assert len(server.requests) == 12
