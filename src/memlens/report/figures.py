"""Report figures (matplotlib, Agg): validity, persona forest plot, all-category tiers, comparison.

Each function takes the typed statistics (``memlens.stats.results.DriftStats``) and returns a
matplotlib Figure; ``save_figure`` writes PNG + SVG and returns the PNG as base64 for inlining.
"""

from __future__ import annotations

import base64
import io
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from memlens.fileio import atomic_path, atomic_write_bytes, output_dir  # noqa: E402
from memlens.stats.results import CategoryStats, DriftStats  # noqa: E402

METRICS = ("dtw", "sri")
CLASS_COLORS = {"control": "#7f7f7f", "noise": "#4c72b0", "persona": "#dd8452",
                "life_event": "#c44e52"}


def _num(value) -> float:
    """A finite float or NaN (stats.json stores NaN as null)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return math.nan
    return value if math.isfinite(value) else math.nan


def _ci(entry: CategoryStats, key: str) -> tuple[float, float]:
    low, high = getattr(entry, key)
    return _num(low), _num(high)


def categories_of(stats: DriftStats, metric: str,
                  classes: tuple[str, ...]) -> list[tuple[str, CategoryStats]]:
    """(category, entry) pairs of one metric whose condition class is in ``classes``."""
    block = stats.metrics.get(metric)
    return [(name, entry) for name, entry in (block.categories if block else {}).items()
            if entry.condition_class in classes]


def _p_label(p: float) -> str:
    if math.isnan(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "ns"


def _elevation_panel(ax, rows: list[tuple[str, CategoryStats]], title: str) -> None:
    """Horizontal bars of % elevation over the floor with CIs and significance marks."""
    names = [name for name, _ in rows]
    values = [_num(entry.elevation_pct) for _, entry in rows]
    cis = [_ci(entry, "elevation_ci") for _, entry in rows]
    colors = [CLASS_COLORS.get(entry.condition_class, "#333") for _, entry in rows]
    y = list(range(len(rows)))
    ax.barh(y, [0 if math.isnan(v) else v for v in values], color=colors, alpha=0.85)
    for yi, value, (low, high), (_, entry) in zip(y, values, cis, rows, strict=True):
        if not (math.isnan(low) or math.isnan(high)):
            ax.plot([low, high], [yi, yi], color="black", lw=1)
        mark = _p_label(_num(entry.elevation_p))
        if not math.isnan(value):  # right of the bar and its CI, so it never covers them
            x = max(v for v in (value, high, 0.0) if not math.isnan(v))
            ax.text(x, yi, f" {value:+.0f}% {mark}", va="center", fontsize=8)
    ax.axvline(0, color="black", lw=0.8)
    ax.margins(x=0.18)
    ax.set_yticks(y, names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("% elevation over the no-memory floor")
    ax.set_title(title, fontsize=10)


def validity_figure(stats: DriftStats):
    """Figure 3 of the paper: elevation of noise (negative) and life events (positive control)."""
    rows_by_metric = {metric: categories_of(stats, metric, ("noise",))
                      + categories_of(stats, metric, ("life_event",)) for metric in METRICS}
    height = 1.6 + 0.32 * max(len(rows) for rows in rows_by_metric.values())
    fig, axes = plt.subplots(1, 2, figsize=(11, height), sharey=True)
    for ax, metric in zip(axes, METRICS, strict=True):
        _elevation_panel(ax, rows_by_metric[metric],
                         f"{metric.upper()}: noise (blue) vs life events (red)")
    fig.tight_layout()
    return fig


def tier_figure(stats: DriftStats):
    """Figure 5: every category's elevation, grouped by class (noise, persona, life event)."""
    order = ("noise", "persona", "life_event")
    rows_by_metric = {}
    for metric in METRICS:
        rows = []
        for cls in order:
            part = categories_of(stats, metric, (cls,))
            rows += sorted(part, key=lambda r: _num(r[1].elevation_pct))
        rows_by_metric[metric] = rows
    height = 1.6 + 0.3 * max(len(r) for r in rows_by_metric.values())
    fig, axes = plt.subplots(1, 2, figsize=(12, height))
    for ax, metric in zip(axes, METRICS, strict=True):
        _elevation_panel(ax, rows_by_metric[metric], f"{metric.upper()}: all categories")
    fig.tight_layout()
    return fig


