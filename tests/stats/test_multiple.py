"""Benjamini–Hochberg against statsmodels and a hand-computed example."""

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from memlens.stats.multiple import benjamini_hochberg


def test_hand_computed_example():
    # sorted p: 0.01, 0.03, 0.04, 0.2 → m·p/k = 0.04, 0.06, 0.0533, 0.2 → running min from the top
    q = benjamini_hochberg([0.01, 0.04, 0.03, 0.2])
    np.testing.assert_allclose(q, [0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.2])


@pytest.mark.parametrize("seed", range(5))
def test_matches_statsmodels_fdr_bh(seed):
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(size=15), rng.uniform(0, 0.01, size=5), [0.5, 0.5]])
    np.testing.assert_allclose(benjamini_hochberg(p), multipletests(p, method="fdr_bh")[1])


def test_nan_p_values_are_skipped_not_counted():
    q = benjamini_hochberg([0.01, np.nan, 0.04])
    assert np.isnan(q[1])
    np.testing.assert_allclose(q[[0, 2]], multipletests([0.01, 0.04], method="fdr_bh")[1])
    assert np.isnan(benjamini_hochberg([np.nan])).all()
