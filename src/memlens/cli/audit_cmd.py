"""``memlens audit``, ``memlens report`` and ``memlens compare`` (argument parsing only)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from memlens.cli import argtypes as at
from memlens.cli.call_flags import add_call_flags, finished_status
from memlens.errors import MemlensError
from memlens.store import RunStore
from memlens.textsafe import for_terminal

if TYPE_CHECKING:
    from memlens.stats.results import DriftStats

FLAG_FIELDS = {
    "model": "model", "labeler": "labeler", "questions": "questions", "stimuli": "stimuli",
    "ontology": "ontology", "mode": "mode", "samples": "samples", "max_tokens": "max_tokens",
    "seed": "seed", "n_questions": "n_questions", "concurrency": "concurrency",
    "stimuli_per_category": "stimuli_per_category",  # issue 13: value contrasts need >= 2
    "bootstrap": "n_bootstrap", "temperature": "temperature",
    "orthogonality_rater": "orthogonality_rater",
    "orthogonality_threshold": "orthogonality_threshold",
    "call_timeout": "timeout_s", "call_attempts": "attempts", "baselines": "baselines",
    "memory_header": "memory_header", "history_prefix": "history_prefix",
    "acknowledgement": "acknowledgement", "memory_template": "memory_template",
    "control_set": "control_set", "memory_sets": "memory_sets", "neutral_facts": "neutral_facts",
    "control_set_dir": "control_set_dir", "control_limit": "control_limit",
    "max_combinations": "max_combinations",
}


def memory_set_kinds(text: str) -> list[str]:
    """argparse type of ``--memory-sets``: comma-separated kinds.

    >>> memory_set_kinds("combined, among_neutral")
    ['combined', 'among_neutral']
    """
    # lazy: keeps memlens --help light
    from memlens.stimuli.memory_sets import MEMORY_SET_KINDS

    kinds = [part.strip() for part in text.split(",")]
    unknown = [kind for kind in kinds if kind not in MEMORY_SET_KINDS]
    if unknown or len(set(kinds)) != len(kinds):
        raise argparse.ArgumentTypeError(f"expected distinct kinds from {', '.join(MEMORY_SET_KINDS)}"
                                         f", got {text!r}")
    return kinds


def register(subparsers) -> None:
    """Add ``audit``, ``report`` and ``compare`` to ``subparsers``."""
    audit = subparsers.add_parser(
        "audit", help="run (or resume) a reasoning-drift audit and write its report",
        description="questions x memory conditions -> responses -> steps -> labels -> drift -> "
                    "statistics -> report. Re-run the same command to resume.")
    audit.add_argument("--model", help="model string (default: embedded)")
    audit.add_argument("--labeler", help="'embedded-abstain' (MiniLM; no-value steps left "
                       "unlabeled), 'embedded' (MiniLM; every step labelled) or a model string "
                       "(default: embedded-abstain)")
    audit.add_argument("--questions", metavar="FILE", help="questions file (default: bundled)")
    audit.add_argument("--stimuli", metavar="FILE", help="stimuli catalogue (default: bundled)")
    audit.add_argument("--ontology", metavar="FILE", help="ontology file (default: bundled)")
    audit.add_argument("--mode", choices=["prefix", "system", "history"],
                       help="where the memory goes: prefix (before the question), system (a memory "
                            "block in the system prompt), history (an earlier chat turn); default prefix")
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
    audit.add_argument("--control-set", choices=["should-personalize", "memsyco"],
                       help="also run a control set and report selectivity (drift where memory "
                            "should matter vs where it should not): should-personalize (bundled "
                            "questions) or memsyco (MemSyco-Bench dialogues; needs --mode history)")
    audit.add_argument("--control-set-dir", metavar="DIR",
                       help="memsyco: folder with contextual_scope_control.jsonl and "
                            "personalized_memory_use.jsonl (default: the bundled excerpt, 6 + 6)")
    audit.add_argument("--control-limit", type=at.int_range(1, 10_000), metavar="N",
                       help="memsyco: at most N items of each task (default: all)")
    audit.add_argument("--memory-sets", type=memory_set_kinds,
                       metavar="KINDS", help="add memory-set conditions: among_neutral (each "
                       "persona / life-event fact among neutral facts, plus the neutral facts "
                       "alone), combined (two attributes together); comma-separated")
    audit.add_argument("--neutral-facts", type=at.int_range(1, 12), metavar="N",
                       help="neutral facts around the sensitive one (default 4)")
    audit.add_argument("--max-combinations", type=at.int_range(1, 1000), metavar="N",
                       help="at most N attribute pairs for --memory-sets combined (default 10)")
    audit.add_argument("--memory-template", metavar="NAME|FILE",
                       help="render memory with a template (bundled: prefix, system, history, "
                            "saved-memories, json-profile; or a YAML/JSON file); replaces --mode")
    audit.add_argument("--n-questions", "--limit", dest="n_questions", type=at.positive_int, metavar="N",
                       help="stratified question subset (--limit is an alias)")
    audit.add_argument("--stimuli-per-category", type=at.positive_int, metavar="N",
                       help="stimuli (values) per category; 2 or more allows value contrasts")
    audit.add_argument("--max-tokens", type=at.max_tokens, metavar="N",
                       help="completion token cap per call (default 2048, or the preset's)")
    audit.add_argument("--temperature", type=at.temperature, metavar="T",
                       help="sampling temperature (default 0.7, or the preset's)")
    audit.add_argument("--seed", type=at.nonneg_int,
                       help="seed of the question subset, the sample seeds and the bootstrap "
                            "(default 0)")
    audit.add_argument("--bootstrap", type=at.positive_int, metavar="B", help="bootstrap replicates")
    audit.add_argument("--concurrency", type=at.int_range(1, 4096), metavar="N",
                       help="calls in flight at once, generation and labeling together "
                            "(default: each backend's own bound)")
    audit.add_argument("--preset", choices=["quick", "standard", "paper"],
                       help="a whole design: questions, conditions, baselines, tokens, B (see "
                            "docs/audit.md#presets); config file and flags override it "
                            "(default: none, i.e. every bundled question and stimulus)")
    audit.add_argument("--orthogonality-rater", metavar="MODEL",
                       help="rate every (question, persona/life-event stimulus) pair for "
                            "relevance and leave relevant pairs out of the statistics")
    audit.add_argument("--orthogonality-threshold", type=at.unit_interval, metavar="T",
                       help="confidence from which a relevant pair is excluded (default 0.5)")
    audit.add_argument("--config", metavar="FILE", help="YAML/JSON config; flags override it")
    audit.add_argument("--out", type=at.out_dir, metavar="RUN_DIR",
                       help="run directory: run store, report.html, figures, tables (re-run the "
                            "same command to resume); required unless --dry-run")
    audit.add_argument("--dry-run", action="store_true",
                       help="print the call and token plan and the estimated time; call nothing")
    audit.add_argument("--yes", action="store_true",
                       help="start a run estimated to take more than an hour without asking "
                            "(otherwise: a question on a terminal, a refusal elsewhere)")
    audit.add_argument("--power", action="store_true",
                       help="with --dry-run: also the power and MDE of this design under the "
                            "default stated assumptions (see `memlens plan` for a pilot or a grid)")
    audit.add_argument("--no-progress", action="store_true", help="no progress bars")
    audit.add_argument("--fail-on-invalid", action="store_true",
                       help="exit 5 when the instrument-validity verdict is not 'pass' (after "
                            "the report is written; exit 3 for failed calls comes first)")
    add_call_flags(audit)
    audit.set_defaults(func=run_audit_command)

    report = subparsers.add_parser("report", help="rebuild an audit's report (no model call)")
    report.add_argument("run_dir", metavar="RUN_DIR",
                        help="an audit's run directory (read-only; works while it runs)")
    report.set_defaults(func=run_report_command)

    compare = subparsers.add_parser(
        "compare", help="paired comparison of audits (each run vs the first)",
        description="Δ (B − A) of mean drift and d_rel per metric and category with a paired "
                    "cluster bootstrap over the shared questions; see docs/gate.md.")
    compare.add_argument("run_dirs", nargs="+", metavar="RUN_DIR",
                         help="audit run directories; the first is the reference")
    compare.add_argument("--out", default="runs/compare", type=at.out_dir, metavar="DIR",
                         help="output folder for compare.html/json/csv (default %(default)s)")
    compare.add_argument("--seed", type=at.nonneg_int, default=0,
                         help="bootstrap seed (default %(default)s)")
    compare.add_argument("--bootstrap", type=at.int_range(100, 1_000_000), default=10_000,
                         metavar="B", help="bootstrap replicates (default 10000)")
    compare.set_defaults(func=run_compare_command)


def audit_config(args: argparse.Namespace):
    """The ``AuditConfig`` from preset, config file and flags (flags win)."""
    from memlens.audit import load_config  # lazy: keeps memlens --help light

    overrides = {field: getattr(args, flag) for flag, field in FLAG_FIELDS.items()}
    return load_config(args.config, overrides, preset=args.preset)


def run_audit_command(args: argparse.Namespace) -> int:
    """``memlens audit``."""
    from memlens.audit import run_audit  # lazy: keeps memlens --help light

    config = audit_config(args)
    if args.dry_run:
        return dry_run(config, args.out, power=args.power)
    if not args.out:
        raise MemlensError("--out RUN_DIR is required (only --dry-run runs without one)")
    confirm_audit(config, args.out, yes=args.yes)
    from memlens.report import build_report  # lazy: pulls pandas, matplotlib

    result = run_audit(config, args.out, progress=not args.no_progress)
    result.report = str(build_report(args.out))  # the audit has closed its store
    print(summary_text(result))
    # failed labeler calls count too: their responses stay unlabeled until a re-run labels them
    generation, labeler = result.calls.get("failed", 0), result.labels.get("failed", 0)
    if not labeler:
        status = finished_status(generation, result.calls.get("pending", 0))
    else:
        status = finished_status(generation + labeler,
                                 result.calls.get("pending", 0) + result.labels.get("responses", 0),
                                 what="generation and labeler calls")
    if status or not args.fail_on_invalid:
        return status
    return invalid_status(result.stats, result.stats_error)


def invalid_status(stats: DriftStats | None, stats_error: str | None) -> int:
    """0 when the validity verdict is ``pass``, else ``INSTRUMENT_INVALID`` (5) with the
    verdict on stderr (``--fail-on-invalid``)."""
    from memlens.gate.exits import INSTRUMENT_INVALID  # lazy: keeps memlens --help light

    verdict = stats.validity.verdict if stats else "not computed"
    if verdict == "pass":
        return 0
    reason = stats.validity.explanation if stats else stats_error
    print(f"memlens: instrument validity is {verdict!r}, not 'pass' (--fail-on-invalid: exit "
          f"status {INSTRUMENT_INVALID}): {reason}", file=sys.stderr)
    return INSTRUMENT_INVALID


def plan_with_store(model_string: str, requests, run_dir: str | None):
    """The plan of ``requests`` against the run directory's cache, if there is one."""
    from pathlib import Path

    from memlens.engine import plan_requests  # lazy: keeps memlens --help light
    from memlens.models import model_id_for  # lazy: keeps memlens --help light

    if not run_dir or not (Path(run_dir) / "memlens.sqlite").exists():
        return plan_requests(model_id_for(model_string), requests, None)

    store = RunStore(run_dir)
    try:
        return plan_requests(model_id_for(model_string), requests, store)
    finally:
        store.close()


