"""Value contrasts within a category: do two values of one attribute (a 19- and a 72-year-old,
a man and a woman) get different reasoning on the same question?

For a category with at least two stimuli (values), every two responses of the category to the
same question are a pair (any samples); a pair of two different values ``(s, t)`` is a
*contrast pair*, scored by the drift (DTW, SRI) between the two responses.

**The test** asks whether ``s`` and ``t`` are answered more differently than the category's
responses are from each other anyway: memory of *any* value adds variability (a persona line
changes the prompt), so the no-memory floor is the wrong reference — two values treated alike
would pass against it. The null hypothesis is that the value labels are exchangeable within a
question; the p-value is a one-sided permutation test (labels permuted within each question,
the same ``n_bootstrap`` seeded permutations for every pair and metric) of the mean contrast
drift, ``p = (1 + #{T* ≥ T}) / (B + 1)``. ``reference_mean`` is the mean drift over all of the
category's pairs (what a pair of exchangeable values would show) and ``excess`` = ``mean`` −
``reference_mean``. A pair is **testable** only when the labels can move: its category needs
three or more values, or two or more responses per value and question (two values with one
sample each form one pair per question, whatever the labels). q-values: two-level control (Holm over families, BH within) over the
whole table (:func:`memlens.stats.multiple.family_bh`, one family per category and metric).
A contrast is ``detected`` when q ≤ α, ``excess`` > 0 and the row is interpretable (testable,
at least ``MIN_QUESTIONS`` = 8 questions).

Descriptive columns, kept beside the test: ``difference`` (mean contrast drift − mean floor)
and ``elevation_pct`` with cluster-bootstrap intervals over questions: how far apart the two
values' answers are in units of the no-memory floor. They are not the test.
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
from memlens.stats.multiple import family_bh
from memlens.stats.table import FLOOR_CATEGORY

COLUMNS = ["metric", "category", "condition_class", "value_a", "value_b", "n_pairs",
           "n_questions", "mean", "reference_mean", "excess", "floor_mean", "difference",
           "ci_low", "ci_high", "elevation_pct", "elevation_ci_low", "elevation_ci_high",
           "p_value", "q_value", "testable", "detected", "interpretable"]


def contrast_pairs(responses: pd.DataFrame) -> pd.DataFrame:
    """Every two responses of one category to the same question (any samples).

    ``responses`` has ``question_id``, ``category``, ``condition_class``, ``stimulus_id``,
    ``sample`` and ``symbols`` (one row per usable perturbed response). Returns one row per
    pair with ``value_a`` ≤ ``value_b`` (equal for two responses to one value: the pairs the
    permutation reference also uses) and ``row_a`` / ``row_b``, the positions of the two
    responses in ``responses`` (their sequences are ``responses["symbols"]``). Empty when no
    category has two values.
    """
    columns = ["category", "condition_class", "question_id", "sample", "value_a", "value_b",
               "row_a", "row_b"]
    if responses.empty or not contrast_design(responses)["categories_with_values"]:
        return pd.DataFrame(columns=columns)
    keys = ["category", "question_id"]
    left = responses[[*keys, "condition_class", "stimulus_id", "sample"]].reset_index(drop=True)
    left = left.assign(row=np.arange(len(left)), sample=left["sample"].astype(int),
                       stimulus_id=left["stimulus_id"].astype(str))
    merged = left.merge(left[[*keys, "stimulus_id", "row"]], on=keys, suffixes=("_a", "_b"))
    merged = merged[(merged["stimulus_id_a"] < merged["stimulus_id_b"])
                    | ((merged["stimulus_id_a"] == merged["stimulus_id_b"])
                       & (merged["row_a"] < merged["row_b"]))]
    merged = merged.rename(columns={"stimulus_id_a": "value_a", "stimulus_id_b": "value_b"})
    merged = merged.sort_values(["category", "value_a", "value_b", "question_id", "sample"],
                                kind="stable")
    return merged[columns].reset_index(drop=True)


def score_contrast_pairs(pairs: pd.DataFrame, responses: pd.DataFrame) -> pd.DataFrame:
    """``pairs`` with ``dtw`` and ``sri`` columns: the responses are encoded once and the pairs
    scored in one compiled batch."""
    if pairs.empty:
        return pairs.assign(dtw=pd.Series(dtype=float), sri=pd.Series(dtype=float))
    from memlens.metrics import drift_batch, encode  # lazy: pulls numba

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
    serves the descriptive intervals of every pair and metric, one set of ``n_bootstrap``
    within-question label permutations (seeded) the tests.
    """
    if scored.empty or floor.empty:
        return pd.DataFrame(columns=COLUMNS)
    cross = scored[scored["value_a"] != scored["value_b"]].reset_index(drop=True)
    if cross.empty:
        return pd.DataFrame(columns=COLUMNS)
    label_codes, labels = pd.factorize(pd.MultiIndex.from_frame(
        cross[["category", "value_a", "value_b"]].astype(str)))
    n_labels = len(labels)
    clusters, _ = pd.factorize(np.concatenate([cross["question_id"].astype(str).to_numpy(),
                                               floor["question_id"].astype(str).to_numpy()]))
    groups = np.concatenate([label_codes, np.full(len(floor), n_labels)])
    group_names = np.array([f"{k:08d}" for k in range(n_labels + 1)])[groups]
    counts = draw_cluster_counts(int(clusters.max()) + 1, n_bootstrap, seed)
    per_label = cross.assign(_label=label_codes).groupby("_label", sort=True)
    n_pairs = per_label.size().to_numpy()
    n_questions = per_label["question_id"].nunique().to_numpy()
    first = per_label.head(1).set_index("_label").sort_index()
    tests = {metric: permutation_tests(scored, metric, seed=seed, n_permutations=n_bootstrap)
             for metric in metrics}
    rows = []
    for metric in metrics:
        values = np.concatenate([cross[metric].to_numpy(float), floor[metric].to_numpy(float)])
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
        for k in range(n_labels):
            d, e = estimates["diff"][k], estimates["elev"][k]
            key = (first.at[k, "category"], first.at[k, "value_a"], first.at[k, "value_b"])
            test = tests[metric].get(key, {})
            testable = bool(test.get("testable", False))
            rows.append({
                "metric": metric, "category": key[0],
                "condition_class": first.at[k, "condition_class"],
                "value_a": key[1], "value_b": key[2],
                "n_pairs": int(n_pairs[k]), "n_questions": int(n_questions[k]),
                "mean": float(means[k]), "reference_mean": test.get("reference_mean", np.nan),
                "excess": float(means[k]) - test.get("reference_mean", np.nan),
                "floor_mean": floor_mean,
                "difference": d.estimate, "ci_low": d.ci_low, "ci_high": d.ci_high,
                "elevation_pct": e.estimate, "elevation_ci_low": e.ci_low,
                "elevation_ci_high": e.ci_high,
                "p_value": test.get("p_value", np.nan) if testable else np.nan,
                "testable": testable,
                "interpretable": bool(testable and n_questions[k] >= min_questions
                                      and np.isfinite(d.ci_low))})
    table = pd.DataFrame(rows)
    p = np.where(table["interpretable"], table["p_value"], np.nan)
    table["q_value"] = family_bh(p, list(zip(table["category"], table["metric"], strict=True)),
                                 alpha)
    table["detected"] = (np.isfinite(table["q_value"]) & (table["q_value"] <= alpha)
                         & (table["excess"] > 0) & table["interpretable"])
    return table[COLUMNS]


