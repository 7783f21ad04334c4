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
    p_values, q_values, order = _ranked(p_values)
    m = order.size
    if m:
        scaled = p_values[order] * m / np.arange(1, m + 1)
        q_values[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return q_values


def _ranked(p_values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(p as floats, an all-NaN output of its shape, indices of the finite p ascending)``."""
    p_values = np.asarray(p_values, dtype=float)
    finite = np.flatnonzero(np.isfinite(p_values))
    return (p_values, np.full(p_values.shape, np.nan),
            finite[np.argsort(p_values[finite], kind="stable")])


def simes(p_values: Sequence[float] | np.ndarray) -> float:
    """Simes' combined p-value of one family, min_k m·p_(k)/k over the finite p-values (NaN when
    there is none). It equals the family's smallest BH q-value.

    >>> simes([0.01, 0.04, 0.03, 0.2])
    0.04
    """
    q_values = benjamini_hochberg(p_values)
    return float(np.nanmin(q_values)) if np.isfinite(q_values).any() else float("nan")


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (family-wise error), in input order; NaN stays NaN.

    The same values as ``statsmodels.stats.multitest.multipletests(p, method="holm")[1]``.

    >>> holm([0.01, 0.04, 0.03, 0.2]).round(4).tolist()
    [0.04, 0.09, 0.09, 0.2]
    """
    p_values, out, order = _ranked(p_values)
    m = order.size
    if m:
        scaled = p_values[order] * (m - np.arange(m))
        out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out


def family_bh(p_values: Sequence[float] | np.ndarray, families: Sequence,
              alpha: float = 0.05) -> np.ndarray:
    """Two-level error control over a table of families (e.g. one per category).

    A report shows many families: testing each on its own lets some family of pure noise light
    up by chance in most runs. Here a family is *selected* when its Simes p-value survives
    **Holm** across the families (family-wise: a family with no effect is selected with
    probability ≤ ``alpha`` however many families have real effects), and rows within a selected
    family are flagged by Benjamini–Hochberg at ``alpha`` (false share within the family ≤
    ``alpha``).

    Returns one adjusted value per row, in input order: ``max(family Holm p, within-family BH
    q)`` capped at 1, so a row is significant at ``alpha`` iff its value is ≤ ``alpha``.
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
    family_p = holm(np.array([simes(p_values[groups[name]]) for name in names]))
    out = np.full(p_values.shape, np.nan)
    for name, p_family in zip(names, family_p, strict=True):
        index = groups[name]
        out[index] = np.minimum(1.0, np.maximum(p_family, benjamini_hochberg(p_values[index])))
    return out
