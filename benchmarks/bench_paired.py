"""Paired cluster bootstrap: vectorised (memlens.stats.paired) vs a per-replicate loop that
resamples both runs' rows explicitly — the same replicates (one seeded draw), timed in one run.

    python benchmarks/bench_paired.py [--questions 120] [--bootstrap 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from memlens.stats.bootstrap import counts_from_indices, d_rel, draw_cluster_indices
from memlens.stats.paired import NOISE_POOL, aligned_sums, paired_categories, paired_replicates

CATEGORIES = [("control", "no_perturbation"), ("noise", "filler"), ("noise", "whitespace"),
              ("noise", "punctuation"), ("persona", "age"), ("persona", "gender"),
              ("persona", "religion"), ("life_event", "bereavement")]


def table(seed: int, n_questions: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"question_id": f"q{q}", "condition_class": k, "category": c,
             "dtw": 0.3 + rng.normal(0, 0.08)}
            for q in range(n_questions) for k, c in CATEGORIES for _ in range(2)]
    return pd.DataFrame(rows)


def loop(frames, indices, noise):
    """Per replicate: concatenate the drawn questions' rows of each run, then d_rel per category."""
    by_question = [dict(tuple(f.groupby("question_id"))) for f in frames]
    clusters = sorted(by_question[0])
    out = np.empty((len(indices), len(CATEGORIES)))
    for b, drawn in enumerate(indices):
        stats = []
        for groups in by_question:
            sample = pd.concat([groups[clusters[i]] for i in drawn])
            ref = sample[sample["category"].isin(noise)]["dtw"]
            means = sample.groupby("category")["dtw"].mean()
            stats.append((means - ref.mean()) / ref.std(ddof=1))
        out[b] = (stats[1] - stats[0]).reindex([c for _, c in CATEGORIES]).to_numpy()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=120)
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--loop-replicates", type=int, default=200)
    args = parser.parse_args()
    frames = [table(0, args.questions), table(1, args.questions)]
    noise = ["filler", "punctuation", "whitespace"]
    started = time.perf_counter()
    paired_categories(*frames, "dtw", n_bootstrap=args.bootstrap)
    vectorised = time.perf_counter() - started
    indices = draw_cluster_indices(args.questions, args.loop_replicates, seed=0)
    started = time.perf_counter()
    looped = loop(frames, indices, noise)
    loop_s = (time.perf_counter() - started) * args.bootstrap / args.loop_replicates
    runs = [(f["dtw"].to_numpy(), f["question_id"].to_numpy(), f["category"].to_numpy())
            for f in frames]
    sums = aligned_sums(runs, pools={NOISE_POOL: noise})
    _, _, a, b = paired_replicates(*sums, counts_from_indices(indices, args.questions), d_rel,
                                   NOISE_POOL)
    order = [sums[0].groups.index(c) for _, c in CATEGORIES]
    assert np.allclose((b - a)[:, order], looped)
    print(f"{args.questions} questions x {len(CATEGORIES)} categories x 2 rows, 2 runs, "
          f"B = {args.bootstrap}")
    print(f"vectorised paired_categories (Δ mean + Δ d_rel, BH): {vectorised:.3f} s")
    print(f"per-replicate loop (Δ d_rel only), extrapolated from {args.loop_replicates} "
          f"replicates: {loop_s:.1f} s")
    print(f"speed-up: {loop_s / vectorised:.0f}x (replicates identical: checked)")


if __name__ == "__main__":
    main()
