"""Typed statistics for report and gate unit tests: made by the real ``analyze()`` on a small
simulated drift table, then edited through their JSON form, so every edit is validated."""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache

import numpy as np
import pandas as pd

from memlens.stats import analyze
from memlens.stats.results import AuditStats, HowSection

CATEGORIES = (("control", "no_perturbation", 0.0), ("noise", "filler", 0.0),
              ("noise", "whitespace", 0.0), ("persona", "age", 0.05),
              ("life_event", "job_loss", 0.2))


@cache
def _analysed() -> dict:
    rng = np.random.default_rng(0)
    rows = []
    for question in range(8):
        for klass, category, shift in CATEGORIES:
            for _ in range(2):
                dtw = 0.3 + shift + rng.normal(0, 0.05)
                rows.append({"question_id": f"q{question}", "condition_class": klass,
                             "category": category, "dtw": dtw,
                             "sri": 0.7 * dtw + rng.normal(0, 0.02)})
    return analyze(pd.DataFrame(rows), n_bootstrap=200, mixed_model=False).to_json()


def audit_stats(edit: Callable[[dict], None] | None = None) -> AuditStats:
    """The statistics of the simulated table, after ``edit`` changed their JSON form."""
    data = copy.deepcopy(_analysed())
    if edit is not None:
        edit(data)
    return AuditStats.model_validate(data)


def how_section(rows: list[dict], **fields) -> HowSection:
    """A how-drift section holding ``rows`` (settings as ``memlens.audit.howdrift`` writes)."""
    return HowSection(version=1, seed=0, n_bootstrap=2000, confidence=0.95, alpha=0.05,
                      floor="no_perturbation", rows=rows, **fields)
