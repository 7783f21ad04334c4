"""Compact letter display: textbook examples and the defining property on random inputs."""

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from memlens.stats.letters import compact_letters


def test_textbook_examples():
    # Only B–C differ: A shares a letter with each (multcompView's documented output).
    assert compact_letters(["A", "B", "C"], [("B", "C")]) == {"A": "ab", "B": "a", "C": "b"}
    # A staircase of means (Piepho 2004's overlapping groups): a, ab, bc, c.
    assert compact_letters(["A", "B", "C", "D"], [("A", "C"), ("A", "D"), ("B", "D")]) == {
        "A": "a", "B": "ab", "C": "bc", "D": "c"}
    assert compact_letters(["x", "y"], []) == {"x": "a", "y": "a"}
    assert compact_letters(["x", "y"], [("y", "x")]) == {"x": "a", "y": "b"}
    assert compact_letters([], []) == {}


def test_many_groups_get_more_than_26_letters():
    names = [f"g{i}" for i in range(30)]
    letters = compact_letters(names, list(combinations(names, 2)))
    assert len(set(letters.values())) == 30
    assert letters["g0"] == "a" and letters["g26"] == "A"


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 7), data=st.data())
def test_significant_pairs_share_no_letter_and_others_share_one(n, data):
    names = [f"c{i}" for i in range(n)]
    pairs = list(combinations(names, 2))
    significant = set(data.draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else [])
    letters = compact_letters(names, significant)
    for a, b in pairs:
        shared = set(letters[a]) & set(letters[b])
        assert (not shared) if (a, b) in significant else bool(shared)
