"""``memlens audit``, ``memlens report`` and ``memlens compare`` (argument parsing only)."""

from __future__ import annotations

import argparse
import json
import sys

from memlens.cli import argtypes as at
from memlens.cli.call_flags import add_call_flags, finished_status

FLAG_FIELDS = {
    "model": "model", "labeler": "labeler", "questions": "questions", "stimuli": "stimuli",
    "ontology": "ontology", "mode": "mode", "samples": "samples", "max_tokens": "max_tokens",
    "seed": "seed", "n_questions": "n_questions", "concurrency": "concurrency",
    "bootstrap": "n_bootstrap", "temperature": "temperature",
    "orthogonality_rater": "orthogonality_rater",
    "orthogonality_threshold": "orthogonality_threshold",
    "call_timeout": "timeout_s", "call_attempts": "attempts", "baselines": "baselines",
    "memory_header": "memory_header", "history_prefix": "history_prefix",
    "acknowledgement": "acknowledgement",
}


def register(subparsers) -> None:
    """Add ``audit``, ``report`` and ``compare`` to ``subparsers``."""
    audit = subparsers.add_parser(
        "audit", help="run (or resume) a reasoning-drift audit and write its report",
        description="questions x memory conditions -> responses -> steps -> labels -> drift -> "
                    "statistics -> report. Re-run the same command to resume.")
    audit.add_argument("--model", help="model string (default: embedded)")
    audit.add_argument("--labeler", help="'embedded' or a model string (default: embedded)")
    audit.add_argument("--questions", metavar="FILE", help="questions file (default: bundled)")
    audit.add_argument("--stimuli", metavar="FILE", help="stimuli catalogue (default: bundled)")
    audit.add_argument("--ontology", metavar="FILE", help="ontology file (default: bundled)")
    audit.add_argument("--mode", choices=["prefix", "system", "history"])
    audit.add_argument("--samples", type=at.positive_int, metavar="N", help="responses per condition")
    audit.add_argument("--baselines", type=at.int_range(1, 50), metavar="K",
                       help="no-memory baselines per question (default 5; 1 = the paper's design: "
                            "one baseline plus one extra no-memory sample for the floor)")
    audit.add_argument("--memory-header", metavar="TEXT",
                       help="system mode: first line of the memory block (every condition)")
    audit.add_argument("--history-prefix", metavar="TEXT",
                       help="history mode: text before the memory in the earlier user turn")
    audit.add_argument("--acknowledgement", metavar="TEXT",
                       help="history mode: the assistant's reply to the earlier turn")
    audit.add_argument("--n-questions", "--limit", dest="n_questions", type=at.positive_int, metavar="N",
                       help="stratified question subset (--limit is an alias)")
    audit.add_argument("--max-tokens", type=at.max_tokens, metavar="N")
    audit.add_argument("--temperature", type=at.temperature, metavar="T")
    audit.add_argument("--seed", type=at.nonneg_int)
    audit.add_argument("--bootstrap", type=at.positive_int, metavar="B", help="bootstrap replicates")
    audit.add_argument("--concurrency", type=at.int_range(1, 4096), metavar="N")
    audit.add_argument("--preset", choices=["quick", "standard", "paper"])
    audit.add_argument("--orthogonality-rater", metavar="MODEL",
                       help="rate every (question, persona/life-event stimulus) pair for "
                            "relevance and leave relevant pairs out of the statistics")
    audit.add_argument("--orthogonality-threshold", type=at.unit_interval, metavar="T",
                       help="confidence from which a relevant pair is excluded (default 0.5)")
    audit.add_argument("--config", metavar="FILE", help="YAML/JSON config; flags override it")
    audit.add_argument("--out", required=True, type=at.out_dir, metavar="RUN_DIR")
    audit.add_argument("--dry-run", action="store_true", help="print the call and token plan")
    audit.add_argument("--power", action="store_true",
                       help="with --dry-run: also the power and MDE of this design under the "
                            "default stated assumptions (see `memlens plan` for a pilot or a grid)")
    audit.add_argument("--no-progress", action="store_true")
    add_call_flags(audit)
    audit.set_defaults(func=run_audit_command)

    report = subparsers.add_parser("report", help="rebuild an audit's report (no model call)")
    report.add_argument("run_dir", metavar="RUN_DIR")
    report.set_defaults(func=run_report_command)

    compare = subparsers.add_parser("compare", help="compare audits side by side")
    compare.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    compare.add_argument("--out", default="runs/compare", type=at.out_dir, metavar="DIR")
    compare.set_defaults(func=run_compare_command)


def audit_config(args: argparse.Namespace):
    """The ``AuditConfig`` from preset, config file and flags (flags win)."""
    from memlens.audit import load_config

    overrides = {field: getattr(args, flag) for flag, field in FLAG_FIELDS.items()}
    return load_config(args.config, overrides, preset=args.preset)


