"""``analyze()``: the full statistics of a drift table, in the structure of ``stats.json``."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from memlens.errors import MemlensError
from memlens.stats.mixed import fit_mixed_model
from memlens.stats.panel import category_statistics
from memlens.stats.results import DriftStats
from memlens.stats.table import FLOOR_CATEGORY, metric_columns, validate_drift_table
from memlens.stats.validity import convergence, validity_verdict

STATS_FORMAT_VERSION = 1


def analyze(
    table: pd.DataFrame,
    *,
    metrics: Sequence[str] | None = None,
    seed: int = 0,
    n_bootstrap: int = 10_000,
    model: str | None = None,
    mixed_model: bool = True,
) -> DriftStats:
    """Analyse a drift table into a typed :class:`~memlens.stats.results.DriftStats`
    (``.to_json()`` is ``stats.json``; numbers that cannot be computed are ``None``).

    Keys: ``settings``, ``n_rows``, ``n_questions``, ``metrics.<metric>`` (``floor``, ``noise``,
    ``categories.<category>``, ``classes``, ``pairwise``, ``mixed_model``), ``convergence``
    and ``validity``. ``metrics`` limits the analysed metric columns (default: all). A table
    holding several models (a ``model`` column) needs ``model`` to pick one. ``mixed_model=False``
    skips the mixed-effects fits (simulation studies). Raises :class:`MemlensError` on bad input.
    """
    if n_bootstrap < 100:
        raise MemlensError(f"--bootstrap must be at least 100 (got {n_bootstrap})")
    table = _select_model(validate_drift_table(table), model)
    names = _select_metrics(table, metrics)
    results = {}
    for metric in names:
        result = category_statistics(table, metric, seed=seed, n_bootstrap=n_bootstrap)
        if mixed_model:
            result["mixed_model"] = fit_mixed_model(
                table[metric].to_numpy(float), table["category"].to_numpy(),
                table["question_id"].to_numpy(), reference=FLOOR_CATEGORY, metric=metric)
        results[metric] = result
    converged = convergence(results)
    stats = {
        "format_version": STATS_FORMAT_VERSION,
        "settings": {"seed": seed, "n_bootstrap": n_bootstrap, "confidence": 0.95,
                     "model": model, "floor": FLOOR_CATEGORY, "noise_reference": "noise (pooled)"},
        "n_rows": int(len(table)),
        "n_questions": int(table["question_id"].nunique()),
        "metrics": results,
        "convergence": converged,
        "validity": validity_verdict(results, converged),
    }
    return DriftStats.model_validate(to_jsonable(stats))


def _select_model(table: pd.DataFrame, model: str | None) -> pd.DataFrame:
    models = sorted(table["model"].unique()) if "model" in table.columns else []
    if model is not None:
        if model not in models:
            raise MemlensError(f"model {model!r} is not in the table's 'model' column "
                               f"(found: {', '.join(models) or 'no model column'})")
        return table[table["model"] == model].reset_index(drop=True)
    if len(models) > 1:
        raise MemlensError(f"the table holds {len(models)} models ({', '.join(models[:5])}); "
                           "analyse one at a time with --model NAME")
    return table


def _select_metrics(table: pd.DataFrame, metrics: Sequence[str] | None) -> list[str]:
    available = metric_columns(table)
    if metrics is None:
        return available
    unknown = [name for name in metrics if name not in available]
    if unknown:
        raise MemlensError(f"metric column(s) {', '.join(map(repr, unknown))} not in the table "
                           f"(available: {', '.join(available)})")
    if not metrics:
        raise MemlensError("no metric selected")
    return list(metrics)


def to_jsonable(value):
    """Convert numpy scalars/arrays to Python and non-finite floats to ``None``, recursively.

    >>> to_jsonable({"a": np.float64("nan"), "b": [np.int64(2), float("inf")], "c": (1.5,)})
    {'a': None, 'b': [2, None], 'c': [1.5]}
    """
    if isinstance(value, dict):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [to_jsonable(item) for item in value]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer | int):
        return int(value)
    if isinstance(value, np.floating | float):
        return float(value) if math.isfinite(value) else None
    return value
