"""Inter-rater agreement: pairwise exact agreement, Cohen's kappa and Fleiss' kappa (App. C.4).

Plain functions over label sequences. Labels may be any hashable value (symbol ids, roots,
integers); ``"unlabeled"`` is treated as a category like any other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np

from memlens.errors import MemlensError


def _check_pair(a: Sequence[Hashable], b: Sequence[Hashable]) -> None:
    if len(a) != len(b):
        raise MemlensError(
            f"cannot compare label sequences of different lengths ({len(a)} vs {len(b)})"
        )
    if len(a) == 0:
        raise MemlensError("cannot compute agreement over zero items")


def pairwise_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Fraction of items on which two raters give the same label, in [0, 1].

    >>> pairwise_agreement(["x", "y", "z", "x"], ["x", "y", "x", "y"])
    0.5
    """
    _check_pair(a, b)
    return sum(1 for left, right in zip(a, b, strict=True) if left == right) / len(a)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters: (p_o - p_e) / (1 - p_e).

    p_o is the observed agreement, p_e the agreement expected from each rater's own label
    frequencies. Returns ``nan`` when p_e = 1 (both raters used one and the same label for every
    item: kappa is undefined there, as in scikit-learn).

    >>> round(cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"]), 4)
    0.5
    """
    _check_pair(a, b)
    n_items = len(a)
    observed = pairwise_agreement(a, b)
    counts_a, counts_b = Counter(a), Counter(b)
    expected = sum(counts_a[label] * counts_b.get(label, 0) for label in counts_a) / n_items**2
    if expected >= 1.0:
        return float("nan")
    return (observed - expected) / (1.0 - expected)


def ratings_to_counts(ratings: Sequence[Sequence[Hashable]]) -> tuple[np.ndarray, list]:
    """Turn an items × raters matrix of labels into an items × categories count matrix.

    Returns the counts and the category order (sorted by string form).

    >>> counts, categories = ratings_to_counts([["a", "b", "b"], ["c", "c", "c"]])
    >>> counts.tolist(), categories
    ([[1, 2, 0], [0, 0, 3]], ['a', 'b', 'c'])
    """
    rows = [list(row) for row in ratings]
    if not rows:
        raise MemlensError("cannot compute agreement over zero items")
    n_raters = len(rows[0])
    for index, row in enumerate(rows):
        if len(row) != n_raters:
            raise MemlensError(
                f"ratings row {index} has {len(row)} labels, expected {n_raters} (one per rater)"
            )
    categories = sorted({label for row in rows for label in row}, key=str)
    position = {label: column for column, label in enumerate(categories)}
    counts = np.zeros((len(rows), len(categories)), dtype=np.int64)
    for item, row in enumerate(rows):
        for label in row:
            counts[item, position[label]] += 1
    return counts, categories


def _as_counts(ratings, kind: str) -> np.ndarray:
    if kind == "labels":
        return ratings_to_counts(ratings)[0]
    array = np.asarray(ratings, dtype=object)
    numeric = array.size > 0 and all(
        isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
        for value in array.ravel()
    )
    if kind == "auto" and not numeric:
        return ratings_to_counts(ratings)[0]
    if not numeric or array.ndim != 2:
        raise MemlensError("a count matrix must be a 2-D array of non-negative numbers")
    counts = array.astype(float)
    if (counts < 0).any():
        raise MemlensError("a count matrix must not contain negative counts")
    totals = counts.sum(axis=1)
    if not np.allclose(totals, totals[0]):
        hint = " (integer labels? pass kind='labels')" if kind == "auto" else ""
        raise MemlensError(
            "every row of a count matrix must sum to the same number of raters; "
            f"row sums range from {totals.min():g} to {totals.max():g}{hint}"
        )
    return counts


def fleiss_kappa(
    ratings, kind: Literal["auto", "labels", "counts"] = "auto"
) -> float:
    """Fleiss' kappa of any number of raters (Fleiss 1971), matching statsmodels' ``fleiss_kappa``.

    ``ratings`` is either
      * an items × raters matrix of category labels (strings or other non-numeric values:
        ``[["social.x", "social.x", "practical.y"], ...]``), or
      * an items × categories matrix of counts (numbers; every row sums to the number of raters),
        the form statsmodels takes.

    ``kind="auto"`` treats non-numeric matrices as labels and numeric ones as counts; integer
    label codes must be passed with ``kind="labels"``. Returns ``nan`` when chance agreement is 1
    (every rating is the same category).

    >>> round(fleiss_kappa([["a", "a"], ["b", "b"], ["a", "b"]]), 4)
    0.3333
    >>> round(fleiss_kappa([[2, 0], [0, 2], [1, 1]]), 4)
    0.3333
    """
    if kind not in ("auto", "labels", "counts"):
        raise MemlensError(f"kind must be 'auto', 'labels' or 'counts', not {kind!r}")
    counts = _as_counts(ratings, kind)
    n_items = counts.shape[0]
    if n_items == 0:
        raise MemlensError("cannot compute agreement over zero items")
    n_raters = counts[0].sum()
    if n_raters < 2:
        raise MemlensError("Fleiss' kappa needs at least two ratings per item")
    category_share = counts.sum(axis=0) / (n_items * n_raters)
    per_item = ((counts**2).sum(axis=1) - n_raters) / (n_raters * (n_raters - 1))
    observed = per_item.mean()
    expected = float((category_share**2).sum())
    if expected >= 1.0:
        return float("nan")
    return float((observed - expected) / (1.0 - expected))
