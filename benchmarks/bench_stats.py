"""Speed of the vectorised cluster bootstrap against a plain per-replicate loop.

The persona panel: 400 questions; the floor, 3 noise and 10 persona categories; 3 rows per
question and category (1 for the floor). d_rel (vs pooled noise) and % elevation (vs the floor)
for every category with B = 10,000 replicates. The loop baseline rebuilds each replicate's rows
from the drawn question ids and computes the same statistics with numpy; it runs a subset of
replicates and is scaled to B. Both are measured in this run.

    python benchmarks/bench_stats.py [--questions 400] [--bootstrap 10000] [--loop-replicates 300]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from memlens.stats.bootstrap import (
    cluster_sums,
    d_rel,
    draw_cluster_counts,
    draw_cluster_indices,
    elevation_pct,
    replicate_moments,
    sample_moments,
    select_column,
    summarize_replicates,
)

NOISE = ["filler", "whitespace", "punctuation"]
PERSONA = ["gender", "age", "sexual_orientation", "trans_status", "occupation", "education",
           "income", "disability", "appearance", "physical_traits"]


def make_rows(n_questions: int, seed: int = 0):
    """Simulated panel rows: values, question ids, categories."""
    rng = np.random.default_rng(seed)
    layout = ["no_perturbation"] + [name for name in NOISE + PERSONA for _ in range(3)]
    categories = np.tile(np.array(layout), n_questions)
    questions = np.repeat(np.arange(n_questions), len(layout))
    shift = np.where(np.isin(categories, PERSONA), 0.05, 0.0)
    values = (0.3 + np.repeat(rng.normal(0, 0.05, n_questions), len(layout)) + shift
              + rng.normal(0, 0.08, categories.size))
    return values, questions, categories


def vectorised(values, questions, categories, n_bootstrap: int, seed: int) -> dict:
    """The full bootstrap as memlens.stats does it: one matrix product for everything."""
    sums = cluster_sums(values, questions, categories, pools={"\x00noise": NOISE})
    counts = draw_cluster_counts(len(sums.clusters), n_bootstrap, seed)
    point, reps = sample_moments(sums), replicate_moments(sums, counts)
    results = {}
    for statistic, reference in ((d_rel, "\x00noise"), (elevation_pct, "no_perturbation")):
        column = sums.column(reference)
        point_stat = statistic(point, select_column(point, column))
        rep_stat = statistic(reps, select_column(reps, column))
        results[statistic.__name__] = [summarize_replicates(point_stat[g], rep_stat[:, g])
                                       for g in range(len(sums.groups))]
    return results


def loop(values, questions, categories, indices: np.ndarray) -> np.ndarray:
    """Per-replicate baseline: gather the drawn questions' rows, compute d_rel and elevation."""
    rows_of = [np.flatnonzero(questions == q) for q in np.unique(questions)]
    names, codes = np.unique(categories, return_inverse=True)
    noise_mask = np.isin(categories, NOISE)
    floor_code = int(np.flatnonzero(names == "no_perturbation")[0])
    out = np.empty((len(indices), 2, len(names)))
    for b, draw in enumerate(indices):
        rows = np.concatenate([rows_of[i] for i in draw])
        sums = np.bincount(codes[rows], weights=values[rows], minlength=len(names))
        means = sums / np.bincount(codes[rows], minlength=len(names))
        noise = values[rows][noise_mask[rows]]
        out[b, 0] = (means - noise.mean()) / noise.std(ddof=1)
        out[b, 1] = 100 * (means - means[floor_code]) / means[floor_code]
    return out


def pandas_loop(values, questions, categories, indices: np.ndarray) -> list:
    """The plain loop most analysis scripts write: rebuild a DataFrame per replicate."""
    import pandas as pd

    frame = pd.DataFrame({"question_id": questions, "category": categories, "value": values})
    by_question = dict(tuple(frame.groupby("question_id")))
    ids = np.unique(questions)
    out = []
    for draw in indices:
        sample = pd.concat([by_question[ids[i]] for i in draw], ignore_index=True)
        means = sample.groupby("category")["value"].mean()
        noise = sample.loc[sample["category"].isin(NOISE), "value"]
        out.append(((means - noise.mean()) / noise.std(),
                    100 * (means - means["no_perturbation"]) / means["no_perturbation"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=400)
    parser.add_argument("--bootstrap", type=int, default=10_000)
    parser.add_argument("--loop-replicates", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    values, questions, categories = make_rows(args.questions)
    print(f"panel: {args.questions} questions, {len(np.unique(categories))} categories, "
          f"{values.size} rows, B = {args.bootstrap}")
    vectorised(values, questions, categories, 200, seed=0)  # warm-up
    times = []
    for repeat in range(args.repeats):
        start = time.perf_counter()
        vectorised(values, questions, categories, args.bootstrap, seed=repeat)
        times.append(time.perf_counter() - start)
    fast = min(times)
    indices = draw_cluster_indices(args.questions, args.loop_replicates, seed=0)
    start = time.perf_counter()
    loop(values, questions, categories, indices)
    per_replicate = (time.perf_counter() - start) / args.loop_replicates
    slow = per_replicate * args.bootstrap
    n_pandas = max(10, args.loop_replicates // 10)
    start = time.perf_counter()
    pandas_loop(values, questions, categories, indices[:n_pandas])
    pandas_per_replicate = (time.perf_counter() - start) / n_pandas
    plain = pandas_per_replicate * args.bootstrap
    print(f"vectorised cluster bootstrap:  {fast:.3f} s (best of {args.repeats}; "
          f"median {np.median(times):.3f} s)")
    print(f"plain pandas per-replicate loop: {plain:.1f} s ({pandas_per_replicate * 1e3:.1f} ms "
          f"per replicate on {n_pandas}, scaled to B)  -> speed-up {plain / fast:.0f}x")
    print(f"tuned numpy per-replicate loop:  {slow:.2f} s ({per_replicate * 1e3:.2f} ms "
          f"per replicate on {args.loop_replicates}, scaled to B)  -> speed-up {slow / fast:.0f}x")


if __name__ == "__main__":
    main()
