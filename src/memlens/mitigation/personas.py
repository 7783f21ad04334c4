"""The persona strings of the SymPreference builder (≈100 in 20 categories, App. I.1).

Bundled in ``memlens/data/personas/personas.jsonl`` (one ``{"id", "category", "text"}`` per
line), written for memlens: short first-person details irrelevant to the benchmark questions.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from memlens.errors import MemlensError
from memlens.jsonl import UniqueIds, iter_json_objects, read_text


@dataclass(frozen=True)
class Persona:
    """One persona string and its sociodemographic / psychosocial category."""

    id: str
    category: str
    text: str


def load_personas(path: str | Path | None = None) -> list[Persona]:
    """Read personas (JSONL); None reads the bundled set. Errors name the file and line.

    >>> personas = load_personas()
    >>> len(personas), len({p.category for p in personas})
    (100, 20)
    """
    if path is None:
        source = resources.files("memlens.data").joinpath("personas/personas.jsonl")
        text, name = source.read_text(encoding="utf-8"), "bundled personas.jsonl"
    else:
        text, name = read_text(path, "personas file"), str(path)
    personas, ids = [], UniqueIds(name)
    expected = "a JSON object with fields id, category, text"
    for number, row in iter_json_objects(text, name, expected):
        for field in ("id", "category", "text"):
            if not isinstance(row.get(field), str) or not row[field].strip():
                raise MemlensError(f"{name}:{number}: field '{field}' must be a non-empty string")
        ids.add(row["id"], number)
        personas.append(Persona(row["id"], row["category"], row["text"].strip()))
    if not personas:
        raise MemlensError(f"{name}: no personas")
    return personas


def sample_personas(personas: list[Persona], count: int, seed: int) -> list[Persona]:
    """``count`` personas drawn uniformly without replacement with ``default_rng(seed)``.

    >>> [p.id for p in sample_personas(load_personas(), 3, seed=1)] == \\
    ...     [p.id for p in sample_personas(load_personas(), 3, seed=1)]
    True
    """
    if count > len(personas):
        raise MemlensError(f"--personas-per-question {count} exceeds the {len(personas)} personas")
    picks = np.random.default_rng(seed).choice(len(personas), size=count, replace=False)
    return [personas[int(i)] for i in picks]
