"""MemDrift: does a user's stored personality leak into an agent's tool-call parameters?

Data (schema, loader, bundled sample), the rule-based rubric metric, the runner over the three
memory conditions, memory frameworks (Setting 2), the judge and the scenario builder.
"""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "BIAS_DIMENSIONS": "schema",
    "CONDITIONS": "schema",
    "Dataset": "loader",
    "Entry": "schema",
    "ParamSpec": "schema",
    "Rubric": "schema",
    "ToolDriftSummary": "results",
    "bundled_path": "loader",
    "compare_tooldrift": "compare",
    "entry_id": "schema",
    "load_dataset": "loader",
    "load_rubrics": "loader",
    "read_source": "scan",
    "read_summary": "summary",
    "run_tooldrift": "runner",
    "scan_source": "scan",
    "score_files": "score",
    "summarize": "summary",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
