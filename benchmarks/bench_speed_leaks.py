"""The speed leaks of issue 24 at paper size, before and after in one run (ratios before / after).

The "before" implementations (commit e69865a) are kept callable here as the baselines:

1. **encoding** — ``encode_pairs`` of the paper design's drift pairs (306 questions x 64
   compared responses, simulated labels of 3-8 symbols): the old per-item ABC checks and
   generator lookup against the current code; outputs asserted identical. The compiled metric
   kernels on the encoded pairs are timed for scale.
2. **keys** — cache keys of one paper stage's generation requests (``dataclasses.asdict`` of the
   parameters against the shallow read); keys asserted identical.
3. **resume** — ``run_requests`` over a finished run of ``--resume-count`` cached requests (no
   model calls), with the old and the new cache key.
4. **analyze** — ``memlens.stats.analyze`` of the simulated paper drift table (19,584 rows, five
   metrics, B = ``--bootstrap``) with statsmodels' default mixed-model start (before) and the
   REML start (after); every mixed-model estimate compared at printed precision.
5. **first-run** — fresh interpreters on a fresh ``NUMBA_CACHE_DIR``: the first ``drift_batch`` +
   ``dtw_path_batch`` call cold (compile) and warm (cache load), and the wait a drift stage sees
   after ``--generate`` seconds of (simulated, GIL-free) generation without and with
   ``warm_up_kernels()`` started when generation starts.

Times are best of ``--repeats`` wall seconds, alternating before / after (the machine is shared).

    python benchmarks/bench_speed_leaks.py [--parts encoding,keys,resume,analyze,first-run]
        [--repeats 3] [--resume-count 28764] [--bootstrap 10000] [--generate 15]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import asdict
from itertools import chain

import numpy as np

from memlens.errors import MemlensError


# -- the before implementations (e69865a) -------------------------------------------------------
def old_check_sequences(sequences: object, what: str) -> list[object]:
    """Before: every item pays three ABC isinstance checks."""
    if isinstance(sequences, (str, bytes, Mapping, Set)) or not isinstance(sequences, Iterable):
        raise MemlensError(f"{what}: expected a list of sequences, got {type(sequences).__name__}")
    items = list(sequences)
    for row, item in enumerate(items):
        is_vector = isinstance(item, np.ndarray) and item.ndim == 1
        if isinstance(item, (Mapping, Set)) or not (isinstance(item, Sequence) or is_vector):
            raise MemlensError(
                f"{what}[{row}]: expected a sequence of hashable symbols, got {type(item).__name__}"
            )
    return items


def old_encode_into(items: list, index: dict, what: str):
    """Before: symbols coded through a generator expression."""
    from memlens.metrics.encoding import PAD, EncodedBatch, _locate_bad_symbol

    lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    try:
        flat = np.fromiter((index[symbol] for symbol in chain.from_iterable(items)),
                           dtype=np.int32, count=int(lengths.sum()))
    except (KeyError, TypeError):
        raise _locate_bad_symbol(items, index, what) from None
    width = int(lengths.max()) if len(items) else 0
    codes = np.full((len(items), width), PAD, dtype=np.int32)
    codes[np.arange(width) < lengths[:, None]] = flat
    return EncodedBatch(codes, lengths, tuple(index))


def old_encode_pairs(seqs_a, seqs_b):
    """Before: ``encode_pairs`` without an alphabet."""
    from memlens.metrics.encoding import EncodedBatch, _make_index

    items_a = old_check_sequences(seqs_a, "seqs_a")
    items_b = old_check_sequences(seqs_b, "seqs_b")
    index = _make_index(None, "seqs_a")
    batch_a = old_encode_into(items_a, index, "seqs_a")
    batch_b = old_encode_into(items_b, index, "seqs_b")
    return EncodedBatch(batch_a.codes, batch_a.lengths, batch_b.alphabet), batch_b


def old_cache_key(self, model_id: str) -> str:
    """Before: the parameters deep-copied by ``dataclasses.asdict``."""
    payload = json.dumps({"model": model_id, "messages": list(self.messages),
                          "params": asdict(self.params), "sample_index": self.sample_index},
                         sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


# -- helpers ----------------------------------------------------------------------------------
def best_of(repeats: int, before, after) -> tuple[float, float]:
    """Best wall seconds of ``before()`` and ``after()``, alternated ``repeats`` times."""
    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(repeats):
        for name, run in (("before", before), ("after", after)):
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return min(times["before"]), min(times["after"])


def line(what: str, before: float, after: float, note: str = "") -> None:
    print(f"  {what:44s} before {before:8.3f} s   after {after:8.3f} s   "
          f"ratio {before / after:6.1f}x{note}")


def paper_pairs():
    """The paper design's drift pairs (baseline and compared label lists), simulated labels."""
    from memlens.audit.drift import drift_pairs
    from memlens.audit.simulate import PRESETS, Truth, simulate_rows

    steps, labels = simulate_rows(PRESETS["paper"], Truth(), seed=0)
    pairs = drift_pairs(steps, labels, baselines=1)
    return pairs.baselines, pairs.compared


