"""Drift rows from stored steps and labels: baseline choice, exclusions, hand-computed values."""

import pytest

from memlens.audit import data_quality, drift_pairs, score_pairs
from memlens.audit.drift import aggregate_pairs


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
    rows = aggregate_pairs(score_pairs(drift_pairs(steps, labels)))
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


def test_three_questions_three_baselines_hand_computed():
    """K = 3: each question has no-memory samples 0, 1, 2 (all baselines) and one persona
    response. Under the 0/1 cost on equal-length sequences, DTW here equals the Hamming-like
    counts worked out below by hand."""
    seqs = {  # question -> (baseline 0, baseline 1, baseline 2, persona)
        "q1": ("AB", "AB", "AB", "CD"),
        "q2": ("AB", "AC", "AB", "AB"),
        "q3": ("AA", "AB", "BB", "AB"),
    }
    steps, labels = [], []
    for q, (b0, b1, b2, persona) in seqs.items():
        for k, seq in enumerate((b0, b1, b2)):
            steps.append(steps_row(q, CTRL, k, "control", "no_perturbation"))
            labels.append({"id": f"{q}|{CTRL}|{k}", "labels": list(seq)})
        steps.append(steps_row(q, AGE, 0, "persona", "age"))
        labels.append({"id": f"{q}|{AGE}|0", "labels": list(persona)})
    pairs = drift_pairs(steps, labels, baselines=3)
    assert len(pairs.rows) == 3 * (3 * 2 + 3)  # every control vs the other two; persona vs all
    rows = {row["id"]: row for row in aggregate_pairs(score_pairs(pairs))}
    dtw = {key: row["dtw"] for key, row in rows.items()}
    # q1: baselines identical -> floor 0 for each; CD vs AB: DTW raw 2 of length 2 -> 1.0
    assert [dtw[f"q1|{CTRL}|{k}"] for k in range(3)] == [0.0, 0.0, 0.0]
    assert dtw[f"q1|{AGE}|0"] == 1.0
    # q2: AB-AC = 0.5, AB-AB = 0, AC-AB = 0.5 -> sample0 (0.5+0)/2, sample1 (0.5+0.5)/2, sample2
    assert [dtw[f"q2|{CTRL}|{k}"] for k in range(3)] == pytest.approx([0.25, 0.5, 0.25])
    assert dtw[f"q2|{AGE}|0"] == pytest.approx((0 + 0.5 + 0) / 3)
    # q3: AA-AB 0.5 (A~A, A~B), AA-BB 1.0, AB-BB 0.5 -> floor rows (0.5+1)/2, (0.5+0.5)/2,
    # (1+0.5)/2; their mean 0.6667 = the mean over the three pairs (0.5+1+0.5)/3
    floor_q3 = [dtw[f"q3|{CTRL}|{k}"] for k in range(3)]
    assert floor_q3 == pytest.approx([0.75, 0.5, 0.75])
    assert sum(floor_q3) / 3 == pytest.approx((0.5 + 1.0 + 0.5) / 3)
    assert dtw[f"q3|{AGE}|0"] == pytest.approx((0.5 + 0 + 0.5) / 3)
    assert rows[f"q3|{AGE}|0"]["n_baselines"] == 3 and rows[f"q3|{CTRL}|0"]["n_baselines"] == 2


def test_paper_design_k1_is_unchanged():
    steps = [steps_row("q", CTRL, k, "control", "no_perturbation") for k in range(3)]
    steps.append(steps_row("q", AGE, 0, "persona", "age"))
    labels = [{"id": f"q|{CTRL}|0", "labels": ["A", "B"]}, {"id": f"q|{CTRL}|1", "labels": ["A"]},
              {"id": f"q|{CTRL}|2", "labels": ["A", "B"]}, {"id": f"q|{AGE}|0", "labels": ["B"]}]
    rows = aggregate_pairs(score_pairs(drift_pairs(steps, labels, baselines=1)))
    assert [(r["id"], r["baseline_id"], r["n_baselines"]) for r in rows] == [
        (f"q|{CTRL}|1", f"q|{CTRL}|0", 1), (f"q|{CTRL}|2", f"q|{CTRL}|0", 1),
        (f"q|{AGE}|0", f"q|{CTRL}|0", 1)]


def test_ids_with_separators_cannot_collide():
    """Question 'a|x' with stimulus 'n' and question 'a' with stimulus 'x|n' used to share
    the cell id 'a|x|n|0' (10 calls paid, 9 step rows and 7 drift rows kept)."""
    from memlens.audit import cell_id, sample_seed

    assert cell_id("a|x", "n", 0) != cell_id("a", "x|n", 0)
    assert sample_seed(0, "a|x", "n", 0) != sample_seed(0, "a", "x|n", 0)
    assert cell_id("q1", "persona/age/1", 0) == "q1|persona/age/1|0"  # plain ids unchanged
    steps, labels = [], []
    for q, stim in (("a|x", "n"), ("a", "x|n")):
        for k in range(2):
            steps.append({**steps_row(q, CTRL, k, "control", "no_perturbation"),
                          "id": cell_id(q, CTRL, k)})
            labels.append({"id": cell_id(q, CTRL, k), "labels": ["A", "B"]})
        steps.append({**steps_row(q, stim, 0, "noise", "filler"), "id": cell_id(q, stim, 0)})
        labels.append({"id": cell_id(q, stim, 0), "labels": ["B"]})
    rows = aggregate_pairs(score_pairs(drift_pairs(steps, labels, baselines=2)))
    assert len(rows) == 2 * 3 and len({row["id"] for row in rows}) == 6
