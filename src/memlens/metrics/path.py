"""The optimal DTW alignment path between two symbol sequences (for the trajectory viewer).

Same recursion and 0/1 cost as ``memlens.metrics.dtw_raw`` (SPEC §1.6):
D[i,j] = c(i,j) + min(D[i-1,j], D[i,j-1], D[i-1,j-1]), c = 1[v_i != u_j]. The path is traced
back from (n-1, m-1) to (0, 0); ties prefer the diagonal, then the step in ``a``, so the path
is deterministic. ``dtw_path`` is one pair at a time (O(n·m) Python); ``dtw_path_batch`` gives
the same paths for many encoded pairs in one compiled call (the substitutions analysis).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np


def dtw_path(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[float, list[tuple[int, int]]]:
    """Return ``(raw_cost, path)``: the minimal DTW cost and its monotone alignment path.

    ``path`` is a list of index pairs ``(i, j)`` from ``(0, 0)`` to ``(len(a)-1, len(b)-1)``;
    the raw cost is the number of mismatched pairs on it. If either sequence is empty the path
    is empty and the cost is the other's length (every step unmatched; the normalised metric's
    edge cases — both empty 0, one empty 1 — live in ``memlens.metrics.dtw``).

    >>> dtw_path("abc", "abc")
    (0.0, [(0, 0), (1, 1), (2, 2)])
    >>> dtw_path("aab", "ab")
    (0.0, [(0, 0), (1, 0), (2, 1)])
    >>> dtw_path("ab", "ba")
    (2.0, [(0, 0), (1, 1)])
    >>> dtw_path("abcd", "acd")
    (1.0, [(0, 0), (1, 0), (2, 1), (3, 2)])
    >>> dtw_path([], ["x"])
    (1.0, [])
    """
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        return float(max(n, m)), []
    inf = float("inf")
    table = [[inf] * (m + 1) for _ in range(n + 1)]
    table[0][0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = 0.0 if a[i - 1] == b[j - 1] else 1.0
            table[i][j] = cost + min(table[i - 1][j - 1], table[i - 1][j], table[i][j - 1])
    path = [(n - 1, m - 1)]
    i, j = n, m
    while (i, j) != (1, 1):
        moves = [(i - 1, j - 1), (i - 1, j), (i, j - 1)]
        i, j = min((move for move in moves if move[0] >= 1 and move[1] >= 1),
                   key=lambda move: table[move[0]][move[1]])
        path.append((i - 1, j - 1))
    path.reverse()
    return table[n][m], path


@dataclass(frozen=True)
class PathBatch:
    """The DTW paths of many pairs, flat: pair ``k``'s path is rows
    ``starts[k] : starts[k] + lengths[k]`` of ``i`` (positions in a) and ``j`` (positions in b)."""

    pair: np.ndarray
    """Pair index of every path cell (int64)."""
    i: np.ndarray
    j: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray


def dtw_path_batch(a, b) -> PathBatch:
    """The :func:`dtw_path` of every pair ``(a[k], b[k])`` of two encoded batches, in one
    compiled call (same cost, same tie rule). ``a`` and ``b`` are ``EncodedBatch`` es or
    ``(codes, lengths)`` tuples over one alphabet (:func:`memlens.metrics.encode_pairs`).
    A pair with an empty side has an empty path.

    >>> from memlens.metrics import encode_pairs
    >>> paths = dtw_path_batch(*encode_pairs(["aab", "ab", ""], ["ab", "ba", "x"]))
    >>> paths.lengths.tolist(), list(zip(paths.i.tolist(), paths.j.tolist()))[:3]
    ([3, 2, 0], [(0, 0), (1, 0), (2, 1)])
    """
    from memlens.metrics._path_kernels import fill_paths  # lazy: pulls numba
    from memlens.metrics.batch import _pair_arrays  # lazy: pulls numba

    codes_a, len_a, codes_b, len_b, _ = _pair_arrays(a, b)
    slots = np.where((len_a > 0) & (len_b > 0), len_a + len_b - 1, 0)
    offsets = np.zeros(len(slots) + 1, np.int64)
    np.cumsum(slots, out=offsets[1:])
    table = np.empty((codes_a.shape[1] + 1, codes_b.shape[1] + 1), np.int64)
    out_i = np.empty(int(offsets[-1]), np.int64)
    out_j = np.empty(int(offsets[-1]), np.int64)
    lengths = np.zeros(len(slots), np.int64)
    fill_paths(codes_a, len_a, codes_b, len_b, offsets, table, out_i, out_j, lengths)
    pair = np.repeat(np.arange(len(slots), dtype=np.int64), slots)
    keep = (np.arange(int(offsets[-1])) - offsets[:-1][pair]) < lengths[pair]
    starts = np.zeros(len(slots), np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return PathBatch(pair=pair[keep], i=out_i[keep], j=out_j[keep], starts=starts,
                     lengths=lengths)
