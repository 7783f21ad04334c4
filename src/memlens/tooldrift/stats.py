"""Scenario-level uncertainty: cluster bootstrap over scenarios and a paired test.

Scenarios are the clusters (the k calls of one scenario are not independent). The bootstrap is
``memlens.stats.cluster_bootstrap`` (vectorised, one draw of scenario ids per replicate shared by
both conditions); this module only shapes per-scenario rates for it and adds the Wilcoxon test.
"""

from __future__ import annotations

import math

import numpy as np

from memlens.stats import cluster_bootstrap, mean_difference, paired_cluster_t_test


def _own_mean(treated, reference):
    return treated.mean


def _interval(estimate) -> list[float] | None:
    if math.isnan(estimate.ci_low):
        return None
    return [estimate.ci_low, estimate.ci_high]


def scenario_bootstrap(biased: np.ndarray, neutral: np.ndarray, *, seed: int = 0,
                       n_bootstrap: int = 10_000) -> dict:
    """Percentile 95 % CIs of r_neutral, r_biased and Δ = r_biased − r_neutral, resampling
    scenarios (NaN = no rate for that condition), and the bootstrap p-value of Δ.

    >>> out = scenario_bootstrap(np.array([0.5, 0.75]), np.array([0.25, 0.5]), n_bootstrap=100)
    >>> out["delta"], out["r_neutral"][0] <= 0.375 <= out["r_neutral"][1]
    ([0.25, 0.25], True)
    """
    biased, neutral = np.asarray(biased, float), np.asarray(neutral, float)
    values, clusters, groups = [], [], []
    for index in range(biased.size):
        for label, rate in (("biased", biased[index]), ("neutral", neutral[index])):
            if not np.isnan(rate):
                values.append(rate), clusters.append(index), groups.append(label)
    empty = {"r_neutral": None, "r_biased": None, "delta": None, "delta_bootstrap_p": None}
    if not values:
        return empty
    if set(groups) != {"biased", "neutral"}:  # one condition never scored: no difference
        only = groups[0]
        single = cluster_bootstrap(values, clusters, groups, reference=only, statistic=_own_mean,
                                   seed=seed, n_bootstrap=n_bootstrap)[only]
        return {**empty, f"r_{only}": _interval(single)}
    options = {"seed": seed, "n_bootstrap": n_bootstrap, "reference": "neutral"}
    means = cluster_bootstrap(values, clusters, groups, statistic=_own_mean, **options)
    delta = cluster_bootstrap(values, clusters, groups, statistic=mean_difference, **options)
    return {"r_neutral": _interval(means["neutral"]), "r_biased": _interval(means["biased"]),
            "delta": _interval(delta["biased"]),
            "delta_bootstrap_p": None if math.isnan(delta["biased"].p_value)
            else delta["biased"].p_value}


def paired_test(biased: np.ndarray, neutral: np.ndarray) -> dict:
    """Wilcoxon signed-rank and paired t-test of per-scenario rates (biased vs neutral).

    Only scenarios with both rates take part. p-values are None when a test is undefined
    (fewer than two pairs, or every difference zero / constant).

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
    if difference.size < 2 or not np.any(np.abs(difference) > 1e-12):
        result["note"] = "undefined: fewer than two paired scenarios or no non-zero difference"
        return result
    wilcoxon = stats.wilcoxon(difference, zero_method="wilcox", alternative="two-sided")
    result["wilcoxon_statistic"] = float(wilcoxon.statistic)
    result["wilcoxon_p"] = float(wilcoxon.pvalue)
    if np.ptp(difference) > 1e-12:  # a constant difference has no t statistic
        t_test = paired_cluster_t_test(biased, neutral)
        result["t_statistic"], result["t_p"] = t_test.statistic, t_test.p_value
    return result
