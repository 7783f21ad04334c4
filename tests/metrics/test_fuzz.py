"""Hypothesis fuzzing of the metric inputs: a valid score or one clear MemlensError, never a traceback."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from memlens.errors import MemlensError
from memlens.metrics import (
    drift_batch,
    dtw,
    dtw_batch,
    dtw_raw,
    edit_distance,
    js_distance,
    lexical_diversity,
    seq_distance,
    sri,
    sri_batch,
)

FUZZ = settings(max_examples=150, deadline=None)

hashable_symbol = st.one_of(st.integers(-3, 3), st.sampled_from("abc"), st.none(), st.booleans(),
                            st.tuples(st.integers(0, 2)), st.floats(allow_nan=False, width=16))
any_symbol = st.one_of(hashable_symbol, st.lists(st.integers(), max_size=2),
                       st.dictionaries(st.text(max_size=1), st.integers(), max_size=1))
any_value = st.one_of(
    st.lists(hashable_symbol, max_size=12),
    st.lists(any_symbol, max_size=6),
    st.text(max_size=12),
    st.none(), st.integers(), st.floats(),
    st.sets(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
UNIT_METRICS = (dtw, seq_distance, js_distance, sri)


@FUZZ
@given(any_value, any_value)
def test_pair_metrics_return_unit_scores_or_clear_errors(a, b):
    for metric in UNIT_METRICS:
        try:
            value = metric(a, b)
        except MemlensError as error:
            assert str(error)
            continue
        assert isinstance(value, float) and 0.0 <= value <= 1.0
    try:
        distance = edit_distance(a, b)
    except MemlensError:
        return
    assert distance <= max(len(a), len(b))


@FUZZ
@given(st.lists(hashable_symbol, max_size=12), st.lists(hashable_symbol, max_size=12))
def test_metric_properties(a, b):
    # symmetry (JS sums its terms in a different order when swapped: equal up to rounding),
    # identity, and DTW_raw never above the edit-distance cost of a path
    for metric in (dtw, seq_distance, js_distance, sri, edit_distance):
        assert math.isclose(metric(a, b), metric(b, a), rel_tol=1e-12, abs_tol=1e-15)
        assert metric(a, a) == 0
    assert dtw_raw(a, b) <= max(edit_distance(a, b), max(len(a), len(b)))


@FUZZ
@given(st.lists(st.lists(hashable_symbol, max_size=8), max_size=6),
       st.lists(st.lists(hashable_symbol, max_size=8), max_size=6),
       st.one_of(st.floats(-1, 2), st.just(math.nan), st.text(max_size=2)))
def test_drift_batch_scores_or_clear_errors(seqs_a, seqs_b, alpha):
    try:
        scores = drift_batch(seqs_a, seqs_b, alpha=alpha)
    except MemlensError as error:
        assert ("pairs need equal counts" in str(error)) or ("alpha" in str(error))
        return
    assert len(seqs_a) == len(seqs_b)
    for key in ("dtw", "d_seq", "d_dist", "sri"):
        assert np.all((scores[key] >= 0) & (scores[key] <= 1))


@FUZZ
@given(hnp.arrays(st.sampled_from([np.int8, np.int32, np.int64, np.float64]),
                  hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                  elements=st.integers(-2, 5)),
       st.lists(st.integers(-2, 6), max_size=5))
def test_batch_arrays_score_or_clear_errors(codes, lengths):
    lengths = np.array(lengths, dtype=np.int64)
    for metric in (dtw_batch, sri_batch):
        try:
            values = metric((codes, lengths), (codes, lengths))
        except MemlensError as error:
            assert str(error)
            continue
        assert np.all(values == 0)  # every pair is a sequence against itself


@FUZZ
@given(st.one_of(st.text(max_size=40), st.none(), st.integers(), st.lists(st.text(), max_size=2)))
def test_lexical_diversity_scores_or_clear_errors(text):
    try:
        value = lexical_diversity(text)
    except MemlensError:
        assert not isinstance(text, str | None)
        return
    assert 0.0 <= value < 1.0
