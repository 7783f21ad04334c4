"""Cohen's d by hand; Welch and paired t-tests against scipy."""

import numpy as np
import pytest
from scipy import stats

from memlens.stats.effects import cohen_d, paired_cluster_t_test, welch_t_test


def test_cohen_d_hand_computed():
    # means 4 and 2; variances 4 and 1; pooled = (2·4 + 2·1) / 4 = 2.5
    assert cohen_d([2, 4, 6], [1, 2, 3]) == pytest.approx(2 / np.sqrt(2.5))
    assert cohen_d([1, 2, 3], [2, 4, 6]) == pytest.approx(-2 / np.sqrt(2.5))
    assert np.isnan(cohen_d([1.0], [1.0, 2.0]))
    assert np.isnan(cohen_d([1.0, 1.0], [1.0, 1.0]))


def test_welch_matches_scipy_and_the_satterthwaite_df():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, 12), rng.normal(0.8, 3, 30)
    result = welch_t_test(a, b)
    reference = stats.ttest_ind(a, b, equal_var=False)
    assert result.statistic == pytest.approx(reference.statistic)
    assert result.p_value == pytest.approx(reference.pvalue)
    va, vb = a.var(ddof=1) / 12, b.var(ddof=1) / 30
    assert result.df == pytest.approx((va + vb) ** 2 / (va**2 / 11 + vb**2 / 29))
    assert np.isnan(welch_t_test([1.0, 1.0], [2.0, 2.0]).p_value)


def test_paired_cluster_test_matches_ttest_rel_and_drops_missing_questions():
    treated = np.array([0.5, 0.6, np.nan, 0.7, 0.4])
    reference = np.array([0.3, 0.5, 0.2, 0.4, np.nan])
    result = paired_cluster_t_test(treated, reference)
    expected = stats.ttest_rel([0.5, 0.6, 0.7], [0.3, 0.5, 0.4])
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.p_value == pytest.approx(expected.pvalue)
    assert result.df == 2
