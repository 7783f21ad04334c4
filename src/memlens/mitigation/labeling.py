"""Step labeling for rewards: a lazily built labeler plus a cache keyed by step text.

``StepLabeling`` pickles without its labeler (TRL and ``accelerate`` pickle reward functions to
send them to worker processes); the labeler is rebuilt from its spec on first use. Several
rewards can share one ``StepLabeling`` so each step is labeled once per training run.
"""

from __future__ import annotations

from collections import OrderedDict

from memlens.errors import MemlensError
from memlens.ontology import get_labeler
from memlens.ontology.schema import symbol_sequence
from memlens.steps import split_steps


def build_labeler(spec: str):
    """A labeler from a spec: ``"keyword"`` (trigger words), ``"embedded"`` (MiniLM) or a model
    string for the LLM labeler (``"openai:MODEL@URL"``, ``"fake"``…)."""

    return get_labeler(spec)


def completion_text(completion: object) -> str:
    """The text of a TRL completion: a plain string, or a conversational completion (a list of
    messages) whose assistant contents are joined.

    >>> completion_text("<answer>A</answer>")
    '<answer>A</answer>'
    >>> completion_text([{"role": "assistant", "content": "hi"}])
    'hi'
    >>> completion_text([{"role": "assistant", "content": [{"type": "text", "text": "x"}]}])
    'x'
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, list | tuple):
        parts = []
        for message in completion:
            if not isinstance(message, dict) or message.get("role", "assistant") != "assistant":
                continue
            content = message.get("content") or ""
            if isinstance(content, list):
                content = "".join(str(part.get("text", "")) for part in content
                                  if isinstance(part, dict))
            parts.append(str(content))
        return "\n".join(parts)
    if completion is None:
        return ""
    raise MemlensError(f"reward: a completion must be a string or a list of chat messages, "
                       f"got {type(completion).__name__}")


class StepLabeling:
    """Split completions into steps and label them, with an LRU cache keyed by step text.

    ``labeler`` is a spec string (built lazily) or a labeler object (must itself pickle).
    ``calls`` counts ``label`` calls made on the underlying labeler.
    """

    def __init__(self, labeler: str | object = "embedded", cache_size: int = 100_000):
        self.spec = labeler if isinstance(labeler, str) else None
        self._labeler = None if isinstance(labeler, str) else labeler
        self.cache_size = cache_size
        self._cache: OrderedDict[str, str] = OrderedDict()
        self.calls = 0

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_cache"] = OrderedDict()
        if self.spec is not None:
            state["_labeler"] = None
        return state

    @property
    def labeler(self):
        """The underlying labeler, built from the spec on first use."""
        if self._labeler is None:
            self._labeler = build_labeler(self.spec)
        return self._labeler

    def trajectories(self, completions: list[object]) -> list[list[str]]:
        """One symbol sequence per completion; one batched ``label`` call for uncached steps."""
        step_lists = [[step.text for step in split_steps(completion_text(c)).steps]
                      for c in completions]
        missing = [[s for s in dict.fromkeys(steps) if s not in self._cache]
                   for steps in step_lists]
        batch = [steps for steps in missing if steps]
        if batch:
            self.calls += 1
            labeled = self.labeler.label(batch)
            for steps, labels in zip(batch, labeled, strict=True):
                for step, label in zip(steps, labels, strict=True):
                    self._remember(step, str(label))
        return [symbol_sequence([self._lookup(step) for step in steps]) for steps in step_lists]

    def _remember(self, step: str, label: str) -> None:
        self._cache[step] = label
        self._cache.move_to_end(step)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def _lookup(self, step: str) -> str:
        if step in self._cache:
            self._cache.move_to_end(step)
            return self._cache[step]
        # evicted between labeling and lookup (cache smaller than one batch): label alone
        label = str(self.labeler.label([[step]])[0][0])
        self._remember(step, label)
        return label
