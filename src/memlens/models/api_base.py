"""Shared plumbing of the async API backends (OpenAI-compatible, Anthropic).

One SDK client and one adaptive concurrency bound (``memlens.models.window``: starting small
and opening as calls succeed, halved on 429, timeouts and queueing latency) per event loop, a sync ``complete`` that runs on a
private loop thread, explicit retries (``memlens.models.retry``) and keys kept out of every message.

Time limits: each attempt gets at most ``timeout_s`` of wall time, a slow (trickling) body
included, and a whole call (all attempts and the waits between them) at most
``timeout_s × max_attempts`` plus the backoff budget (``call_deadline_s``); a ``Retry-After``
that does not fit in what is left ends the call at once.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

from memlens.models.aio import LoopThread
from memlens.models.base import ChatResponse, GenerationParams, Message, ModelCallError
from memlens.models.keys import redact
from memlens.models.retry import (
    RETRYABLE_STATUS,
    THROTTLE_STATUS,
    Failure,
    MalformedReply,
    RetryPolicy,
    call_with_retries,
    parse_retry_after,
)
from memlens.models.window import AdaptiveLimit


class AttemptTimedOut(Exception):
    """One attempt ran past ``timeout_s`` of wall time (however slowly bytes kept arriving)."""


class AsyncAPIModel:
    """Base class: subclasses implement ``_make_client``, ``_attempt`` and ``_classify``."""

    supports_tools = True
    model_id: str

    def __init__(self, *, api_key: str, timeout_s: float, max_concurrency: int,
                 retry: RetryPolicy | None, api_key_env: str = ""):
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if not timeout_s > 0 or timeout_s == float("inf"):
            raise ValueError(f"timeout_s must be a positive finite number, got {timeout_s!r}")
        self._api_key = api_key
        self.api_key_env = api_key_env
        """Name of the environment variable the key came from (for error messages)."""
        self.timeout_s = float(timeout_s)
        self.max_concurrency = int(max_concurrency)
        self.retry = retry or RetryPolicy()
        self._per_loop: dict[asyncio.AbstractEventLoop, tuple[Any, AdaptiveLimit]] = {}
        self._lock = threading.Lock()
        self._bridge: LoopThread | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r})"

    # -- subclass hooks -------------------------------------------------------------------
    def _make_client(self) -> Any:
        raise NotImplementedError

    async def _attempt(self, client: Any, messages: list[Message],
                       params: GenerationParams) -> ChatResponse:
        raise NotImplementedError

    def _classify(self, error: BaseException) -> Failure | None:
        raise NotImplementedError

    # -- public ---------------------------------------------------------------------------
    def use_concurrency(self, concurrency: int) -> None:
        """Allow ``concurrency`` calls in flight (the engine calls this with ``--concurrency``,
        so the flag is honoured above the backend's default). Takes effect for event loops that
        start afterwards (every ``run_requests`` runs on a fresh one)."""
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.max_concurrency = int(concurrency)

    def window(self) -> AdaptiveLimit | None:
        """The adaptive bound of the running event loop (None outside one, or before a call)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        entry = self._per_loop.get(loop)
        return entry[1] if entry else None

    async def acomplete(self, messages: list[Message], params: GenerationParams) -> ChatResponse:
        """One reply; retries transient failures, raises ``ModelCallError`` for good ones."""
        client, window = self._client_for_running_loop()
        ends_at: float | None = None
        sent_epoch = 0
        attempt_s = 0.0

        async def timed_attempt() -> ChatResponse:
            nonlocal ends_at, sent_epoch, attempt_s
            # one slot per attempt: a call waiting to retry holds none, so a bound lowered by
            # 429s or timeouts lowers the load at once (memlens.models.window)
            async with window:
                if ends_at is None:  # the call's deadline starts with its first attempt
                    ends_at = time.monotonic() + self.call_deadline_s
                sent_epoch = window.epoch
                budget = max(0.0, min(self.timeout_s, ends_at - time.monotonic()))
                sent = time.monotonic()
                try:
                    return await asyncio.wait_for(
                        self._attempt(client, list(messages), params), budget)
                except TimeoutError as error:
                    raise AttemptTimedOut() from error
                finally:
                    attempt_s = time.monotonic() - sent

        def classify(error: BaseException) -> Failure | None:
            failure = self._safe_classify(error)
            if failure is None:
                return None
            if failure.throttled:
                window.throttled(sent_epoch)  # 429 / 529: fewer attempts in flight from now on
            elif isinstance(error, AttemptTimedOut):
                window.timed_out(sent_epoch)  # a local server queueing our calls
            elif failure.auth_status is not None:
                window.refused()  # a refused key: one request at a time until one succeeds
            return failure

        started = time.perf_counter()
        try:
            response = await call_with_retries(timed_attempt, classify, self.retry,
                                               deadline_s=self.call_deadline_s)
            window.succeeded(attempt_s, sent_epoch)
        except ModelCallError as error:
            error.reason = redact(error.reason, self._api_key)
            error.args = (error.reason,)
            raise error.with_traceback(None) from None
        response.latency_s = time.perf_counter() - started
        return response

    @property
    def call_deadline_s(self) -> float:
        """Wall-time bound of one call, retries and waits included: ``timeout_s × max_attempts``
        plus the longest the backoff waits can add up to (``RetryPolicy.backoff_budget_s``)."""
        return self.timeout_s * self.retry.max_attempts + self.retry.backoff_budget_s()

    def complete(self, messages: list[Message], params: GenerationParams) -> ChatResponse:
        """Synchronous form of ``acomplete`` (safe to call from many threads at once)."""
        with self._lock:
            if self._bridge is None:
                self._bridge = LoopThread(name=f"memlens-{self.model_id[:40]}")
            bridge = self._bridge
        return bridge.run(self.acomplete(messages, params))

    def close(self) -> None:
        """Close HTTP clients and the private loop thread (idempotent)."""
        with self._lock:
            bridge, self._bridge = self._bridge, None
            per_loop, self._per_loop = self._per_loop, {}
        if bridge is not None:
            client = per_loop.pop(bridge.loop, (None, None))[0]
            if client is not None:
                bridge.run(client.close())
            bridge.close()
        # Clients of foreign loops are dropped; their loops own their sockets.

    async def aclose(self) -> None:
        """Close the client bound to the running loop (for async callers)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._per_loop.pop(loop, None)
        if entry is not None:
            await entry[0].close()

    # -- internals ------------------------------------------------------------------------
    def _client_for_running_loop(self) -> tuple[Any, AdaptiveLimit]:
        loop = asyncio.get_running_loop()
        with self._lock:
            for stale in [other for other in self._per_loop if other.is_closed()]:
                del self._per_loop[stale]
            if loop not in self._per_loop:
                self._per_loop[loop] = (self._make_client(),
                                        AdaptiveLimit(self.max_concurrency,
                                                      timeout_s=self.timeout_s))
            return self._per_loop[loop]

    def _safe_classify(self, error: BaseException) -> Failure | None:
        if isinstance(error, AttemptTimedOut):
            return Failure(f"timeout after {self.timeout_s:g}s", True)
        failure = self._classify(error)
        if failure is None:
            return None
        return Failure(redact(failure.reason, self._api_key), failure.retryable,
                       failure.retry_after_s, failure.auth_status, failure.throttled)


def check_not_empty(response: ChatResponse) -> None:
    """``MalformedReply`` for a reply with no text and no tool call that says it stopped
    normally (an empty reply cut by ``length`` is a real reply: the budget ran out).

    >>> check_not_empty(ChatResponse(text="", finish_reason="length"))
    >>> check_not_empty(ChatResponse(text="", finish_reason="stop"))
    Traceback (most recent call last):
    ...
    memlens.models.retry.MalformedReply: malformed reply: empty content (finish_reason stop)
    """
    if not response.text and not response.tool_calls and response.finish_reason == "stop":
        raise MalformedReply("malformed reply: empty content (finish_reason stop)")


def status_failure(status: int, message: str, headers: Any) -> Failure:
    """A ``Failure`` for an HTTP error status, reading ``Retry-After`` / ``retry-after-ms``."""
    retry_after = None
    if headers is not None:
        milliseconds = headers.get("retry-after-ms")
        if milliseconds is not None:
            retry_after = parse_retry_after(milliseconds)
            retry_after = None if retry_after is None else retry_after / 1000.0
        if retry_after is None:
            retry_after = parse_retry_after(headers.get("retry-after"))
    hint = {401: " (check the API key variable)", 403: " (check the API key variable and its "
            "access to this model)", 404: " (check the model name and base URL)"}
    return Failure(f"HTTP {status}: {message[:300]}{hint.get(status, '')}",
                   status in RETRYABLE_STATUS, retry_after,
                   auth_status=status if status in (401, 403) else None,
                   throttled=status in THROTTLE_STATUS)


def _causes(error: BaseException) -> list[BaseException]:
    """``error`` and the exceptions behind it (``__cause__`` / ``__context__``), outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and len(chain) < 12 and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _class_names(error: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(error).__mro__}


_CLOSED_NAMES = {"ServerDisconnectedError", "RemoteProtocolError", "ClientPayloadError",
                 "IncompleteRead", "ContentLengthError"}


def connection_problem(error: BaseException) -> str | None:
    """What went wrong on the connection behind an SDK error: ``"DNS lookup failed"``,
    ``"connection refused"``, ``"connection reset by peer"``, ``"connection closed by the
    server"`` or another socket error; None for a timeout or when no connection error is
    behind it. (The SDKs' aiohttp transport reports all of these as a *timeout*.)

    >>> connection_problem(RuntimeError("x"))
    >>> try:
    ...     raise RuntimeError("wrapped") from ConnectionResetError(104, "Connection reset by peer")
    ... except RuntimeError as error:
    ...     print(connection_problem(error))
    connection reset by peer ([Errno 104] Connection reset by peer)
    """
    chain = _causes(error)
    rules = [
        ("DNS lookup failed", lambda c: isinstance(c, socket.gaierror)
         or any(n.endswith("DNSError") for n in _class_names(c))),
        ("connection refused", lambda c: isinstance(c, ConnectionRefusedError)),
        ("connection reset by peer", lambda c: isinstance(c, ConnectionResetError)),
        ("connection closed by the server", lambda c: isinstance(
            c, BrokenPipeError | ConnectionAbortedError) or bool(_class_names(c) & _CLOSED_NAMES)),
    ]
    for label, matches in rules:
        for cause in chain:
            if matches(cause):
                return f"{label} ({cause})" if str(cause) else label
    if any(isinstance(cause, TimeoutError) for cause in chain):
        return None
    for cause in chain:
        if isinstance(cause, OSError) or "ClientConnectionError" in _class_names(cause):
            return f"{type(cause).__name__}: {cause}"
    return None


def sdk_failure(error: BaseException, sdk: Any, base_error: type[BaseException],
                timeout_s: float) -> Failure | None:
    """Classify an exception of the ``openai`` or ``anthropic`` SDK (the same error hierarchy):
    timeouts and connection errors are retryable, HTTP statuses go to ``status_failure``, other
    SDK errors (``base_error``) are final, anything else is not the SDK's (None)."""
    if isinstance(error, sdk.APIConnectionError):  # APITimeoutError is one too
        problem = connection_problem(error)
        if problem is not None:
            return Failure(f"connection error: {problem}", True)
        if isinstance(error, sdk.APITimeoutError):
            return Failure(f"timeout after {timeout_s:g}s", True)
        cause = error.__cause__ or error
        return Failure(f"connection error: {type(cause).__name__}: {cause}", True)
    if isinstance(error, sdk.APIStatusError):
        return status_failure(error.status_code, str(error.message), error.response.headers)
    if isinstance(error, base_error):
        return Failure(f"{type(error).__name__}: {error}", False)
    return None
