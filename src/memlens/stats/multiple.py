"""Benjamini–Hochberg false-discovery-rate adjustment."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """BH-adjusted q-values, in the input order; NaN p-values stay NaN and are not counted.

    q_(i) = min_{k ≥ i} min(1, m · p_(k) / k) over the m finite p-values sorted ascending — the
    same values as ``statsmodels.stats.multitest.multipletests(p, method="fdr_bh")[1]``.

    >>> benjamini_hochberg([0.01, 0.04, 0.03, 0.2]).round(4).tolist()
    [0.04, 0.0533, 0.0533, 0.2]
    """
    p_values = np.asarray(p_values, dtype=float)
    q_values = np.full(p_values.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p_values))
    if finite.size == 0:
        return q_values
    order = finite[np.argsort(p_values[finite], kind="stable")]
    m = order.size
    scaled = p_values[order] * m / np.arange(1, m + 1)
    q_values[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return q_values


def simes(p_values: Sequence[float] | np.ndarray) -> float:
    """Simes' combined p-value of one family, min_k m·p_(k)/k over the finite p-values (NaN when
    there is none). It equals the family's smallest BH q-value.

    >>> simes([0.01, 0.04, 0.03, 0.2])
    0.04
    """
    q_values = benjamini_hochberg(p_values)
    return float(np.nanmin(q_values)) if np.isfinite(q_values).any() else float("nan")


def family_bh(p_values: Sequence[float] | np.ndarray, families: Sequence,
              alpha: float = 0.05) -> np.ndarray:
    """Two-level false-discovery control over a table of families (Benjamini & Bogomolov 2014).

    A report shows many families (e.g. one per category): testing each family on its own lets
    some family of pure noise light up by chance in most runs. Here a family is first *selected*
    by BH over the families' Simes p-values at ``alpha``; within each of the R selected families
    (of F with a finite p) rows are tested by BH at ``alpha · R / F``. So a family with no
    effect is flagged with probability ≤ ``alpha`` under the global null (the false share of
    flagged families is ≤ ``alpha`` in general), and the expected false share within the
    selected families is ≤ ``alpha``.

    Returns one adjusted value per row, in input order: ``max(family q, within-family q · F /
    R)`` capped at 1, so a row is significant at ``alpha`` iff its value is ≤ ``alpha``. (R is
    the number of families selected at ``alpha``: the values are adjusted *at* that level.)
    NaN p-values stay NaN.

    >>> family_bh([0.001, 0.2, 0.03, 0.04], ["a", "a", "b", "b"]).round(3).tolist()
    [0.004, 0.2, 0.04, 0.04]
    """
    p_values = np.asarray(p_values, dtype=float)
    keys = list(families)
    if len(keys) != p_values.size:
        raise ValueError("family_bh: one family per p-value")
    groups: dict = {}
    for index, key in enumerate(keys):
        groups.setdefault(key, []).append(index)
    names = list(groups)
    combined = np.array([simes(p_values[groups[name]]) for name in names])
    family_q = benjamini_hochberg(combined)
    tested = int(np.isfinite(combined).sum())
    selected = int(np.count_nonzero(family_q <= alpha))
    scale = tested / max(selected, 1)
    out = np.full(p_values.shape, np.nan)
    for name, q_family in zip(names, family_q, strict=True):
        index = groups[name]
        within = benjamini_hochberg(p_values[index])
        out[index] = np.minimum(1.0, np.maximum(q_family, within * scale))
    return out
