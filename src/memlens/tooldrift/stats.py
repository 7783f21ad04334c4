"""Scenario-level uncertainty: cluster bootstrap over scenarios and a paired test.

Scenarios are the clusters (the k calls of one scenario are not independent). The bootstrap is
``memlens.stats.cluster_bootstrap`` (vectorised, one draw of scenario ids per replicate shared by
both conditions); this module only shapes per-scenario rates for it and adds the Wilcoxon test.
"""

from __future__ import annotations

import math

import numpy as np

from memlens.ontology.gold import wilson_interval
from memlens.stats import cluster_bootstrap, mean_difference, paired_cluster_t_test
from memlens.tooldrift.results import (
    Attribution,
    Decomposition,
    Estimate,
    PairedTest,
    Proportion,
    ScenarioIntervals,
)


def _own_mean(treated, reference):
    return treated.mean


def _interval(estimate) -> tuple[float, float] | None:
    if math.isnan(estimate.ci_low):
        return None
    return estimate.ci_low, estimate.ci_high


def _p_value(estimate) -> float | None:
    return None if math.isnan(estimate.p_value) else estimate.p_value


def scenario_bootstrap(biased: np.ndarray, neutral: np.ndarray, *, seed: int = 0,
                       n_bootstrap: int = 10_000) -> ScenarioIntervals:
    """Percentile 95 % CIs of r_neutral, r_biased and Δ = r_biased − r_neutral, resampling
    scenarios (NaN = no rate for that condition), and the bootstrap p-value of Δ.

    >>> out = scenario_bootstrap(np.array([0.5, 0.75]), np.array([0.25, 0.5]), n_bootstrap=100)
    >>> out.delta, out.r_neutral[0] <= 0.375 <= out.r_neutral[1]
    ((0.25, 0.25), True)
    """
    biased, neutral = np.asarray(biased, float), np.asarray(neutral, float)
    values, clusters, groups = [], [], []
    for index in range(biased.size):
        for label, rate in (("biased", biased[index]), ("neutral", neutral[index])):
            if not np.isnan(rate):
                values.append(rate), clusters.append(index), groups.append(label)
    if not values:
        return ScenarioIntervals(None, None, None, None)
    if set(groups) != {"biased", "neutral"}:  # one condition never scored: no difference
        only = groups[0]
        single = _interval(cluster_bootstrap(values, clusters, groups, reference=only,
                                             statistic=_own_mean, seed=seed,
                                             n_bootstrap=n_bootstrap)[only])
        return ScenarioIntervals(single if only == "neutral" else None,
                                 single if only == "biased" else None, None, None)
    options = {"seed": seed, "n_bootstrap": n_bootstrap, "reference": "neutral"}
    means = cluster_bootstrap(values, clusters, groups, statistic=_own_mean, **options)
    delta = cluster_bootstrap(values, clusters, groups, statistic=mean_difference, **options)
    return ScenarioIntervals(_interval(means["neutral"]), _interval(means["biased"]),
                             _interval(delta["biased"]), _p_value(delta["biased"]))


def paired_test(biased: np.ndarray, neutral: np.ndarray) -> PairedTest:
    """Wilcoxon signed-rank and paired t-test of per-scenario rates (biased vs neutral).

    Only scenarios with both rates take part. p-values are None when a test is undefined
    (fewer than two pairs, or every difference zero / constant).

    >>> result = paired_test(np.array([0.5, 0.25, 1.0]), np.array([0.0, 0.0, 0.5]))
    >>> result.n, result.mean_difference
    (3, 0.4166666666666667)
    """
    from scipy import stats

    biased, neutral = np.asarray(biased, dtype=float), np.asarray(neutral, dtype=float)
    both = ~(np.isnan(biased) | np.isnan(neutral))
    difference = biased[both] - neutral[both]
    described = {"test": "wilcoxon signed-rank (two-sided) and paired t",
                 "n": int(difference.size),
                 "mean_difference": float(difference.mean()) if difference.size else None}
    if difference.size < 2 or not np.any(np.abs(difference) > 1e-12):
        return PairedTest(**described, note="undefined: fewer than two paired scenarios or no "
                                            "non-zero difference")
    wilcoxon = stats.wilcoxon(difference, zero_method="wilcox", alternative="two-sided")
    t_statistic = t_p = None
    if np.ptp(difference) > 1e-12:  # a constant difference has no t statistic
        t_test = paired_cluster_t_test(biased, neutral)
        t_statistic, t_p = t_test.statistic, t_test.p_value
    return PairedTest(**described, wilcoxon_statistic=float(wilcoxon.statistic),
                      wilcoxon_p=float(wilcoxon.pvalue), t_statistic=t_statistic, t_p=t_p)


