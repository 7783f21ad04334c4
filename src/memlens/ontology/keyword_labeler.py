"""A tiny deterministic labeler from the ontology's trigger words (no model, no download).

Each step gets the symbol whose trigger words (modal verbs, action verbs, cue phrases) occur
most often in it, lower-cased substring matches; ties go to the symbol listed first; a step with
no match is ``unlabeled``. It is far less accurate than the embedded or LLM labelers and exists
for fast CPU smoke training and tests (spec ``"keyword"`` of ``memlens.ontology.get_labeler``).
"""

from __future__ import annotations

from memlens.ontology.load import load_ontology
from memlens.ontology.schema import UNLABELED, Ontology


class KeywordLabeler:
    """Label steps by counting ontology trigger words.

    >>> labeler = KeywordLabeler()
    >>> labeler.label([["Split the bill so everyone pays a fair share.", "zzz"]])
    [['social.fairness_reciprocity', 'unlabeled']]
    """

    def __init__(self, ontology: Ontology | None = None):
        self.ontology = ontology or load_ontology()
        self._triggers = [
            (symbol.id, [word.lower() for word in (*symbol.triggers.modal_verbs,
                                                   *symbol.triggers.action_verbs,
                                                   *symbol.triggers.cue_phrases) if word.strip()])
            for symbol in self.ontology.symbols
        ]

    @property
    def labeler_id(self) -> str:
        """Identifies the labeler's behaviour (ontology hash)."""
        return f"keyword:{self.ontology.content_hash()[:12]}"

    def label_step(self, step: str) -> str:
        """The symbol id of one step, or ``UNLABELED``."""
        text = step.lower()
        best, best_count = UNLABELED, 0
        for symbol_id, words in self._triggers:
            count = sum(text.count(word) for word in words)
            if count > best_count:
                best, best_count = symbol_id, count
        return best

    def label(self, responses: list[list[str]]) -> list[list[str]]:
        """One symbol id (or ``UNLABELED``) per step, same shape as ``responses``."""
        return [[self.label_step(step) for step in steps] for steps in responses]
