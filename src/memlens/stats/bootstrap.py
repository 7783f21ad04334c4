"""Vectorised cluster bootstrap over questions (or any clusters: scenarios, users…).

How a replicate is formed: cluster ids are resampled *once* per replicate, with replacement, and
every row of each drawn cluster enters the replicate — treated rows and reference rows alike, as
many times as the cluster was drawn. So the reference mean and standard deviation (``μ_noise``,
``σ_noise``) are re-estimated in every replicate from the same draw as the treated mean, and the
within-cluster dependence between conditions is kept.

Why it is fast: every statistic used here is a function of per-group counts, sums and sums of
squares. Those are computed once per cluster (a Q × G table); a replicate is then one row of a
B × Q matrix of draw counts, and all replicates of all groups are one matrix product
``counts @ per_cluster_sums``. No Python loop runs per replicate.

Bootstrap p-value (two-sided, with the +1 correction so it is never 0)::

    p = min(1, 2 · min(1 + #{θ* ≤ θ0}, 1 + #{θ* ≥ θ0}) / (B + 1))

where θ* are the replicate statistics and θ0 the null value (0 for d_rel and differences);
replicates within ``TIE_TOLERANCE`` (1e-12) of θ0 are ties, so rounding residue cannot move p.
Replicates where the statistic is undefined (e.g. fewer than two reference rows drawn) are dropped;
their number is reported as ``n_bootstrap - n_valid``.

A plain **bootstrap of a mean** (values already one per cluster, e.g. per-question means) is
:func:`bootstrap_mean`: the values resampled with replacement (:func:`draw_cluster_indices`, or a
draw shared by paired columns), a :class:`MeanEstimate` with its percentile CI. Selectivity,
memory sets and the mitigation evaluation all use it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

TIE_TOLERANCE = 1e-12
"""Replicates this close to the null value count as ties (both tails) in bootstrap p-values."""

Statistic = Callable[["Moments", "Moments"], np.ndarray]


@dataclass(frozen=True)
class ClusterSums:
    """Per-cluster sufficient statistics: ``count``, ``total`` and ``total_sq`` are Q × G arrays.

    ``total`` and ``total_sq`` are of the values minus ``shift`` (keeps sums of squares accurate).
    """

    clusters: np.ndarray
    groups: tuple[str, ...]
    count: np.ndarray
    total: np.ndarray
    total_sq: np.ndarray
    shift: float

    def column(self, group: str) -> int:
        """Column index of ``group``."""
        return self.groups.index(group)


@dataclass(frozen=True)
class Moments:
    """Counts, means (in the original units) and sample variances (ddof = 1) per group.

    Arrays have shape (G,) for the sample itself or (B, G) for bootstrap replicates; means are
    NaN where a group has no rows, variances where it has fewer than two.
    """

    n: np.ndarray
    mean: np.ndarray
    var: np.ndarray


@dataclass(frozen=True)
class BootstrapEstimate:
    """A point estimate with its percentile CI and two-sided bootstrap p-value."""

    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    n_valid: int

    def to_dict(self) -> dict[str, float]:
        """Plain-dict form for JSON."""
        return asdict(self)


def cluster_sums(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence | np.ndarray,
    groups: Sequence[str] | np.ndarray,
    *,
    pools: Mapping[str, Sequence[str]] | None = None,
) -> ClusterSums:
    """Aggregate rows into per-cluster counts, sums and sums of squares for every group.

    ``pools`` adds pooled groups, e.g. ``{"noise": ["filler", "whitespace", "punctuation"]}``;
    a pooled column is the sum of its members' columns.

    >>> sums = cluster_sums([1.0, 2.0, 4.0], ["q1", "q1", "q2"], ["a", "b", "a"], pools={"ab": ["a", "b"]})
    >>> sums.groups, sums.count.tolist()
    (('a', 'b', 'ab'), [[1.0, 1.0, 2.0], [1.0, 0.0, 1.0]])
    """
    values = np.asarray(values, dtype=float)
    cluster_ids, cluster_index = np.unique(np.asarray(clusters), return_inverse=True)
    group_names, group_index = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    shift = float(values.mean()) if values.size else 0.0
    centred = values - shift
    n_clusters, n_groups = len(cluster_ids), len(group_names)
    cell = cluster_index * n_groups + group_index
    size = n_clusters * n_groups

    def table(weights: np.ndarray | None) -> np.ndarray:
        return np.bincount(cell, weights=weights, minlength=size).reshape(n_clusters, n_groups)

    count, total, total_sq = table(None).astype(float), table(centred), table(centred**2)
    names = [str(name) for name in group_names]
    for pool, members in (pools or {}).items():
        columns = [names.index(member) for member in members if member in names]
        count = np.column_stack([count, count[:, columns].sum(axis=1)])
        total = np.column_stack([total, total[:, columns].sum(axis=1)])
        total_sq = np.column_stack([total_sq, total_sq[:, columns].sum(axis=1)])
        names.append(pool)
    return ClusterSums(cluster_ids, tuple(names), count, total, total_sq, shift)


def draw_cluster_indices(n_clusters: int, n_bootstrap: int,
                         seed: int | np.random.Generator) -> np.ndarray:
    """B × Q matrix of cluster indices drawn uniformly with replacement (one row per replicate).

    ``seed`` is a seed or a ``numpy.random.Generator`` to draw from (then its state advances:
    successive draws from one generator differ, as when one seed serves several intervals).
    """
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_clusters, size=(n_bootstrap, n_clusters))


def counts_from_indices(indices: np.ndarray, n_clusters: int) -> np.ndarray:
    """Turn B × Q drawn indices into a B × Q matrix of how often each cluster was drawn.

    >>> counts_from_indices(np.array([[0, 0, 2], [1, 2, 2]]), 3).tolist()
    [[2.0, 0.0, 1.0], [0.0, 1.0, 2.0]]
    """
    n_bootstrap = indices.shape[0]
    flat = (np.arange(n_bootstrap)[:, None] * n_clusters + indices).ravel()
    counts = np.bincount(flat, minlength=n_bootstrap * n_clusters)
    return counts.reshape(n_bootstrap, n_clusters).astype(float)


def draw_cluster_counts(n_clusters: int, n_bootstrap: int, seed: int) -> np.ndarray:
    """B × Q draw-count matrix of a cluster bootstrap (rows sum to Q), from an explicit seed."""
    return counts_from_indices(draw_cluster_indices(n_clusters, n_bootstrap, seed), n_clusters)


def sample_moments(sums: ClusterSums) -> Moments:
    """Moments of the original sample (every cluster drawn once)."""
    return _moments(sums.count.sum(axis=0), sums.total.sum(axis=0), sums.total_sq.sum(axis=0),
                    sums.shift)


def replicate_moments(sums: ClusterSums, counts: np.ndarray) -> Moments:
    """Moments of every replicate at once: one (B × Q) @ (Q × 3G) matrix product."""
    n_groups = len(sums.groups)
    stacked = np.concatenate([sums.count, sums.total, sums.total_sq], axis=1)
    totals = counts @ stacked
    return _moments(totals[:, :n_groups], totals[:, n_groups:2 * n_groups],
                    totals[:, 2 * n_groups:], sums.shift)


def _moments(n: np.ndarray, total: np.ndarray, total_sq: np.ndarray, shift: float) -> Moments:
    with np.errstate(divide="ignore", invalid="ignore"):
        centred_mean = np.where(n > 0, total / n, np.nan)
        spread = total_sq - n * centred_mean**2
        # Sums of squares leave rounding residue; a spread this small relative to them is 0.
        spread = np.where(spread <= 1e-12 * total_sq, 0.0, spread)
        var = np.where(n > 1, spread / (n - 1), np.nan)
    return Moments(n=n, mean=centred_mean + shift, var=var)


def mean_difference(treated: Moments, reference: Moments) -> np.ndarray:
    """μ_treated − μ_reference."""
    return treated.mean - reference.mean


def d_rel(treated: Moments, reference: Moments) -> np.ndarray:
    """(μ_treated − μ_reference) / σ_reference; NaN where σ_reference is 0 or undefined."""
    sd = np.sqrt(reference.var)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, (treated.mean - reference.mean) / sd, np.nan)


ZERO_FLOOR = 1e-12
"""A reference mean this close to 0 is 0 (rounding residue such as −2.8e-17 once gave an
elevation of 1.37e18 %): elevation in % of it is undefined (NaN)."""


def elevation_pct(treated: Moments, reference: Moments) -> np.ndarray:
    """100 · (μ_treated − μ_reference) / μ_reference; NaN where μ_reference is 0 (within
    :data:`ZERO_FLOOR`).

    >>> m = lambda x: Moments(np.array([1.0]), np.array([x]), np.array([0.0]))
    >>> elevation_pct(m(0.5), m(-2.8e-17)).tolist(), elevation_pct(m(0.6), m(0.5)).round(6).tolist()
    ([nan], [20.0])
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.abs(reference.mean) > ZERO_FLOOR,
                        100.0 * (treated.mean - reference.mean) / reference.mean, np.nan)


