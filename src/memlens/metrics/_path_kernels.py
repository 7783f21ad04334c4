"""Compiled DTW alignment paths for many pairs (numba): the substitutions analysis needs them.

Kept apart from ``_kernels`` so the distance kernels stay as they are (O(m) rows, no table):
a path needs the whole n × m cost table for the trace-back. Same recursion, 0/1 cost and
tie rule as :func:`memlens.metrics.path.dtw_path` (diagonal first, then the step in ``a``).
"""

from __future__ import annotations

from memlens.metrics._jit import kernel


@kernel
def _fill_table(a, n, b, m, table):
    """table[i, j] = DTW_raw of a[:i], b[:j] (0/1 cost); table[0, 0] = 0, borders = big."""
    big = 1 << 40
    for j in range(m + 1):
        table[0, j] = big
    for i in range(1, n + 1):
        table[i, 0] = big
    table[0, 0] = 0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            best = table[i - 1, j - 1]
            if table[i - 1, j] < best:
                best = table[i - 1, j]
            if table[i, j - 1] < best:
                best = table[i, j - 1]
            table[i, j] = best + (1 if a[i - 1] != b[j - 1] else 0)


@kernel
def _back(table, i, j):
    """The predecessor of cell (i, j) on the path: min of diagonal, up, left (that order)."""
    best_i, best_j = i - 1, j - 1
    best = table[i - 1, j - 1] if i > 1 and j > 1 else 1 << 41
    if i > 1 and table[i - 1, j] < best:
        best_i, best_j, best = i - 1, j, table[i - 1, j]
    if j > 1 and table[i, j - 1] < best:
        best_i, best_j = i, j - 1
    return best_i, best_j


@kernel
def fill_paths(codes_a, len_a, codes_b, len_b, offsets, table, out_i, out_j, lengths):
    """Write pair k's path (positions in a and b, from (0, 0)) at ``out[offsets[k]:]`` and its
    length into ``lengths[k]``; ``offsets`` leaves n + m − 1 slots (the longest path) per pair."""
    for k in range(len_a.shape[0]):
        n, m = len_a[k], len_b[k]
        if n == 0 or m == 0:
            lengths[k] = 0
            continue
        _fill_table(codes_a[k], n, codes_b[k], m, table)
        i, j, steps = n, m, 1
        while i != 1 or j != 1:  # count first, then write forwards from offsets[k]
            i, j = _back(table, i, j)
            steps += 1
        lengths[k] = steps
        i, j, pos = n, m, offsets[k] + steps - 1
        out_i[pos], out_j[pos] = n - 1, m - 1
        while i != 1 or j != 1:
            i, j = _back(table, i, j)
            pos -= 1
            out_i[pos], out_j[pos] = i - 1, j - 1