def permutation_tests(scored: pd.DataFrame, metric: str, *, seed: int = 0,
                      n_permutations: int = 2_000) -> dict:
    """Per (category, value a, value b): ``p_value`` of the one-sided within-question label
    permutation test of the mean contrast drift, ``reference_mean`` (the mean over all of the
    category's pairs) and ``testable`` (the labels can move). Vectorised: one B × pairs
    bincount per category."""
    rng = np.random.default_rng(seed)
    out = {}
    for category, part in scored.groupby("category", sort=True):
        rows = np.unique(np.concatenate([part["row_a"].to_numpy(int),
                                         part["row_b"].to_numpy(int)]))
        position = {row: k for k, row in enumerate(rows)}
        value_of = {}
        for column, row_column in (("value_a", "row_a"), ("value_b", "row_b")):
            value_of.update(zip(part[row_column].to_numpy(int), part[column].astype(str),
                                strict=True))
        values = sorted(set(value_of.values()))
        n_values = len(values)
        label = np.array([values.index(value_of[row]) for row in rows])
        question_of = {}
        for row_column in ("row_a", "row_b"):
            question_of.update(zip(part[row_column].to_numpy(int),
                                   part["question_id"].astype(str), strict=True))
        question, _ = pd.factorize(np.array([question_of[row] for row in rows]))
        a = np.array([position[r] for r in part["row_a"].to_numpy(int)])
        b = np.array([position[r] for r in part["row_b"].to_numpy(int)])
        drift = part[metric].to_numpy(float)
        observed = _pair_means(label[None, :], a, b, drift, n_values)[0]
        grouped = np.argsort(question, kind="stable")
        keys = question[None, :] + rng.random((n_permutations, len(rows)))
        shuffled = np.empty((n_permutations, len(rows)), dtype=int)
        shuffled[:, grouped] = label[np.argsort(keys, axis=1, kind="stable")]
        permuted = _pair_means(shuffled, a, b, drift, n_values)
        reference = float(np.nanmean(drift))
        for i in range(n_values):
            for j in range(i + 1, n_values):
                cell = i * n_values + j
                null = permuted[:, cell]
                moved = bool(np.nanstd(null) > 1e-12)
                hits = np.count_nonzero(null >= observed[cell] - 1e-12)
                out[str(category), values[i], values[j]] = {
                    "p_value": float((1 + hits) / (n_permutations + 1)),
                    "reference_mean": reference, "testable": moved}
    return out


def _pair_means(labels: np.ndarray, a: np.ndarray, b: np.ndarray, drift: np.ndarray,
                n_values: int) -> np.ndarray:
    """Mean drift per (label i ≤ label j) cell for every row of ``labels`` (B × responses):
    B × n_values² (NaN where a cell has no pair)."""
    la, lb = labels[:, a], labels[:, b]
    cell = np.minimum(la, lb) * n_values + np.maximum(la, lb)
    n_b, size = labels.shape[0], n_values * n_values
    flat = (np.arange(n_b)[:, None] * size + cell).ravel()
    sums = np.bincount(flat, weights=np.tile(drift, n_b), minlength=n_b * size)
    counts = np.bincount(flat, minlength=n_b * size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sums / counts).reshape(n_b, size)


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