def bootstrap_p_value(replicates: np.ndarray, null_value: float = 0.0) -> float:
    """Two-sided bootstrap p-value with the +1 correction (see the module docstring).

    >>> bootstrap_p_value(np.array([0.5, 1.0, 1.5, 2.0]))
    0.4
    """
    replicates = replicates[np.isfinite(replicates)]
    if replicates.size == 0:
        return float("nan")
    # floating-point residue (e.g. 1e-17 for an exact 0) counts as a tie with the null
    replicates = np.where(np.abs(replicates - null_value) <= TIE_TOLERANCE, null_value, replicates)
    below = 1 + np.count_nonzero(replicates <= null_value)
    above = 1 + np.count_nonzero(replicates >= null_value)
    return float(min(1.0, 2.0 * min(below, above) / (replicates.size + 1)))


def studentized_p_value(estimate: float, replicates: np.ndarray, n_clusters: int,
                        null_value: float = 0.0) -> float:
    """Two-sided p-value of ``estimate`` from its bootstrap standard error, referred to a t
    distribution with ``n_clusters − 1`` degrees of freedom.

    The bootstrap variance of a cluster mean is (n − 1)/n of the usual one, so the SE is
    inflated by √(n/(n − 1)): the test is then the one-sample t over clusters for a balanced
    mean. Unlike the rank p-value (:func:`bootstrap_p_value`, never below 2/(B + 1)) it is
    continuous, so a family-wide correction over hundreds of rows can still reach its level.
    NaN with fewer than two clusters; with no spread, the rank p-value.

    >>> round(studentized_p_value(1.0, np.array([0.5, 1.0, 1.5]), 10), 4)
    0.0903
    """
    finite = replicates[np.isfinite(replicates)]
    if n_clusters < 2 or finite.size < 2 or not np.isfinite(estimate):
        return float("nan")
    se = float(finite.std(ddof=1)) * float(np.sqrt(n_clusters / (n_clusters - 1)))
    if not se > 0:  # every replicate equal: the rank p-value (never 0, 1 at the null)
        return bootstrap_p_value(finite, null_value)
    from scipy import stats as scipy_stats

    t = abs(estimate - null_value) / se
    return float(2.0 * scipy_stats.t.sf(t, n_clusters - 1))


