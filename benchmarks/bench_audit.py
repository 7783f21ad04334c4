"""Speed of the audit's model-free stages on a paper-size synthetic run (no model calls).

Builds a run store as a `paper` audit would leave it after generation and labeling
(N questions x C conditions, ~6 labelled steps per response), then times
  - the drift stage (one drift_batch call) against pair-by-pair metric calls (baseline),
  - the statistics (memlens.stats.analyze, B replicates),
  - the report (figures, tables, HTML with the trajectory viewer),
  - a re-run of the drift + stats stages on the finished store (must reuse everything).
Usage: python benchmarks/bench_audit.py [--questions 300] [--bootstrap 10000]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np


def synthetic_store(run_dir: str, n_questions: int, seed: int = 0) -> int:
    from memlens.audit import build_config
    from memlens.audit.pipeline import write_manifest
    from memlens.ontology import load_ontology
    from memlens.stimuli import load_stimuli
    from memlens.store import RunStore

    rng = np.random.default_rng(seed)
    symbols = load_ontology().symbol_ids
    stimuli = load_stimuli()
    shift = {"control": 0.15, "noise": 0.15, "persona": 0.3, "life_event": 0.5}
    steps_rows, label_rows = [], []
    for q in range(n_questions):
        base = list(rng.choice(symbols, size=rng.integers(4, 9)))
        for s in stimuli:
            for k in range(2 if s.stimulus_class == "control" else 1):
                seq = list(base) if (s.stimulus_class, k) == ("control", 0) else [
                    x if rng.random() > shift[s.stimulus_class] else rng.choice(symbols)
                    for x in base]
                cid = f"q{q}|{s.id}|{k}"
                steps_rows.append({
                    "id": cid, "question_id": f"q{q}", "stimulus_id": s.id, "sample": k,
                    "condition_class": s.stimulus_class, "category": s.category, "status": "ok",
                    "method": "tagged", "steps": [f"step {i} of {cid}" for i in range(len(seq))],
                    "question_text": f"question {q}", "stimulus_text": s.text, "text": ""})
                label_rows.append({"id": cid, "steps": steps_rows[-1]["steps"], "labels": seq})
    config = build_config({"preset": "paper"})
    with RunStore(run_dir) as store:
        write_manifest(store, config, {"questions": n_questions})
        store.put_rows("audit_steps", steps_rows)
        store.put_rows("audit_labels", label_rows)
    return len(steps_rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--bootstrap", type=int, default=10_000)
    args = parser.parse_args()
    from memlens.audit import build_config, drift_pairs
    from memlens.audit.drift import run_drift
    from memlens.audit.pipeline import run_stats
    from memlens.metrics import drift_batch, dtw, sri
    from memlens.report import build_report
    from memlens.store import RunStore

    run_dir = tempfile.mkdtemp(prefix="bench_audit_")
    responses = synthetic_store(run_dir, args.questions)
    config = build_config({"preset": "paper", "n_bootstrap": args.bootstrap})
    with RunStore(run_dir) as store:
        pairs = drift_pairs(store.rows("audit_steps"), store.rows("audit_labels"))
        start = time.perf_counter()
        for a, b in zip(pairs.baselines, pairs.compared, strict=True):
            dtw(a, b), sri(a, b)
        loop_s = time.perf_counter() - start
        drift_batch(pairs.baselines[:10], pairs.compared[:10])  # compile outside the timing
        start = time.perf_counter()
        drift_batch(pairs.baselines, pairs.compared)
        batch_s = time.perf_counter() - start
        start = time.perf_counter()
        counts = run_drift(store)
        drift_s = time.perf_counter() - start
        start = time.perf_counter()
        stats, error = run_stats(store, config)
        stats_s = time.perf_counter() - start
        start = time.perf_counter()
        again = run_drift(store)
        run_stats(store, config)
        rerun_s = time.perf_counter() - start
    start = time.perf_counter()
    build_report(run_dir)
    report_s = time.perf_counter() - start
    print(f"{responses} responses, {counts['pairs']} drift pairs ({args.questions} questions)")
    print(f"scoring: one drift_batch call {batch_s:.3f} s vs pair-by-pair dtw+sri calls "
          f"(baseline) {loop_s:.2f} s -> {loop_s / batch_s:.0f}x")
    print(f"drift stage end to end (store read + pairing + scoring + store write): {drift_s:.2f} s")
    print(f"statistics (B={args.bootstrap}): {stats_s:.2f} s"
          + (f"  [error: {error}]" if error else f", verdict {stats.validity.verdict}"))
    print(f"re-run of drift + stats on the finished store: {rerun_s:.2f} s, "
          f"{again['scored']} pairs rescored")
    print(f"report (figures, tables, HTML): {report_s:.2f} s -> {run_dir}/report.html")


if __name__ == "__main__":
    main()
