"""``memlens store``: inspect a run directory and export its tables."""

from __future__ import annotations

import argparse
import json

from memlens.errors import MemlensError
from memlens.store import RunStore


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``memlens store info`` and ``memlens store export``."""
    parser = subparsers.add_parser("store", help="inspect or export a run directory's store",
                                   description="Inspect or export a run store (memlens.sqlite).")
    actions = parser.add_subparsers(dest="store_command", metavar="ACTION", required=True)

    info = actions.add_parser("info", help="manifest, counts and failures of a run")
    info.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (holds memlens.sqlite)")
    info.set_defaults(func=_info)

    export = actions.add_parser(
        "export", help="write a table (or all) to Parquet, CSV, JSONL or a Hugging Face dataset",
        description="Write a table (responses, failures, manifest or a stage table such as "
                    "audit_drift) to PATH; the format follows the extension unless --format is "
                    "given (hf = datasets.Dataset.save_to_disk folder, load it with "
                    "datasets.load_from_disk). TABLE 'all' writes every table into the folder "
                    "PATH, in every format of --format (default parquet,csv,jsonl,hf). Schema: "
                    "docs/data-export.md.")
    export.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (holds memlens.sqlite)")
    export.add_argument("table", metavar="TABLE",
                        help="responses, failures, manifest, a stage table such as "
                             "audit_drift, or 'all'")
    export.add_argument("path", metavar="PATH", help="output file or, for 'all', folder")
    export.add_argument("--format", dest="formats", type=_formats, metavar="FMT[,FMT]",
                        help="parquet, csv, jsonl or hf (TABLE all: a comma-separated list)")
    export.set_defaults(func=_export)


def _formats(text: str) -> tuple[str, ...]:
    from memlens.store.export import ALL_FORMATS  # lazy: keeps memlens --help light

    formats = tuple(part.strip() for part in text.split(","))
    if not formats or any(fmt not in ALL_FORMATS for fmt in formats) \
            or len(set(formats)) != len(formats):
        raise argparse.ArgumentTypeError(f"expected distinct formats from "
                                         f"{', '.join(ALL_FORMATS)}, got {text!r}")
    return formats


def _export(args: argparse.Namespace) -> int:
    # lazy: keeps memlens --help light
    from memlens.store.export import ALL_FORMATS, export_run, export_table

    with RunStore(args.run_dir, read_only=True) as store:
        if args.table == "all":
            counts = export_run(store, args.path, args.formats or ALL_FORMATS)
            print(f"wrote {len(counts)} tables ({sum(counts.values())} rows) as "
                  f"{', '.join(args.formats or ALL_FORMATS)} to {args.path}")
            return 0
        if args.formats and len(args.formats) > 1:
            raise MemlensError("--format takes one format for a single table (several only "
                               "with TABLE all)")
        count = export_table(store, args.table, args.path,
                             args.formats[0] if args.formats else None)
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
