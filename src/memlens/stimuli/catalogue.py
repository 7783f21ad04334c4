"""The stimulus catalogue: ``Stimulus`` records, loading and validation, seeded selection.

Bundled data: ``memlens/data/stimuli/stimuli.jsonl`` with one JSON object per line and the fields
``id``, ``class`` (control | noise | persona | life_event), ``category`` and ``text``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memlens.errors import MemlensError
from memlens.jsonl import UniqueIds, bundled_or_file, iter_json_objects

STIMULUS_CLASSES = ("control", "noise", "persona", "life_event")
"""Valid values of the ``class`` field, in the order reports show them."""

_FIELDS = ("id", "class", "category", "text")


@dataclass(frozen=True)
class Stimulus:
    """One memory stimulus: an id like ``persona/age/older_adult``, its class, category and text.

    ``text`` is what gets injected; it is empty for ``control/no_perturbation`` and may be pure
    whitespace for the ``noise/whitespace`` exemplars (kept verbatim, never stripped).
    """

    id: str
    stimulus_class: str
    category: str
    text: str

    def to_dict(self) -> dict:
        """The JSONL row form (field name ``class``)."""
        return {"id": self.id, "class": self.stimulus_class, "category": self.category,
                "text": self.text}


def load_stimuli(path: str | Path | None = None) -> list[Stimulus]:
    """Read a stimulus catalogue (JSONL); ``None`` reads the bundled one.

    Every row is validated: malformed JSON, a missing or non-string field, an unknown ``class``,
    an empty ``id`` / ``category`` or a duplicate ``id`` raises ``MemlensError`` naming
    ``file:line`` and the field.

    >>> stimuli = load_stimuli()
    >>> stimuli[0].id, stimuli[0].text
    ('control/no_perturbation', '')
    """
    label, text = bundled_or_file(path, "stimuli/stimuli.jsonl", "stimulus file")
    stimuli: list[Stimulus] = []
    ids = UniqueIds(label)
    expected = f"a JSON object with fields {', '.join(_FIELDS)}"
    for line_number, row in iter_json_objects(text, label, expected):
        stimulus = _parse_row(row, f"{label}:{line_number}")
        ids.add(stimulus.id, line_number)
        stimuli.append(stimulus)
    if not stimuli:
        raise MemlensError(f"{label}: no stimuli found (expected one JSON object per line)")
    return stimuli


def _parse_row(row: dict, where: str) -> Stimulus:
    for name in _FIELDS:
        if name not in row:
            raise MemlensError(f"{where}: field '{name}' is missing")
        if not isinstance(row[name], str):
            raise MemlensError(f"{where}: field '{name}' must be a string")
    for name in ("id", "category"):
        if not row[name].strip():
            raise MemlensError(f"{where}: field '{name}' is empty")
    if row["class"] not in STIMULUS_CLASSES:
        raise MemlensError(f"{where}: field 'class': unknown class {row['class']!r} "
                           f"(valid: {', '.join(STIMULUS_CLASSES)})")
    return Stimulus(row["id"], row["class"], row["category"], row["text"])


def select_stimuli(
    stimuli: Sequence[Stimulus],
    classes: Iterable[str] | None = None,
    categories: Iterable[str] | None = None,
    per_category: int | None = None,
    seed: int = 0,
) -> list[Stimulus]:
    """A subset of ``stimuli`` in catalogue order: filter by class and category, then keep at
    most ``per_category`` stimuli of each category, drawn with ``numpy.random.default_rng(seed)``.

    Unknown classes or categories raise ``MemlensError`` listing the valid ones.

    >>> picked = select_stimuli(load_stimuli(), categories=["age"], per_category=2, seed=0)
    >>> len(picked), {s.category for s in picked}
    (2, {'age'})
    """
    chosen = list(stimuli)
    if classes is not None:
        wanted = _check_names(classes, {s.stimulus_class for s in chosen}, "class")
        chosen = [s for s in chosen if s.stimulus_class in wanted]
    if categories is not None:
        wanted = _check_names(categories, {s.category for s in chosen}, "category")
        chosen = [s for s in chosen if s.category in wanted]
    if per_category is None:
        return chosen
    if per_category < 1:
        raise MemlensError(f"per_category must be at least 1, got {per_category}")
    rng = np.random.default_rng(seed)
    keep: set[str] = set()
    for category in dict.fromkeys(s.category for s in chosen):
        members = [s.id for s in chosen if s.category == category]
        if len(members) > per_category:
            members = list(rng.choice(members, size=per_category, replace=False))
        keep.update(members)
    return [s for s in chosen if s.id in keep]


def _check_names(names: Iterable[str], valid: set[str], what: str) -> set[str]:
    wanted = {names} if isinstance(names, str) else set(names)
    unknown = sorted(wanted - valid)
    if unknown:
        raise MemlensError(f"unknown stimulus {what} {', '.join(map(repr, unknown))} "
                           f"(valid: {', '.join(sorted(valid))})")
    return wanted
