"""dtw_path: the path's cost equals the project's DTW (checked against dtaidistance there)."""

import numpy as np

from memlens.metrics import dtw_raw
from memlens.metrics.path import dtw_path


def test_hand_computed():
    # a b c vs a c: b has to align with a or c -> one mismatch
    cost, path = dtw_path(["a", "b", "c"], ["a", "c"])
    assert cost == 1.0
    assert path[0] == (0, 0) and path[-1] == (2, 1)


def test_random_pairs_match_dtw_raw_and_path_is_valid():
    rng = np.random.default_rng(0)
    for _ in range(400):
        a = list(rng.integers(0, 4, size=rng.integers(1, 9)))
        b = list(rng.integers(0, 4, size=rng.integers(1, 9)))
        cost, path = dtw_path(a, b)
        assert cost == dtw_raw(a, b)
        assert cost == sum(a[i] != b[j] for i, j in path)
        assert path[0] == (0, 0) and path[-1] == (len(a) - 1, len(b) - 1)
        for (i0, j0), (i1, j1) in zip(path, path[1:], strict=False):
            assert (i1 - i0, j1 - j0) in {(1, 0), (0, 1), (1, 1)}


def test_empty():
    assert dtw_path([], []) == (0.0, [])
    assert dtw_path(["a", "b"], []) == (2.0, [])
