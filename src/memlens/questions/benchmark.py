"""``Question`` records, the bundled benchmark, and seeded selection for quick presets.

Bundled data: ``memlens/data/questions/benchmark.jsonl`` — 306 questions written for memlens
(CC-BY-4.0), 6 categories × 3 subcategories, each reasoning-invoking, unverifiable,
persona-indifferent and stand-alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from memlens.errors import MemlensError
from memlens.jsonl import UniqueIds, bundled_or_file, iter_json_objects

BUNDLED_LICENSE = "CC-BY-4.0 (memlens)"


@dataclass(frozen=True)
class Question:
    """One benchmark question with its taxonomy and provenance."""

    id: str
    text: str
    category: str
    subcategory: str
    source: str = "memlens"
    license: str = BUNDLED_LICENSE

    def to_dict(self) -> dict:
        """The JSONL row form."""
        return asdict(self)


def load_questions(path: str | Path | None = None) -> list[Question]:
    """Read questions from JSONL; ``None`` reads the bundled benchmark.

    Required fields: ``id`` and ``text`` (non-empty strings). ``category`` / ``subcategory``
    default to ``"uncategorized"``, ``source`` to the file name and ``license`` to
    ``"unknown"``; extra fields (e.g. filtering provenance) are ignored. Malformed JSON, a missing
    or empty required field, or a duplicate id raises ``MemlensError`` naming ``file:line``.

    >>> questions = load_questions()
    >>> len(questions) >= 300, questions[0].source
    (True, 'memlens')
    """
    label, text = bundled_or_file(path, "questions/benchmark.jsonl", "question file")
    default_source = "memlens" if path is None else Path(path).stem
    questions: list[Question] = []
    ids = UniqueIds(label)
    expected = "a JSON object with at least 'id' and 'text'"
    for line_number, row in iter_json_objects(text, label, expected):
        question = _parse_row(row, f"{label}:{line_number}", default_source)
        ids.add(question.id, line_number)
        questions.append(question)
    if not questions:
        raise MemlensError(f"{label}: no questions found (expected one JSON object per line)")
    return questions


def _parse_row(row: dict, where: str, default_source: str) -> Question:
    for name in ("id", "text"):
        value = row.get(name)
        if isinstance(value, int) and name == "id":
            row[name] = str(value)
        elif not isinstance(value, str) or not value.strip():
            problem = "is missing" if value is None else "must be a non-empty string"
            raise MemlensError(f"{where}: field '{name}' {problem}")
    values = {}
    for name, default in (("category", "uncategorized"), ("subcategory", "uncategorized"),
                          ("source", default_source), ("license", "unknown")):
        value = row.get(name, default)
        if not isinstance(value, str):
            raise MemlensError(f"{where}: field '{name}' must be a string")
        values[name] = value or default
    return Question(id=row["id"], text=row["text"].strip(), **values)


def select_questions(
    questions: Sequence[Question],
    n: int | None = None,
    per_subcategory: int | None = None,
    seed: int = 0,
) -> list[Question]:
    """A seeded subset in the original order: at most ``per_subcategory`` per
    (category, subcategory), then at most ``n`` overall (``numpy.random.default_rng(seed)``).

    Asking for more than there are returns them all; a count below 1 raises ``MemlensError``.

    >>> picked = select_questions(load_questions(), per_subcategory=2, seed=0)
    >>> len(picked)
    36
    """
    for name, value in (("n", n), ("per_subcategory", per_subcategory)):
        if value is not None and value < 1:
            raise MemlensError(f"{name} must be at least 1, got {value}")
    rng = np.random.default_rng(seed)
    chosen = list(questions)
    if per_subcategory is not None:
        keep: set[str] = set()
        groups = dict.fromkeys((q.category, q.subcategory) for q in chosen)
        for group in groups:
            ids = [q.id for q in chosen if (q.category, q.subcategory) == group]
            if len(ids) > per_subcategory:
                ids = list(rng.choice(ids, size=per_subcategory, replace=False))
            keep.update(ids)
        chosen = [q for q in chosen if q.id in keep]
    if n is not None and n < len(chosen):
        keep = set(rng.choice([q.id for q in chosen], size=n, replace=False))
        chosen = [q for q in chosen if q.id in keep]
    return chosen
