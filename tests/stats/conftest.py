"""Simulated drift tables with a known truth, shared by the statistics tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def simulate_drift_table(
    effects: dict[tuple[str, str], float],
    *,
    n_questions: int = 40,
    rows_per_category: int = 2,
    floor: float = 0.3,
    question_sd: float = 0.05,
    row_sd: float = 0.08,
    seed: int = 0,
) -> pd.DataFrame:
    """Rows for (class, category) → true mean shift over the floor; one floor row per question.

    ``sri`` = 0.7·``dtw`` + noise, so the two metrics share the planted ordering.
    """
    rng = np.random.default_rng(seed)
    plan = [("control", "no_perturbation", 0.0, 1)]
    plan += [(klass, name, shift, rows_per_category) for (klass, name), shift in effects.items()]
    rows = []
    for question in range(n_questions):
        question_effect = rng.normal(0.0, question_sd)
        for klass, name, shift, count in plan:
            for _ in range(count):
                dtw = floor + question_effect + shift + rng.normal(0.0, row_sd)
                rows.append({"question_id": f"q{question}", "condition_class": klass,
                             "category": name, "dtw": dtw,
                             "sri": 0.7 * dtw + rng.normal(0.0, 0.03)})
    return pd.DataFrame(rows)


NULL_EFFECTS = {("noise", "filler"): 0.0, ("noise", "whitespace"): 0.0,
                ("noise", "punctuation"): 0.0, ("persona", "age"): 0.0,
                ("persona", "gender"): 0.0, ("life_event", "bereavement"): 0.0,
                ("life_event", "job_loss"): 0.0}

TIERED_EFFECTS = {("noise", "filler"): 0.0, ("noise", "whitespace"): 0.0,
                  ("noise", "punctuation"): 0.0, ("persona", "education"): 0.02,
                  ("persona", "age"): 0.04, ("persona", "gender"): 0.06,
                  ("persona", "disability"): 0.08, ("life_event", "bereavement"): 0.2,
                  ("life_event", "job_loss"): 0.22, ("life_event", "illness"): 0.24}


@pytest.fixture
def simulate():
    """The simulator (a fixture, so test modules need no cross-imports)."""
    return simulate_drift_table


@pytest.fixture
def null_effects():
    return dict(NULL_EFFECTS)


@pytest.fixture
def tiered_effects():
    return dict(TIERED_EFFECTS)
