"""``memlens tooldrift score``: a recorded CALLS file scored against rubrics (no model call),
written as ``tooldrift.json``; the CLI renders the report after it (``memlens.report.tooldrift``).

The rubric metric itself is ``memlens.tooldrift.rubric_metric``; the summary it feeds is
``memlens.tooldrift.summary``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from memlens.tooldrift.calls import read_calls
from memlens.tooldrift.loader import load_entries, load_rubrics, resolve_rubrics_dir
from memlens.tooldrift.results import ScoreInputs, ToolDriftSummary
from memlens.tooldrift.schema import schema_defaults
from memlens.tooldrift.summary import summarize, write_summary


def find_scenarios(rubrics_dir: Path) -> Path | None:
    """The layout's ``scenarios/`` next to ``rubrics/`` (for schema defaults), if present."""
    all_params = resolve_rubrics_dir(rubrics_dir)
    for root in (all_params.parent.parent, all_params.parent):
        if (root / "scenarios").is_dir():
            return root / "scenarios"
    return None


def score_files(rubrics_dir: str | Path, calls_path: str | Path, out_dir: str | Path, *,
                scenarios_dir: str | Path | None = None, seed: int = 0,
                n_bootstrap: int = 10_000) -> ToolDriftSummary:
    """Score a CALLS file against rubrics and write ``out_dir/tooldrift.json``.

    Schema defaults for missing arguments come from ``scenarios_dir`` or, when not given, from
    the ``scenarios/`` folder of the same layout as ``rubrics_dir`` (when there is one).
    """
    rubrics = load_rubrics(Path(rubrics_dir))
    rows = read_calls(calls_path)
    scenarios = Path(scenarios_dir) if scenarios_dir else find_scenarios(Path(rubrics_dir))
    defaults = schema_defaults(load_entries(scenarios)) if scenarios else {}
    summary = summarize(rows, rubrics, defaults, seed=seed, n_bootstrap=n_bootstrap)
    summary = replace(summary, inputs=ScoreInputs(str(rubrics_dir), str(calls_path),
                                                  None if scenarios is None else str(scenarios)))
    write_summary(summary, out_dir)
    return summary
