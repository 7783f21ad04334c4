"""``memlens tooldrift scan``: drift-prone parameters of your own tools (registered by
``tooldrift_cmd.register``; docs/tooldrift.md, "Scan your own tools")."""

from __future__ import annotations

import argparse

from memlens.cli import argtypes as at
from memlens.store import RunStore

FLAGGED_EXIT = 1
"""``--fail-on-flagged``: at least one parameter was flagged (every output is still written);
the CLI-wide "a rule failed" status (``memlens.gate.exits.RULE_FAILED``)."""


def register_scan(commands) -> None:
    """Add ``scan`` to the ``tooldrift`` sub-commands."""
    scan = commands.add_parser(
        "scan", help="find drift-prone parameters in your own tools (MCP, OpenAI/Anthropic "
                     "tools JSON, a Python module)",
        description="Lists a source's tools (no tool is called) and classifies every parameter "
                    "with deterministic rules: drift-prone or not, the bias dimensions that "
                    "could push it, its degradation direction and the evidence. Writes "
                    "review.csv / review.md, rubrics/all_params/<dimension>.json, tools.json, "
                    "scan.json and scan.html into --out.")
    source = scan.add_mutually_exclusive_group(required=True)
    source.add_argument("--mcp", metavar="COMMAND",
                        help="an MCP server started over stdio, e.g. \"python -m mcp_server_time\"")
    source.add_argument("--url", help="a streamable-HTTP MCP server, e.g. http://127.0.0.1:8000/mcp")
    source.add_argument("--tools-json", metavar="FILE",
                        help="an OpenAI / Anthropic tools file (a list, or {\"tools\": [...]})")
    source.add_argument("--module", metavar="NAME",
                        help="a Python module of annotated functions (it is imported: its code "
                             "runs)")
    scan.add_argument("--out", required=True, type=at.out_dir_path, help="output folder")
    scan.add_argument("--timeout", type=at.finite_float(0.0, 3600.0, low_open=True), default=30.0,
                      metavar="SECONDS", help="MCP: seconds for initialize + tools/list "
                                              "(default 30)")
    scan.add_argument("--judge", default=None, metavar="MODEL",
                      help="an LLM (any memlens model string) reviews the rules' verdicts; "
                           "calls are cached in OUT/memlens.sqlite")
    scan.add_argument("--fail-on-flagged", action="store_true",
                      help=f"exit {FLAGGED_EXIT} when any parameter is flagged (outputs are "
                           "still written)")
    scan.set_defaults(func=run_scan)


def run_scan(args: argparse.Namespace) -> int:
    """Scan, write every output, print the table."""
    from memlens.report.scan import write_scan_html  # lazy: pulls pandas
    from memlens.tooldrift.scan import read_source, scan_source  # lazy: keeps memlens --help light

    # lazy: keeps memlens --help light
    from memlens.tooldrift.scan_outputs import format_table, write_scan

    source = read_source(mcp=args.mcp, url=args.url, tools_json=args.tools_json,
                         module=args.module, timeout_s=args.timeout)
    settings = {"judge": args.judge, "timeout_s": args.timeout}
    if args.judge:
        from memlens.models import get_model  # lazy: keeps memlens --help light

        judge = get_model(args.judge)
        with RunStore(args.out) as store:
            result = scan_source(source, judge, store)
    else:
        result = scan_source(source)
    summary = write_scan(result, args.out, settings)
    html = write_scan_html(summary, args.out)
    print(format_table(result))
    print(f"wrote {args.out / 'review.csv'}, review.md, rubrics/all_params/, scan.json, "
          f"{html.name}")
    flagged = summary["counts"]["flagged"]
    return FLAGGED_EXIT if args.fail_on_flagged and flagged else 0
