"""The ChatModel protocol: messages + generation parameters -> one reply.

Every backend (embedded, OpenAI-compatible, Anthropic, vLLM, transformers, fake) implements
``ChatModel``. Callers that need many replies go through ``memlens.engine`` (cache, resume,
concurrency); a single ``complete`` call is for quick checks, labelers and judges.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]  # {"role": "system"|"user"|"assistant", "content": str}


@dataclass(frozen=True)
class GenerationParams:
    """Sampling settings. Defaults follow the DriftLens paper (App. I.3)."""

    temperature: float = 0.7
    """Sampling temperature; 0 means greedy."""
    top_p: float = 0.98
    """Nucleus sampling mass."""
    top_k: int | None = 50
    """Top-k cut-off where the backend supports it (OpenAI ignores it)."""
    max_tokens: int = 2048
    """Maximum new tokens."""
    seed: int | None = None
    """Backend sampling seed where supported."""
    json_schema: dict | None = None
    """If set, constrain the reply to this JSON schema (structured output)."""
    tools: tuple | None = None
    """OpenAI-format tool definitions (a tuple of dicts, so params stay hashable)."""
    tool_choice: str | None = None
    """"auto", "required" or "none" when tools are given."""

    def to_dict(self) -> dict:
        """Plain-dict form (for hashing, manifests and logs)."""
        return asdict(self)

    def replace(self, **changes: Any) -> GenerationParams:
        """Return a copy with some fields changed."""
        return GenerationParams(**{**self.to_dict(), **changes})


_PARAM_NAMES = tuple(item.name for item in fields(GenerationParams))
"""The fields a cache key reads; a shallow read serialises to the same JSON as ``asdict``'s deep
copy at a fraction of the cost (the deep copy was 70 % of a key)."""


@dataclass(frozen=True)
class ToolCall:
    """A function call the model made: its name and raw / parsed arguments."""

    name: str
    arguments_json: str
    """The arguments exactly as the model produced them (may be invalid JSON)."""

    def arguments(self) -> dict | None:
        """Parsed arguments, or None when the JSON is invalid or not an object."""
        try:
            value = json.loads(self.arguments_json)
        except (TypeError, ValueError):
            return None
        return value if isinstance(value, dict) else None


@dataclass
class ChatResponse:
    """One reply with its accounting."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"
    tool_calls: list[ToolCall] = field(default_factory=list)
    latency_s: float = 0.0
    raw: dict | None = None
    """Backend-specific extras worth keeping (never secrets)."""

    def to_dict(self) -> dict:
        """JSON-serialisable form (for the run store)."""
        return {
            "text": self.text,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "finish_reason": self.finish_reason,
            "tool_calls": [asdict(call) for call in self.tool_calls],
            "latency_s": self.latency_s,
        }

    @classmethod
    def from_dict(cls, data: dict) -> ChatResponse:
        """Inverse of ``to_dict``."""
        return cls(
            text=data.get("text", ""),
            prompt_tokens=data.get("prompt_tokens", 0),
            completion_tokens=data.get("completion_tokens", 0),
            finish_reason=data.get("finish_reason", "stop"),
            tool_calls=[ToolCall(**call) for call in data.get("tool_calls", [])],
            latency_s=data.get("latency_s", 0.0),
        )


class ModelCallError(Exception):
    """A model call that failed for good (after retries): the reason is recorded, not raised
    to the user."""

    def __init__(self, reason: str, attempts: int = 1):
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


@dataclass(frozen=True)
class ChatRequest:
    """One call to make: the unit of caching and resuming."""

    messages: tuple
    """A tuple of message dicts (role, content)."""
    params: GenerationParams = GenerationParams()
    sample_index: int = 0
    """Which of n samples this is; part of the cache key so samples differ."""
    tag: str = ""
    """Caller's label for the request (e.g. "gen/q12/age:young/0"); not part of the key."""

    def cache_key(self, model_id: str) -> str:
        """Content hash of (model id, messages, parameters, sample index).

        ``model_id`` is the backend-qualified model string (e.g. "openai:gpt-4.1-mini@URL").
        """
        payload = json.dumps(
            {
                "model": model_id,
                "messages": list(self.messages),
                "params": {name: getattr(self.params, name) for name in _PARAM_NAMES},
                "sample_index": self.sample_index,
            },
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@runtime_checkable
class ChatModel(Protocol):
    """What every backend provides."""

    model_id: str
    """Backend-qualified model string; part of every cache key."""
    supports_tools: bool
    """True when the backend takes OpenAI-style tools natively."""

    def complete(self, messages: list[Message], params: GenerationParams) -> ChatResponse:
        """Return one reply, or raise ``ModelCallError`` after the backend's own retries."""
        ...
