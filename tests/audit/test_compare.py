"""The audit comparison's design check (paired / restricted with a warning / refused) and the
interpretability marking, on drift frames shaped like an audit's."""

import numpy as np
import pandas as pd
import pytest

from memlens.audit.compare import check_design, compare_frames
from memlens.errors import MemlensError

STIMULI = [("control", "no_perturbation", "control/no_perturbation"),
           ("noise", "filler", "noise/filler/1"), ("noise", "whitespace", "noise/whitespace/1"),
           ("persona", "age", "persona/age/1"), ("persona", "gender", "persona/gender/1"),
           ("life_event", "bereavement", "life_event/bereavement/1")]
VALID = {"verdict": "pass", "persona_interpretable": True, "explanation": "ok"}
INVALID = {"verdict": "fail", "persona_interpretable": False, "explanation": "sensitivity failed"}


def frame(questions, stimuli=STIMULI, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    rows = []
    for q in questions:
        for klass, category, stimulus in stimuli:
            value = 0.3 + rng.normal(0, 0.05) + (shift if category == "age" else 0.0)
            rows.append({"question_id": q, "condition_class": klass, "category": category,
                         "stimulus_id": stimulus, "sample": 1 if klass == "control" else 0,
                         "dtw": value, "sri": value * 0.7, "n_baselines": 1})
    return pd.DataFrame(rows)


QS = [f"q{i}" for i in range(12)]


def test_identical_designs_are_paired():
    check = check_design(frame(QS), frame(QS, seed=1), 1, 1)
    assert check.status == "paired" and check.warning is None
    assert len(check.questions) == 12 and len(check.stimuli) == 6


def test_overlapping_designs_are_restricted_with_a_warning_naming_the_drops():
    a = frame(QS)
    b = frame(QS[3:] + ["q90", "q91"], stimuli=STIMULI[:-1])
    check = check_design(a, b, 1, 1)
    assert check.status == "restricted"
    assert check.dropped == {"A": {"questions": 3, "stimuli": 1},
                             "B": {"questions": 2, "stimuli": 0}}
    assert "3 question(s) and 1 stimulus id(s) dropped from A" in check.warning
    assert "2 question(s) and 0 stimulus id(s) dropped from B" in check.warning
    result = compare_frames(a, b, baselines=(1, 1), validity=(VALID, VALID), n_bootstrap=200)
    assert result["design"]["status"] == "restricted"
    assert "bereavement" not in result["metrics"]["dtw"]["categories"]
    assert result["metrics"]["dtw"]["categories"]["age"]["n_questions"] == 9


def test_disjoint_designs_and_different_baselines_are_refused():
    with pytest.raises(MemlensError, match="share no question id"):
        check_design(frame(QS[:5]), frame(QS[5:]), 1, 1)
    with pytest.raises(MemlensError, match="share no stimulus id"):
        check_design(frame(QS, stimuli=STIMULI[:2]), frame(QS, stimuli=STIMULI[2:]), 1, 1)
    with pytest.raises(MemlensError, match="K = 1 vs K = 5"):
        check_design(frame(QS), frame(QS), 1, 5)


def test_restriction_that_loses_the_noise_reference_is_a_clear_error():
    a = frame(QS)
    b = frame(QS, stimuli=[STIMULI[0], STIMULI[3]])
    with pytest.raises(MemlensError, match="cannot compare on the shared design.*noise"):
        compare_frames(a, b, baselines=(1, 1), validity=(VALID, VALID), n_bootstrap=200)


def test_an_invalid_run_marks_persona_deltas_not_interpretable():
    result = compare_frames(frame(QS), frame(QS, seed=2, shift=0.2), baselines=(1, 1),
                            validity=(VALID, INVALID), n_bootstrap=200)
    categories = result["metrics"]["dtw"]["categories"]
    assert result["persona_interpretable"] is False
    assert categories["age"]["interpretable"] is False
    assert categories["filler"]["interpretable"] is True  # noise rows are the checks themselves
    assert result["validity"]["B"]["verdict"] == "fail"
    assert set(result["metrics"]) == {"dtw", "sri"}  # every metric both runs have


def test_direction_profiles_are_compared_only_when_both_runs_have_pair_rows():
    # the paired direction Δ itself is tested in test_compare_direction.py
    without = compare_frames(frame(QS), frame(QS), baselines=(1, 1), validity=(VALID, VALID),
                             n_bootstrap=200, pairs=([], None))
    assert "direction" not in without and without["format_version"] == 2
