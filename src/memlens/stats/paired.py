"""Paired cluster bootstrap of a difference between two runs on the same clusters (B − A).

Two runs of one design (the same questions, or the same tool-drift scenarios) are compared
*paired*: every replicate draws the clusters once and applies the same draw to both runs, so a
question that is hard in both runs moves both statistics together and its shared part cancels
in Δ = θ_B − θ_A. Only clusters present in both runs take part (:func:`aligned_sums`).

Vectorised as in :mod:`memlens.stats.bootstrap`: each run's per-cluster counts, sums and sums
of squares are a Q × G table; one B × Q draw-count matrix times each table gives every
replicate of every group of both runs — no Python loop per replicate. The p-value of Δ is the
two-sided bootstrap p-value against 0 (:func:`memlens.stats.bootstrap.bootstrap_p_value`).

:func:`paired_categories` applies this to two drift tables: per category, Δ of the mean drift
and Δ of d_rel (each run's own pooled-noise reference), with Benjamini–Hochberg q-values
within each condition class (the same families as the single-run statistics).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memlens.numfmt import number
from memlens.stats.bootstrap import (
    BootstrapEstimate,
    ClusterSums,
    Moments,
    cluster_sums,
    d_rel,
    draw_cluster_counts,
    replicate_moments,
    sample_moments,
    select_column,
    summarize_replicates,
)
from memlens.stats.multiple import benjamini_hochberg
from memlens.stats.table import CONDITION_CLASSES

NOISE_POOL = "\x00noise"


def p_text(value) -> str:
    """A p- or q-value for people: ``<0.001`` below 0.001 (a bootstrap p is never exactly 0),
    ``n/a`` when missing, else three decimals.

    >>> p_text(0.0004), p_text(0.0321), p_text(None)
    ('<0.001', '0.032', 'n/a')
    """
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 0.001:
        return "<0.001"
    return number(value)


def group_mean(treated: Moments, reference: Moments) -> np.ndarray:
    """The group's own mean (the reference is ignored): the statistic of "Δ mean drift"."""
    return treated.mean


@dataclass(frozen=True)
class PairedEstimate:
    """One statistic in run A and run B and the paired-bootstrap estimate of Δ = B − A."""

    a: float
    b: float
    delta: BootstrapEstimate

    def to_dict(self) -> dict:
        """Plain-dict form for JSON (``delta_ci`` as ``[low, high]``)."""
        return {"a": self.a, "b": self.b, "delta": self.delta.estimate,
                "delta_ci": [self.delta.ci_low, self.delta.ci_high],
                "delta_p": self.delta.p_value, "n_valid": self.delta.n_valid}


def aligned_sums(
    runs: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    *,
    pools: Mapping[str, Sequence[str]] | None = None,
) -> tuple[ClusterSums, ...]:
    """Cluster sums of several runs (``(values, clusters, groups)`` each) on the clusters they
    all share and the union of their groups, in the same row and column order.

    Rows of clusters missing from any run are left out; a group missing from a run has zero
    counts there (its statistics are NaN).

    >>> a, b = aligned_sums([([1.0, 2.0], ["q1", "q2"], ["x", "x"]),
    ...                      ([3.0, 5.0], ["q2", "q3"], ["x", "y"])])
    >>> a.clusters.tolist(), a.groups, a.count.tolist(), b.count.tolist()
    (['q2'], ('x', 'y'), [[1.0, 0.0]], [[1.0, 0.0]])
    """
    shared = None
    for _, clusters, _ in runs:
        present = set(np.asarray(clusters).tolist())
        shared = present if shared is None else shared & present
    groups = sorted({str(g) for _, _, gs in runs for g in np.asarray(gs).astype(str)})
    cluster_ids = np.array(sorted(shared or ()), dtype=object)
    out = []
    for values, clusters, labels in runs:
        values, clusters = np.asarray(values, float), np.asarray(clusters)
        labels = np.asarray(labels).astype(str)
        keep = np.isin(clusters.astype(object), cluster_ids)
        sums = cluster_sums(values[keep], clusters[keep], labels[keep])
        out.append(_reindex(sums, cluster_ids, groups, pools or {}))
    return tuple(out)


def _reindex(sums: ClusterSums, clusters: np.ndarray, groups: list[str],
             pools: Mapping[str, Sequence[str]]) -> ClusterSums:
    rows = {c: i for i, c in enumerate(sums.clusters.tolist())}
    row_index = np.array([rows.get(c, -1) for c in clusters.tolist()], dtype=int)
    col_index = np.array([sums.column(g) if g in sums.groups else -1 for g in groups], dtype=int)

    def pick(data: np.ndarray) -> np.ndarray:  # -1 selects the zero row / column added here
        padded = np.zeros((data.shape[0] + 1, data.shape[1] + 1))
        padded[:-1, :-1] = data
        return padded[np.ix_(row_index, col_index)]

    tables = [pick(sums.count), pick(sums.total), pick(sums.total_sq)]
    names = list(groups)
    for pool, members in pools.items():
        columns = [names.index(m) for m in members if m in names]
        tables = [np.column_stack([t, t[:, columns].sum(axis=1)]) for t in tables]
        names.append(pool)
    return ClusterSums(clusters, tuple(names), *tables, sums.shift)


