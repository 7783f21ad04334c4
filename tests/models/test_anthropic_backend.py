"""The Anthropic backend against the loopback server's /v1/messages endpoint (real HTTP)."""

import json

import pytest

from memlens.models import GenerationParams, ModelCallError, get_model
from memlens.models.loopback import LoopbackServer
from memlens.models.retry import RetryPolicy

FAST = RetryPolicy(max_attempts=3, base_delay_s=0.02, seed=0)
MESSAGES = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hello there"}]


def test_reply_body_and_key_header(monkeypatch):
    secret = "sk-ant-test-SECRET-99"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    with LoopbackServer(faults=["529", "ok"]) as server:
        model = get_model(f"anthropic:claude-x@{server.base_url}", retry=FAST)
        response = model.complete(MESSAGES, GenerationParams(temperature=0.2, top_k=9, max_tokens=50))
        model.close()
    assert response.text == "echo: hello there"
    assert (response.prompt_tokens, response.completion_tokens, response.finish_reason) == (4, 3, "stop")
    request = server.requests[1]
    assert request.path == "/v1/messages"
    assert request.body == {"model": "claude-x", "max_tokens": 50, "system": "Be kind.",
                            "messages": [MESSAGES[1]], "temperature": 0.2, "top_k": 9}
    headers = {k.lower(): v for k, v in request.headers.items()}
    # SDK versions differ: x-api-key (1.x) or a bearer token (2.x).
    assert secret in headers.get("x-api-key", "") + headers.get("authorization", "")
    assert secret not in repr(model) + model.model_id


def test_tools_and_json_schema(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    tool = {"type": "function", "function": {"name": "pick", "description": "d",
                                             "parameters": {"type": "object"}}}

    def responder(request):
        name = request["tools"][0]["name"]
        return {"tool_calls": [{"name": name, "arguments": {"level": 2}}]}

    with LoopbackServer(responder=responder) as server:
        model = get_model(f"anthropic:c@{server.base_url}", retry=FAST)
        called = model.complete(MESSAGES, GenerationParams(tools=(tool,), tool_choice="required"))
        structured = model.complete(MESSAGES, GenerationParams(json_schema={"type": "object"}))
        model.close()
    assert [(c.name, c.arguments()) for c in called.tool_calls] == [("pick", {"level": 2})]
    assert called.finish_reason == "tool_calls"
    assert server.requests[0].body["tools"] == [{"name": "pick", "description": "d",
                                                 "input_schema": {"type": "object"}}]
    assert server.requests[0].body["tool_choice"] == {"type": "any"}
    assert json.loads(structured.text) == {"level": 2} and structured.tool_calls == []
    assert server.requests[1].body["tool_choice"] == {"type": "tool", "name": "respond"}


def test_malformed_and_exhausted(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    # a garbled 200 is tried 1 + 2 times (its own budget), then recorded
    with LoopbackServer(faults=["malformed"] * 3 + ["500", "500", "500"]) as server:
        model = get_model(f"anthropic:c@{server.base_url}", retry=FAST)
        with pytest.raises(ModelCallError, match=r"^malformed reply: body is not JSON: .*\(3 tries\)$"):
            model.complete(MESSAGES, GenerationParams())
        with pytest.raises(ModelCallError) as failure:
            model.complete(MESSAGES, GenerationParams())
        model.close()
    assert failure.value.attempts == 3 and "HTTP 500" in failure.value.reason
    assert len(server.requests) == 6
