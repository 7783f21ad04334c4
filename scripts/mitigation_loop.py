#!/usr/bin/env python
"""Audit -> post-train against drift -> re-audit -> compare, on this machine (CPU, no hub).

    python scripts/mitigation_loop.py --out runs/loop          # run or resume
    python scripts/mitigation_loop.py --out runs/loop --status # what is done, with wall times

Stages (each resumable: a finished stage is recorded in OUT/loop_stages.json with its wall time
and skipped next time; the memlens commands inside resume from their own run stores):

1. ``base-model``  the embedded SmolLM2-135M-Instruct GGUF (Q4_1) de-quantised by transformers into
                   a float32 folder OUT/base (``memlens.mitigation.export.gguf_to_folder``).
2. ``audit-base``  ``memlens audit --model hf:OUT/base`` on a tiny design (audit questions A).
3. ``references``  ``memlens mitigate references`` on other questions (B): candidates from the
                   embedded model (the Q4_1 build of the same weights, for speed), the pick by the
                   embedded SmolLM2 as judge (schema-constrained; a 135M judge, not a capable one).
4. ``grpo``        ``memlens mitigate grpo --lora true`` from OUT/base with the drift reward
                   (dtw+fmt, MiniLM labeler), a few steps on CPU.
5. ``merge``       the LoRA adapter merged into the base -> OUT/tuned.
6. ``audit-tuned`` the same audit with ``hf:OUT/tuned``.
7. ``compare``     ``memlens compare OUT/audit-base OUT/audit-tuned``.
8. ``eval``        ``memlens mitigate eval`` of both on the held-out references, with capability
                   subsets (lm-eval) from ``--lm-eval-data`` limited to ``--lm-eval-limit`` items.

The sizes are tiny on purpose (2 shared cores): see ``--help`` for each knob. The numbers it gives
are a demonstration that the loop runs, not a measurement of the method.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

STAGES = ("base-model", "audit-base", "references", "grpo", "merge", "audit-tuned", "compare",
          "eval")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--status", action="store_true", help="print the stage log and exit")
    parser.add_argument("--audit-questions", type=int, default=4)
    parser.add_argument("--audit-max-tokens", type=int, default=40)
    parser.add_argument("--audit-baselines", type=int, default=2)
    parser.add_argument("--stimulus-categories", default="filler,age,bereavement")
    parser.add_argument("--ref-questions", type=int, default=10)
    parser.add_argument("--ref-candidates", type=int, default=2)
    parser.add_argument("--ref-max-tokens", type=int, default=64)
    parser.add_argument("--grpo-steps", type=int, default=6)
    parser.add_argument("--grpo-lr", default="1e-4")
    parser.add_argument("--grpo-completion-tokens", type=int, default=40)
    parser.add_argument("--lm-eval", default="mmlu,gsm8k,ifeval")
    parser.add_argument("--lm-eval-data", default=None,
                        help="folder of local task files (default: the project-written fixture "
                             "tests/mitigation/data/lm_eval_fixture)")
    parser.add_argument("--lm-eval-limit", type=int, default=10)
    parser.add_argument("--eval-max-tokens", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def load_log(out: Path) -> dict:
    path = out / "loop_stages.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def save_log(out: Path, log: dict) -> None:
    from memlens.fileio import atomic_write_text

    atomic_write_text(out / "loop_stages.json", json.dumps(log, indent=2))


def memlens(*args: str) -> list[str]:
    return [sys.executable, "-m", "memlens.cli.main", *args]


def run(command: list[str], out: Path, stage: str) -> None:
    """Run one command, its output to the terminal and OUT/logs/STAGE.log."""
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    print("  $ " + " ".join(command), flush=True)
    with (logs / f"{stage}.log").open("a", encoding="utf-8") as log:
        process = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
    if process.returncode != 0:
        tail = (logs / f"{stage}.log").read_text(encoding="utf-8").splitlines()[-15:]
        raise SystemExit(f"stage {stage} failed (exit {process.returncode}); last lines of "
                         f"{logs / (stage + '.log')}:\n" + "\n".join(tail))


def split_questions(out: Path, args) -> tuple[Path, Path]:
    """Disjoint question files: A for the audits, B for the references (train + held out)."""
    import numpy as np

    from memlens.questions import load_questions

    questions = load_questions()
    order = np.random.default_rng(args.seed).permutation(len(questions))
    inputs = out / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    a, b = inputs / "audit_questions.jsonl", inputs / "reference_questions.jsonl"
    take_a = [questions[i] for i in order[:args.audit_questions]]
    take_b = [questions[i] for i in order[args.audit_questions:
                                          args.audit_questions + args.ref_questions]]
    for path, chosen in ((a, take_a), (b, take_b)):
        if not path.exists():
            path.write_text("".join(json.dumps(vars(q)) + "\n" for q in chosen))
    return a, b


def audit_config(out: Path, args, questions: Path) -> Path:
    path = out / "inputs" / "audit.yaml"
    categories = [c for c in args.stimulus_categories.split(",") if c]
    lines = ["labeler: embedded", f"questions: {questions}", "stimulus_categories:",
             *[f"  - {c}" for c in categories], "stimuli_per_category: 1", "samples: 1",
             f"baselines: {args.audit_baselines}", f"max_tokens: {args.audit_max_tokens}",
             "n_bootstrap: 2000", f"seed: {args.seed}"]
    if not path.exists():
        path.write_text("\n".join(lines) + "\n")
    return path


def stage_commands(out: Path, args) -> dict:
    """Stage name -> callable running it."""
    from memlens.mitigation.export import gguf_to_folder, merge_adapter
    from memlens.models.embedded import gguf_path

    audit_questions, ref_questions = split_questions(out, args)
    config = audit_config(out, args, audit_questions)
    base, tuned, adapter = out / "base", out / "tuned", out / "grpo"
    fixture = Path(__file__).resolve().parents[1] / "tests/mitigation/data/lm_eval_fixture"
    return {
        "base-model": lambda: gguf_to_folder(gguf_path(), base),
        "audit-base": lambda: run(memlens("audit", "--config", str(config), "--model",
                                          f"hf:{base}", "--out", str(out / "audit-base"),
                                          "--no-progress"), out, "audit-base"),
        "references": lambda: run(memlens(
            "mitigate", "references", "--model", "embedded", "--judge", "embedded",
            "--labeler", "embedded", "--questions", str(ref_questions),
            "--candidates", str(args.ref_candidates), "--max-tokens", str(args.ref_max_tokens),
            "--seed", str(args.seed), "--out", str(out / "refs"), "--no-progress"),
            out, "references"),
        "grpo": lambda: run(memlens(
            "mitigate", "grpo", "--model", str(base), "--data", str(out / "refs" / "dataset"),
            "--output", str(adapter), "--lora", "true", "--max-steps", str(args.grpo_steps),
            "--num-generations", "2", "--per-device-train-batch-size", "2",
            "--max-completion-length", str(args.grpo_completion_tokens),
            "--learning-rate", args.grpo_lr, "--logging-steps", "1", "--save-steps", "100000",
            "--num-train-epochs", "1", "--rewards", "dtw+fmt", "--labeler", "embedded",
            "--seed", str(args.seed)), out, "grpo"),
        "merge": lambda: merge_adapter(adapter, tuned, base=base),
        "audit-tuned": lambda: run(memlens("audit", "--config", str(config), "--model",
                                           f"hf:{tuned}", "--out", str(out / "audit-tuned"),
                                           "--no-progress"), out, "audit-tuned"),
        "compare": lambda: run(memlens("compare", str(out / "audit-base"),
                                       str(out / "audit-tuned"), "--out", str(out / "compare")),
                               out, "compare"),
        "eval": lambda: run(memlens(
            "mitigate", "eval", "--models", f"hf:{base}", f"hf:{tuned}",
            "--data", str(out / "refs" / "dataset"), "--labeler", "embedded",
            "--judge", "embedded", "--lm-eval", args.lm_eval,
            "--lm-eval-data", str(args.lm_eval_data or fixture),
            "--lm-eval-limit", str(args.lm_eval_limit), "--max-tokens", str(args.eval_max_tokens),
            "--lm-eval-max-tokens", str(args.eval_max_tokens),
            "--out", str(out / "eval"), "--no-progress"), out, "eval"),
    }


def drift_summary(run_dir: Path, seed: int = 0, replicates: int = 2000) -> dict:
    """Mean DTW per condition class of one audit, with a question-cluster bootstrap 95 % CI."""
    from memlens.audit.results import load_audit_run
    from memlens.stats.bootstrap import draw_cluster_indices, percentile_interval

    frame = load_audit_run(run_dir).frame
    out = {}
    groups = [("perturbed (noise+persona+life_event)", frame["condition_class"] != "control")]
    groups += [(k, frame["condition_class"] == k) for k in ("control", "noise", "persona",
                                                           "life_event")]
    for name, mask in groups:
        part = frame[mask]
        if part.empty:
            continue
        per_question = part.groupby("question_id")["dtw"].agg(["sum", "count"])
        sums, counts = per_question["sum"].to_numpy(), per_question["count"].to_numpy()
        picks = draw_cluster_indices(len(sums), replicates, seed)
        low, high = percentile_interval(sums[picks].sum(axis=1) / counts[picks].sum(axis=1))
        out[name] = {"mean": float(sums.sum() / counts.sum()), "lo": low,
                     "hi": high, "n_rows": int(counts.sum()),
                     "n_questions": int(len(sums))}
    return out


def write_summary(out: Path, log: dict) -> Path:
    """OUT/summary.md: stage wall times, base vs tuned drift with CIs, eval cells with n."""
    lines = ["# Mitigation loop summary", "", "| stage | wall time (s) |", "|---|---|"]
    lines += [f"| {stage} | {entry['wall_s']} |" for stage, entry in log.items()]
    lines.append(f"| total | {sum(e['wall_s'] for e in log.values()):.0f} |")
    for label, run in (("base", "audit-base"), ("tuned", "audit-tuned")):
        if (out / run / "memlens.sqlite").exists() and log.get(run, {}).get("done"):
            lines += ["", f"## Audit of the {label} model (DTW, question-cluster bootstrap 95 % CI)",
                      "", "| rows | mean DTW | 95 % CI | n rows | n questions |", "|---|---|---|---|---|"]
            for name, cell in drift_summary(out / run).items():
                lines.append(f"| {name} | {cell['mean']:.3f} | [{cell['lo']:.3f}, {cell['hi']:.3f}] "
                             f"| {cell['n_rows']} | {cell['n_questions']} |")
    if (out / "eval" / "table.md").exists():
        lines += ["", "## mitigate eval", "", (out / "eval" / "table.md").read_text()]
    path = out / "summary.md"
    from memlens.fileio import atomic_write_text

    atomic_write_text(path, "\n".join(lines) + "\n")
    return path


def main(argv=None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # one torch / OpenMP thread: on 2 shared cores two spinning threads are several times slower
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    args.out.mkdir(parents=True, exist_ok=True)
    log = load_log(args.out)
    if args.status:
        print(json.dumps(log, indent=2))
        print(write_summary(args.out, log).read_text())
        return 0
    from tqdm import tqdm

    commands = stage_commands(args.out, args)
    bar = tqdm(STAGES, desc="mitigation loop", unit="stage", file=sys.stdout)
    for stage in bar:
        bar.set_postfix_str(stage)
        if log.get(stage, {}).get("done"):
            continue
        print(f"\n== {stage} ==", flush=True)
        started = time.perf_counter()
        commands[stage]()
        log[stage] = {"done": True, "wall_s": round(time.perf_counter() - started, 1),
                      "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        save_log(args.out, log)
        print(f"   {stage}: {log[stage]['wall_s']} s", flush=True)
    bar.close()
    print(write_summary(args.out, log).read_text())
    total = sum(entry["wall_s"] for entry in log.values())
    print(f"all stages done; total wall time {total:.0f} s; stage log in {args.out}/loop_stages.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
