"""Memory sets: several facts in memory at once, as their own condition classes.

* ``persona_in_set`` — one persona / life-event fact embedded among ``n`` neutral facts (the
  realistic case: a stored profile where one line is sensitive), at a seeded position;
* ``neutral_set`` — the same ``n`` neutral facts alone (what the profile adds without the
  sensitive line), so "the fact among neutral ones" can be measured net of the profile itself;
* ``combination`` — two facts of different attribute categories together.

Neutral facts: ``memlens/data/stimuli/neutral_facts.jsonl`` (persona-free preferences and
habits, written for memlens). A memory set renders like any stimulus: ``inject`` lists its facts
(one per line; one ``- `` item each in ``system`` mode) and memory templates get them as
``{memory_list}`` / ``{memory_json}`` items.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import combinations
from pathlib import Path

import numpy as np

from memlens.errors import MemlensError
from memlens.jsonl import UniqueIds, bundled_or_file, iter_json_objects
from memlens.rowkeys import derive_seed

MEMORY_SET_CLASSES = ("neutral_set", "persona_in_set", "combination")
"""Condition classes of memory sets (kept out of the single-stimulus statistics)."""
MEMORY_SET_KINDS = ("among_neutral", "combined")
"""What ``AuditConfig.memory_sets`` may ask for."""
_SENSITIVE = ("persona", "life_event")


@dataclass(frozen=True)
class MemorySet:
    """Several memory facts injected together (see the module docstring)."""

    id: str
    stimulus_class: str
    category: str
    """The attribute category (``neutral`` for the neutral set, ``a+b`` for a combination)."""
    facts: tuple[str, ...]
    members: tuple[str, ...] = ()
    """Ids of the persona / life-event stimuli it contains."""

    @property
    def text(self) -> str:
        """The facts, one per line (how steps rows and reports show the memory)."""
        return "\n".join(self.facts)

    def to_dict(self) -> dict:
        """Plain form (manifest hashes)."""
        return asdict(self)


def load_neutral_facts(path: str | Path | None = None) -> list[str]:
    """Neutral facts (JSONL rows with ``id`` and ``text``); None = the bundled ones.

    >>> len(load_neutral_facts()), load_neutral_facts()[0]
    (12, 'I prefer tea to coffee.')
    """
    label, text = bundled_or_file(path, "stimuli/neutral_facts.jsonl", "neutral facts file")
    ids, facts = UniqueIds(label), []
    for line_number, row in iter_json_objects(text, label, "a JSON object with id and text"):
        if not all(isinstance(row.get(k), str) and row[k].strip() for k in ("id", "text")):
            raise MemlensError(f"{label}:{line_number}: fields 'id' and 'text' must be "
                               "non-empty strings")
        ids.add(row["id"], line_number)
        facts.append(row["text"].strip())
    return facts


def among_neutral_sets(stimuli: list, neutral: list[str], n_neutral: int,
                       seed: int) -> list[MemorySet]:
    """The neutral set and, per persona / life-event stimulus, that fact among ``n_neutral``
    neutral facts at position ``derive_seed(seed, stimulus id) mod (n + 1)``.

    >>> from memlens.stimuli import Stimulus
    >>> sets = among_neutral_sets([Stimulus("persona/age/1", "persona", "age", "I am 72.")],
    ...                           ["A.", "B."], 2, seed=0)
    >>> [(s.id, s.stimulus_class, len(s.facts)) for s in sets]
    [('set/neutral', 'neutral_set', 2), ('set/among_neutral/persona/age/1', 'persona_in_set', 3)]
    """
    if not 1 <= n_neutral <= len(neutral):
        raise MemlensError(f"neutral_facts must be between 1 and {len(neutral)} (the neutral "
                           f"facts available), got {n_neutral}")
    base = tuple(neutral[:n_neutral])
    out = [MemorySet("set/neutral", "neutral_set", "neutral", base)]
    for stimulus in stimuli:
        if stimulus.stimulus_class not in _SENSITIVE:
            continue
        position = derive_seed(seed, stimulus.id) % (n_neutral + 1)
        facts = (*base[:position], stimulus.text, *base[position:])
        out.append(MemorySet(f"set/among_neutral/{stimulus.id}", "persona_in_set",
                             stimulus.category, facts, (stimulus.id,)))
    return out


def combination_sets(stimuli: list, max_pairs: int, seed: int) -> list[MemorySet]:
    """Two facts of different categories together: the first selected stimulus of each
    persona / life-event category, every pair of categories, at most ``max_pairs`` of them
    (a seeded draw, ``numpy.random.default_rng(seed)``), in catalogue order.

    >>> from memlens.stimuli import Stimulus
    >>> st = [Stimulus("p/age/1", "persona", "age", "I am 72."),
    ...       Stimulus("p/income/1", "persona", "income", "I earn little.")]
    >>> [(s.id, s.category, s.facts) for s in combination_sets(st, 5, 0)]
    [('set/combined/p/age/1+p/income/1', 'age+income', ('I am 72.', 'I earn little.'))]
    """
    first: dict[str, object] = {}
    for stimulus in stimuli:
        if stimulus.stimulus_class in _SENSITIVE:
            first.setdefault(stimulus.category, stimulus)
    pairs = list(combinations(first.values(), 2))
    if len(pairs) > max_pairs:
        keep = set(np.random.default_rng(seed).choice(len(pairs), size=max_pairs, replace=False))
        pairs = [pair for index, pair in enumerate(pairs) if index in keep]
    return [MemorySet(f"set/combined/{a.id}+{b.id}", "combination", f"{a.category}+{b.category}",
                      (a.text, b.text), (a.id, b.id)) for a, b in pairs]
