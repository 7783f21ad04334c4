"""Pair-form metrics: hand-computed cases, edge cases, and independent references."""

import math

import numpy as np
import pytest
from dtaidistance import dtw_ndim
from rapidfuzz.distance import Levenshtein
from scipy.spatial.distance import jensenshannon

from memlens.errors import MemlensError
from memlens.metrics import dtw, dtw_raw, edit_distance, js_distance, seq_distance, sri


def one_hot(sequence: list[int], size: int) -> np.ndarray:
    matrix = np.zeros((len(sequence), size))
    matrix[np.arange(len(sequence)), sequence] = 1.0
    return matrix


def reference_dtw_raw(a: list[int], b: list[int]) -> float:
    """0/1-cost DTW via dtaidistance: one-hot vectors differ by sqrt(2) exactly when symbols do."""
    size = max(a + b) + 1
    return dtw_ndim.distance(one_hot(a, size), one_hot(b, size), inner_dist="euclidean",
                             use_c=True) / math.sqrt(2)


def reference_js(a: list[int], b: list[int]) -> float:
    size = max(a + b) + 1
    return float(jensenshannon(np.bincount(a, minlength=size), np.bincount(b, minlength=size),
                               base=2))


# --- hand-computed cases -------------------------------------------------------------------

def test_dtw_hand_cases():
    # A B C vs A C C D: best path A-A, B-C, C-C, C-C, C-D -> mismatches B/C and C/D = 2
    assert dtw_raw("ABC", "ACCD") == 2.0
    assert dtw("ABC", "ACCD") == 0.5
    # repeats are absorbed by warping: no cost
    assert dtw_raw("abc", "aabbbc") == 0.0
    # AB vs BA: (1,1) and (n,m) are both on every path and both mismatch
    assert dtw("AB", "BA") == 1.0
    # entirely different symbols: every cell costs 1, shortest path has max(n, m) cells
    assert dtw("aaa", "bb") == 1.0


def test_edit_distance_hand_cases():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance(["A", "B"], ["B", "A"]) == 2
    assert edit_distance("abc", "abc") == 0
    assert seq_distance("kitten", "sitting") == pytest.approx(3 / 7)
    assert isinstance(edit_distance("a", "b"), int)


def test_js_distance_hand_cases():
    # h_a = (1, 0), h_b = (1/2, 1/2): JSD = 1.5 ln 2 - 0.75 ln 3
    expected = math.sqrt((1.5 * math.log(2) - 0.75 * math.log(3)) / math.log(2))
    assert js_distance("a", "ab") == pytest.approx(expected, abs=1e-12)
    assert js_distance("ab", "ba") == 0.0  # same histogram, order ignored
    assert js_distance("aa", "bb") == 1.0  # disjoint support


def test_sri_hand_cases():
    expected_js = math.sqrt((1.5 * math.log(2) - 0.75 * math.log(3)) / math.log(2))
    # "a" vs "ab": ed = 1, max = 2 -> d_seq = 0.5
    assert sri("a", "ab") == pytest.approx(0.5 * 0.5 + 0.5 * expected_js)
    assert sri("a", "ab", alpha=1.0) == 0.5
    assert sri("a", "ab", alpha=0.0) == pytest.approx(expected_js)
    assert sri("ab", "ba") == 0.5


@pytest.mark.parametrize("metric", [dtw, js_distance, seq_distance, sri])
def test_edge_cases(metric):
    assert metric([], []) == 0.0
    assert metric([], ["x"]) == 1.0
    assert metric(("x", "y"), ()) == 1.0


def test_raw_edge_cases():
    assert dtw_raw([], []) == 0.0
    assert dtw_raw([], [1, 2, 3]) == 3.0
    assert edit_distance([], [1, 2, 3]) == 3
    assert edit_distance([], []) == 0


def test_symbols_of_any_hashable_type():
    assert edit_distance([("t", 1), None, 2.5], [("t", 1), 2.5]) == 1
    assert dtw(np.array([1, 2, 2]), [1, 2]) == 0.0
    assert js_distance(["x"], "x") == 0.0  # a str is a sequence of characters


# --- independent references on random pairs ------------------------------------------------

def test_edit_distance_matches_rapidfuzz(pairs_short, pairs_long):
    for a, b in pairs_short[:1500] + pairs_long:
        assert edit_distance(a, b) == Levenshtein.distance(a, b), (a, b)


def test_dtw_matches_dtaidistance(pairs_short):
    for a, b in pairs_short[:1500]:
        if a and b:
            assert dtw_raw(a, b) == pytest.approx(reference_dtw_raw(a, b), abs=1e-9), (a, b)
            assert dtw(a, b) == pytest.approx(reference_dtw_raw(a, b) / max(len(a), len(b)))


def test_js_distance_matches_scipy(pairs_short):
    for a, b in pairs_short[:1500]:
        if a and b:
            assert js_distance(a, b) == pytest.approx(reference_js(a, b), abs=1e-7), (a, b)


# --- bad input --------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [None, 5, 1.5, {"a": 1}, {"a", "b"}])
def test_non_sequence_is_a_clear_error(bad):
    with pytest.raises(MemlensError, match="expected a sequence of hashable symbols"):
        dtw(bad, ["a"])
    with pytest.raises(MemlensError, match="b: expected a sequence"):
        sri(["a"], bad)


def test_unhashable_symbol_names_the_position():
    with pytest.raises(MemlensError, match="position 1 is unhashable"):
        edit_distance(["a", ["b"]], ["a"])
    with pytest.raises(MemlensError, match="position 0 is unhashable"):
        js_distance(["a"], [("t", [1])])


@pytest.mark.parametrize("alpha", [-0.1, 1.5, "0.5", None, True, float("nan")])
def test_bad_alpha(alpha):
    with pytest.raises(MemlensError, match="alpha"):
        sri("ab", "ba", alpha=alpha)


def test_zero_dimensional_array_is_a_clear_error():
    with pytest.raises(MemlensError, match="a: expected a sequence of hashable symbols"):
        dtw(np.array(3), [3])
