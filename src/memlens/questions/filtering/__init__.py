"""Filtering candidate questions: keyword rules (App. A), an LLM rater over the four
properties, and the human-annotation round trip."""

from memlens.questions.filtering.annotation import (
    AnnotationResult,
    export_for_annotation,
    import_annotations,
)
from memlens.questions.filtering.keywords import DROP_LISTS, KEEP_SIGNALS, KeywordRules
from memlens.questions.filtering.pipeline import FilterResult, filter_candidates
from memlens.questions.filtering.rater import (
    PROPERTIES,
    RaterVerdict,
    parse_verdict,
    rate_questions,
)

__all__ = [
    "DROP_LISTS",
    "KEEP_SIGNALS",
    "PROPERTIES",
    "AnnotationResult",
    "FilterResult",
    "KeywordRules",
    "RaterVerdict",
    "export_for_annotation",
    "filter_candidates",
    "import_annotations",
    "parse_verdict",
    "rate_questions",
]
