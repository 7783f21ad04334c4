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
    rules: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per keyword rule (category): ``{"keep:<category>": {"hit", "kept"}, "drop:<category>":
    {"hit", "decisive"}}`` — candidates whose text matched a cue of the category, and (keep)
    how many of those were kept by the keywords / (drop) how many had a keep-signal and were
    dropped by this category (alone or with others); plus ``no_keep_signal``: ``{"dropped"}``."""

    def summary(self) -> str:
        """One line per stage, e.g. ``read          120``."""
        lines = [f"{stage:<14}{count:>7}" for stage, count in self.counts.items()]
        if "rater_kept" in self.counts:
            lines.append(f"{'rater_errors':<14}{self.rater_errors:>7}")
        return "\n".join(lines)

    def rule_summary(self) -> str:
        """One line per keyword rule with k/n of the candidates read, e.g.
        ``keep:advice_decision   matched 1121/1360 (82.4 %), kept 1004``."""
        total = self.counts.get("read", 0)
        lines = []
        for rule, values in self.rules.items():
            (first, count), *rest = values.items()
            share = f" ({100 * count / total:.1f} %)" if total else ""
            verb = {"hit": "matched"}.get(first, first)
            extra = "".join(f", {name} {value}" for name, value in rest)
            lines.append(f"{rule:<28}{verb} {count}/{total}{share}{extra}")
        return "\n".join(lines)


def filter_candidates(
    candidates: Sequence,
    model=None,
    store=None,
    rules: KeywordRules | None = None,
    rater_limit: int | None = None,
) -> FilterResult:
    """Keep candidates that pass the keyword rules and, when ``model`` is given, the rater.

    ``candidates`` are objects with ``id``, ``text`` and ``to_dict()`` (``Candidate`` or
    ``Question``). Counts: ``read``, ``keyword_kept`` and, with a model, ``rater_kept``.
    ``rater_limit`` N: only the first N keyword survivors (in source order) go to the rater —
    a subset for a slow rater; counted as ``rated`` — and only rated ones can survive.
    """
    rules = rules or KeywordRules()
    rows = []
    tally = {f"keep:{category}": {"hit": 0, "kept": 0} for category in rules.keep}
    tally |= {f"drop:{category}": {"hit": 0, "decisive": 0} for category in rules.drop}
    tally["no_keep_signal"] = {"dropped": 0}
    for candidate in candidates:
        kept, keep_hits, drop_hits = rules.decide(candidate.text)
        _count_rules(tally, kept, keep_hits, drop_hits)
        if kept:
            rows.append((candidate, {**candidate.to_dict(), "keyword_hits": keep_hits}))
    counts = {"read": len(candidates), "keyword_kept": len(rows)}
    if model is None:
        return FilterResult(counts, [row for _, row in rows], rules=tally)
    if rater_limit is not None:
        rows = rows[:rater_limit]
        counts["rated"] = len(rows)
    verdicts = rate_questions([candidate for candidate, _ in rows], model, store=store)
    survivors = [
        {**row, "rater": verdict.to_dict()}
        for (_, row), verdict in zip(rows, verdicts, strict=True) if verdict.keep
    ]
    counts["rater_kept"] = len(survivors)
    errors = sum(1 for verdict in verdicts if verdict.error)
    return FilterResult(counts, survivors, rater_errors=errors, rules=tally)


def _count_rules(tally: dict, kept: bool, keep_hits: list[str], drop_hits: list[str]) -> None:
    """Add one candidate's keyword decision to the per-rule tally (hits are ``category:cue``)."""
    keep_categories = {hit.split(":", 1)[0] for hit in keep_hits}
    drop_categories = {hit.split(":", 1)[0] for hit in drop_hits}
    for category in keep_categories:
        tally[f"keep:{category}"]["hit"] += 1
        tally[f"keep:{category}"]["kept"] += kept
    for category in drop_categories:
        tally[f"drop:{category}"]["hit"] += 1
        tally[f"drop:{category}"]["decisive"] += bool(keep_hits)
    if not keep_hits:
        tally["no_keep_signal"]["dropped"] += 1
