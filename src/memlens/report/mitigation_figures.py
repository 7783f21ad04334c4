"""Drift-versus-capability figure of a mitigation evaluation (Table 2 as a picture)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from memlens.fileio import atomic_path  # noqa: E402

CAPABILITY_COLUMNS = ("MMLU", "GSM8K", "IF(strict)", "IF(loose)")


def capability_score(row) -> tuple[float, str]:
    """Mean of the capability columns present in ``row``; else helpfulness / 5; else diversity.

    >>> capability_score({"MMLU": 0.5, "GSM8K": 0.25, "Helpfulness": 4})
    (0.375, 'mean capability (MMLU, GSM8K)')
    >>> capability_score({"Helpfulness": 4.0})
    (0.8, 'helpfulness / 5')
    """
    def present(name):
        value = row.get(name)
        return value is not None and not (isinstance(value, float) and np.isnan(value))

    used = [name for name in CAPABILITY_COLUMNS if present(name)]
    if used:
        return float(np.mean([row[name] for name in used])), \
            f"mean capability ({', '.join(used)})"
    if present("Helpfulness"):
        return float(row["Helpfulness"]) / 5.0, "helpfulness / 5"
    return float(row.get("Diversity", float("nan"))), "lexical diversity"


def drift_capability_figure(table, path: str | Path) -> list[Path]:
    """Scatter of held-out DTW (x, lower is better) against capability (y), one point per model,
    the first row (the base model) drawn as a star; saves ``path``.png and ``path``.svg."""
    rows = table.to_dict("records")
    figure, axes = plt.subplots(figsize=(5.5, 4.0))
    label = "capability"
    for index, row in enumerate(rows):
        y, label = capability_score(row)
        x = row.get("DTW", float("nan"))
        axes.scatter([x], [y], marker="*" if index == 0 else "o", s=160 if index == 0 else 60,
                     zorder=3)
        axes.annotate(str(row["model"])[-28:], (x, y), textcoords="offset points",
                      xytext=(6, 4), fontsize=8)
    axes.set_xlabel("held-out drift (DTW, lower is better)")
    axes.set_ylabel(label)
    axes.set_title("Drift versus capability")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    base = Path(path)
    written = []
    for suffix in (".png", ".svg"):
        target = base.with_suffix(suffix)
        with atomic_path(target) as temporary:
            figure.savefig(temporary, format=suffix[1:], dpi=150)
        written.append(target)
    plt.close(figure)
    return written
