"""The report's selectivity section: drift where memory should matter (should-personalize
questions) versus where it should not (the benchmark), per attribute, on one figure.

Renders ``AuditRun.selectivity`` (computed by ``load_audit_run`` with
``memlens.audit.control_set.selectivity_of``, seeded, so equal to ``AuditResult.selectivity``);
written to ``tables/selectivity.csv|parquet``
and ``selectivity.json``. Every value goes through ``table_html`` / ``escape``.
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
from memlens.stats.bootstrap import MeanEstimate  # noqa: E402
from memlens.stats.selectivity import Selectivity  # noqa: E402
from memlens.textsafe import escape_html as escape  # noqa: E402

VERDICT_COLORS = {"selective": "#55a868", "over-sensitive": "#c44e52",
                  "memory-blind": "#7f7f7f", "misdirected": "#8172b2", "unclear": "#ccb974",
                  "inconclusive": "#937860",
                  "not interpretable": "#bbbbbb"}


def _num(value) -> float:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else math.nan


def _ci(value: MeanEstimate) -> str:
    return f"[{number(value.ci_low)}, {number(value.ci_high)}]"


def selectivity_table(result: Selectivity) -> pd.DataFrame:
    """One row per category (``overall`` last): verdict, both sides and their difference."""
    rows = []
    for category, entry in result.entries():
        row = {"category": category, "verdict": entry.verdict, "reason": entry.reason}
        for side, part, n_rows in (("relevant", entry.relevant, entry.relevant_rows),
                                   ("irrelevant", entry.irrelevant, entry.irrelevant_rows)):
            row |= {f"{side}_elevation": number(part.estimate), f"{side}_ci": _ci(part),
                    f"{side}_questions": part.n, f"{side}_rows": n_rows}
        row |= {"selectivity": number(entry.difference.estimate),
                "selectivity_ci": _ci(entry.difference)}
        rows.append(row)
    return pd.DataFrame(rows)


def selectivity_figure(result: Selectivity):
    """Relevant (filled) and irrelevant (open) drift above the floor with 95 % CIs, one row per
    category, labelled and coloured by verdict."""
    entries = result.entries()
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.5 * len(entries)))
    for y, (_, entry) in enumerate(reversed(entries)):
        color = VERDICT_COLORS.get(entry.verdict, "#333")
        for part, offset, face in ((entry.relevant, 0.12, color),
                                   (entry.irrelevant, -0.12, "white")):
            mean, low, high = _num(part.estimate), _num(part.ci_low), _num(part.ci_high)
            if math.isnan(mean):
                continue
            ax.errorbar([mean], [y + offset], xerr=[[mean - low], [high - mean]], fmt="o",
                        color=color, markerfacecolor=face, capsize=3)
        ax.annotate(entry.verdict, (1.01, y), xycoords=("axes fraction", "data"),
                    va="center", fontsize=8, color=color)
    ax.axvline(0, color="#999", lw=1, ls="--")
    ax.set_yticks(range(len(entries)), [name for name, _ in reversed(entries)])
    ax.set_xlabel(f"{result.metric} drift above the noise floor (95% cluster-bootstrap CI)")
    ax.set_title("Selectivity: filled = memory should matter, open = it should not", fontsize=9)
    fig.tight_layout()
    fig.subplots_adjust(right=0.82)  # room for the verdict labels
    return fig


def selectivity_sections(run, fig_dir: Path) -> list[tuple[str, str]]:
    """The report section (``[]`` when the run has no control set)."""
    result = run.selectivity
    if result is None:
        return []
    table = selectivity_table(result)
    write_table(table, run.run_dir / "tables", "selectivity")
    atomic_write_text(run.run_dir / "selectivity.json", json.dumps(result.to_dict(), indent=2))
    if not result.categories:
        body = "<p>(no drift rows of the control set yet)</p>"
    else:
        body = figure_html(save_figure(selectivity_figure(result), fig_dir, "selectivity"),
                           "selectivity figure", "selectivity")
    unmatched = result.unmatched_categories
    sides = ("Relevant side: MemSyco-Bench memory-use items, each under its own dialogue; "
             "irrelevant side: MemSyco-Bench scope-control items under theirs (history mode)."
             if "memsyco" in result.categories else
             "Relevant side: should-personalize questions under a stimulus of an attribute they "
             "depend on; irrelevant side: the benchmark under the same attribute's stimuli.")
    note = (f'<p class="meta">{sides} '
            f"Elevation = drift minus the question's no-memory floor; "
            f"B = {result.n_bootstrap}, at least {result.min_questions} questions per "
            f"side. Over-sensitive: drifts on both; memory-blind: on neither, with CIs below "
            f"{result.min_effect_pct:g} % of the floor (else inconclusive); selective: "
            f"only where memory matters (the goal)."
            + (f" Attributes without stimuli in this run: {escape(', '.join(unmatched))}."
               if unmatched else "") + "</p>")
    title = ("Selectivity (MemSyco-Bench control set)" if "memsyco" in result.categories
             else "Selectivity (should-personalize control set)")
    return [(title, body + note + table_html(table))]
