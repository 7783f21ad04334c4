"""dtw_path_batch gives exactly dtw_path's paths (the reference), for every pair."""

import numpy as np

from memlens.metrics import encode_pairs
from memlens.metrics.path import dtw_path, dtw_path_batch


def test_batch_paths_equal_the_pairwise_reference():
    rng = np.random.default_rng(0)
    a = [list(rng.integers(0, 4, size=rng.integers(0, 9))) for _ in range(500)]
    b = [list(rng.integers(0, 4, size=rng.integers(0, 9))) for _ in range(500)]
    paths = dtw_path_batch(*encode_pairs(a, b))
    for k in range(500):
        start, length = paths.starts[k], paths.lengths[k]
        got = list(zip(paths.i[start:start + length].tolist(),
                       paths.j[start:start + length].tolist(), strict=True))
        assert got == dtw_path(a[k], b[k])[1]
        assert (paths.pair[start:start + length] == k).all()
