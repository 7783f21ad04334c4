"""Drift-versus-capability figure of a mitigation evaluation (Table 2 as a picture).

Drawn in ``report`` like every figure: ``memlens mitigate eval`` asks for it after
``memlens.mitigation.evaluate.evaluate_models`` (the evaluation never imports matplotlib).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

from memlens.ontology.gold import wilson_interval

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


def _finite(value) -> bool:
    return value is not None and isinstance(value, int | float) and bool(np.isfinite(value))


def pooled_capability(row) -> tuple[float, float, float, int, str] | None:
    """Pooled capability accuracy over the measured tasks (MMLU, GSM8K, IF strict: k and n
    summed) with its Wilson 95 % interval: ``(score, lo, hi, n, label)``; None when no task
    has a score (smoke tests and unmeasured backends have none).

    >>> pooled_capability({"MMLU": 0.5, "MMLU_n": 10, "GSM8K": 0.0, "GSM8K_n": 10})[:2]
    (0.25, 0.11186...)
    """
    used, hits, total = [], 0, 0
    for name in ("MMLU", "GSM8K", "IF(strict)"):
        value, n = row.get(name), row.get(f"{name}_n")
        if _finite(value) and _finite(n) and n > 0:
            used.append(name)
            hits += int(round(float(value) * int(n)))
            total += int(n)
    if not total:
        return None
    low, high = wilson_interval(hits, total)
    return hits / total, float(low), float(high), total, \
        f"pooled capability ({', '.join(used)}), Wilson 95 % CI"


def _y_value(row):
    pooled = pooled_capability(row)
    if pooled is not None:
        return pooled[0], pooled[1], pooled[2], pooled[4]
    if _finite(row.get("Helpfulness")):
        low, high = row.get("Helpfulness_lo"), row.get("Helpfulness_hi")
        scale = lambda v: float(v) / 5.0 if _finite(v) else None  # noqa: E731
        return scale(row["Helpfulness"]), scale(low), scale(high), \
            "helpfulness / 5 (judge), bootstrap 95 % CI"
    return None


def drift_capability_figure(table, path: str | Path) -> list[Path]:
    """Held-out DTW (x, lower is better) against capability (y), one point per model with 95 %
    error bars (bootstrap for DTW, Wilson for pooled capability), the first row (the base model)
    drawn as a star; labelled with each model's weights fingerprint. Saves ``path``.png / .svg.

    Without any capability score, y is the judge's helpfulness / 5; with neither, the models are
    drawn on one line at their DTW (no capability measured, said on the axis)."""
    rows = table.to_dict("records")
    figure, axes = plt.subplots(figsize=(6.0, 4.2))
    label = "no capability or helpfulness measured"
    for index, row in enumerate(rows):
        found = _y_value(row)
        y, y_low, y_high = (found[0], found[1], found[2]) if found else (0.0, None, None)
        if found:
            label = found[3]
        x = row.get("DTW", float("nan"))
        x_low, x_high = row.get("DTW_lo"), row.get("DTW_hi")
        xerr = [[x - x_low], [x_high - x]] if _finite(x_low) and _finite(x_high) else None
        yerr = [[y - y_low], [y_high - y]] if _finite(y_low) and _finite(y_high) else None
        axes.errorbar([x], [y], xerr=xerr, yerr=yerr, fmt="*" if index == 0 else "o",
                      markersize=13 if index == 0 else 7, capsize=3, zorder=3)
        name = str(row["model"])[-24:]
        fingerprint = row.get("fingerprint")
        tag = f"{name} [{fingerprint}]" if isinstance(fingerprint, str) and fingerprint else name
        n = row.get("DTW_n")
        axes.annotate(f"{tag} n={int(n) if _finite(n) else 0}", (x, y),
                      textcoords="offset points", xytext=(6, 4), fontsize=7)
    axes.set_xlabel("held-out drift (DTW, lower is better), bootstrap 95 % CI")
    axes.set_ylabel(label, fontsize=8)
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
