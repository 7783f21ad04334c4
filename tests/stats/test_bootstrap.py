"""Cluster bootstrap: equal to a plain per-replicate loop, calibrated, and covering the truth."""

from __future__ import annotations

import numpy as np
import pytest

from memlens.stats.bootstrap import (
    MeanEstimate,
    bootstrap_mean,
    bootstrap_p_value,
    cluster_bootstrap,
    cluster_sums,
    counts_from_indices,
    d_rel,
    draw_cluster_counts,
    draw_cluster_indices,
    elevation_pct,
    percentile_interval,
    replicate_moments,
    sample_moments,
)


def clustered_rows(seed: int, n_questions: int = 30, shift: float = 0.3):
    """Per question: one noise row in each of 'a' and 'b' (pooled) and 3 treated rows;
    value = question effect (sd 0.5) + shift (treated only) + N(0, 1)."""
    rng = np.random.default_rng(seed)
    layout = np.array(["a", "b", "treat", "treat", "treat"])
    groups = np.tile(layout, n_questions)
    clusters = np.repeat(np.arange(n_questions), layout.size)
    effects = np.repeat(rng.normal(0, 0.5, n_questions), layout.size)
    values = effects + shift * (groups == "treat") + rng.normal(size=groups.size)
    return values, clusters, groups


def loop_d_rel(values, clusters, groups, indices):
    """Reference: build every replicate's rows explicitly and compute d_rel with numpy."""
    by_question = {q: np.flatnonzero(clusters == q) for q in np.unique(clusters)}
    ids = np.unique(clusters)
    out = []
    for draw in indices:
        rows = np.concatenate([by_question[ids[i]] for i in draw])
        treat = values[rows][groups[rows] == "treat"]
        noise = values[rows][np.isin(groups[rows], ["a", "b"])]
        out.append((treat.mean() - noise.mean()) / noise.std(ddof=1))
    return np.array(out)


def test_vectorised_replicates_equal_the_per_replicate_loop():
    values, clusters, groups = clustered_rows(seed=1)
    indices = draw_cluster_indices(30, 200, seed=7)
    sums = cluster_sums(values, clusters, groups, pools={"noise": ["a", "b"]})
    reps = replicate_moments(sums, counts_from_indices(indices, 30))
    noise = sums.column("noise")
    vectorised = d_rel(reps, type(reps)(reps.n[:, [noise]], reps.mean[:, [noise]],
                                        reps.var[:, [noise]]))[:, sums.column("treat")]
    np.testing.assert_allclose(vectorised, loop_d_rel(values, clusters, groups, indices),
                               rtol=1e-10)


def test_point_moments_match_numpy():
    values, clusters, groups = clustered_rows(seed=2)
    sums = cluster_sums(values, clusters, groups, pools={"noise": ["a", "b"]})
    point = sample_moments(sums)
    treat = values[groups == "treat"]
    noise = values[groups != "treat"]
    assert point.n[sums.column("treat")] == treat.size
    assert point.mean[sums.column("treat")] == pytest.approx(treat.mean(), rel=1e-12)
    assert point.var[sums.column("noise")] == pytest.approx(noise.var(ddof=1), rel=1e-10)


def test_cluster_bootstrap_estimates_d_rel_and_elevation_by_hand():
    values = [1.0, 2.0, 3.0, 2.0, 4.0, 6.0]
    clusters = ["q1", "q1", "q1", "q2", "q2", "q2"]
    groups = ["noise", "noise", "treat", "noise", "noise", "treat"]
    result = cluster_bootstrap(values, clusters, groups, reference="noise", statistic=d_rel,
                               n_bootstrap=500, seed=3)
    noise = np.array([1.0, 2.0, 2.0, 4.0])
    assert result["treat"].estimate == pytest.approx((4.5 - noise.mean()) / noise.std(ddof=1))
    elevation = cluster_bootstrap(values, clusters, groups, reference="noise",
                                  statistic=elevation_pct, n_bootstrap=500, seed=3)
    assert elevation["treat"].estimate == pytest.approx(100 * (4.5 - 2.25) / 2.25)
    assert elevation["treat"].ci_low <= elevation["treat"].estimate <= elevation["treat"].ci_high


def test_draw_counts_are_seeded_and_sum_to_the_number_of_clusters():
    counts = draw_cluster_counts(17, 1000, seed=5)
    assert counts.shape == (1000, 17)
    assert (counts.sum(axis=1) == 17).all()
    np.testing.assert_array_equal(counts, draw_cluster_counts(17, 1000, seed=5))
    assert not np.array_equal(counts, draw_cluster_counts(17, 1000, seed=6))
    # each cluster is drawn once per replicate on average
    assert counts.mean() == pytest.approx(1.0, abs=0.02)


def test_bootstrap_p_value_by_hand():
    assert bootstrap_p_value(np.array([1.0, 2.0, 3.0])) == pytest.approx(2 * 1 / 4)
    assert bootstrap_p_value(np.array([-1.0, 1.0, 2.0, 3.0])) == pytest.approx(2 * 2 / 5)
    assert bootstrap_p_value(np.array([np.nan])) != bootstrap_p_value(np.array([np.nan]))


