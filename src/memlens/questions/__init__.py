"""Questions: the bundled benchmark, loaders for candidates from any source, and filtering."""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "Candidate": "sources",
    "Question": "benchmark",
    "RelevanceRating": "orthogonality",
    "excluded_pairs": "orthogonality",
    "load_candidates": "sources",
    "load_questions": "benchmark",
    "rate_relevance": "orthogonality",
    "select_questions": "benchmark",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
