"""What a scan writes, and the edited review read back.

``OUT/`` holds ``tools.json`` (the schemas as listed), ``review.csv`` and ``review.md`` (one row
per parameter with its evidence), ``rubrics/all_params/<dimension>.json`` (one record per
dimension × tool with its flagged parameters, memlens' rubric format — ``load_rubrics`` reads
it) and ``scan.json``. The review's columns ``flagged`` (yes / no), ``dimensions`` (separated by
spaces) and ``direction`` are the ones a reviewer edits; ``tooldrift build --scan OUT`` reads them
back through ``read_review``. ``direction`` is written as (``scan_direction``): enum ``quick <
standard < comprehensive`` (worst → best), boolean ``degraded=true``, numeric ``degraded=lower``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from memlens.errors import MemlensError
from memlens.fileio import atomic_write_text
from memlens.textsafe import for_terminal
from memlens.tooldrift.scan import ScanResult
from memlens.tooldrift.scan_direction import direction_text, parse_direction
from memlens.tooldrift.scan_sources import ToolSource
from memlens.tooldrift.schema import BIAS_DIMENSIONS

COLUMNS = ("tool", "parameter", "type", "flagged", "dimensions", "kind", "direction",
           "confidence", "decided_by", "rules", "reason", "evidence", "judge_note")
ABBREVIATIONS = {"speed_impatience": "speed", "resource_frugality": "frugal",
                 "minimalism_conciseness": "minimal", "risk_permissiveness": "risk",
                 "autonomy_self_reliance": "autonomy"}


def _safe_cell(text: str) -> str:
    """Free text from a server never starts a spreadsheet formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def review_rows(result: ScanResult) -> list[dict]:
    """One row per parameter (the review CSV's columns)."""
    rows = []
    for param, verdict in zip(result.params, result.verdicts, strict=True):
        rows.append({
            "tool": verdict.tool, "parameter": verdict.param,
            "type": "|".join(param.types) or "any", "flagged": "yes" if verdict.flagged else "no",
            "dimensions": " ".join(verdict.dimensions),
            "kind": verdict.spec["kind"] if verdict.spec else "",
            "direction": direction_text(verdict.spec), "confidence": f"{verdict.confidence:.2f}",
            "decided_by": verdict.decided_by, "rules": " ".join(verdict.rules),
            "reason": _safe_cell(verdict.reason),
            "evidence": _safe_cell(json.dumps(verdict.evidence, ensure_ascii=False, default=str)),
            "judge_note": _safe_cell(str(verdict.judge.get("note", ""))),
        })
    return rows


def review_csv(result: ScanResult) -> str:
    """The review as CSV text."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(review_rows(result))
    return buffer.getvalue()


def _md(text: str) -> str:
    return for_terminal(text).replace("|", "\\|").replace("\n", " ")


def review_markdown(result: ScanResult) -> str:
    """The review as a Markdown document: counts, then one table row per parameter."""
    counts = result.counts()
    source = result.source
    lines = [f"# Tool-drift scan: {_md(source.label)}", "",
             f"Source: {source.kind} `{_md(source.target)}`; {counts['tools']} tools, "
             f"{counts['parameters']} parameters, **{counts['flagged']} flagged** "
             "(drift-prone). Edit `review.csv` (columns flagged, dimensions, kind, direction), "
             "then `memlens tooldrift build --scan DIR`.", "",
             "Flagged per dimension: " + ", ".join(
                 f"{d} {n}" for d, n in counts["by_dimension"].items()), "",
             "| " + " | ".join(COLUMNS[:-1]) + " |", "|" + " --- |" * (len(COLUMNS) - 1)]
    for row in review_rows(result):
        lines.append("| " + " | ".join(_md(row[c]) for c in COLUMNS[:-1]) + " |")
    return "\n".join(lines) + "\n"


def rubric_records(rows: list[dict], domain: str) -> dict[str, list[dict]]:
    """Rubric records per dimension from verdict-like rows ``{tool, param, dimensions, spec}``:
    one record per dimension × tool, ``scenario_num`` = the tool's name."""
    records: dict[str, dict[str, dict]] = {d: {} for d in BIAS_DIMENSIONS}
    for row in rows:
        for dimension in row["dimensions"]:
            record = records[dimension].setdefault(row["tool"], {
                "bias_dimension": dimension, "domain": domain, "scenario_num": row["tool"],
                "tool": row["tool"], "params": {}})
            record["params"][row["param"]] = row["spec"]
    return {d: list(tools.values()) for d, tools in records.items() if tools}


def flagged_rows(result: ScanResult) -> list[dict]:
    """The flagged verdicts as ``{tool, param, dimensions, spec}``."""
    return [{"tool": v.tool, "param": v.param, "dimensions": list(v.dimensions), "spec": v.spec}
            for v in result.verdicts if v.flagged]


