"""Shared plumbing of the async API backends (OpenAI-compatible, Anthropic).

One SDK client and one concurrency bound per event loop, a sync ``complete`` that runs on a
private loop thread, explicit retries (``memlens.models.retry``) and keys kept out of every message.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from memlens.models.aio import LoopThread
from memlens.models.base import ChatResponse, GenerationParams, Message, ModelCallError
from memlens.models.keys import redact
from memlens.models.retry import Failure, RetryPolicy, call_with_retries


class AsyncAPIModel:
    """Base class: subclasses implement ``_make_client``, ``_attempt`` and ``_classify``."""

    supports_tools = True
    model_id: str

    def __init__(self, *, api_key: str, timeout_s: float, max_concurrency: int,
                 retry: RetryPolicy | None):
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self._api_key = api_key
        self.timeout_s = float(timeout_s)
        self.max_concurrency = int(max_concurrency)
        self.retry = retry or RetryPolicy()
        self._per_loop: dict[asyncio.AbstractEventLoop, tuple[Any, asyncio.Semaphore]] = {}
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
    async def acomplete(self, messages: list[Message], params: GenerationParams) -> ChatResponse:
        """One reply; retries transient failures, raises ``ModelCallError`` for good ones."""
        client, semaphore = self._client_for_running_loop()

        async def bounded_attempt() -> ChatResponse:
            async with semaphore:
                return await self._attempt(client, list(messages), params)

        started = time.perf_counter()
        try:
            response = await call_with_retries(bounded_attempt, self._safe_classify, self.retry)
        except ModelCallError as error:
            raise ModelCallError(redact(error.reason, self._api_key), error.attempts) from None
        response.latency_s = time.perf_counter() - started
        return response

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
    def _client_for_running_loop(self) -> tuple[Any, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        with self._lock:
            for stale in [other for other in self._per_loop if other.is_closed()]:
                del self._per_loop[stale]
            if loop not in self._per_loop:
                self._per_loop[loop] = (self._make_client(), asyncio.Semaphore(self.max_concurrency))
            return self._per_loop[loop]

    def _safe_classify(self, error: BaseException) -> Failure | None:
        failure = self._classify(error)
        if failure is None:
            return None
        return Failure(redact(failure.reason, self._api_key), failure.retryable,
                       failure.retry_after_s)


def status_failure(status: int, message: str, headers: Any) -> Failure:
    """A ``Failure`` for an HTTP error status, reading ``Retry-After`` / ``retry-after-ms``."""
    from memlens.models.retry import RETRYABLE_STATUS, parse_retry_after

    retry_after = None
    if headers is not None:
        milliseconds = headers.get("retry-after-ms")
        if milliseconds is not None:
            retry_after = parse_retry_after(milliseconds)
            retry_after = None if retry_after is None else retry_after / 1000.0
        if retry_after is None:
            retry_after = parse_retry_after(headers.get("retry-after"))
    hint = {401: " (check the API key variable)", 404: " (check the model name and base URL)"}
    return Failure(f"HTTP {status}: {message[:300]}{hint.get(status, '')}",
                   status in RETRYABLE_STATUS, retry_after)


def _connection_refusal(error: BaseException) -> BaseException | None:
    """The ``ConnectionRefusedError`` / DNS failure behind an SDK error, if any."""
    seen = 0
    cause = error.__cause__ or error.__context__
    while cause is not None and seen < 10:
        if isinstance(cause, ConnectionRefusedError | OSError) and not isinstance(cause, TimeoutError):
            return cause
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return None


def sdk_failure(error: BaseException, sdk: Any, base_error: type[BaseException],
                timeout_s: float) -> Failure | None:
    """Classify an exception of the ``openai`` or ``anthropic`` SDK (the same error hierarchy):
    timeouts and connection errors are retryable, HTTP statuses go to ``status_failure``, other
    SDK errors (``base_error``) are final, anything else is not the SDK's (None)."""
    refused = _connection_refusal(error)
    if refused is not None:  # the aiohttp transport reports a refused connect as a timeout
        return Failure(f"connection error: {type(refused).__name__}: {refused}", True)
    if isinstance(error, sdk.APITimeoutError):
        return Failure(f"timeout after {timeout_s:g}s", True)
    if isinstance(error, sdk.APIConnectionError):
        cause = error.__cause__ or error
        return Failure(f"connection error: {type(cause).__name__}: {cause}", True)
    if isinstance(error, sdk.APIStatusError):
        return status_failure(error.status_code, str(error.message), error.response.headers)
    if isinstance(error, base_error):
        return Failure(f"{type(error).__name__}: {error}", False)
    return None
