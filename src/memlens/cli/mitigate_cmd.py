"""``memlens mitigate references|sympref|grpo|dpo|eval`` — argument parsing only.

Training flags are generated from the settings dataclasses (``--num-generations``, ``--beta``…),
so every paper default in ``memlens.mitigation.config`` can be overridden from the command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from memlens.cli import argtypes as at
from memlens.cli.call_flags import add_call_flags, finished_status
from memlens.errors import MemlensError


def register(subparsers) -> None:
    """Add ``memlens mitigate`` and its sub-commands."""
    parser = subparsers.add_parser("mitigate", help="reduce drift: reference data, DPO data, "
                                   "GRPO / DPO training, evaluation")
    commands = parser.add_subparsers(dest="mitigate_command", metavar="STEP")
    parser.set_defaults(func=lambda args: parser.print_help() or 2)
    _register_references(commands)
    _register_sympref(commands)
    _register_training(commands, "grpo")
    _register_training(commands, "dpo")
    _register_eval(commands)


def _run_flags(parser: argparse.ArgumentParser) -> None:
    """--out, --seed, --max-tokens and --no-progress: what every model-calling step takes."""
    parser.add_argument("--out", required=True, type=at.out_dir,
                        help="output directory (also the run store)")
    parser.add_argument("--seed", type=at.nonneg_int, default=0,
                        help="sampling seed (default %(default)s)")
    parser.add_argument("--max-tokens", type=at.max_tokens, default=1024,
                        help="completion token cap per call (default %(default)s)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def _common_generation(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--questions", help="questions file (default: the bundled benchmark)")
    parser.add_argument("--limit", type=at.positive_int, default=None, help="use the first N questions")
    parser.add_argument("--judge", required=True,
                        help="judge model string: a capable model (an API model); 'embedded' or "
                             "'fake' only for smoke runs")
    _run_flags(parser)


def _register_references(commands) -> None:
    parser = commands.add_parser("references", help="reference trajectories o*(x) for GRPO")
    parser.add_argument("--model", default="embedded",
                        help="base policy to sample from (default %(default)s)")
    parser.add_argument("--candidates", type=at.positive_int, default=4,
                        help="candidate trajectories sampled per question (default %(default)s)")
    parser.add_argument("--labeler", default="embedded",
                        help="embedded | keyword | MODEL (default %(default)s)")
    parser.add_argument("--stimuli", help="stimuli file (default: bundled catalogue)")
    _common_generation(parser)
    add_call_flags(parser)
    parser.set_defaults(func=_run_references)


def _register_sympref(commands) -> None:
    parser = commands.add_parser("sympref", help="SymPreference DPO pairs (App. I.1)")
    parser.add_argument("--model", default="embedded",
                        help="candidate generator (default %(default)s)")
    parser.add_argument("--rewriter", default=None, help="rewriter model (default: --judge)")
    parser.add_argument("--personas", help="personas JSONL (default: bundled)")
    parser.add_argument("--personas-per-question", type=at.positive_int, default=3,
                        help="personas sampled per question (default %(default)s)")
    parser.add_argument("--samples", type=at.positive_int, default=5,
                        help="candidates per arm (×2 arms; default %(default)s)")
    parser.add_argument("--pairs-per-prompt", type=at.nonneg_int, default=1,
                        help="pairs kept per prompt (0 = every chosen × rejected; default "
                             "%(default)s)")
    parser.add_argument("--mix", help="general preference set (JSONL prompt/chosen/rejected)")
    parser.add_argument("--mix-fraction", type=at.unit_interval, default=0.5,
                        help="share of general preference rows (--mix) in the mixed set "
                             "(default %(default)s)")
    _common_generation(parser)
    add_call_flags(parser)
    parser.set_defaults(func=_run_sympref)


def _add_settings_flags(parser: argparse.ArgumentParser, settings_class) -> None:
    for field in dataclasses.fields(settings_class):
        if field.name == "extra":
            continue
        default = field.default
        parser.add_argument(f"--{field.name.replace('_', '-')}", dest=field.name, default=None,
                            metavar="VALUE", help=f"(default: {default})")


def _register_training(commands, kind: str) -> None:
    # lazy: keeps memlens --help light
    from memlens.mitigation.config import DPOSettings, GRPOSettings

    settings_class = GRPOSettings if kind == "grpo" else DPOSettings
    what = "prompt + reference" if kind == "grpo" else "prompt / chosen / rejected"
    parser = commands.add_parser(kind, help=f"train with TRL {kind.upper()} ({what} data)",
                                 description=settings_class.__doc__)
    parser.add_argument("--model", required=True, help="local model directory")
    parser.add_argument("--data", required=True, help="dataset directory or .jsonl/.parquet")
    parser.add_argument("--output", required=True, type=at.out_dir, help="output directory")
    parser.add_argument("--config", help="YAML file of settings")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="any other TRL config field (repeatable)")
    parser.add_argument("--dry-run", action="store_true", help="print the resolved TRL config")
    _add_settings_flags(parser, settings_class)
    parser.set_defaults(func=_run_training, kind=kind, settings_class=settings_class)


def _register_eval(commands) -> None:
    parser = commands.add_parser("eval", help="Table 2: drift, diversity, judge, capability")
    parser.add_argument("--models", nargs="+", required=True,
                        help="model strings, base first (e.g. hf:./base hf:./grpo)")
    parser.add_argument("--data", required=True, help="held-out dataset (prompt, reference)")
    parser.add_argument("--labeler", default="embedded",
                        help="step labeler: embedded | MODEL (default %(default)s)")
    parser.add_argument("--judge", default=None, help="judge model string (omit: no judge)")
    parser.add_argument("--lm-eval", dest="lm_eval", default="",
                        help="comma list of capability tasks: mmlu,gsm8k,ifeval")
    parser.add_argument("--lm-eval-data", default=None, metavar="DIR",
                        help="folder with local task data: mmlu_redux.jsonl, gsm8k.jsonl, "
                             "ifeval.jsonl (lm-eval's record formats; .json, .parquet or HF "
                             "datasets folders of those names too). Without it the shipped items "
                             "run as a smoke test and no capability number is reported")
    parser.add_argument("--lm-eval-file", action="append", default=[], metavar="TASK=PATH",
                        help="one task's data file or datasets folder (repeatable; overrides "
                             "--lm-eval-data for that task)")
    parser.add_argument("--lm-eval-limit", type=at.positive_int, default=None,
                        help="seeded random subset of N items per task (seed: --seed)")
    parser.add_argument("--lm-eval-max-tokens", type=at.max_tokens, default=256,
                        help="max new tokens per capability item (default %(default)s)")
    parser.add_argument("--limit", type=at.positive_int, default=None, help="held-out rows to use")
    _run_flags(parser)
    add_call_flags(parser)
    parser.set_defaults(func=_run_eval)


def _run_training(args: argparse.Namespace) -> int:
    # lazy: keeps memlens --help light
    from memlens.mitigation.config import parse_extra, resolve_settings
    from memlens.mitigation.train import train_dpo, train_grpo, trl_config

    overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(args.settings_class)
                 if f.name != "extra"}
    settings = resolve_settings(args.settings_class, args.config, overrides,
                                parse_extra(args.set))
    if args.dry_run:
        config = trl_config(args.kind, settings, args.output)
        print(json.dumps({"memlens": dataclasses.asdict(settings),
                          "trl": config.to_dict()}, indent=2, default=str))
        return 0
    train = train_grpo if args.kind == "grpo" else train_dpo
    result = train(args.model, args.data, args.output, settings)
    losses = [row["loss"] for row in result.log_history if "loss" in row]
    print(f"trained {args.kind}: {result.train_rows} rows, {len(losses)} logged steps, "
          f"final loss {losses[-1] if losses else 'n/a'}; model in {result.output_dir}")
    return 0


def _run_references(args: argparse.Namespace) -> int:
    # lazy: keeps memlens --help light
    from memlens.mitigation.references import ReferenceConfig, build_references

    config = ReferenceConfig(model=args.model, judge=args.judge, labeler=args.labeler,
                             candidates=args.candidates, questions=args.questions,
                             stimuli=args.stimuli, limit=args.limit, seed=args.seed,
                             max_tokens=args.max_tokens)
    report = build_references(config, Path(args.out), progress=not args.no_progress)
    print(json.dumps(report, indent=2))
    return 0


def _run_sympref(args: argparse.Namespace) -> int:
    # lazy: keeps memlens --help light
    from memlens.mitigation.sympref import SymPrefConfig, build_sympref

    config = SymPrefConfig(model=args.model, judge=args.judge, rewriter=args.rewriter or args.judge,
                           personas=args.personas, personas_per_question=args.personas_per_question,
                           samples_per_arm=args.samples, pairs_per_prompt=args.pairs_per_prompt,
                           questions=args.questions, limit=args.limit, seed=args.seed,
                           max_tokens=args.max_tokens, mix=args.mix, mix_fraction=args.mix_fraction)
    report = build_sympref(config, Path(args.out), progress=not args.no_progress)
    print(json.dumps(report["counts"], indent=2))
    return 0


def _run_eval(args: argparse.Namespace) -> int:
    # lazy: pulls numba
    from memlens.mitigation.evaluate import EvalConfig, display_table, evaluate_models

    tasks = [task.strip() for task in args.lm_eval.split(",") if task.strip()]
    files = {}
    for pair in args.lm_eval_file:
        task, sep, path = pair.partition("=")
        if not sep or task.strip() not in tasks:
            raise MemlensError(f"--lm-eval-file {pair!r}: expected TASK=PATH with TASK one of "
                               f"--lm-eval ({', '.join(tasks) or 'none given'})")
        files[task.strip()] = path
    config = EvalConfig(models=args.models, data=args.data, labeler=args.labeler, judge=args.judge,
                        lm_eval_tasks=tasks, lm_eval_limit=args.lm_eval_limit, limit=args.limit,
                        lm_eval_data=args.lm_eval_data, lm_eval_files=files,
                        lm_eval_max_tokens=args.lm_eval_max_tokens,
                        seed=args.seed, max_tokens=args.max_tokens)
    from memlens.report.mitigation_figures import drift_capability_figure  # lazy: pulls matplotlib

    frame = evaluate_models(config, Path(args.out), progress=not args.no_progress)
    drift_capability_figure(frame, Path(args.out) / "drift_vs_capability")  # after the pipeline
    results = json.loads((Path(args.out) / "eval_report.json").read_text())["results"]
    print(display_table(results))
    print(f"table, report and figure in {args.out}")
    return finished_status(sum(int(row.get("failed") or 0) for row in results),
                           sum(int(row.get("n") or 0) for row in results), "generation calls")