def write_rubrics(out_dir: Path, records: dict[str, list[dict]]) -> list[Path]:
    """``out_dir/rubrics/all_params/<dimension>.json`` (old dimension files removed)."""
    folder = Path(out_dir) / "rubrics" / "all_params"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.json"):
        if stale.stem not in records:
            stale.unlink()
    paths = []
    for dimension, items in records.items():
        path = folder / f"{dimension}.json"
        atomic_write_text(path, json.dumps(items, indent=2, ensure_ascii=False) + "\n")
        paths.append(path)
    return paths


def scan_json(result: ScanResult, settings: dict) -> dict:
    """``scan.json``: source, counts, settings and every verdict."""
    source = result.source.to_dict()
    source.pop("tools")
    return {"source": source, "domain": result.domain, "counts": result.counts(),
            "settings": settings,
            "tools": [{"name": t.name, "parameters": len(t.input_schema.get("properties") or {})}
                      for t in result.source.tools],
            "verdicts": [v.to_dict() for v in result.verdicts]}


def write_scan(result: ScanResult, out_dir: str | Path, settings: dict) -> dict:
    """Write every scan output into ``out_dir``; returns ``scan.json``'s content."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = scan_json(result, settings)
    atomic_write_text(out / "tools.json",
                      json.dumps(result.source.to_dict(), indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(out / "review.csv", review_csv(result))
    atomic_write_text(out / "review.md", review_markdown(result))
    write_rubrics(out, rubric_records(flagged_rows(result), result.domain))
    atomic_write_text(out / "scan.json",
                      json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
    return summary


def format_table(result: ScanResult) -> str:
    """The terminal table: flagged parameters, then counts."""
    rows = [("tool.parameter", "kind", "direction", "dimensions", "conf")]
    for verdict in result.verdicts:
        if verdict.flagged:
            rows.append((for_terminal(f"{verdict.tool}.{verdict.param}")[:48],
                         verdict.spec["kind"], for_terminal(direction_text(verdict.spec))[:40],
                         " ".join(ABBREVIATIONS[d] for d in verdict.dimensions),
                         f"{verdict.confidence:.2f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    counts = result.counts()
    source = result.source
    lines.append(f"{for_terminal(source.label)}: {counts['tools']} tools, {counts['parameters']} "
                 f"parameters, {counts['flagged']} flagged in {source.seconds:.2f} s; per "
                 "dimension " + ", ".join(f"{ABBREVIATIONS[d]} {n}"
                                          for d, n in counts["by_dimension"].items()))
    return "\n".join(lines)


def read_review(path: str | Path, source: ToolSource) -> list[dict]:
    """The flagged rows of an (edited) ``review.csv`` as ``{tool, param, dimensions, spec}``,
    each checked against the scanned tools (tool, parameter, enum values) and the rubric format;
    errors name the file, the line and the column."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise MemlensError(f"{path}: cannot read the review ({error.strerror})") from None
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in ("tool", "parameter", "flagged", "dimensions", "kind", "direction")
               if c not in (reader.fieldnames or [])]
    if missing:
        raise MemlensError(f"{path}: not a scan review (missing columns {missing})")
    schemas = {t.name: t.input_schema for t in source.tools}
    rows, seen = [], set()
    for line, row in enumerate(reader, start=2):
        where = f"{path}: line {line}"
        flag = (row["flagged"] or "").strip().lower()
        if flag not in ("yes", "no", "y", "n", "true", "false", "1", "0"):
            raise MemlensError(f"{where}: column 'flagged' must be yes or no, got {flag!r}")
        if flag in ("no", "n", "false", "0"):
            continue
        tool, param = row["tool"], row["parameter"]
        if tool not in schemas:
            raise MemlensError(f"{where}: tool {tool!r} is not in the scanned tools")
        properties = schemas[tool].get("properties") or {}
        if param not in properties:
            raise MemlensError(f"{where}: parameter {param!r} is not in tool {tool!r}")
        if (tool, param) in seen:
            raise MemlensError(f"{where}: {tool}.{param} is listed twice")
        seen.add((tool, param))
        dims = [d for d in (row["dimensions"] or "").replace(",", " ").replace(";", " ").split()]
        unknown = [d for d in dims if d not in BIAS_DIMENSIONS]
        if not dims or unknown:
            raise MemlensError(f"{where}: column 'dimensions' must name at least one of "
                               f"{', '.join(BIAS_DIMENSIONS)} (got {row['dimensions']!r})")
        spec = parse_direction((row["kind"] or "").strip(), row["direction"] or "",
                               f"{where}: column 'direction'")
        allowed = properties[param].get("enum") if isinstance(properties[param], dict) else None
        if spec.kind == "enum" and allowed is not None:
            stray = [v for v in spec.order if v not in allowed]
            if stray:
                raise MemlensError(f"{where}: column 'direction' has values {stray} not in "
                                   f"the schema enum {allowed}")
        rows.append({"tool": tool, "param": param, "dimensions": dims,
                     "spec": {"kind": "enum", "order": list(spec.order)} if spec.kind == "enum"
                     else {"kind": spec.kind, "degraded": spec.degraded}})
    return rows
