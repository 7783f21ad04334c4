"""`memlens analyze`: statistics of a drift table → printed summary and DIR/stats.json."""

from __future__ import annotations

import argparse
import json
from importlib import resources

from memlens.cli import argtypes as at
from memlens.errors import MemlensError
from memlens.fileio import atomic_write_text, output_dir

EXAMPLE = "drift_table.csv"


def register(subparsers) -> None:
    """Add the ``analyze`` sub-command."""
    parser = subparsers.add_parser(
        "analyze", help="statistics of a drift table (noise floor, d_rel, validity verdict)",
        description="Analyse a drift table (CSV or Parquet with question_id, condition_class, "
                    "category and metric columns); print a summary and write DIR/stats.json.")
    parser.add_argument("drift_table", nargs="?", metavar="DRIFT_TABLE",
                        help="drift table (.csv or .parquet)")
    parser.add_argument("--example", action="store_true",
                        help="analyse the bundled simulated example table instead")
    parser.add_argument("--out", required=True, type=at.out_dir, metavar="DIR", help="output directory")
    parser.add_argument("--seed", type=at.nonneg_int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--bootstrap", type=at.positive_int, default=10_000, metavar="B",
                        help="bootstrap replicates (default 10000)")
    parser.add_argument("--metrics", metavar="M1,M2",
                        help="comma-separated metric columns to analyse (default: all)")
    parser.add_argument("--model", help="analyse only these rows of the table's 'model' column")
    parser.add_argument("--no-mixed-model", dest="mixed_model", action="store_false",
                        help="skip the mixed-effects fits, the slowest part on a paper-size "
                             "table (stats.json then has no mixed_model block)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load, analyse, write ``stats.json`` and print the summary."""
    from memlens.stats import analyze, format_summary, load_drift_table  # lazy: pulls pandas, scipy

    if args.example == bool(args.drift_table):
        raise MemlensError("analyze: give either DRIFT_TABLE or --example (exactly one)")
    metrics = None
    if args.metrics is not None:
        metrics = [name.strip() for name in args.metrics.split(",") if name.strip()]
    with resources.as_file(resources.files("memlens.data") / "examples" / EXAMPLE) as example:
        table = load_drift_table(example if args.example else args.drift_table)
    stats = analyze(table, metrics=metrics, seed=args.seed, n_bootstrap=args.bootstrap,
                    model=args.model, mixed_model=args.mixed_model)
    out = output_dir(args.out, "--out folder")
    atomic_write_text(out / "stats.json", json.dumps(stats.to_json(), indent=2, allow_nan=False) + "\n")
    print(format_summary(stats), end="")
    print(f"\nwrote {out / 'stats.json'}")
    return 0
