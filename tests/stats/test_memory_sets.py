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
    age = out["among_neutral"]["age"]
    assert age["n_questions"] == 2
    assert age["alone"]["mean"] == pytest.approx(0.4)
    assert age["among_neutral"]["mean"] == pytest.approx(0.3)
    assert age["net"]["mean"] == pytest.approx(0.2)
    assert age["difference"]["mean"] == pytest.approx(-0.2)
    assert age["difference"]["ci"] == pytest.approx([-0.2, -0.2])  # no spread between questions
    assert age["verdict"] == "diluted"
    pair = out["combined"]["age+income"]
    assert pair["stronger_alone"] == "age" and pair["difference"]["mean"] == pytest.approx(0.1)
    assert pair["verdict"] == "more than either alone"
    assert out["neutral_set"]["mean"] == pytest.approx(0.1)
    text = format_memory_sets(out)
    assert "age: diluted (n=2); alone +0.400 [+0.400, +0.400]" in text
    assert compare_memory_sets(rows, n_bootstrap=200)["among_neutral"]["age"]["verdict"] == \
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
        hits += compare_memory_sets(rows, seed=sim, n_bootstrap=400)["among_neutral"]["age"][
            "verdict"] == verdict
    assert hits / 60 >= 0.85
