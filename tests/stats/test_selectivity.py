"""Selectivity statistics: hand-computed values and seeded simulations of the verdicts."""

import numpy as np
import pytest

from memlens.stats.selectivity import selectivity


def rows_for(rng, n_rel=20, n_irr=20, rel=0.1, irr=0.0, floor=0.3, noise=0.05, q_sd=0.03):
    """Drift rows: every question has 5 floor rows and 2 perturbed rows of category 'age'."""
    rows, attributes = [], {}
    for side, n, effect in (("sp", n_rel, rel), ("b", n_irr, irr)):
        for k in range(n):
            q = f"{side}{k}"
            if side == "sp":
                attributes[q] = ("age",)
            shift = rng.normal(0, q_sd)
            rows += [{"question_id": q, "condition_class": "control", "category": "none",
                      "dtw": floor + shift + rng.normal(0, noise)} for _ in range(5)]
            rows += [{"question_id": q, "condition_class": "persona", "category": "age",
                      "dtw": floor + shift + effect + rng.normal(0, noise)} for _ in range(2)]
    return rows, attributes


def test_hand_computed_means_and_rows_left_out():
    rows = [
        {"question_id": "sp1", "condition_class": "control", "category": "-", "dtw": 0.2},
        {"question_id": "sp1", "condition_class": "control", "category": "-", "dtw": 0.4},
        {"question_id": "sp1", "condition_class": "persona", "category": "age", "dtw": 0.9},
        {"question_id": "sp1", "condition_class": "persona", "category": "age", "dtw": 0.5},
        # a category the question does not depend on: on neither side
        {"question_id": "sp1", "condition_class": "persona", "category": "income", "dtw": 0.9},
        {"question_id": "b1", "condition_class": "control", "category": "-", "dtw": 0.1},
        {"question_id": "b1", "condition_class": "persona", "category": "age", "dtw": 0.2},
        {"question_id": "b1", "condition_class": "noise", "category": "filler", "dtw": 0.9},
        {"question_id": "b1", "condition_class": "persona", "category": "age", "dtw": 0.9,
         "excluded_orthogonality": True},
        {"question_id": "b2", "condition_class": "persona", "category": "age", "dtw": 0.9},
    ]
    out = selectivity(rows, {"sp1": ["age", "income"]}, n_bootstrap=100, min_questions=1)
    age = out.categories["age"]
    # relevant: (0.9 + 0.5) / 2 - 0.3 = 0.4; irrelevant: 0.2 - 0.1 = 0.1 (b2 has no floor)
    assert age.relevant.estimate == pytest.approx(0.4)
    assert age.irrelevant.estimate == pytest.approx(0.1)
    assert age.difference.estimate == pytest.approx(0.3)
    assert (age.relevant_rows, age.irrelevant_rows) == (2, 1)
    assert out.rows_without_floor == 1
    income = out.categories["income"]  # no benchmark row of income: not interpretable
    assert income.irrelevant.n == 0 and income.verdict == "not interpretable"
    assert income.difference.estimate is None
    data = out.to_dict()
    assert data["categories"]["age"]["relevant"] == {
        "mean": pytest.approx(0.4), "ci": [pytest.approx(0.4), pytest.approx(0.4)],
        "n_questions": 1, "n_rows": 2}
    assert data["categories"]["income"]["selectivity"] == {"mean": None, "ci": [None, None]}
    assert data["summary"]["not interpretable"] == ["income"]


def test_too_few_questions_is_not_interpretable():
    rng = np.random.default_rng(0)
    rows, attributes = rows_for(rng, n_rel=2, n_irr=10, rel=0.5)
    entry = selectivity(rows, attributes, n_bootstrap=200).categories["age"]
    assert entry.verdict == "not interpretable" and "relevant 2" in entry.reason


@pytest.mark.parametrize(("n", "noise", "rel", "irr", "verdict", "rate"), [
    (20, 0.05, 0.10, 0.00, "selective", 0.9),
    (20, 0.05, 0.10, 0.10, "over-sensitive", 0.9),
    (40, 0.05, 0.00, 0.00, "memory-blind", 0.9),
    (20, 0.05, 0.00, 0.10, "misdirected", 0.9),
    # no drift, but 5 noisy questions a side cannot exclude a 10 % elevation
    (5, 0.15, 0.00, 0.00, "inconclusive", 0.8),
])
def test_seeded_simulation_verdict_rates(n, noise, rel, irr, verdict, rate):
    rng = np.random.default_rng(11)
    hits = 0
    for sim in range(100):
        rows, attributes = rows_for(rng, n_rel=n, n_irr=n, rel=rel, irr=irr, noise=noise)
        out = selectivity(rows, attributes, seed=sim, n_bootstrap=400)
        hits += out.categories["age"].verdict == verdict
    assert hits / 100 >= rate


