"""The LLM labeler: one call per response labels all its steps; validated, repaired once, cached.

Calls go through ``memlens.engine.run_requests`` so a ``RunStore`` caches and resumes them.
A reply that still fails validation after one repair attempt — or a call that failed for good —
makes every step of that response ``unlabeled``; the problem is recorded in ``problems``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memlens.models.base import ChatModel, ChatRequest, GenerationParams, ModelCallError
from memlens.ontology.prompting import (
    InvalidReply,
    label_messages,
    parse_labels,
    repair_messages,
    reply_schema,
)
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


class LLMLabeler:
    """Label steps with a chat model (temperature 0 by default; ``seed`` for repeat runs)."""

    def __init__(self, model: ChatModel, ontology: Ontology, store=None, *,
                 temperature: float = 0.0, seed: int | None = None, max_tokens: int = 2048,
                 structured: bool = True, progress: bool = False):
        self.model = model
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

    def _run(self, conversations: list[list[dict]], desc: str) -> list:
        from memlens.engine import run_requests

        requests = [ChatRequest(tuple(messages), self.params, tag=f"label/{desc}")
                    for messages in conversations]
        return run_requests(self.model, requests, self.store, progress=self.progress,
                            desc=desc)

    def label(self, responses: list[list[str]]) -> list[list[str]]:
        """One symbol id (or ``unlabeled``) per step of every response."""
        results: list[list[str] | None] = [[] if not steps else None for steps in responses]
        self.failed_calls = set()
        todo = [index for index, steps in enumerate(responses) if steps]
        prompts = {index: label_messages(self.ontology, responses[index]) for index in todo}
        first = self._run([prompts[index] for index in todo], "label")
        repairs: dict[int, list[dict]] = {}
        for index, outcome in zip(todo, first, strict=True):
            self.counts.responses += 1
            labels, problem = self._check(outcome, len(responses[index]))
            if labels is not None:
                results[index] = labels
                self.counts.valid_first_try += 1
            elif isinstance(outcome, ModelCallError):
                results[index] = self._give_up(index, responses[index], problem, "")
                self.failed_calls.add(index)
            else:
                repairs[index] = repair_messages(prompts[index], outcome.text, problem)
        second = self._run(list(repairs.values()), "label-repair") if repairs else []
        for index, outcome in zip(repairs, second, strict=True):
            labels, problem = self._check(outcome, len(responses[index]))
            if labels is not None:
                results[index] = labels
                self.counts.repaired += 1
            else:
                reply = "" if isinstance(outcome, ModelCallError) else outcome.text
                results[index] = self._give_up(index, responses[index], problem, reply)
                if isinstance(outcome, ModelCallError):
                    self.failed_calls.add(index)
        return [list(labels or []) for labels in results]

    def _check(self, outcome, n_steps: int) -> tuple[list[str] | None, str]:
        if isinstance(outcome, ModelCallError):
            return None, f"model call failed: {outcome.reason}"
        try:
            return parse_labels(outcome.text, n_steps, self.ontology), ""
        except InvalidReply as problem:
            return None, str(problem)

    def _give_up(self, index: int, steps: list[str], reason: str, reply: str) -> list[str]:
        self.counts.unlabeled += 1
        self.counts.problems.append({"index": index, "reason": reason, "reply": reply[:500]})
        return [UNLABELED] * len(steps)
