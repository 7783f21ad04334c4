"""run_requests over real HTTP: the OpenAI-compatible backend against the loopback server."""

import pytest

from memlens.engine import run_requests
from memlens.models import ChatRequest, GenerationParams, ModelCallError, get_model
from memlens.models.loopback import LoopbackServer
from memlens.models.retry import RetryPolicy
from memlens.store import RunStore

SECRET = "sk-memlens-test-0123456789abcdef"


def ask(text):
    return ChatRequest(({"role": "user", "content": text},), GenerationParams(max_tokens=16))


def test_loopback_run_resume_and_no_key_anywhere(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    requests = [ask(f"q{i}") for i in range(30)] + [ask("q0")]
    faults = ["ok"] * 5 + ["401"]  # the 6th request fails for good (401 is not retried)
    with LoopbackServer(latency_s=0.01, faults=faults) as server, RunStore(tmp_path) as store:
        model = get_model(f"openai:test-model@{server.base_url}", max_concurrency=8,
                          retry=RetryPolicy(max_attempts=1))
        results = run_requests(model, requests, store, concurrency=8)
        assert len(server.requests) == 30  # the duplicate q0 was not sent
        failed = [r for r in results if isinstance(r, ModelCallError)]
        assert len(failed) == 1 and "401" in failed[0].reason
        assert results[0].text == "echo: q0" and results[30].text == "echo: q0"
        headers = {name.lower(): value for name, value in server.requests[0].headers.items()}
        assert headers["authorization"] == f"Bearer {SECRET}"  # the key was really used
        again = run_requests(model, requests, store, progress=False)
        assert len(server.requests) == 31  # only the failed one was retried
        assert all(not isinstance(r, ModelCallError) for r in again)
        store.export("responses", tmp_path / "responses.jsonl")
    stored = b"".join(path.read_bytes() for path in tmp_path.rglob("*") if path.is_file())
    captured = capsys.readouterr()
    assert SECRET.encode() not in stored
    assert SECRET not in captured.out + captured.err


@pytest.mark.parametrize("concurrency", [4])
def test_api_concurrency_bound_holds_over_http(concurrency):
    with LoopbackServer(latency_s=0.02) as server:
        model = get_model(f"openai:m@{server.base_url}", max_concurrency=64)
        run_requests(model, [ask(f"q{i}") for i in range(24)], concurrency=concurrency,
                     progress=False)
        times = sorted(request.received_at for request in server.requests)
    # with a bound of 4 and 20 ms per call, no 5 requests can arrive within 10 ms of each other
    assert min(later - earlier for earlier, later in zip(times, times[4:], strict=False)) > 0.01
