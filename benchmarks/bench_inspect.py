"""The same audit through memlens's runner and through inspect_ai (+ ``memlens import-inspect``):
wall time of each path, and whether the drift tables are identical.

Both paths run as a user runs them (the CLIs, in subprocesses, against one OpenAI-compatible
server on 127.0.0.1) with the same design, seed, labeler (embedded MiniLM) and concurrency:

    memlens audit --model openai:M@URL --preset quick --n-questions N --concurrency C --out A
    inspect eval memlens/reasoning_drift --model openai-api/bench/M --model-base-url URL \
        -T n_questions=N --max-connections C --log-dir LOGS
    memlens import-inspect LOG --out B

``--server loopback``: memlens's loopback server, replies chosen by the request's seed (four
value-laden sentences out of eight) after a fixed ``--latency`` — the paths' own overhead.
``--server llamacpp``: llama.cpp's own server (xllamacpp) with the embedded SmolLM2 on one slot.

    python benchmarks/bench_inspect.py --server loopback --questions 4 --latency 0.2
    python benchmarks/bench_inspect.py --server llamacpp --questions 2 --no-prompt-cache
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = [
    "Fairness matters: both sides should get an equal share.",
    "Consider the cost and whether the budget allows it.",
    "Make a realistic plan with clear next steps.",
    "Think about safety and the risk of harm first.",
    "Your feelings and emotional wellbeing count here.",
    "Respect the other person's autonomy and choice.",
    "Honesty builds trust, so say what you mean.",
    "Family relationships may be affected, so talk to them.",
]


def loopback_reply(request: dict) -> str:
    """Four sentences picked by the request's seed, as a numbered list."""
    import numpy as np

    rng = np.random.default_rng(int(request.get("seed") or 0))
    picked = rng.choice(len(SENTENCES), size=4, replace=False)
    return "\n".join(f"{k}. {SENTENCES[i]}" for k, i in enumerate(picked, 1))


def timed(command: list[str], env: dict) -> float:
    """Run ``command``; its wall time in seconds (raises when it fails)."""
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command[:3]} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return seconds


def compare_runs(run_a: Path, run_b: Path) -> dict:
    """Drift tables identical? Otherwise how many rows and response texts differ."""
    import pandas as pd

    from memlens.audit.pipeline import drift_frame
    from memlens.store import RunStore

    with RunStore(run_a, read_only=True) as a, RunStore(run_b, read_only=True) as b:
        frame_a, frame_b = drift_frame(a), drift_frame(b)
        steps_a = {row["id"]: row["steps"] for row in a.rows("audit_steps")}
        steps_b = {row["id"]: row["steps"] for row in b.rows("audit_steps")}
    same_steps = sum(steps_a[key] == steps_b.get(key) for key in steps_a)
    try:
        pd.testing.assert_frame_equal(frame_a, frame_b)
        identical = True
    except AssertionError:
        identical = False
    return {"drift_rows": len(frame_a), "identical": identical,
            "responses": len(steps_a), "responses_with_same_steps": same_steps}


def run(args: argparse.Namespace, base_url: str, model: str, out: Path) -> dict:
    env = {**os.environ, "BENCH_API_KEY": "local", "HF_HUB_OFFLINE": "1"}
    calls = args.questions * 16
    memlens_s = timed(["memlens", "audit", "--model", f"openai:{model}@{base_url}",
                       "--preset", "quick", "--n-questions", str(args.questions),
                       "--concurrency", str(args.concurrency), "--no-progress",
                       "--out", str(out / "memlens")], env)
    inspect_s = timed(["inspect", "eval", "memlens/reasoning_drift",
                       "--model", f"openai-api/bench/{model}", "--model-base-url", base_url,
                       "-T", f"n_questions={args.questions}",
                       "--max-connections", str(args.concurrency), "--display", "none",
                       "--log-dir", str(out / "logs")], env)
    [log] = sorted((out / "logs").glob("*.eval"))
    import_s = timed(["memlens", "import-inspect", str(log), "--out", str(out / "inspect"),
                      "--no-progress"], env)
    report_s = timed(["memlens", "report", str(out / "inspect")], env)
    return {"calls": calls, "memlens_audit_s": round(memlens_s, 1),
            "inspect_eval_s": round(inspect_s, 1), "import_inspect_s": round(import_s, 1),
            "inspect_path_s": round(inspect_s + import_s, 1),
            "overhead_s": round(inspect_s + import_s - memlens_s, 1),
            "overhead_per_call_s": round((inspect_s + import_s - memlens_s) / calls, 3),
            "report_again_s": round(report_s, 1), **compare_runs(out / "memlens", out / "inspect")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", choices=["loopback", "llamacpp"], default="loopback")
    parser.add_argument("--questions", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.2, help="loopback: s per call")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--out", default=None, help="keep the runs here (default: a temp dir)")
    parser.add_argument("--no-prompt-cache", action="store_true",
                        help="llamacpp: start the server with cache_prompt off (a seeded request "
                             "then gets the same reply whatever was decoded before it)")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="bench-inspect-"))
    out.mkdir(parents=True, exist_ok=True)
    if args.server == "loopback":
        from memlens.models.loopback import LoopbackServer

        with LoopbackServer(responder=loopback_reply, latency_s=args.latency) as server:
            result = run(args, server.base_url, "m", out)
        result["latency_s"] = args.latency
    else:
        sys.path.insert(0, str(ROOT / "tests"))
        import llamacpp_server
        from llamacpp_server import LlamaCppServer, missing_requirements

        if args.no_prompt_cache:  # the launcher's parameters, plus cache_prompt off
            llamacpp_server.LAUNCHER = llamacpp_server.LAUNCHER.replace(
                "params.verbosity = 0", "params.verbosity = 0\nparams.cache_prompt = False")
            assert "cache_prompt = False" in llamacpp_server.LAUNCHER

        if missing_requirements():
            raise SystemExit(missing_requirements())
        with LlamaCppServer(out / "llamacpp.log", threads=1) as server:
            result = run(args, server.base_url, "smollm2", out)
    result |= {"server": args.server, "questions": args.questions,
               "prompt_cache": not args.no_prompt_cache,
               "concurrency": args.concurrency, "out": str(out)}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
