"""The audit report: figures (PNG+SVG), tables (CSV+Parquet), ``stats.json`` and one
self-contained ``report.html`` with a trajectory viewer. The only package importing matplotlib."""

from memlens.report.build import build_report, load_run
from memlens.report.compare import compare_runs, comparison_table

__all__ = ["build_report", "compare_runs", "comparison_table", "load_run"]
