"""Fuzz the whole memlens CLI with seeded hostile inputs and report the error contract's numbers.

    python scripts/fuzz_cli.py --cases 400 --seed 23 --out fuzz-report.json

Builds a small finished audit (the scripted loopback audit of the test suite), generates
``--cases`` hostile invocations over every sub-command (tests/cli/fuzzcases.py: flag values,
mutated input files, damaged run directories), runs each as its own process and prints: cases,
clean refusals, accepted, tracebacks, wrong accepts, other breaches, peak RSS. Exit status 1 if
any case broke the contract (each is listed). See docs/robustness.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "cli"))
sys.path.insert(0, str(ROOT / "tests" / "audit"))

import fuzzcases  # noqa: E402
import scripted  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--out", default=None, help="write every outcome as JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memlens-fuzz-") as folder:
        work = Path(folder)
        scripted.run_scripted_audit(work, work / "run")
        cases = fuzzcases.generate_cases(args.seed, args.cases, work / "cases", work / "run")
        env = fuzzcases.clean_env(work)
        outcomes = []
        for number, case in enumerate(cases, 1):
            outcome = fuzzcases.run_case(case, work, env)
            outcomes.append(outcome)
            if outcome.problems:
                print(f"[{number}] BROKEN {case.what}: {outcome.problems}\n  memlens "
                      f"{' '.join(case.argv)[:300]}\n  {outcome.stderr[-400:]!r}", flush=True)
            elif number % 25 == 0:
                print(f"[{number}/{len(cases)}] ok", flush=True)
    summary = fuzzcases.summarize(outcomes)
    print(json.dumps(summary, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "outcomes": [
            {"what": o.case.what, "argv": o.case.argv, "status": o.status,
             "peak_rss_mb": round(o.peak_rss_mb), "problems": o.problems,
             "stderr_tail": o.stderr[-300:]} for o in outcomes]}, indent=2))
    return 1 if any(o.problems for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
