"""Encoding symbol sequences into padded integer codes."""

import numpy as np
import pytest

from memlens.errors import MemlensError
from memlens.metrics import encode, encode_pairs


def test_encode_first_seen_order_and_padding():
    batch = encode([["b", "a"], [], ["c", "b", "b"]])
    assert batch.alphabet == ("b", "a", "c")
    assert batch.codes.dtype == np.int32
    assert batch.codes.tolist() == [[0, 1, -1], [-1, -1, -1], [2, 0, 0]]
    assert batch.lengths.tolist() == [2, 0, 3]
    assert len(batch) == 3
    assert batch.decode(2) == ["c", "b", "b"]


def test_encode_with_alphabet():
    batch = encode(["ba", "c"], alphabet="abc")
    assert batch.codes.tolist() == [[1, 0], [2, -1]]
    assert batch.alphabet == ("a", "b", "c")


def test_encode_pairs_shares_the_alphabet():
    a, b = encode_pairs([["x"], ["y", "x"]], [["z"], ["x"]])
    assert a.alphabet == b.alphabet == ("x", "y", "z")
    assert a.codes.tolist() == [[0, -1], [1, 0]]
    assert b.codes.tolist() == [[2], [0]]


def test_all_empty_sequences():
    batch = encode([[], []])
    assert batch.codes.shape == (2, 0)


def test_unknown_symbol_names_row_and_position():
    with pytest.raises(MemlensError, match=r"sequences\[1\]: symbol 'z' at position 2"):
        encode(["ab", "abz"], alphabet="ab")


def test_unhashable_symbol_names_row_and_position():
    with pytest.raises(MemlensError, match=r"seqs_b\[0\]: symbol at position 1 is unhashable"):
        encode_pairs([["a"]], [["a", {"k": 1}]])


@pytest.mark.parametrize("bad", [None, "abc", 3, {"a": [1]}])
def test_not_a_list_of_sequences(bad):
    with pytest.raises(MemlensError, match="expected a list of sequences"):
        encode(bad)


@pytest.mark.parametrize("item", [None, 7, {"a"}, {"a": 1}])
def test_bad_item(item):
    with pytest.raises(MemlensError, match=r"sequences\[1\]: expected a sequence"):
        encode([["a"], item])


def test_repeated_alphabet():
    with pytest.raises(MemlensError, match="repeated"):
        encode(["a"], alphabet="aa")


def test_numpy_rows_and_scalars():
    batch = encode(np.array([[3, 1], [1, 1]]))
    assert batch.codes.tolist() == [[0, 1], [1, 1]]
    with pytest.raises(MemlensError, match=r"sequences\[0\]: expected a sequence"):
        encode([np.array(5)])
    with pytest.raises(MemlensError, match=r"sequences\[0\]: expected a sequence"):
        encode([np.zeros((2, 2))])
