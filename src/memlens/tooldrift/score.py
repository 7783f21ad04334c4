"""``memlens tooldrift score``: rubrics + CALLS JSONL -> tooldrift.json, tooldrift.html, a table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memlens.tooldrift.calls import read_calls
from memlens.tooldrift.loader import load_entries, load_rubrics, resolve_rubrics_dir
from memlens.tooldrift.report import write_html
from memlens.tooldrift.schema import Entry
from memlens.tooldrift.summary import summarize, write_summary


def schema_defaults(entries: dict[str, Entry]) -> dict[str, dict[str, Any]]:
    """entry id -> {parameter: default} for every parameter whose schema declares a default."""
    return {
        entry_id: {name: prop["default"]
                   for name, prop in entry.parameters_schema["properties"].items() if "default" in prop}
        for entry_id, entry in entries.items()
    }


def find_scenarios(rubrics_dir: Path) -> Path | None:
    """The layout's ``scenarios/`` next to ``rubrics/`` (for schema defaults), if present."""
    all_params = resolve_rubrics_dir(rubrics_dir)
    for root in (all_params.parent.parent, all_params.parent):
        if (root / "scenarios").is_dir():
            return root / "scenarios"
    return None


def score_files(rubrics_dir: str | Path, calls_path: str | Path, out_dir: str | Path, *,
                scenarios_dir: str | Path | None = None, seed: int = 0,
                n_bootstrap: int = 10_000) -> dict:
    """Score a CALLS file against rubrics and write ``tooldrift.json`` and ``tooldrift.html``.

    Schema defaults for missing arguments come from ``scenarios_dir`` or, when not given, from
    the ``scenarios/`` folder of the same layout as ``rubrics_dir`` (when there is one).
    """
    rubrics = load_rubrics(Path(rubrics_dir))
    rows = read_calls(calls_path)
    scenarios = Path(scenarios_dir) if scenarios_dir else find_scenarios(Path(rubrics_dir))
    defaults = schema_defaults(load_entries(scenarios)) if scenarios else {}
    summary = summarize(rows, rubrics, defaults, seed=seed, n_bootstrap=n_bootstrap)
    summary["inputs"] = {"rubrics": str(rubrics_dir), "calls": str(calls_path),
                         "scenarios": None if scenarios is None else str(scenarios)}
    write_summary(summary, out_dir)
    write_html(summary, out_dir, rows)
    return summary
