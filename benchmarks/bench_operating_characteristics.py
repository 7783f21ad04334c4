"""Operating characteristics of every decision memlens hands a user, by seeded simulation.

Simulated audits of known truth (:mod:`memlens.audit.simulate`) run through the real drift,
statistics and decision code (:mod:`memlens.gate.operating`); per shipped preset design and
decision the rate over replicates with a Wilson 95 % interval. Writes the table into
docs/operating-characteristics.md between its markers (``--write``) and prints it.

    nice -n 10 python benchmarks/bench_operating_characteristics.py --replicates 200 --write
    python benchmarks/bench_operating_characteristics.py --designs quick --replicates 20
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from memlens.gate.operating import DECISIONS, markdown_table, measure

DOC = Path(__file__).resolve().parents[1] / "docs" / "operating-characteristics.md"
BEGIN, END = "<!-- oc-table:begin -->", "<!-- oc-table:end -->"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", nargs="+", default=["quick", "standard"],
                        help="preset designs; DESIGN:N sets that design's replicates")
    parser.add_argument("--groups", nargs="+", default=list(DECISIONS))
    parser.add_argument("--replicates", type=int, default=100)
    parser.add_argument("--bootstrap", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write", action="store_true", help="update the docs table")
    args = parser.parse_args(argv)
    rates, seconds = [], {}
    for spec in args.designs:
        design, _, count = spec.partition(":")
        start = time.perf_counter()
        rates += measure(design, args.groups, int(count or args.replicates), seed=args.seed,
                         n_bootstrap=args.bootstrap)
        seconds[design] = time.perf_counter() - start
        table = markdown_table(rates)
        stamp = (f"Seed {args.seed}, B = {args.bootstrap} bootstrap replicates / permutations "
                 "per analysis; wall time (one process, 2 shared cores): "
                 + ", ".join(f"{d} {s:.0f} s" for d, s in seconds.items()) + ".\n\n")
        print(stamp + table, flush=True)
        if args.write:  # after every design: a long run keeps what it finished
            text = DOC.read_text(encoding="utf-8")
            block = f"{BEGIN}\n{stamp}{table}{END}"
            DOC.write_text(re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _, block=block: block,
                                  text, flags=re.S), encoding="utf-8")


if __name__ == "__main__":
    main()
