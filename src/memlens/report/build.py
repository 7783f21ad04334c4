"""``build_report(run_dir)``: renders an ``AuditRun`` (``memlens.audit.results``) into report
files; no model call, no write to the run store."""

from __future__ import annotations

import json
from pathlib import Path

from memlens.audit.results import AuditRun, Orthogonality, load_audit_run
from memlens.fileio import atomic_write_text
from memlens.report import figures, tables
from memlens.report.glossary import glossary_html, used_terms
from memlens.report.how_drift import how_drift_sections
from memlens.report.html import (
    figure_html,
    flag_sections,
    invalid_banner,
    page,
    quality_html,
    table_html,
    validity_html,
)
from memlens.report.intro import intro_html
from memlens.report.memory_sets import memory_set_sections
from memlens.report.selectivity import selectivity_sections
from memlens.report.trajectory import viewer_html
from memlens.stats.results import DriftStats
from memlens.textsafe import escape_html as escape

PERSONA_COLUMNS = ["metric", "category", "n", "mean", "d_rel", "d_rel_ci_low", "d_rel_ci_high",
                   "d_rel_q", "cohen_d", "letters", "elevation_pct", "elevation_p"]


def load_run(run_dir: str | Path) -> dict:
    """The run as a dict (kept for old callers): the fields of
    ``memlens.audit.results.load_audit_run``, which new code should use."""
    from dataclasses import fields

    run = load_audit_run(run_dir)
    loaded = {field.name: getattr(run, field.name) for field in fields(run)}
    if run.orthogonality is not None:
        loaded["orthogonality"] = {field.name: getattr(run.orthogonality, field.name)
                                   for field in fields(run.orthogonality)}
    return loaded


def _orthogonality_html(ortho: Orthogonality) -> str:
    """The report section of the orthogonality filter (every value escaped by table_html)."""
    quality = ortho.quality
    return (f'<p class="meta">Rater <b>{escape(str(ortho.rater))}</b> judged '
            f'{quality["pairs_rated_orthogonality"]} (question, persona / life-event stimulus) '
            f'pairs; {quality["pairs_excluded_orthogonality"]} were judged relevant with '
            f'confidence &ge; {ortho.threshold:g}, and their '
            f'{quality["drift_rows_excluded_orthogonality"]} drift rows are left out of the '
            f'statistics (kept in the run store, flagged). Rater errors '
            f'({quality["orthogonality_rater_errors"]}) never exclude a pair.</p>'
            + table_html(ortho.table))


def _figures(stats: DriftStats | None, fig_dir: Path) -> dict[str, str]:
    if not stats:
        return {}
    return {
        "validity": figures.save_figure(figures.validity_figure(stats), fig_dir, "validity"),
        "persona_forest": figures.save_figure(figures.forest_figure(stats), fig_dir,
                                              "persona_forest"),
        "tiers": figures.save_figure(figures.tier_figure(stats), fig_dir, "tiers"),
    }


def _header(run: AuditRun) -> str:
    manifest, quality = run.manifest, run.quality
    model, labeler = (str(manifest.get(key)) for key in ("model", "labeler"))  # public forms
    return (f'<p class="meta">model <b>{escape(model)}</b> · labeler '
            f'<b>{escape(labeler)}</b> · {quality["questions"]} questions · '
            f'{quality["responses"]} responses · {quality["drift_rows"]} drift rows · seed '
            f'{escape(str(manifest.get("seed")))} · memlens '
            f'{escape(str(manifest.get("memlens_version")))}</p>')


def _stats_origin_html(run: AuditRun) -> str:
    """A note when the statistics were computed for this report and are not in the store."""
    if run.stats_stored:
        return ""
    return ('<p class="meta">These statistics were computed now from the current drift table '
            "(the run store holds none for it yet, e.g. the audit is still running); they are "
            "not stored in the run store.</p>")


def build_report(run_dir: str | Path) -> Path:
    """Write ``report.html``, ``figures/`` (PNG+SVG), ``tables/`` (CSV+Parquet) and
    ``stats.json`` into ``run_dir``; returns the path of ``report.html``.

    Reads the run through a read-only store (``load_audit_run``): it works while another
    process holds the run directory and never writes to the store."""
    return render_report(load_audit_run(run_dir))


def render_report(run: AuditRun) -> Path:
    """Write the report files of ``run`` into its run directory; returns ``report.html``."""
    run_dir = run.run_dir
    stats, quality = run.stats, run.quality
    quality_with_store = {**quality, "failed_calls_in_request_log": run.failures}
    table_dir = run_dir / "tables"
    categories = tables.category_table(stats)
    mixed = tables.mixed_model_table(stats)
    tables.write_table(run.frame, table_dir, "drift")
    tables.write_table(categories, table_dir, "categories")
    tables.write_table(mixed, table_dir, "mixed_model")
    tables.write_table(tables.quality_table(quality_with_store), table_dir, "data_quality")
    if run.orthogonality is not None:
        tables.write_table(run.orthogonality.table, table_dir, "orthogonality_excluded")
    if stats is not None:
        atomic_write_text(run_dir / "stats.json", json.dumps(stats.to_json(), indent=2))
    images = _figures(stats, run_dir / "figures")

    def fig(name: str, alt: str) -> str:
        """The inlined figure, or a note when there are no statistics to draw."""
        return figure_html(images[name], alt, name) if name in images else "<p>(no statistics)</p>"

    persona = categories[categories["condition_class"] == "persona"] if not categories.empty \
        else categories
    persona_ok = bool(stats and stats.validity.persona_interpretable)
    banner = invalid_banner(persona_ok or not stats, stats.validity.verdict if stats else None)
    sections = [
        ("Instrument validity", validity_html(stats, run.stats_error)
         + _stats_origin_html(run) + fig("validity", "validity figure")),
        ("Persona drift (d_rel, 95% cluster-bootstrap CI)", banner
         + fig("persona_forest", "forest plot")
         + table_html(tables.persona_table(persona, PERSONA_COLUMNS, persona_ok or not stats))),
        ("All categories", banner + fig("tiers", "tier figure")),
        *how_drift_sections(run, run_dir / "figures"),  # issue 13: how, not only how much
        *flag_sections([*selectivity_sections(run, run_dir / "figures"),  # issue 17
                        *memory_set_sections(run, run_dir / "figures")], banner),
        ("Mixed-effects model", banner + table_html(mixed)),
        ("Data quality", quality_html(quality_with_store)
         + "<p class=\"meta\">Responses without steps, failed calls and responses whose steps "
           "are all unlabeled are excluded from drift (counted here, never dropped silently); "
           "unlabeled steps are left out of a response's symbol sequence.</p>"),
        *([("Orthogonality filter (excluded pairs)", _orthogonality_html(run.orthogonality))]
          if run.orthogonality is not None else []),
        ("Trajectory viewer", viewer_html(run.drift, run.steps, run.labels)),
        ("All category statistics", banner + table_html(categories)),
    ]
    intro = intro_html(run)
    shown = intro + "".join(html for _, html in sections)
    sections.append(("Glossary", glossary_html(used_terms(shown))))
    html = page("memlens audit report", sections, _header(run) + intro)
    out = run_dir / "report.html"
    atomic_write_text(out, html)
    return out
