"""A comparison resting on too few questions is never called significant."""

import pandas as pd

from memlens.audit.compare import compare_frames
from memlens.report.compare import _flag


def frame(shift: float) -> pd.DataFrame:
    rows = []
    for q, base in (("q1", 0.30), ("q2", 0.40)):
        for category, klass, value in (("no_perturbation", "control", base),
                                       ("filler", "noise", base + 0.01),
                                       ("whitespace", "noise", base - 0.01),
                                       ("age", "persona", base + 0.1 + shift)):
            rows.append({"question_id": q, "condition_class": klass, "category": category,
                         "stimulus_id": f"{klass}/{category}/1", "sample": 0, "dtw": value})
    return pd.DataFrame(rows)


def test_two_question_comparison_is_not_interpretable():
    valid = {"verdict": "pass", "persona_interpretable": True, "explanation": ""}
    result = compare_frames(frame(0.0), frame(0.2), baselines=(1, 1), validity=(valid, valid),
                            n_bootstrap=200)
    age = result["metrics"]["dtw"]["categories"]["age"]
    assert age["n_questions"] == 2 and not age["interpretable"]
    assert age["not_interpretable_reason"] == "fewer than 8 paired questions (2)"
    assert _flag(age, "mean") == "not interpretable (fewer than 8 paired questions (2))"
