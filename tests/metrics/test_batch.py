"""Batch metrics: equal to the pair forms and to the reference libraries on thousands of pairs."""

import math

import numpy as np
import pytest
from dtaidistance import dtw_ndim
from rapidfuzz.distance import Levenshtein
from scipy.spatial.distance import jensenshannon

from memlens.errors import MemlensError
from memlens.metrics import (
    drift_batch,
    dtw,
    dtw_batch,
    edit_distance_batch,
    encode,
    encode_pairs,
    js_distance_batch,
    seq_distance,
    sri,
    sri_batch,
)


@pytest.fixture(scope="module")
def encoded(pairs_short):
    seqs_a = [a for a, _ in pairs_short]
    seqs_b = [b for _, b in pairs_short]
    return seqs_a, seqs_b, *encode_pairs(seqs_a, seqs_b)


def dtaidistance_dtw01(a, b):
    size = max(a + b) + 1
    eye = np.eye(size)
    return dtw_ndim.distance(eye[a], eye[b], inner_dist="euclidean", use_c=True) / math.sqrt(2)


def test_edit_distance_batch_matches_rapidfuzz(encoded, pairs_long):
    seqs_a, seqs_b, a, b = encoded
    expected = [Levenshtein.distance(x, y) for x, y in zip(seqs_a, seqs_b, strict=True)]
    assert edit_distance_batch(a, b).tolist() == expected
    long_a, long_b = encode_pairs([x for x, _ in pairs_long], [y for _, y in pairs_long])
    assert edit_distance_batch(long_a, long_b).tolist() == [
        Levenshtein.distance(x, y) for x, y in pairs_long]


def test_dtw_batch_matches_dtaidistance(encoded):
    seqs_a, seqs_b, a, b = encoded
    raw = dtw_batch(a, b, raw=True)
    normalised = dtw_batch(a, b)
    for k, (x, y) in enumerate(zip(seqs_a, seqs_b, strict=True)):
        if x and y:
            reference = dtaidistance_dtw01(x, y)
            assert raw[k] == pytest.approx(reference, abs=1e-9)
            assert normalised[k] == pytest.approx(reference / max(len(x), len(y)), abs=1e-12)
        else:
            assert normalised[k] == (0.0 if not x and not y else 1.0)


def test_js_batch_matches_scipy(encoded):
    seqs_a, seqs_b, a, b = encoded
    values = js_distance_batch(a, b)
    for k, (x, y) in enumerate(zip(seqs_a, seqs_b, strict=True)):
        if x and y:
            size = max(x + y) + 1
            reference = jensenshannon(np.bincount(x, minlength=size),
                                      np.bincount(y, minlength=size), base=2)
            assert values[k] == pytest.approx(reference, abs=1e-7)
    assert np.all((values >= 0) & (values <= 1))


def test_drift_batch_equals_pair_forms(encoded):
    seqs_a, seqs_b, _, _ = encoded
    scores = drift_batch(seqs_a, seqs_b, alpha=0.3)
    assert list(scores) == ["dtw", "edit_distance", "d_seq", "d_dist", "sri"]
    assert scores["edit_distance"].dtype == np.int64
    pairs = list(zip(seqs_a, seqs_b, strict=True))[:800]
    np.testing.assert_array_equal(scores["dtw"][:800], [dtw(x, y) for x, y in pairs])
    np.testing.assert_array_equal(scores["d_seq"][:800], [seq_distance(x, y) for x, y in pairs])
    np.testing.assert_allclose(scores["sri"][:800], [sri(x, y, alpha=0.3) for x, y in pairs],
                               rtol=0, atol=1e-15)
    np.testing.assert_allclose(scores["sri"], 0.3 * scores["d_seq"] + 0.7 * scores["d_dist"])


def test_drift_batch_accepts_encoded_batches_and_tuples(encoded):
    seqs_a, seqs_b, a, b = encoded
    from_lists = drift_batch(seqs_a, seqs_b)
    from_batches = drift_batch(a, b)
    from_tuples = drift_batch((a.codes, a.lengths), (b.codes, b.lengths))
    for key in from_lists:
        np.testing.assert_array_equal(from_lists[key], from_batches[key])
        np.testing.assert_array_equal(from_lists[key], from_tuples[key])


