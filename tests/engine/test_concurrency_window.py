"""``--concurrency`` is honoured by API backends, and their adaptive bound backs off on 429s and
climbs back (real HTTP on 127.0.0.1: the loopback server with a capacity that answers 429)."""

import pytest

from memlens.engine import run_requests
from memlens.models import ChatRequest, GenerationParams
from memlens.models.loopback import OVER_CAPACITY, LoopbackServer
from memlens.models.retry import RetryPolicy
from memlens.models.window import AdaptiveLimit

pytest.importorskip("openai")


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")


def requests(n, tag="c"):
    return [ChatRequest(({"role": "user", "content": f"{tag} {i}"},),
                        GenerationParams(max_tokens=8)) for i in range(n)]


def model(server, **options):
    from memlens.models.openai_compat import OpenAIModel

    return OpenAIModel("loop", server.base_url, **options)


def test_concurrency_above_the_backend_default_is_honoured():
    # the backend's own default bound is 32; --concurrency 96 must give ~96 calls in flight
    # (once slow start has opened the window: 2, then +1 per success)
    with LoopbackServer(latency_s=0.3, record_requests=False) as server:
        backend = model(server)
        assert backend.max_concurrency == 32
        outcomes = run_requests(backend, requests(400), concurrency=96, progress=False)
    assert all(not hasattr(o, "reason") for o in outcomes)
    assert server.peak_in_flight > 64  # 32 before the fix
    assert backend.max_concurrency == 96


def test_window_halves_on_429_and_climbs_back():
    # phase 1: the server serves 8 at a time, the client asks for 64: 429s halve the bound
    # (about 64 -> 32 -> 16 -> 8); phase 2: capacity lifted, the bound climbs back by about
    # one slot per window of successes.
    retry = RetryPolicy(max_attempts=30, base_delay_s=0.01, max_delay_s=0.05, seed=1)
    with LoopbackServer(latency_s=0.05, capacity=8, record_requests=False) as server:
        backend = model(server, retry=retry)
        seen: list[AdaptiveLimit] = []
        original = backend._client_for_running_loop

        def spy():
            entry = original()
            if not seen or seen[-1] is not entry[1]:
                seen.append(entry[1])
            return entry

        backend._client_for_running_loop = spy
        first = run_requests(backend, requests(400, "a"), concurrency=64, progress=False)
        window = seen[-1]
        assert all(not hasattr(o, "reason") for o in first)  # every call got through in the end
        assert server.throttled > 0 and window.decreases >= 2
        lowest = min(event.limit for event in window.events)
        assert lowest <= 16  # backed off to near the server's capacity of 8
        assert window.throttles >= window.decreases
        server.capacity = None
        refused_before = server.throttled
        # same loop-per-run engine: carry the learnt bound over by running on one window
        recovered = AdaptiveLimit(64, limit=lowest)
        backend._client_for_running_loop = lambda: (original()[0], recovered)
        second = run_requests(backend, requests(1500, "b"), concurrency=64, progress=False)
        assert all(not hasattr(o, "reason") for o in second)
    assert server.throttled == refused_before  # no more 429s once capacity is lifted
    assert recovered.limit > 2 * lowest  # climbed back (additive increase)
    assert recovered.peak_in_flight > lowest


def test_over_capacity_is_answered_at_once_and_recorded():
    import http.client
    import json
    import threading

    with LoopbackServer(latency_s=0.5, capacity=1) as server:
        def slow():
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
            connection.request("POST", "/v1/chat/completions", body=json.dumps(
                {"model": "m", "messages": [{"role": "user", "content": "x"}]}))
            connection.getresponse().read()

        holder = threading.Thread(target=slow)
        holder.start()
        while server.in_flight == 0:
            pass
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        connection.request("POST", "/v1/chat/completions", body=json.dumps(
            {"model": "m", "messages": [{"role": "user", "content": "y"}]}))
        status = connection.getresponse().status
        holder.join()
    assert status == 429
    assert [r.fault for r in server.requests] == ["ok", OVER_CAPACITY]
    assert server.peak_in_flight == 1 and server.in_flight == 0


