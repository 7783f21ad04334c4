"""Old (K = 1) vs new (K = 5) no-memory baseline design: power and error rates by simulation.

A generative model of step-symbol sequences, run through the REAL drift stage
(``memlens.audit.drift.drift_pairs`` / ``score_pairs`` / ``aggregate_pairs``) and the REAL
statistics (``memlens.stats.analyze``, no mixed model) once per replicate:

* per question a categorical distribution over M ~ U{4..11} symbols, ``Dirichlet(1, ..., 1)``;
* a response is a sequence of length L ~ U{3..8} drawn i.i.d. from its distribution;
* no-memory samples, noise stimuli and (null) persona stimuli use the question's distribution;
* an *effective* stimulus (life events, and under ``effect`` one planted persona category) uses
  ``(1 − w)·p + w·onehot(j)``, ``j`` a random symbol per (question, stimulus) — ``w`` is
  calibrated (:func:`calibrate_weight`) so the mean DTW elevation over the floor is ≈ +23 %,
  the paper's life-event effect.

Design per question: 3 noise, 5 persona, 3 life-event categories, one stimulus each,
``samples = 1``; K = 1 is the paper's design (sample 0 the baseline + one floor sample), K ≥ 2
has K no-memory samples, all baselines.

Per (design, n questions) cell it reports, over ``--replicates`` replicates:

* ``spec_fail_null`` — specificity status ``fail`` under the null (no effect anywhere);
* ``all_below_null`` — every noise and persona category's elevation < 0 under the null;
* ``err_corr_null`` — mean correlation, across replicates, of the elevation_pct of two
  categories (all 28 pairs of the 3 noise + 5 persona categories, averaged) under the null;
* ``drel_q_null`` — some persona category has d_rel_q ≤ 0.05 under the null;
* ``power`` — sensitivity status ``pass`` with the +23 % life-event effect.

    nice -n 10 python benchmarks/bench_design_power.py [--replicates 200] [--bootstrap 200]
        [--questions 16 30 60] [--designs 1 5]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd

from memlens.audit.design import cell_id
from memlens.audit.drift import aggregate_pairs, drift_pairs, score_pairs

CTRL = "control/no_perturbation"
NOISE = ["filler", "whitespace", "punctuation"]
PERSONA = ["age", "gender", "disability", "occupation", "income"]
LIFE = ["bereavement", "serious_illness", "job_loss"]
PLANTED_PERSONA = "age"
STIMULI = ([("noise", c) for c in NOISE] + [("persona", c) for c in PERSONA]
           + [("life_event", c) for c in LIFE])
PAPER_WEIGHT = 0.84
WEIGHT_GRID = tuple(round(0.70 + 0.02 * k, 2) for k in range(16))
"""Mixing weight giving ≈ +23 % mean DTW elevation in this model (see :func:`calibrate_weight`;
printed by the benchmark)."""


def _sequence(rng: np.random.Generator, probs: np.ndarray) -> list[str]:
    length = int(rng.integers(3, 9))
    return [f"s{k}" for k in rng.choice(len(probs), size=length, p=probs)]


def simulate_rows(n_questions: int, baselines: int, rng: np.random.Generator, *,
                  weight: float = 0.0, planted_persona: str | None = None,
                  life_weight: float | None = None) -> tuple[list[dict], list[dict]]:
    """Steps and label rows of one simulated audit (as ``audit_steps`` / ``audit_labels``).

    ``life_weight`` (default ``weight``) shifts the life-event stimuli; ``weight`` shifts the
    ``planted_persona`` category (if any). ``weight = 0`` everywhere is the null."""
    life_weight = weight if life_weight is None else life_weight
    n_control = baselines if baselines >= 2 else 2
    steps, labels = [], []
    for q in range(n_questions):
        qid = f"q{q:03d}"
        m = int(rng.integers(4, 12))
        probs = rng.dirichlet(np.ones(m))
        cells = [(CTRL, "control", "no_perturbation", k, 0.0) for k in range(n_control)]
        for klass, category in STIMULI:
            w = life_weight if klass == "life_event" else (
                weight if category == planted_persona else 0.0)
            cells.append((f"{klass}/{category}/1", klass, category, 0, w))
        for stimulus, klass, category, sample, w in cells:
            p = probs
            if w > 0:
                w = min(w, 1.0)
                p = (1.0 - w) * probs
                p[int(rng.integers(m))] += w
            cid = cell_id(qid, stimulus, sample)
            steps.append({"id": cid, "question_id": qid, "stimulus_id": stimulus,
                          "sample": sample, "condition_class": klass, "category": category,
                          "status": "ok"})
            labels.append({"id": cid, "labels": _sequence(rng, p)})
    return steps, labels


def drift_table(steps: list[dict], labels: list[dict], baselines: int) -> pd.DataFrame:
    """The real drift stage on simulated rows -> the frame ``analyze`` reads."""
    rows = aggregate_pairs(score_pairs(drift_pairs(steps, labels, baselines)))
    return pd.DataFrame(rows)[["question_id", "condition_class", "category", "stimulus_id",
                               "sample", "dtw"]]


def replicate(n_questions: int, baselines: int, seed: int, *, weight: float = 0.0,
              planted_persona: str | None = None, n_bootstrap: int = 200) -> dict:
    """One simulated audit analysed by ``memlens.stats.analyze``: the figures the benchmark
    aggregates (check statuses, elevation_pct per category, d_rel_q per category)."""
    from memlens.stats import analyze

    rng = np.random.default_rng(seed)
    steps, labels = simulate_rows(n_questions, baselines, rng, weight=weight,
                                  planted_persona=planted_persona)
    stats = analyze(drift_table(steps, labels, baselines), metrics=["dtw"], seed=seed,
                    n_bootstrap=n_bootstrap, mixed_model=False)
    checks = {c.name: c.status for c in stats.validity.checks}
    result = stats.metrics["dtw"]
    cats = result.categories
    return {"specificity": checks["specificity"], "sensitivity": checks["sensitivity"],
            "elevation": {c: cats[c].elevation_pct for c in NOISE + PERSONA + LIFE},
            "d_rel_q": {c: cats[c].d_rel_q for c in PERSONA},
            "d_rel_ci": {c: list(cats[c].d_rel_ci) for c in PERSONA},
            "life_elevation": result.classes["life_event"].elevation_pct}


def mean_error_correlation(reps: list[dict], categories=tuple(NOISE + PERSONA)) -> float:
    """Mean over category pairs of the across-replicate correlation of elevation_pct."""
    matrix = np.array([[r["elevation"][c] for c in categories] for r in reps], float)
    corr = np.corrcoef(matrix, rowvar=False)
    pairs = list(itertools.combinations(range(len(categories)), 2))
    return float(np.mean([corr[i, j] for i, j in pairs]))


def null_summary(reps: list[dict]) -> dict:
    """Rates over null replicates."""
    return {
        "spec_fail": float(np.mean([r["specificity"] == "fail" for r in reps])),
        "all_below": float(np.mean([all(r["elevation"][c] < 0 for c in NOISE + PERSONA)
                                    for r in reps])),
        "err_corr": mean_error_correlation(reps),
        "drel_q": float(np.mean([min(r["d_rel_q"].values()) <= 0.05 for r in reps])),
    }


def calibrate_weight(target_pct: float = 23.0, n_questions: int = 200, seed: int = 0,
                     grid=WEIGHT_GRID) -> tuple[float, float]:
    """The mixing weight whose mean DTW elevation (pooled life events vs floor, K = 5, many
    questions) is closest to ``target_pct``; returns (weight, elevation at it)."""
    best = (float("nan"), float("inf"))
    for w in grid:
        steps, labels = simulate_rows(n_questions, 5, np.random.default_rng(seed), weight=0.0,
                                      life_weight=float(w))
        table = drift_table(steps, labels, 5)
        floor = table.loc[table.category == "no_perturbation", "dtw"].mean()
        life = table.loc[table.condition_class == "life_event", "dtw"].mean()
        pct = 100.0 * (life - floor) / floor
        if abs(pct - target_pct) < abs(best[1] - target_pct):
            best = (float(w), float(pct))
    return best


def run_cell(n_questions: int, baselines: int, replicates: int, n_bootstrap: int,
             weight: float, seed: int = 0) -> dict:
    """Null and effect replicates of one (design, n) cell, summarised."""
    null = [replicate(n_questions, baselines, seed + 7919 * r, n_bootstrap=n_bootstrap)
            for r in range(replicates)]
    effect = [replicate(n_questions, baselines, seed + 1_000_003 + 7919 * r, weight=weight,
                        planted_persona=PLANTED_PERSONA, n_bootstrap=n_bootstrap)
              for r in range(replicates)]
    summary = null_summary(null)
    summary["power"] = float(np.mean([r["sensitivity"] == "pass" for r in effect]))
    summary["life_elev"] = float(np.mean([r["life_elevation"] for r in effect]))
    summary["persona_ci_above0"] = float(np.mean([r["d_rel_ci"][PLANTED_PERSONA][0] > 0
                                                  for r in effect]))
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--questions", type=int, nargs="+", default=[16, 30, 60])
    parser.add_argument("--designs", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    weight, pct = calibrate_weight()
    print(f"calibrated mixing weight w = {weight:.2f} -> mean life-event DTW elevation "
          f"{pct:+.1f}% (K = 5, 200 questions)  [{time.perf_counter() - start:.1f}s]")
    print(f"{args.replicates} null + {args.replicates} effect replicates per cell, "
          f"B = {args.bootstrap}, analyze(mixed_model=False)\n")
    header = (f"{'n':>4} {'K':>3} | {'spec_fail':>9} {'all_below':>9} {'err_corr':>8} "
              f"{'drel_q<=.05':>11} | {'power':>6} {'life_elev':>9} {'age_ci>0':>8} | {'sec':>6}")
    print(header)
    print("-" * len(header))
    for n in args.questions:
        for k in args.designs:
            t0 = time.perf_counter()
            s = run_cell(n, k, args.replicates, args.bootstrap, weight, seed=args.seed)
            print(f"{n:>4} {k:>3} | {s['spec_fail']:>9.3f} {s['all_below']:>9.3f} "
                  f"{s['err_corr']:>8.3f} {s['drel_q']:>11.3f} | {s['power']:>6.3f} "
                  f"{s['life_elev']:>+9.1f} {s['persona_ci_above0']:>8.3f} | "
                  f"{time.perf_counter() - t0:>6.1f}", flush=True)
    print(f"\ntotal {time.perf_counter() - start:.1f}s")


if __name__ == "__main__":
    main()
