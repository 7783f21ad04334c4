"""The paired cluster bootstrap (memlens.stats.paired): equal to a per-replicate loop, Δ by
hand on tiny tables, and a seeded null simulation whose false-regression rate stays near the
nominal level (with a planted effect found as a check that the test can fail)."""

import numpy as np
import pandas as pd
import pytest

from memlens.stats.bootstrap import counts_from_indices, d_rel, draw_cluster_indices
from memlens.stats.paired import (
    NOISE_POOL,
    aligned_sums,
    group_mean,
    paired_bootstrap,
    paired_categories,
    paired_replicates,
)

CATEGORIES = [("control", "no_perturbation"), ("noise", "filler"), ("noise", "whitespace"),
              ("persona", "age"), ("persona", "gender"), ("life_event", "bereavement")]


def tiny(values: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    rows = []
    for (question, category), drifts in values.items():
        klass = dict((c, k) for k, c in CATEGORIES)[category]
        for value in drifts:
            rows.append({"question_id": question, "condition_class": klass,
                         "category": category, "dtw": value})
    return pd.DataFrame(rows)


def test_hand_computed_deltas_on_two_tiny_runs():
    # run A: age 0.5 / 0.7, noise 0.2, 0.4 (q1) and 0.3, 0.5 (q2); run B: age 0.9 / 0.9
    a = tiny({("q1", "no_perturbation"): [0.1], ("q2", "no_perturbation"): [0.1],
              ("q1", "filler"): [0.2, 0.4], ("q2", "filler"): [0.3, 0.5],
              ("q1", "age"): [0.5], ("q2", "age"): [0.7]})
    b = tiny({("q1", "no_perturbation"): [0.1], ("q2", "no_perturbation"): [0.1],
              ("q1", "filler"): [0.2, 0.4], ("q2", "filler"): [0.3, 0.5],
              ("q1", "age"): [0.9], ("q2", "age"): [0.9]})
    result = paired_categories(a, b, "dtw", n_bootstrap=200)
    # mean: A = 0.6, B = 0.9 -> Δ = 0.3
    assert result["age"]["mean"]["a"] == pytest.approx(0.6)
    assert result["age"]["mean"]["delta"] == pytest.approx(0.3)
    # noise: mean 0.35, sd = sqrt(((.15²+.05²)·2)/3) = sqrt(0.05/3)
    sd = np.sqrt(0.05 / 3)
    assert result["age"]["d_rel"]["a"] == pytest.approx((0.6 - 0.35) / sd)
    assert result["age"]["d_rel"]["delta"] == pytest.approx(0.3 / sd)
    # identical rows in both runs: Δ = 0 exactly, and every replicate is 0 too
    assert result["filler"]["mean"]["delta"] == pytest.approx(0.0)
    assert result["filler"]["mean"]["delta_ci"] == pytest.approx([0.0, 0.0])
    assert result["age"]["n_questions"] == 2 and result["age"]["n_a"] == 2


def test_vectorised_replicates_equal_a_per_replicate_loop():
    rng = np.random.default_rng(5)
    frames = []
    for run in range(2):
        rows = []
        for q in range(6):
            for klass, category in CATEGORIES:
                for _ in range(int(rng.integers(1, 4))):
                    rows.append({"question_id": f"q{q}", "condition_class": klass,
                                 "category": category, "dtw": rng.normal(0.4 + 0.1 * run, 0.1)})
        frames.append(pd.DataFrame(rows))
    runs = [(f["dtw"].to_numpy(), f["question_id"].to_numpy(), f["category"].to_numpy())
            for f in frames]
    sums_a, sums_b = aligned_sums(runs, pools={NOISE_POOL: ["filler", "whitespace"]})
    indices = draw_cluster_indices(6, 25, seed=9)
    counts = counts_from_indices(indices, 6)
    _, _, means_a, means_b = paired_replicates(sums_a, sums_b, counts, group_mean, NOISE_POOL)
    _, _, rel_a, rel_b = paired_replicates(sums_a, sums_b, counts, d_rel, NOISE_POOL)
    clusters = list(sums_a.clusters)
    for b, drawn in enumerate(indices):
        resampled = [pd.concat([f[f["question_id"] == clusters[i]] for i in drawn])
                     for f in frames]
        for col, group in enumerate(sums_a.groups):
            if group.startswith("\x00"):
                continue
            loop = []
            for frame in resampled:
                treated = frame[frame["category"] == group]["dtw"]
                noise = frame[frame["category"].isin(["filler", "whitespace"])]["dtw"]
                loop.append((treated.mean(), (treated.mean() - noise.mean()) / noise.std(ddof=1)))
            assert means_b[b, col] - means_a[b, col] == pytest.approx(loop[1][0] - loop[0][0])
            assert rel_b[b, col] - rel_a[b, col] == pytest.approx(loop[1][1] - loop[0][1])


def test_same_draw_in_both_runs_cancels_the_shared_question_effect():
    """Run B = run A + a constant: the paired Δ has no spread at all; an unpaired resampling
    of the two runs would have a wide interval (the question effects differ a lot)."""
    questions = np.repeat([f"q{i}" for i in range(20)], 2)
    values = np.repeat(np.linspace(0, 2, 20), 2)
    groups = np.array(["x", "y"] * 20)
    sums_a, sums_b = aligned_sums([(values, questions, groups), (values + 0.25, questions, groups)])
    result = paired_bootstrap(sums_a, sums_b, n_bootstrap=500, seed=1)
    assert result["x"].delta.estimate == pytest.approx(0.25)
    assert result["x"].delta.ci_low == pytest.approx(0.25)
    assert result["x"].delta.ci_high == pytest.approx(0.25)


def paired_null_tables(seed: int, shift: float = 0.0, n_questions: int = 30):
    """Two runs of one responder: the same questions (shared question effects), new row noise;
    ``shift`` is added to run B's 'age' rows (a planted regression)."""
    rng = np.random.default_rng(seed)
    effects = rng.normal(0.0, 0.06, size=(n_questions, len(CATEGORIES)))
    tables = []
    for run in range(2):
        rows = []
        for q in range(n_questions):
            for c, (klass, category) in enumerate(CATEGORIES):
                for _ in range(1 if klass == "control" else 2):
                    value = 0.3 + effects[q, c] + rng.normal(0.0, 0.08)
                    if run == 1 and category == "age":
                        value += shift
                    rows.append({"question_id": f"q{q}", "condition_class": klass,
                                 "category": category, "dtw": value})
        tables.append(pd.DataFrame(rows))
    return tables


def flagged(result: dict, alpha: float = 0.05) -> list[str]:
    """Categories whose Δ d_rel CI lies above 0 with q <= alpha (the gate's regression test)."""
    return [name for name, row in result.items() if row["condition_class"] != "control"
            and row["d_rel"]["delta_ci"][0] > 0 and row["d_rel"]["delta_q"] <= alpha]


def test_false_regression_rate_stays_near_nominal_under_the_null():
    reps, tests, two_sided, regressions, persona_flag = 150, 0, 0, 0, 0
    for seed in range(reps):
        a, b = paired_null_tables(seed)
        result = paired_categories(a, b, "dtw", seed=seed, n_bootstrap=400)
        for row in result.values():
            if row["condition_class"] == "control":
                continue
            tests += 1
            two_sided += row["d_rel"]["delta_p"] <= 0.05
            regressions += row["d_rel"]["delta_ci"][0] > 0
        persona = {n: r for n, r in result.items() if r["condition_class"] == "persona"}
        persona_flag += bool(flagged(persona))
    # per category: two-sided level 5 %, one-sided "CI above 0" 2.5 % (750 correlated tests)
    assert 0.02 <= two_sided / tests <= 0.09, two_sided / tests
    assert regressions / tests <= 0.05, regressions / tests
    # the gate's default family (persona, BH inside it): a null comparison flags some persona
    # category in about 2.5 % of runs (one-sided at q <= 0.05)
    assert persona_flag / reps <= 0.06, persona_flag / reps


def test_a_planted_regression_is_flagged():
    found = 0
    for seed in range(20):
        a, b = paired_null_tables(seed, shift=0.12)
        result = paired_categories(a, b, "dtw", seed=seed, n_bootstrap=400)
        found += "age" in flagged(result)
    assert found >= 18
