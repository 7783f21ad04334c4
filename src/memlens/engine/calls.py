"""One model call turned into an outcome: a ``ChatResponse`` or a ``ModelCallError``.

Anything a backend throws (other than Ctrl-C) becomes a recorded failure, so one bad reply never
stops a run of thousands.
"""

from __future__ import annotations

import time

from memlens.models.base import ChatModel, ChatRequest, ChatResponse, ModelCallError

Outcome = ChatResponse | ModelCallError


def checked(reply: object, elapsed_s: float) -> Outcome:
    """Validate what a backend returned; fill in the latency when the backend did not."""
    if isinstance(reply, ModelCallError):
        return reply
    if not isinstance(reply, ChatResponse):
        return ModelCallError(f"backend returned {type(reply).__name__}, not a ChatResponse")
    if not reply.latency_s:
        reply.latency_s = elapsed_s
    return reply


def as_failure(error: Exception) -> ModelCallError:
    """A backend exception as a recorded failure."""
    if isinstance(error, ModelCallError):
        return error
    return ModelCallError(f"{type(error).__name__}: {error}", attempts=1)


def call_sync(model: ChatModel, request: ChatRequest) -> Outcome:
    """``model.complete`` for one request."""
    start = time.perf_counter()
    try:
        reply = model.complete(list(request.messages), request.params)
    except Exception as error:
        return as_failure(error)
    return checked(reply, time.perf_counter() - start)


async def call_async(model: ChatModel, request: ChatRequest) -> Outcome:
    """``await model.acomplete`` for one request."""
    start = time.perf_counter()
    try:
        reply = await model.acomplete(list(request.messages), request.params)
    except Exception as error:
        return as_failure(error)
    return checked(reply, time.perf_counter() - start)
