"""The report's memory-set section: "the sensitive fact alone" versus "the same fact among
neutral ones", and attribute pairs versus each alone (``memlens.stats.memory_sets``).

Renders ``AuditRun.memory_sets`` (computed by ``load_audit_run`` with
``memlens.audit.memory_sets.memory_set_stats``, seeded, so equal to ``AuditResult.memory_sets``);
written to ``tables/memory_sets*.csv|parquet`` and
``memory_sets.json``; one figure. Every value goes through ``table_html`` / ``escape``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib

from memlens.report.figures import save_figure
from memlens.report.tables import write_table

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from memlens.fileio import atomic_write_text  # noqa: E402
from memlens.numfmt import number  # noqa: E402
from memlens.report.html import figure_html, table_html  # noqa: E402
from memlens.stats.memory_sets import MemorySets, memory_set_tables  # noqa: E402


def _num(value) -> float:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else math.nan


def memory_set_figure(result: MemorySets):
    """Per category: elevation alone, among neutral facts, and net of the neutral facts."""
    entries = list(result.among_neutral.items())
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.55 * max(1, len(entries))))
    styles = (("alone", 0.2, "#dd8452", "fact alone"),
              ("among_neutral", 0.0, "#4c72b0", "among neutral facts"),
              ("net", -0.2, "#55a868", "among neutral, net of the neutral facts"))
    for key, offset, color, label in styles:
        for y, (_, entry) in enumerate(reversed(entries)):
            part = getattr(entry, key)
            mean, low, high = _num(part.estimate), _num(part.ci_low), _num(part.ci_high)
            if not math.isnan(mean):
                ax.errorbar([mean], [y + offset], xerr=[[mean - low], [high - mean]], fmt="o",
                            color=color, capsize=3, label=label if y == 0 else None)
    ax.axvline(0, color="#999", lw=1, ls="--")
    ax.set_yticks(range(len(entries)), [name for name, _ in reversed(entries)])
    ax.set_xlabel(f"{result.metric} drift above the noise floor (95% cluster-bootstrap CI)")
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def memory_set_sections(run, fig_dir: Path) -> list[tuple[str, str]]:
    """The report section (``[]`` when the run has no memory sets)."""
    result = run.memory_sets
    if result is None:
        return []
    among, pairs = (pd.DataFrame(rows) for rows in memory_set_tables(result))
    write_table(among, run.run_dir / "tables", "memory_sets_among_neutral")
    write_table(pairs, run.run_dir / "tables", "memory_sets_combined")
    atomic_write_text(run.run_dir / "memory_sets.json", json.dumps(result.to_dict(), indent=2))
    body = (figure_html(save_figure(memory_set_figure(result), fig_dir, "memory_sets"),
                        "memory-set figure", "memory_sets") if result.among_neutral
            else "<p>(no fact-among-neutral-facts rows yet)</p>")
    neutral = result.neutral_set
    note = ('<p class="meta">Elevation = drift minus the question\'s no-memory floor, paired over '
            "the same questions (cluster bootstrap, B = "
            f"{result.n_bootstrap}). The neutral facts alone add "
            f"{number(neutral.estimate, '+.3f')} [{number(neutral.ci_low, '+.3f')}, "
            f"{number(neutral.ci_high, '+.3f')}] (n = {neutral.n} questions); "
            "“net” subtracts it. Diluted: the fact moves reasoning less inside a profile than "
            "alone; amplified: more.</p>")
    return [("Memory sets: the fact alone vs among neutral facts", body + note
             + table_html(among) + ("<h3>Two attributes together</h3>" + table_html(pairs)
                                    if not pairs.empty else ""))]
