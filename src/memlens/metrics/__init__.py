"""Drift metrics over symbol sequences: DTW, edit distance, Jensen–Shannon distance, SRI.

Pair forms take two sequences of hashable symbols; batch forms score many pairs of integer-coded
sequences in one compiled (numba) call; ``lexical_diversity`` scores an answer's vocabulary.
See ``docs/metrics.md``.
"""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "EncodedBatch": "encoding",
    "PathBatch": "path",
    "drift_batch": "batch",
    "dtw": "pairwise",
    "dtw_batch": "batch",
    "dtw_path": "path",
    "dtw_path_batch": "path",
    "dtw_raw": "pairwise",
    "edit_distance": "pairwise",
    "edit_distance_batch": "batch",
    "encode": "encoding",
    "encode_pairs": "encoding",
    "js_distance": "pairwise",
    "js_distance_batch": "batch",
    "lexical_diversity": "lexical",
    "seq_distance": "pairwise",
    "sri": "pairwise",
    "sri_batch": "batch",
    "symbol_cost_matrix": "geometry",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
