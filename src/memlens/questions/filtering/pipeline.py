"""The candidate-filtering pipeline: keyword rules, then (optionally) the LLM rater.

The human round trip (``annotation``) follows as a separate, offline step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memlens.questions.filtering.keywords import KeywordRules
from memlens.questions.filtering.rater import rate_questions


@dataclass
class FilterResult:
    """Counts per stage and the surviving rows (with provenance and the evidence for keeping)."""

    counts: dict[str, int]
    survivors: list[dict] = field(default_factory=list)
    rater_errors: int = 0

    def summary(self) -> str:
        """One line per stage, e.g. ``read          120``."""
        lines = [f"{stage:<14}{count:>7}" for stage, count in self.counts.items()]
        if "rater_kept" in self.counts:
            lines.append(f"{'rater_errors':<14}{self.rater_errors:>7}")
        return "\n".join(lines)


def filter_candidates(
    candidates: Sequence,
    model=None,
    store=None,
    rules: KeywordRules | None = None,
) -> FilterResult:
    """Keep candidates that pass the keyword rules and, when ``model`` is given, the rater.

    ``candidates`` are objects with ``id``, ``text`` and ``to_dict()`` (``Candidate`` or
    ``Question``). Counts: ``read``, ``keyword_kept`` and, with a model, ``rater_kept``.
    """
    rules = rules or KeywordRules()
    rows = []
    for candidate in candidates:
        kept, keep_hits, _ = rules.decide(candidate.text)
        if kept:
            rows.append((candidate, {**candidate.to_dict(), "keyword_hits": keep_hits}))
    counts = {"read": len(candidates), "keyword_kept": len(rows)}
    if model is None:
        return FilterResult(counts, [row for _, row in rows])
    verdicts = rate_questions([candidate for candidate, _ in rows], model, store=store)
    survivors = [
        {**row, "rater": verdict.to_dict()}
        for (_, row), verdict in zip(rows, verdicts, strict=True) if verdict.keep
    ]
    counts["rater_kept"] = len(survivors)
    errors = sum(1 for verdict in verdicts if verdict.error)
    return FilterResult(counts, survivors, rater_errors=errors)
