"""Pairwise Welch t-tests between categories, BH-adjusted, summarised as compact letters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np

from memlens.stats.effects import welch_t_test
from memlens.stats.letters import compact_letters
from memlens.stats.multiple import benjamini_hochberg


def pairwise_welch(
    samples: Mapping[str, Sequence[float] | np.ndarray], *, alpha: float = 0.05
) -> tuple[list[dict], dict[str, str]]:
    """Welch t-test for every pair of categories, BH across all pairs, and the letter display.

    Returns (pairs, letters): pairs as dicts ``a, b, t, df, p, q, significant`` (q < ``alpha``);
    letters per category, computed with categories ordered by ascending mean. A pair whose test
    is undefined (a group with < 2 values, or both constant) counts as not significant.

    >>> pairs, letters = pairwise_welch({"x": [1.0, 1.1, 0.9], "y": [5.0, 5.2, 4.8]})
    >>> letters, pairs[0]["significant"]
    ({'x': 'a', 'y': 'b'}, True)
    """
    arrays = {name: np.asarray(values, float) for name, values in samples.items()}
    order = sorted(arrays, key=lambda name: (float(np.mean(arrays[name])), name))
    pairs = []
    for a, b in combinations(order, 2):
        test = welch_t_test(arrays[a], arrays[b])
        pairs.append({"a": a, "b": b, "t": test.statistic, "df": test.df, "p": test.p_value})
    q_values = benjamini_hochberg([pair["p"] for pair in pairs])
    for pair, q in zip(pairs, q_values, strict=True):
        pair["q"] = float(q)
        pair["significant"] = bool(np.isfinite(q) and q < alpha)
    significant = [(pair["a"], pair["b"]) for pair in pairs if pair["significant"]]
    return pairs, compact_letters(order, significant)
