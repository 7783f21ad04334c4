"""The tool-drift report: a readable table of a ``ToolDriftSummary`` for the terminal
(``tooldrift.txt``) and a self-contained HTML page (``tooldrift.html``).

It renders ``tooldrift.json`` (``memlens.tooldrift.results``) and the run's calls; the pipeline
never imports this module — the CLI asks for the report after ``memlens tooldrift run`` /
``score`` / ``import-inspect``, as ``memlens audit`` does for the audit report. Every string that
may come from a model or a user file is escaped in the HTML.
"""

from __future__ import annotations

from pathlib import Path

from memlens.fileio import atomic_write_text
from memlens.textsafe import escape_html
from memlens.tooldrift.calls import read_calls
from memlens.tooldrift.results import (
    GroupSummary,
    Interval,
    Proportion,
    ScenarioResult,
    ToolDriftSummary,
)
from memlens.tooldrift.summary import read_summary


def _clean(value: float) -> float:
    """Rounding residue (|x| < 1e-12) printed as 0, never as -0.000."""
    return 0.0 if abs(value) < 1e-12 else value


def _number(value: float | None) -> str:
    return "—" if value is None else f"{_clean(value):.3f}"


def _interval(ci: Interval) -> str:
    return "—" if not ci else f"[{_clean(ci[0]):+.3f}, {_clean(ci[1]):+.3f}]"


def _share(proportion: Proportion | None) -> str:
    """``k/n [lo, hi]`` (Wilson 95 %), or ``—`` when nothing was counted."""
    if proportion is None or not proportion.n:
        return "—"
    low, high = proportion.ci95
    return f"{proportion.k}/{proportion.n} [{low:.2f}, {high:.2f}]"


def delta_cells(group: GroupSummary, short: bool = False) -> tuple[str, str]:
    """(Δ, its 95 % CI): ``not interpretable: <reason>`` instead of a number when the rule of
    ``memlens.tooldrift.interpret`` says so."""
    if not group.interpretation.interpretable:
        reason = group.interpretation.reasons[0]
        return "not interpretable: " + ((reason.short or reason.text) if short else reason.text), "—"
    if group.delta is None:
        return "—", "—"
    if group.paired_test.n < 2:  # a one-scenario bootstrap has no spread to show
        return f"{_clean(group.delta):+.3f}", "— (1 scenario)"
    return f"{_clean(group.delta):+.3f}", _interval(group.ci.delta)


def table_rows(summary: ToolDriftSummary, short: bool = False) -> list[list[str]]:
    """Rows per group (overall, dimensions, domains): n, r_neutral, r_biased, Δ, Δ 95 % CI,
    Wilcoxon p, paired n, no-call, and (Setting 2) per-condition retrieval rates."""
    rows = []
    groups = summary.groups()
    retrieval = any(group.retrieval for _, group in groups)
    for label, group in groups:
        p_value = group.paired_test.wilcoxon_p
        delta, interval = delta_cells(group, short)
        row = [label, str(group.n_scenarios), _number(group.r_neutral),
               _number(group.r_biased), delta, interval,
               "—" if p_value is None else f"{p_value:.3g}", str(group.paired_test.n),
               _share(group.no_call.overall)]
        if retrieval:
            rates = group.retrieval
            neutral = rates.neutral if rates else None
            biased = rates.biased if rates else None
            row += [_share(neutral.any if neutral else None),
                    _share(biased.any if biased else None),
                    _share(biased.biased if biased else None)]
        rows.append(row)
    return rows


HEADER = ["group", "n", "r_neutral", "r_biased", "Δ", "Δ 95% CI", "wilcoxon p", "paired n",
          "no-call"]
RETRIEVAL_HEADER = ["retr. any (neutral)", "retr. any (biased)", "biased retr. (biased)"]


def header(summary: ToolDriftSummary) -> list[str]:
    """The table's column names (retrieval columns when memory came through a framework)."""
    rows = table_rows(summary)
    return HEADER + (RETRIEVAL_HEADER if rows and len(rows[0]) > len(HEADER) else [])


