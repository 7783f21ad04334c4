"""``compare_runs``: paired comparison of audits — ``compare.json``, a terminal table, and
``compare.html`` with a Δ forest plot and the runs side by side.

The first run is the baseline A; every further run B is compared with it, paired
(:mod:`memlens.audit.compare`). Files in ``out_dir``: ``compare.json`` (every comparison),
``compare.csv`` / ``.parquet`` (the side-by-side table: one row per run, metric and category),
``compare_delta_<k>.png/.svg`` (Δ d_rel forest plot of comparison k), ``compare.png/.svg`` (persona
d_rel per run) and ``compare.html``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from memlens.audit.compare import compare_audits
from memlens.audit.results import load_audit_run
from memlens.errors import MemlensError
from memlens.fileio import atomic_write_text, output_dir
from memlens.numfmt import number
from memlens.report import figures, tables
from memlens.report.html import figure_html, page, table_html
from memlens.stats.paired import p_text as _p
from memlens.stats.results import DriftStats
from memlens.textsafe import escape_html as escape
from memlens.textsafe import for_terminal

ALPHA = 0.05
"""q-value at or below which a Δ is marked significant (``*``)."""


@dataclass(frozen=True)
class CompareOutput:
    """What ``compare_runs`` wrote and computed."""

    out_dir: Path
    json_path: Path
    html_path: Path
    result: dict  # the compare.json structure


def run_label(manifest: dict) -> str:
    """``model / labeler`` of a run (``compare_runs`` adds the folder name when ambiguous); the
    manifest holds them in their public form."""
    return " / ".join(str(manifest.get(key)) for key in ("model", "labeler"))


def comparison_table(runs: list[tuple[str, DriftStats | None]]) -> pd.DataFrame:
    """One row per (run, metric, category) with the run's validity verdict (side by side)."""
    frames = []
    for label, stats in runs:
        frame = tables.category_table(stats)
        if frame.empty or stats is None:
            continue
        frame.insert(0, "run", label)
        frame["validity"] = stats.validity.verdict
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def compare_runs(run_dirs: list[str | Path], out_dir: str | Path, *, seed: int = 0,
                 n_bootstrap: int = 10_000) -> CompareOutput:
    """Compare every run with the first, paired; write the files listed in the module docstring."""
    if len(run_dirs) < 2:
        raise MemlensError("compare needs at least two run directories")
    out_dir = output_dir(out_dir, "--out folder")  # refused before any run is read
    loaded = [(Path(run_dir), load_audit_run(run_dir)) for run_dir in run_dirs]
    names = [run_label(run.manifest) for _, run in loaded]
    labels = [name if names.count(name) == 1 else f"{name} ({path.name})"
              for name, (path, _) in zip(names, loaded, strict=True)]
    if len(set(labels)) < len(labels):
        labels = [f"{label} #{k + 1}" for k, label in enumerate(labels)]
    base_label, (_, base) = labels[0], loaded[0]
    comparisons = [compare_audits(base, run, labels=(base_label, label), seed=seed,
                                  n_bootstrap=n_bootstrap)
                   for label, (_, run) in zip(labels[1:], loaded[1:], strict=True)]
    result = {"format_version": 1, "baseline": base_label, "runs": labels,
              "run_dirs": [str(path) for path, _ in loaded], "comparisons": comparisons}
    json_path = out_dir / "compare.json"
    atomic_write_text(json_path, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    sections = []
    for k, comparison in enumerate(comparisons, 1):
        image = figures.save_figure(delta_figure(comparison), out_dir, f"compare_delta_{k}")
        sections.append((f"{comparison['runs'][1]} vs {comparison['runs'][0]}",
                         comparison_html(comparison)
                         + figure_html(image, "paired delta forest plot", f"compare_delta_{k}")
                         .replace("figures/", "")))
    side = comparison_table([(label, run.stats) for label, (_, run) in zip(labels, loaded,
                                                                              strict=True)])
    if not side.empty:
        tables.write_table(side, out_dir, "compare")
        image = figures.save_figure(figures.compare_figure(side), out_dir, "compare")
        persona = side[side["condition_class"] == "persona"]
        wide = persona.pivot_table(index=["metric", "category"], columns="run", values="d_rel")
        sections.append(("Side by side: persona d_rel per run (unpaired)",
                         figure_html(image, "comparison", "compare").replace("figures/", "")
                         + table_html(wide.reset_index())))
    html = page("memlens paired comparison", sections,
                f"<p>baseline A: {escape(base_label)}; Δ = B − A. Runs: "
                + " · ".join(escape(label) for label in labels) + "</p>")
    html_path = out_dir / "compare.html"
    atomic_write_text(html_path, html)
    return CompareOutput(out_dir, json_path, html_path, result)


def _ci(entry: dict) -> str:
    low, high = entry.get("delta_ci") or (None, None)
    return f"[{number(low, '+.3f')}, {number(high, '+.3f')}]"


def _flag(row: dict, statistic: str = "d_rel") -> str:
    if not row.get("interpretable", True):
        return f"not interpretable ({row.get('not_interpretable_reason') or 'instrument not valid'})"
    if row[statistic].get("delta") is None:
        return f"Δ {statistic} undefined (σ_noise is 0 or undefined in a run)"
    q = row[statistic].get("delta_q")
    return "*" if q is not None and q <= ALPHA else ""


def rows_of(comparison: dict) -> list[dict]:
    """Flat rows (metric, category, …) of one comparison, controls left out."""
    out = []
    for metric, body in comparison["metrics"].items():
        for name, row in body["categories"].items():
            if row["condition_class"] == "control":
                continue
            out.append({"metric": metric, "category": name, **row})
    return out


def format_comparison(result: dict) -> str:
    """The terminal table of every comparison in a ``compare.json`` structure: validity of each
    run first, then the design status, then Δ mean and Δ d_rel per metric and category."""
    lines = []
    for comparison in result["comparisons"]:
        a, b = comparison["runs"]
        lines.append(f"paired comparison: B = {b}  vs  A = {a}  (Δ = B − A)")
        for label in (a, b):
            validity = comparison["validity"][label]
            lines.append(f"  validity of {label}: {validity['verdict']}")
        if not comparison["persona_interpretable"]:
            lines.append("  persona deltas are NOT interpretable: a run's instrument is not valid")
        design = comparison["design"]
        lines.append(f"  design: {design['status']} ({design['n_questions']} questions x "
                     f"{design['n_stimuli']} stimuli, K = {design['baselines']})")
        if design.get("warning"):
            lines.append(f"  WARNING: {design['warning']}")
        settings = comparison["settings"]
        lines.append(f"  paired cluster bootstrap over questions: B = {settings['n_bootstrap']}, "
                     f"seed {settings['seed']}; q = BH within condition class; * = q <= {ALPHA}")
        header = (f"  {'metric':<14}{'category':<18}{'class':<11}{'n_q':>4}  "
                  f"{'Δ mean [95% CI]':<32}{'Δ d_rel [95% CI]':<32}{'p':>7}{'q':>7}  flag")
        lines.append(header)
        for row in rows_of(comparison):
            mean, rel = row["mean"], row["d_rel"]
            lines.append(
                f"  {row['metric'][:13]:<14}{row['category'][:17]:<18}"
                f"{row['condition_class'][:10]:<11}{row['n_questions']:>4}  "
                f"{number(mean['delta'], '+.3f') + ' ' + _ci(mean):<32}"
                f"{number(rel['delta'], '+.3f') + ' ' + _ci(rel):<32}"
                f"{_p(rel['delta_p']):>7}{_p(rel.get('delta_q')):>7}  {_flag(row)}")
        if comparison.get("direction"):
            lines.extend(direction_lines(comparison["direction"]))
        if comparison.get("metrics_not_shared"):
            lines.append("  metrics in one run only (not compared): "
                         + ", ".join(comparison["metrics_not_shared"]))
    return for_terminal("\n".join(lines))


def comparison_html(comparison: dict) -> str:
    """Validity boxes, the design note and the Δ table of one comparison (all text escaped)."""
    parts = []
    for label in comparison["runs"]:
        validity = comparison["validity"][label]
        verdict = str(validity["verdict"])
        klass = verdict if verdict in ("pass", "fail") else "unknown"
        parts.append(f'<div class="verdict {klass}">{escape(label)}: instrument validity '
                     f"<b>{escape(verdict)}</b></div><p class=\"meta\">"
                     f"{escape(validity.get('explanation', ''))}</p>")
    if not comparison["persona_interpretable"]:
        parts.append('<p class="warn">Persona deltas are not interpretable: the instrument of at '
                     "least one run is not valid.</p>")
    design = comparison["design"]
    parts.append(f"<p class=\"meta\">Design: {escape(design['status'])} "
                 f"({design['n_questions']} questions × {design['n_stimuli']} stimuli, K = "
                 f"{design['baselines']}); paired cluster bootstrap over questions, B = "
                 f"{comparison['settings']['n_bootstrap']}, seed {comparison['settings']['seed']}; "
                 f"q = Benjamini–Hochberg within condition class.</p>")
    if design.get("warning"):
        parts.append(f'<p class="warn">{escape(design["warning"])}</p>')
    frame = pd.DataFrame([{
        "metric": r["metric"], "category": r["category"], "class": r["condition_class"],
        "n_questions": r["n_questions"], "n_a": r["n_a"], "n_b": r["n_b"],
        "mean_a": r["mean"]["a"], "mean_b": r["mean"]["b"], "Δ mean": r["mean"]["delta"],
        "Δ mean CI": _ci(r["mean"]), "Δ mean q": r["mean"].get("delta_q"),
        "d_rel_a": r["d_rel"]["a"], "d_rel_b": r["d_rel"]["b"], "Δ d_rel": r["d_rel"]["delta"],
        "Δ d_rel CI": _ci(r["d_rel"]), "Δ d_rel p": r["d_rel"]["delta_p"],
        "Δ d_rel q": r["d_rel"].get("delta_q"), "flag": _flag(r)} for r in rows_of(comparison)])
    parts.append(table_html(frame))
    if comparison.get("direction"):
        parts.append(direction_html(comparison["direction"]))
    return "".join(parts)


DIRECTION_LINES = 12
"""Direction Δ rows shown in the terminal (the page shows up to :data:`DIRECTION_HTML_ROWS`)."""
DIRECTION_HTML_ROWS = 60


def _direction_significant(row: dict) -> bool:
    q = row.get("delta_q")
    return bool(row.get("interpretable")) and q is not None and q <= ALPHA


def direction_order(direction: dict) -> list[dict]:
    """The direction Δ rows, significant ones (interpretable, q ≤ :data:`ALPHA`) first, then by
    largest |Δ|.

    >>> rows = [{"delta": 1.0, "delta_q": 0.5, "interpretable": True},
    ...         {"delta": -3.0, "delta_q": 0.5, "interpretable": True},
    ...         {"delta": 0.5, "delta_q": 0.01, "interpretable": True}]
    >>> [r["delta"] for r in direction_order({"rows": rows})]
    [0.5, -3.0, 1.0]
    """
    return sorted(direction.get("rows") or [],
                  key=lambda r: (not _direction_significant(r), -abs(r.get("delta") or 0.0)))


def _direction_flag(row: dict, direction: dict) -> str:
    if not row.get("interpretable"):
        if (row.get("n_questions") or 0) < direction.get("min_questions", 0):
            return f"not interpretable (fewer than {direction['min_questions']} questions)"
        if row.get("condition_class") == "persona":
            return "not interpretable (instrument not valid)"
        return "not interpretable (interval undefined)"
    return "*" if _direction_significant(row) else ""


def _direction_note(direction: dict) -> str:
    return (f"paired cluster bootstrap over the shared questions, B = {direction['n_bootstrap']}, "
            f"seed {direction['seed']}; q = BH across {direction['q_family']}; rows with fewer "
            f"than {direction['min_questions']} questions, and persona rows when a run's "
            "instrument is not valid, are not interpretable")


def direction_lines(direction: dict) -> list[str]:
    """Terminal lines of a comparison's ``direction`` entry: Δ net_pp (B − A) of the direction
    profiles, the :data:`DIRECTION_LINES` first rows of :func:`direction_order`."""
    if direction.get("error"):
        return [f"  direction profile: {direction['error']}"]
    rows = direction_order(direction)
    lines = [f"  direction profile: Δ net_pp (B − A, {direction['unit']})",
             f"  {_direction_note(direction)}; * = q <= {ALPHA}",
             f"  {'category':<18}{'class':<11}{'level':<7}{'symbol':<36}{'n_q':>4}"
             f"{'A':>8}{'B':>8}  {'Δ [95% CI]':<28}{'p':>7}{'q':>7}  flag"]
    for row in rows[:DIRECTION_LINES]:
        low, high = row.get("delta_ci") or (None, None)
        delta = (f"{number(row.get('delta'), '+.1f')} [{number(low, '+.1f')}, "
                 f"{number(high, '+.1f')}]")
        lines.append(
            f"  {str(row['category'])[:17]:<18}{str(row['condition_class'])[:10]:<11}"
            f"{str(row['level'])[:6]:<7}{str(row['symbol'])[:35]:<36}{row['n_questions']:>4}"
            f"{number(row.get('a'), '+.1f'):>8}{number(row.get('b'), '+.1f'):>8}  {delta:<28}"
            f"{_p(row.get('delta_p')):>7}{_p(row.get('delta_q')):>7}  {_direction_flag(row, direction)}")
    if not rows:
        lines.append("  (no category held by both runs)")
    elif len(rows) > DIRECTION_LINES:
        lines.append(f"  … {len(rows) - DIRECTION_LINES} more rows in compare.json")
    return lines


def direction_html(direction: dict) -> str:
    """The page's direction Δ table (escaped; :func:`direction_order`, at most
    :data:`DIRECTION_HTML_ROWS` rows)."""
    title = "<h3>Direction profile: Δ net_pp (B − A)</h3>"
    if direction.get("error"):
        return f'{title}<p class="warn">{escape(direction["error"])}</p>'
    rows = direction_order(direction)
    frame = pd.DataFrame([{
        "category": r["category"], "class": r["condition_class"], "level": r["level"],
        "symbol": r["symbol"], "n_questions": r["n_questions"], "net_pp A": r.get("a"),
        "net_pp B": r.get("b"), "Δ net_pp": r.get("delta"), "Δ CI": _ci(r),
        "Δ p": _p(r.get("delta_p")), "Δ q": _p(r.get("delta_q")), "flag": _direction_flag(r, direction)}
        for r in rows[:DIRECTION_HTML_ROWS]])
    more = (f" Showing the first {DIRECTION_HTML_ROWS} of {len(rows)} rows; all are in "
            "compare.json." if len(rows) > DIRECTION_HTML_ROWS else "")
    return (f'{title}<p class="meta">{escape(direction["unit"])}; '
            f"{escape(_direction_note(direction))}; * = q ≤ {ALPHA}.{escape(more)}</p>"
            + table_html(frame))


def delta_figure(comparison: dict, statistic: str = "d_rel"):
    """Forest plot: Δ d_rel (B − A) with its paired 95 % CI per category, one panel per metric
    (dtw and sri when present, else the first two); red = q ≤ 0.05, grey = not interpretable."""
    metrics = [m for m in ("dtw", "sri") if m in comparison["metrics"]] or \
        list(comparison["metrics"])[:2]
    rows = rows_of(comparison)
    n_rows = max([sum(1 for r in rows if r["metric"] == m) for m in metrics] or [1])
    fig, axes = figures.plt.subplots(1, max(len(metrics), 1), figsize=(12, 1.6 + 0.35 * n_rows),
                             squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=False):
        part = [r for r in rows if r["metric"] == metric]
        for y, row in enumerate(part):
            entry = row[statistic]
            low, high = (entry.get("delta_ci") or (None, None))
            q = entry.get("delta_q")
            color = "#999" if not row.get("interpretable", True) else \
                "#c0392b" if q is not None and q <= ALPHA else "#2c5d8f"
            if low is not None and high is not None:
                ax.plot([low, high], [y, y], color=color, lw=1.4)
            if entry.get("delta") is not None:
                ax.plot(entry["delta"], y, "o", color=color)
        ax.axvline(0, color="black", lw=0.8, ls="--")
        # category names come from user files: "$" would start matplotlib mathtext
        ax.set_yticks(range(len(part)), [f"{r['category'][:24]} ({r['condition_class']})"
                                         .replace("$", r"\$") for r in part], fontsize=8)
        ax.set_ylim(len(part) - 0.5, -0.5)
        ax.set_xlabel(f"Δ {statistic} (B − A), paired 95% CI")
        ax.set_title(metric.upper(), fontsize=10)
    fig.tight_layout()
    return fig
