"""Drift metrics over symbol sequences: DTW, edit distance, Jensen–Shannon distance, SRI.

Pair forms take two sequences of hashable symbols; batch forms score many pairs of integer-coded
sequences in one compiled (numba) call; ``lexical_diversity`` scores an answer's vocabulary.
See ``docs/metrics.md``.
"""

from memlens.metrics.batch import (
    drift_batch,
    dtw_batch,
    edit_distance_batch,
    js_distance_batch,
    sri_batch,
)
from memlens.metrics.encoding import EncodedBatch, encode, encode_pairs
from memlens.metrics.geometry import symbol_cost_matrix
from memlens.metrics.lexical import lexical_diversity
from memlens.metrics.pairwise import dtw, dtw_raw, edit_distance, js_distance, seq_distance, sri

__all__ = [
    "EncodedBatch",
    "drift_batch",
    "dtw",
    "dtw_batch",
    "dtw_raw",
    "edit_distance",
    "edit_distance_batch",
    "encode",
    "encode_pairs",
    "js_distance",
    "js_distance_batch",
    "lexical_diversity",
    "seq_distance",
    "sri",
    "sri_batch",
    "symbol_cost_matrix",
]
