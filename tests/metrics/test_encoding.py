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


def _first_seen_codes(sequences):
    """Reference encoding by hand: codes in order of first appearance, rows padded with -1."""
    alphabet = []
    for symbol in (symbol for sequence in sequences for symbol in sequence):
        if symbol not in alphabet:
            alphabet.append(symbol)
    width = max(map(len, sequences), default=0)
    return [[alphabet.index(s) for s in seq] + [-1] * (width - len(seq)) for seq in sequences], alphabet


def test_encode_matches_a_hand_reference_on_label_lists():
    rng = np.random.default_rng(3)
    symbols = [f"value_{i}" for i in range(30)]
    sequences = [[symbols[k] for k in rng.integers(0, 30, rng.integers(0, 9))] for _ in range(500)]
    codes, alphabet = _first_seen_codes(sequences)
    batch = encode(sequences)
    assert batch.codes.tolist() == codes and list(batch.alphabet) == alphabet
    assert batch.lengths.tolist() == [len(seq) for seq in sequences]


def test_mixed_sequence_types_encode_alike():
    class Row(list):
        pass

    batch = encode([["a", "b"], ("b", "a"), "ab", Row(["b"]), range(2), np.array([1, 0]), b"a"])
    assert batch.alphabet == ("a", "b", 0, 1, 97)
    assert batch.codes.tolist() == [[0, 1], [1, 0], [0, 1], [1, -1], [2, 3], [3, 2], [4, -1]]


@pytest.mark.parametrize("item", [None, {"a"}, {"a": 1}, np.array(5), iter("ab")])
def test_bad_item_after_many_good_rows_names_its_row(item):
    with pytest.raises(MemlensError, match=r"sequences\[300\]: expected a sequence"):
        encode([["a"]] * 150 + ["ab"] * 150 + [item] + [("b",)] * 10)


def test_first_unknown_symbol_is_named_with_a_fixed_alphabet():
    with pytest.raises(MemlensError, match=r"sequences\[200\]: symbol 'z' at position 1"):
        encode([["a", "b"]] * 200 + [("a", "z")] + ["zz"], alphabet=["a", "b"])
