"""One interface for every labeler: ``label(responses) -> one symbol id per step``."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memlens.errors import MemlensError
from memlens.models import get_model
from memlens.ontology.embedded_labeler import EmbeddedLabeler
from memlens.ontology.keyword_labeler import KeywordLabeler
from memlens.ontology.llm_labeler import LLMLabeler
from memlens.ontology.load import load_ontology
from memlens.ontology.schema import UNLABELED, Ontology

__all__ = ["UNLABELED", "Labeler", "get_labeler"]


@runtime_checkable
class Labeler(Protocol):
    """Maps the steps of each response to ontology symbol ids."""

    labeler_id: str
    """Identifies the labeler's behaviour (model, settings, ontology hash)."""

    def label(self, responses: list[list[str]]) -> list[list[str]]:
        """One symbol id (or ``UNLABELED``) per step, same shape as ``responses``."""
        ...


EMBEDDED_SPECS: dict[str, dict] = {
    "embedded": {},
    "embedded-abstain": {"abstain": True, "extra_examples": True},
}
"""The embedded (MiniLM) labelers by spec: ``embedded`` labels every step with its nearest
prototype; ``embedded-abstain`` (the audit default) leaves a step ``unlabeled`` when a no-value
prototype is nearer, with two extra realistic examples per symbol. On the held-out gold steps
from real SmolLM2 responses (n = 277, a third of them carrying no value) root accuracy 28.2 % →
64.3 %, Cohen's κ 0.196 → 0.486 (docs/ontology.md)."""


def is_embedded(spec: str) -> bool:
    """Whether ``spec`` names an embedded (MiniLM, offline) labeler.

    >>> is_embedded("embedded-abstain"), is_embedded("openai:gpt-4.1-mini")
    (True, False)
    """
    return spec in EMBEDDED_SPECS


def get_labeler(spec: str, ontology: Ontology | None = None, store=None, **options) -> Labeler:
    """The one labeler factory: ``"embedded"`` / ``"embedded-abstain"`` → ``EmbeddedLabeler``
    (:data:`EMBEDDED_SPECS`), ``"keyword"`` →
    ``KeywordLabeler`` (trigger words, no model: smoke runs and tests), otherwise a model string
    → ``LLMLabeler(get_model(spec))``. A ``llm:`` prefix forces the LLM labeler, so
    ``"llm:embedded"`` labels with the embedded chat model (SmolLM2) instead of MiniLM.

    ``options`` go to the labeler (embedded: ``encoder``, ``classifier_path``; LLM:
    ``temperature``, ``seed``, ``max_tokens``, ``structured``, ``progress``), except
    ``model_options`` which go to ``get_model``.

    >>> labeler = get_labeler("fake")
    >>> labeler.labeler_id.startswith("llm:fake:t0.0")
    True
    >>> get_labeler("llm:fake").labeler_id == labeler.labeler_id
    True
    >>> get_labeler("keyword").label([["Split the bill so everyone pays a fair share."]])
    [['social.fairness_reciprocity']]
    """
    ontology = ontology or load_ontology()
    if spec == "keyword":
        if options:
            raise MemlensError(f"labeler 'keyword' takes no options (got {', '.join(options)})")
        return KeywordLabeler(ontology)
    if is_embedded(spec):
        return EmbeddedLabeler(ontology, **{**EMBEDDED_SPECS[spec], **options})

    model = get_model(spec.removeprefix("llm:"), **options.pop("model_options", {}))
    return LLMLabeler(model, ontology, store=store, **options)
