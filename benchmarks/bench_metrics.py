"""Benchmark: batch drift metrics vs pair-by-pair calls to the reference libraries, one run.

Run by hand: ``python benchmarks/bench_metrics.py [--pairs 1000000] [--reference-pairs 20000]``.

Prints, for random pairs of 0–16 symbols over a 12-symbol alphabet (seeded):
- the first-call cost of the numba kernels (cold compile in a fresh cache, then a cached load),
  each measured in a subprocess;
- seconds for ``--pairs`` pairs through each batch metric on one core (best of ``--repeat``),
  against a plain compiled DP loop for edit distance (the bit-parallel kernel's baseline);
- pair-by-pair reference calls (rapidfuzz Levenshtein on str, dtaidistance C DTW on one-hot
  vectors, scipy jensenshannon on histograms, each with its inputs prepared outside the timer),
  timed on ``--reference-pairs`` pairs and scaled to ``--pairs``, and the speed-up ratio;
- the cost of ``encode_pairs`` from Python lists, which callers holding lists also pay.
Times are CPU seconds of this single-threaded process (``time.process_time``), which a shared
machine disturbs less than wall time; still, read the ratios measured within one run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ALPHABET_SIZE = 12
MAX_LENGTH = 16

FIRST_CALL = """
import time, numpy as np
start = time.perf_counter()
from memlens.metrics import drift_batch, dtw_batch
codes = np.zeros((2, 3), np.int32); lengths = np.array([3, 2])
drift_batch((codes, lengths), (codes, lengths)); dtw_batch((codes, lengths), (codes, lengths),
    np.zeros((1, 1)))
print(time.perf_counter() - start)
"""


def random_batch(seed: int, pairs: int, min_length: int = 0, max_length: int = MAX_LENGTH,
                 ) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Two padded code arrays with lengths min_length..max_length (seeded)."""
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(2):
        lengths = rng.integers(min_length, max_length + 1, pairs)
        codes = rng.integers(0, ALPHABET_SIZE, (pairs, max_length), dtype=np.int32)
        codes[np.arange(max_length) >= lengths[:, None]] = -1
        batches.append((codes, lengths))
    return tuple(batches)


def first_call_seconds() -> tuple[float, float]:
    """(cold compile, cached load) seconds of importing memlens.metrics and a first batch call."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        runs = [subprocess.run([sys.executable, "-c", FIRST_CALL], env=env, check=True,
                               capture_output=True, text=True) for _ in range(2)]
    cold, warm = (float(run.stdout.strip().splitlines()[-1]) for run in runs)
    return cold, warm


def best_of(repeat: int, function, *args) -> float:
    """Best CPU time of ``repeat`` calls (single-threaded, so CPU time is robust to other load)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        function(*args)
        times.append(time.process_time() - start)
    return min(times)


def batch_timings(a, b, repeat: int) -> dict[str, float]:
    """Seconds per batch metric over all pairs, plus the plain DP edit-distance baseline."""
    from memlens.metrics import (
        drift_batch,
        dtw_batch,
        edit_distance_batch,
        js_distance_batch,
        sri_batch,
    )
    def plain_dp_edit_distance(a, b):
        out = np.empty(a[0].shape[0], np.int64)
        _plain_dp_batch(a[0], a[1], b[0], b[1], out)
        return out

    cost = np.random.default_rng(3).random((ALPHABET_SIZE, ALPHABET_SIZE))
    cost = (cost + cost.T) / 2
    np.fill_diagonal(cost, 0)
    dtw_batch(a, b, cost)  # compile outside the timer (reported separately)
    _plain_dp_batch = _make_plain_dp()
    plain_dp_edit_distance(a, b)
    drift_batch(a, b)
    return {
        "dtw_batch (0/1 cost)": best_of(repeat, dtw_batch, a, b),
        "dtw_batch (cost matrix)": best_of(repeat, dtw_batch, a, b, cost),
        "edit_distance_batch (DP/bit-parallel)": best_of(repeat, edit_distance_batch, a, b),
        "edit distance, plain compiled DP loop": best_of(repeat, plain_dp_edit_distance, a, b),
        "js_distance_batch": best_of(repeat, js_distance_batch, a, b),
        "sri_batch (ed + js)": best_of(repeat, sri_batch, a, b),
        "drift_batch (all five, encoded input)": best_of(repeat, drift_batch, a, b),
    }


def _make_plain_dp():
    """A plain compiled double loop (classic DP, one row) over the same padded arrays."""
    from numba import njit

    from memlens.metrics._kernels import levenshtein_dp_pair

    @njit(cache=False, nogil=True)
    def plain_dp_batch(codes_a, len_a, codes_b, len_b, out):
        row = np.empty(codes_b.shape[1] + 1, np.int64)
        for k in range(codes_a.shape[0]):
            out[k] = levenshtein_dp_pair(codes_a[k], len_a[k], codes_b[k], len_b[k], row)

    return plain_dp_batch


