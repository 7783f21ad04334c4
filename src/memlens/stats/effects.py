"""Effect sizes and two-sample tests: Cohen's d, Welch's t-test, question-level paired t-test."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats


@dataclass(frozen=True)
class TestResult:
    """A test statistic, its two-sided p-value and degrees of freedom (NaN when undefined)."""

    statistic: float
    p_value: float
    df: float


def cohen_d(treated: Sequence[float] | np.ndarray, reference: Sequence[float] | np.ndarray) -> float:
    """Cohen's d = (mean_t − mean_r) / pooled SD, pooled SD with n − 1 weights (ddof = 1).

    NaN when either group has fewer than two values or the pooled SD is 0.

    >>> round(cohen_d([2.0, 4.0, 6.0], [1.0, 2.0, 3.0]), 4)  # (4 - 2) / sqrt((8 + 2) / 4)
    1.2649
    """
    treated, reference = np.asarray(treated, float), np.asarray(reference, float)
    n_t, n_r = treated.size, reference.size
    if n_t < 2 or n_r < 2:
        return float("nan")
    pooled = ((n_t - 1) * treated.var(ddof=1) + (n_r - 1) * reference.var(ddof=1)) / (n_t + n_r - 2)
    if pooled <= 0:
        return float("nan")
    return float((treated.mean() - reference.mean()) / np.sqrt(pooled))


def welch_t_test(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> TestResult:
    """Welch's unequal-variance t-test of mean(a) − mean(b), two-sided (``scipy.stats.ttest_ind``
    with ``equal_var=False``). NaN when a group has fewer than two values or both are constant.
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.size < 2 or b.size < 2:
        return TestResult(float("nan"), float("nan"), float("nan"))
    var_a, var_b = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    if var_a + var_b == 0:
        return TestResult(float("nan"), float("nan"), float("nan"))
    with warnings.catch_warnings():  # near-constant data: scipy warns, the result is still right
        warnings.simplefilter("ignore", RuntimeWarning)
        result = scipy_stats.ttest_ind(a, b, equal_var=False)
    df = (var_a + var_b) ** 2 / (var_a**2 / (a.size - 1) + var_b**2 / (b.size - 1))
    return TestResult(float(result.statistic), float(result.pvalue), float(df))


def paired_cluster_t_test(
    treated_means: Sequence[float] | np.ndarray, reference_means: Sequence[float] | np.ndarray
) -> TestResult:
    """Paired t-test over clusters (questions) on per-cluster means, treated − reference.

    Clusters where either mean is NaN (the condition was not observed for that question) are
    left out. Questions are the independent units, so repeated rows of one question do not
    inflate the evidence (a row-level test would). Equals ``scipy.stats.ttest_rel``.
    """
    treated_means = np.asarray(treated_means, float)
    reference_means = np.asarray(reference_means, float)
    both = np.isfinite(treated_means) & np.isfinite(reference_means)
    differences = treated_means[both] - reference_means[both]
    if differences.size < 2 or np.ptp(differences) == 0:
        return TestResult(float("nan"), float("nan"), float("nan"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = scipy_stats.ttest_rel(treated_means[both], reference_means[both])
    return TestResult(float(result.statistic), float(result.pvalue), float(differences.size - 1))