def test_bootstrap_p_value_is_calibrated_under_the_null():
    rejections = 0
    for seed in range(200):
        values, clusters, groups = clustered_rows(seed=100 + seed, shift=0.0)
        result = cluster_bootstrap(values, clusters, groups, reference=["a", "b"],
                                   statistic=d_rel, n_bootstrap=400, seed=seed)
        rejections += result["treat"].p_value < 0.05
    assert 0.015 <= rejections / 200 <= 0.10


def test_percentile_ci_covers_the_true_d_rel_about_95_percent():
    # treat ~ question effect (sd 0.5) + 0.3 + N(0, 1); noise ~ question effect + N(0, 1);
    # the population sd of a noise row is sqrt(0.5**2 + 1), so the true d_rel is 0.3 / that.
    true_d_rel = 0.3 / np.sqrt(0.25 + 1.0)
    covered = 0
    n_simulations = 300
    for seed in range(n_simulations):
        values, clusters, groups = clustered_rows(seed=1000 + seed, n_questions=60)
        result = cluster_bootstrap(values, clusters, groups, reference=["a", "b"],
                                   statistic=d_rel, n_bootstrap=1000, seed=seed)
        covered += result["treat"].ci_low <= true_d_rel <= result["treat"].ci_high
    assert 0.90 <= covered / n_simulations <= 0.985


def test_bootstrap_mean_by_hand():
    # two values: a replicate mean is 0 (p = 1/4), 0.5 (1/2) or 1 (1/4), so the 2.5th and
    # 97.5th percentiles of many replicates are 0 and 1
    two = bootstrap_mean([0.0, 1.0], seed=0, n_bootstrap=4000)
    assert (two.estimate, two.ci_low, two.ci_high, two.n, two.n_bootstrap) == (0.5, 0.0, 1.0, 2, 4000)
    assert set(np.unique(bootstrap_mean([0.0, 1.0], n_bootstrap=50,
                                        keep_replicates=True).replicates)) <= {0.0, 0.5, 1.0}
    one = bootstrap_mean([2.0], n_bootstrap=10)
    assert (one.estimate, one.ci_low, one.ci_high, one.replicates) == (2.0, 2.0, 2.0, None)
    assert bootstrap_mean([], n_bootstrap=10) == MeanEstimate(None, None, None, 0, 10)
    assert percentile_interval(np.arange(11.0), 0.8) == (1.0, 9.0)


def test_bootstrap_mean_equals_an_explicit_resampling():
    values = np.random.default_rng(9).normal(size=25)
    estimate = bootstrap_mean(values, seed=4, n_bootstrap=300, keep_replicates=True)
    draws = np.random.default_rng(4).integers(0, 25, size=(300, 25))
    means = np.array([values[row].mean() for row in draws])
    assert np.allclose(estimate.replicates, means)
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx(np.percentile(means, [2.5, 97.5]))


def test_bootstrap_mean_seeding_and_paired_draws():
    values = [0.1, 0.5, 0.2, 0.9]
    assert bootstrap_mean(values, seed=3) == bootstrap_mean(values, seed=3)
    rng = np.random.default_rng(3)  # one generator for several intervals: each draw differs
    first, second = bootstrap_mean(values, seed=rng), bootstrap_mean(values, seed=rng)
    assert first == bootstrap_mean(values, seed=3) and second != first
    # paired columns share one draw: a constant per-question difference has no spread
    draws = draw_cluster_indices(4, 500, 0)
    a = bootstrap_mean(values, draws=draws, keep_replicates=True)
    b = bootstrap_mean(np.array(values) + 0.25, draws=draws, keep_replicates=True)
    assert np.allclose(b.replicates - a.replicates, 0.25) and b.n_bootstrap == 500
    # independent draws: the difference of the two means spreads
    c = bootstrap_mean(np.array(values) + 0.25, seed=1, n_bootstrap=500, keep_replicates=True)
    difference = c.minus(a)
    assert difference.estimate == pytest.approx(0.25) and difference.ci_low < 0.25 < difference.ci_high
    assert c.minus(bootstrap_mean([], n_bootstrap=500)).to_dict() == {"mean": None,
                                                                      "ci": [None, None]}


@pytest.mark.parametrize(("values", "seed", "n_bootstrap", "expected"), [
    ([0.1, 0.4, 0.9, 0.3], 0, 2000, (0.425, 0.17500000000000002, 0.75)),
    ([0.1, 0.4, 0.9, 0.3], 3, 17, (0.425, 0.17, 0.71)),
    (np.random.default_rng(5).normal(size=37), 3, 17,
     (-0.28777405091202424, -0.44822837947335853, -0.1529056267358851)),
])
def test_bootstrap_mean_keeps_the_numbers_of_the_hand_written_copies(values, seed, n_bootstrap,
                                                                     expected):
    """Exact values of ``mitigation.evaluate.mean_interval`` before it used this helper."""
    estimate = bootstrap_mean(values, seed=seed, n_bootstrap=n_bootstrap)
    assert (estimate.estimate, estimate.ci_low, estimate.ci_high) == expected