# -- parts ------------------------------------------------------------------------------------
def part_encoding(args) -> None:
    from memlens.metrics.batch import drift_batch
    from memlens.metrics.encoding import encode_pairs

    baselines, compared = paper_pairs()
    old_a, old_b = old_encode_pairs(baselines, compared)
    new_a, new_b = encode_pairs(baselines, compared)
    for old, new in ((old_a, new_a), (old_b, new_b)):
        assert np.array_equal(old.codes, new.codes) and np.array_equal(old.lengths, new.lengths)
        assert old.alphabet == new.alphabet
    drift_batch(new_a, new_b)  # compile / load the kernels outside the timer
    before, after = best_of(args.repeats, lambda: old_encode_pairs(baselines, compared),
                            lambda: encode_pairs(baselines, compared))
    kernels, _ = best_of(args.repeats, lambda: drift_batch(new_a, new_b), lambda: None)
    print(f"1. encoding: {len(baselines)} pairs of {np.mean(new_a.lengths):.1f} / "
          f"{np.mean(new_b.lengths):.1f} symbols (identical codes)")
    line("encode_pairs", before, after)
    print(f"  {'drift_batch kernels on the encoded pairs':44s} {kernels:8.3f} s   encoding / kernels: "
          f"before {before / kernels:.1f}x, after {after / kernels:.1f}x")


def paper_requests(count: int):
    from memlens.models import ChatRequest, GenerationParams

    params = GenerationParams(max_tokens=2048, seed=7)
    system = {"role": "system", "content": "You are a helpful assistant. " * 8}
    return [ChatRequest((system, {"role": "user", "content":
                                  f"Memory: the user {i % 93} ... Question {i % 306}: should I rent "
                                  f"or buy a flat in the city where I work? " * 3}),
                        params, sample_index=i % 2) for i in range(count)]


def part_keys(args) -> None:
    from memlens.models import ChatRequest

    requests = paper_requests(args.resume_count)
    model_id = "openai:qwen3-4b@http://127.0.0.1:8000/v1"
    assert ([old_cache_key(r, model_id) for r in requests[:2000]]
            == [r.cache_key(model_id) for r in requests[:2000]])
    before, after = best_of(args.repeats,
                            lambda: [old_cache_key(r, model_id) for r in requests],
                            lambda: [ChatRequest.cache_key(r, model_id) for r in requests])
    print(f"2. cache keys: {len(requests)} requests (identical keys)")
    line("cache keys", before, after)


def part_resume(args) -> None:
    from memlens.engine import run_requests
    from memlens.models import ChatRequest, ChatResponse, FakeModel
    from memlens.store import RunStore

    requests = paper_requests(args.resume_count)
    model = FakeModel(lambda messages, params: ChatResponse("cached answer " * 40, 30, 80))
    new_key = ChatRequest.cache_key
    with tempfile.TemporaryDirectory() as run_dir:
        with RunStore(run_dir) as store:
            run_requests(model, requests, store, progress=False)
        model.calls.clear()

        def resume(key) -> None:
            ChatRequest.cache_key = key
            try:
                with RunStore(run_dir) as store:
                    run_requests(model, requests, store, progress=False)
            finally:
                ChatRequest.cache_key = new_key

        before, after = best_of(args.repeats, lambda: resume(old_cache_key),
                                lambda: resume(new_key))
    assert not model.calls, "a resumed run must make no model calls"
    print(f"3. resume: {len(requests)} cached requests, 0 model calls")
    line("run_requests resume", before, after)