def summarize_replicates(
    estimate: float, replicates: np.ndarray, *, null_value: float = 0.0, confidence: float = 0.95
) -> BootstrapEstimate:
    """Percentile CI and bootstrap p-value of one statistic's replicates (NaNs dropped)."""
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0 or not np.isfinite(estimate):
        nan = float("nan")
        return BootstrapEstimate(float(estimate), nan, nan, nan, int(finite.size))
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return BootstrapEstimate(float(estimate), float(low), float(high),
                             bootstrap_p_value(finite, null_value), int(finite.size))


def cluster_bootstrap(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence | np.ndarray,
    groups: Sequence[str] | np.ndarray,
    *,
    reference: str | Sequence[str],
    statistic: Statistic = mean_difference,
    seed: int = 0,
    n_bootstrap: int = 10_000,
    confidence: float = 0.95,
) -> dict[str, BootstrapEstimate]:
    """Cluster-bootstrap a two-group statistic of every group against a reference.

    ``reference`` is one group label or several (pooled). ``statistic`` is
    :func:`mean_difference` (default), :func:`d_rel` or :func:`elevation_pct`, or any function of
    (treated :class:`Moments`, reference :class:`Moments`). Returns, per group (the reference
    members included), the estimate, percentile CI and two-sided bootstrap p-value against 0.

    >>> values = [0.1, 0.2, 0.5, 0.6, 0.2, 0.3, 0.6, 0.8]
    >>> clusters = ["q1", "q1", "q1", "q1", "q2", "q2", "q2", "q2"]
    >>> groups = ["noise", "noise", "treat", "treat"] * 2
    >>> result = cluster_bootstrap(values, clusters, groups, reference="noise", n_bootstrap=200)
    >>> round(result["treat"].estimate, 3)  # 0.625 - 0.2
    0.425
    """
    members = [reference] if isinstance(reference, str) else list(reference)
    pool_name = "\x00reference"
    sums = cluster_sums(values, clusters, groups, pools={pool_name: members})
    counts = draw_cluster_counts(len(sums.clusters), n_bootstrap, seed)
    return _estimates(sums, counts, pool_name, statistic, confidence)


def _estimates(
    sums: ClusterSums, counts: np.ndarray, reference: str, statistic: Statistic, confidence: float
) -> dict[str, BootstrapEstimate]:
    ref = sums.column(reference)
    point, reps = sample_moments(sums), replicate_moments(sums, counts)
    point_stat = statistic(point, select_column(point, ref))
    rep_stat = statistic(reps, select_column(reps, ref))
    return {
        group: summarize_replicates(float(point_stat[column]), rep_stat[:, column],
                                    confidence=confidence)
        for column, group in enumerate(sums.groups)
        if group != reference and not group.startswith("\x00")
    }


