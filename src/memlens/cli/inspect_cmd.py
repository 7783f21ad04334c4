"""``memlens import-inspect``: an inspect_ai log of ``memlens/reasoning_drift`` -> a memlens run
directory with its statistics and report (argument parsing only; ``memlens.inspect_ext``)."""

from __future__ import annotations

import argparse

from memlens.cli.audit_cmd import summary_text
from memlens.cli.call_flags import finished_status


def register(subparsers) -> None:
    """Add ``import-inspect`` to ``subparsers``."""
    command = subparsers.add_parser(
        "import-inspect", help="read an inspect eval log of memlens/reasoning_drift into a run "
                               "directory (statistics, report; then compare, gate, plan --pilot)",
        description="The log's replies go through memlens's own pipeline (steps, labels, drift, "
                    "statistics); the scorer's labels are reused. Re-run to resume. "
                    "See docs/inspect.md.")
    command.add_argument("log", metavar="LOG", help="inspect eval log (.eval or .json)")
    command.add_argument("--out", required=True, metavar="RUN_DIR", help="run directory")
    command.add_argument("--no-report", action="store_true", help="skip report.html")
    command.add_argument("--no-progress", action="store_true", help="no progress bars")
    command.set_defaults(func=run_import)


def run_import(args: argparse.Namespace) -> int:
    """``memlens import-inspect LOG --out RUN_DIR``: 0, or 3 when some samples had failed."""
    from memlens.inspect_ext.importer import import_inspect_log  # lazy: keeps memlens --help light
    from memlens.inspect_ext.logread import read_audit_log  # lazy: keeps memlens --help light

    logged = read_audit_log(args.log)
    if logged.kind == "tool_drift":
        return import_tool_drift(logged, args)
    result = import_inspect_log(logged, args.out, progress=not args.no_progress)
    if not args.no_report:
        from memlens.report import build_report  # lazy: pulls pandas, matplotlib

        result.report = str(build_report(args.out))
    print(summary_text(result))
    return finished_status(result.calls.get("failed", 0), result.calls.get("pending", 0),
                           what="logged samples")


def import_tool_drift(logged, args: argparse.Namespace) -> int:
    """A ``memlens/tool_drift`` log -> a tool-drift run directory (``tooldrift.json``, html)."""
    from pathlib import Path

    # lazy: keeps memlens --help light
    from memlens.inspect_ext.importer import import_tooldrift_log
    from memlens.report.tooldrift import format_table, write_tooldrift_report  # lazy: pulls scipy

    summary = import_tooldrift_log(logged, args.out, progress=not args.no_progress)
    write_tooldrift_report(args.out, summary=summary)  # the report after the import
    print(format_table(summary))
    print(f"wrote {Path(args.out) / 'tooldrift.json'} and {Path(args.out) / 'tooldrift.html'}")
    failed = summary.counts.failed_calls or 0
    return finished_status(failed, summary.counts.calls + failed, what="logged samples")
