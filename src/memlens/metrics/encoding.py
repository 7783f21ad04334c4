"""Integer coding of symbol sequences: the padded arrays every batch metric runs on.

A batch of sequences becomes ``EncodedBatch(codes, lengths, alphabet)``: ``codes`` is an
``int32`` array of shape ``N × L`` (``L`` = the longest sequence) padded with ``-1``, ``lengths``
the ``int64`` length of each row, and ``alphabet`` the tuple of symbols, ``alphabet[code]`` being
the symbol a code stands for. Two batches compared pairwise must share one alphabet; use
:func:`encode_pairs` (or pass the same ``alphabet``) to get that.

A ``str`` is a sequence of its characters, like any other sequence of symbols.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from itertools import chain

import numpy as np

from memlens.errors import MemlensError
from memlens.metrics import _kernels

PAD = -1
MAX_CODE = (1 << 22) - 1  # the kernels keep per-symbol scratch arrays of size max code + 1


@dataclass(frozen=True)
class EncodedBatch:
    """Integer-coded, padded sequences: ``codes`` (int32 N×L, pad -1), ``lengths``, ``alphabet``."""

    codes: np.ndarray
    lengths: np.ndarray
    alphabet: tuple[Hashable, ...]

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    def decode(self, row: int) -> list[Hashable]:
        """Return sequence ``row`` as a list of symbols.

        >>> encode([["a", "b"], ["b"]]).decode(1)
        ['b']
        """
        return [self.alphabet[code] for code in self.codes[row, : self.lengths[row]]]


def _is_hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


class _GrowingIndex(dict):
    """symbol -> code, assigning the next code to each symbol seen for the first time."""

    def __missing__(self, symbol: Hashable) -> int:
        code = self[symbol] = len(self)
        return code


class _FixedIndex(dict):
    """symbol -> code for a given alphabet; unknown symbols raise KeyError."""


def symbol_sequence(value: object, what: str) -> tuple[Hashable, ...]:
    """Validate one sequence of hashable symbols and return it as a tuple.

    Any ordered iterable is accepted (a ``str`` is its characters); sets and mappings are refused
    because their order is not a sequence order.

    >>> symbol_sequence("ab", "a")
    ('a', 'b')
    >>> symbol_sequence(None, "a")
    Traceback (most recent call last):
    ...
    memlens.errors.MemlensError: a: expected a sequence of hashable symbols, got NoneType
    """
    if isinstance(value, (Mapping, Set)) or not isinstance(value, Iterable):
        raise MemlensError(f"{what}: expected a sequence of hashable symbols, got {type(value).__name__}")
    try:
        symbols = tuple(value)
    except TypeError:  # e.g. a 0-d numpy array: iterable type, not iterable value
        raise MemlensError(
            f"{what}: expected a sequence of hashable symbols, got {type(value).__name__}"
        ) from None
    for position, symbol in enumerate(symbols):
        if not _is_hashable(symbol):
            raise MemlensError(
                f"{what}: symbol at position {position} is unhashable ({type(symbol).__name__}); "
                "symbols must be hashable (str, int, tuple, ...)"
            )
    return symbols


_PLAIN_SEQUENCES = frozenset({list, tuple, str})
"""Exact types that pass the item check below without the (slow) ABC isinstance calls."""


def _check_item(item: object, row: int, what: str) -> None:
    is_vector = isinstance(item, np.ndarray) and item.ndim == 1
    if isinstance(item, (Mapping, Set)) or not (isinstance(item, Sequence) or is_vector):
        raise MemlensError(
            f"{what}[{row}]: expected a sequence of hashable symbols, got {type(item).__name__}"
        )


def _check_sequences(sequences: object, what: str) -> list[object]:
    if isinstance(sequences, (str, bytes, Mapping, Set)) or not isinstance(sequences, Iterable):
        raise MemlensError(f"{what}: expected a list of sequences, got {type(sequences).__name__}")
    items = list(sequences)
    if not _PLAIN_SEQUENCES.issuperset(map(type, items)):  # only odd types pay the ABC checks
        for row, item in enumerate(items):
            if type(item) not in _PLAIN_SEQUENCES:
                _check_item(item, row, what)
    return items


def _make_index(alphabet: Iterable[Hashable] | None, what: str) -> dict:
    if alphabet is None:
        return _GrowingIndex()
    symbols = symbol_sequence(alphabet, f"{what}: alphabet")
    index = _FixedIndex((symbol, code) for code, symbol in enumerate(symbols))
    if len(index) != len(symbols):
        raise MemlensError(f"{what}: alphabet has repeated symbols")
    return index


def _locate_bad_symbol(items: list[object], index: dict, what: str) -> MemlensError:
    for row, item in enumerate(items):
        for position, symbol in enumerate(item):
            if not _is_hashable(symbol):
                return MemlensError(
                    f"{what}[{row}]: symbol at position {position} is unhashable "
                    f"({type(symbol).__name__}); symbols must be hashable"
                )
            if symbol not in index:
                return MemlensError(
                    f"{what}[{row}]: symbol {symbol!r} at position {position} is not in the alphabet"
                )
    return MemlensError(f"{what}: could not encode the sequences")


def _encode_into(items: list[object], index: dict, what: str) -> EncodedBatch:
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    try:
        flat = np.fromiter(
            map(index.__getitem__, chain.from_iterable(items)),
            dtype=np.int32,
            count=int(lengths.sum()),
        )
    except (KeyError, TypeError):
        raise _locate_bad_symbol(items, index, what) from None
    width = int(lengths.max()) if len(items) else 0
    codes = np.full((len(items), width), PAD, dtype=np.int32)
    codes[np.arange(width) < lengths[:, None]] = flat
    return EncodedBatch(codes, lengths, tuple(index))


def encode(sequences: Iterable[Sequence[Hashable]], alphabet: Iterable[Hashable] | None = None,
           ) -> EncodedBatch:
    """Encode sequences of hashable symbols as padded int32 codes.

    ``alphabet`` fixes the symbol order (code ``i`` is ``alphabet[i]``) and refuses other symbols;
    without it codes are assigned in order of first appearance.

    >>> batch = encode([["x", "y", "x"], [], ["y"]])
    >>> batch.codes.tolist(), batch.lengths.tolist(), batch.alphabet
    ([[0, 1, 0], [-1, -1, -1], [1, -1, -1]], [3, 0, 1], ('x', 'y'))
    """
    items = _check_sequences(sequences, "sequences")
    return _encode_into(items, _make_index(alphabet, "sequences"), "sequences")


def encode_pairs(seqs_a: Iterable[Sequence[Hashable]], seqs_b: Iterable[Sequence[Hashable]],
                 alphabet: Iterable[Hashable] | None = None) -> tuple[EncodedBatch, EncodedBatch]:
    """Encode two equally long lists of sequences with one shared alphabet, for pairwise scoring.

    >>> a, b = encode_pairs([["p", "q"]], [["q", "r"]])
    >>> a.codes.tolist(), b.codes.tolist(), b.alphabet
    ([[0, 1]], [[1, 2]], ('p', 'q', 'r'))
    """
    items_a = _check_sequences(seqs_a, "seqs_a")
    items_b = _check_sequences(seqs_b, "seqs_b")
    if len(items_a) != len(items_b):
        raise MemlensError(
            f"seqs_a has {len(items_a)} sequences but seqs_b has {len(items_b)}; pairs need equal counts"
        )
    index = _make_index(alphabet, "seqs_a")
    batch_a = _encode_into(items_a, index, "seqs_a")
    batch_b = _encode_into(items_b, index, "seqs_b")
    return EncodedBatch(batch_a.codes, batch_a.lengths, batch_b.alphabet), batch_b


def as_arrays(batch: object, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate an ``EncodedBatch`` or ``(codes, lengths)`` and return C-contiguous int arrays."""
    if isinstance(batch, EncodedBatch):
        codes, lengths = batch.codes, batch.lengths
    elif isinstance(batch, tuple) and len(batch) == 2:
        codes, lengths = batch
    else:
        raise MemlensError(
            f"{what}: expected an EncodedBatch (see memlens.metrics.encode) or a (codes, lengths) "
            f"tuple, got {type(batch).__name__}"
        )
    codes = np.asarray(codes)
    lengths = np.asarray(lengths)
    if codes.ndim != 2 or not np.issubdtype(codes.dtype, np.integer):
        raise MemlensError(f"{what}: codes must be a 2-D integer array, got {codes.dtype} {codes.shape}")
    if lengths.shape != (codes.shape[0],) or not np.issubdtype(lengths.dtype, np.integer):
        raise MemlensError(
            f"{what}: lengths must be a 1-D integer array with one entry per row of codes "
            f"({codes.shape[0]}), got {lengths.dtype} {lengths.shape}"
        )
    if lengths.size and (lengths.min() < 0 or lengths.max() > codes.shape[1]):
        raise MemlensError(f"{what}: lengths must lie in [0, {codes.shape[1]}] (the width of codes)")
    if codes.size and codes.dtype.itemsize > 4 and (codes.min() < PAD or codes.max() > MAX_CODE):
        raise MemlensError(
            f"{what}: codes must lie in [-1, {MAX_CODE}] (dense symbol indices 0..M-1, padding -1); "
            "use memlens.metrics.encode to turn arbitrary symbols into codes"
        )
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    return codes, lengths


def n_symbols(codes_a: np.ndarray, codes_b: np.ndarray) -> int:
    """Size of the code range used by both batches (max code + 1, at least 1)."""
    top = max(int(codes_a.max(initial=0)), int(codes_b.max(initial=0)))
    if top > MAX_CODE:
        raise MemlensError(
            f"codes go up to {top}, above {MAX_CODE}: codes must be dense symbol indices 0..M-1; "
            "use memlens.metrics.encode to turn arbitrary symbols into codes"
        )
    return top + 1


def check_codes(codes: np.ndarray, lengths: np.ndarray, size: int, what: str) -> None:
    """Raise MemlensError when a code inside a row's length is negative or ≥ ``size``."""
    row = _kernels.first_bad_row(codes, lengths, size)
    if row >= 0:
        raise MemlensError(
            f"{what}: row {row} has a code outside [0, {size}) within its length "
            f"{int(lengths[row])} (padding -1 is only allowed after the length)"
        )
