"""Deprecated (removed in the next minor release): the keyword labeler moved to the ontology
package; build it with ``memlens.ontology.get_labeler("keyword")``. Importing
``KeywordLabeler`` from here still works, with a ``DeprecationWarning``."""

from memlens.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {}, deprecated={
    "KeywordLabeler": ("memlens.ontology.keyword_labeler", 'memlens.ontology.get_labeler("keyword")'),
})
__all__: list[str] = []
