"""``memlens store``: inspect a run directory and export its tables."""

from __future__ import annotations

import argparse
import json

from memlens.store import RunStore


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``memlens store info`` and ``memlens store export``."""
    parser = subparsers.add_parser("store", help="inspect or export a run directory's store",
                                   description="Inspect or export a run store (memlens.sqlite).")
    actions = parser.add_subparsers(dest="store_command", metavar="ACTION", required=True)

    info = actions.add_parser("info", help="manifest, counts and failures of a run")
    info.add_argument("run_dir", metavar="RUN_DIR")
    info.set_defaults(func=_info)

    export = actions.add_parser(
        "export", help="write a table to .parquet, .csv or .jsonl",
        description="Write a table (responses, failures, manifest or a stage table such as "
                    "drift) to PATH; the format follows the extension.")
    export.add_argument("run_dir", metavar="RUN_DIR")
    export.add_argument("table", metavar="TABLE")
    export.add_argument("path", metavar="PATH")
    export.set_defaults(func=_export)


def _export(args: argparse.Namespace) -> int:
    with RunStore(args.run_dir, read_only=True) as store:
        count = store.export(args.table, args.path)
    print(f"wrote {count} rows of '{args.table}' to {args.path}")
    return 0


def _info(args: argparse.Namespace) -> int:
    with RunStore(args.run_dir, read_only=True) as store:
        manifest = store.read_manifest()
        usage = store.usage()
        failures = store.failures()
        tables = {table: len(store.row_keys(table)) for table in store.tables()}
    print(f"run store {store.path}")
    for name, value in manifest.items():
        text = json.dumps(value, ensure_ascii=False, default=str)
        print(f"  {name}: {text if len(text) <= 100 else text[:97] + '...'}")
    print(f"responses: {usage['responses']} ({usage['prompt_tokens']:,} prompt / "
          f"{usage['completion_tokens']:,} completion tokens)")
    print(f"failures: {len(failures)} (re-run to retry them)")
    for failure in failures[:5]:
        print(f"  {failure['tag'] or failure['key'][:12]}: {failure['reason'][:100]} "
              f"({failure['attempts']} attempts)")
    for table, count in tables.items():
        print(f"table {table}: {count} rows")
    return 0
