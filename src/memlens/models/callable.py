"""Wrap a plain Python function ``messages -> text`` (sync or async) into a ``ChatModel``.

A team audits its own pipeline (retrieval, memory layer, system prompt) by handing the function
to ``memlens.audit.run_audit(config, run_dir, model=fn, model_name="my-assistant")``. The model
id — part of every cache key, so what a resume matches on — is ``callable:<name>``: the same
name resumes the same run; a changed pipeline should get a new name (or a new run directory).

The function receives the chat messages (a list of ``{"role", "content"}`` dicts, a fresh copy
per call) and returns the reply text, or a full ``ChatResponse``. An exception it raises becomes
a recorded failed call (retried by the next run), never a crash of the audit.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Callable

from memlens.errors import MemlensError
from memlens.models.base import ChatModel, ChatResponse, GenerationParams, Message

CALLABLE_PREFIX = "callable:"
"""Model ids of wrapped functions start with this."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]{0,127}$")


def check_name(name: object) -> str:
    """The user's name for a callable, validated: 1-128 characters, letters, digits and
    ``. _ / + -``, starting with a letter or digit (it is shown in reports and keys the cache).

    >>> check_name("my-assistant/v2")
    'my-assistant/v2'
    >>> check_name("has space")
    Traceback (most recent call last):
    ...
    memlens.errors.MemlensError: callable model name 'has space' is invalid: use 1-128 letters, digits or . _ / + - (starting with a letter or digit)
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise MemlensError(f"callable model name {name!r} is invalid: use 1-128 letters, digits "
                           "or . _ / + - (starting with a letter or digit)")
    return name


def _as_response(reply: object, messages: list[Message]) -> ChatResponse:
    if isinstance(reply, ChatResponse):
        return reply
    if not isinstance(reply, str):
        raise TypeError(f"the audited function returned {type(reply).__name__}, not a string "
                        "or a ChatResponse")
    return ChatResponse(
        text=reply,
        prompt_tokens=sum(len(str(m.get("content", "")).split()) for m in messages),
        completion_tokens=len(reply.split()))


class CallableModel:
    """A synchronous function as a ``ChatModel`` (run on the engine's thread pool).

    ``max_concurrency`` (default 1) is how many calls may run at once; raise it only for a
    thread-safe function.

    >>> model = CallableModel(lambda messages: messages[-1]["content"].upper(), "shout")
    >>> model.model_id, model.complete([{"role": "user", "content": "hi"}], GenerationParams()).text
    ('callable:shout', 'HI')
    """

    supports_tools = False

    def __init__(self, function: Callable, name: str, *, max_concurrency: int = 1):
        if not callable(function):
            raise MemlensError(f"model must be a ChatModel or a function, got "
                               f"{type(function).__name__}")
        self.model_id = CALLABLE_PREFIX + check_name(name)
        self.max_concurrency = max_concurrency
        self._function = function

    def complete(self, messages: list[Message], params: GenerationParams) -> ChatResponse:
        """Call the function with a copy of ``messages``."""
        copy = [dict(message) for message in messages]
        reply = self._function(copy)
        if inspect.isawaitable(reply):  # a sync wrapper around a coroutine
            reply = asyncio.run(_awaited(reply))
        return _as_response(reply, copy)


async def _awaited(awaitable):
    return await awaitable


class AsyncCallableModel(CallableModel):
    """A coroutine function as a ``ChatModel``: the engine awaits ``acomplete``, up to
    ``max_concurrency`` (default 8) calls at once on one event loop."""

    def __init__(self, function: Callable, name: str, *, max_concurrency: int = 8):
        super().__init__(function, name, max_concurrency=max_concurrency)

    async def acomplete(self, messages: list[Message], params: GenerationParams) -> ChatResponse:
        """Await the function with a copy of ``messages``."""
        copy = [dict(message) for message in messages]
        return _as_response(await self._function(copy), copy)

    def complete(self, messages: list[Message], params: GenerationParams) -> ChatResponse:
        """Synchronous form (quick checks): runs ``acomplete`` on a fresh event loop."""
        return asyncio.run(self.acomplete(messages, params))


def is_chat_model(value: object) -> bool:
    """True for an object offering the ``ChatModel`` protocol (``model_id`` and ``complete``)."""
    return isinstance(value, ChatModel) and isinstance(getattr(value, "model_id", None), str)


def as_chat_model(model: object, name: str | None = None, *,
                  max_concurrency: int | None = None) -> ChatModel:
    """``model`` as a ``ChatModel``: a ``ChatModel`` object is returned as it is (its own
    ``model_id`` keys the cache; ``name`` must then be None); a function (sync or ``async def``)
    is wrapped with the model id ``callable:<name>`` (``name`` required).

    >>> as_chat_model(lambda messages: "ok", "demo").model_id
    'callable:demo'
    >>> async def reply(messages):
    ...     return "ok"
    >>> type(as_chat_model(reply, "demo")).__name__
    'AsyncCallableModel'
    >>> as_chat_model(lambda messages: "ok")
    Traceback (most recent call last):
    ...
    memlens.errors.MemlensError: auditing a function needs a name (model_name=...): it becomes the model id 'callable:<name>' that keys the cache and the resume
    """
    if is_chat_model(model):
        if name is not None:
            raise MemlensError("model_name is only for a plain function; a ChatModel object is "
                               f"keyed by its own model_id ({model.model_id!r})")
        return model
    if not callable(model):
        raise MemlensError(f"model must be a ChatModel or a function messages -> text, got "
                           f"{type(model).__name__}")
    if name is None:
        raise MemlensError("auditing a function needs a name (model_name=...): it becomes the "
                           "model id 'callable:<name>' that keys the cache and the resume")
    options = {} if max_concurrency is None else {"max_concurrency": max_concurrency}
    call_method = type(model).__call__ if not inspect.isroutine(model) else None
    if inspect.iscoroutinefunction(model) or inspect.iscoroutinefunction(call_method):
        return AsyncCallableModel(model, name, **options)
    return CallableModel(model, name, **options)
