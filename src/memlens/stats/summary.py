"""``format_summary()``: a readable plain-text summary of ``analyze()`` output.

Validity comes first; when it fails, a banner says persona results are not interpretable. Then,
per metric, the floor and one row per category sorted by d_rel (largest first).
"""

from __future__ import annotations

from memlens.numfmt import number
from memlens.stats.results import DriftStats, MetricStats, MixedModel, Validity

COLUMNS = (("category", 24), ("class", 10), ("n", 6), ("mean", 7), ("sd", 7), ("elev%", 8),
           ("p_elev", 8), ("d_rel", 7), ("95% CI", 16), ("q", 8), ("cohen_d", 8), ("letters", 8))


def format_summary(stats: DriftStats) -> str:
    """Render the statistics as text: validity verdict and checks, then per-metric tables."""
    settings = stats.settings
    lines = [f"memlens analyze: {stats.n_rows} rows, {stats.n_questions} questions, metrics "
             f"{', '.join(stats.metrics)}; seed {settings.seed}, B = {settings.n_bootstrap}", ""]
    lines += _validity_lines(stats.validity)
    for metric, result in stats.metrics.items():
        lines += [""] + _metric_lines(metric, result)
    return "\n".join(lines) + "\n"


def _validity_lines(validity: Validity) -> list[str]:
    lines = [f"INSTRUMENT VALIDITY: {validity.verdict.upper()}"]
    if validity.explanation:
        lines.append("  " + validity.explanation)
    for check in validity.checks:
        metric = f" ({check.metric})" if check.metric else ""
        lines.append(f"  [{check.status}] {check.name}{metric}: {check.detail}")
    for metric, power in validity.power.items():
        need, to_plan = power.questions_for_paper_effect, power.questions_to_plan
        plan = (f"; plan on {to_plan} to be {power.planning_confidence:.0%} sure"
                if need and to_plan and power.planning_confidence else "")
        lines.append(f"  power ({metric}): {power.n_questions} questions detect a "
                     f"life-event elevation of {_number(power.mde_pct, '+.1f')}% or more "
                     f"(paper-sized effect +{_number(power.paper_effect_pct, '.0f')}% needs "
                     f"{need if need else 'n/a'} questions{plan})")
    if validity.verdict != "pass":
        lines.append("  !! Persona results below are NOT interpretable: the instrument did not "
                     "pass its validity checks.")
    return lines


def _metric_lines(metric: str, result: MetricStats) -> list[str]:
    floor, noise = result.floor, result.noise
    lines = [f"== {metric}: floor ({floor.category}) mean {_number(floor.mean)} "
             f"(n={floor.n}); pooled noise mean {_number(noise.mean)}, "
             f"sd {_number(noise.sd)} (n={noise.n})",
             "  ".join(name.ljust(width) for name, width in COLUMNS).rstrip()]
    rows = sorted(result.categories.items(),
                  key=lambda item: -(item[1].d_rel if item[1].d_rel is not None
                                     else float("-inf")))
    for name, row in rows:
        ci = row.d_rel_ci
        cells = (name, row.condition_class, str(row.n), _number(row.mean),
                 _number(row.sd), _number(row.elevation_pct, "+.1f"), _p(row.elevation_p),
                 _number(row.d_rel, "+.2f"),
                 f"[{_number(ci[0], '+.2f')}, {_number(ci[1], '+.2f')}]", _p(row.d_rel_q),
                 _number(row.cohen_d, "+.2f"), row.letters)
        lines.append("  ".join(cell[:width].ljust(width)
                               for cell, (_, width) in zip(cells, COLUMNS, strict=True)).rstrip())
    lines.append(_mixed_line(result.mixed_model))
    return lines


def _mixed_line(mixed: MixedModel | None) -> str:
    if mixed is None:
        return "  mixed model: not fitted"
    if mixed.error:
        return f"  mixed model: {mixed.error}"
    note = "converged" if mixed.converged else "NOT converged"
    warned = f"; {len(mixed.warnings)} warning(s): {mixed.warnings[0]}" if mixed.warnings else ""
    return (f"  mixed model ({mixed.n_obs} rows, {mixed.n_groups} questions): {note}, "
            f"question variance {_number(mixed.group_variance, '.4f')}, residual "
            f"{_number(mixed.residual_variance, '.4f')}{warned}")


def _number(value, spec: str = ".3f") -> str:
    return number(value, spec)  # n/a for None / NaN / inf, 1.2e+18 for absurd magnitudes


def _p(value) -> str:
    if number(value) == "n/a":
        return "n/a"
    return "<0.001" if value < 0.001 else number(value)
