"""Geometry-aware DTW: embedding cost against dtaidistance and a brute-force path enumeration."""

import itertools

import numpy as np
import pytest
from dtaidistance import dtw_ndim

from memlens.errors import MemlensError
from memlens.metrics import dtw, dtw_batch, dtw_raw, encode_pairs, symbol_cost_matrix


def brute_force_dtw(a, b, cost):
    """Minimum over every monotone path (steps (1,0), (0,1), (1,1)) from (0,0) to (n-1,m-1)."""
    best = np.inf
    n, m = len(a), len(b)

    def walk(i, j, total):
        nonlocal best
        total += cost(a[i], b[j])
        if (i, j) == (n - 1, m - 1):
            best = min(best, total)
            return
        for di, dj in ((1, 0), (0, 1), (1, 1)):
            if i + di < n and j + dj < m:
                walk(i + di, j + dj, total)

    walk(0, 0, 0.0)
    return best


@pytest.fixture(scope="module")
def embeddings():
    rng = np.random.default_rng(5)
    return {symbol: rng.normal(size=4) for symbol in "abcdef"}


def test_cost_matrix_hand_case():
    cost = symbol_cost_matrix({"a": [0, 0], "b": [3, 4], "c": [0, 1]}, ["a", "b", "c"])
    expected = [[0, 5, 1], [5, 0, np.sqrt(18)], [1, np.sqrt(18), 0]]
    np.testing.assert_allclose(cost, expected, rtol=1e-15)


def test_geometric_dtw_hand_case():
    vectors = {"a": [0.0], "b": [1.0], "c": [3.0]}
    # a b vs c: the only path aligns both to c -> 3 + 2
    assert dtw_raw("ab", "c", cost=vectors) == 5.0
    assert dtw("ab", "c", cost=vectors) == 2.5  # normalised by max(n, m) = 2, may exceed 1


def test_geometric_dtw_matches_dtaidistance_and_brute_force(embeddings):
    rng = np.random.default_rng(6)
    symbols = list(embeddings)

    def distance(u, v):
        return float(np.linalg.norm(embeddings[u] - embeddings[v]))

    for _ in range(300):
        n, m = rng.integers(1, 7, size=2)
        a = [symbols[k] for k in rng.integers(0, 6, n)]
        b = [symbols[k] for k in rng.integers(0, 6, m)]
        reference = dtw_ndim.distance(np.array([embeddings[s] for s in a]),
                                      np.array([embeddings[s] for s in b]),
                                      inner_dist="euclidean", use_c=True)
        assert dtw_raw(a, b, cost=embeddings) == pytest.approx(reference, rel=1e-9)
        if n * m <= 16:
            assert dtw_raw(a, b, cost=embeddings) == pytest.approx(brute_force_dtw(a, b, distance))


def test_geometric_batch_equals_pair_form(embeddings):
    rng = np.random.default_rng(7)
    symbols = list(embeddings)
    seqs_a = [[symbols[k] for k in rng.integers(0, 6, rng.integers(0, 12))] for _ in range(500)]
    seqs_b = [[symbols[k] for k in rng.integers(0, 6, rng.integers(0, 12))] for _ in range(500)]
    a, b = encode_pairs(seqs_a, seqs_b, alphabet=symbols)
    batch = dtw_batch(a, b, symbol_cost_matrix(embeddings, symbols))
    pairs = [dtw(x, y, cost=embeddings) for x, y in zip(seqs_a, seqs_b, strict=True)]
    np.testing.assert_allclose(batch, pairs, rtol=1e-12)


def test_zero_distance_embeddings_equal_zero_dtw():
    same = {s: [1.0, 1.0] for s in "xyz"}
    assert dtw("xyz", "zzy", cost=same) == 0.0


def test_zero_one_embeddings_reproduce_default_cost():
    # one-hot / sqrt(2) embeddings are at distance exactly 1 from each other
    unit = {s: np.eye(3)[k] / np.sqrt(2) for k, s in enumerate("abc")}
    for a, b in itertools.product(["abc", "cab", "aab", "c"], repeat=2):
        assert dtw(a, b, cost=unit) == pytest.approx(dtw(a, b))


def test_bad_cost_inputs():
    with pytest.raises(MemlensError, match="'c' has no embedding"):
        dtw("ab", "c", cost={"a": [0], "b": [1]})
    with pytest.raises(MemlensError, match="has 1 dimensions, others have 2"):
        dtw("ab", "a", cost={"a": [0, 0], "b": [1]})
    with pytest.raises(MemlensError, match="finite"):
        dtw("a", "a", cost={"a": [float("nan")]})
    with pytest.raises(MemlensError, match="mapping"):
        dtw("a", "a", cost=[[0.0]])
    with pytest.raises(MemlensError, match="not a numeric vector"):
        dtw("a", "a", cost={"a": ["x"]})


def test_bad_cost_matrix():
    a, b = encode_pairs(["ab"], ["ba"])
    with pytest.raises(MemlensError, match="square"):
        dtw_batch(a, b, np.zeros((2, 3)))
    with pytest.raises(MemlensError, match=r"outside \[0, 1\)"):
        dtw_batch(a, b, np.zeros((1, 1)))
    with pytest.raises(MemlensError, match="non-negative"):
        dtw_batch(a, b, -np.ones((2, 2)))