def test_sri_batch_hand_case():
    a, b = encode_pairs([["A", "B"], ["A"], [], ["A"]], [["B", "A"], ["A"], [], []])
    assert sri_batch(a, b).tolist() == [0.5, 0.0, 0.0, 1.0]
    assert sri_batch(a, b, alpha=1.0).tolist() == [1.0, 0.0, 0.0, 1.0]


def test_wider_padding_and_other_int_dtypes_give_same_result():
    codes_a = np.array([[0, 1, 2, -1, -1, -1]], dtype=np.int64)
    codes_b = np.array([[2, 1, -1]], dtype=np.int16)
    assert dtw_batch((codes_a, [3]), (codes_b, np.array([2]))).tolist() == [dtw([0, 1, 2], [2, 1])]
    assert edit_distance_batch((codes_a, [3]), (codes_b, [2])).tolist() == [2]


def test_empty_batch():
    a, b = encode_pairs([], [])
    assert all(value.shape == (0,) for value in drift_batch(a, b).values())


def test_mismatched_batch_sizes():
    with pytest.raises(MemlensError, match="seqs_a has 2 sequences but seqs_b has 1"):
        drift_batch([["a"], ["b"]], [["a"]])
    a, b = encode(["ab", "c"]), encode(["ab"], alphabet=["a", "b", "c"])
    with pytest.raises(MemlensError, match="a has 2 sequences but b has 1"):
        dtw_batch(a, b)


def test_different_alphabets_are_refused():
    with pytest.raises(MemlensError, match="different alphabets"):
        sri_batch(encode(["ab"]), encode(["ba"]))


def test_bad_arrays_are_clear_errors():
    good = (np.zeros((2, 3), np.int32), np.array([3, 3]))
    with pytest.raises(MemlensError, match="2-D integer array"):
        dtw_batch((np.zeros((2, 3)), np.array([3, 3])), good)
    with pytest.raises(MemlensError, match="one entry per row"):
        dtw_batch((np.zeros((2, 3), np.int32), np.array([3])), good)
    with pytest.raises(MemlensError, match=r"lengths must lie in \[0, 3\]"):
        sri_batch((np.zeros((2, 3), np.int32), np.array([4, 1])), good)
    with pytest.raises(MemlensError, match="row 1 has a code outside"):
        js_distance_batch((np.array([[0, 1], [0, -1]]), np.array([2, 2])), (good[0][:, :2], [2, 2]))
    with pytest.raises(MemlensError, match="EncodedBatch"):
        edit_distance_batch([[0, 1]], good)


def test_js_without_log_table_for_long_sequences():
    # widths of 300 exceed the integer-log table, so the kernel calls log() instead
    rng = np.random.default_rng(21)
    seqs_a = [rng.integers(0, 9, rng.integers(1, 300)).tolist() for _ in range(40)]
    seqs_b = [rng.integers(0, 9, rng.integers(1, 300)).tolist() for _ in range(40)]
    seqs_a[0] = list(range(9)) * 33  # width 297
    a, b = encode_pairs(seqs_a, seqs_b)
    expected = [jensenshannon(np.bincount(x, minlength=9), np.bincount(y, minlength=9), base=2)
                for x, y in zip(seqs_a, seqs_b, strict=True)]
    np.testing.assert_allclose(js_distance_batch(a, b), expected, rtol=0, atol=1e-7)
    # the table path (short widths) agrees with the log() path on the same pairs
    short_a, short_b = encode_pairs([x[:20] for x in seqs_a], [y[:20] for y in seqs_b])
    trimmed_a = (np.pad(short_a.codes, ((0, 0), (0, 300)), constant_values=-1), short_a.lengths)
    np.testing.assert_allclose(js_distance_batch(short_a, short_b),
                               js_distance_batch(trimmed_a, (short_b.codes, short_b.lengths)),
                               rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("big", [2**22, 2**31 - 1, 2**40])
def test_sparse_or_overflowing_codes_are_refused(big):
    codes = np.array([[0, big]], dtype=np.int64)
    with pytest.raises(MemlensError, match="dense symbol indices"):
        sri_batch((codes, [2]), (codes, [2]))