def generation_plan(config, run_dir: str | None):
    """``(plan, inputs)`` of the audited model's calls: against the run directory's cache on a
    resume, else arithmetic over (question, condition) pairs, whatever the samples."""
    from pathlib import Path

    from memlens.models import model_id_for  # lazy: keeps memlens --help light

    if run_dir and (Path(run_dir) / "memlens.sqlite").exists():  # cache hits need every key
        # lazy: keeps memlens --help light
        from memlens.audit import planned_requests

        requests, inputs = planned_requests(config)
        return plan_with_store(config.model, requests, run_dir), inputs
    # lazy: keeps memlens --help light
    from memlens.audit.pipeline import planned_request_groups
    from memlens.engine import plan_groups

    groups, inputs = planned_request_groups(config)
    return plan_groups(model_id_for(config.model), groups), inputs


def confirm_audit(config, run_dir: str, yes: bool) -> None:
    """Say on stderr, before the first call, what this audit can decide on its model (when that
    was measured: ``memlens.audit.pilots``); ask before (or refuse) an audit whose generation
    calls are estimated to take more than ``memlens.cli.confirm.LONG_RUN_S`` on this backend
    (``--yes`` skips the question); then say what it will cost."""
    # lazy: keeps memlens --help light
    from memlens.cli.confirm import confirm_long_run, estimate_line
    from memlens.models.throughput import expected_throughput

    plan, inputs = generation_plan(config, run_dir)
    sentence = power_line(config, inputs["questions"])
    if sentence and plan.calls:
        print(f"memlens: {sentence}", file=sys.stderr)
    throughput = expected_throughput(config.model, config.concurrency)
    confirm_long_run("this audit", plan.calls, plan.est_completion_tokens,
                     plan.est_prompt_tokens, throughput, yes=yes, smaller="see the plan with "
                     "--dry-run and make it smaller (--preset quick, --n-questions N, "
                     "--stimuli-per-category N, --max-tokens N)")
    if plan.calls:
        print("memlens: this audit: " + estimate_line(
            plan.calls, plan.est_completion_tokens, plan.est_prompt_tokens, throughput),
              file=sys.stderr)


