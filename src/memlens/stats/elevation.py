"""Per-question noise floors of drift rows: the mean drift of each question's no-memory
(``control``) rows, the reference a response's *elevation* (drift minus its question's floor) is
measured against in selectivity and memory-set statistics."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np


def question_floors(rows: Iterable[Mapping], metric: str) -> dict[str, float]:
    """``{question_id: mean metric of its control rows}`` (questions without any are absent).

    >>> question_floors([{"question_id": "q", "condition_class": "control", "dtw": 0.1},
    ...                  {"question_id": "q", "condition_class": "control", "dtw": 0.3},
    ...                  {"question_id": "r", "condition_class": "persona", "dtw": 0.9}], "dtw")
    {'q': 0.2}
    """
    values: dict[str, list[float]] = {}
    for row in rows:
        if row["condition_class"] == "control":
            values.setdefault(row["question_id"], []).append(float(row[metric]))
    return {question: float(np.mean(floor)) for question, floor in values.items()}