def forest_figure(stats: DriftStats):
    """Figure 4: persona d_rel with 95 % CIs, sorted; Cohen's d and letters in the margin."""
    n_rows = max(len(categories_of(stats, metric, ("persona",))) for metric in METRICS)
    fig, axes = plt.subplots(1, 2, figsize=(12, 1.6 + 0.4 * n_rows))
    for ax, metric in zip(axes, METRICS, strict=True):
        rows = sorted(categories_of(stats, metric, ("persona",)),
                      key=lambda r: -_num(r[1].d_rel) if not math.isnan(
                          _num(r[1].d_rel)) else math.inf)
        y = list(range(len(rows)))
        for yi, (_, entry) in zip(y, rows, strict=True):
            value, (low, high) = _num(entry.d_rel), _ci(entry, "d_rel_ci")
            if not (math.isnan(low) or math.isnan(high)):
                ax.plot([low, high], [yi, yi], color="#555", lw=1.2)
            if not math.isnan(value):
                ax.plot(value, yi, "o", color=CLASS_COLORS["persona"])
            margin = f"d={_num(entry.cohen_d):.2f}  {entry.letters}"
            ax.annotate(margin, xy=(1.02, yi), xycoords=("axes fraction", "data"),
                        va="center", fontsize=8, family="monospace")
        ax.annotate("Cohen's d / letters", xy=(1.02, 1.01), xycoords="axes fraction",
                    va="bottom", fontsize=8)
        ax.axvline(0, color="black", lw=0.8, ls="--")
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_yticks(y, [name for name, _ in rows], fontsize=8)
        ax.set_xlabel("d_rel = (mu_treat - mu_noise) / sigma_noise")
        ax.set_title(f"{metric.upper()}: persona drift over pragmatic noise", fontsize=10)
    fig.tight_layout(rect=(0, 0, 0.93, 1))
    return fig


def compare_figure(frame):
    """One panel per metric: d_rel (95 % CI) per persona category, one colour per run."""
    metrics = [m for m in METRICS if m in set(frame["metric"])]
    fig, axes = plt.subplots(1, max(len(metrics), 1), figsize=(12, 5), squeeze=False)
    runs = list(dict.fromkeys(frame["run"]))
    for ax, metric in zip(axes[0], metrics, strict=False):
        part = frame[(frame["metric"] == metric) & (frame["condition_class"] == "persona")]
        cats = sorted(set(part["category"]))
        for k, run in enumerate(runs):
            rows = part[part["run"] == run].set_index("category")
            ys = [i + (k - (len(runs) - 1) / 2) * 0.15 for i in range(len(cats))]
            xs = [_num(rows["d_rel"].get(c)) for c in cats]
            line = ax.plot(xs, ys, "o", label=run)[0]
            if "d_rel_ci_low" in rows:
                for c, yk in zip(cats, ys, strict=True):
                    low, high = _num(rows["d_rel_ci_low"].get(c)), _num(rows["d_rel_ci_high"].get(c))
                    ax.plot([low, high], [yk, yk], color=line.get_color(), lw=1, alpha=0.7)
        ax.set_yticks(range(len(cats)), cats, fontsize=8)
        ax.invert_yaxis()
        ax.axvline(0, color="black", lw=0.8, ls="--")
        ax.set_xlabel("d_rel")
        ax.set_title(metric.upper())
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def save_figure(fig, out_dir: Path, name: str) -> str:
    """Write ``name.png`` and ``name.svg`` into ``out_dir``; return the PNG as base64."""
    output_dir(out_dir, "figures folder")
    try:
        with atomic_path(out_dir / f"{name}.svg") as temporary:
            fig.savefig(temporary, format="svg")
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=110)
        atomic_write_bytes(out_dir / f"{name}.png", buffer.getvalue())
    finally:
        plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")
