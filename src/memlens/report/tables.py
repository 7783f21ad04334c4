"""Report tables: the statistics flattened into data frames, written as CSV and Parquet."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memlens.fileio import atomic_path

CATEGORY_FIELDS = ("n", "mean", "sd", "elevation_pct", "elevation_p", "d_rel", "d_rel_p",
                   "d_rel_q", "cohen_d", "letters")


def category_table(stats: dict) -> pd.DataFrame:
    """One row per (metric, category): class, n, mean, sd, elevation, d_rel with CI, d, letters.

    >>> stats = {"metrics": {"dtw": {"categories": {"age": {"condition_class": "persona",
    ...     "n": 3, "d_rel": 0.5, "d_rel_ci": [0.1, 0.9]}}}}}
    >>> category_table(stats)[["metric", "category", "d_rel", "d_rel_ci_low"]].values.tolist()
    [['dtw', 'age', 0.5, 0.1]]
    """
    rows = []
    for metric, block in (stats.get("metrics") or {}).items():
        for category, entry in (block.get("categories") or {}).items():
            row = {"metric": metric, "category": category,
                   "condition_class": entry.get("condition_class")}
            row.update({key: entry.get(key) for key in CATEGORY_FIELDS})
            for key in ("d_rel_ci", "elevation_ci"):
                low, high = (entry.get(key) or [None, None])[:2]
                row[f"{key}_low"], row[f"{key}_high"] = low, high
            rows.append(row)
    return pd.DataFrame(rows)


def mixed_model_table(stats: dict) -> pd.DataFrame:
    """One row per (metric, term) of the mixed model, whatever fields each term carries."""
    rows = []
    for metric, block in (stats.get("metrics") or {}).items():
        model = block.get("mixed_model") or {}
        terms = model.get("coefficients", model.get("terms"))
        if isinstance(terms, dict):
            terms = [{"term": name, **(value if isinstance(value, dict) else {"estimate": value})}
                     for name, value in terms.items()]
        for term in terms or []:
            flat = {}
            for key, value in term.items():
                if isinstance(value, list | tuple) and len(value) == 2:
                    flat[f"{key}_low"], flat[f"{key}_high"] = value
                else:
                    flat[key] = value
            rows.append({"metric": metric, **flat})
    return pd.DataFrame(rows)


def quality_table(quality: dict) -> pd.DataFrame:
    """The data-quality counts as a two-column table."""
    return pd.DataFrame({"item": list(quality), "count": list(quality.values())})


def write_table(frame: pd.DataFrame, out_dir: Path, name: str) -> None:
    """Write ``name.csv`` and ``name.parquet`` (mixed-type object columns stored as text)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_path(out_dir / f"{name}.csv") as temporary:
        frame.to_csv(temporary, index=False)
    parquet = frame.copy()
    for column in parquet.columns:
        if parquet[column].dtype == object:
            parquet[column] = parquet[column].map(lambda v: None if v is None else str(v))
    with atomic_path(out_dir / f"{name}.parquet") as temporary:
        parquet.to_parquet(temporary, index=False)
