"""Per-category statistics of one metric: the floor, elevation, d_rel, Cohen's d, letters.

References: the **floor** is the ``no_perturbation`` category (drift between two no-memory
samples); the **noise** reference is the pooled ``noise`` class. For every category:

- ``elevation_pct`` = 100·(μ_cat − μ_floor)/μ_floor, its cluster-bootstrap percentile CI
  (``elevation_ci``) and ``elevation_p`` from a paired t-test over questions on per-question
  means (category vs floor; questions are the independent units);
- ``d_rel`` = (μ_cat − μ_noise)/σ_noise with its cluster-bootstrap CI and bootstrap p-value, and
  ``d_rel_q``, Benjamini–Hochberg within the category's condition class (``q_family``: the
  persona family is the persona categories; noise and life-event categories form their own);
- ``cohen_d`` against the floor rows; ``letters`` from BH-corrected pairwise Welch tests;
- ``interpretable`` — false below 8 questions (too few clusters for a bootstrap interval).

The elevation's interval is a cluster-bootstrap percentile interval, its p-value a paired t over
questions (the sensitivity check needs p < 0.001, finer than a bootstrap p resolves): near
p = 0.05 the two can disagree — a CI just excluding 0 beside p = 0.06 is that, not an error.

One draw-count matrix (seeded) serves all categories of the metric, so every category's interval
comes from the same question resamples.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memlens.stats.bootstrap import (
    ClusterSums,
    Moments,
    cluster_sums,
    d_rel,
    draw_cluster_counts,
    elevation_pct,
    replicate_moments,
    sample_moments,
    select_column,
    summarize_replicates,
)
from memlens.stats.direction import MIN_QUESTIONS
from memlens.stats.effects import cohen_d, paired_cluster_t_test
from memlens.stats.multiple import benjamini_hochberg
from memlens.stats.pairwise import pairwise_welch
from memlens.stats.table import CONDITION_CLASSES, FLOOR_CATEGORY

CLASS_POOL = "\x00class:"


def category_statistics(
    table: pd.DataFrame, metric: str, *, seed: int = 0, n_bootstrap: int = 10_000,
    confidence: float = 0.95,
) -> dict:
    """Statistics of ``metric`` for every category and every condition class of a drift table.

    Returns ``{"floor": {...}, "categories": {name: {...}}, "classes": {class: {...}},
    "pairwise": [...]}``; categories are ordered by condition class, then name.
    """
    classes = _category_classes(table)
    values = table[metric].to_numpy(float)
    questions = table["question_id"].to_numpy()
    sums = cluster_sums(values, questions, table["category"].to_numpy(), pools={
        CLASS_POOL + klass: [c for c, k in classes.items() if k == klass]
        for klass in CONDITION_CLASSES if klass in classes.values()})
    counts = draw_cluster_counts(len(sums.clusters), n_bootstrap, seed)
    point, reps = sample_moments(sums), replicate_moments(sums, counts)
    floor_col = sums.column(FLOOR_CATEGORY)
    noise_col = sums.column(CLASS_POOL + "noise")
    elevation = _bootstrap_columns(elevation_pct, point, reps, floor_col, confidence)
    relative = _bootstrap_columns(d_rel, point, reps, noise_col, confidence)
    question_means = _question_means(sums)
    rows_by_category = {name: group[metric].to_numpy(float)
                        for name, group in table.groupby("category", sort=False)}
    floor_rows = rows_by_category[FLOOR_CATEGORY]
    categories = {}
    for name in sorted(classes, key=lambda c: (CONDITION_CLASSES.index(classes[c]), c)):
        col = sums.column(name)
        categories[name] = _category_row(
            name, classes[name], rows_by_category[name], floor_rows, elevation[col],
            relative[col], paired_cluster_t_test(question_means[:, col],
                                                 question_means[:, floor_col]),
            int(np.count_nonzero(sums.count[:, col])))
        categories[name].update(_paired_spread(question_means[:, col],
                                               question_means[:, floor_col]))
        categories[name]["d_rel_mde"] = _d_rel_mde(relative[col])
        categories[name]["interpretable"] = categories[name]["n_questions"] >= MIN_QUESTIONS
    _add_q_values(categories)
    pairs, letters = pairwise_welch(rows_by_category)
    for name, row in categories.items():
        row["letters"] = letters[name]
    class_rows = {}
    for klass in CONDITION_CLASSES:
        if CLASS_POOL + klass in sums.groups and klass != "control":
            col = sums.column(CLASS_POOL + klass)
            test = paired_cluster_t_test(question_means[:, col], question_means[:, floor_col])
            class_rows[klass] = {"n": int(point.n[col]), "mean": float(point.mean[col]),
                                 "elevation_pct": elevation[col].estimate,
                                 "elevation_ci": [elevation[col].ci_low, elevation[col].ci_high],
                                 "elevation_p": test.p_value,
                                 **_paired_spread(question_means[:, col],
                                                  question_means[:, floor_col])}
    noise_spread = _paired_spread(question_means[:, noise_col], question_means[:, floor_col])
    floor = {"category": FLOOR_CATEGORY, "n": int(point.n[floor_col]),
             "mean": float(point.mean[floor_col]), "sd": float(np.sqrt(point.var[floor_col]))}
    noise = {"n": int(point.n[noise_col]), "mean": float(point.mean[noise_col]),
             "sd": float(np.sqrt(point.var[noise_col])), **noise_spread}
    return {"floor": floor, "noise": noise, "categories": categories, "classes": class_rows,
            "pairwise": pairs, "n_bootstrap": n_bootstrap, "seed": seed}


def _category_classes(table: pd.DataFrame) -> dict[str, str]:
    pairs = table[["category", "condition_class"]].drop_duplicates()
    return dict(zip(pairs["category"], pairs["condition_class"], strict=True))


def _bootstrap_columns(statistic, point: Moments, reps: Moments, reference: int,
                       confidence: float) -> list:
    point_stat = statistic(point, select_column(point, reference))
    rep_stat = statistic(reps, select_column(reps, reference))
    return [summarize_replicates(float(point_stat[col]), rep_stat[:, col], confidence=confidence)
            for col in range(point_stat.shape[0])]


def _question_means(sums: ClusterSums) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sums.count > 0, sums.total / sums.count, np.nan) + sums.shift


def _category_row(name, klass, rows, floor_rows, elevation, relative, test, n_questions) -> dict:
    is_floor = name == FLOOR_CATEGORY
    return {
        "condition_class": klass, "n": int(rows.size), "n_questions": n_questions,
        "mean": float(rows.mean()),
        "sd": float(rows.std(ddof=1)) if rows.size > 1 else float("nan"),
        "elevation_pct": elevation.estimate,
        "elevation_ci": [elevation.ci_low, elevation.ci_high] if not is_floor else [None, None],
        "elevation_p": test.p_value,
        "d_rel": relative.estimate, "d_rel_ci": [relative.ci_low, relative.ci_high],
        "d_rel_p": relative.p_value,
        "cohen_d": cohen_d(rows, floor_rows) if not is_floor else 0.0,
    }


def _add_q_values(categories: dict[str, dict]) -> None:
    for klass in CONDITION_CLASSES:
        names = [n for n, row in categories.items() if row["condition_class"] == klass]
        q_values = benjamini_hochberg([categories[n]["d_rel_p"] for n in names])
        for name, q in zip(names, q_values, strict=True):
            categories[name]["d_rel_q"] = float(q)
            categories[name]["q_family"] = klass


def _paired_spread(treated: np.ndarray, floor: np.ndarray) -> dict:
    """``diff_sd`` and ``n_paired``: the spread of per-question (condition − floor) means over
    the questions that have both — what the paired elevation test and its power rest on."""
    differences = (treated - floor)[np.isfinite(treated) & np.isfinite(floor)]
    sd = float(differences.std(ddof=1)) if differences.size > 1 else float("nan")
    return {"diff_sd": sd, "n_paired": int(differences.size)}


def _d_rel_mde(estimate) -> float:
    """Smallest |d_rel| detectable at α = 0.05 with 80 % power, from the bootstrap CI's width
    (a normal approximation: (z_.975 + z_.8) · SE, SE = CI width / (2 · 1.96))."""
    if not (np.isfinite(estimate.ci_low) and np.isfinite(estimate.ci_high)):
        return float("nan")
    return float((1.959964 + 0.841621) * (estimate.ci_high - estimate.ci_low) / (2 * 1.959964))
