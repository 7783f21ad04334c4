"""The self-contained ``report.html``: inline CSS, figures as base64 PNG, no external URL.

Everything inserted into the page is escaped here or in ``trajectory`` (with
``memlens.textsafe.escape_html``, which also neutralises bidi and control characters); callers
pass raw values. Very long texts are shortened (``shorten``) so one huge reply cannot bloat the page.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd

from memlens.numfmt import number
from memlens.report.glossary import glossary_html, header_cell, hover, quality_note, used_terms
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
.scroll{overflow-x:auto;max-width:100%}.scroll>table{margin:0}
a.term{color:inherit;text-decoration:none}abbr[title]{text-decoration:underline dotted;cursor:help}
.banner{background:#fdecec;border-left:4px solid #b33;padding:.4em .8em;color:#7a1f1f}
.lead{font-size:1.05em;max-width:60em}dl.glossary dt{font-weight:bold;margin-top:.5em}
dl.glossary dd{margin-left:1.5em;max-width:60em}
"""


STEP_CHARS = 4_000
"""At most this many characters of one step (or a table cell's hover text) are shown."""
CELL_CHARS = 160
"""A table cell shows at most this many characters; the rest is in its hover text."""
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
    """A cell value as short escaped text (floats to 3 significant decimals, NaN as blank,
    integers — numpy's too — as integers).

    >>> fmt(16), fmt(0.5), fmt(float("nan")), fmt("<b>")
    ('16', '0.500', '', '&lt;b&gt;')
    """
    if value is None:
        return ""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.3g}" if abs(value) < 1e-3 else f"{value:.3f}"
    if isinstance(value, list | tuple | dict):
        return escape(shorten(json.dumps(value, default=str), STEP_CHARS))
    return escape(shorten(str(value), STEP_CHARS))


COUNT_COLUMN = re.compile(r"^(n|count|questions|responses|n_.+|.+_(questions|rows|pairs|"
                          r"responses|steps|calls|excluded))$")
"""Column names that hold counts: printed as integers even when stored as floats."""


def _as_count(column: pd.Series) -> bool:
    """True for a count column whose values are all whole numbers (or missing)."""
    if not COUNT_COLUMN.match(str(column.name)) or column.dtype == bool:
        return False
    values = [v for v in column if isinstance(v, int | float | np.number) and not
              (isinstance(v, float | np.floating) and math.isnan(v))]
    return all(float(v).is_integer() for v in values) and len(values) > 0


def _cell(value, count: bool = False) -> str:
    """One ``<td>``: numbers right-aligned, counts as integers, long text cut to
    ``CELL_CHARS`` with the (escaped) full text as its hover note."""
    if isinstance(value, np.generic):
        value = value.item()
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if count and numeric and not (isinstance(value, float) and math.isnan(value)):
        return f'<td class="n">{int(value)}</td>'
    if numeric:
        return f'<td class="n">{fmt(value)}</td>'
    text = "" if value is None else (json.dumps(value, default=str)
                                     if isinstance(value, list | tuple | dict) else str(value))
    attr = f' title="{escape(shorten(text, STEP_CHARS))}"' if len(text) > CELL_CHARS else ""
    return f"<td{attr}>{escape(shorten(text, CELL_CHARS)) if text else ''}</td>"


def wide(html: str) -> str:
    """``html`` (a table) in a container that scrolls sideways instead of overflowing the page."""
    return f'<div class="scroll">{html}</div>'


def table_html(frame: pd.DataFrame, max_rows: int = 500) -> str:
    """An escaped HTML table of a data frame (first ``max_rows`` rows): every header with its
    glossary note, counts as integers, long cells cut (full text on hover), in a scrolling
    container so a wide table never overflows the page."""
    if frame.empty:
        return "<p>(empty)</p>"
    head = "".join(header_cell(str(c)) for c in frame.columns)
    shown = frame.head(max_rows)
    counts = [_as_count(shown.iloc[:, k]) for k in range(shown.shape[1])]
    body = []
    for record in shown.itertuples(index=False):
        cells = "".join(_cell(v, count) for v, count in zip(record, counts, strict=True))
        body.append(f"<tr>{cells}</tr>")
    more = (f'<p class="meta">First {max_rows:,} of {len(frame):,} rows (all in the table '
            "files).</p>" if len(frame) > max_rows else "")
    return wide(f"<table><tr>{head}</tr>{''.join(body)}</table>") + more


def headers(*names: str) -> str:
    """A header row of a hand-written table, each header with its glossary note."""
    return "<tr>" + "".join(header_cell(name) for name in names) + "</tr>"


def quality_html(quality: dict) -> str:
    """The data-quality counts: each item with its meaning on hover, counts as integers."""
    rows = "".join(f'<tr><td><abbr title="{escape(quality_note(item))}">{escape(item)}</abbr>'
                   f"</td>{_cell(value, count=isinstance(value, int))}</tr>"
                   if quality_note(item) else
                   f"<tr><td>{escape(item)}</td>{_cell(value, count=isinstance(value, int))}</tr>"
                   for item, value in quality.items())
    return wide(f"<table>{headers('item', 'count')}{rows}</table>")


VERDICT_MEANING = {
    "pass": "every check passed: the persona results can be read as the effect of the stored "
            "facts (each with its CI and q-value).",
    "fail": "a check failed: on this run the instrument (model × labeler × design) did not "
            "behave as a drift measure must, so the persona results are not interpretable; they "
            "are shown for diagnosis only.",
    "inconclusive": "the run could not decide (too few questions, or intervals too wide): the "
                    "persona results are not interpretable yet.",
    "not_stated": "too few of the planned answers were usable to state a verdict: the persona "
                  "results are not interpretable.",
}
"""What each validity verdict means for the reader, in plain words (its causes are in
``validity.explanation``)."""


