"""Drift rows from stored steps and labels: baseline choice, exclusions, hand-computed values."""

import pytest

from memlens.audit import data_quality, drift_pairs, score_pairs


def steps_row(q, stimulus, sample, cls, cat, status="ok"):
    return {"id": f"{q}|{stimulus}|{sample}", "question_id": q, "stimulus_id": stimulus,
            "sample": sample, "condition_class": cls, "category": cat, "status": status,
            "method": "tagged" if status == "ok" else "none"}


CTRL = "control/no_perturbation"
AGE = "persona/age/1"


def test_baseline_is_first_no_memory_sample_and_values_are_exact():
    steps = [steps_row("q1", CTRL, 0, "control", "no_perturbation"),
             steps_row("q1", CTRL, 1, "control", "no_perturbation"),
             steps_row("q1", AGE, 0, "persona", "age")]
    labels = [{"id": f"q1|{CTRL}|0", "labels": ["A", "B", "C"]},
              {"id": f"q1|{CTRL}|1", "labels": ["A", "B", "C"]},
              {"id": f"q1|{AGE}|0", "labels": ["A", "C", "unlabeled"]}]
    rows = score_pairs(drift_pairs(steps, labels))
    by_id = {row["id"]: row for row in rows}
    control, persona = by_id[f"q1|{CTRL}|1"], by_id[f"q1|{AGE}|0"]
    assert control["dtw"] == 0.0 and control["sri"] == 0.0
    # ABC vs AC (unlabeled dropped): DTW raw 1 (B aligned with A or C) / 3; ED 1 / 3;
    # histograms (1/3,1/3,1/3) vs (1/2,0,1/2): JSD by hand below
    import math
    m = [5 / 12, 1 / 6, 5 / 12]
    p, q = [1 / 3] * 3, [0.5, 0.0, 0.5]
    kl = lambda x: sum(xi * math.log(xi / mi) for xi, mi in zip(x, m, strict=True) if xi > 0)  # noqa: E731
    d_dist = math.sqrt((0.5 * kl(p) + 0.5 * kl(q)) / math.log(2))
    assert persona["dtw"] == pytest.approx(1 / 3)
    assert persona["d_seq"] == pytest.approx(1 / 3)
    assert persona["d_dist"] == pytest.approx(d_dist)
    assert persona["sri"] == pytest.approx(0.5 / 3 + 0.5 * d_dist)
    assert persona["baseline_id"] == f"q1|{CTRL}|0"
    assert persona["compared_symbols"] == ["A", "C"]


def test_unusable_responses_are_excluded_and_counted():
    steps = [steps_row("q1", CTRL, 0, "control", "no_perturbation"),
             steps_row("q1", CTRL, 1, "control", "no_perturbation", status="no_steps"),
             steps_row("q1", AGE, 0, "persona", "age", status="failed_call"),
             steps_row("q2", CTRL, 0, "control", "no_perturbation", status="no_steps"),
             steps_row("q2", AGE, 0, "persona", "age"),
             steps_row("q3", CTRL, 0, "control", "no_perturbation"),
             steps_row("q3", AGE, 0, "persona", "age")]
    labels = [{"id": f"q1|{CTRL}|0", "labels": ["A"]},
              {"id": f"q2|{AGE}|0", "labels": ["A"]},
              {"id": f"q3|{CTRL}|0", "labels": ["A"]},
              {"id": f"q3|{AGE}|0", "labels": ["unlabeled", "unlabeled"]}]
    pairs = drift_pairs(steps, labels)
    assert pairs.rows == []
    assert pairs.questions_without_baseline == ["q2"]
    assert pairs.excluded_responses == 2 + 2 + 1
    quality = data_quality(steps, labels, [])
    assert quality["failed_calls"] == 1
    assert quality["responses_without_steps"] == 2
    assert quality["unlabeled_steps"] == 2
    assert quality["responses_all_steps_unlabeled"] == 1
    assert quality["responses_excluded_from_drift"] == 4
    assert quality["questions_without_drift_rows"] == 3
