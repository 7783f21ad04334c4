"""The LLM labeler: one call per response labels all its steps; validated, repaired once, cached.

Calls go through ``memlens.jsonreply.ask_json`` (``memlens.engine.run_requests``) so a
``RunStore`` caches and resumes them.
A reply that still fails validation after one repair attempt — or a call that failed for good —
makes every step of that response ``unlabeled``; the problem is recorded in ``problems``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

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

    def label(self, responses: list[list[str]]) -> list[list[str]]:
        """One symbol id (or ``unlabeled``) per step of every response."""
        from memlens.jsonreply import ask_json

        results: list[list[str]] = [[] for _ in responses]
        self.failed_calls = set()
        todo = [index for index, steps in enumerate(responses) if steps]
        requests = [ChatRequest(tuple(label_messages(self.ontology, responses[index])),
                                self.params, tag="label/label") for index in todo]
        validators = [partial(parse_labels, n_steps=len(responses[index]),
                              ontology=self.ontology) for index in todo]
        checked = ask_json(self.model, requests, validators, store=self.store,
                           repair_prompt=REPAIR_PROMPT, progress=self.progress, desc="label")
        for index, outcome in zip(todo, checked, strict=True):
            self.counts.responses += 1
            if outcome.ok:
                results[index] = outcome.value
                self.counts.valid_first_try += not outcome.repaired
                self.counts.repaired += outcome.repaired
            else:
                results[index] = self._give_up(index, responses[index], outcome.problem,
                                               outcome.reply)
                if outcome.failed_call:
                    self.failed_calls.add(index)
        return results

    def _give_up(self, index: int, steps: list[str], reason: str, reply: str) -> list[str]:
        self.counts.unlabeled += 1
        self.counts.problems.append({"index": index, "reason": reason, "reply": reply[:500]})
        return [UNLABELED] * len(steps)
