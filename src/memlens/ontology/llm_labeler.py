"""The LLM labeler: one call per response labels all its steps; validated, repaired once, cached.

Calls go through ``memlens.jsonreply.ask_json`` (``memlens.engine.run_requests``) so a
``RunStore`` caches and resumes them.
A reply that still fails validation after one repair attempt — or a call that failed for good —
makes every step of that response ``unlabeled``; the problem is recorded in ``problems``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from memlens.engine.plan import CHARS_PER_TOKEN
from memlens.errors import MemlensError
from memlens.jsonreply import ask_json
from memlens.models.base import ChatModel, ChatRequest, GenerationParams
from memlens.ontology.prompting import REPAIR_PROMPT, label_messages, parse_labels, reply_schema
from memlens.ontology.schema import UNLABELED, Ontology


@dataclass
class LabelingCounts:
    """What happened to the responses of the labeler's calls so far."""

    responses: int = 0
    valid_first_try: int = 0
    repaired: int = 0
    unlabeled: int = 0
    """Responses whose steps all became ``unlabeled`` (invalid twice or failed call)."""
    problems: list[dict] = field(default_factory=list)
    """One entry per unlabeled response: ``index``, ``reason``, ``reply`` (first 500 chars)."""


CONTEXT_MARGIN = 0.9
"""Share of the context a chunk may fill by the estimate (prompts are estimated at
``memlens.engine.plan.CHARS_PER_TOKEN`` characters a token; the labeler's fixed prompt, ≈ 12,300
characters, is ≈ 2,800 SmolLM2 tokens, ≈ 4.4 characters a token)."""
REPLY_TOKENS = 16
"""Estimated reply tokens besides the per-step entries (braces, the ``labels`` key)."""
REPLY_TOKENS_PER_STEP = 24
"""Estimated reply tokens per step: ``{"step": 12, "label": "practical.resources_cost"}``."""


def fitting_chunks(fixed_chars: int, step_chars: list[int], context: int | None) -> list[range]:
    """Steps of one response, cut into consecutive chunks whose prompt (``fixed_chars`` of
    ontology and instructions plus their steps' text) and reply fit ``context`` tokens; one
    chunk when the context is unknown or everything fits. ``MemlensError`` when not even the
    fixed part with one step fits.

    >>> fitting_chunks(300, [30] * 6, None), fitting_chunks(300, [30] * 6, 10_000)
    ([range(0, 6)], [range(0, 6)])
    >>> fitting_chunks(400, [400] * 4, 450)  # 100 + 2 x 100 prompt + 16 + 2 x 24 reply <= 405
    [range(0, 2), range(2, 4)]
    """

    def tokens(chars: int, steps: int) -> int:
        return -(-chars // CHARS_PER_TOKEN) + REPLY_TOKENS + REPLY_TOKENS_PER_STEP * steps

    if context:
        context = int(context * CONTEXT_MARGIN)
    if not context or tokens(fixed_chars + sum(step_chars), len(step_chars)) <= context:
        return [range(len(step_chars))]
    chunks: list[range] = []
    start, chars = 0, fixed_chars
    for index, size in enumerate(step_chars):
        if index > start and tokens(chars + size, index + 1 - start) > context:
            chunks.append(range(start, index))
            start, chars = index, fixed_chars
        chars += size
        if tokens(chars, index + 1 - start) > context:
            raise MemlensError(
                f"the LLM labeler's prompt for one step needs ~{tokens(chars, 1):,} tokens, more "
                f"than the labeling model's context of {context:,}: use a model or server with "
                "a larger context (llama.cpp: --ctx-size per slot)")
    chunks.append(range(start, len(step_chars)))
    return chunks


class LLMLabeler:
    """Label steps with a chat model (temperature 0 by default; ``seed`` for repeat runs).

    Prompts are sized to the model's context: ``context_tokens`` (else what the model reports:
    ``model.context_tokens()``, e.g. llama.cpp's ``/props``; else unbounded). A response whose
    prompt and reply would not fit is labeled in several calls over consecutive chunks of its
    steps (``fitting_chunks``); responses that fit are asked exactly as before (same cache key).
    """

    def __init__(self, model: ChatModel, ontology: Ontology, store=None, *,
                 temperature: float = 0.0, seed: int | None = None, max_tokens: int = 2048,
                 structured: bool = True, progress: bool = False,
                 context_tokens: int | None = None):
        self.model = model
        self.context_tokens = context_tokens
        """Context (prompt + reply tokens) the prompts are sized to; None: ask the model."""
        self.ontology = ontology
        self.store = store
        self.params = GenerationParams(
            temperature=temperature, seed=seed, max_tokens=max_tokens,
            json_schema=reply_schema(ontology) if structured else None)
        self.progress = progress
        self.counts = LabelingCounts()
        self.failed_calls: set[int] = set()
        """Indices (in the last ``label`` call) of responses left unlabeled because a model
        call failed for good — not labelled, to be retried — as opposed to invalid replies."""

    @property
    def labeler_id(self) -> str:
        """Model, sampling settings and ontology version (for cache keys and manifests)."""
        return (f"llm:{self.model.model_id}:t{self.params.temperature}:s{self.params.seed}:"
                f"{self.ontology.content_hash()[:12]}")

    def label(self, responses: list[list[str]]) -> list[list[str]]:
        """One symbol id (or ``unlabeled``) per step of every response."""

        results: list[list[str]] = [[] for _ in responses]
        self.failed_calls = set()
        todo = [index for index, steps in enumerate(responses) if steps]
        context = self._context()
        fixed = sum(len(m["content"]) for m in label_messages(self.ontology, []))
        parts = [(index, chunk) for index in todo for chunk in fitting_chunks(
            fixed, [len(step) for step in responses[index]], context)]
        requests = [ChatRequest(tuple(label_messages(
            self.ontology, [responses[index][i] for i in chunk])), self.params,
            tag="label/label") for index, chunk in parts]
        validators = [partial(parse_labels, n_steps=len(chunk), ontology=self.ontology)
                      for _, chunk in parts]
        checked = ask_json(self.model, requests, validators, store=self.store,
                           repair_prompt=REPAIR_PROMPT, progress=self.progress, desc="label")
        by_response: dict[int, list] = {}
        for (index, _), outcome in zip(parts, checked, strict=True):
            by_response.setdefault(index, []).append(outcome)
        for index in todo:
            outcomes = by_response[index]
            self.counts.responses += 1
            failed = next((outcome for outcome in outcomes if not outcome.ok), None)
            if failed is None:
                results[index] = [label for outcome in outcomes for label in outcome.value]
                repaired = any(outcome.repaired for outcome in outcomes)
                self.counts.valid_first_try += not repaired
                self.counts.repaired += repaired
            else:
                results[index] = self._give_up(index, responses[index], failed.problem,
                                               failed.reply)
                if any(outcome.failed_call for outcome in outcomes):
                    self.failed_calls.add(index)
        return results

    def _context(self) -> int | None:
        """The context to size prompts to: ``context_tokens``, else the model's own report."""
        if self.context_tokens is None:
            report = getattr(self.model, "context_tokens", None)
            self.context_tokens = (report() if callable(report) else None) or 0
        return self.context_tokens or None

    def _give_up(self, index: int, steps: list[str], reason: str, reply: str) -> list[str]:
        self.counts.unlabeled += 1
        self.counts.problems.append({"index": index, "reason": reason, "reply": reply[:500]})
        return [UNLABELED] * len(steps)
