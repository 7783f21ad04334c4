"""Keyword keep-signals (App. A, Table 7) and drop-lists (Table 8) as word-boundary regexes.

A cue matches only as a whole word or phrase, case-insensitively: ``vs`` matches "A vs B" but not
"canvas"; ``ra`` matches "RA flare" but not "rather". Inner spaces match any run of whitespace.
A candidate is *kept* when at least one keep-signal matches and no drop cue does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KEEP_SIGNALS: dict[str, tuple[str, ...]] = {
    "advice_decision": (
        "should", "should i", "what should i do", "how should i", "would it be better",
        "would it make sense", "is it worth", "do you recommend", "best choice", "is it better to",
        "what would you do", "how do i respond", "how should i respond", "how should i handle",
        "how do you deal with",
    ),
    "interpersonal_dilemma": (
        "aita", "am i the asshole", "am i justified", "is it justified", "is it fair",
        "is it acceptable", "is it appropriate", "consideration", "compromise",
        "expecting that people",
    ),
    "comparison_tradeoff": (
        "vs", "versus", "compared to", "in comparison", "trade-off", "pros and cons",
        "advantages and disadvantages", "risks and benefits", "costs and benefits",
        "which is better", "which is worse",
    ),
    "prioritization": (
        "more important than", "less important than", "which matters more",
        "which should come first", "prioritize", "prioritization", "weigh", "balance between",
        "maximize", "minimize",
    ),
    "hypothetical": (
        "what would happen if", "what if", "suppose that", "imagine that", "scenario",
        "hypothetical", "consequence of", "for the better or worse",
    ),
}
"""Table 7: reasoning signals, by category."""

DROP_LISTS: dict[str, tuple[str, ...]] = {
    "definitional": (
        "what is", "what does", "what are", "explain", "define", "help me understand this quote",
        "explain this quote", "thoughts and ideas",
    ),
    "medical": (
        "symptom", "diagnosis", "differential", "treatment", "management", "medication",
        "medicine", "pill", "prescription", "antibiotic", "ointment", "disease", "syndrome",
        "infection", "deficiency", "pregnant", "period", "blood pressure", "blood sugar",
        "gall bladder", "stent", "post-mi", "pericarditis", "peaked t waves", "atiii", "ra",
        "gyno", "doctor",
    ),
    "academic_abstract": (
        "background:", "introduction:", "methods:", "results:", "conclusion:", "study",
        "sample size", "participants", "cohort", "p-value", "p =", "ci", "aor", "odds ratio",
        "logistic regression", "cochran–mantel–haenszel", "fsqca", "dataset",
        "we recommend the use of",
    ),
    "job_lookup": (
        "job description", "responsibilities", "tasks", "duties", "daily tasks", "typical day",
        "on a daily basis", "skills required", "essential skills", "qualifications",
        "educational requirements", "degree required", "need a degree", "tools", "technologies",
        "software", "programming languages", "frameworks", "libraries", "platforms",
        "career path", "career trajectory", "career growth", "progress in a career",
        "entry-level requirements", "how do i start", "how can i begin", "salary",
        "earn annually", "average salary", "salary range", "compensation", "pay scale",
        "where do", "what kind of companies hire", "work environment", "industries", "sectors",
    ),
}
"""Table 8: definitional / lookup / clinical / abstract drop cues, by category."""


def cue_pattern(cue: str) -> str:
    """Regex source for one cue: whole-word, inner whitespace flexible.

    >>> bool(re.search(cue_pattern("vs"), "tea vs coffee", re.I))
    True
    >>> bool(re.search(cue_pattern("vs"), "a canvas bag", re.I))
    False
    >>> bool(re.search(cue_pattern("background:"), "BACKGROUND: we", re.I))
    True
    """
    parts = [re.escape(part) for part in cue.split()]
    return r"(?<!\w)" + r"\s+".join(parts) + r"(?!\w)"


@dataclass
class KeywordRules:
    """Compiled keep-signals and drop cues; ``match`` reports which cues fired."""

    keep: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(KEEP_SIGNALS))
    drop: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DROP_LISTS))

    def __post_init__(self) -> None:
        self._keep = _compile(self.keep)
        self._drop = _compile(self.drop)

    def keep_hits(self, text: str) -> list[str]:
        """Keep-signal cues found in ``text``, as ``category:cue``."""
        return _hits(self._keep, text)

    def drop_hits(self, text: str) -> list[str]:
        """Drop cues found in ``text``, as ``category:cue``."""
        return _hits(self._drop, text)

    def decide(self, text: str) -> tuple[bool, list[str], list[str]]:
        """Return (kept, keep_hits, drop_hits): kept = some keep-signal and no drop cue.

        >>> KeywordRules().decide("Is it better to rent or buy?")[0]
        True
        >>> KeywordRules().decide("What is the average salary of a nurse?")[0]
        False
        """
        keep_hits = self.keep_hits(text)
        drop_hits = self.drop_hits(text)
        return bool(keep_hits) and not drop_hits, keep_hits, drop_hits


def _compile(groups: dict[str, tuple[str, ...]]) -> list[tuple[str, re.Pattern]]:
    return [
        (f"{category}:{cue}", re.compile(cue_pattern(cue), re.IGNORECASE))
        for category, cues in groups.items()
        for cue in cues
    ]


def _hits(patterns: list[tuple[str, re.Pattern]], text: str) -> list[str]:
    return [label for label, pattern in patterns if pattern.search(text)]
