"""Pairwise Welch tests: BH over all pairs and letters in ascending-mean order."""

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

from memlens.stats.pairwise import pairwise_welch


def test_three_separated_tiers_get_three_letters():
    rng = np.random.default_rng(0)
    samples = {"high": rng.normal(2, 0.3, 40), "low": rng.normal(0, 0.3, 40),
               "low2": rng.normal(0, 0.3, 40), "mid": rng.normal(1, 0.3, 40)}
    pairs, letters = pairwise_welch(samples)
    assert letters == {"low": "a", "low2": "a", "mid": "b", "high": "c"}
    p = [stats.ttest_ind(samples[x["a"]], samples[x["b"]], equal_var=False).pvalue for x in pairs]
    np.testing.assert_allclose([x["q"] for x in pairs], multipletests(p, method="fdr_bh")[1])
    assert len(pairs) == 6
