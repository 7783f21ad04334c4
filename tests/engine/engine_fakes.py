"""Small test backends: async, threaded and batched, each counting its calls and peak
concurrency."""

from __future__ import annotations

import asyncio
import threading
import time

from memlens.models import ChatRequest, ChatResponse, GenerationParams, ModelCallError


def ask(text: str, **params) -> ChatRequest:
    return ChatRequest(({"role": "user", "content": text},), GenerationParams(**params))


def reply_for(messages) -> str:
    text = messages[-1]["content"]
    if text.startswith("fail"):
        raise ModelCallError(f"scripted failure for {text}", attempts=3)
    if text.startswith("crash"):
        raise ValueError("backend bug")
    if text.startswith("garbage"):
        return None  # not a ChatResponse
    return "re: " + text


class _Counting:
    def __init__(self, model_id: str, latency_s: float):
        self.model_id = model_id
        self.supports_tools = False
        self.latency_s = latency_s
        self.calls: list[str] = []
        self.in_flight = 0
        self.peak = 0
        self._lock = threading.Lock()

    def _enter(self, messages) -> None:
        with self._lock:
            self.calls.append(messages[-1]["content"])
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)

    def _exit(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _respond(self, messages):
        text = reply_for(messages)
        return None if text is None else ChatResponse(text, completion_tokens=2)


class AsyncFake(_Counting):
    """An API-like backend: ``acomplete`` sleeps ``latency_s``."""

    def __init__(self, latency_s: float = 0.0, max_concurrency: int | None = None,
                 model_id: str = "async-fake"):
        super().__init__(model_id, latency_s)
        if max_concurrency is not None:
            self.max_concurrency = max_concurrency

    async def acomplete(self, messages, params):
        self._enter(messages)
        try:
            await asyncio.sleep(self.latency_s)
            return self._respond(messages)
        finally:
            self._exit()

    def complete(self, messages, params):  # pragma: no cover - the runner prefers acomplete
        raise AssertionError("the runner must use acomplete")


class ThreadFake(_Counting):
    """A sync backend that declares itself thread-safe via ``max_concurrency``."""

    def __init__(self, latency_s: float = 0.0, max_concurrency: int | None = None,
                 model_id: str = "thread-fake"):
        super().__init__(model_id, latency_s)
        if max_concurrency is not None:
            self.max_concurrency = max_concurrency

    def complete(self, messages, params):
        self._enter(messages)
        try:
            time.sleep(self.latency_s)
            return self._respond(messages)
        finally:
            self._exit()


class BatchFake(_Counting):
    """A vLLM-like backend: ``complete_batch`` answers a list of prompts at once."""

    def __init__(self, model_id: str = "batch-fake", short_by: int = 0):
        super().__init__(model_id, 0.0)
        self.batches: list[tuple[int, float]] = []  # (size, temperature)
        self.short_by = short_by

    def complete(self, messages, params):  # pragma: no cover - the runner prefers batches
        raise AssertionError("the runner must use complete_batch")

    def complete_batch(self, prompts, params):
        self.batches.append((len(prompts), params.temperature))
        replies = []
        for messages in prompts:
            self.calls.append(messages[-1]["content"])
            try:
                replies.append(self._respond(messages))
            except Exception as error:  # per-prompt failures go in the reply list
                replies.append(error)
        return replies[: len(replies) - self.short_by]
