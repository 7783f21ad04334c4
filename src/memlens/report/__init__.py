"""The audit report: figures (PNG+SVG), tables (CSV+Parquet), ``stats.json`` and one
self-contained ``report.html`` with a trajectory viewer. The only package importing matplotlib.

It renders a ``memlens.audit.results.AuditRun`` and never writes to the run store; the audit
never imports this package."""

from memlens.report.build import build_report, load_run, render_report
from memlens.report.compare import compare_runs, comparison_table

__all__ = ["build_report", "compare_runs", "comparison_table", "load_run", "render_report"]
