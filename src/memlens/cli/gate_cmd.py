"""``memlens gate``: may this build ship? Rules from flags or a policy file (docs/gate.md).

Exit status: 0 every rule passed; 1 a rule failed; 2 bad input; 5 the instrument is not valid,
so the gate cannot decide (``memlens.gate.exits``).
"""

from __future__ import annotations

import argparse
import sys

from memlens.cli import argtypes as at
from memlens.fileio import append_text, atomic_write_text
from memlens.textsafe import for_terminal

POLICY_FLAGS = {
    "max_d_rel_ci_low": "max_d_rel_ci_low", "max_regression": "max_regression",
    "regression_statistic": "regression_statistic", "alpha": "alpha",
    "max_tooldrift_delta": "max_tooldrift_delta",
    "max_tooldrift_regression": "max_tooldrift_regression", "seed": "seed",
    "bootstrap": "n_bootstrap",
}


LIMIT = at.finite_float(-1e6, 1e6)
"""argparse type of a rule limit: a finite number."""


def register(subparsers) -> None:
    """Add ``gate``."""
    gate = subparsers.add_parser(
        "gate", help="CI gate: rules on an audit (vs a baseline) and tool drift",
        description="Exit 0 pass, 1 a rule failed, 2 bad input, 5 instrument not valid (cannot "
                    "decide). Writes a Markdown summary and JUnit XML. See docs/gate.md.")
    gate.add_argument("run_dir", nargs="?", metavar="RUN", help="candidate audit run directory")
    gate.add_argument("--baseline", metavar="RUN", help="baseline audit run (paired comparison)")
    gate.add_argument("--tooldrift", metavar="DIR", help="candidate tool-drift run directory")
    gate.add_argument("--tooldrift-baseline", metavar="DIR", help="baseline tool-drift run")
    gate.add_argument("--policy", metavar="FILE", help="YAML/JSON policy; flags override it")
    gate.add_argument("--no-require-valid", dest="require_valid", action="store_false",
                      default=None, help="drop the instrument_valid rule (persona rules still "
                                         "cannot decide on an invalid run)")
    gate.add_argument("--metric", dest="metrics", action="append", metavar="M",
                      help="metric the persona rules read (repeatable; default dtw)")
    gate.add_argument("--class", dest="classes", action="append", metavar="CLASS",
                      choices=["persona", "life_event", "noise"],
                      help="condition class the persona rules read (repeatable; default persona)")
    gate.add_argument("--max-d-rel-ci-low", type=LIMIT, metavar="X",
                      help="fail when a category's d_rel CI lower bound is above X")
    gate.add_argument("--max-regression", type=LIMIT, metavar="Y",
                      help="fail when a category's paired Δ vs --baseline has CI lower bound "
                           "above Y and q <= alpha")
    gate.add_argument("--regression-statistic", choices=["d_rel", "mean"],
                      help="what --max-regression compares: mean drift or d_rel (default mean)")
    gate.add_argument("--alpha", type=at.unit_interval, metavar="Q",
                      help="BH q-value a regression must reach (default 0.05)")
    gate.add_argument("--max-tooldrift-delta", type=LIMIT, metavar="Z",
                      help="fail when the tool-drift Δ CI lower bound is above Z")
    gate.add_argument("--max-tooldrift-regression", type=LIMIT, metavar="W",
                      help="fail when a paired ΔΔ vs --tooldrift-baseline has CI lower bound "
                           "above W")
    gate.add_argument("--seed", type=at.nonneg_int, help="bootstrap seed (default 0)")
    gate.add_argument("--bootstrap", type=at.int_range(100, 1_000_000), metavar="B",
                      help="bootstrap replicates of the paired comparisons (default 10000)")
    gate.add_argument("--markdown", type=at.out_file, metavar="FILE",
                      help="write the Markdown summary here (e.g. $GITHUB_STEP_SUMMARY; appended "
                           "to when the file exists)")
    gate.add_argument("--junit", type=at.out_file, metavar="FILE", help="write the JUnit XML report here")
    gate.set_defaults(func=run_gate_command)


def run_gate_command(args: argparse.Namespace) -> int:
    """``memlens gate``: evaluate, print the summary, write the reports, return the status."""
    # lazy: pulls pandas
    from memlens.gate import junit_xml, load_policy, markdown_summary, run_gate

    overrides = {field: getattr(args, flag) for flag, field in POLICY_FLAGS.items()}
    overrides.update(require_valid=args.require_valid, metrics=args.metrics,
                     classes=args.classes)
    policy = load_policy(args.policy, overrides)
    result = run_gate(policy, args.run_dir, baseline_dir=args.baseline,
                      tooldrift_dir=args.tooldrift, tooldrift_baseline_dir=args.tooldrift_baseline)
    if result.comparison and result.comparison["design"].get("warning"):
        print(for_terminal(f"memlens: warning: {result.comparison['design']['warning']}"),
              file=sys.stderr)
    summary = markdown_summary(result)
    print(for_terminal(summary), end="")
    if args.markdown:
        from pathlib import Path

        if Path(args.markdown).exists():
            append_text(args.markdown, summary)
        else:
            atomic_write_text(args.markdown, summary)
    if args.junit:
        atomic_write_text(args.junit, junit_xml(result))
    return result.exit_status