def reference_timings(a, b, count: int, total: int) -> dict[str, float]:
    """Seconds for ``total`` pair-by-pair reference calls, extrapolated from ``count`` calls.

    Inputs are prepared outside the timer; pairs with an empty side are skipped (the references
    are undefined there) and the per-call time is scaled to ``total``.
    """
    from dtaidistance import dtw_ndim
    from rapidfuzz.distance import Levenshtein
    from scipy.spatial.distance import jensenshannon

    rows_a = [a[0][k, : a[1][k]] for k in range(count)]
    rows_b = [b[0][k, : b[1][k]] for k in range(count)]
    lists = [(x.tolist(), y.tolist()) for x, y in zip(rows_a, rows_b, strict=True)]
    strings = [("".join(chr(65 + c) for c in x), "".join(chr(65 + c) for c in y))
               for x, y in zip(rows_a, rows_b, strict=True)]
    eye = np.eye(ALPHABET_SIZE)
    hot = [(eye[x], eye[y]) for x, y in zip(rows_a, rows_b, strict=True) if len(x) and len(y)]
    hist = [(np.bincount(x, minlength=ALPHABET_SIZE), np.bincount(y, minlength=ALPHABET_SIZE))
            for x, y in zip(rows_a, rows_b, strict=True) if len(x) and len(y)]

    def timed(calls, function) -> float:
        start = time.process_time()
        for x, y in calls:
            function(x, y)
        return (time.process_time() - start) * total / len(calls)

    return {
        "rapidfuzz Levenshtein.distance (str)": timed(strings, Levenshtein.distance),
        "rapidfuzz Levenshtein.distance (lists)": timed(lists, Levenshtein.distance),
        "dtaidistance dtw_ndim.distance (C, one-hot)": timed(
            hot, lambda x, y: dtw_ndim.distance(x, y, inner_dist="euclidean", use_c=True)),
        "scipy jensenshannon (histograms)": timed(hist, lambda p, q: jensenshannon(p, q, base=2)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--reference-pairs", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--encode-pairs", type=int, default=200_000)
    parser.add_argument("--skip-first-call", action="store_true")
    args = parser.parse_args()

    if not args.skip_first_call:
        cold, warm = first_call_seconds()
        print(f"first call (import + compile, empty numba cache): {cold:6.2f} s")
        print(f"first call (import + load from numba cache):      {warm:6.2f} s")

    a, b = random_batch(seed=0, pairs=args.pairs)
    print(f"\n{args.pairs:,} pairs, lengths 0..{MAX_LENGTH}, {ALPHABET_SIZE} symbols, one core")
    ours = batch_timings(a, b, args.repeat)
    for name, seconds in ours.items():
        print(f"  {name:42s} {seconds:7.3f} s   {seconds / args.pairs * 1e9:6.0f} ns/pair")
    dp = ours["edit distance, plain compiled DP loop"]
    bits = ours["edit_distance_batch (DP/bit-parallel)"]
    print(f"  edit_distance_batch vs plain DP loop: {dp / bits:.1f}x")
    _long_edit_distance(args.pairs // 10, args.repeat)

    count = min(args.reference_pairs, args.pairs)
    print(f"\npair-by-pair references, timed on {count:,} pairs, scaled to {args.pairs:,}:")
    references = reference_timings(a, b, count, args.pairs)
    pairs_up = {
        "rapidfuzz Levenshtein.distance (str)": "edit_distance_batch (DP/bit-parallel)",
        "rapidfuzz Levenshtein.distance (lists)": "edit_distance_batch (DP/bit-parallel)",
        "dtaidistance dtw_ndim.distance (C, one-hot)": "dtw_batch (0/1 cost)",
        "scipy jensenshannon (histograms)": "js_distance_batch",
    }
    for name, seconds in references.items():
        ratio = seconds / ours[pairs_up[name]]
        print(f"  {name:44s} {seconds:8.1f} s   ours {ratio:8.0f}x faster")
    by_reference = references["rapidfuzz Levenshtein.distance (str)"] + \
        references["scipy jensenshannon (histograms)"]
    print(f"  {'SRI by references (rapidfuzz str + scipy)':44s} {by_reference:8.1f} s   "
          f"ours {by_reference / ours['sri_batch (ed + js)']:8.0f}x faster")

    _encode_timing(args.encode_pairs)


def _long_edit_distance(count: int, repeat: int) -> None:
    """Edit distance on longer sequences (32–64 symbols), where bit-parallelism pays."""
    from memlens.metrics import edit_distance_batch

    a, b = random_batch(seed=2, pairs=count, min_length=32, max_length=64)
    plain = _make_plain_dp()
    out = np.empty(count, np.int64)
    plain(a[0], a[1], b[0], b[1], out)
    dp = best_of(repeat, plain, a[0], a[1], b[0], b[1], out)
    ours = best_of(repeat, edit_distance_batch, a, b)
    print(f"  {count:,} pairs of 32-64 symbols: edit_distance_batch {ours:.3f} s, plain DP loop "
          f"{dp:.3f} s ({dp / ours:.1f}x)")


def _encode_timing(count: int) -> None:
    from memlens.metrics import encode_pairs

    rng = np.random.default_rng(1)
    symbols = [f"symbol_{k}" for k in range(ALPHABET_SIZE)]
    seqs = [[symbols[c] for c in rng.integers(0, ALPHABET_SIZE, rng.integers(0, MAX_LENGTH + 1))]
            for _ in range(2 * count)]
    start = time.process_time()
    encode_pairs(seqs[:count], seqs[count:])
    seconds = time.process_time() - start
    print(f"\nencode_pairs from Python lists of str: {seconds:.3f} s for {count:,} pairs "
          f"({seconds / count * 1e6:.2f} s per million pairs)")


if __name__ == "__main__":
    main()
