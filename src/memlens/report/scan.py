"""The tool-drift scan in HTML: a section (tools, flagged parameters by dimension, the evidence)
and the self-contained ``scan.html`` page built from ``scan.json``.

Tool names, descriptions and enum values come from a third-party server: every value is escaped
(``memlens.textsafe.escape_html`` through ``report.html``'s helpers).
"""

from __future__ import annotations

import json
from pathlib import Path

from memlens.fileio import atomic_write_text
from memlens.report.html import fmt, page
from memlens.textsafe import escape_html as escape

DIMENSIONS = ("speed_impatience", "resource_frugality", "minimalism_conciseness",
              "risk_permissiveness", "autonomy_self_reliance")


def _direction(spec: dict | None) -> str:
    if not spec:
        return ""
    if spec["kind"] == "enum":
        return " < ".join(str(v) for v in spec["order"])
    return f"degraded={json.dumps(spec['degraded'])}"


def _row(cells: list[str]) -> str:
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def scan_section(summary: dict) -> str:
    """The scan as one HTML fragment (counts, tools, flagged parameters per dimension with their
    evidence, and every unflagged parameter with the reason)."""
    counts = summary["counts"]
    source = summary["source"]
    head = (f"<p>{escape(source['kind'])} <code>{escape(source['target'])}</code> "
            f"({escape(source.get('label', ''))}): {counts['tools']} tools, "
            f"{counts['parameters']} parameters, <b>{counts['flagged']} flagged</b>; "
            f"{fmt(source.get('seconds'))} s. Rules are deterministic; their confidence is a "
            "rule strength, not a probability — the error rate is the precision / recall "
            "measured on hand-labelled servers (docs/tooldrift.md).</p>")
    tools = "".join(_row([escape(t["name"]), str(t["parameters"])]) for t in summary["tools"])
    parts = [head, "<h3>Tools</h3><table><tr><th>tool</th><th>parameters</th></tr>"
             f"{tools}</table>"]
    verdicts = summary["verdicts"]
    for dimension in DIMENSIONS:
        flagged = [v for v in verdicts if v["flagged"] and dimension in v["dimensions"]]
        parts.append(f"<h3>{escape(dimension)} ({len(flagged)})</h3>")
        if not flagged:
            parts.append("<p>none flagged</p>")
            continue
        rows = "".join(_row([escape(f"{v['tool']}.{v['param']}"), escape(v["spec"]["kind"]),
                             escape(_direction(v["spec"])), f"{v['confidence']:.2f}",
                             escape(v["decided_by"]), escape(v["reason"]), fmt(v["evidence"])])
                       for v in flagged)
        parts.append("<table><tr><th>parameter</th><th>kind</th><th>direction (worst → best / "
                     "degraded)</th><th>confidence</th><th>decided by</th><th>reason</th>"
                     f"<th>evidence</th></tr>{rows}</table>")
    rest = [v for v in verdicts if not v["flagged"]]
    rows = "".join(_row([escape(f"{v['tool']}.{v['param']}"), escape(v["reason"]),
                         fmt(v["evidence"])]) for v in rest)
    parts.append(f"<h3>Not flagged ({len(rest)})</h3><table><tr><th>parameter</th>"
                 f"<th>reason</th><th>evidence</th></tr>{rows}</table>")
    return "".join(parts)


def write_scan_html(summary: dict, out_dir: str | Path) -> Path:
    """``out_dir/scan.html``: the section as a self-contained page."""
    path = Path(out_dir) / "scan.html"
    title = f"Tool-drift scan: {summary['source'].get('label', '')}"
    atomic_write_text(path, page(title, [("Drift-prone parameters", scan_section(summary))], ""))
    return path
