"""Memory-set statistics: hand-computed paired values and a seeded simulation."""

import numpy as np
import pytest

from memlens.stats.memory_sets import compare_memory_sets, format_memory_sets


def row(q, klass, category, dtw):
    return {"question_id": q, "condition_class": klass, "category": category, "dtw": dtw}


def test_hand_computed_values_and_pairs():
    rows = []
    for q, floor in (("q1", 0.1), ("q2", 0.3)):
        rows += [row(q, "control", "-", floor), row(q, "control", "-", floor)]
        rows += [row(q, "persona", "age", floor + 0.4), row(q, "persona", "income", floor + 0.2),
                 row(q, "neutral_set", "neutral", floor + 0.1),
                 row(q, "persona_in_set", "age", floor + 0.3),
                 row(q, "combination", "age+income", floor + 0.5)]
    rows.append(row("sp/x", "persona", "age", 0.9))  # a question without sets: not used
    out = compare_memory_sets(rows, n_bootstrap=200, min_questions=2)
    age = out.among_neutral["age"]
    assert age.n_questions == 2
    assert age.alone.estimate == pytest.approx(0.4)
    assert age.among_neutral.estimate == pytest.approx(0.3)
    assert age.net.estimate == pytest.approx(0.2)
    assert age.difference.estimate == pytest.approx(-0.2)
    # no spread between questions
    assert (age.difference.ci_low, age.difference.ci_high) == pytest.approx((-0.2, -0.2))
    assert age.verdict == "diluted"
    pair = out.combined["age+income"]
    assert pair.stronger_alone == "age" and pair.difference.estimate == pytest.approx(0.1)
    assert pair.verdict == "more than either alone"
    assert out.neutral_set.estimate == pytest.approx(0.1)
    text = format_memory_sets(out)
    assert "age: diluted (n=2); alone +0.400 [+0.400, +0.400]" in text
    assert compare_memory_sets(rows, n_bootstrap=200).among_neutral["age"].verdict == \
        "not interpretable"


@pytest.mark.parametrize(("dilution", "verdict"), [(0.08, "diluted"), (0.0, "no clear difference")])
def test_seeded_simulation(dilution, verdict):
    rng = np.random.default_rng(4)
    hits = 0
    for sim in range(60):
        rows = []
        for k in range(20):
            q, shift = f"q{k}", rng.normal(0, 0.03)
            noise = lambda: rng.normal(0, 0.05)  # noqa: E731
            rows += [row(q, "control", "-", 0.3 + shift + noise()) for _ in range(5)]
            rows += [row(q, "persona", "age", 0.4 + shift + noise()) for _ in range(2)]
            rows += [row(q, "neutral_set", "neutral", 0.32 + shift + noise()) for _ in range(2)]
            rows += [row(q, "persona_in_set", "age", 0.42 - dilution + shift + noise())
                     for _ in range(2)]
        hits += compare_memory_sets(rows, seed=sim,
                                    n_bootstrap=400).among_neutral["age"].verdict == verdict
    assert hits / 60 >= 0.85


def test_numbers_and_json_unchanged_by_the_typed_result():
    """Exact values recorded from the dict-returning version (before the shared bootstrap)."""
    from memlens.stats.memory_sets import MemorySets

    rows = []
    for k, (floor, alone, inside, neutral, pair, other) in enumerate(
            [(0.1, 0.5, 0.3, 0.2, 0.55, 0.2), (0.2, 0.45, 0.35, 0.25, 0.4, 0.3),
             (0.15, 0.6, 0.3, 0.2, 0.7, 0.25)]):
        rows += [row(f"q{k}", klass, category, value) for klass, category, value in (
            ("control", "-", floor), ("persona", "age", alone), ("persona", "income", other),
            ("persona_in_set", "age", inside), ("neutral_set", "neutral", neutral),
            ("combination", "age+income", pair))]
    result = compare_memory_sets(rows, seed=1, n_bootstrap=200)
    data = result.to_dict()
    alone = {"mean": 0.3666666666666667, "ci": [0.25, 0.44999999999999996]}
    assert data["among_neutral"]["age"] == {
        "alone": alone,
        "among_neutral": {"mean": 0.16666666666666666,
                          "ci": [0.14999999999999997, 0.18333333333333332]},
        "net": {"mean": 0.09999999999999998, "ci": [0.09999999999999998, 0.09999999999999998]},
        "difference": {"mean": -0.26666666666666666,
                       "ci": [-0.3499999999999999, -0.15000000000000002]},
        "n_questions": 3, "verdict": "diluted"}
    pair = data["combined"]["age+income"]
    assert list(pair) == ["combined", "age", "income", "difference", "n_questions",
                          "stronger_alone", "verdict"]
    assert pair["combined"] == {"mean": 0.4000000000000001,
                                "ci": [0.20000000000000004, 0.5499999999999999]}
    assert pair["age"] == alone
    assert pair["difference"] == {"mean": 0.03333333333333335,
                                  "ci": [-0.04999999999999999, 0.09999999999999998]}
    assert data["neutral_set"] == {"mean": 0.06666666666666667,
                                   "ci": [0.049999999999999996, 0.08375000000000009],
                                   "n_questions": 3}
    assert MemorySets.from_dict(data) == result and MemorySets.from_dict(data).to_dict() == data