def test_a_refused_key_costs_at_most_eight_requests():
    # issue 23 (9): 26-32 requests left before the stop, one window of them; slow start sends 2,
    # the first 401 drops the window to one call, and the breaker stops on the second refusal
    from memlens.engine.breaker import AuthenticationStopped

    with LoopbackServer(faults=lambda index, body: "401", latency_s=0.02) as server:
        with pytest.raises(AuthenticationStopped):
            run_requests(model(server), requests(200), progress=False)
    assert 2 <= server.received <= 8
    assert [r.fault for r in server.requests] == ["401"] * server.received


def test_a_one_slot_server_at_the_default_concurrency_gives_no_timeouts():
    # a local server with one slot (like llama.cpp's default) answers one call at a time; at the
    # default concurrency (32) the 32nd call used to wait 32 x 0.1 s = 3.2 s, past a 2 s time
    # limit. The window opens while calls come back fast and backs off when they slow down.
    # Slow start reacts a window late, so it ends once a call takes 1/8 of the limit: before
    # that, peaks of 9-14 in flight timed a call out in 2 of 12 runs on a loaded machine (and
    # once in CI); with it, peaks of 6-11 and 0 of 12 (memlens.models.window).
    retry = RetryPolicy(max_attempts=1)  # a timed-out attempt fails its call: visible below
    with LoopbackServer(latency_s=0.1, slots=1, record_requests=False) as server:
        backend = model(server, timeout_s=2.0, retry=retry)
        assert backend.max_concurrency == 32
        seen: list[AdaptiveLimit] = []
        original = backend._client_for_running_loop

        def spy():
            entry = original()
            seen.append(entry[1])
            return entry

        backend._client_for_running_loop = spy
        outcomes = run_requests(backend, requests(60), progress=False, stop_early=False)
    failed = [o.reason for o in outcomes if hasattr(o, "reason")]
    assert failed == []
    window = seen[-1]
    assert window.timeouts == 0 and server.received == 60
    assert "slow start ended" in [event.reason for event in window.events]
    assert 2 <= window.peak_in_flight <= 12  # opened beyond the start, never near 32


def test_slow_start_ends_when_calls_slow_down_before_they_near_the_limit():
    window = AdaptiveLimit(32, timeout_s=8.0)
    window.succeeded(0.1, window.epoch)  # fastest 0.1 s: slow start, +1
    window.succeeded(0.9, window.epoch)  # 9 x the fastest but under 1/8 of the limit: +1
    assert window.limit == 4 and window.ssthresh == 32
    window.succeeded(1.0, window.epoch)  # 1/8 of the limit: slow start ends, then +1/limit
    assert window.ssthresh == 4 and window.events[-1].reason == "slow start ended"
    assert window.limit == 4.25 and window.decreases == 0
    window.succeeded(1.0, window.epoch)  # already ended: only the additive step
    assert window.limit == 4.25 + 1 / 4.25 and window.events[-1].reason == "slow start ended"


def test_the_window_backs_off_on_timeouts():
    window = AdaptiveLimit(32, limit=16, timeout_s=1.0)
    sent = window.epoch
    window.timed_out(sent)
    window.timed_out(sent)  # the same burst: counted once
    assert window.limit == 8 and window.timeouts == 2 and window.decreases == 1
    window.succeeded(0.1, window.epoch)  # fast: opens (additively: above ssthresh 8)
    assert 8 < window.limit < 9
    window.succeeded(0.9, window.epoch)  # 9 x the fastest and past half the limit: halves
    assert window.limit < 4.6 and window.events[-1].reason == "slow"
    held = window.limit
    window.succeeded(0.3, window.epoch)  # between a quarter and half of the limit: holds
    assert window.limit == held