def proportion(hits: int, n: int) -> Proportion:
    """``hits`` of ``n`` with a Wilson 95 % interval (rate and CI None when n = 0).

    >>> [round(x, 4) for x in proportion(8, 10).ci95]
    [0.4902, 0.9433]
    """
    if n == 0:
        return Proportion(0, 0, None, None)
    low, high = wilson_interval(hits, n)
    return Proportion(hits, n, hits / n, (low, high))


def _estimate(n: int, value, what: str | None = None) -> Estimate:
    return Estimate(n, value.estimate, _interval(value), _p_value(value), what)


def attribution(scores, queries_of: dict[str, list[dict]] | None, *, seed: int = 0,
                n_bootstrap: int = 10_000) -> Attribution:
    """Split Δ into retrieval and model: P(a biased memory was retrieved), Δ | retrieved and
    Δ | not retrieved (per-scenario Δ = r_biased − r_neutral averaged over the scenarios whose
    biased-condition query did / did not retrieve a biased memory) and their difference, with
    percentile 95 % CIs from one cluster bootstrap over scenarios (seeded).

    Over the scenarios with both rates, Δ_paired = w · Δ|retrieved + (1 − w) · Δ|not retrieved
    with w their retrieved share (``decomposition``). ``applicable`` is False when memory was
    injected verbatim (Setting 1: every biased prompt holds the biased memories).
    """
    if not queries_of or all(q.get("retrieved_biased") is None
                             for members in queries_of.values() for q in members):
        return Attribution(False, "memory injected verbatim: every biased prompt holds the "
                                  "biased memories")
    retrieved_of = {}
    for score in scores:
        biased = [q for q in queries_of.get(score.entry_id, []) if q["condition"] == "biased"]
        if biased:
            retrieved_of[score.entry_id] = any(q["retrieved_biased"] for q in biased)
    p_retrieved = proportion(sum(retrieved_of.values()), len(retrieved_of))
    differences, labels, structural = [], [], 0
    for score in scores:
        rates = score.rates
        if score.entry_id in retrieved_of and rates["neutral"] is not None \
                and rates["biased"] is not None:
            differences.append(rates["biased"] - rates["neutral"])
            labels.append("retrieved" if retrieved_of[score.entry_id] else "not_retrieved")
            mine = queries_of.get(score.entry_id, [])
            structural += labels[-1] == "not_retrieved" and all(
                q["same_as_base"] for q in mine if q["condition"] in ("neutral", "biased"))
    counts = {label: labels.count(label) for label in ("retrieved", "not_retrieved")}
    present = [label for label in counts if counts[label]]
    given = {label: Estimate(counts[label]) for label in counts}
    what = "Δ|retrieved − Δ|not retrieved"
    difference, decomposition = Estimate(len(differences), what=what), None
    if present:
        clusters = list(range(len(differences)))
        options = {"seed": seed, "n_bootstrap": n_bootstrap}
        own = cluster_bootstrap(differences, clusters, labels, reference=present[0],
                                statistic=_own_mean, **options)
        for label in present:
            given[label] = _estimate(counts[label], own[label])
        if len(present) == 2:
            gap = cluster_bootstrap(differences, clusters, labels, reference="not_retrieved",
                                    statistic=mean_difference, **options)["retrieved"]
            difference = _estimate(len(differences), gap, what)
        decomposition = Decomposition(
            float(np.mean(differences)), counts["retrieved"] / len(differences),
            "delta_paired = w * delta_given_retrieved + (1 - w) * delta_given_not_retrieved "
            "(scenarios with both rates)")
    return Attribution(True, p_biased_retrieved=p_retrieved,
                       paired_scenarios=len(differences),
                       not_retrieved_equal_base=int(structural),
                       delta_given_retrieved=given["retrieved"],
                       delta_given_not_retrieved=given["not_retrieved"],
                       difference=difference, decomposition=decomposition)
