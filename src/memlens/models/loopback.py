"""A loopback OpenAI- and Anthropic-compatible HTTP server for tests, benchmarks and demos.

Real HTTP on 127.0.0.1 (a ``ThreadingHTTPServer`` with daemon threads), configurable latency and
scripted faults, so API backends are exercised exactly as against a remote service.

Endpoints: ``POST /v1/chat/completions`` (OpenAI), ``POST /v1/messages`` (Anthropic Messages),
``GET /v1/models``. Streaming is not served.

Faults, one per request in arrival order (requests past the end of the list get ``"ok"``), or a
callable ``faults(request_index, request_json) -> str``:

- ``"ok"`` — a normal reply;
- ``"429"``, ``"429:retry-after=2"``, ``"503:retry-after=Wed, 21 Oct 2015 07:28:00 GMT"`` — that
  HTTP status with a JSON error body and, optionally, a ``Retry-After`` header;
- any other status such as ``"500"``, ``"400"``, ``"401"``;
- ``"timeout"`` (or ``"hang"``) — hold the request for ``hang_s`` seconds (or until the server
  stops), then close;
- ``"trickle"``, ``"trickle:0.5"`` — a normal reply whose headers come at once and whose body
  comes one byte every 2 s (or the given seconds): no single read ever waits long;
- ``"malformed"`` — status 200 with a body that is not JSON;
- ``"no_choices"`` — status 200 with valid JSON lacking ``choices`` / ``content``;
- ``"empty"`` — status 200 with a well-formed reply whose content is empty (finish ``stop``);
- ``"drop"`` (or ``"close"``) — close the connection without any response;
- ``"reset"`` — abort the connection with a TCP reset (RST) without any response.

>>> import json, urllib.request
>>> with LoopbackServer(faults=["500"]) as server:
...     request = urllib.request.Request(server.base_url + "/chat/completions",
...         data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode())
...     try:
...         urllib.request.urlopen(request)
...     except urllib.error.HTTPError as error:
...         status = error.code
...     reply = json.load(urllib.request.urlopen(request))
>>> status, reply["choices"][0]["message"]["content"], [r.fault for r in server.requests]
(500, 'echo: hi', ['500', 'ok'])
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | dict
Responder = Callable[[dict], Reply]
FaultSchedule = Sequence[str] | Callable[[int, dict], str] | None
OVER_CAPACITY = "429:capacity"
"""The fault recorded for a POST refused because ``capacity`` calls were in flight."""


@dataclass
class ReceivedRequest:
    """One request the server received (for assertions)."""

    index: int
    path: str
    headers: dict[str, str]
    body: dict | None
    fault: str
    received_at: float = field(default_factory=time.monotonic)


def echo_responder(request_json: dict) -> str:
    """Default reply: ``"echo: "`` + the text of the last user message.

    >>> echo_responder({"messages": [{"role": "user", "content": "hello"}]})
    'echo: hello'
    """
    for message in reversed(request_json.get("messages") or []):
        if message.get("role") == "user":
            return "echo: " + _content_text(message.get("content"))
    return "echo: "


def _content_text(content: Any) -> str:
    if isinstance(content, list):  # content blocks (Anthropic / OpenAI multi-part)
        return "".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return "" if content is None else str(content)


def _word_count(request_json: dict) -> int:
    messages = request_json.get("messages") or []
    words = sum(len(_content_text(m.get("content")).split()) for m in messages if isinstance(m, dict))
    return words + len(str(request_json.get("system", "")).split())


def _normalise_reply(reply: Reply) -> dict:
    if isinstance(reply, str):
        return {"content": reply, "tool_calls": [], "finish_reason": None}
    return {
        "content": reply.get("content", ""),
        "tool_calls": list(reply.get("tool_calls") or []),
        "finish_reason": reply.get("finish_reason"),
    }


def openai_body(request_json: dict, reply: Reply) -> dict:
    """The ``/v1/chat/completions`` JSON for ``reply`` (text, or dict with ``tool_calls`` given
    as ``{"name", "arguments"}`` where arguments is a JSON string or an object)."""
    parts = _normalise_reply(reply)
    message: dict[str, Any] = {"role": "assistant", "content": parts["content"]}
    if parts["tool_calls"]:
        message["tool_calls"] = [
            {"id": f"call_{index}", "type": "function",
             "function": {"name": call["name"], "arguments": _arguments_text(call)}}
            for index, call in enumerate(parts["tool_calls"])
        ]
    finish = parts["finish_reason"] or ("tool_calls" if parts["tool_calls"] else "stop")
    completion_tokens = len(str(parts["content"] or "").split())
    prompt_tokens = _word_count(request_json)
    return {
        "id": "chatcmpl-" + uuid.uuid4().hex[:12], "object": "chat.completion",
        "created": int(time.time()), "model": request_json.get("model", "loopback"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def anthropic_body(request_json: dict, reply: Reply) -> dict:
    """The Anthropic ``/v1/messages`` JSON for ``reply``."""
    parts = _normalise_reply(reply)
    content: list[dict] = []
    if parts["content"]:
        content.append({"type": "text", "text": parts["content"]})
    for index, call in enumerate(parts["tool_calls"]):
        arguments = call.get("arguments", {})
        if isinstance(arguments, str):
            arguments = json.loads(arguments)
        content.append({"type": "tool_use", "id": f"toolu_{index}", "name": call["name"],
                        "input": arguments})
    stop = parts["finish_reason"] or ("tool_use" if parts["tool_calls"] else "end_turn")
    return {
        "id": "msg_" + uuid.uuid4().hex[:12], "type": "message", "role": "assistant",
        "model": request_json.get("model", "loopback"), "content": content,
        "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": _word_count(request_json),
                  "output_tokens": len(str(parts["content"] or "").split())},
    }


def _arguments_text(call: dict) -> str:
    arguments = call.get("arguments", {})
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, the body waits for the client's
    # delayed ACK (~40 ms on Linux), which capped 128-way throughput at 0.7-0.8 of the bound.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Stay quiet: tests and benchmarks read their own output."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        n_ctx = self.server.owner.n_ctx
        if self.path.rstrip("/").endswith("/v1/models"):
            self._send(200, {"object": "list", "data": [
                {"id": "loopback", "object": "model", "owned_by": "memlens"}]})
        elif self.path.rstrip("/") == "/props" and n_ctx is not None:  # llama.cpp's shape
            self._send(200, {"default_generation_settings": {"n_ctx": n_ctx}, "total_slots": 1})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        loopback: LoopbackServer = self.server.owner
        fault = loopback._record(self.path, dict(self.headers.items()), body)
        if fault == OVER_CAPACITY:  # answered at once, like a gateway's rate limiter
            self._respond(loopback, fault, body)
            return
        self._counted = True
        slot = loopback._slots
        if slot is not None:  # a server with n slots: the others queue, like llama.cpp's
            slot.acquire()
        try:
            if loopback.latency_s:
                loopback._stopping.wait(loopback.latency_s)
            self._respond(loopback, fault, body)
        finally:
            self._uncount(loopback)
            if slot is not None:
                slot.release()

    def _uncount(self, loopback: LoopbackServer) -> None:
        """Leave ``in_flight`` once: just before a reply's body is written (the client may
        send its next call the moment it has read it, before this thread runs on), else when
        the request ends."""
        if getattr(self, "_counted", False):
            self._counted = False
            loopback._leave()

    def _respond(self, loopback: LoopbackServer, fault: str, body: Any) -> None:
        kind, _, option = fault.partition(":")
        if kind in ("drop", "close"):
            self.close_connection = True
            return
        if kind == "reset":
            # SO_LINGER on with a zero timeout: close() sends RST instead of FIN
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        if kind in ("timeout", "hang"):
            loopback._stopping.wait(loopback.hang_s)
            self.close_connection = True
            return
        if kind == "trickle":
            self._trickle(loopback, body, float(option) if option else 2.0)
            return
        if kind == "empty":
            self._send(200, openai_body(body if isinstance(body, dict) else {},
                                        {"content": "", "finish_reason": "stop"}))
            return
        if kind == "malformed":
            self._send_raw(200, b'{"choices": [ this is not json', "application/json")
            return
        if kind == "no_choices":
            self._send(200, {"id": "x", "object": "chat.completion", "unexpected": True})
            return
        if kind.isdigit() and kind != "200":
            headers = {}
            if option.startswith("retry-after="):
                headers["Retry-After"] = option.removeprefix("retry-after=")
            self._send(int(kind), {"error": {"message": f"injected fault {fault}",
                                             "type": "loopback_fault", "code": kind}}, headers)
            return
        self._reply_ok(loopback, body)

    def _reply_ok(self, loopback: LoopbackServer, body: Any) -> None:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._send(400, {"error": {"message": "request body must be JSON with 'messages'",
                                       "type": "invalid_request_error"}})
            return
        try:
            reply = loopback.responder(body)
        except Exception as error:  # the responder is test code: report, don't kill the thread
            self._send(500, {"error": {"message": f"responder failed: {error}", "type": "server"}})
            return
        if self.path.rstrip("/").endswith("/messages"):
            self._send(200, anthropic_body(body, reply))
        else:
            self._send(200, openai_body(body, reply))

    def _trickle(self, loopback: LoopbackServer, body: Any, interval_s: float) -> None:
        """Send a normal OpenAI reply one body byte every ``interval_s`` seconds."""
        data = json.dumps(openai_body(body if isinstance(body, dict) else {}, "slow")).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            for index in range(len(data)):
                self.wfile.write(data[index:index + 1])
                self.wfile.flush()
                if loopback._stopping.wait(interval_s):
                    break
        except OSError:  # the client gave up: that is what this fault tests
            pass
        self.close_connection = True

    def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_raw(self, status: int, data: bytes, content_type: str,
                  headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._uncount(self.server.owner)
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512
    owner: LoopbackServer


class LoopbackServer:
    """A real HTTP server on 127.0.0.1 serving OpenAI / Anthropic chat endpoints.

    ``responder(request_json)`` returns the reply text, or a dict with ``content``,
    ``tool_calls`` (``[{"name", "arguments"}]``) and ``finish_reason``; the default echoes the last
    user message. ``latency_s`` is added to every POST. ``faults`` is described in the module
    docstring. ``hang_s`` bounds how long a ``"timeout"`` fault holds a request. Every POST is
    recorded in ``.requests``. Use as a context manager, or call ``start()`` / ``stop()``.

    ``capacity`` makes a rate-limited server: a POST arriving while ``capacity`` others are in
    flight is answered 429 at once (fault ``"429:capacity"``, not counted in flight); ``None`` (the default)
    serves everything, and it may be changed while serving. ``in_flight`` and
    ``peak_in_flight`` count POSTs being served; ``record_requests=False`` keeps no
    ``ReceivedRequest`` (a long benchmark), only the count ``received``.

    ``slots`` makes a server that serves that many POSTs at once (each for ``latency_s``) and
    queues the others, as llama.cpp's server does with ``--parallel`` slots (None: all at
    once). ``n_ctx`` makes ``GET /props`` report that context size, as llama.cpp's does.
    """

    def __init__(self, responder: Responder | None = None, latency_s: float = 0.0,
                 faults: FaultSchedule = None, port: int = 0, hang_s: float = 30.0,
                 capacity: int | None = None, record_requests: bool = True,
                 slots: int | None = None, n_ctx: int | None = None):
        self.responder: Responder = responder or echo_responder
        self.latency_s = latency_s
        self.faults = faults
        self.port = port
        self.hang_s = hang_s
        self.requests: list[ReceivedRequest] = []
        self.capacity = capacity
        self.record_requests = record_requests
        self.received = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self.throttled = 0
        self.n_ctx = n_ctx
        self._slots = threading.Semaphore(slots) if slots else None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` — what an OpenAI-compatible client takes."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:PORT`` — what the Anthropic client takes as ``base_url``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LoopbackServer:
        """Bind and serve in a daemon thread; returns self."""
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", self.port), _Handler)
        self._server.owner = self
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"loopback-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (held requests are let go)."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _record(self, path: str, headers: dict[str, str], body: Any) -> str:
        with self._lock:
            index = self.received
            self.received += 1
            fault = self._fault_for(index, body)
            if self.capacity is not None and self.in_flight >= self.capacity:
                fault = OVER_CAPACITY
                self.throttled += 1
            else:
                self.in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            if self.record_requests:
                self.requests.append(ReceivedRequest(index, path, headers,
                                                     body if isinstance(body, dict) else None,
                                                     fault))
        return fault

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _fault_for(self, index: int, body: Any) -> str:
        if self.faults is None:
            return "ok"
        if callable(self.faults):
            return str(self.faults(index, body if isinstance(body, dict) else {}))
        return str(self.faults[index]) if index < len(self.faults) else "ok"


def main(argv: list[str] | None = None) -> int:
    """``python -m memlens.models.loopback --port 8000``: serve an echo model until Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m memlens.models.loopback",
                                     description="Serve an OpenAI-compatible echo model on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to each request")
    parser.add_argument("--faults", default="", help="per-request faults separated by ';', e.g. '429:retry-after=1;500;ok'")
    args = parser.parse_args(argv)
    faults = [f for f in args.faults.split(";") if f] or None
    server = LoopbackServer(latency_s=args.latency, faults=faults, port=args.port).start()
    print(f"serving on {server.base_url} (Ctrl-C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