def test_seeded_simulation_ci_coverage_of_the_difference():
    rng = np.random.default_rng(3)
    covered = 0
    for sim in range(200):
        rows, attributes = rows_for(rng, rel=0.08, irr=0.02)
        difference = selectivity(rows, attributes, seed=sim,
                                 n_bootstrap=400).categories["age"].difference
        low, high = difference.ci_low, difference.ci_high
        covered += low <= 0.06 <= high
    assert 0.88 <= covered / 200 <= 0.99  # nominal 95 %; percentile CIs run a little narrow


def test_headline_pools_persona_attributes_only():
    """Selective on every persona attribute; life events drift everywhere (as they should).
    The old headline pooled both and said 'over-sensitive'."""
    import numpy as np

    from memlens.stats.selectivity import format_selectivity, selectivity

    rng = np.random.default_rng(0)
    rows, attributes = [], {}
    for q in range(12):
        for kind in ("sp", "b"):
            qid = f"{kind}{q}"
            rows.append({"question_id": qid, "condition_class": "control", "category": "none",
                         "dtw": 0.3 + rng.normal(0, 0.01)})
            for klass, category in (("persona", "age"), ("persona", "disability"),
                                    ("life_event", "bereavement")):
                relevant = kind == "sp"
                lift = 0.2 if (relevant or klass == "life_event") else 0.0
                rows.append({"question_id": qid, "condition_class": klass, "category": category,
                             "dtw": 0.3 + lift + rng.normal(0, 0.01)})
        attributes[f"sp{q}"] = ["age", "disability", "bereavement"]
    result = selectivity(rows, attributes, n_bootstrap=500)
    assert result.categories["age"].verdict == "selective"
    assert result.categories["bereavement"].verdict == "over-sensitive"
    assert result.overall_pools == ("age", "disability")
    assert result.overall.verdict == "selective"
    assert result.life_events.verdict == "over-sensitive"
    text = format_selectivity(result)
    assert "overall (persona: age, disability): selective" in text
    assert "life events (bereavement): over-sensitive" in text


def test_numbers_and_json_unchanged_by_the_typed_result():
    """Exact values recorded from the dict-returning version (before the shared bootstrap)."""
    from memlens.stats.selectivity import Selectivity

    rows = []
    for k, (floor, rel, irr) in enumerate([(0.30, 0.45, 0.31), (0.20, 0.38, 0.22),
                                           (0.25, 0.31, 0.24), (0.35, 0.52, 0.40)]):
        for side, value in (("sp", rel), ("b", irr)):
            q = f"{side}{k}"
            rows += [{"question_id": q, "condition_class": c, "category": cat, "dtw": v}
                     for c, cat, v in (("control", "-", floor), ("persona", "age", value),
                                       ("life_event", "moving", value + 0.05))]
    result = selectivity(rows, {f"sp{k}": ["age", "moving"] for k in range(4)}, seed=1,
                         n_bootstrap=200)
    data = result.to_dict()
    assert data["categories"]["age"] == {
        "relevant": {"mean": 0.14, "ci": [0.08750000000000001, 0.17506250000000004],
                     "n_questions": 4, "n_rows": 4},
        "irrelevant": {"mean": 0.01750000000000001, "ci": [0.0, 0.04250000000000003],
                       "n_questions": 4, "n_rows": 4},
        "selectivity": {"mean": 0.1225, "ci": [0.06737499999999998, 0.1675]},
        "verdict": "selective", "reason": "drifts where memory matters, not where it should not"}
    assert data["overall"]["selectivity"] == {"mean": 0.1225, "ci": [0.07237499999999997, 0.165]}
    assert data["life_events"]["selectivity"] == {
        "mean": 0.12250000000000003, "ci": [0.06493750000000001, 0.16506250000000006]}
    assert list(data) == ["metric", "n_bootstrap", "seed", "min_questions", "min_effect",
                          "min_effect_pct", "categories", "overall", "overall_pools",
                          "life_events", "life_event_pools", "summary", "rows_without_floor",
                          "unmatched_categories"]
    assert Selectivity.from_dict(data) == result and Selectivity.from_dict(data).to_dict() == data