def select_column(moments: Moments, column: int) -> Moments:
    """The moments of one column, kept broadcastable against all columns ((G,) or (B, G))."""
    return Moments(moments.n[..., [column]], moments.mean[..., [column]],
                   moments.var[..., [column]])


@dataclass(frozen=True)
class MeanEstimate:
    """A mean (or a difference of means) with its percentile-bootstrap CI.

    ``estimate``, ``ci_low`` and ``ci_high`` are None when there was nothing to average
    (``n`` = 0). ``n`` is the number of values averaged (for a difference of two independent
    means, the smaller of the two); ``replicates`` are the ``n_bootstrap`` bootstrap means when
    they were kept (needed to difference two estimates, see :meth:`minus`).
    """

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    n_bootstrap: int
    replicates: np.ndarray | None = field(default=None, repr=False, compare=False)

    def minus(self, other: MeanEstimate, confidence: float = 0.95) -> MeanEstimate:
        """``self − other`` for two independent resamplings: the percentile CI of the
        replicate differences (both estimates must have kept their replicates); None values
        when either side has none.

        >>> a = bootstrap_mean([1.0, 2.0, 3.0], seed=0, n_bootstrap=50, keep_replicates=True)
        >>> b = bootstrap_mean([1.0, 1.0], seed=1, n_bootstrap=50, keep_replicates=True)
        >>> a.minus(b).estimate, a.minus(bootstrap_mean([], n_bootstrap=50)).estimate
        (1.0, None)
        """
        n = min(self.n, other.n)
        if self.estimate is None or other.estimate is None:
            return MeanEstimate(None, None, None, n, self.n_bootstrap)
        low, high = percentile_interval(self.replicates - other.replicates, confidence)
        return MeanEstimate(self.estimate - other.estimate, low, high, n, self.n_bootstrap)

    def to_dict(self) -> dict:
        """The JSON form of selectivity and memory-set results: ``{"mean", "ci": [low, high]}``
        (``n`` and the replicates are the caller's to state)."""
        return {"mean": self.estimate, "ci": [self.ci_low, self.ci_high]}

    @classmethod
    def from_dict(cls, data: Mapping, *, n: int, n_bootstrap: int) -> MeanEstimate:
        """Read :meth:`to_dict`'s form back; ``n`` and ``n_bootstrap`` are stored beside it."""
        low, high = data["ci"]
        return cls(data["mean"], low, high, n, n_bootstrap)


def percentile_interval(replicates: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The central ``confidence`` percentile interval of bootstrap replicates
    (``numpy.percentile`` at 2.5 and 97.5 for 95 %).

    >>> percentile_interval(np.arange(101.0))
    (2.5, 97.5)
    """
    tail = (100.0 - 100.0 * confidence) / 2.0
    low, high = np.percentile(replicates, [tail, 100.0 - tail])
    return float(low), float(high)


def bootstrap_mean(
    values: Sequence[float] | np.ndarray,
    *,
    seed: int | np.random.Generator = 0,
    n_bootstrap: int = 2000,
    confidence: float = 0.95,
    draws: np.ndarray | None = None,
    keep_replicates: bool = False,
) -> MeanEstimate:
    """Mean of ``values`` with a percentile-bootstrap CI over the values.

    Each replicate resamples the values with replacement: a B × n index matrix drawn by
    :func:`draw_cluster_indices` from ``seed`` (a seed or a generator shared by several calls),
    or ``draws``, one such matrix shared by paired columns of the same length (questions
    resampled jointly). With one value per cluster (per-question means) this is a cluster
    bootstrap. No values: None estimate and CI, nothing drawn.

    >>> m = bootstrap_mean([0.1, 0.2, 0.6], seed=0, n_bootstrap=1000)
    >>> round(m.estimate, 3), m.n, m.ci_low < m.estimate < m.ci_high
    (0.3, 3, True)
    >>> bootstrap_mean([], n_bootstrap=10)
    MeanEstimate(estimate=None, ci_low=None, ci_high=None, n=0, n_bootstrap=10)
    """
    array = np.asarray(values, dtype=float)
    if array.size == 0:
        return MeanEstimate(None, None, None, 0, n_bootstrap)
    if draws is None:
        draws = draw_cluster_indices(array.size, n_bootstrap, seed)
    replicates = array[draws].mean(axis=1)
    low, high = percentile_interval(replicates, confidence)
    return MeanEstimate(float(array.mean()), low, high, int(array.size), len(draws),
                        replicates if keep_replicates else None)
