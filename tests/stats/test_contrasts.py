"""Value contrasts: a seeded simulation detects a planted contrast; values treated alike — even
when memory of any value moves the reasoning far from the floor — are not "detected"."""

import numpy as np
import pandas as pd
import pytest

from memlens.stats.contrasts import (
    contrast_pairs,
    permutation_tests,
    score_contrast_pairs,
    value_contrasts,
)

SYMBOLS = list("abcd")


def simulate(seed: int = 0, questions: int = 20, samples: int = 2, planted: bool = True):
    """Per question a base sequence; the floor is two noisy copies (30 % of steps redrawn).
    Memory of any value makes answers noisier (60 % redrawn: memory adds drift over the floor);
    with ``planted`` the ``age/old`` value also rewrites even steps to ``f``.
    ``disability/blind`` and ``disability/deaf`` are treated identically."""
    rng = np.random.default_rng(seed)
    responses, floor = [], []

    def noisy(seq, rate=0.3):
        return [s if rng.random() > rate else str(rng.choice(SYMBOLS)) for s in seq]

    for q in range(questions):
        base = list(rng.choice(SYMBOLS, size=6))
        b0, b1 = noisy(base), noisy(base)
        floor.append({"question_id": f"q{q}", "dtw": float(np.mean([x != y for x, y in
                                                                    zip(b0, b1, strict=True)]))})
        for sample in range(samples):
            old = [("f" if k % 2 == 0 and planted else s)
                   for k, s in enumerate(noisy(base, 0.6))]
            for stimulus, seq in (("age/young", noisy(base, 0.6)), ("age/old", old),
                                  ("disability/blind", noisy(base, 0.6)),
                                  ("disability/deaf", noisy(base, 0.6))):
                responses.append({"question_id": f"q{q}", "category": stimulus.split("/")[0],
                                  "condition_class": "persona", "stimulus_id": stimulus,
                                  "sample": sample, "symbols": seq})
    floor = pd.DataFrame(floor)
    return pd.DataFrame(responses), floor.assign(sri=floor["dtw"])


def table_for(responses, floor, n_bootstrap=500, seed=0):
    responses = responses.reset_index(drop=True)
    scored = score_contrast_pairs(contrast_pairs(responses), responses)
    return value_contrasts(scored, floor, n_bootstrap=n_bootstrap, seed=seed)


def test_planted_contrast_detected_identical_values_not():
    table = table_for(*simulate()).set_index(["metric", "category"])
    age, disability = table.loc[("dtw", "age")], table.loc[("dtw", "disability")]
    assert age["detected"] and age["excess"] > 0 and age["testable"]
    # blind vs deaf: both far above the floor (memory adds drift) but treated alike
    assert disability["difference"] > 0 and disability["ci_low"] > 0
    assert not disability["detected"]
    # 2 samples x 20 questions: 4 cross pairs per question
    assert age["n_pairs"] == 80 and age["n_questions"] == 20


def test_two_values_one_sample_is_not_testable():
    table = table_for(*simulate(samples=1))
    assert not table["testable"].any() and not table["detected"].any()
    assert table["q_value"].isna().all()


def test_permutation_p_hand_computed():
    """Two questions, values x / y, two responses each: drift 1 between x and y, 0 within.
    Observed mean cross drift 1; of the 6 within-question labelings per question (3 distinct
    splits), the identity split gives cross mean 1 and the two others 0.5 — so with enough
    permutations p → P(T* ≥ 1) = (1/3)² = 1/9 (both questions must draw the identity split)."""
    rows = []
    for q in ("q1", "q2"):
        for k, value in enumerate(("x", "x", "y", "y")):
            rows.append({"question_id": q, "category": "c", "condition_class": "persona",
                         "stimulus_id": value, "sample": k % 2, "symbols": [value]})
    responses = pd.DataFrame(rows)
    pairs = contrast_pairs(responses)
    scored = pairs.assign(dtw=(pairs["value_a"] != pairs["value_b"]).astype(float))
    result = permutation_tests(scored, "dtw", seed=1, n_permutations=20_000)[("c", "x", "y")]
    assert result["testable"]
    assert result["p_value"] == pytest.approx(1 / 9, abs=0.01)
    assert result["reference_mean"] == pytest.approx(8 / 12)  # 8 cross of 12 pairs


def test_identical_values_false_detection_rate():
    """Seeded null: all four values treated alike (no planted contrast), 40 runs; the share of
    runs detecting anything stays near the nominal 5 % (two-level control over the table)."""
    hits = sum(bool(table_for(*simulate(seed, questions=12, planted=False), n_bootstrap=300,
                              seed=seed)["detected"].any()) for seed in range(40))
    assert hits <= 5  # 5 % of 40 = 2; P(≥ 6 | p = 0.05) < 0.01
