"""Batch drift metrics: score many pairs of integer-coded sequences in one compiled call.

Inputs are two batches of equal size, each an :class:`~memlens.metrics.encoding.EncodedBatch`
or a ``(codes, lengths)`` tuple (``codes`` an integer ``N × L`` array, padded with -1 after each
row's length). Pair ``k`` is row ``k`` of ``a`` against row ``k`` of ``b``; both must be coded
over one alphabet (see :func:`~memlens.metrics.encoding.encode_pairs`). The kernels release the
GIL, so large batches may be split across threads by the caller.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from memlens.errors import MemlensError
from memlens.metrics import _kernels
from memlens.metrics.encoding import EncodedBatch, as_arrays, check_codes, encode_pairs, n_symbols
from memlens.metrics.geometry import check_cost_matrix
from memlens.metrics.pairwise import check_alpha

Batch = EncodedBatch | tuple[np.ndarray, np.ndarray]


def _pair_arrays(a: Batch, b: Batch, size: int | None = None):
    if isinstance(a, EncodedBatch) and isinstance(b, EncodedBatch):
        shorter, longer = sorted((a.alphabet, b.alphabet), key=len)
        if longer[: len(shorter)] != shorter:
            raise MemlensError(
                "a and b were encoded over different alphabets; encode them together with "
                "memlens.metrics.encode_pairs (or pass the same alphabet to encode)"
            )
    codes_a, len_a = as_arrays(a, "a")
    codes_b, len_b = as_arrays(b, "b")
    if codes_a.shape[0] != codes_b.shape[0]:
        raise MemlensError(
            f"a has {codes_a.shape[0]} sequences but b has {codes_b.shape[0]}; pairs need equal counts"
        )
    size = n_symbols(codes_a, codes_b) if size is None else size
    check_codes(codes_a, len_a, size, "a")
    check_codes(codes_b, len_b, size, "b")
    return codes_a, len_a, codes_b, len_b, size


def dtw_batch(a: Batch, b: Batch, cost_matrix: np.ndarray | None = None, *,
              raw: bool = False) -> np.ndarray:
    """DTW of every pair (float64 array): ``DTW_raw / max(n, m)``, or ``DTW_raw`` if ``raw``.

    Default cost ``1[v ≠ u]``. ``cost_matrix`` (M×M, e.g. from
    :func:`~memlens.metrics.geometry.symbol_cost_matrix`) gives a geometry-aware cost
    ``cost_matrix[v, u]``. Both empty → 0; exactly one empty → 1 (raw: ``max(n, m)``).

    >>> a, b = encode_pairs([["A", "B", "C"], []], [["A", "C", "C", "D"], []])
    >>> dtw_batch(a, b).tolist(), dtw_batch(a, b, raw=True).tolist()
    ([0.5, 0.0], [2.0, 0.0])
    """
    if cost_matrix is None:
        codes_a, len_a, codes_b, len_b, _ = _pair_arrays(a, b)
        out = np.empty(codes_a.shape[0])
        _kernels.dtw01_batch(codes_a, len_a, codes_b, len_b, bool(raw), out)
        return out
    cost = check_cost_matrix(cost_matrix, 0)
    codes_a, len_a, codes_b, len_b, _ = _pair_arrays(a, b, cost.shape[0])
    out = np.empty(codes_a.shape[0])
    _kernels.dtw_cost_batch(codes_a, len_a, codes_b, len_b, cost, bool(raw), out)
    return out


def edit_distance_batch(a: Batch, b: Batch) -> np.ndarray:
    """Levenshtein distance of every pair (int64 array).

    >>> a, b = encode_pairs(["kitten", "ab"], ["sitting", ""])
    >>> edit_distance_batch(a, b).tolist()
    [3, 2]
    """
    codes_a, len_a, codes_b, len_b, size = _pair_arrays(a, b)
    out = np.empty(codes_a.shape[0], np.int64)
    _kernels.edit_distance_batch(codes_a, len_a, codes_b, len_b, size, out)
    return out


def js_distance_batch(a: Batch, b: Batch) -> np.ndarray:
    """Jensen–Shannon distance ``sqrt(JSD / ln 2)`` of every pair's symbol histograms.

    >>> a, b = encode_pairs(["aab", "ab", ""], ["aba", "cd", ""])
    >>> js_distance_batch(a, b).tolist()
    [0.0, 1.0, 0.0]
    """
    codes_a, len_a, codes_b, len_b, size = _pair_arrays(a, b)
    out = np.empty(codes_a.shape[0])
    _kernels.js_distance_batch(codes_a, len_a, codes_b, len_b, size, out)
    return out


def _sri_parts(a: Batch, b: Batch, alpha: float) -> dict[str, np.ndarray]:
    weight = check_alpha(alpha)
    codes_a, len_a, codes_b, len_b, size = _pair_arrays(a, b)
    edits = np.empty(codes_a.shape[0], np.int64)
    d_seq, d_dist, out = (np.empty(codes_a.shape[0]) for _ in range(3))
    _kernels.sri_batch(codes_a, len_a, codes_b, len_b, size, weight, edits, d_seq, d_dist, out)
    return {"edit_distance": edits, "d_seq": d_seq, "d_dist": d_dist, "sri": out}


def sri_batch(a: Batch, b: Batch, alpha: float = 0.5) -> np.ndarray:
    """SRI drift ``alpha·d_seq + (1 − alpha)·d_dist`` of every pair.

    >>> a, b = encode_pairs(["ab", "ab"], ["ba", "ab"])
    >>> sri_batch(a, b).tolist()
    [0.5, 0.0]
    """
    return _sri_parts(a, b, alpha)["sri"]


def drift_batch(seqs_a: Sequence[Sequence[Hashable]], seqs_b: Sequence[Sequence[Hashable]],
                alpha: float = 0.5) -> dict[str, np.ndarray]:
    """Every drift metric for pairs ``(seqs_a[k], seqs_b[k])`` of symbol sequences.

    Accepts plain sequences of hashable symbols (encoded here with one shared alphabet) or two
    already encoded batches. Returns float arrays ``dtw``, ``d_seq``, ``d_dist``, ``sri`` and the
    int array ``edit_distance``.

    >>> scores = drift_batch([["A", "B"], ["A"]], [["B", "A"], ["A"]])
    >>> {key: value.tolist() for key, value in scores.items()}  # doctest: +NORMALIZE_WHITESPACE
    {'dtw': [1.0, 0.0], 'edit_distance': [2, 0], 'd_seq': [1.0, 0.0], 'd_dist': [0.0, 0.0],
     'sri': [0.5, 0.0]}
    """
    if _is_encoded(seqs_a) and _is_encoded(seqs_b):
        a, b = seqs_a, seqs_b
    else:
        a, b = encode_pairs(seqs_a, seqs_b)
    parts = _sri_parts(a, b, alpha)
    return {"dtw": dtw_batch(a, b), **parts}


def _is_encoded(value: object) -> bool:
    if isinstance(value, EncodedBatch):
        return True
    return (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], np.ndarray)
            and value[0].ndim == 2)