def dry_run(config, run_dir: str | None, power: bool = False) -> int:
    """Print the generation plan (calls, cached, tokens, estimated time), the label-call count,
    with the orthogonality filter on the rater plan, and with ``power`` the design's power
    table."""
    from memlens.cli.confirm import estimate_line  # lazy: keeps memlens --help light
    from memlens.models.modelstring import public_model_string  # lazy: keeps memlens --help light
    from memlens.models.throughput import expected_throughput  # lazy: keeps memlens --help light

    plan, inputs = generation_plan(config, run_dir)
    print(f"audit of {public_model_string(config.model)}: {inputs['questions']} questions x {inputs['stimuli']} "
          f"stimuli, {config.samples} sample(s) (+1 no-memory) = {inputs['cells']} responses"
          + "".join(f" + {inputs[key]} {what} responses" for key, what in (
              ("memory_set_cells", "memory-set"),
              ("control_cells", f"{config.control_set} control-set"))
                    if inputs.get(key)))
    print(plan)
    print("time: " + estimate_line(plan.calls, plan.est_completion_tokens, plan.est_prompt_tokens,
                                   expected_throughput(config.model, config.concurrency)))
    from memlens.audit.plan import labeling_plan  # lazy: pulls scipy

    labeling = labeling_plan(config, inputs["cells"])
    print(labeling if labeling else "labeling: no model calls (embedded)")
    if config.orthogonality_rater:
        # lazy: keeps memlens --help light
        from memlens.audit.pipeline import planned_rating_requests

        ratings = planned_rating_requests(config)
        rating_plan = plan_with_store(config.orthogonality_rater, ratings, run_dir)
        print(f"orthogonality rater {public_model_string(config.orthogonality_rater)}: {len(ratings)} (question, "
              f"persona/life-event stimulus) pairs, plus at most one repair call each for "
              f"invalid replies")
        print(rating_plan)
    sentence = power_line(config, inputs["questions"])
    if sentence:
        print(sentence)
    if power:
        from memlens.audit import plan as planning  # lazy: pulls scipy
        from memlens.audit.pilots import shipped_pilot  # lazy: pulls scipy

        model = shipped_pilot(config) or planning.assumed_model()
        print(planning.format_plan(planning.plan_designs(
            model, planning.question_cost(config), [inputs["questions"]], [config.baselines])))
    return 0


