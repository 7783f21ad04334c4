"""Compact letter display by the insert-absorb algorithm (Piepho 2004, J. Comput. Graph. Stat.).

Groups that share a letter are not significantly different; every significantly different pair
shares no letter. Start with one letter column holding all groups; for each significant pair
(i, j), every column holding both is split into a copy without i and a copy without j (insert),
then columns contained in another column are dropped (absorb). Columns are lettered in the order
of their first member, so with groups ordered by ascending mean the lowest group gets ``a``.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence


def compact_letters(names: Sequence[str], significant: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Letters for ``names`` (in display order) given the significantly different pairs.

    >>> compact_letters(["A", "B", "C"], [("B", "C")])
    {'A': 'ab', 'B': 'a', 'C': 'b'}
    >>> compact_letters(["A", "B", "C", "D"], [("A", "C"), ("A", "D"), ("B", "D")])
    {'A': 'a', 'B': 'ab', 'C': 'bc', 'D': 'c'}
    """
    position = {name: index for index, name in enumerate(names)}
    columns: list[frozenset[int]] = [frozenset(range(len(names)))] if names else []
    for first, second in significant:
        i, j = position[first], position[second]
        if i == j:
            continue
        inserted: list[frozenset[int]] = []
        for column in columns:
            if i in column and j in column:
                inserted.extend([column - {j}, column - {i}])
            else:
                inserted.append(column)
        columns = _absorb(inserted)
    columns.sort(key=lambda column: sorted(column))
    letters = {name: "" for name in names}
    for label, column in zip(_labels(len(columns)), columns, strict=True):
        for index in sorted(column):
            letters[names[index]] += label
    return letters


def _absorb(columns: list[frozenset[int]]) -> list[frozenset[int]]:
    """Drop empty and duplicate columns and every column that is a subset of another."""
    unique = list(dict.fromkeys(column for column in columns if column))
    return [column for column in unique
            if not any(column < other for other in unique)]


def _labels(count: int) -> list[str]:
    """a…z, then A…Z, then aa, ab, … (enough labels for any number of columns)."""
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    labels: list[str] = []
    width = 1
    while len(labels) < count:
        labels.extend(_words(alphabet, width))
        width += 1
    return labels[:count]


def _words(alphabet: str, width: int) -> list[str]:
    if width == 1:
        return list(alphabet)
    return [prefix + letter for prefix in _words(string.ascii_lowercase, width - 1)
            for letter in string.ascii_lowercase]