def paired_replicates(
    sums_a: ClusterSums, sums_b: ClusterSums, counts: np.ndarray, statistic, reference: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Point statistics (G,) and replicate statistics (B, G) of both runs under one draw-count
    matrix ``counts`` (B × Q, the same for both runs): ``(point_a, point_b, reps_a, reps_b)``."""
    ref = sums_a.column(reference)
    out = []
    for sums in (sums_a, sums_b):
        point = sample_moments(sums)
        out.append(statistic(point, select_column(point, ref)))
    for sums in (sums_a, sums_b):
        reps = replicate_moments(sums, counts)
        out.append(statistic(reps, select_column(reps, ref)))
    return out[0], out[1], out[2], out[3]


def paired_bootstrap(
    sums_a: ClusterSums, sums_b: ClusterSums, *, statistic=group_mean, reference: str | None = None,
    seed: int = 0, n_bootstrap: int = 10_000, confidence: float = 0.95,
) -> dict[str, PairedEstimate]:
    """Δ = statistic(B) − statistic(A) per group, with the paired cluster bootstrap (one seeded
    draw of clusters shared by both runs). ``sums_a`` / ``sums_b`` come from
    :func:`aligned_sums`. ``reference`` is the reference column of a two-group statistic such as
    :func:`memlens.stats.bootstrap.d_rel` (default: the first group, unused by
    :func:`group_mean`). Groups whose names start with NUL (pools) are left out."""
    if sums_a.groups != sums_b.groups or sums_a.clusters.tolist() != sums_b.clusters.tolist():
        raise ValueError("paired_bootstrap needs sums aligned by aligned_sums()")
    counts = draw_cluster_counts(len(sums_a.clusters), n_bootstrap, seed)
    point_a, point_b, reps_a, reps_b = paired_replicates(
        sums_a, sums_b, counts, statistic, reference or sums_a.groups[0])
    return {group: PairedEstimate(float(point_a[col]), float(point_b[col]),
                                  summarize_replicates(float(point_b[col] - point_a[col]),
                                                       reps_b[:, col] - reps_a[:, col],
                                                       confidence=confidence))
            for col, group in enumerate(sums_a.groups) if not group.startswith("\x00")}


def paired_categories(
    table_a: pd.DataFrame, table_b: pd.DataFrame, metric: str, *, seed: int = 0,
    n_bootstrap: int = 10_000,
) -> dict[str, dict]:
    """Per category of two validated drift tables: Δ mean drift and Δ d_rel (B − A) with their
    paired-bootstrap CIs and p-values, BH q-values within each condition class, and n.

    Both statistics use the same seeded draw of the shared questions. Returns
    ``{category: {"condition_class", "n_a", "n_b", "n_questions", "mean": {...},
    "d_rel": {...}}}`` where each statistic holds ``a``, ``b``, ``delta``, ``delta_ci``,
    ``delta_p``, ``delta_q``, ``n_valid``.
    """
    classes = {}
    for table in (table_a, table_b):
        classes.update(dict(zip(table["category"], table["condition_class"], strict=True)))
    noise = sorted(c for c, k in classes.items() if k == "noise")
    runs = [(t[metric].to_numpy(float), t["question_id"].to_numpy(), t["category"].to_numpy())
            for t in (table_a, table_b)]
    sums_a, sums_b = aligned_sums(runs, pools={NOISE_POOL: noise})
    if len(sums_a.clusters) == 0:
        return {}
    options = {"seed": seed, "n_bootstrap": n_bootstrap}
    means = paired_bootstrap(sums_a, sums_b, statistic=group_mean, **options)
    relative = paired_bootstrap(sums_a, sums_b, statistic=d_rel, reference=NOISE_POOL, **options)
    result = {}
    for name in sorted(classes, key=lambda c: (CONDITION_CLASSES.index(classes[c]), c)):
        col = sums_a.column(name)
        result[name] = {
            "condition_class": classes[name],
            "n_a": int(sums_a.count[:, col].sum()), "n_b": int(sums_b.count[:, col].sum()),
            "n_questions": int(np.count_nonzero((sums_a.count[:, col] > 0)
                                                & (sums_b.count[:, col] > 0))),
            "mean": means[name].to_dict(), "d_rel": relative[name].to_dict()}
    for statistic in ("mean", "d_rel"):
        for klass in CONDITION_CLASSES:
            names = [n for n, row in result.items() if row["condition_class"] == klass]
            q_values = benjamini_hochberg([result[n][statistic]["delta_p"] for n in names])
            for name, q in zip(names, q_values, strict=True):
                result[name][statistic]["delta_q"] = float(q)
    return result
