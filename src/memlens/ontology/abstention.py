"""Abstention and extra prototype texts for the embedded labeler on real, messy steps.

``embedded_prototypes.json`` (package data, plain JSON) holds hand-written texts that are never
taken from the gold or dev sets: ``non_value`` — steps without value reasoning (step headers,
restated questions, bare answers, filler) whose mean embedding is a "no value" prototype — and
``examples`` — extra realistic steps per symbol id. ``abstain_mask`` says which steps become
``unlabeled``: those closer to the no-value prototype than to any symbol, and those whose best
symbol beats the second by less than ``min_margin`` (cosine). Chosen on the dev split
(docs/ontology.md, "Gold steps from real responses").
"""

from __future__ import annotations

import functools
import json
from importlib import resources

import numpy as np

from memlens.errors import MemlensError

EXTRAS_FILE = "embedded_prototypes.json"


@functools.lru_cache(maxsize=1)
def prototype_extras() -> dict:
    """``{"non_value": [...], "examples": {symbol_id: [...]}}`` from the bundled JSON file."""
    source = resources.files("memlens").joinpath("data", "ontology", EXTRAS_FILE)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise MemlensError(f"cannot read bundled {EXTRAS_FILE}: {error}") from None
    non_value, examples = data.get("non_value"), data.get("examples")
    if (not isinstance(non_value, list) or not non_value or not isinstance(examples, dict)
            or not all(isinstance(t, str) and t.strip() for t in non_value)):
        raise MemlensError(f"bundled {EXTRAS_FILE}: needs a non-empty 'non_value' list of "
                           "texts and an 'examples' object")
    return {"non_value": list(non_value),
            "examples": {key: list(value) for key, value in examples.items()}}


def abstain_mask(scores: np.ndarray, non_value: np.ndarray | None,
                 min_margin: float = 0.0) -> np.ndarray:
    """Boolean mask of the steps to leave ``unlabeled``.

    ``scores`` is the (steps × symbols) cosine matrix, ``non_value`` each step's cosine to the
    no-value prototype (or ``None``). A step abstains when ``non_value`` beats its best symbol,
    or when best minus second-best is below ``min_margin``.

    >>> abstain_mask(np.array([[0.5, 0.1], [0.30, 0.29], [0.2, 0.1]]),
    ...              np.array([0.3, 0.0, 0.25]), min_margin=0.05).tolist()
    [False, True, True]
    """
    ordered = np.sort(scores, axis=1)
    best = ordered[:, -1]
    mask = np.zeros(len(scores), dtype=bool)
    if ordered.shape[1] > 1 and min_margin > 0:
        mask |= (best - ordered[:, -2]) < min_margin
    if non_value is not None:
        mask |= non_value > best
    return mask
