"""A deterministic scripted model for tests, registered like any other backend (``fake``)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from memlens.models.base import ChatResponse, GenerationParams, Message, ToolCall

Script = Callable[[list[Message], GenerationParams], str | ChatResponse]


class FakeModel:
    """Replies from a script, never from a network.

    ``replies`` may be a list (used in order, cycling) or a function of (messages, params)
    returning text or a full ``ChatResponse``. With neither, the reply echoes a short hash of
    the last user message so different prompts give different, reproducible text.

    >>> model = FakeModel(["a", "b"])
    >>> [model.complete([{"role": "user", "content": "x"}], GenerationParams()).text
    ...  for _ in range(3)]
    ['a', 'b', 'a']
    """

    supports_tools = True

    def __init__(self, replies: Sequence[str] | Script | None = None, model_id: str = "fake"):
        self.model_id = model_id
        self._replies = replies
        self.calls: list[list[Message]] = []

    def complete(self, messages: list[Message], params: GenerationParams) -> ChatResponse:
        """Return the next scripted reply."""
        self.calls.append(list(messages))
        if callable(self._replies):
            reply = self._replies(list(messages), params)
        elif self._replies:
            reply = self._replies[(len(self.calls) - 1) % len(self._replies)]
        else:
            last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
            reply = "echo " + hashlib.sha256(str(last).encode()).hexdigest()[:8]
        if isinstance(reply, ChatResponse):
            return reply
        return ChatResponse(
            text=reply,
            prompt_tokens=sum(len(str(m.get("content", "")).split()) for m in messages),
            completion_tokens=len(reply.split()),
        )


def tool_reply(name: str, arguments_json: str) -> ChatResponse:
    """A scripted reply carrying one tool call (for tool-drift tests)."""
    return ChatResponse(text="", tool_calls=[ToolCall(name=name, arguments_json=arguments_json)],
                        finish_reason="tool_calls")