def attribution_lines(summary: ToolDriftSummary) -> list[str]:
    """Retrieval-vs-model attribution in words, with n and CIs."""
    result = summary.attribution
    if not result.applicable:
        return []

    def estimate(part) -> str:
        if part.estimate is None:
            return f"— (n = {part.n})"
        return f"{_clean(part.estimate):+.3f} {_interval(part.ci95)} (n = {part.n})"

    structural = result.not_retrieved_equal_base
    note = (f" [{structural} of them with every prompt = base: Δ 0 by construction]"
            if structural else "")
    return [f"attribution: P(biased memory retrieved) = {_share(result.p_biased_retrieved)}; "
            f"Δ | retrieved = {estimate(result.delta_given_retrieved)}; "
            f"Δ | not retrieved = {estimate(result.delta_given_not_retrieved)}{note}; "
            f"difference = {estimate(result.difference)}"]


def format_table(summary: ToolDriftSummary) -> str:
    """Plain-text table plus lines of memory mode, attribution and data-quality counts."""
    names = header(summary)
    rows = [names, *table_rows(summary, short=True)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(names))]
    lines = ["  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
                       for i, cell in enumerate(row)) for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    run = summary.run
    if run:
        lines.append(f"memory: {run.memory}; tool choice {run.tool_choice}; call path "
                     f"{run.call_path} {run.calls_by_path}")
    lines += attribution_lines(summary)
    counts = summary.counts
    lines.append(
        f"calls {counts.calls}; no-call {counts.no_call.total}; invalid "
        f"{counts.invalid.total}; schema violations {counts.schema_violations}; "
        f"missing params {counts.missing_parameters}; unrankable params "
        f"{counts.unrankable_parameters}"
    )
    return "\n".join(lines)


def _cell(text: str) -> str:
    return f"<td>{escape_html(text)}</td>"


def _retrieved(scenario: ScenarioResult) -> str:
    flags = (scenario.memory or {}).get("biased")
    flag = None if flags is None else flags.retrieved_biased
    return "verbatim" if flag is None else "yes" if flag else "no"


def render_html(summary: ToolDriftSummary, calls: list[dict] | None = None,
                title: str = "MemDrift tool drift") -> str:
    """A self-contained HTML page: the summary table, counts, per-scenario rates and (optionally)
    the raw calls, with every value escaped."""
    head = "".join(f"<th>{escape_html(h)}</th>" for h in header(summary))
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in table_rows(summary))
    scenario_rows = "".join(
        "<tr>" + "".join(_cell(c) for c in (s.entry_id, _number(s.r_neutral),
                                           _number(s.r_biased), _retrieved(s))) + "</tr>"
        for s in summary.scenarios
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
    counts = "<br>".join(escape_html(line) for line in format_table(summary).splitlines()
                         [len(table_rows(summary)) + 2:])
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{escape_html(title)}</title><style>body{{font-family:sans-serif;margin:2em}}"
        "table{border-collapse:collapse;margin-bottom:1.5em}td,th{border:1px solid #ccc;"
        "padding:3px 8px;font-size:13px;text-align:left}</style></head><body>"
        f"<h1>{escape_html(title)}</h1><p>Δ = r_biased − r_neutral; rates are the share of "
        "task-critical parameters strictly worse than the matched base call. Retrieval and "
        "no-call cells are k/n [Wilson 95 % CI]; Δ is 'not interpretable' when no scenario has "
        "both rates, every prompt equals the base prompt, or a biased memory was retrieved in "
        "too few biased-condition queries (docs/tooldrift.md).</p>"
        f"<table><tr>{head}</tr>{body}</table><p>{counts}</p>"
        "<h2>Scenarios</h2><table><tr><th>entry</th><th>r_neutral</th><th>r_biased</th>"
        "<th>biased memory retrieved (biased condition)</th></tr>"
        f"{scenario_rows}</table>{calls_html}</body></html>"
    )


def write_tooldrift_report(run_dir: str | Path, calls: str | Path | None = None,
                           summary: ToolDriftSummary | None = None) -> tuple[Path, Path]:
    """Write ``run_dir/tooldrift.html`` and ``run_dir/tooldrift.txt`` from the run directory's
    ``tooldrift.json`` (or ``summary`` when given) and its calls (``calls``, default
    ``run_dir/calls.jsonl``; none when that file is absent). Returns both paths."""
    run_dir = Path(run_dir)
    summary = summary if summary is not None else read_summary(run_dir)
    calls_path = Path(calls) if calls is not None else run_dir / "calls.jsonl"
    rows = read_calls(calls_path) if calls is not None or calls_path.is_file() else None
    html_path, text_path = run_dir / "tooldrift.html", run_dir / "tooldrift.txt"
    atomic_write_text(html_path, render_html(summary, rows))
    atomic_write_text(text_path, format_table(summary) + "\n")
    return html_path, text_path
