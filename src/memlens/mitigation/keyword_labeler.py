"""Moved to ``memlens.ontology.keyword_labeler`` (the one labeler factory,
``memlens.ontology.get_labeler("keyword")``, builds it); kept here so old imports work."""

from memlens.ontology.keyword_labeler import KeywordLabeler

__all__ = ["KeywordLabeler"]
