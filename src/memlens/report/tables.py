"""Report tables: the statistics flattened into data frames, written as CSV and Parquet."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memlens.fileio import atomic_path
from memlens.stats.results import DriftStats

CATEGORY_FIELDS = ("n", "mean", "sd", "elevation_pct", "elevation_p", "d_rel", "d_rel_p",
                   "d_rel_q", "cohen_d", "letters")


def category_table(stats: DriftStats | None) -> pd.DataFrame:
    """One row per (metric, category): class, n, mean, sd, elevation, d_rel with CI, d, letters
    (an empty frame when no statistics were computed)."""
    rows = []
    for metric, block in (stats.metrics if stats else {}).items():
        for category, entry in block.categories.items():
            row = {"metric": metric, "category": category,
                   "condition_class": entry.condition_class}
            row.update({key: getattr(entry, key) for key in CATEGORY_FIELDS})
            for key in ("d_rel_ci", "elevation_ci"):
                row[f"{key}_low"], row[f"{key}_high"] = getattr(entry, key)
            rows.append(row)
    return pd.DataFrame(rows)


def persona_table(persona: pd.DataFrame, columns: list[str], persona_ok: bool) -> pd.DataFrame:
    """The report's persona rows (``columns`` of ``category_table``), highest d_rel first per
    metric, with an ``interpretable`` column: "no (instrument not valid)" on every row when the
    instrument did not pass its validity checks."""
    if persona.empty:
        return persona
    table = persona.sort_values(["metric", "d_rel"], ascending=[True, False])[columns].copy()
    table["interpretable"] = "yes" if persona_ok else "no (instrument not valid)"
    return table.reset_index(drop=True)


def mixed_model_table(stats: DriftStats | None) -> pd.DataFrame:
    """One row per (metric, term) of the mixed model: estimate, se, CI and p-value."""
    rows = []
    for metric, block in (stats.metrics if stats else {}).items():
        model = block.mixed_model
        for term, coefficient in (model.coefficients if model else {}).items():
            low, high = coefficient.ci
            rows.append({"metric": metric, "term": term, "estimate": coefficient.estimate,
                         "se": coefficient.se, "ci_low": low, "ci_high": high,
                         "p_value": coefficient.p_value})
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
