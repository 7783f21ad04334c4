"""Filtering candidate questions: keyword rules (App. A), an LLM rater over the four
properties, and the human-annotation round trip."""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "AnnotationResult": "annotation",
    "DROP_LISTS": "keywords",
    "FilterResult": "pipeline",
    "KEEP_SIGNALS": "keywords",
    "KeywordRules": "keywords",
    "PROPERTIES": "rater",
    "RaterVerdict": "rater",
    "export_for_annotation": "annotation",
    "filter_candidates": "pipeline",
    "import_annotations": "annotation",
    "parse_verdict": "rater",
    "rate_questions": "rater",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
