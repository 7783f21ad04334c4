"""Compiled kernels behind every metric: numba, int32 codes, O(m) rolling rows, no allocation per pair.

Every kernel works on one pair ``(a[:n], b[:m])`` of integer-coded sequences; the ``*_batch`` loops
run them over padded ``N × L`` arrays with a length vector and write into a preallocated output.
All kernels are ``nogil``, so callers may run batches from several threads. Edge cases follow SPEC
§1.6: both sequences empty → 0, exactly one empty → 1 (for the normalised scores).
"""

from __future__ import annotations

import math

import numpy as np

from memlens.metrics._jit import kernel

_BIG = 1 << 40  # "infinity" for integer DTW rows; far above any reachable cost
_LN2 = math.log(2.0)
_SMALL_TABLE = 64  # n·m at or below which the DP beats bit-parallel setup (benchmarks/)


@kernel
def dtw01_raw_pair(a, n, b, m, row):
    """DTW_raw under the 0/1 cost; ``row`` is int64 scratch of length ≥ m + 1. Needs n, m ≥ 1."""
    row[0] = 0
    for j in range(1, m + 1):
        row[j] = _BIG
    for i in range(n):
        diag = row[0]
        row[0] = _BIG
        symbol = a[i]
        left = _BIG
        for j in range(1, m + 1):
            up = row[j]
            best = diag if diag < up else up
            if left < best:
                best = left
            left = best + (1 if symbol != b[j - 1] else 0)
            row[j] = left
            diag = up
    return row[m]


@kernel
def dtw_cost_raw_pair(a, n, b, m, cost, row):
    """DTW_raw with a symbol cost matrix ``cost[a_i, b_j]``; ``row`` is float64 scratch ≥ m + 1."""
    row[0] = 0.0
    for j in range(1, m + 1):
        row[j] = np.inf
    for i in range(n):
        diag = row[0]
        row[0] = np.inf
        cost_row = cost[a[i]]
        left = np.inf
        for j in range(1, m + 1):
            up = row[j]
            best = diag if diag < up else up
            if left < best:
                best = left
            left = best + cost_row[b[j - 1]]
            row[j] = left
            diag = up
    return row[m]


@kernel
def levenshtein_dp_pair(a, n, b, m, row):
    """Levenshtein distance by the classic DP with one int64 row of length ≥ m + 1."""
    for j in range(m + 1):
        row[j] = j
    for i in range(n):
        diag = row[0]
        row[0] = i + 1
        symbol = a[i]
        left = i + 1
        for j in range(1, m + 1):
            up = row[j]
            best = diag + (1 if symbol != b[j - 1] else 0)
            if up + 1 < best:
                best = up + 1
            if left + 1 < best:
                best = left + 1
            row[j] = best
            left = best
            diag = up
    return row[m]


@kernel
def levenshtein_bits_pair(pattern, p, text, t, peq):
    """Levenshtein distance by Myers/Hyyrö bit-parallelism; needs 1 ≤ p ≤ 64.

    ``peq`` is uint64 scratch indexed by symbol code, all zero on entry and left zero on exit.
    """
    one = np.uint64(1)
    zero = np.uint64(0)
    for i in range(p):
        peq[pattern[i]] |= one << np.uint64(i)
    last = one << np.uint64(p - 1)
    pv = ~zero
    mv = zero
    score = p
    for j in range(t):
        eq = peq[text[j]]
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | ~(xh | pv)
        mh = pv & xh
        if (ph & last) != zero:
            score += 1
        elif (mh & last) != zero:
            score -= 1
        ph = (ph << one) | one
        mh = mh << one
        pv = mh | ~(xv | ph)
        mv = ph & xv
    for i in range(p):
        peq[pattern[i]] = zero
    return score


@kernel
def levenshtein_pair(a, n, b, m, peq, row):
    """Levenshtein distance: DP for tiny tables, bit-parallel when one side fits in 64 symbols."""
    if n == 0:
        return m
    if m == 0:
        return n
    if n * m <= _SMALL_TABLE:  # tiny tables: the plain DP has less set-up than the bit-vectors
        return levenshtein_dp_pair(a, n, b, m, row)
    if n <= 64:  # no swap to the shorter side: a predictable branch is faster for short inputs
        return levenshtein_bits_pair(a, n, b, m, peq)
    if m <= 64:
        return levenshtein_bits_pair(b, m, a, n, peq)
    return levenshtein_dp_pair(a, n, b, m, row)


_LOG_TABLE_LIMIT = 1 << 17  # longest table of integer logs worth building (1 MiB of float64)


@kernel
def log_table(width_a, width_b):
    """``table[k] = log(k)`` for k ≤ 2·width_a·width_b (empty when that is too large).

    The JS kernel's log arguments are integers ``2·c_a·m``, ``2·c_b·n`` and ``c_a·m + c_b·n``,
    so for short sequences one lookup replaces each ``log`` call.
    """
    size = 2 * width_a * width_b + 1
    if size > _LOG_TABLE_LIMIT:
        return np.empty(0, np.float64)
    table = np.empty(size, np.float64)
    table[0] = -np.inf
    for k in range(1, size):
        table[k] = math.log(k)
    return table


@kernel
def _shared_symbol_term(count_a, n, count_b, m, table):
    """p·log(p/mix) + q·log(q/mix) for a symbol with counts in both sequences, mix = (p + q)/2."""
    x = count_a * m  # p / mix = 2x / (x + y) exactly, in integers
    y = count_b * n
    if table.shape[0] > 0:
        log_total = table[x + y]
        return (count_a / n) * (table[2 * x] - log_total) + (count_b / m) * (table[2 * y] - log_total)
    return (count_a / n) * math.log(2.0 * x / (x + y)) + (count_b / m) * math.log(2.0 * y / (x + y))


