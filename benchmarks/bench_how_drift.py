"""Time the "how reasoning drifts" analyses (issue 13) at paper size against the existing
statistics stage, measured in the same run on the same synthetic store.

Builds the store of ``bench_audit.py`` (N questions x the bundled stimuli, paper design K = 1;
300 questions = 27,900 drift pairs), runs the drift stage, then times
  - the existing statistics (memlens.stats.analyze on dtw + sri, B replicates) — the baseline,
  - direction profiles, substitutions (DTW paths + bootstrap), value contrasts and answer
    drift statistics (on synthetic answer metric columns), each alone, and
    ``how_sections`` end to end (what compute_stats adds),
and prints each as a ratio of the baseline. Compiled kernels are loaded before the timings.
Usage: python benchmarks/bench_how_drift.py [--questions 300] [--bootstrap 10000]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--bootstrap", type=int, default=10_000)
    args = parser.parse_args()
    from bench_audit import synthetic_store

    from memlens.audit import build_config
    from memlens.audit.drift import ANSWER_METRICS, run_drift
    from memlens.audit.howdrift import (
        HOW_BOOTSTRAP,
        answer_section,
        contrast_section,
        direction_rows,
        ontology_maps,
        pair_frame,
        substitution_rows,
    )
    from memlens.audit.pipeline import compute_stats, drift_frame
    from memlens.store import RunStore

    run_dir = tempfile.mkdtemp(prefix="bench_how_")
    synthetic_store(run_dir, args.questions)
    config = build_config({"preset": "paper", "n_bootstrap": args.bootstrap})
    with RunStore(run_dir) as store:
        counts = run_drift(store)
        frame = drift_frame(store)
        pair_rows = store.rows("audit_drift_pairs")
    rng = np.random.default_rng(0)
    for name in ANSWER_METRICS:  # synthetic answer metrics, as the answer stage would add
        frame[name] = rng.random(len(frame))
    boot = {"seed": 0, "n_bootstrap": min(args.bootstrap, HOW_BOOTSTRAP)}
    from memlens.metrics import drift_batch, encode_pairs
    from memlens.metrics.path import dtw_path_batch

    dtw_path_batch(*encode_pairs([["a"]], [["b"]]))  # load the compiled kernels outside timing
    drift_batch([["a"]], [["b"]])
    timings = {}
    start = time.perf_counter()
    stats, error = compute_stats(frame[[c for c in frame.columns if c not in ANSWER_METRICS]],
                                 config, None)
    timings["statistics (existing: dtw + sri)"] = time.perf_counter() - start
    start = time.perf_counter()
    pairs = pair_frame(frame, pair_rows)
    symbols, root_of = ontology_maps(None, pairs)
    timings["pair frame + ontology"] = time.perf_counter() - start
    for label, compute in (
            ("direction profiles", lambda: direction_rows(pairs, symbols, root_of, boot)),
            ("substitutions (paths + bootstrap)",
             lambda: substitution_rows(pairs, symbols, root_of, boot)),
            ("value contrasts", lambda: contrast_section(frame, pairs, boot)),
            ("answer drift statistics (4 metrics)",
             lambda: answer_section(frame, 0, boot["n_bootstrap"]))):
        start = time.perf_counter()
        result = compute()
        timings[label] = time.perf_counter() - start
        if result.get("error"):
            print(f"  [{label}: {result['error']}]")
    from memlens.audit.howdrift import how_sections

    start = time.perf_counter()
    how_sections(frame, pair_rows, seed=0, n_bootstrap=args.bootstrap)
    end_to_end = time.perf_counter() - start
    base = timings["statistics (existing: dtw + sri)"]
    print(f"{counts['pairs']} drift pairs, {len(frame)} drift rows ({args.questions} questions), "
          f"B = {args.bootstrap} (how-sections B = {boot['n_bootstrap']})"
          + (f" [stats error: {error}]" if error else ""))
    new = sum(v for k, v in timings.items() if not k.startswith("statistics"))
    for label, seconds in timings.items():
        print(f"  {label:40s} {seconds:7.2f} s   {seconds / base:5.2f} x the statistics stage")
    print(f"  {'all new analyses (sum)':40s} {new:7.2f} s   {new / base:5.2f} x the statistics stage")
    print(f"  {'how_sections() end to end':40s} {end_to_end:7.2f} s   "
          f"{end_to_end / base:5.2f} x the statistics stage")


if __name__ == "__main__":
    main()
