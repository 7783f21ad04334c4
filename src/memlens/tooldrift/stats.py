"""Scenario-level uncertainty: a cluster bootstrap over scenarios and a paired test.

Scenarios are the clusters (the k calls of a scenario are not independent), so every replicate
resamples scenario ids with replacement and recomputes the mean; vectorised, one draw matrix.
"""

from __future__ import annotations

import warnings

import numpy as np


def bootstrap_ci(biased: np.ndarray, neutral: np.ndarray | None = None, *, seed: int = 0,
                 n_bootstrap: int = 10_000, level: float = 0.95) -> list[float] | None:
    """Percentile CI of mean(biased) − mean(neutral) (or of mean(biased) when ``neutral`` is
    None) under resampling of scenarios; NaN marks a scenario with no rate for a condition.

    Returns None when there is nothing to resample.

    >>> bootstrap_ci(np.array([0.5, 0.5, 0.5]), seed=1)
    [0.5, 0.5]
    """
    values = np.asarray(biased, dtype=float)
    other = None if neutral is None else np.asarray(neutral, dtype=float)
    keep = ~np.isnan(values) if other is None else ~(np.isnan(values) & np.isnan(other))
    values = values[keep]
    other = None if other is None else other[keep]
    if values.size == 0:
        return None
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, values.size, size=(n_bootstrap, values.size))
    with warnings.catch_warnings():  # a replicate may draw only NaNs for one condition
        warnings.simplefilter("ignore", RuntimeWarning)
        stat = np.nanmean(values[draws], axis=1)
        if other is not None:
            stat = stat - np.nanmean(other[draws], axis=1)
    stat = stat[~np.isnan(stat)]
    if stat.size == 0:
        return None
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(stat, [tail, 100 - tail])
    return [float(low), float(high)]


def paired_test(biased: np.ndarray, neutral: np.ndarray) -> dict:
    """Wilcoxon signed-rank and paired t-test of per-scenario rates (biased vs neutral).

    Only scenarios with both rates take part. p-values are None when the test is undefined
    (fewer than two pairs, or every difference zero).

    >>> result = paired_test(np.array([0.5, 0.25, 1.0]), np.array([0.0, 0.0, 0.5]))
    >>> result["n"], result["mean_difference"]
    (3, 0.4166666666666667)
    """
    from scipy import stats

    biased, neutral = np.asarray(biased, dtype=float), np.asarray(neutral, dtype=float)
    both = ~(np.isnan(biased) | np.isnan(neutral))
    difference = biased[both] - neutral[both]
    result = {"test": "wilcoxon signed-rank (two-sided) and paired t", "n": int(difference.size),
              "mean_difference": float(difference.mean()) if difference.size else None,
              "wilcoxon_statistic": None, "wilcoxon_p": None, "t_statistic": None, "t_p": None}
    if difference.size < 2 or not np.any(difference != 0):
        result["note"] = "undefined: fewer than two paired scenarios or no non-zero difference"
        return result
    wilcoxon = stats.wilcoxon(difference, zero_method="wilcox", alternative="two-sided")
    result["wilcoxon_statistic"] = float(wilcoxon.statistic)
    result["wilcoxon_p"] = float(wilcoxon.pvalue)
    if np.ptp(difference) > 1e-12:  # a constant difference has no t statistic
        t_test = stats.ttest_rel(biased[both], neutral[both])
        result["t_statistic"] = float(t_test.statistic)
        result["t_p"] = float(t_test.pvalue)
    return result
