"""Wrapping functions into ChatModels (models/callable.py)."""

import asyncio

import pytest

from memlens.engine import dispatch, run_requests
from memlens.errors import MemlensError
from memlens.models import ChatRequest, FakeModel, GenerationParams
from memlens.models.callable import AsyncCallableModel, CallableModel, as_chat_model, check_name

ASK = ChatRequest(({"role": "user", "content": "hi"},))


def test_sync_function_runs_on_threads_and_copies_messages():
    received = []

    def assistant(messages):
        received.append(messages)
        messages.append({"role": "user", "content": "mutated"})  # must not reach the request
        return "hello there"

    model = as_chat_model(assistant, "demo")
    assert isinstance(model, CallableModel) and dispatch.mode_of(model) == "threads"
    reply = run_requests(model, [ASK], progress=False)[0]
    assert reply.text == "hello there" and reply.completion_tokens == 2
    assert ASK.messages == ({"role": "user", "content": "hi"},)
    assert received[0][0] == {"role": "user", "content": "hi"}


def test_async_function_runs_on_the_event_loop():
    active, peak = 0, 0

    async def assistant(messages):
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01)
        active -= 1
        return messages[-1]["content"][::-1]

    model = as_chat_model(assistant, "rev", max_concurrency=4)
    assert isinstance(model, AsyncCallableModel) and dispatch.mode_of(model) == "async"
    requests = [ChatRequest(({"role": "user", "content": f"m{i}"},)) for i in range(8)]
    replies = run_requests(model, requests, progress=False)
    assert [r.text for r in replies] == [f"{i}m" for i in range(8)]
    assert 2 <= peak <= 4
    assert model.complete([{"role": "user", "content": "ab"}], GenerationParams()).text == "ba"


def test_exceptions_and_bad_returns_become_recorded_failures():
    def broken(messages):
        raise RuntimeError("retrieval index offline")

    outcome = run_requests(as_chat_model(broken, "b"), [ASK], progress=False)[0]
    assert "retrieval index offline" in outcome.reason
    outcome = run_requests(as_chat_model(lambda m: 42, "n"), [ASK], progress=False)[0]
    assert "returned int" in outcome.reason


def test_names_and_objects():
    assert as_chat_model(lambda m: "x", "a.b/c-1+2").model_id == "callable:a.b/c-1+2"
    for bad in ("", " x", "a b", "x" * 129, None, 3):
        with pytest.raises(MemlensError, match="name"):
            check_name(bad)
    fake = FakeModel(["x"])
    assert as_chat_model(fake) is fake
    with pytest.raises(MemlensError, match="only for a plain function"):
        as_chat_model(fake, "named")
    with pytest.raises(MemlensError, match="ChatModel or a function"):
        as_chat_model("openai:gpt", "n")
    with pytest.raises(MemlensError, match="needs a name"):
        as_chat_model(lambda m: "x")
