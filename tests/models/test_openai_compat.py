"""The OpenAI-compatible backend against memlens' own loopback server (real HTTP)."""

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from memlens.errors import MemlensError
from memlens.models import GenerationParams, ModelCallError, get_model
from memlens.models.loopback import LoopbackServer
from memlens.models.openai_compat import OpenAIModel
from memlens.models.retry import RetryPolicy

USER = [{"role": "user", "content": "how are you"}]
FAST = RetryPolicy(max_attempts=4, base_delay_s=0.05, max_delay_s=0.2, seed=0)


def make(server, **options):
    options.setdefault("retry", FAST)
    return OpenAIModel("test-model", server.base_url, **options)


def gaps(server):
    times = [request.received_at for request in server.requests]
    return [later - earlier for earlier, later in zip(times, times[1:], strict=False)]


def test_reply_usage_and_request_body(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with LoopbackServer() as server:
        model = make(server)
        params = GenerationParams(temperature=0.3, top_p=0.9, top_k=7, max_tokens=33, seed=5)
        response = model.complete(USER, params)
        model.close()
    assert response.text == "echo: how are you"
    assert (response.prompt_tokens, response.completion_tokens) == (3, 4)
    assert response.finish_reason == "stop"
    assert response.latency_s > 0
    body = server.requests[0].body
    assert body["model"] == "test-model" and body["messages"] == USER
    assert (body["temperature"], body["top_p"], body["top_k"], body["max_tokens"], body["seed"]) == (
        0.3, 0.9, 7, 33, 5)
    assert server.requests[0].path == "/v1/chat/completions"
    assert model.model_id == f"openai:test-model@{server.base_url}"


def test_retry_after_is_honoured():
    with LoopbackServer(faults=["429:retry-after=0.5", "ok"]) as server:
        model = make(server)
        response = model.complete(USER, GenerationParams())
        model.close()
    assert response.text == "echo: how are you"
    assert [r.fault for r in server.requests] == ["429:retry-after=0.5", "ok"]
    # Backoff alone would wait at most 0.05 s; the server asked for 0.5 s.
    assert 0.5 <= gaps(server)[0] < 1.5


def test_5xx_and_dropped_connections_back_off_then_succeed():
    with LoopbackServer(faults=["500", "drop", "503", "ok"]) as server:
        model = make(server, retry=RetryPolicy(max_attempts=4, base_delay_s=0.1, max_delay_s=1.0, seed=1))
        response = model.complete(USER, GenerationParams())
        model.close()
    assert response.text == "echo: how are you"
    assert len(server.requests) == 4
    delays = gaps(server)
    # Jittered exponential backoff: attempt a waits in [0.5, 1] x 0.1 x 2^(a-1).
    for attempt, delay in enumerate(delays, start=1):
        assert 0.05 * 2 ** (attempt - 1) <= delay < 0.1 * 2 ** (attempt - 1) + 0.5


def test_gives_up_after_max_attempts_with_reason():
    with LoopbackServer(faults=["500"] * 10) as server:
        model = make(server)
        with pytest.raises(ModelCallError) as failure:
            model.complete(USER, GenerationParams())
        model.close()
    assert failure.value.attempts == 4
    assert len(server.requests) == 4
    assert "gave up after 4 attempts" in failure.value.reason
    assert "HTTP 500" in failure.value.reason


@pytest.mark.parametrize("status", ["400", "401", "404"])
def test_client_errors_fail_at_once(status):
    with LoopbackServer(faults=[status, "ok"]) as server:
        model = make(server)
        with pytest.raises(ModelCallError) as failure:
            model.complete(USER, GenerationParams())
        model.close()
    assert len(server.requests) == 1
    assert failure.value.attempts == 1
    assert failure.value.reason.startswith(f"HTTP {status}")


def test_timeouts_are_retried_then_reported():
    with LoopbackServer(faults=["timeout", "ok"], hang_s=3) as server:
        model = make(server, timeout_s=0.3)
        assert model.complete(USER, GenerationParams()).text == "echo: how are you"
        model.close()
    with LoopbackServer(faults=["timeout"] * 3, hang_s=3) as server:
        model = make(server, timeout_s=0.3, retry=RetryPolicy(max_attempts=2, base_delay_s=0.05))
        with pytest.raises(ModelCallError) as failure:
            model.complete(USER, GenerationParams())
        model.close()
    assert failure.value.reason == "gave up after 2 attempts: timeout after 0.3s"


@pytest.mark.parametrize(("fault", "expected"), [
    ("malformed", "malformed reply: body is not JSON"),
    ("no_choices", "malformed reply: no choices"),
    ("empty", "malformed reply: empty content (finish_reason stop)"),
])
def test_garbled_or_empty_200_is_retried_then_recorded(fault, expected):
    with LoopbackServer(faults=[fault, "ok"]) as server:  # one garbled reply, then a good one
        model = make(server)
        assert model.complete(USER, GenerationParams()).text == "echo: how are you"
        model.close()
    assert len(server.requests) == 2
    with LoopbackServer(faults=[fault] * 3 + ["ok"]) as server:  # 1 + 2 extra tries, then give up
        model = make(server)
        with pytest.raises(ModelCallError) as failure:
            model.complete(USER, GenerationParams())
        model.close()
    assert failure.value.reason.startswith(expected)
    assert failure.value.reason.endswith("(3 tries)") and failure.value.attempts == 3
    assert len(server.requests) == 3


def test_empty_reply_cut_by_length_is_a_reply():
    with LoopbackServer(lambda body: {"content": "", "finish_reason": "length"}) as server:
        model = make(server)
        response = model.complete(USER, GenerationParams())
        model.close()
    assert (response.text, response.finish_reason, len(server.requests)) == ("", "length", 1)


def test_tool_calls_and_json_schema_go_through_the_api():
    tool = {"type": "function", "function": {"name": "book", "parameters": {
        "type": "object", "properties": {"speed": {"type": "string"}}}}}

    def responder(request):
        if request.get("tools"):
            return {"tool_calls": [{"name": "book", "arguments": {"speed": "fast"}}]}
        return '{"ok": true}'

    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    with LoopbackServer(responder=responder) as server:
        model = make(server)
        called = model.complete(USER, GenerationParams(tools=(tool,), tool_choice="required"))
        structured = model.complete(USER, GenerationParams(json_schema=schema))
        model.close()
    assert called.finish_reason == "tool_calls"
    assert [(c.name, c.arguments()) for c in called.tool_calls] == [("book", {"speed": "fast"})]
    assert server.requests[0].body["tools"] == [tool]
    assert server.requests[0].body["tool_choice"] == "required"
    assert server.requests[1].body["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
    assert structured.text == '{"ok": true}'


def test_api_key_only_in_the_authorization_header(monkeypatch):
    secret = "sk-test-DO-NOT-LEAK-1234"
    monkeypatch.setenv("MY_KEY", secret)
    with LoopbackServer(faults=["401"]) as server:
        model = get_model(f"openai:m@{server.base_url}", api_key_env="MY_KEY", retry=FAST)
        with pytest.raises(ModelCallError) as failure:
            model.complete(USER, GenerationParams())
        model.close()
    headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    assert headers["authorization"] == f"Bearer {secret}"
    for text in (model.model_id, repr(model), failure.value.reason, str(failure.value)):
        assert secret not in text
    assert "check the API key" in failure.value.reason


def test_remote_server_without_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MemlensError, match="set the environment variable OPENAI_API_KEY"):
        get_model("openai:gpt-4.1-mini")


def test_top_k_not_sent_to_api_openai_com(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    model = get_model("openai:gpt-4.1-mini")
    assert model.model_id == "openai:gpt-4.1-mini"
    from memlens.models.openai_compat import build_request

    request = build_request("gpt-4.1-mini", USER, GenerationParams(top_k=50), official=True)
    assert "extra_body" not in request and request["max_completion_tokens"] == 2048


def test_concurrency_is_bounded_async_and_sync():
    active = {"now": 0, "peak": 0}
    lock = threading.Lock()

    def responder(request):
        with lock:
            active["now"] += 1
            active["peak"] = max(active["peak"], active["now"])
        time.sleep(0.1)
        with lock:
            active["now"] -= 1
        return "ok"

    with LoopbackServer(responder=responder) as server:
        model = make(server, max_concurrency=3)

        async def many():
            return await asyncio.gather(*(model.acomplete(USER, GenerationParams()) for _ in range(9)))

        replies = asyncio.run(many())
        assert active["peak"] == 3
        active["peak"] = 0
        with ThreadPoolExecutor(8) as pool:
            sync_replies = list(pool.map(lambda _: model.complete(USER, GenerationParams()), range(8)))
        model.close()
    assert [r.text for r in replies + sync_replies] == ["ok"] * 17
    assert active["peak"] == 3
