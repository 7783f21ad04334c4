"""Substitutions along the DTW alignment: which baseline symbol was aligned with which symbol
of the perturbed response, per category, against the same matrix between no-memory samples.

For one (baseline, response) pair the DTW path (:func:`memlens.metrics.path.dtw_path_batch`)
aligns baseline step ``i`` with response step ``j``; each path cell adds ``1 / path length`` to
the cell ``(baseline symbol, response symbol)`` of the pair's matrix, so a pair's matrix sums to
1. A response's matrix is the mean over its baselines; a category's matrix the mean over its
responses. The **net** rate of a substitution ``u → v`` (u ≠ v) is the category's rate minus
the floor's (no-memory samples against the baselines), in percentage points of path cells.

The top substitutions of a category (largest net rates, at the root and at the symbol level)
get a cluster-bootstrap interval over questions and a studentized two-sided p-value. They are
chosen by their point estimate, so each (category, level) family holds **every** off-diagonal
cell (the cells not tested enter with p = 1): the q-values stay conservative despite the
selection. Error control covers the whole table, categories × levels × cells, with the
two-level procedure of :func:`memlens.stats.direction.flag_family`. ``count`` is the number of path cells behind the cell in the category.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from memlens.metrics.path import dtw_path_batch
from memlens.stats.direction import MIN_QUESTIONS, flag_family, grouped_means, net_estimates
from memlens.stats.table import FLOOR_CATEGORY

COLUMNS = ["category", "condition_class", "level", "from_symbol", "to_symbol", "count",
           "n_responses", "n_questions", "rate_pct", "floor_rate_pct", "net_pp", "ci_low",
           "ci_high", "p_value", "q_value", "significant", "interpretable"]


def path_cells(baselines: Sequence[Sequence[str]], compared: Sequence[Sequence[str]]):
    """``(pair, from_code, to_code, weight, alphabet)`` of every DTW path cell of every pair;
    codes index ``alphabet`` (the symbols as strings), weights are 1 / the pair's path length.

    >>> pair, a, b, w, alphabet = path_cells([["x", "y"]], [["x", "x", "z"]])
    >>> [(int(p), alphabet[i], alphabet[j], round(float(v), 3)) for p, i, j, v in zip(pair, a, b, w)]
    [(0, 'x', 'x', 0.333), (0, 'x', 'x', 0.333), (0, 'y', 'z', 0.333)]
    """
    from memlens.metrics import encode_pairs  # lazy: pulls numba

    enc_a, enc_b = encode_pairs(baselines, compared)
    paths = dtw_path_batch(enc_a, enc_b)
    alphabet = [str(s) for s in enc_a.alphabet]
    from_codes = enc_a.codes[paths.pair, paths.i].astype(np.int64)
    to_codes = enc_b.codes[paths.pair, paths.j].astype(np.int64)
    weight = 1.0 / paths.lengths[paths.pair]
    return paths.pair, from_codes, to_codes, weight, alphabet


def substitution_matrix(pairs: pd.DataFrame, symbols: Sequence[str],
                        root_of: Mapping[str, str] | None = None, cells=None):
    """Per response: metadata and its mean path-cell matrix, flattened (responses × S²), its
    path-cell counts and the symbol list used (roots when ``root_of`` is given). ``cells`` may
    pass a precomputed :func:`path_cells` result."""
    pair, a, b, weight, alphabet = cells or path_cells(pairs["baseline_symbols"].tolist(),
                                                       pairs["compared_symbols"].tolist())
    names = list(symbols)
    if root_of is not None:
        names = sorted(set(root_of.get(s, s) for s in symbols))
    index = {name: k for k, name in enumerate(names)}
    lookup = np.array([index[root_of.get(s, s) if root_of is not None else s]
                       for s in alphabet] or [0], np.int64)
    size = len(names)
    codes, responses = pd.factorize(pairs["response_id"], sort=True)
    per_response = np.bincount(codes, minlength=len(responses)).astype(float)
    flat = codes[pair] * size * size + lookup[a] * size + lookup[b]
    values = np.bincount(flat, weights=weight / per_response[codes[pair]],
                         minlength=len(responses) * size * size)
    counts = np.bincount(flat, minlength=len(responses) * size * size)
    meta = (pairs.assign(_code=codes).drop_duplicates("_code").sort_values("_code")
            [["response_id", "question_id", "category", "condition_class"]]
            .reset_index(drop=True))
    return (meta, values.reshape(len(responses), size * size),
            counts.reshape(len(responses), size * size), names)


def substitutions(pairs: pd.DataFrame, symbols: Sequence[str], root_of: Mapping[str, str], *,
                  top: int = 5, seed: int = 0, n_bootstrap: int = 2_000, alpha: float = 0.05,
                  min_questions: int = MIN_QUESTIONS) -> pd.DataFrame:
    """The ``top`` substitutions (largest net rate) per category and level; see the module
    docstring. Rows are sorted by category, level, then net rate (descending)."""
    if pairs.empty:
        return pd.DataFrame(columns=COLUMNS)
    classes = dict(zip(pairs["category"], pairs["condition_class"], strict=False))
    rows = []
    path = path_cells(pairs["baseline_symbols"].tolist(), pairs["compared_symbols"].tolist())
    for level, mapping in (("root", root_of), ("symbol", None)):
        meta, values, counts, names = substitution_matrix(pairs, symbols, mapping, path)
        size = len(names)
        off = np.array([k // size != k % size for k in range(size * size)])
        g_codes, categories = pd.factorize(meta["category"], sort=True)
        if FLOOR_CATEGORY not in set(categories):
            return pd.DataFrame(columns=COLUMNS)
        floor_rows = g_codes == list(categories).index(FLOOR_CATEGORY)
        candidates: dict[str, list[int]] = {}
        for g, category in enumerate(categories):
            if category == FLOOR_CATEGORY:
                continue
            net = values[g_codes == g].mean(axis=0) - values[floor_rows].mean(axis=0)
            order = [k for k in np.argsort(-net, kind="stable") if off[k] and net[k] > 0]
            candidates[str(category)] = order[:top]
        chosen = sorted({k for cells in candidates.values() for k in cells})
        if not chosen:
            continue
        cats, n, point, rep, n_questions = grouped_means(
            meta, values[:, chosen], seed=seed, n_bootstrap=n_bootstrap)
        floor = cats.index(FLOOR_CATEGORY)
        est, low, high, p = net_estimates(point, rep, floor, n_questions)
        for category, cells in candidates.items():
            g = cats.index(category)
            in_category = (meta["category"] == category).to_numpy()
            for k in cells:
                col = chosen.index(k)
                rows.append({
                    "category": category, "condition_class": classes.get(category, ""),
                    "level": level, "from_symbol": names[k // size], "to_symbol": names[k % size],
                    "count": int(counts[in_category, k].sum()), "n_responses": int(n[g]),
                    "n_questions": int(n_questions[g]), "rate_pct": 100 * point[g, col],
                    "floor_rate_pct": 100 * point[floor, col], "net_pp": 100 * est[g, col],
                    "ci_low": 100 * low[g, col], "ci_high": 100 * high[g, col],
                    "p_value": p[g, col], "_untested": int(off.sum()) - len(cells),
                    "interpretable": bool(n_questions[g] >= min_questions
                                          and np.isfinite(low[g, col]))})
    return _flag(pd.DataFrame(rows), alpha)


def _flag(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """q-values over the whole table (:func:`memlens.stats.direction.flag_family`), each
    (category, level) family padded with p = 1 for its off-diagonal cells that were not tested
    (the top cells were chosen by their estimates, so the family is every cell)."""
    if table.empty:
        return pd.DataFrame(columns=COLUMNS)
    padding = []
    for (category, level), group in table.groupby(["category", "level"], sort=False):
        if group["interpretable"].any():
            padding += [{"category": category, "level": level, "p_value": 1.0,
                         "interpretable": True}] * int(group["_untested"].iloc[0])
    padded = pd.concat([table, pd.DataFrame(padding)], ignore_index=True) if padding else table
    flagged = flag_family(padded.assign(_row=np.arange(len(padded))), alpha,
                          [*padded.columns, "_row", "q_value", "significant"])
    flagged = flagged[flagged["_row"] < len(table)].sort_values("_row")
    return flagged[COLUMNS].reset_index(drop=True)
