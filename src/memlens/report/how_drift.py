"""The report's "how reasoning drifts" sections: direction heat map and table, top
substitutions, answer drift beside reasoning drift, value contrasts and "what changed".

Renders only the ``stats.json`` sections of ``memlens.audit.howdrift`` (through the
``AuditRun``) and the stored rows; every value goes through ``table_html`` / ``escape``.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

from memlens.audit.explore import load_answers
from memlens.audit.orthogonality import FLAG
from memlens.report.figures import save_figure

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from memlens.numfmt import number  # noqa: E402
from memlens.report.html import (  # noqa: E402
    STEP_CHARS,
    figure_html,
    headers,
    invalid_banner,
    shorten,
    table_html,
)
from memlens.stats.results import AuditStats, HowSection  # noqa: E402
from memlens.textsafe import escape_html as escape  # noqa: E402

ANSWER_LABELS = {"dtw": "reasoning DTW", "answer_cosine": "answer cosine distance",
                 "answer_length_ratio": "answer length ratio",
                 "answer_hedging": "hedging change", "answer_refusal": "refusal change"}


def _ci(low, high, spec: str = "+.1f") -> str:
    return f"[{number(low, spec)}, {number(high, spec)}]"


def interpretable_text(rows: pd.DataFrame, persona_ok: bool = True) -> pd.Series:
    """The 'interpretable' column: too few questions, or a persona row of a run whose instrument
    did not pass its validity checks (``validity.persona_interpretable``), says why not."""
    def text(ok, condition_class):
        if not ok:
            return "no (too few questions)"
        if condition_class == "persona" and not persona_ok:
            return "no (instrument not valid)"
        return "yes"
    return pd.Series([text(bool(ok), c) for ok, c in zip(rows["interpretable"],
                                                          rows["condition_class"], strict=True)],
                     index=rows.index)


def direction_figure(rows: pd.DataFrame):
    """Heat maps (categories × roots, categories × symbols) of the net share change in pp;
    ``*`` marks q ≤ 0.05, ``?`` a cell that cannot be interpreted (too few questions)."""
    levels = [level for level in ("root", "symbol") if level in set(rows["level"])]
    cats = sorted(set(rows["category"]), key=lambda c: (
        rows.loc[rows["category"] == c, "condition_class"].iloc[0], c))
    widths = [max(3, rows.loc[rows["level"] == lv, "symbol"].nunique()) for lv in levels]
    fig, axes = plt.subplots(1, len(levels), figsize=(4 + 0.75 * sum(widths),
                                                       1.8 + 0.32 * len(cats)),
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    for ax, level in zip(axes[0], levels, strict=True):
        part = rows[rows["level"] == level]
        symbols = list(dict.fromkeys(part["symbol"]))
        grid = (part.pivot_table(index="category", columns="symbol", values="net_pp",
                                 aggfunc="first").reindex(index=cats, columns=symbols))
        values = grid.to_numpy(float)
        limit = max(1.0, float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 1.0)
        ax.imshow(values, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
        marks = part.set_index(["category", "symbol"])
        for y, cat in enumerate(cats):
            for x, sym in enumerate(symbols):
                if (cat, sym) not in marks.index:
                    continue
                row = marks.loc[(cat, sym)]
                mark = "*" if row["significant"] else ("?" if not row["interpretable"] else "")
                value = row["net_pp"]
                if isinstance(value, float) and math.isfinite(value):
                    ax.text(x, y, f"{value:+.0f}{mark}", ha="center", va="center", fontsize=7)
        labels = [s.split(".")[-1] if level == "symbol" else s for s in symbols]
        ax.set_xticks(range(len(symbols)), labels, rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(len(cats)), cats, fontsize=7)
        ax.set_title(f"net share change by {level} (pp; * q<=0.05)", fontsize=9)
    fig.tight_layout()
    return fig


def direction_html(section: HowSection | None, save, persona_ok: bool = True) -> str:
    """The heat map and the table of significant (else largest) shifts."""
    if not section or section.error:
        return f"<p>{escape(section.error if section else 'no direction profile')}</p>"
    rows = pd.DataFrame(section.rows)
    if rows.empty:
        return "<p>No direction profile (no perturbed pairs with a floor).</p>"
    png = save(direction_figure(rows), "direction")
    few = sorted(set(rows.loc[~rows["interpretable"].astype(bool), "category"]))
    warn = (f'<p class="warn">{len(few)} categories rest on too few questions for a cluster '
            f"bootstrap ({escape(', '.join(few[:8]))}{' …' if len(few) > 8 else ''}): their "
            "shifts are drawn but not interpretable and never marked significant.</p>"
            if few else "")
    shown = rows[rows["significant"]]
    lead = "Significant shifts (q ≤ 0.05)"
    if shown.empty:
        shown = rows.reindex(rows["net_pp"].abs().sort_values(ascending=False).index).head(12)
        lead = "No shift is significant; the largest ones"
    table = pd.DataFrame({
        "category": shown["category"], "level": shown["level"], "symbol": shown["symbol"],
        "baseline share %": shown["baseline_share_pct"].map(lambda v: number(v, ".1f")),
        "net change pp [95% CI]": [f"{number(v, '+.1f')} {_ci(lo, hi)}" for v, lo, hi in
                                   zip(shown["net_pp"], shown["ci_low"], shown["ci_high"],
                                       strict=True)],
        "q": shown["q_value"].map(lambda v: number(v, ".3g")),
        "n responses / questions": [f"{a} / {b}" for a, b in
                                    zip(shown["n_responses"], shown["n_questions"], strict=True)],
        "interpretable": interpretable_text(shown, persona_ok)})
    return (f'<p class="meta">Change in the share of each root and symbol of the ontology '
            f"between the no-memory baselines and the perturbed responses, minus the same change "
            f"between no-memory samples (the floor); percentage points of a response's labelled "
            f"steps, 95 % cluster-bootstrap CI over questions (B = "
            f"{section.n_bootstrap}), BH across the symbols of a category. "
            f"{section.n_pairs or 0} (response, baseline) pairs.</p>"
            + warn + figure_html(png, "direction heat map", "direction")
            + f"<p>{escape(lead)}:</p>" + table_html(table.reset_index(drop=True)))


def substitutions_html(section: HowSection | None, persona_ok: bool = True) -> str:
    """The top substitutions per category (root level first)."""
    if not section or section.error:
        return f"<p>{escape(section.error if section else 'no substitutions')}</p>"
    rows = pd.DataFrame(section.rows)
    if rows.empty:
        return "<p>No substitution occurs more often than between no-memory samples.</p>"
    rows = rows[rows["condition_class"] != "noise"] if (rows["condition_class"] != "noise").any() \
        else rows
    table = pd.DataFrame({
        "category": rows["category"], "level": rows["level"],
        "substitution": [f"{a} → {b}" for a, b in zip(rows["from_symbol"], rows["to_symbol"],
                                                      strict=True)],
        "aligned steps": rows["count"],
        "rate % (floor %)": [f"{number(r, '.1f')} ({number(f, '.1f')})" for r, f in
                             zip(rows["rate_pct"], rows["floor_rate_pct"], strict=True)],
        "net pp [95% CI]": [f"{number(v, '+.1f')} {_ci(lo, hi)}" for v, lo, hi in
                            zip(rows["net_pp"], rows["ci_low"], rows["ci_high"], strict=True)],
        "q": rows["q_value"].map(lambda v: number(v, ".3g")),
        "n responses / questions": [f"{a} / {b}" for a, b in
                                    zip(rows["n_responses"], rows["n_questions"], strict=True)],
        "interpretable": interpretable_text(rows, persona_ok)})
    return ('<p class="meta">Which baseline symbol the DTW path aligned with which symbol of the '
            "perturbed response, as a share of path cells, minus the same share between "
            "no-memory samples; the top substitutions per persona / life-event category. The "
            "cells are chosen by their estimate, so BH runs over every off-diagonal cell of the "
            "category (untested cells count as p = 1).</p>" + table_html(table))


def answer_html(stats: AuditStats, persona_ok: bool = True) -> str:
    """Reasoning drift and answer drift side by side per category (elevation over the floor)."""
    answer = stats.answer
    if answer is None or not answer.metrics:
        return f"<p>{escape((answer and (answer.error or answer.note)) or 'no answer drift')}</p>"
    metrics = {"dtw": stats.metrics["dtw"].categories,
               **{name: block.categories for name, block in answer.metrics.items()}}
    rows = []
    for name, entry in metrics["dtw"].items():
        if entry.condition_class == "control":
            continue
        row = {"category": name, "class": entry.condition_class, "n": entry.n}
        moved = {}
        for metric, categories in metrics.items():
            cell = categories.get(name)
            low, high = cell.elevation_ci if cell else (None, None)
            p = cell.elevation_p if cell else None
            if metric in ("answer_hedging", "answer_refusal"):
                mean = cell.mean if cell else None
                text = f"{number(100 * mean if mean is not None else None, '+.0f')} pp"
            else:
                text = f"{number(cell.elevation_pct if cell else None, '+.0f')}% {_ci(low, high, '+.0f')}"
            row[ANSWER_LABELS.get(metric, metric)] = f"{text} p={number(p, '.2g')}"
            moved[metric] = p is not None and p < 0.05 and (cell.elevation_pct or 0) > 0
        row["reading"] = ("not interpretable (instrument not valid)"
                          if entry.condition_class == "persona" and not persona_ok else
                          "reasoning moved, answer stayed" if moved.get("dtw")
                          and not moved.get("answer_cosine") else
                          "answer moved, reasoning stayed" if moved.get("answer_cosine")
                          and not moved.get("dtw") else
                          "both moved" if moved.get("dtw") else "neither moved")
        rows.append(row)
    return ('<p class="meta">Elevation of each drift over the no-memory floor (95 % '
            "cluster-bootstrap CI, paired t p-value over questions). Answer drift compares the "
            "final answers (the &lt;answer&gt; block, else the last paragraph): cosine distance "
            "of their MiniLM embeddings, word-length ratio, and the change of the hedging / "
            "refusal markers (percentage points of responses, response − baseline). "
            "\"moved\" means p &lt; 0.05 upwards.</p>" + table_html(pd.DataFrame(rows)))


def contrasts_html(section: HowSection | None, persona_ok: bool = True) -> str:
    """The value-contrast table, or the note that the design has one value per category."""
    if not section or section.error:
        return f"<p>{escape(section.error if section else 'no contrasts')}</p>"
    rows = pd.DataFrame(section.rows)
    note = f'<p class="warn">{escape(section.note)}</p>' if section.note else ""
    if rows.empty:
        return note or "<p>No value pair was answered on a common question.</p>"
    rows = rows[rows["metric"] == "dtw"]
    rows = rows.assign(**{column: rows.get(column, default)  # sections of version 1
                          for column, default in (("excess", float("nan")), ("testable", True))})
    table = pd.DataFrame({
        "category": rows["category"], "value A": rows["value_a"], "value B": rows["value_b"],
        "pairs / questions": [f"{a} / {b}" for a, b in zip(rows["n_pairs"], rows["n_questions"],
                                                             strict=True)],
        "DTW A vs B (floor)": [f"{number(m)} ({number(f)})" for m, f in
                               zip(rows["mean"], rows["floor_mean"], strict=True)],
        "vs floor [95% CI]": [f"{number(d, '+.3f')} {_ci(lo, hi, '+.3f')}" for d, lo, hi in
                              zip(rows["difference"], rows["ci_low"], rows["ci_high"],
                                  strict=True)],
        "excess over same-category pairs": [number(e, "+.3f") for e in rows["excess"]],
        "q": rows["q_value"].map(lambda v: number(v, ".3g")),
        "reasons differently?": [
            "not testable (needs 3+ values or 2+ samples)" if not t else
            "not interpretable" if not i else
            ("not interpretable (instrument not valid)" if c == "persona" and not persona_ok
             else "yes" if d else "no")
            for d, i, c, t in zip(rows["detected"], rows["interpretable"],
                                  rows["condition_class"], rows["testable"], strict=True)]})
    return ('<p class="meta">DTW between the responses to two values of one attribute on the '
            "same question. The test: are the two values answered more differently than the "
            "category's responses differ anyway (value labels permuted within each question, "
            "one-sided; Holm over categories, BH within, over every value pair)? The column against "
            "the no-memory floor is descriptive: memory of any value adds drift, so it is not "
            "the test.</p>"
            + note + table_html(table))


def what_changed_html(run, per_category: int = 3) -> str:
    """The most drifted pairs per category: steps with symbols and answers, linked into the
    trajectory viewer (``#tv-<response id>``)."""
    drift = [r for r in run.drift if r.get("condition_class") != "control" and not r.get(FLAG)]
    if not drift:
        return "<p>No perturbed drift rows yet.</p>"
    steps = {row["id"]: row for row in run.steps}
    labels = {row["id"]: row.get("labels") or [] for row in run.labels}
    answers = load_answers(run.run_dir).set_index("id")["answer"].to_dict() \
        if (run.run_dir / "memlens.sqlite").exists() else {}
    by_cat: dict[str, list[dict]] = {}
    for row in sorted(drift, key=lambda r: -float(r.get("dtw", 0.0))):
        by_cat.setdefault(row["category"], []).append(row)
    parts = []
    for category in sorted(by_cat):
        items = []
        for row in by_cat[category][:per_category]:
            base_id = row["baseline_id"]

            def side(rid):
                texts = (steps.get(rid) or {}).get("steps") or []
                syms = labels.get(rid, [])
                lines = "".join(f"<li><code>{escape(s)}</code> {escape(shorten(t, 300))}</li>"
                                for t, s in zip(texts, syms, strict=False))
                answer = shorten(str(answers.get(rid, "(no answer parsed)")), STEP_CHARS // 8)
                return f"<ol>{lines}</ol><p><b>answer:</b> {escape(answer)}</p>"

            items.append(
                f'<tr><td>{escape(row["question_id"])}<br>{escape(row["stimulus_id"])} '
                f'· sample {int(row["sample"])}<br>DTW {number(row.get("dtw"))} · SRI '
                f'{number(row.get("sri"))}<br><a href="#tv-{escape(row["id"])}">open in the '
                f'trajectory viewer</a></td><td>{side(base_id)}</td><td>{side(row["id"])}</td></tr>')
        parts.append(f"<h3>{escape(category)}</h3><table class=\"traj\">"
                     + headers("pair", "baseline (no memory)", "with memory")
                     + "".join(items) + "</table>")
    return (f'<p class="meta">Per category the {per_category} pairs with the largest DTW '
            "(baseline = the first no-memory baseline of the response).</p>" + "".join(parts))


def how_drift_sections(run, fig_dir: Path) -> list[tuple[str, str]]:
    """The (heading, html) sections, in report order; figures go to ``fig_dir``."""
    stats = run.stats
    if not stats:
        return [("How reasoning drifts", "<p>(no statistics)</p>")]

    def save(fig, name):
        return save_figure(fig, fig_dir, name)

    persona_ok = stats.validity.persona_interpretable
    banner = invalid_banner(persona_ok, stats.validity.verdict)  # persona rows in every one
    return [(heading, banner + html) for heading, html in [
        ("How reasoning drifts: direction profiles",
         direction_html(stats.direction, save, persona_ok)),
        ("Substitutions along the DTW alignment",
         substitutions_html(stats.substitutions, persona_ok)),
        ("Answer drift beside reasoning drift", answer_html(stats, persona_ok)),
        ("Value contrasts within a category", contrasts_html(stats.contrasts, persona_ok)),
        ("What changed: the most drifted pairs", what_changed_html(run)),
    ]]
