"""The self-contained ``report.html``: inline CSS, figures as base64 PNG, no external URL.

Everything inserted into the page is escaped here or in ``trajectory`` (with
``memlens.textsafe.escape_html``, which also neutralises bidi and control characters); callers
pass raw values. Very long texts are shortened (``shorten``) so one huge reply cannot bloat the page.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from memlens.numfmt import number
from memlens.stats.results import AuditStats, Design, Validity
from memlens.textsafe import escape_html as escape

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1300px;
color:#222;line-height:1.4;padding:0 1em}
h1{margin-bottom:0}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
.verdict{font-size:1.3em;padding:.6em 1em;border-radius:6px;display:inline-block}
.pass{background:#d8f0dc;border:1px solid #3a8d4a}.fail{background:#f8dada;border:1px solid #b33}
.unknown{background:#eee;border:1px solid #999}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}
th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%}.meta{color:#555;font-size:.9em}
table.traj td{max-width:520px}table.traj td.sym{font-family:monospace;white-space:nowrap}
table.traj td.num{color:#777}td.rep{color:#999;font-style:italic}
tr.mismatch td{background:#fff1c9}tr.mismatch td.sym{color:#b00;font-weight:bold}
td.ok{color:#2a7a3a;font-weight:bold}td.bad{color:#b33;font-weight:bold}
.question{font-weight:bold}.warn{color:#b33;font-weight:bold}
"""


STEP_CHARS = 4_000
"""At most this many characters of one step (or table cell) are shown."""
RESPONSE_CHARS = 20_000
"""At most this many characters of one response's steps are shown in the trajectory viewer."""


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was.

    >>> shorten("abcdef", 3), shorten("abc", 3)
    ('abc… [truncated, 6 characters in all]', 'abc')
    """
    if len(text) <= limit:
        return text
    return f"{text[:max(0, limit)]}… [truncated, {len(text):,} characters in all]"


def fmt(value) -> str:
    """A cell value as short escaped text (floats to 3 significant decimals, NaN as blank)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.3g}" if abs(value) < 1e-3 else f"{value:.3f}"
    if isinstance(value, list | tuple | dict):
        return escape(shorten(json.dumps(value, default=str), STEP_CHARS))
    return escape(shorten(str(value), STEP_CHARS))


def table_html(frame: pd.DataFrame, max_rows: int = 500) -> str:
    """An escaped HTML table of a data frame (first ``max_rows`` rows)."""
    if frame.empty:
        return "<p>(empty)</p>"
    head = "".join(f"<th>{escape(str(c))}</th>" for c in frame.columns)
    body = []
    for record in frame.head(max_rows).itertuples(index=False):
        cells = "".join(
            f'<td class="n">{fmt(v)}</td>' if isinstance(v, int | float) else f"<td>{fmt(v)}</td>"
            for v in record)
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def figure_html(png_base64: str, alt: str, name: str) -> str:
    """An inline PNG with a note on where its PNG/SVG files are."""
    return (f'<img alt="{escape(alt)}" src="data:image/png;base64,{png_base64}">'
            f'<p class="meta">files: figures/{escape(name)}.png, figures/{escape(name)}.svg</p>')


def validity_html(stats: AuditStats | None, stats_error: str | None) -> str:
    """The verdict box, the plain-language explanation (which check failed, by how much, could a
    paper-sized effect have been seen, what to do next), power, coverage, design and the checks."""
    if not stats:
        return ('<div class="verdict unknown">validity: not computed</div>'
                f"<p>{escape(stats_error or 'no statistics yet')}</p>")
    validity = stats.validity
    verdict = validity.verdict
    klass = verdict if verdict in ("pass", "fail") else "unknown"
    explanation = validity.explanation or (
        "" if verdict == "pass" else "The instrument did not pass its validity checks: persona "
        "results below are not interpretable.")
    lead = f'<p class="{"meta" if verdict == "pass" else "warn"}">{escape(explanation)}</p>'
    rows = [f'<tr><td>{fmt(check.name)}</td><td>{fmt(check.metric)}</td>'
            f'<td class="{"ok" if check.status == "pass" else "bad"}">{fmt(check.status)}</td>'
            f'<td>{fmt(check.detail)}</td></tr>' for check in validity.checks]
    checks = (f"<table><tr><th>check</th><th>metric</th><th>status</th><th>detail</th></tr>"
              f"{''.join(rows)}</table>")
    return (f'<div class="verdict {klass}">instrument validity: <b>{escape(verdict)}</b></div>'
            f"{lead}{_power_html(validity)}{_coverage_html(validity)}"
            f"{_design_html(getattr(stats, 'design', None))}{checks}")


def _power_html(validity: Validity) -> str:
    if not validity.power:
        return ""
    rows = []
    for metric, row in validity.power.items():
        need = row.questions_for_paper_effect
        rows.append(f"<tr><td>{escape(str(metric))}</td><td>{fmt(row.n_questions)}</td>"
                    f"<td>{number(row.mde_pct, '+.1f')}%</td>"
                    f"<td>{number(row.paper_effect_pct, '+.0f')}%</td>"
                    f"<td>{'yes' if row.powered else 'no'}</td>"
                    f"<td>{fmt(need) if need else 'n/a'}</td></tr>")
    return ("<p class=\"meta\">Power of the sensitivity check (paired t over questions, "
            "α = 0.001, 80 % power): the smallest life-event elevation this run could detect, "
            "against a paper-sized effect.</p><table><tr><th>metric</th><th>questions</th>"
            "<th>minimum detectable elevation</th><th>paper-sized effect</th><th>detectable?</th>"
            f"<th>questions needed for it</th></tr>{''.join(rows)}</table>")


def _coverage_html(validity: Validity) -> str:
    if not validity.coverage:
        return ""
    cells = "".join(f"<tr><td>{escape(str(k))}</td><td>{fmt(v.usable)} of "
                    f"{fmt(v.planned)}</td></tr>" for k, v in sorted(validity.coverage.items()))
    minimum = validity.min_coverage if validity.min_coverage is not None else 0.8
    return (f"<p class=\"meta\">Usable drift rows per condition class (no verdict below "
            f"{number(100 * minimum, '.0f')} % of the plan):</p>"
            f"<table><tr><th>class</th><th>usable of planned</th></tr>{cells}</table>")


def _design_html(design: Design | None) -> str:
    if not design:
        return ""
    return (f"<p class=\"meta\">Design: {escape(design.design)} "
            f"(baselines K = {fmt(design.baselines)}, samples = "
            f"{fmt(design.samples)}, injection mode {escape(design.injection_mode)}"
            + (f", memory template {escape(design.memory_template)}"
               if design.memory_template else "") + ")</p>")


def page(title: str, sections: list[tuple[str, str]], header: str) -> str:
    """The whole document: title, header block, then (heading, html) sections in order."""
    body = "".join(f'<h2 id="s{k}">{escape(h)}</h2>{html}' for k, (h, html) in enumerate(sections))
    nav = " · ".join(f'<a href="#s{k}">{escape(h)}</a>' for k, (h, _) in enumerate(sections))
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{escape(title)}</h1>{header}<p>{nav}</p>{body}</body></html>")
