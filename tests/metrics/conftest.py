"""Random symbol-sequence pairs shared by the metric tests (explicit seeds)."""

import numpy as np
import pytest


def random_pairs(seed: int, count: int, max_length: int = 16, alphabet_size: int = 5):
    """``count`` pairs of integer sequences, lengths 0..max_length, small alphabet for many matches."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(count):
        n, m = rng.integers(0, max_length + 1, size=2)
        size = int(rng.integers(1, alphabet_size + 1))
        pairs.append((rng.integers(0, size, n).tolist(), rng.integers(0, size, m).tolist()))
    return pairs


@pytest.fixture(scope="module")
def pairs_short():
    """3,000 pairs of up to 16 symbols."""
    return random_pairs(seed=11, count=3000)


@pytest.fixture(scope="module")
def pairs_long():
    """200 pairs of up to 150 symbols (exercises the > 64-symbol edit-distance path)."""
    return random_pairs(seed=12, count=200, max_length=150, alphabet_size=8)
