"""``compare_runs``: several audits (models or labelers) side by side — one table, one figure."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memlens.audit.results import load_audit_run
from memlens.errors import MemlensError
from memlens.fileio import atomic_write_text
from memlens.report import figures, tables
from memlens.report.html import figure_html, page, table_html
from memlens.textsafe import escape_html as escape


def run_label(manifest: dict) -> str:
    """``model / labeler`` of a run (``compare_runs`` adds the folder name when ambiguous)."""
    from memlens.models.public import public_model_string

    return " / ".join(public_model_string(str(manifest.get(key))) for key in ("model", "labeler"))


def comparison_table(runs: list[tuple[str, dict]]) -> pd.DataFrame:
    """One row per (run, metric, category) with the run's validity verdict."""
    frames = []
    for label, stats in runs:
        frame = tables.category_table(stats or {})
        if frame.empty:
            continue
        frame.insert(0, "run", label)
        frame["validity"] = (stats or {}).get("validity", {}).get("verdict")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def compare_runs(run_dirs: list[str | Path], out_dir: str | Path) -> Path:
    """Write ``compare.csv/.parquet``, ``compare.png/.svg`` and ``compare.html`` into ``out_dir``."""
    if len(run_dirs) < 2:
        raise MemlensError("compare needs at least two run directories")
    loaded = []
    for run_dir in map(Path, run_dirs):
        run = load_audit_run(run_dir)
        loaded.append((run_label(run.manifest), run.stats, run_dir))
    labels = [label for label, _, _ in loaded]
    runs = [(label if labels.count(label) == 1 else f"{label} ({path.name})", stats)
            for label, stats, path in loaded]
    table = comparison_table(runs)
    if table.empty:
        raise MemlensError("none of the runs has statistics to compare yet")
    out_dir = Path(out_dir)
    tables.write_table(table, out_dir, "compare")
    image = figures.save_figure(figures.compare_figure(table), out_dir, "compare")
    persona = table[table["condition_class"] == "persona"]
    wide = persona.pivot_table(index=["metric", "category"], columns="run", values="d_rel")
    sections = [("Persona d_rel by run", figure_html(image, "comparison", "compare")
                 .replace("figures/", "")
                 + table_html(wide.reset_index()))]
    html = page("memlens comparison", sections,
                "<p>" + " · ".join(escape(label) for label, _ in runs) + "</p>")
    atomic_write_text(out_dir / "compare.html", html)
    return out_dir / "compare.csv"
