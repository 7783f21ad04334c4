"""Geometry-aware DTW costs: Euclidean distances between symbol embeddings (paper §2.4).

With ``c(v, u) = ‖e(v) − e(u)‖₂`` the normalised ``dtw = DTW_raw / max(n, m)`` lies in
``[0, max pairwise distance]`` (the straight path has ``max(n, m)`` cells); it is in [0, 1] only
when every pairwise distance is ≤ 1. Unit-normalised embeddings give distances in [0, 2].
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping

import numpy as np

from memlens.errors import MemlensError


def embedding_matrix(embeddings: Mapping[Hashable, object], alphabet: Iterable[Hashable]) -> np.ndarray:
    """Stack the embedding of each symbol of ``alphabet`` (in order) into a float64 matrix.

    >>> embedding_matrix({"a": [0, 1], "b": [3, 4]}, ["b", "a"]).tolist()
    [[3.0, 4.0], [0.0, 1.0]]
    """
    if not isinstance(embeddings, Mapping):
        raise MemlensError(
            f"cost: expected a mapping symbol -> embedding vector, got {type(embeddings).__name__}"
        )
    rows = []
    for symbol in alphabet:
        if symbol not in embeddings:
            raise MemlensError(f"cost: symbol {symbol!r} has no embedding in the cost mapping")
        try:
            vector = np.asarray(embeddings[symbol], dtype=np.float64)
        except (TypeError, ValueError):
            raise MemlensError(f"cost: the embedding of {symbol!r} is not a numeric vector") from None
        if vector.ndim != 1 or vector.size == 0 or not np.all(np.isfinite(vector)):
            raise MemlensError(
                f"cost: the embedding of {symbol!r} must be a non-empty 1-D vector of finite numbers"
            )
        if rows and vector.shape != rows[0].shape:
            raise MemlensError(
                f"cost: the embedding of {symbol!r} has {vector.size} dimensions, others have "
                f"{rows[0].size}"
            )
        rows.append(vector)
    if not rows:
        return np.zeros((0, 0))
    return np.vstack(rows)


def symbol_cost_matrix(embeddings: Mapping[Hashable, object], alphabet: Iterable[Hashable],
                       ) -> np.ndarray:
    """Return the M×M matrix of Euclidean distances between the alphabet's symbol embeddings.

    Pass it as ``cost_matrix`` to :func:`memlens.metrics.dtw_batch` with batches encoded over the
    same ``alphabet``.

    >>> symbol_cost_matrix({"a": [0.0, 0.0], "b": [3.0, 4.0]}, ["a", "b"]).tolist()
    [[0.0, 5.0], [5.0, 0.0]]
    """
    matrix = embedding_matrix(embeddings, alphabet)
    cost = np.empty((matrix.shape[0], matrix.shape[0]))
    for i in range(matrix.shape[0]):  # row by row: exact differences, memory O(M·d)
        cost[i] = np.sqrt(((matrix - matrix[i]) ** 2).sum(axis=1))
    return cost


def check_cost_matrix(cost_matrix: object, size: int) -> np.ndarray:
    """Validate a symbol cost matrix covering codes ``0..size-1`` and return it as float64."""
    try:
        cost = np.ascontiguousarray(cost_matrix, dtype=np.float64)
    except (TypeError, ValueError):
        raise MemlensError("cost_matrix: expected a square numeric array") from None
    if cost.ndim != 2 or cost.shape[0] != cost.shape[1]:
        raise MemlensError(f"cost_matrix: expected a square M×M array, got shape {cost.shape}")
    if cost.shape[0] < size:
        raise MemlensError(
            f"cost_matrix: is {cost.shape[0]}×{cost.shape[0]} but the codes need at least {size} symbols"
        )
    if not np.all(np.isfinite(cost)) or (cost.size and cost.min() < 0):
        raise MemlensError("cost_matrix: entries must be finite and non-negative")
    return cost
