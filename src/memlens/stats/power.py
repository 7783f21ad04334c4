"""Power and minimum detectable effects of the paired comparisons the verdict rests on.

The elevation tests compare per-question means of a condition with the floor's (a paired t-test
over questions, :func:`memlens.stats.effects.paired_cluster_t_test`). With ``n`` questions and the
standard deviation ``sd`` of the per-question differences, the power of a two-sided level-α test
for a true mean difference δ is exact under normality::

    power = P(|T| > t_{1-α/2, n-1}),  T ~ noncentral t(df = n - 1, ncp = δ·√n / sd)

The **minimum detectable effect** (MDE) is the δ that reaches the target power (0.8 unless
stated); :func:`questions_needed` inverts it for the number of questions, and
:func:`sd_upper_limit` gives the spread to plan with when it was itself estimated.

**Baselines.** How K no-memory baselines shrink ``sd`` follows from a two-way model of one pair's
drift, ``d(r, b) = μ_q + a_r + a_b + e_rb`` (a response term shared by every pair a response is
in, variance σ²_a; a pair residual, σ²_e; per-question effect heterogeneity τ²). A condition's
per-question mean over ``n_c`` responses, each compared with K baselines, minus the floor (the
mean over the K(K−1)/2 baseline pairs) has variance (:func:`difference_variance`)::

    τ² + σ²_a/n_c + σ²_a/K + σ²_e/(n_c·K) + 2σ²_e/(K(K−1))          (K ≥ 2)
    τ² + σ²_a/n_c + σ²_a   + σ²_e/n_c     + σ²_e                     (K = 1, one floor sample)

so the shared baseline term σ²_a/K — the error every category shares with the floor — is what
more baselines remove. :func:`variance_components` estimates σ²_a and σ²_e from stored pair rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from scipy import optimize
from scipy import stats as scipy_stats

from memlens.targets import PLANNING_CONFIDENCE, TARGET_POWER


def paired_power(effect: float, sd: float, n: int, alpha: float) -> float:
    """Power of the two-sided paired t-test for a true mean difference ``effect``.

    >>> round(paired_power(0.5, 1.0, 34, 0.05), 2)  # textbook: d = 0.5 needs ~34 pairs
    0.81
    """
    if n < 2 or not (sd > 0) or not math.isfinite(sd):
        return float("nan")
    df = n - 1
    critical = scipy_stats.t.ppf(1.0 - alpha / 2.0, df)
    ncp = abs(effect) * math.sqrt(n) / sd
    upper = scipy_stats.nct.sf(critical, df, ncp)
    lower = scipy_stats.nct.cdf(-critical, df, ncp)
    if not np.isfinite(lower):  # scipy's nct fails far in the negligible tail (~1e-17)
        lower = 0.0
    if not np.isfinite(upper):  # last resort: the normal approximation of the upper tail
        upper = scipy_stats.norm.sf(critical - ncp)
    return float(min(max(upper + lower, 0.0), 1.0))


def paired_mde(sd: float, n: int, alpha: float, power: float = TARGET_POWER) -> float:
    """Smallest mean difference the paired test detects with ``power`` (NaN if undefined).

    >>> round(paired_mde(1.0, 34, 0.05), 3)
    0.495
    """
    if n < 2 or not (sd > 0) or not math.isfinite(sd):
        return float("nan")
    high = sd
    while paired_power(high, sd, n, alpha) < power:
        high *= 2.0
    return float(optimize.brentq(lambda d: paired_power(d, sd, n, alpha) - power, 0.0, high,
                                 xtol=1e-10 * sd))


def questions_needed(effect: float, sd: float, alpha: float, power: float = TARGET_POWER,
                     limit: int = 100_000) -> int | None:
    """Fewest questions for which the paired test reaches ``power`` (None beyond ``limit``).

    >>> questions_needed(0.5, 1.0, 0.05)
    34
    """
    if not (effect != 0 and sd > 0) or not math.isfinite(sd):
        return None
    low, high = 2, 2
    while paired_power(effect, sd, high, alpha) < power:
        if high >= limit:
            return None
        low, high = high, min(limit, high * 2)
    while low < high:  # smallest n in (low, high] with enough power
        middle = (low + high) // 2
        if paired_power(effect, sd, middle, alpha) >= power:
            high = middle
        else:
            low = middle + 1
    return high


def sd_upper_limit(sd: float, n: int, confidence: float = PLANNING_CONFIDENCE) -> float:
    """One-sided upper ``confidence`` limit of a standard deviation estimated from ``n`` values
    (normal data: ``(n − 1)·s² / σ²`` is χ² with n − 1 degrees of freedom), NaN below 3 values.
    Planning with it instead of ``sd`` (Browne 1995) makes a design reach its power in about
    ``confidence`` of cases however far the pilot's spread was off; with the estimate itself,
    in about half.

    >>> round(sd_upper_limit(1.0, 16), 3)  # sqrt(15 / 10.307)
    1.206
    """
    if n < 3 or not (sd > 0) or not math.isfinite(sd):
        return float("nan")
    return float(sd * math.sqrt((n - 1) / scipy_stats.chi2.ppf(1.0 - confidence, n - 1)))


def difference_variance(sigma_a2: float, sigma_e2: float, tau2: float, n_c: int,
                        baselines: int) -> float:
    """Variance of one question's (condition mean − floor) under the model in the module
    docstring.

    >>> difference_variance(1.0, 0.0, 0.0, 1, 1), difference_variance(1.0, 0.0, 0.0, 1, 5)
    (2.0, 1.2)
    """
    k = baselines
    if k >= 2:
        return tau2 + sigma_a2 / n_c + sigma_a2 / k + sigma_e2 / (n_c * k) \
            + 2.0 * sigma_e2 / (k * (k - 1))
    return tau2 + sigma_a2 / n_c + sigma_a2 + sigma_e2 / n_c + sigma_e2


def variance_components(pair_rows: Iterable[dict], metric: str = "dtw") -> dict:
    """Method-of-moments σ²_a and σ²_e from pair rows (``response_id``, ``baseline_id``,
    ``question_id``, ``metric``).

    Within a question, pairs that share one response (or one baseline) covary by σ²_a, and a
    pair's variance is 2σ²_a + σ²_e. Returns ``sigma_a2``, ``sigma_e2``, ``n_pairs`` and
    ``identifiable`` (False when no two pairs share a member, e.g. K = 1 with one response per
    condition; then σ²_a is set to half the pair variance and σ²_e to 0, the cautious choice).
    """
    by_question: dict[str, list[tuple[str, str, float]]] = {}
    for row in pair_rows:
        by_question.setdefault(str(row["question_id"]), []).append(
            (str(row["response_id"]), str(row["baseline_id"]), float(row[metric])))
    total_ss, total_df, cov_sum, cov_n = 0.0, 0, 0.0, 0
    for pairs in by_question.values():
        if len(pairs) < 2:
            continue
        values = np.array([value for _, _, value in pairs])
        centred = values - values.mean()
        total_ss += float(centred @ centred)
        total_df += len(pairs) - 1
        members = [{r, b} for r, b, _ in pairs]
        for i in range(len(pairs)):
            for j in range(i + 1, len(pairs)):
                if len(members[i] & members[j]) == 1:
                    cov_sum += centred[i] * centred[j]
                    cov_n += 1
    n_pairs = sum(len(p) for p in by_question.values())
    if total_df == 0:
        return {"sigma_a2": float("nan"), "sigma_e2": float("nan"), "n_pairs": n_pairs,
                "identifiable": False}
    pair_var = total_ss / total_df
    if cov_n == 0:
        return {"sigma_a2": pair_var / 2.0, "sigma_e2": 0.0, "n_pairs": n_pairs,
                "identifiable": False}
    # centring within a question biases covariances down by about pair_var / n; add it back
    mean_size = n_pairs / max(len(by_question), 1)
    sigma_a2 = min(max(cov_sum / cov_n + pair_var / mean_size, 0.0), pair_var / 2.0)
    return {"sigma_a2": sigma_a2, "sigma_e2": max(pair_var - 2.0 * sigma_a2, 0.0),
            "n_pairs": n_pairs, "identifiable": True}
