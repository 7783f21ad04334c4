"""A readable table of ``tooldrift.json`` for the terminal and a self-contained HTML page.

Every string that may come from a model or a user file is escaped in the HTML.
"""

from __future__ import annotations

from pathlib import Path

from memlens.fileio import atomic_write_text
from memlens.textsafe import escape_html


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _interval(ci: list[float] | None) -> str:
    return "—" if not ci else f"[{ci[0]:+.3f}, {ci[1]:+.3f}]"


def table_rows(summary: dict) -> list[list[str]]:
    """Rows (group, n, r_neutral, r_biased, Δ, Δ 95% CI, Wilcoxon p): overall, dimensions, domains."""
    rows = []
    groups = [("overall", summary)]
    groups += [(f"dim: {name}", group) for name, group in summary["by_dimension"].items()]
    groups += [(f"domain: {name}", group) for name, group in summary["by_domain"].items()]
    for label, group in groups:
        p_value = group["paired_test"]["wilcoxon_p"]
        rows.append([label, str(group["n_scenarios"]), _number(group["r_neutral"]),
                     _number(group["r_biased"]),
                     "—" if group["delta"] is None else f"{group['delta']:+.3f}",
                     _interval(group["ci"]["delta"]), "—" if p_value is None else f"{p_value:.3g}"])
    return rows


HEADER = ["group", "n", "r_neutral", "r_biased", "Δ", "Δ 95% CI", "wilcoxon p"]


def format_table(summary: dict) -> str:
    """Plain-text table plus a line of data-quality counts."""
    rows = [HEADER, *table_rows(summary)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
                       for i, cell in enumerate(row)) for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    counts = summary["counts"]
    lines.append(
        f"calls {counts['calls']}; no-call {counts['no_call']['total']}; invalid "
        f"{counts['invalid']['total']}; schema violations {counts['schema_violations']}; "
        f"missing params {counts['missing_parameters']}; unrankable params "
        f"{counts['unrankable_parameters']}"
    )
    return "\n".join(lines)


def _cell(text: str) -> str:
    return f"<td>{escape_html(text)}</td>"


def render_html(summary: dict, calls: list[dict] | None = None, title: str = "MemDrift tool drift") -> str:
    """A self-contained HTML page: the summary table, counts, per-scenario rates and (optionally)
    the raw calls, with every value escaped."""
    head = "".join(f"<th>{escape_html(h)}</th>" for h in HEADER)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in table_rows(summary))
    scenario_rows = "".join(
        "<tr>" + "".join(_cell(c) for c in (s["entry_id"], _number(s["r_neutral"]),
                                           _number(s["r_biased"]))) + "</tr>"
        for s in summary["scenarios"]
    )
    calls_html = ""
    if calls:
        call_rows = "".join(
            "<tr>" + "".join(_cell(str(c)) for c in (
                r["entry_id"], r["condition"], r["k"], r["status"], r.get("arguments"),
                r.get("error", ""), (r.get("text") or "")[:300])) + "</tr>"
            for r in calls
        )
        calls_html = ("<h2>Calls</h2><table><tr><th>entry</th><th>condition</th><th>k</th>"
                      "<th>status</th><th>arguments</th><th>error</th><th>text</th></tr>"
                      f"{call_rows}</table>")
    counts = escape_html(format_table(summary).splitlines()[-1])
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{escape_html(title)}</title><style>body{{font-family:sans-serif;margin:2em}}"
        "table{border-collapse:collapse;margin-bottom:1.5em}td,th{border:1px solid #ccc;"
        "padding:3px 8px;font-size:13px;text-align:left}</style></head><body>"
        f"<h1>{escape_html(title)}</h1><p>Δ = r_biased − r_neutral; rates are the share of "
        "task-critical parameters strictly worse than the matched base call.</p>"
        f"<table><tr>{head}</tr>{body}</table><p>{counts}</p>"
        "<h2>Scenarios</h2><table><tr><th>entry</th><th>r_neutral</th><th>r_biased</th></tr>"
        f"{scenario_rows}</table>{calls_html}</body></html>"
    )


def write_html(summary: dict, out_dir: str | Path, calls: list[dict] | None = None) -> Path:
    """Write ``out_dir/tooldrift.html``."""
    path = Path(out_dir) / "tooldrift.html"
    atomic_write_text(path, render_html(summary, calls))
    return path