@kernel
def js_distance_pair(a, n, b, m, count_a, count_b, table):
    """Jensen–Shannon distance sqrt(JSD / ln 2) of the two symbol histograms, in [0, 1].

    ``count_a`` / ``count_b`` are int64 scratch indexed by symbol code, zero on entry and exit;
    ``table`` is :func:`log_table` for widths ≥ (n, m), or empty to call ``log``. A symbol seen
    in one sequence only contributes p·log(p / (p/2)) = p·ln 2; those shares are summed first.
    """
    if n == 0 and m == 0:
        return 0.0
    if n == 0 or m == 0:
        return 1.0
    for i in range(n):
        count_a[a[i]] += 1
    for j in range(m):
        count_b[b[j]] += 1
    shared = 0.0
    exclusive = 0.0  # total probability mass on symbols seen in one sequence only
    for i in range(n):  # each distinct symbol of a once; clears count_a as it goes
        symbol = a[i]
        if count_a[symbol] > 0:
            if count_b[symbol] > 0:
                shared += _shared_symbol_term(count_a[symbol], n, count_b[symbol], m, table)
                count_b[symbol] = -1  # done: skipped by the b pass
            else:
                exclusive += count_a[symbol] / n
            count_a[symbol] = 0
    for j in range(m):  # symbols only in b; clears count_b as it goes
        symbol = b[j]
        if count_b[symbol] > 0:
            exclusive += count_b[symbol] / m
        count_b[symbol] = 0
    jsd = 0.5 * (shared + exclusive * _LN2)
    if jsd <= 0.0:
        return 0.0
    distance = math.sqrt(jsd / _LN2)
    return distance if distance < 1.0 else 1.0


@kernel
def _normalised(raw, n, m):
    if n == 0 and m == 0:
        return 0.0
    if n == 0 or m == 0:
        return 1.0
    return raw / max(n, m)


@kernel
def dtw01_batch(codes_a, len_a, codes_b, len_b, raw, out):
    """Fill ``out[k]`` with DTW (0/1 cost), normalised by max(n, m) unless ``raw``."""
    row = np.empty(codes_b.shape[1] + 1, np.int64)
    for k in range(codes_a.shape[0]):
        n, m = len_a[k], len_b[k]
        if n == 0 or m == 0:
            value = float(max(n, m)) if raw else _normalised(0.0, n, m)
        else:
            value = dtw01_raw_pair(codes_a[k], n, codes_b[k], m, row)
            if not raw:
                value = value / max(n, m)
        out[k] = value


@kernel
def dtw_cost_batch(codes_a, len_a, codes_b, len_b, cost, raw, out):
    """Fill ``out[k]`` with geometry-aware DTW using ``cost[symbol_a, symbol_b]``."""
    row = np.empty(codes_b.shape[1] + 1, np.float64)
    for k in range(codes_a.shape[0]):
        n, m = len_a[k], len_b[k]
        if n == 0 or m == 0:
            value = float(max(n, m)) if raw else _normalised(0.0, n, m)
        else:
            value = dtw_cost_raw_pair(codes_a[k], n, codes_b[k], m, cost, row)
            if not raw:
                value = value / max(n, m)
        out[k] = value


@kernel
def edit_distance_batch(codes_a, len_a, codes_b, len_b, n_symbols, out):
    """Fill ``out[k]`` (int64) with the Levenshtein distance of pair k."""
    peq = np.zeros(n_symbols, np.uint64)
    row = np.empty(max(codes_a.shape[1], codes_b.shape[1]) + 1, np.int64)
    for k in range(codes_a.shape[0]):
        out[k] = levenshtein_pair(codes_a[k], len_a[k], codes_b[k], len_b[k], peq, row)


@kernel
def js_distance_batch(codes_a, len_a, codes_b, len_b, n_symbols, out):
    """Fill ``out[k]`` with the Jensen–Shannon distance of pair k's histograms."""
    count_a = np.zeros(n_symbols, np.int64)
    count_b = np.zeros(n_symbols, np.int64)
    table = log_table(codes_a.shape[1], codes_b.shape[1])
    for k in range(codes_a.shape[0]):
        out[k] = js_distance_pair(codes_a[k], len_a[k], codes_b[k], len_b[k], count_a, count_b,
                                  table)


@kernel
def sri_batch(codes_a, len_a, codes_b, len_b, n_symbols, alpha, edits, d_seq, d_dist, out):
    """Fill ``edits`` (int64), ``d_seq``, ``d_dist`` and ``out = alpha·d_seq + (1 − alpha)·d_dist`` for every pair."""
    peq = np.zeros(n_symbols, np.uint64)
    count_a = np.zeros(n_symbols, np.int64)
    count_b = np.zeros(n_symbols, np.int64)
    row = np.empty(max(codes_a.shape[1], codes_b.shape[1]) + 1, np.int64)
    table = log_table(codes_a.shape[1], codes_b.shape[1])
    for k in range(codes_a.shape[0]):
        a, n, b, m = codes_a[k], len_a[k], codes_b[k], len_b[k]
        ed = levenshtein_pair(a, n, b, m, peq, row)
        seq = _normalised(float(ed), n, m)
        dist = js_distance_pair(a, n, b, m, count_a, count_b, table)
        edits[k] = ed
        d_seq[k] = seq
        d_dist[k] = dist
        out[k] = alpha * seq + (1.0 - alpha) * dist


@kernel
def first_bad_row(codes, lengths, n_symbols):
    """Index of the first row with a code outside [0, n_symbols) in its valid part, else -1."""
    for k in range(codes.shape[0]):
        for i in range(lengths[k]):
            code = codes[k, i]
            if code < 0 or code >= n_symbols:
                return k
    return -1