def invalid_banner(persona_ok: bool, verdict: str | None = None, what: str = "persona rows") \
        -> str:
    """The warning above a section when persona results are not interpretable ('' when they
    are): says the verdict and links to the validity section."""
    if persona_ok:
        return ""
    said = f" (verdict: <b>{escape(verdict)}</b>)" if verdict else ""
    return (f'<p class="warn banner">The instrument did not pass its validity checks{said}: '
            f"{escape(what)} below are <b>not interpretable</b> (shown for diagnosis only; see "
            '<a href="#s0">Instrument validity</a>).</p>')


def flag_sections(sections: list[tuple[str, str]], banner: str) -> list[tuple[str, str]]:
    """``sections`` with ``banner`` (``invalid_banner``) opening each one."""
    return [(heading, banner + html) for heading, html in sections]


def figure_html(png_base64: str, alt: str, name: str) -> str:
    """An inline PNG with a note on where its PNG/SVG files are."""
    return (f'<img alt="{escape(alt)}" src="data:image/png;base64,{png_base64}">'
            f'<p class="meta">files: figures/{escape(name)}.png, figures/{escape(name)}.svg</p>')


def validity_html(stats: AuditStats | None, stats_error: str | None) -> str:
    """The verdict box, the plain-language explanation (which check failed, by how much, could a
    paper-sized effect have been seen, what to do next — ``validity.explanation``, rendered as
    given), power, coverage, design and the checks."""
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
    note = (f'<p class="meta">{escape(validity.coverage_note)}</p>'
            if validity.coverage_note else "")
    rows = [f'<tr><td>{fmt(check.name)}</td><td>{fmt(check.metric)}</td>'
            f'<td class="{"ok" if check.status == "pass" else "bad"}">{fmt(check.status)}</td>'
            f'<td>{fmt(check.detail)}</td></tr>' for check in validity.checks]
    checks = wide(f"<table>{headers('check', 'metric', 'status', 'detail')}{''.join(rows)}"
                  "</table>")
    return (f'<div class="verdict {klass}">{hover("validity", "instrument validity")}: '
            f"<b>{escape(verdict)}</b></div>"
            '<p class="meta">A check of the measuring instrument on this run (does noise stay '
            "at the floor, do life events move drift, do DTW and SRI agree), not a sign that the "
            "audit itself broke.</p>"
            f"{lead}{note}{_power_html(validity)}{_coverage_html(validity)}"
            f"{_design_html(getattr(stats, 'design', None))}{checks}")


def _power_html(validity: Validity) -> str:
    if not validity.power:
        return ""
    rows = []
    for metric, row in validity.power.items():
        need = row.questions_for_paper_effect
        to_plan = fmt(row.questions_to_plan) if need and row.questions_to_plan else "n/a"
        rows.append(f"<tr><td>{escape(str(metric))}</td><td class=\"n\">{fmt(row.n_questions)}</td>"
                    f"<td>{number(row.mde_pct, '+.1f')}%</td>"
                    f"<td>{number(row.paper_effect_pct, '+.0f')}%</td>"
                    f"<td>{'yes' if row.powered else 'no'}</td>"
                    f"<td class=\"n\">{fmt(need) if need else 'n/a'}</td>"
                    f"<td class=\"n\">{to_plan}</td></tr>")
    return (f"<p class=\"meta\">{hover('power', 'Power')} of the sensitivity check (paired t "
            "over questions, α = 0.001, 80 % power): the smallest life-event elevation this run "
            "could detect, against a paper-sized effect.</p>"
            + wide("<table>" + headers("metric", "questions", "minimum detectable elevation",
                                       "paper-sized effect", "detectable?",
                                       "questions needed for it",
                                       "questions to plan on (80 % sure)")
                   + f"{''.join(rows)}</table>"))


def _coverage_html(validity: Validity) -> str:
    if not validity.coverage:
        return ""
    cells = "".join(f"<tr><td>{escape(str(k))}</td><td>{fmt(v.usable)} of "
                    f"{fmt(v.planned)}</td></tr>" for k, v in sorted(validity.coverage.items()))
    minimum = validity.min_coverage if validity.min_coverage is not None else 0.8
    return (f"<p class=\"meta\">Usable drift rows per condition class (no verdict below "
            f"{number(100 * minimum, '.0f')} % of the plan):</p>"
            + wide(f"<table>{headers('class', 'usable of planned')}{cells}</table>"))


def _design_html(design: Design | None) -> str:
    if not design:
        return ""
    return (f"<p class=\"meta\">Design: {escape(design.design)} "
            f"({hover('baselines', 'baselines K')} = {fmt(design.baselines)}, samples = "
            f"{fmt(design.samples)}, injection mode {escape(design.injection_mode)}"
            + (f", memory template {escape(design.memory_template)}"
               if design.memory_template else "") + ")</p>")


def page(title: str, sections: list[tuple[str, str]], header: str) -> str:
    """The whole document: title, header block, then (heading, html) sections in order; a
    "Glossary" section is added when the page links to glossary entries and has none."""
    linked = header + "".join(html for _, html in sections)
    if 'href="#g-' in linked and not any(heading == "Glossary" for heading, _ in sections):
        sections = [*sections, ("Glossary", glossary_html(used_terms(linked)))]
    body = "".join(f'<h2 id="s{k}">{escape(h)}</h2>{html}' for k, (h, html) in enumerate(sections))
    nav = " · ".join(f'<a href="#s{k}">{escape(h)}</a>' for k, (h, _) in enumerate(sections))
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{escape(title)}</h1>{header}<p>{nav}</p>{body}</body></html>")