def part_analyze(args) -> None:
    import memlens.stats.mixed as mixed
    from memlens.audit.simulate import PRESETS, Truth, simulate_run
    from memlens.stats.analyze import analyze

    frame = simulate_run(PRESETS["paper"], Truth(), seed=0).frame
    reml_start = mixed._start
    results = {}

    def run(name: str, start) -> None:
        mixed._start = start
        try:
            results[name] = analyze(frame, n_bootstrap=args.bootstrap).to_json()
        finally:
            mixed._start = reml_start

    before, after = best_of(args.repeats, lambda: run("before", lambda *a: None),
                            lambda: run("after", reml_start))
    none, _ = best_of(1, lambda: analyze(frame, n_bootstrap=args.bootstrap, mixed_model=False),
                      lambda: None)
    print(f"4. analyze: {len(frame)} rows x {frame['question_id'].nunique()} questions, "
          f"B = {args.bootstrap}")
    line("analyze (mixed model included)", before, after)
    print(f"  {'analyze without the mixed model':44s} {none:8.3f} s   mixed-model share: "
          f"before {1 - none / before:.0%}, after {1 - none / after:.0%}; mixed part "
          f"{(before - none) / max(after - none, 1e-9):.1f}x faster")
    worst = {"estimate": 0.0, "se": 0.0, "p_value": 0.0, "variance": 0.0}
    differ = []
    for metric, block in results["before"]["metrics"].items():
        old, new = block["mixed_model"], results["after"]["metrics"][metric]["mixed_model"]
        for term, coefficient in old["coefficients"].items():
            for key in ("estimate", "se", "p_value"):
                a, b = coefficient[key], new["coefficients"][term][key]
                worst[key] = max(worst[key], abs(a - b) / max(abs(a), 1e-300))
                if printed(a) != printed(b):
                    differ.append(f"{metric} {term} {key}: {printed(a)} vs {printed(b)}")
        for key in ("group_variance", "residual_variance"):
            worst["variance"] = max(worst["variance"], abs(old[key] - new[key]) / abs(old[key]))
            if f"{old[key]:.4f}" != f"{new[key]:.4f}":
                differ.append(f"{metric} {key}: {old[key]:.4f} vs {new[key]:.4f}")
        if old["warnings"] != new["warnings"] or old["converged"] != new["converged"]:
            differ.append(f"{metric} warnings: {old['warnings']} vs {new['warnings']}")
    print("  mixed-model estimates before vs after: largest relative difference "
          + ", ".join(f"{key} {value:.1e}" for key, value in worst.items()))
    print("  printed as the report prints them (.3f, .3g under 1e-3; variances .4f): "
          + ("all equal, same warnings" if not differ else f"{len(differ)} differ: {differ[:5]}"))


def printed(value: float) -> str:
    """A number as the HTML report prints it (``memlens.report.html``)."""
    return f"{value:.3g}" if abs(value) < 1e-3 else f"{value:.3f}"


FIRST_CALL = """
import json, os, sys, time
start = time.perf_counter()
if sys.argv[1] == "warm-up":
    from memlens.metrics.warmup import warm_up_kernels
    warm_up_kernels()
time.sleep(float(sys.argv[2]))  # the generation stage: waiting on the model, GIL released
from memlens.metrics.batch import drift_batch
from memlens.metrics.encoding import encode_pairs
from memlens.metrics.path import dtw_path_batch
clock = time.perf_counter()
a, b = encode_pairs([["care", "duty"], ["fairness"]], [["duty"], ["care", "care"]])
drift_batch(a, b)
dtw_path_batch(a, b)
print(json.dumps({"wait": time.perf_counter() - clock, "total": time.perf_counter() - start}))
"""


def first_call(mode: str, generate: float, cache: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", FIRST_CALL, mode, str(generate)], env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def part_first_run(args) -> None:
    print(f"5. first run of the drift kernels (fresh NUMBA_CACHE_DIR per cold run; load "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    for mode in ("plain", "warm-up"):
        for repeat in range(args.repeats):
            with tempfile.TemporaryDirectory() as cache:
                cold = first_call(mode, 0.0, cache)
                warm = first_call(mode, 0.0, cache)
            print(f"  {mode:8s} no generation to hide behind: cold {cold['wait']:.2f} s, "
                  f"warm (cached) {warm['wait']:.2f} s  [repeat {repeat + 1}]")
    for repeat in range(args.repeats):
        waits = {}
        for mode in ("plain", "warm-up"):
            with tempfile.TemporaryDirectory() as cache:
                waits[mode] = first_call(mode, args.generate, cache)["wait"]
        print(f"  cold, after {args.generate:.0f} s of generation: drift stage waits "
              f"{waits['plain']:.2f} s (before) vs {waits['warm-up']:.2f} s with warm_up_kernels "
              f"(after)  [repeat {repeat + 1}]")


PARTS = {"encoding": part_encoding, "keys": part_keys, "resume": part_resume,
         "analyze": part_analyze, "first-run": part_first_run}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--resume-count", type=int, default=28_764)
    parser.add_argument("--bootstrap", type=int, default=10_000)
    parser.add_argument("--generate", type=float, default=15.0)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name in args.parts.split(","):
        PARTS[name](args)


if __name__ == "__main__":
    main()
