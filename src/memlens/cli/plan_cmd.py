"""``memlens plan``: power, MDE and cost of audit designs before running one (argument parsing
only; the logic is ``memlens.audit.plan``)."""

from __future__ import annotations

import argparse
import json

from memlens import targets
from memlens.audit import assumptions as plan
from memlens.cli import argtypes as at
from memlens.errors import MemlensError

ASSUMPTION_FLAGS = ("floor_mean", "pair_sd", "share_response", "tau")


def int_list(low: int, high: int):
    """argparse type: comma-separated integers from ``low`` to ``high``.

    >>> int_list(1, 50)("1,3, 5")
    [1, 3, 5]
    """
    each = at.int_range(low, high)

    def parse(text: str) -> list[int]:
        parts = [part.strip() for part in text.split(",")]
        if not all(parts):
            raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")
        return [each(part) for part in parts]

    return parse


def register(subparsers) -> None:
    """Add ``plan`` (its help reads light constant modules only: ``--help`` stays fast)."""

    parser = subparsers.add_parser(
        "plan", help="power, minimum detectable effect and cost of audit designs (no model call)",
        description="For a grid of designs (questions x K no-memory baselines) print the power of "
                    "the sensitivity check (life events vs floor, two-sided paired t over "
                    "questions) for a target effect, its minimum detectable effect, the questions "
                    "the target needs, and the calls and tokens the design costs. The variance "
                    "comes from a finished pilot audit (--pilot) or from stated assumptions "
                    f"(defaults: floor mean {plan.DEFAULT_FLOOR_MEAN}, pair SD "
                    f"{plan.DEFAULT_PAIR_SD}, response share {plan.DEFAULT_SHARE_RESPONSE}, tau "
                    f"{plan.DEFAULT_TAU} — assumptions, not measurements). Stimuli, samples and "
                    "max_tokens come from --preset/--config (else the pilot's recorded config, "
                    "else the audit defaults). The recommended design is the cheapest (generation "
                    "tokens, then calls) whose power reaches the target.")
    source = parser.add_argument_group("variance (a pilot or stated assumptions)")
    source.add_argument("--pilot", metavar="RUN_DIR",
                        help="finished audit run: estimate sigma_a^2, sigma_e^2, tau^2 and the "
                             "floor mean from its drift pair rows")
    source.add_argument("--floor-mean", type=at.finite_float(0, 1e9, low_open=True), metavar="X",
                        help=f"mean no-memory drift (default {plan.DEFAULT_FLOOR_MEAN})")
    source.add_argument("--pair-sd", type=at.finite_float(0, 1e9, low_open=True), metavar="SD",
                        help=f"SD of one (response, baseline) pair's drift "
                             f"(default {plan.DEFAULT_PAIR_SD})")
    source.add_argument("--share-response", type=at.finite_float(0, 1), metavar="S",
                        help="share of a pair's variance due to its two responses, "
                             f"2 sigma_a^2 / pair variance (default {plan.DEFAULT_SHARE_RESPONSE})")
    source.add_argument("--tau", type=at.finite_float(0, 1e9), metavar="T",
                        help=f"SD of the effect over questions (default {plan.DEFAULT_TAU})")
    source.add_argument("--metric", default="dtw",
                        choices=["dtw", "sri", "d_seq", "d_dist", "edit_distance"],
                        help="drift metric (default dtw)")
    grid = parser.add_argument_group("designs and target")
    grid.add_argument("--questions", type=int_list(2, 1_000_000), metavar="N,N,...",
                      default=list(plan.DEFAULT_QUESTIONS),
                      help="question counts (default 16,30,60,120)")
    grid.add_argument("--baselines", type=int_list(1, 50), metavar="K,K,...",
                      default=list(plan.DEFAULT_BASELINES),
                      help="no-memory baselines per question (default 1,3,5,8)")
    grid.add_argument("--effect-pct", type=at.finite_float(0, 1e6, low_open=True), metavar="PCT",
                      default=targets.PAPER_EFFECT_PCT,
                      help="target life-event elevation over the floor, %% (default 23: the "
                           "paper's Qwen3-4B life-event elevation)")
    grid.add_argument("--alpha", type=at.finite_float(0, 1, low_open=True),
                      default=targets.ALPHA_SENSITIVITY,
                      help="two-sided level (default 0.001, the verdict's sensitivity level)")
    grid.add_argument("--power", type=at.finite_float(0, 1, low_open=True),
                      default=targets.TARGET_POWER, help="target power (default 0.8)")
    audit = parser.add_argument_group("audit design (stimuli, samples, tokens)")
    audit.add_argument("--preset", choices=["quick", "standard", "paper"],
                       help="the design's stimuli, samples and max tokens, as in memlens audit "
                            "(default: none)")
    audit.add_argument("--config", metavar="FILE", help="audit YAML/JSON config")
    audit.add_argument("--samples", type=at.positive_int, metavar="N",
                       help="responses per perturbed condition")
    audit.add_argument("--max-tokens", type=at.max_tokens, metavar="N",
                       help="completion token cap per call, for the cost (default 2048, or the "
                            "preset's)")
    audit.add_argument("--stimuli-per-category", type=at.positive_int, metavar="N",
                       help="stimuli (values) per category (value contrasts need 2 or more)")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.set_defaults(func=run_plan_command)


def run_plan_command(args: argparse.Namespace) -> int:
    """``memlens plan``."""
    from memlens.audit import load_config  # lazy: keeps memlens --help light
    from memlens.audit import plan as planning  # lazy: pulls scipy
    from memlens.audit.config import build_config  # lazy: keeps memlens --help light

    stated = {name: getattr(args, name) for name in ASSUMPTION_FLAGS
              if getattr(args, name) is not None}
    overrides = {"samples": args.samples, "max_tokens": args.max_tokens,
                 "stimuli_per_category": args.stimuli_per_category}
    if args.pilot:
        if stated:
            flags = ", ".join("--" + name.replace("_", "-") for name in stated)
            raise MemlensError(f"--pilot estimates the variance; do not also give {flags}")
        model, pilot_config = planning.read_pilot(args.pilot, args.metric)
        if args.config or args.preset:
            config = load_config(args.config, overrides, preset=args.preset)
        else:
            recorded = {k: v for k, v in pilot_config.items() if k != "preset"}
            recorded.update({k: v for k, v in overrides.items() if v is not None})
            config = build_config(recorded, f"{args.pilot} (recorded audit config)")
    else:
        from memlens.audit.pilots import shipped_pilot  # lazy: pulls scipy

        config = load_config(args.config, overrides, preset=args.preset)
        # measured on this very setting (e.g. the quick preset on the embedded model) beats
        # generic assumptions; stated assumptions win over both
        shipped = None if stated or args.metric != "dtw" else shipped_pilot(config)
        model = shipped or planning.assumed_model(**stated, metric=args.metric)
    result = planning.plan_designs(model, planning.question_cost(config), args.questions,
                                   args.baselines, args.effect_pct, args.alpha, args.power)
    print(json.dumps(result.to_dict(), indent=2) if args.json else planning.format_plan(result))
    return 0