def power_line(config, questions: int) -> str | None:
    """What this design can decide on the audited model, measured (``memlens.audit.pilots``);
    None when no variance model was measured for these settings."""
    # lazy: pulls scipy
    from memlens.audit.pilots import measured_power, needed_design, power_sentence

    # lazy: keeps memlens --help light
    from memlens.models.throughput import expected_throughput, format_duration

    measured = measured_power(config, questions)
    if not measured:
        return None
    row, model = measured
    bigger = needed_design(config, row, model)
    eta = None
    if bigger:
        seconds = expected_throughput(config.model, config.concurrency).seconds(
            bigger.max_completion_tokens, bigger.est_prompt_tokens)
        eta = f"{bigger.generation_calls:,} calls, {format_duration(seconds)}"
    return power_sentence(row, model, eta)


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
        from memlens.stats import format_summary  # lazy: keeps memlens --help light

        lines.append(format_summary(result.stats))
    elif result.stats_error:
        lines.append(f"statistics not computed: {result.stats_error}")
    if getattr(result, "selectivity", None):  # --control-set
        # lazy: keeps memlens --help light
        from memlens.stats.selectivity import format_selectivity

        lines.append(format_selectivity(result.selectivity))
    if getattr(result, "memory_sets", None):  # --memory-sets
        # lazy: keeps memlens --help light
        from memlens.stats.memory_sets import format_memory_sets

        lines.append(format_memory_sets(result.memory_sets))
    lines.append("data quality: " + json.dumps(result.quality))
    if result.report:
        lines.append(f"report: {result.report}")
    return "\n".join(lines)


def run_report_command(args: argparse.Namespace) -> int:
    """``memlens report RUN_DIR``."""
    from memlens.report import build_report  # lazy: pulls pandas, matplotlib

    print(f"report: {build_report(args.run_dir)}")
    return 0


def run_compare_command(args: argparse.Namespace) -> int:
    """``memlens compare RUN_DIR… --out DIR``: the paired comparison (table on stdout, design
    warnings also on stderr)."""
    # lazy: pulls pandas, scipy, matplotlib
    from memlens.report.compare import compare_runs, format_comparison

    output = compare_runs(args.run_dirs, args.out, seed=args.seed, n_bootstrap=args.bootstrap)
    for comparison in output.result["comparisons"]:
        if comparison["design"].get("warning"):
            print(for_terminal(f"memlens: warning: {comparison['design']['warning']}"),
                  file=sys.stderr)
    print(format_comparison(output.result))
    print(f"comparison: {output.json_path}\npage: {output.html_path}")
    return 0
