"""``memlens tooldrift compare RUN_A RUN_B``: paired Δ of Δ of two tool-drift runs
(registered by ``tooldrift_cmd.register``; docs/gate.md)."""

from __future__ import annotations

import argparse
import sys

from memlens.cli import argtypes as at
from memlens.textsafe import for_terminal


def register_compare(commands) -> None:
    """Add ``compare`` to the ``tooldrift`` sub-commands."""
    compare = commands.add_parser(
        "compare", help="paired Δ of Δ (r_biased − r_neutral) of two runs on the same entries",
        description="ΔΔ = Δ_B − Δ_A overall, per bias dimension and per domain, with a paired "
                    "cluster bootstrap over the shared scenarios.")
    compare.add_argument("run_a", metavar="RUN_A", help="baseline run directory (or tooldrift.json)")
    compare.add_argument("run_b", metavar="RUN_B", help="candidate run directory (or tooldrift.json)")
    compare.add_argument("--out", type=at.out_dir, metavar="DIR",
                         help="also write DIR/tooldrift_compare.json")
    compare.add_argument("--seed", type=at.nonneg_int, default=0,
                         help="bootstrap seed (default %(default)s)")
    compare.add_argument("--bootstrap", type=at.int_range(100, 1_000_000), default=10_000,
                         metavar="B", help="bootstrap replicates (default 10000)")
    compare.set_defaults(func=run_tooldrift_compare)


def run_tooldrift_compare(args: argparse.Namespace) -> int:
    """Print the ΔΔ table (a design warning also on stderr); write the JSON with ``--out``."""
    from memlens.tooldrift.compare import (  # lazy: pulls pandas, scipy
        compare_tooldrift,
        format_tooldrift_comparison,
        load_summary,
        write_comparison,
    )

    result = compare_tooldrift(load_summary(args.run_a), load_summary(args.run_b),
                               labels=(str(args.run_a), str(args.run_b)), seed=args.seed,
                               n_bootstrap=args.bootstrap)
    if result["design"]["warning"]:
        print(for_terminal(f"memlens: warning: {result['design']['warning']}"), file=sys.stderr)
    print(for_terminal(format_tooldrift_comparison(result)))
    if args.out:
        print(f"comparison: {write_comparison(result, args.out)}")
    return 0
