"""``reasoning_steps()``: memlens's step parser and labeler as an inspect scorer.

Each reply is split into reasoning steps (``memlens.steps.split_steps``) and every step labelled
with one ontology symbol (``memlens.ontology.get_labeler``: the audit's default MiniLM labeler
unless ``-T labeler=…`` names another memlens labeler spec). The score's value is the number of
labelled steps; its metadata holds the cell, the steps, their labels and the symbol sequence,
which is what ``memlens import-inspect`` reads (and ``inspect view`` shows). Drift is a property of pairs of samples, so it is computed by
the ``class_drift`` metric over all scores, and in full by memlens after the import.
"""

from __future__ import annotations

import asyncio
import threading

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from memlens.audit.config import AuditConfig
from memlens.audit.labels import steps_digest
from memlens.inspect_ext.metrics import class_drift
from memlens.inspect_ext.replytext import reply_text
from memlens.ontology import UNLABELED, get_labeler, load_ontology
from memlens.ontology.schema import symbol_sequence
from memlens.steps import split_steps

DEFAULT_LABELER = AuditConfig.model_fields["labeler"].default
"""memlens's default audit labeler (the task passes the resolved setting)."""

CELL_KEYS = ("cell_id", "question_id", "stimulus_id", "condition_class", "category", "sample")
"""Sample metadata copied into the score metadata (the drift metric pairs responses by them)."""


class SharedLabeler:
    """One memlens labeler per scorer, built on first use and used by one sample at a time
    (inspect scores samples concurrently; the embedded labeler's encoder is not shared safely)."""

    def __init__(self, spec: str, ontology: str | None):
        self.spec, self.ontology = spec, ontology
        self._labeler = None
        self._lock = threading.Lock()

    def label(self, steps: list[str]) -> tuple[list[str], bool]:
        """One symbol id (or ``unlabeled``) per step, and whether the labeler's call failed."""

        with self._lock:
            if self._labeler is None:
                self._labeler = get_labeler(self.spec, ontology=load_ontology(self.ontology))
            labels = list(self._labeler.label([steps])[0])
            failed = 0 in getattr(self._labeler, "failed_calls", set())
        if len(labels) != len(steps):  # as memlens.audit.labels records a wrong-length reply
            labels = [UNLABELED] * len(steps)
        return labels, failed


@scorer(metrics=[mean(), class_drift()])
def reasoning_steps(labeler: str = DEFAULT_LABELER, ontology: str | None = None,
                    baselines: int = 5) -> Scorer:
    """Split the reply into steps and label them; value = labelled steps, metadata = the
    steps, labels and symbol sequence (``labeler``: memlens's default audit labeler unless
    given; ``baselines``: K of the design, for ``class_drift``)."""
    shared = SharedLabeler(labeler, ontology)

    async def score(state: TaskState, target: Target) -> Score:
        from inspect_ai.log import transcript

        text = reply_text(state.output.message if state.output else None, transcript().events)
        split = split_steps(text or "")
        steps = [step.text for step in split.steps]
        labels, failed = (await asyncio.to_thread(shared.label, steps)) if steps else ([], False)
        symbols = symbol_sequence(labels)
        metadata = {key: state.metadata.get(key) for key in CELL_KEYS}
        metadata |= {"method": split.method, "steps": steps, "steps_sha256": steps_digest(steps),
                     "labels": labels, "symbols": symbols, "labeler": labeler,
                     "labeler_failed": failed, "baselines": baselines}
        return Score(value=len(symbols), answer=" → ".join(symbols) or "(no labelled steps)",
                     explanation=f"{len(steps)} steps ({split.method}), {len(symbols)} labelled",
                     metadata=metadata)

    return score
