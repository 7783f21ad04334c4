"""The optimal DTW alignment path between two symbol sequences (for the trajectory viewer).

Same recursion and 0/1 cost as ``memlens.metrics.dtw_raw`` (SPEC §1.6):
D[i,j] = c(i,j) + min(D[i-1,j], D[i,j-1], D[i-1,j-1]), c = 1[v_i != u_j]. The path is traced
back from (n-1, m-1) to (0, 0); ties prefer the diagonal, then the step in ``a``, so the path
is deterministic. Meant for one pair at a time (O(n·m) Python), not for batches.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence


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
