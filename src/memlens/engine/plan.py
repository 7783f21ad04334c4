"""``plan_requests``: what a run would cost — calls to make, cache hits, token estimates."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from memlens.models.base import ChatModel, ChatRequest
from memlens.store import RunStore

CHARS_PER_TOKEN = 4


def estimate_prompt_tokens(request: ChatRequest) -> int:
    """Rough prompt size: ~4 characters per token over message contents and tool definitions.

    >>> estimate_prompt_tokens(ChatRequest(({"role": "user", "content": "x" * 10},)))
    3
    """
    chars = 0
    for message in request.messages:
        content = message.get("content", "")
        chars += len(content) if isinstance(content, str) else len(json.dumps(content, default=str))
    if request.params.tools:
        chars += len(json.dumps(list(request.params.tools), default=str))
    return math.ceil(chars / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class RunPlan:
    """The cost of a run before making it."""

    calls: int
    """Model calls still to make (distinct, not cached; stored failures are retried)."""
    cached: int
    """Requests answered from the run store."""
    est_prompt_tokens: int
    """Estimated prompt tokens of the calls to make (~4 characters per token)."""
    est_completion_tokens: int
    """Upper bound on completion tokens: the sum of ``max_tokens`` of the calls to make."""
    duplicates: int = 0
    """Further copies of a request to make (computed once); calls + cached + duplicates is
    the number of requests."""
    typical_completion_tokens: int | None = None
    """Completion tokens at the mean of this model's stored replies, when there are any."""

    def __str__(self) -> str:
        """The ``--dry-run`` summary.

        >>> print(RunPlan(calls=1200, cached=300, est_prompt_tokens=45000,
        ...               est_completion_tokens=2457600, typical_completion_tokens=360000))
        1,200 calls to make, 300 cached; ~45,000 prompt tokens, at most 2,457,600 completion tokens (typically ~360,000)
        """
        text = f"{self.calls:,} calls to make, {self.cached:,} cached"
        if self.duplicates:
            text += f", {self.duplicates:,} duplicates merged"
        text += (f"; ~{self.est_prompt_tokens:,} prompt tokens, "
                 f"at most {self.est_completion_tokens:,} completion tokens")
        if self.typical_completion_tokens is not None:
            text += f" (typically ~{self.typical_completion_tokens:,})"
        return text


def plan_requests(model: ChatModel | str, requests: Sequence[ChatRequest],
                  store: RunStore | None = None) -> RunPlan:
    """Count the calls ``run_requests(model, requests, store)`` would make, without making any.

    ``model`` may be a backend or just its ``model_id`` (see ``memlens.models.model_id_for``), so
    a plan needs no API key, weights or GPU.

    >>> from memlens.models import FakeModel
    >>> ask = ChatRequest(({"role": "user", "content": "What is 2 + 2?"},))
    >>> plan_requests(FakeModel(), [ask, ask]).calls
    1
    """
    model_id = model if isinstance(model, str) else model.model_id
    keys = [request.cache_key(model_id) for request in requests]
    first: dict[str, ChatRequest] = {}
    for key, request in zip(keys, requests, strict=True):
        first.setdefault(key, request)
    hits = set(store.cached_responses(first)) if store is not None else set()
    to_call = [request for key, request in first.items() if key not in hits]
    typical = None
    if store is not None and to_call:
        usage = store.usage(model_id)
        if usage["responses"]:
            typical = round(usage["completion_tokens"] / usage["responses"] * len(to_call))
    return RunPlan(
        calls=len(to_call),
        cached=sum(key in hits for key in keys),
        est_prompt_tokens=sum(estimate_prompt_tokens(request) for request in to_call),
        est_completion_tokens=sum(request.params.max_tokens for request in to_call),
        duplicates=sum(key not in hits for key in keys) - len(to_call),
        typical_completion_tokens=typical,
    )


def plan_groups(model: ChatModel | str,
                groups: Sequence[tuple[ChatRequest, int]]) -> RunPlan:
    """The plan of a fresh run (no store) from ``(request, copies)`` groups, without building
    every request: each request stands for ``copies`` requests that differ only in sample index
    (distinct calls of the same size). Groups whose request has the same cache key as an earlier
    one are merged, all their copies counted as duplicates.

    >>> ask = ChatRequest(({"role": "user", "content": "x" * 10},))
    >>> print(plan_groups("fake", [(ask, 1_000_000), (ask, 3)]))
    1,000,000 calls to make, 0 cached, 3 duplicates merged; ~3,000,000 prompt tokens, at most 2,048,000,000 completion tokens
    """
    model_id = model if isinstance(model, str) else model.model_id
    seen: set[str] = set()
    calls = prompt = completion = duplicates = 0
    for request, copies in groups:
        key = request.cache_key(model_id)
        if key in seen:
            duplicates += copies
            continue
        seen.add(key)
        calls += copies
        prompt += estimate_prompt_tokens(request) * copies
        completion += request.params.max_tokens * copies
    return RunPlan(calls=calls, cached=0, est_prompt_tokens=prompt,
                   est_completion_tokens=completion, duplicates=duplicates)

