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