def run_audit_command(args: argparse.Namespace) -> int:
    """``memlens audit``."""
    from memlens.audit import run_audit

    config = audit_config(args)
    if args.dry_run:
        return dry_run(config, args.out, power=args.power)
    from memlens.report import build_report

    result = run_audit(config, args.out, progress=not args.no_progress)
    result.report = str(build_report(args.out))  # the audit has closed its store
    print(summary_text(result))
    # failed labeler calls count too: their responses stay unlabeled until a re-run labels them
    generation, labeler = result.calls.get("failed", 0), result.labels.get("failed", 0)
    if not labeler:
        return finished_status(generation, result.calls.get("pending", 0))
    return finished_status(generation + labeler,
                           result.calls.get("pending", 0) + result.labels.get("responses", 0),
                           what="generation and labeler calls")


def dry_run(config, run_dir: str, power: bool = False) -> int:
    """Print the generation plan (calls, cached, tokens), the label-call count, with the
    orthogonality filter on the rater plan, and with ``power`` the design's power table."""
    from pathlib import Path

    from memlens.audit import planned_requests
    from memlens.engine import plan_requests
    from memlens.models import model_id_for

    def plan_with_store(model_string: str, requests):
        """The plan against the run directory's cache, if there is one."""
        if not (Path(run_dir) / "memlens.sqlite").exists():
            return plan_requests(model_id_for(model_string), requests, None)
        from memlens.store import RunStore

        store = RunStore(run_dir)
        try:
            return plan_requests(model_id_for(model_string), requests, store)
        finally:
            store.close()

    from memlens.models.public import public_model_string

    if (Path(run_dir) / "memlens.sqlite").exists():  # a resume: cache hits need every key
        requests, inputs = planned_requests(config)
        plan = plan_with_store(config.model, requests)
    else:  # a fresh run: arithmetic over (question, condition) pairs, whatever the samples
        from memlens.audit.pipeline import planned_request_groups
        from memlens.engine import plan_groups

        groups, inputs = planned_request_groups(config)
        plan = plan_groups(model_id_for(config.model), groups)
    print(f"audit of {public_model_string(config.model)}: {inputs['questions']} questions x {inputs['stimuli']} "
          f"stimuli, {config.samples} sample(s) (+1 no-memory) = {inputs['cells']} responses")
    print(plan)
    labels = "no model calls (embedded)" if config.labeler == "embedded" else \
        f"up to {inputs['cells']} calls to {public_model_string(config.labeler)}"
    print(f"labeling: {labels}")
    if config.orthogonality_rater:
        from memlens.audit.pipeline import planned_rating_requests

        ratings = planned_rating_requests(config)
        rating_plan = plan_with_store(config.orthogonality_rater, ratings)
        print(f"orthogonality rater {public_model_string(config.orthogonality_rater)}: {len(ratings)} (question, "
              f"persona/life-event stimulus) pairs, plus at most one repair call each for "
              f"invalid replies")
        print(rating_plan)
    if power:
        from memlens.audit import plan as planning

        print(planning.format_plan(planning.plan_designs(
            planning.assumed_model(), planning.question_cost(config), [inputs["questions"]],
            [config.baselines])))
    return 0


def summary_text(result) -> str:
    """A short human summary of an ``AuditResult``."""
    lines = [f"audit finished in {result.seconds.get('total', 0):.0f} s: "
             f"{result.calls.get('pending', 0)} of {result.calls.get('cells', 0)} responses "
             f"processed in this run (calls cached by earlier runs are not repeated; "
             f"{result.calls.get('failed', 0)} failed), {result.drift.get('responses', 0)} drift rows "
             f"from {result.drift.get('pairs', 0)} (response, baseline) pairs"]
    if result.orthogonality:
        lines.append(f"orthogonality filter: {result.orthogonality.get('rated', 0)} of "
                     f"{result.orthogonality.get('pairs', 0)} pairs rated in this run, "
                     f"{result.quality.get('pairs_excluded_orthogonality', 0)} pairs "
                     f"({result.quality.get('drift_rows_excluded_orthogonality', 0)} drift rows) "
                     "excluded from the statistics")
    if result.stats:
        from memlens.stats import format_summary

        lines.append(format_summary(result.stats))
    elif result.stats_error:
        lines.append(f"statistics not computed: {result.stats_error}")
    lines.append("data quality: " + json.dumps(result.quality))
    if result.report:
        lines.append(f"report: {result.report}")
    return "\n".join(lines)


def run_report_command(args: argparse.Namespace) -> int:
    """``memlens report RUN_DIR``."""
    from memlens.report import build_report

    print(f"report: {build_report(args.run_dir)}")
    return 0


def run_compare_command(args: argparse.Namespace) -> int:
    """``memlens compare RUN_DIR… --out DIR``."""
    from memlens.report import compare_runs

    path = compare_runs(args.run_dirs, args.out)
    print(f"comparison table: {path}", file=sys.stdout)
    return 0
