"""Drift metrics for one pair of symbol sequences (SPEC §1.6, paper §2.4 and App. F).

Each function takes two sequences of hashable symbols (lists, tuples, numpy arrays; a ``str`` is
the sequence of its characters) and returns a float (``edit_distance``: an int). Edge cases, for
every normalised score: both sequences empty → 0.0, exactly one empty → 1.0. The same compiled
kernels serve the batch forms in :mod:`memlens.metrics.batch`, so pair and batch results agree
(exactly for DTW and edit distance; to floating-point rounding for the Jensen–Shannon term).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from memlens.errors import MemlensError
from memlens.metrics import _kernels
from memlens.metrics.encoding import symbol_sequence
from memlens.metrics.geometry import symbol_cost_matrix


def _encode_pair(a: object, b: object) -> tuple[np.ndarray, np.ndarray, tuple[Hashable, ...]]:
    symbols_a = symbol_sequence(a, "a")
    symbols_b = symbol_sequence(b, "b")
    index: dict[Hashable, int] = {}
    for symbol in symbols_a + symbols_b:
        index.setdefault(symbol, len(index))
    codes_a = np.fromiter((index[s] for s in symbols_a), dtype=np.int32, count=len(symbols_a))
    codes_b = np.fromiter((index[s] for s in symbols_b), dtype=np.int32, count=len(symbols_b))
    return codes_a, codes_b, tuple(index)


def check_alpha(alpha: object) -> float:
    """Validate the SRI weight ``alpha`` (a number in [0, 1])."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating, np.integer)):
        raise MemlensError(f"alpha must be a number in [0, 1], got {alpha!r}")
    value = float(alpha)
    if not 0.0 <= value <= 1.0:
        raise MemlensError(f"alpha must be a number in [0, 1], got {alpha!r}")
    return value


def dtw_raw(a: Sequence[Hashable], b: Sequence[Hashable],
            cost: Mapping[Hashable, object] | None = None) -> float:
    """Raw DTW alignment cost: the cheapest monotone path from (1, 1) to (n, m).

    Default cost ``1[v ≠ u]``; with ``cost`` (a mapping symbol → embedding vector) the cost is
    the Euclidean distance of the embeddings. Both empty → 0.0; exactly one empty has no
    alignment path and is given ``max(n, m)`` (every symbol unmatched at cost 1), so that
    ``dtw = dtw_raw / max(n, m) = 1``.

    >>> dtw_raw("abc", "abbc")
    0.0
    >>> dtw_raw("abc", "xbc")
    1.0
    >>> dtw_raw(["a"], ["b"], cost={"a": [0, 0], "b": [3, 4]})
    5.0
    """
    codes_a, codes_b, alphabet = _encode_pair(a, b)
    return _dtw_raw_codes(codes_a, codes_b, alphabet, cost)


def _dtw_raw_codes(codes_a: np.ndarray, codes_b: np.ndarray, alphabet: tuple[Hashable, ...],
                   cost: Mapping[Hashable, object] | None) -> float:
    n, m = len(codes_a), len(codes_b)
    if cost is not None:
        matrix = symbol_cost_matrix(cost, alphabet)  # validates the mapping even for empty inputs
    if n == 0 or m == 0:
        return float(max(n, m))
    if cost is None:
        row = np.empty(m + 1, np.int64)
        return float(_kernels.dtw01_raw_pair(codes_a, n, codes_b, m, row))
    row = np.empty(m + 1, np.float64)
    return float(_kernels.dtw_cost_raw_pair(codes_a, n, codes_b, m, matrix, row))


def dtw(a: Sequence[Hashable], b: Sequence[Hashable],
        cost: Mapping[Hashable, object] | None = None) -> float:
    """Normalised DTW drift ``DTW_raw / max(n, m)``; in [0, 1] under the default 0/1 cost.

    With a geometry-aware ``cost`` mapping the same normalisation is used; the score then lies in
    ``[0, largest embedding distance]``. Both empty → 0.0, exactly one empty → 1.0.

    >>> dtw(["A", "B", "C"], ["A", "C", "C", "D"])
    0.5
    >>> dtw([], []), dtw(["A"], [])
    (0.0, 1.0)
    """
    codes_a, codes_b, alphabet = _encode_pair(a, b)
    raw = _dtw_raw_codes(codes_a, codes_b, alphabet, cost)
    n, m = len(codes_a), len(codes_b)
    if n == 0 and m == 0:
        return 0.0
    if n == 0 or m == 0:
        return 1.0
    return raw / max(n, m)


def edit_distance(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Levenshtein distance: unit-cost insertions, deletions and substitutions.

    >>> edit_distance("kitten", "sitting")
    3
    >>> edit_distance([1, 2, 3], [])
    3
    """
    return _edit_distance_codes(*_encode_pair(a, b))


def _edit_distance_codes(codes_a: np.ndarray, codes_b: np.ndarray,
                         alphabet: tuple[Hashable, ...]) -> int:
    peq = np.zeros(max(len(alphabet), 1), np.uint64)
    row = np.empty(max(len(codes_a), len(codes_b)) + 1, np.int64)
    return int(_kernels.levenshtein_pair(codes_a, len(codes_a), codes_b, len(codes_b), peq, row))


def seq_distance(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Normalised edit distance ``d_seq = ed / max(n, m)`` in [0, 1]; both empty → 0.0.

    >>> seq_distance("kitten", "sitting")
    0.42857142857142855
    """
    codes_a, codes_b, alphabet = _encode_pair(a, b)
    longest = max(len(codes_a), len(codes_b))
    return _edit_distance_codes(codes_a, codes_b, alphabet) / longest if longest else 0.0


def js_distance(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Jensen–Shannon distance of the symbol histograms, ``d_dist = sqrt(JSD / ln 2)`` in [0, 1].

    JSD uses natural logarithms; dividing by ln 2 maps it to [0, 1] (disjoint histograms → 1).
    Order is ignored. Both empty → 0.0, exactly one empty → 1.0.

    >>> js_distance("aab", "aba"), js_distance("ab", "cd")
    (0.0, 1.0)
    >>> round(js_distance("a", "ab"), 6)  # JSD = 1.5·ln 2 − 0.75·ln 3
    0.557923
    """
    codes_a, codes_b, alphabet = _encode_pair(a, b)
    size = max(len(alphabet), 1)
    count_a, count_b = np.zeros(size, np.int64), np.zeros(size, np.int64)
    table = _kernels.log_table(len(codes_a), len(codes_b))  # as the batch kernel does
    return float(_kernels.js_distance_pair(codes_a, len(codes_a), codes_b, len(codes_b),
                                           count_a, count_b, table))


def sri(a: Sequence[Hashable], b: Sequence[Hashable], alpha: float = 0.5) -> float:
    """Sequence Recurrence Index drift ``alpha·d_seq + (1 − alpha)·d_dist`` in [0, 1] (App. F).

    The robustness index is ``1 − sri``. Both empty → 0.0, exactly one empty → 1.0.

    >>> sri("ab", "ba")  # d_seq = 2/2, d_dist = 0
    0.5
    >>> sri("ab", "ba", alpha=0.0)
    0.0
    """
    weight = check_alpha(alpha)
    return weight * seq_distance(a, b) + (1.0 - weight) * js_distance(a, b)
