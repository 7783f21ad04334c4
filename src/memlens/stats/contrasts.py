"""Value contrasts within a category: do two values of one attribute (a 19- and a 72-year-old,
a man and a woman) get different reasoning on the same question?

For a category with at least two stimuli (values), every pair of values ``(s, t)`` is scored on
every question and sample answered under both: the drift (DTW, SRI) between the response to
``s`` and the response to ``t``. Its mean is compared with the **floor** — the drift between
no-memory samples, i.e. the drift table's ``no_perturbation`` rows — as ``difference`` (mean
contrast − mean floor) and ``elevation_pct``, with a cluster-bootstrap interval over questions
and a two-sided bootstrap p-value (one seeded draw-count matrix for every
pair and metric, :mod:`memlens.stats.bootstrap`). p-values are Benjamini–Hochberg adjusted across every value pair of the run
and metric. A contrast is ``detected`` when q ≤ α, the contrast drifts *more* than the floor and it rests
on at least ``MIN_QUESTIONS`` (8) questions (else it is marked not interpretable).

Two values answered alike drift less than two no-memory samples would (``difference`` < 0):
that is reported, never called a contrast.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from memlens.stats.bootstrap import (
    cluster_sums,
    draw_cluster_counts,
    elevation_pct,
    mean_difference,
    replicate_moments,
    sample_moments,
    select_column,
    summarize_replicates,
)
from memlens.stats.direction import MIN_QUESTIONS
from memlens.stats.multiple import benjamini_hochberg
from memlens.stats.table import FLOOR_CATEGORY

COLUMNS = ["metric", "category", "condition_class", "value_a", "value_b", "n_pairs",
           "n_questions", "mean", "floor_mean", "difference", "ci_low", "ci_high",
           "elevation_pct", "elevation_ci_low", "elevation_ci_high", "p_value", "q_value",
           "detected", "interpretable"]


def contrast_pairs(responses: pd.DataFrame) -> pd.DataFrame:
    """Every (value a, value b) pair of one category answered on the same question and sample.

    ``responses`` has ``question_id``, ``category``, ``condition_class``, ``stimulus_id``,
    ``sample`` and ``symbols`` (one row per usable perturbed response). Returns one row per
    pair with ``value_a`` < ``value_b`` and ``row_a`` / ``row_b``, the positions of the two
    responses in ``responses`` (their sequences are ``responses["symbols"]``).
    """
    columns = ["category", "condition_class", "question_id", "sample", "value_a", "value_b",
               "row_a", "row_b"]
    if responses.empty:
        return pd.DataFrame(columns=columns)
    keys = ["category", "question_id", "sample"]
    left = responses[[*keys, "condition_class", "stimulus_id"]].reset_index(drop=True)
    left = left.assign(row=np.arange(len(left)), sample=left["sample"].astype(int))
    merged = left.merge(left[[*keys, "stimulus_id", "row"]], on=keys, suffixes=("_a", "_b"))
    merged = merged[merged["stimulus_id_a"].astype(str) < merged["stimulus_id_b"].astype(str)]
    merged = merged.rename(columns={"stimulus_id_a": "value_a", "stimulus_id_b": "value_b"})
    merged = merged.sort_values(["category", "value_a", "value_b", "question_id", "sample"],
                                kind="stable")
    return merged.rename(columns={"row_a": "row_a", "row_b": "row_b"})[columns] \
        .reset_index(drop=True)


def score_contrast_pairs(pairs: pd.DataFrame, responses: pd.DataFrame) -> pd.DataFrame:
    """``pairs`` with ``dtw`` and ``sri`` columns: the responses are encoded once and the pairs
    scored in one compiled batch."""
    if pairs.empty:
        return pairs.assign(dtw=pd.Series(dtype=float), sri=pd.Series(dtype=float))
    from memlens.metrics import drift_batch, encode

    encoded = encode(responses["symbols"].tolist())
    row_a, row_b = pairs["row_a"].to_numpy(int), pairs["row_b"].to_numpy(int)
    scores = drift_batch((encoded.codes[row_a], encoded.lengths[row_a]),
                         (encoded.codes[row_b], encoded.lengths[row_b]))
    return pairs.assign(dtw=scores["dtw"], sri=scores["sri"])


def value_contrasts(scored: pd.DataFrame, floor: pd.DataFrame, *,
                    metrics: Sequence[str] = ("dtw", "sri"), seed: int = 0,
                    n_bootstrap: int = 2_000, alpha: float = 0.05,
                    min_questions: int = MIN_QUESTIONS) -> pd.DataFrame:
    """The contrast table (see the module docstring).

    ``scored`` comes from :func:`score_contrast_pairs`; ``floor`` holds the drift table's
    ``no_perturbation`` rows (``question_id`` and the metric columns). One draw-count matrix
    serves every value pair and metric.
    """
    if scored.empty or floor.empty:
        return pd.DataFrame(columns=COLUMNS)
    label_codes, labels = pd.factorize(pd.MultiIndex.from_frame(
        scored[["category", "value_a", "value_b"]].astype(str)))
    n_labels = len(labels)
    clusters, _ = pd.factorize(np.concatenate([scored["question_id"].astype(str).to_numpy(),
                                               floor["question_id"].astype(str).to_numpy()]))
    groups = np.concatenate([label_codes, np.full(len(floor), n_labels)])
    group_names = np.array([f"{k:08d}" for k in range(n_labels + 1)])[groups]
    counts = draw_cluster_counts(int(clusters.max()) + 1, n_bootstrap, seed)
    per_label = scored.assign(_label=label_codes).groupby("_label", sort=True)
    n_pairs = per_label.size().to_numpy()
    n_questions = per_label["question_id"].nunique().to_numpy()
    first = per_label.head(1).set_index("_label").sort_index()
    rows = []
    for metric in metrics:
        values = np.concatenate([scored[metric].to_numpy(float), floor[metric].to_numpy(float)])
        sums = cluster_sums(values, clusters, group_names)
        point, reps = sample_moments(sums), replicate_moments(sums, counts)
        ref = sums.column(f"{n_labels:08d}")
        estimates = {}
        for name, statistic in (("diff", mean_difference), ("elev", elevation_pct)):
            point_stat = statistic(point, select_column(point, ref))
            rep_stat = statistic(reps, select_column(reps, ref))
            estimates[name] = [summarize_replicates(float(point_stat[k]), rep_stat[:, k])
                               for k in range(n_labels)]
        floor_mean = float(floor[metric].mean())
        means = per_label[metric].mean().to_numpy(float)
        block = []
        for k in range(n_labels):
            d, e = estimates["diff"][k], estimates["elev"][k]
            block.append({
                "metric": metric, "category": first.at[k, "category"],
                "condition_class": first.at[k, "condition_class"],
                "value_a": first.at[k, "value_a"], "value_b": first.at[k, "value_b"],
                "n_pairs": int(n_pairs[k]), "n_questions": int(n_questions[k]),
                "mean": float(means[k]), "floor_mean": floor_mean,
                "difference": d.estimate, "ci_low": d.ci_low, "ci_high": d.ci_high,
                "elevation_pct": e.estimate, "elevation_ci_low": e.ci_low,
                "elevation_ci_high": e.ci_high, "p_value": d.p_value,
                "interpretable": bool(n_questions[k] >= min_questions and np.isfinite(d.ci_low))})
        q = benjamini_hochberg([row["p_value"] for row in block])
        for row, q_value in zip(block, q, strict=True):
            row["q_value"] = float(q_value)
            row["detected"] = bool(np.isfinite(q_value) and q_value <= alpha
                                   and row["difference"] > 0 and row["interpretable"])
        rows.extend(block)
    return pd.DataFrame(rows, columns=COLUMNS)


def contrast_design(responses: pd.DataFrame) -> dict:
    """Which categories have several values (and how many), which have one: what the report
    says when no contrast can be formed.

    >>> contrast_design(pd.DataFrame({"category": ["age", "age", "gender"],
    ...                               "stimulus_id": ["a1", "a2", "g1"]}))
    {'categories_with_values': {'age': 2}, 'single_value_categories': ['gender']}
    """
    values = responses.groupby("category")["stimulus_id"].nunique().to_dict() \
        if not responses.empty else {}
    return {"categories_with_values": {c: int(n) for c, n in sorted(values.items()) if n >= 2},
            "single_value_categories": sorted(c for c, n in values.items() if n < 2
                                              and c != FLOOR_CATEGORY)}
