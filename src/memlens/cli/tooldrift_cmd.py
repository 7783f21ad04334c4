"""``memlens tooldrift run|score``: the MemDrift tool-drift benchmark (docs/tooldrift.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from memlens.cli import argtypes as at
from memlens.cli.call_flags import add_call_flags, finished_status
from memlens.cli.tooldrift_compare_cmd import register_compare
from memlens.cli.tooldrift_scan_cmd import register_scan
from memlens.errors import MemlensError
from memlens.tooldrift.frameworks import FRAMEWORKS, open_memory
from memlens.tooldrift.schema import BIAS_DIMENSIONS

if TYPE_CHECKING:  # the annotation only: the CLI imports pipelines when a command runs
    from memlens.tooldrift.results import ToolDriftSummary


def register(subparsers) -> None:
    """Add ``tooldrift`` and its sub-commands."""
    parser = subparsers.add_parser("tooldrift", help="memory-induced tool drift (MemDrift)",
                                   description="Does stored user memory change an agent's "
                                               "tool-call parameters? See docs/tooldrift.md.")
    commands = parser.add_subparsers(dest="tooldrift_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: parser.print_help() or 2)
    _register_run(commands)
    _register_score(commands)
    _register_build(commands)
    _register_setup(commands)

    register_compare(commands)  # paired comparison (its own module)

    register_scan(commands)  # schema scan of the user's own tools (its own module)


def _register_setup(commands) -> None:
    setup = commands.add_parser("setup", help="prepare a memory framework that needs its own venv",
                                description="mempalace: create its venv (it sees this "
                                            "environment's packages), pip-install mempalace there and export the packaged "
                                            "MiniLM to ONNX for offline use. Idempotent.")
    setup.add_argument("framework", choices=("mempalace",), help="the framework to set up")
    setup.add_argument("--venv", type=Path, default=None,
                       help="venv folder (default: $MEMLENS_MEMPALACE_VENV, else "
                            "<this virtualenv>/memlens-mempalace, else "
                            "~/.cache/memlens/venvs/mempalace)")
    setup.add_argument("--force-export", action="store_true", help="redo the ONNX export")
    setup.set_defaults(func=_setup)


def _setup(args: argparse.Namespace) -> int:
    from memlens.tooldrift.mempalace_adapter import setup  # lazy: keeps memlens --help light

    done = setup(args.venv, force_export=args.force_export)
    print(f"mempalace ready in {done['total_s']:.1f} s (install {done['install_s']:.1f} s, "
          f"ONNX export {done['export_s']:.1f} s, worker check {done['check_s']:.1f} s)")
    print(f"python: {done['python']}\nmodel:  {done['model']}")
    return 0


def _register_build(commands) -> None:
    build = commands.add_parser("build", help="generate scenarios with the refinement loop")
    build.add_argument("--generator", required=True, help="model string of the generator LLM")
    build.add_argument("--target", required=True, help="model string of the target agent")
    build.add_argument("--judge", required=True, help="model string of the judge LLM")
    build.add_argument("--dimension", help="bias dimension, e.g. speed_impatience")
    build.add_argument("--domains", help="comma-separated domains")
    build.add_argument("--scan", type=Path, default=None, metavar="DIR",
                       help="build for your own scanned tools (a 'tooldrift scan' folder) "
                            "instead of --dimension/--domains: one scenario per flagged "
                            "parameter of the review")
    build.add_argument("--review", type=Path, default=None, metavar="FILE",
                       help="with --scan: the edited review (default DIR/review.csv)")
    build.add_argument("--limit", type=at.positive_int, default=None,
                       help="with --scan: only the first N scenarios")
    build.add_argument("--per-domain", type=at.positive_int, default=1,
                       help="scenarios per domain (with --scan: per flagged parameter)")
    build.add_argument("--attempts", type=at.positive_int, default=4, help="attempts per scenario (default 4)")
    build.add_argument("--k", type=at.positive_int, default=5,
                       help="target samples per condition (default %(default)s)")
    build.add_argument("--seed", type=at.nonneg_int, default=0,
                       help="sampling seed (default %(default)s)")
    build.add_argument("--out", required=True, type=at.out_dir_path, help="output folder (MemDrift layout)")
    add_call_flags(build, attempts_flag="--call-attempts")
    build.set_defaults(func=_build)


def _build(args: argparse.Namespace) -> int:
    from memlens.models import get_model  # lazy: keeps memlens --help light
    from memlens.tooldrift.builder import build_dataset  # lazy: pulls scipy

    if args.scan is not None:
        return _build_from_scan(args)
    if not args.dimension or not args.domains:
        raise MemlensError("tooldrift build needs --dimension and --domains (or --scan DIR)")
    if args.dimension not in BIAS_DIMENSIONS:
        raise MemlensError(f"--dimension '{args.dimension}': expected one of "
                           + ", ".join(BIAS_DIMENSIONS))
    domains = [d.strip() for d in args.domains.split(",") if d.strip()]
    if not domains or args.attempts < 1 or args.k < 1 or args.per_domain < 1:
        raise MemlensError("--domains must name a domain; --attempts, --k, --per-domain must be >= 1")
    counts = build_dataset(get_model(args.generator), get_model(args.target),
                           get_model(args.judge), args.out, dimension=args.dimension,
                           domains=domains, per_domain=args.per_domain, attempts=args.attempts,
                           k=args.k, seed=args.seed)
    print(f"built {counts['scenarios']} scenario(s) from {counts['attempts']} attempts "
          f"({counts['failed_scenarios']} without a valid attempt) into {args.out}")
    return 0 if counts["scenarios"] else 1


def _build_from_scan(args: argparse.Namespace) -> int:
    from memlens.models import get_model  # lazy: keeps memlens --help light
    from memlens.tooldrift.scan_build import build_from_scan  # lazy: pulls scipy

    if args.dimension or args.domains:
        raise MemlensError("--scan builds for the scanned tools: drop --dimension / --domains")
    counts = build_from_scan(get_model(args.generator), get_model(args.target),
                             get_model(args.judge), args.scan, args.out, review=args.review,
                             per_param=args.per_domain, attempts=args.attempts, k=args.k,
                             seed=args.seed, limit=args.limit)
    print(f"built {counts['scenarios']} of {counts['planned']} scenario(s) for the scanned "
          f"tools from {counts['attempts']} attempts into {args.out}")
    return 0 if counts["scenarios"] else 1


def _register_run(commands) -> None:
    run = commands.add_parser("run", help="call a model under base / neutral / biased memory")
    run.add_argument("--model", required=True, help="model string, e.g. embedded, openai:MODEL@URL")
    run.add_argument("--data", default=None,
                     help="MemDrift folder (scenarios/, rubrics/…); default: the bundled sample")
    run.add_argument("--out", required=True, type=at.out_dir_path, help="run directory (resumable)")
    run.add_argument("--k", type=at.positive_int, default=5, help="tool calls per condition (default 5)")
    run.add_argument("--setting", type=int, choices=(1, 2), default=1,
                     help="1: memory verbatim in the system prompt; 2: via a memory framework")

    run.add_argument("--framework", choices=FRAMEWORKS, default=None,
                     help="memory system for --setting 2 (docs/tooldrift.md)")
    run.add_argument("--framework-llm", default=None,
                     help="model string for the framework's own LLM extraction (default: "
                          "verbatim storage, no extraction)")
    run.add_argument("--top-k", type=at.positive_int, default=5,
                     help="memories retrieved per query (setting 2; default %(default)s)")
    run.add_argument("--retrieval-threshold", type=at.finite_float(-1.0, 1.0), default=None,
                     help="minimum retrieval score (setting 2; default: the framework's own, "
                          "0.1 for mem0, 0.1 cosine for mempalace, 0.6 cosine for graphiti, "
                          "none for the others)")
    run.add_argument("--replay-memories", type=Path, default=None, metavar="DIR",
                     help="setting 2 without running a framework: inject what --framework "
                          "retrieved in the published dataset, DIR/memories/<framework>/<dim>.json "
                          "(DIR laid out like the MemDrift dataset; also the default --data)")
    run.add_argument("--tool-choice", default="entry", metavar="auto|required|entry|NAME",
                     help="native tool calling: 'entry' (default) forces each entry's own tool "
                          "by name; 'required' forces some call; 'auto' lets the model decide; "
                          "NAME forces that tool (every selected entry must have it)")
    run.add_argument("--call-path", choices=("auto", "tools", "json_schema"), default="auto",
                     help="auto (default): native tool calls when the backend has them and can "
                          "force one, else JSON-schema-constrained output; recorded in the "
                          "manifest")
    run.add_argument("--min-biased-retrieval", type=at.int_range(0), default=2, metavar="N",
                     help="setting 2: Δ is not interpretable when a biased memory was retrieved "
                          "in fewer than max(N, share x queries) biased-condition queries "
                          "(default 2)")
    run.add_argument("--min-biased-retrieval-share", type=at.finite_float(0.0, 1.0), default=0.25,
                     metavar="SHARE", help="the share in that rule (default 0.25)")
    run.add_argument("--fail-on-uninterpretable", action="store_true",
                     help="exit 5 when Δ is not interpretable overall or for any dimension or "
                          "domain (results are still written)")
    run.add_argument("--judge", default=None,
                     help="model string of an LLM judge for deflection scores 1-5 (optional)")
    run.add_argument("--seed", type=at.nonneg_int, default=0, help="sampling seed; call k uses seed + k")
    run.add_argument("--temperature", type=at.temperature, default=0.7,
                     help="sampling temperature (default %(default)s)")
    run.add_argument("--max-tokens", type=at.max_tokens, default=512,
                     help="completion token cap per call (default %(default)s)")
    run.add_argument("--limit", type=at.positive_int, default=None, help="only the first N entries")
    run.add_argument("--bootstrap", type=at.bootstrap, default=10_000,
                     help="bootstrap replicates (default %(default)s)")
    add_call_flags(run)
    run.set_defaults(func=_run)


def _register_score(commands) -> None:
    score = commands.add_parser("score", help="score CALLS.jsonl against rubrics")
    score.add_argument("--rubrics", required=True, type=Path,
                       help="the layout's rubrics/ folder or its all_params/ folder")
    score.add_argument("--calls", required=True, type=Path, help="CALLS JSONL file")
    score.add_argument("--out", required=True, type=at.out_dir_path, help="output folder")
    score.add_argument("--scenarios", type=Path, default=None,
                       help="scenarios/ folder for schema defaults (default: next to rubrics/)")
    score.add_argument("--seed", type=at.nonneg_int, default=0,
                       help="bootstrap seed (default %(default)s)")
    score.add_argument("--bootstrap", type=at.bootstrap, default=10_000,
                       help="bootstrap replicates (default %(default)s)")
    score.set_defaults(func=_score)


def _score(args: argparse.Namespace) -> int:
    from memlens.report.tooldrift import format_table, write_tooldrift_report  # lazy: pulls scipy
    from memlens.tooldrift.score import score_files  # lazy: pulls scipy

    _check_bootstrap(args.bootstrap)
    summary = score_files(args.rubrics, args.calls, args.out, scenarios_dir=args.scenarios,
                          seed=args.seed, n_bootstrap=args.bootstrap)
    write_tooldrift_report(args.out, args.calls, summary)  # the report after the pipeline
    print(format_table(summary))
    print(f"wrote {args.out / 'tooldrift.json'} and {args.out / 'tooldrift.html'}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from memlens.models import get_model  # lazy: keeps memlens --help light
    from memlens.report.tooldrift import format_table, write_tooldrift_report  # lazy: pulls scipy
    from memlens.tooldrift.loader import load_dataset  # lazy: keeps memlens --help light
    from memlens.tooldrift.runner import RunConfig, run_tooldrift  # lazy: pulls scipy

    if args.replay_memories is not None and args.setting != 2:
        raise MemlensError("--replay-memories replays Setting 2: add --setting 2 --framework NAME")
    if args.setting == 2 and not args.framework:
        raise MemlensError(f"--setting 2 needs --framework ({', '.join(FRAMEWORKS)})")
    if args.setting == 1 and args.framework:
        raise MemlensError("--framework is only used with --setting 2")
    if args.k < 1:
        raise MemlensError(f"--k must be at least 1, got {args.k}")
    if args.limit is not None and args.limit < 1:
        raise MemlensError(f"--limit must be at least 1, got {args.limit}")
    _check_bootstrap(args.bootstrap)
    replay = args.replay_memories
    dataset = load_dataset(args.data if args.data or replay is None else replay)
    model = get_model(args.model)
    extra = {"top_k": args.top_k, "retrieval_threshold": args.retrieval_threshold,
             "framework_llm": args.framework_llm} if args.setting == 2 else {}
    if replay is not None:  # nothing is retrieved live: the framework's settings do not apply
        extra = {"replay_memories": str(replay)}
    config = RunConfig(k=args.k, setting=args.setting, framework=args.framework, seed=args.seed,
                       temperature=args.temperature, max_tokens=args.max_tokens, limit=args.limit,
                       n_bootstrap=args.bootstrap, tool_choice=args.tool_choice,
                       call_path=args.call_path, judge=args.judge,
                       min_biased_retrieval_count=args.min_biased_retrieval,
                       min_biased_retrieval_share=args.min_biased_retrieval_share, extra=extra)
    judge = get_model(args.judge) if args.judge else None  # before a worker process starts
    memory = None
    if replay is not None:
        from memlens.tooldrift.replay import ReplayMemory  # lazy: keeps memlens --help light

        memory = ReplayMemory.load(replay, args.framework, dataset)
    elif args.setting == 2:
        memory = open_memory(args.framework, args.out / "memory", llm=args.framework_llm,
                             top_k=args.top_k, threshold=args.retrieval_threshold)
    try:
        summary = run_tooldrift(model, dataset, args.out, config, memory, judge=judge)
    finally:
        if memory is not None:
            memory.close()
    write_tooldrift_report(args.out, summary=summary)  # the report after the pipeline
    print(format_table(summary))
    if summary.deflection is not None:
        d = summary.deflection
        print(f"judge deflection (1-5): neutral {d.neutral}, biased {d.biased}, "
              f"delta {d.delta}, unusable {d.unusable}")
    print(f"wall time {summary.run.wall_s:.1f} s; wrote {args.out / 'tooldrift.json'}")
    failed = summary.counts.failed_calls or 0
    status = finished_status(failed, summary.counts.calls + failed)  # calls: scored
    blocked = uninterpretable_groups(summary)
    if blocked:
        print(f"Δ not interpretable for {len(blocked)} group(s): {'; '.join(blocked[:6])}"
              + (" …" if len(blocked) > 6 else ""))
        if args.fail_on_uninterpretable and status == 0:
            return UNINTERPRETABLE_EXIT
    return status


UNINTERPRETABLE_EXIT = 5
"""``tooldrift run --fail-on-uninterpretable``: Δ not interpretable somewhere (results written);
the CLI-wide "cannot decide" status, as ``memlens.gate.exits.INSTRUMENT_INVALID``."""


def uninterpretable_groups(summary: ToolDriftSummary) -> list[str]:
    """``group: reason`` for every group (overall, dimensions, domains) whose Δ is not
    interpretable (see ``memlens.tooldrift.interpret``)."""
    return [f"{label}: {group.interpretation.reasons[0].text}"
            for label, group in summary.groups() if not group.interpretation.interpretable]


def _check_bootstrap(replicates: int) -> None:
    """Confidence intervals need replicates: refuse 0 or fewer instead of silently omitting them."""

    if replicates < 1:
        raise MemlensError(f"--bootstrap must be at least 1 (10000 is the default), got {replicates}")
