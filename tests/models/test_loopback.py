"""The loopback server itself: routes, fault schedule, recording, concurrency."""

import asyncio
import http.client
import json
import threading

from memlens.models import GenerationParams
from memlens.models.loopback import LoopbackServer, anthropic_body, openai_body
from memlens.models.openai_compat import OpenAIModel


def post(server, path, payload, raw=None):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    connection.request("POST", path, body=raw if raw is not None else json.dumps(payload))
    response = connection.getresponse()
    result = response.status, dict(response.getheaders()), response.read()
    connection.close()
    return result


CHAT = {"model": "m", "messages": [{"role": "user", "content": "two words"}]}


def test_schedule_statuses_headers_and_records():
    faults = ["429:retry-after=7", "503:retry-after=Wed, 21 Oct 2015 07:28:00 GMT", "malformed",
              "no_choices", "ok"]
    with LoopbackServer(faults=faults) as server:
        results = [post(server, "/v1/chat/completions", CHAT) for _ in range(6)]
    statuses = [status for status, _, _ in results]
    assert statuses == [429, 503, 200, 200, 200, 200]
    assert results[0][1]["Retry-After"] == "7"
    assert results[1][1]["Retry-After"] == "Wed, 21 Oct 2015 07:28:00 GMT"
    assert results[2][2] == b'{"choices": [ this is not json'
    assert "choices" not in json.loads(results[3][2])
    assert json.loads(results[5][2])["choices"][0]["message"]["content"] == "echo: two words"
    assert [r.fault for r in server.requests] == faults + ["ok"]
    assert [r.index for r in server.requests] == list(range(6))
    assert server.requests[0].body == CHAT


def test_callable_faults_drop_and_routes():
    with LoopbackServer(faults=lambda index, body: "drop" if index == 0 else "ok") as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        connection.request("POST", "/v1/chat/completions", body=json.dumps(CHAT))
        try:
            connection.getresponse()
            dropped = False
        except (http.client.RemoteDisconnected, ConnectionError):
            dropped = True
        connection.close()
        assert dropped
        status, _, body = post(server, "/v1/chat/completions", None, raw="not json")
        assert status == 400 and b"must be JSON" in body
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        connection.request("GET", "/v1/models")
        assert json.loads(connection.getresponse().read())["data"][0]["id"] == "loopback"
        connection.request("GET", "/elsewhere")
        assert connection.getresponse().status == 404
        connection.close()


def test_responder_errors_become_500():
    def responder(request):
        raise KeyError("boom")

    with LoopbackServer(responder=responder) as server:
        status, _, body = post(server, "/v1/chat/completions", CHAT)
    assert status == 500 and b"responder failed" in body


def test_reply_bodies():
    request = {"model": "m", "system": "a b", "messages": [{"role": "user", "content": "c d e"}]}
    reply = {"content": "", "tool_calls": [{"name": "f", "arguments": '{"x": 1}'}]}
    body = openai_body(request, reply)
    assert body["choices"][0]["finish_reason"] == "tool_calls"
    assert body["choices"][0]["message"]["tool_calls"][0]["function"] == {
        "name": "f", "arguments": '{"x": 1}'}
    assert body["usage"] == {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5}
    message = anthropic_body(request, reply)
    assert message["content"] == [{"type": "tool_use", "id": "toolu_0", "name": "f", "input": {"x": 1}}]
    assert message["stop_reason"] == "tool_use" and message["usage"]["input_tokens"] == 5


def test_128_requests_in_flight_at_once():
    barrier = threading.Barrier(128, timeout=20)

    def responder(request):
        barrier.wait()  # only returns once all 128 requests are inside the server together
        return "together"

    with LoopbackServer(responder=responder, latency_s=0.2) as server:
        model = OpenAIModel("m", server.base_url, max_concurrency=128, timeout_s=30)

        async def many():
            model._client_for_running_loop()[1].limit = 128  # slow start opened (tested apart)
            return await asyncio.gather(*(model.acomplete(
                [{"role": "user", "content": str(i)}], GenerationParams()) for i in range(128)))

        replies = asyncio.run(many())
        model.close()
    assert [r.text for r in replies] == ["together"] * 128
    assert len(server.requests) == 128
