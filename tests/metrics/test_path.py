"""metrics.path.dtw_path (written for the trajectory viewer) agrees with the compiled dtw_raw."""

from memlens.metrics import dtw_raw
from memlens.metrics.path import dtw_path


def test_dtw_path_cost_equals_dtw_raw(pairs_short):
    for a, b in pairs_short[:300]:
        cost, path = dtw_path(a, b)
        assert cost == dtw_raw(a, b), (a, b)
        if a and b:
            assert sum(a[i] != b[j] for i, j in path) == cost
