"""Scenario bootstrap and paired test against hand computations and scipy."""

import numpy as np
import pytest
from scipy import stats

from memlens.tooldrift.stats import paired_test, scenario_bootstrap


def test_wilcoxon_exact_p_by_hand():
    # 3 positive differences, no ties: exact two-sided p = 2 * P(W+ = 6) = 2 / 8
    result = paired_test(np.array([0.6, 0.3, 0.9]), np.array([0.0, 0.1, 0.1]))
    assert result.wilcoxon_p == pytest.approx(0.25)
    assert result.n == 3


def test_paired_t_matches_scipy_and_skips_nan_scenarios():
    biased = np.array([0.5, 0.2, np.nan, 0.9, 0.4])
    neutral = np.array([0.1, 0.3, 0.2, 0.2, 0.0])
    result = paired_test(biased, neutral)
    reference = stats.ttest_rel([0.5, 0.2, 0.9, 0.4], [0.1, 0.3, 0.2, 0.0])
    assert result.n == 4
    assert result.t_p == pytest.approx(reference.pvalue)


def test_paired_test_undefined_when_no_difference():
    result = paired_test(np.array([0.2, 0.2]), np.array([0.2, 0.2]))
    assert result.wilcoxon_p is None and "undefined" in result.note


def test_bootstrap_ci_brackets_mean_and_is_seeded():
    neutral = np.array([0.0, 0.0, 1.0, 1.0])
    biased = np.array([0.5, 0.5, 0.5, 0.5])
    ci = scenario_bootstrap(biased, neutral, seed=7, n_bootstrap=4000)
    assert ci == scenario_bootstrap(biased, neutral, seed=7, n_bootstrap=4000)
    # a replicate's r_neutral is a mean of four 0/1 draws: P(all 0) = P(all 1) = 1/16 > 2.5 %,
    # so the 95 % interval is exactly [0, 1]; r_biased never varies
    assert ci.r_neutral == (0.0, 1.0) and ci.r_biased == (0.5, 0.5)
    assert ci.delta == (-0.5, 0.5)


def test_bootstrap_with_missing_rates():
    assert scenario_bootstrap(np.array([np.nan]), np.array([np.nan])).delta is None
    only_biased = scenario_bootstrap(np.array([0.5, np.nan]), np.array([np.nan, np.nan]))
    assert only_biased.r_biased == (0.5, 0.5) and only_biased.delta is None
    assert only_biased.r_neutral is None and only_biased.delta_bootstrap_p is None


def test_bootstrap_delta_resamples_scenarios_jointly():
    # identical per-scenario deltas of 0.25 -> every replicate's delta is 0.25
    biased = np.array([0.25, 0.5, 1.0])
    neutral = biased - 0.25
    ci = scenario_bootstrap(biased, neutral, seed=0, n_bootstrap=500)
    assert ci.delta == pytest.approx((0.25, 0.25))
