"""The audit report: figures (PNG+SVG), tables (CSV+Parquet), ``stats.json`` and one
self-contained ``report.html`` with a trajectory viewer; the tool-drift report
(``tooldrift.html`` / ``.txt``) and the mitigation evaluation's figure. The only package importing
matplotlib.

It renders a ``memlens.audit.results.AuditRun`` and never writes to the run store; the audit
never imports this package."""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "build_report": "build",
    "compare_runs": "compare",
    "comparison_table": "compare",
    "load_run": "build",
    "render_report": "build",
    "drift_capability_figure": "mitigation_figures",
    "write_tooldrift_report": "tooldrift",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
