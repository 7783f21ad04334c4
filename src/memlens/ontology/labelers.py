"""One interface for every labeler: ``label(responses) -> one symbol id per step``."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memlens.errors import MemlensError
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


def get_labeler(spec: str, ontology: Ontology | None = None, store=None, **options) -> Labeler:
    """The one labeler factory: ``"embedded"`` → ``EmbeddedLabeler``, ``"keyword"`` →
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
        from memlens.ontology.keyword_labeler import KeywordLabeler

        if options:
            raise MemlensError(f"labeler 'keyword' takes no options (got {', '.join(options)})")
        return KeywordLabeler(ontology)
    if spec == "embedded":
        from memlens.ontology.embedded_labeler import EmbeddedLabeler

        return EmbeddedLabeler(ontology, **options)
    from memlens.models import get_model
    from memlens.ontology.llm_labeler import LLMLabeler

    model = get_model(spec.removeprefix("llm:"), **options.pop("model_options", {}))
    return LLMLabeler(model, ontology, store=store, **options)
