"""Direction profiles: which roots and symbols gain or lose share when memory is added.

For one (response, baseline) pair the change of symbol ``s`` is
``Δ_s = share_s(response) − share_s(baseline)``, a share being the fraction of the sequence's
labelled steps that carry ``s`` (``unlabeled`` steps are not in the sequences). A response's
change is the mean of its pairs' changes (its K baselines); a category's **shift** is the mean
over its responses, in percentage points. The **floor shift** is the same mean over the
no-memory rows (each no-memory sample against the other baselines), and the reported **net**
shift is ``shift − floor shift``: what memory moved beyond two no-memory samples.

The net shift's 95 % interval comes from a cluster bootstrap over questions (one draw-count
matrix for every category and symbol, as in :mod:`memlens.stats.panel`); its two-sided p-value
is studentized (bootstrap SE, t over the category's questions), so it is continuous. Error
control covers the **whole table** a report shows (:func:`flag_family`): each (category, level)
is a family, families are selected by Holm over their Simes p-values (family-wise) and rows
within a selected family by BH, so a category with no
effect is flagged in ≤ α of runs however many categories the table holds (measured in
docs/operating-characteristics.md). Roots are scored from the same sequences with each symbol
replaced by its root.

:func:`paired_direction` compares two runs' profiles (B − A), paired: one draw of the questions
both runs hold per replicate, applied to both runs' net shifts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from memlens.stats.bootstrap import (
    draw_cluster_counts,
    studentized_p_value,
    summarize_replicates,
)
from memlens.stats.multiple import family_bh
from memlens.stats.table import FLOOR_CATEGORY

MIN_QUESTIONS = 8
"""Fewer questions than this and a cluster bootstrap over questions has too few distinct
resamples to trust its interval: the row is marked not interpretable and never significant."""
COLUMNS = ["category", "condition_class", "level", "symbol", "n_responses", "n_questions",
           "baseline_share_pct", "perturbed_share_pct", "shift_pp", "floor_shift_pp", "net_pp",
           "ci_low", "ci_high", "p_value", "q_value", "significant", "interpretable"]


def share_matrix(sequences: Sequence[Sequence[str]], symbols: Sequence[str]) -> np.ndarray:
    """Rows = sequences, columns = ``symbols``: the fraction of each sequence's steps per symbol
    (an empty sequence is all zeros).

    >>> share_matrix([["a", "a", "b"], []], ["a", "b"]).round(3).tolist()
    [[0.667, 0.333], [0.0, 0.0]]
    """
    lengths = np.fromiter((len(seq) for seq in sequences), np.int64, len(sequences))
    flat = [symbol for seq in sequences for symbol in seq]
    out = np.zeros((len(sequences), len(symbols)))
    if not flat:
        return out
    index = {symbol: k for k, symbol in enumerate(symbols)}
    codes = np.fromiter((index[symbol] for symbol in flat), np.int64, len(flat))
    rows = np.repeat(np.arange(len(sequences)), lengths)
    out = np.bincount(rows * len(symbols) + codes, minlength=out.size).reshape(out.shape)
    return out / np.maximum(lengths, 1)[:, None]


def row_sums(codes: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """``out[c] = sum of values[codes == c]`` (size × V), by sorting once (``np.add.at`` is slow).

    >>> row_sums(np.array([1, 0, 1]), np.array([[1.0], [2.0], [3.0]]), 3).tolist()
    [[2.0], [4.0], [0.0]]
    """
    out = np.zeros((size, values.shape[1]))
    if len(codes):
        order = np.argsort(codes, kind="stable")
        sorted_codes = codes[order]
        starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
        out[sorted_codes[starts]] = np.add.reduceat(values[order], starts, axis=0)
    return out


def response_changes(pairs: pd.DataFrame, symbols: Sequence[str],
                     root_of: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, np.ndarray,
                                                                          np.ndarray]:
    """Per response: its metadata, its mean share change (responses × symbols) and its mean
    baseline share (what the change is measured from).

    ``pairs`` has ``response_id``, ``question_id``, ``category``, ``condition_class``,
    ``baseline_symbols`` and ``compared_symbols``; with ``root_of`` every symbol is first
    mapped to its root (``symbols`` are then root names).
    """
    base_seqs, comp_seqs = pairs["baseline_symbols"].tolist(), pairs["compared_symbols"].tolist()
    if root_of is not None:
        base_seqs = [[root_of.get(s, s) for s in seq] for seq in base_seqs]
        comp_seqs = [[root_of.get(s, s) for s in seq] for seq in comp_seqs]
    base = share_matrix(base_seqs, symbols)
    delta = share_matrix(comp_seqs, symbols) - base
    codes, responses = pd.factorize(pairs["response_id"], sort=True)
    size = np.bincount(codes, minlength=len(responses)).astype(float)
    mean_delta = row_sums(codes, delta, len(responses)) / size[:, None]
    mean_base = row_sums(codes, base, len(responses)) / size[:, None]
    meta = (pairs.assign(_code=codes).drop_duplicates("_code").sort_values("_code")
            [["response_id", "question_id", "category", "condition_class"]]
            .reset_index(drop=True))
    return meta, mean_delta, mean_base


def grouped_means(meta: pd.DataFrame, values: np.ndarray, *, seed: int, n_bootstrap: int):
    """Point and replicate means of ``values`` (responses × V) per category, clustered by question.

    Returns ``(categories, n, point (G × V), replicates (B × G × V), questions per category)``;
    replicate means are NaN where a replicate drew no row of the category.
    """
    q_codes, questions = pd.factorize(meta["question_id"], sort=True)
    g_codes, categories = pd.factorize(meta["category"], sort=True)
    n_q, n_g, n_v = len(questions), len(categories), values.shape[1]
    cell = q_codes * n_g + g_codes
    count = np.bincount(cell, minlength=n_q * n_g).reshape(n_q, n_g).astype(float)
    total = row_sums(cell, values, n_q * n_g).reshape(n_q, n_g * n_v)
    draws = draw_cluster_counts(n_q, n_bootstrap, seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        point = total.sum(axis=0).reshape(n_g, n_v) / count.sum(axis=0)[:, None]
        rep_n = draws @ count
        rep = (draws @ total).reshape(n_bootstrap, n_g, n_v) / rep_n[:, :, None]
    rep[rep_n == 0] = np.nan
    return ([str(c) for c in categories], count.sum(axis=0).astype(int), point, rep,
            (count > 0).sum(axis=0).astype(int))


def net_estimates(point: np.ndarray, rep: np.ndarray, floor: int, n_clusters: np.ndarray,
                  confidence: float = 0.95):
    """(estimate, ci_low, ci_high, p) arrays (G × V) of ``mean_g − mean_floor``: percentile
    interval and a studentized p-value (bootstrap SE, t with ``n_clusters[g] − 1`` df;
    :func:`memlens.stats.bootstrap.studentized_p_value`)."""
    est = point - point[floor]
    reps = rep - rep[:, [floor], :]
    tail = (1.0 - confidence) / 2.0
    with np.errstate(all="ignore"):
        low, high = np.nanquantile(reps, [tail, 1.0 - tail], axis=0) if reps.size else (est, est)
    p = np.full(est.shape, np.nan)
    for g, v in np.ndindex(est.shape):
        if g != floor and np.isfinite(est[g, v]):
            p[g, v] = studentized_p_value(float(est[g, v]), reps[:, g, v], int(n_clusters[g]))
    return est, low, high, p


def levels(symbols: Sequence[str], root_of: Mapping[str, str]):
    """The profile's two levels as ``(level, names, mapping)``: ``root`` (each symbol replaced
    by its root; sorted) and ``symbol`` (as given, no mapping).

    >>> [(level, names) for level, names, _ in levels(["a.x", "b"], {"a.x": "A"})]
    [('root', ['A', 'b']), ('symbol', ['a.x', 'b'])]
    """
    roots = sorted(set(root_of.get(s, s) for s in symbols))
    return (("root", roots, root_of), ("symbol", list(symbols), None))


def direction_profile(pairs: pd.DataFrame, symbols: Sequence[str], root_of: Mapping[str, str], *,
                      seed: int = 0, n_bootstrap: int = 2_000, alpha: float = 0.05,
                      min_questions: int = MIN_QUESTIONS) -> pd.DataFrame:
    """The direction table: one row per (category, level, symbol); see the module docstring.

    Levels are ``root`` (symbols mapped by ``root_of``) and ``symbol``. ``interpretable`` is
    False when the category has fewer than ``min_questions`` questions (:data:`MIN_QUESTIONS`;
    its interval cannot be trusted); ``significant`` needs q ≤ ``alpha`` and an interpretable
    row. The floor itself is not a row.
    """
    if pairs.empty:
        return pd.DataFrame(columns=COLUMNS)
    classes = dict(zip(pairs["category"], pairs["condition_class"], strict=False))
    frames = []
    for level, names, mapping in levels(symbols, root_of):
        meta, delta, base = response_changes(pairs, names, mapping)
        if FLOOR_CATEGORY not in set(meta["category"]):
            return pd.DataFrame(columns=COLUMNS)
        cats, n, point, rep, n_questions = grouped_means(
            meta, np.hstack([delta, base]), seed=seed, n_bootstrap=n_bootstrap)
        v = len(names)
        floor = cats.index(FLOOR_CATEGORY)
        est, low, high, p = net_estimates(point[:, :v], rep[:, :, :v], floor, n_questions)
        for g, category in enumerate(cats):
            if g == floor:
                continue
            for k, name in enumerate(names):
                frames.append({
                    "category": category, "condition_class": classes.get(category, ""),
                    "level": level, "symbol": name, "n_responses": int(n[g]),
                    "n_questions": int(n_questions[g]),
                    "baseline_share_pct": 100 * point[g, v + k],
                    "perturbed_share_pct": 100 * (point[g, v + k] + point[g, k]),
                    "shift_pp": 100 * point[g, k], "floor_shift_pp": 100 * point[floor, k],
                    "net_pp": 100 * est[g, k], "ci_low": 100 * low[g, k],
                    "ci_high": 100 * high[g, k], "p_value": p[g, k],
                    "interpretable": bool(n_questions[g] >= min_questions
                                          and np.isfinite(low[g, k]))})
    return flag_family(pd.DataFrame(frames), alpha, COLUMNS)


def flag_family(table: pd.DataFrame, alpha: float, columns: Sequence[str], *,
                p_column: str = "p_value", q_column: str = "q_value") -> pd.DataFrame:
    """``table`` (in ``columns`` order) with ``q_column`` — :func:`memlens.stats.multiple.
    family_bh` over the whole table, one family per (category, level) — and ``significant``
    (q ≤ ``alpha`` on an interpretable row). Rows that are not interpretable do not enter the
    families (their q is NaN)."""
    if table.empty:
        return pd.DataFrame(columns=list(columns))
    p = table[p_column].to_numpy(float).copy()
    usable = table["interpretable"].to_numpy(bool)
    p[~usable] = np.nan
    families = list(zip(table["category"], table["level"], strict=True))
    q = family_bh(p, families, alpha)
    table = table.assign(**{q_column: q})
    if "significant" in columns:
        table["significant"] = np.isfinite(q) & (q <= alpha) & usable
    return table[list(columns)]


PAIRED_COLUMNS = ["category", "condition_class", "level", "symbol", "a", "b", "delta", "delta_ci",
                  "delta_p", "delta_q", "n_questions", "interpretable", "significant"]
_RUN_TAG = "\x00"


def paired_direction(pairs_a: pd.DataFrame, pairs_b: pd.DataFrame, symbols: Sequence[str],
                     root_of: Mapping[str, str], *, seed: int = 0, n_bootstrap: int = 2_000,
                     confidence: float = 0.95, alpha: float = 0.05,
                     min_questions: int = MIN_QUESTIONS) -> pd.DataFrame:
    """Δ net_pp (B − A) of two runs' direction profiles, paired over the questions both hold.

    ``pairs_a`` / ``pairs_b`` are :func:`direction_profile` inputs. Both are cut to the shared
    questions; the runs' responses then enter one :func:`grouped_means` as separate categories,
    so every replicate draws the shared questions once and applies that draw to both runs. Per
    (category, level, symbol) of the non-floor categories both runs hold: each run's ``net_pp``
    on the shared questions (``a``, ``b``), ``delta`` = b − a with its percentile interval
    (``delta_ci`` = [low, high]) and a studentized ``delta_p``, ``delta_q`` =
    :func:`flag_family` over the whole table (two-level: Holm over category × level families, then BH over symbols),
    ``n_questions`` = questions where both runs have the category. ``interpretable`` needs
    ``min_questions`` of them and a finite interval; ``significant`` needs q ≤ ``alpha`` too. Empty when no question is shared or a run has no floor rows.

    >>> def run(reply):  # one question: a floor sample and an ``age`` response
    ...     return pd.DataFrame({"response_id": ["f", "r"], "question_id": ["q1", "q1"],
    ...                          "category": ["no_perturbation", "age"],
    ...                          "condition_class": ["control", "persona"],
    ...                          "baseline_symbols": [["a", "b"]] * 2,
    ...                          "compared_symbols": [["a", "b"], list(reply)]})
    >>> table = paired_direction(run("ab"), run("aa"), ["a", "b"], {"a": "A", "b": "B"})
    >>> table.loc[table["level"] == "symbol", ["symbol", "a", "b", "delta"]].values.tolist()
    [['a', 0.0, 50.0, 50.0], ['b', 0.0, -50.0, -50.0]]
    """
    shared = set(pairs_a["question_id"]) & set(pairs_b["question_id"])
    parts = {"A": pairs_a[pairs_a["question_id"].isin(shared)],
             "B": pairs_b[pairs_b["question_id"].isin(shared)]}
    held = {run: set(part["category"]) for run, part in parts.items()}
    if not shared or any(FLOOR_CATEGORY not in names for names in held.values()):
        return pd.DataFrame(columns=PAIRED_COLUMNS)
    categories = sorted((held["A"] & held["B"]) - {FLOOR_CATEGORY})
    classes, questions = {}, {}
    for run, part in parts.items():
        classes.update(zip(part["category"], part["condition_class"], strict=True))
        for name, group in part.groupby("category")["question_id"]:
            questions[run, name] = set(group)
    combined = pd.concat([part.assign(
        response_id=run + _RUN_TAG + part["response_id"].astype(str),
        category=run + _RUN_TAG + part["category"].astype(str)) for run, part in parts.items()],
        ignore_index=True)
    rows = []
    for level, names, mapping in levels(symbols, root_of):
        meta, delta, _ = response_changes(combined, names, mapping)
        labels, _, point, rep, _ = grouped_means(meta, delta, seed=seed, n_bootstrap=n_bootstrap)
        index = {label: k for k, label in enumerate(labels)}
        nets = []  # per run: net point (C × V) and replicates (B × C × V) of the categories
        for run in ("A", "B"):
            floor = index[run + _RUN_TAG + FLOOR_CATEGORY]
            columns = [index[run + _RUN_TAG + category] for category in categories]
            nets.append((point[columns] - point[floor], rep[:, columns] - rep[:, [floor]]))
        (net_a, reps_a), (net_b, reps_b) = nets
        for j, category in enumerate(categories):
            a, b = net_a[j], net_b[j]
            n_questions = len(questions["A", category] & questions["B", category])
            for k, name in enumerate(names):
                reps = reps_b[:, j, k] - reps_a[:, j, k]
                e = summarize_replicates(float(b[k] - a[k]), reps, confidence=confidence)
                rows.append({
                    "category": category, "condition_class": classes.get(category, ""),
                    "level": level, "symbol": name, "a": 100 * a[k], "b": 100 * b[k],
                    "delta": 100 * e.estimate, "delta_ci": [100 * e.ci_low, 100 * e.ci_high],
                    "delta_p": studentized_p_value(e.estimate, reps, n_questions),
                    "n_questions": n_questions,
                    "interpretable": bool(n_questions >= min_questions
                                          and np.isfinite(e.ci_low))})
    return flag_family(pd.DataFrame(rows), alpha, PAIRED_COLUMNS, p_column="delta_p",
                       q_column="delta_q")
