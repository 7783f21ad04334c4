"""Make the docs' screenshot of an audit report's first screen, without a model call.

Runs the ``quick`` preset's design (16 questions x (5 no-memory baselines + 3 noise + 5 persona +
3 life-event conditions) = 256 calls) against the loopback server (``memlens.models.loopback``)
with a planted model: every reply is a seeded random sequence of tagged reasoning steps, and a
life-event memory makes the "feelings" and "safety" steps more likely (persona and noise
memories change nothing). The labeler is an LLM labeler on the same server that labels a step by
its keyword. Then ``memlens report`` renders the run and headless Chromium (``chromium`` on PATH,
e.g. Debian's package) shoots the first screen.

    python scripts/report_screenshot.py --out runs/screenshot --png docs/img/report-first-screen.png

Numbers in the picture are of the planted model, not of any real one.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

from memlens.audit import build_config, run_audit
from memlens.models.loopback import LoopbackServer
from memlens.report import build_report
from memlens.stimuli import load_stimuli

WORDS = {"fairness": "social.fairness_reciprocity", "cost": "practical.resources_cost",
         "plan": "practical.planning_feasibility", "safety": "protective.safety_wellbeing_risk",
         "feelings": "personal.emotional_wellbeing"}


def responder(life_event_texts: list[str]):
    """Seeded random steps; a life-event memory draws 'feelings' / 'safety' steps more often."""
    def reply(request: dict):
        if request.get("model") == "labeler":
            steps = re.findall(r"^Step (\d+): (.*)$", request["messages"][-1]["content"],
                               flags=re.M)
            return json.dumps({"labels": [
                {"step": int(n), "label": next((s for w, s in WORDS.items() if w in text),
                                               "practical.resources_cost")}
                for n, text in steps]})
        prompt = request["messages"][-1]["content"]
        rng = random.Random(request.get("seed"))
        grief = any(text in prompt for text in life_event_texts)
        weights = [1, 3, 3, 2, 1] if not grief else [1, 1, 1, 3, 4]
        words = rng.choices(list(WORDS), weights=weights, k=rng.randint(4, 6))
        steps = "".join(f"<step_{k}>We should weigh {w} in this decision.</step_{k}>"
                        for k, w in enumerate(words, 1))
        return f"<think>{steps}</think><answer>It depends on your situation.</answer>"

    return reply


def main() -> int:
    """Run the planted quick-shaped audit, build its report, screenshot the first screen."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="runs/screenshot", help="run directory (default "
                        "%(default)s)")
    parser.add_argument("--png", default="docs/img/report-first-screen.png",
                        help="screenshot file (default %(default)s)")
    parser.add_argument("--size", default="1280,900", help="window WIDTH,HEIGHT (default "
                        "%(default)s)")
    args = parser.parse_args()
    life_events = [s.text for s in load_stimuli() if s.stimulus_class == "life_event"]
    with LoopbackServer(responder=responder(life_events)) as server:
        config = build_config({"preset": "quick", "model": f"openai:planted@{server.base_url}",
                               "labeler": f"openai:labeler@{server.base_url}"})
        run_audit(config, args.out, progress=False)
    report = build_report(args.out)
    print(f"report: {report}")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("no chromium on PATH: install it (apt-get install chromium) for the screenshot",
              file=sys.stderr)
        return 1
    Path(args.png).parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--window-size={args.size}", f"--screenshot={Path(args.png).resolve()}",
                    report.resolve().as_uri()], check=True, capture_output=True)
    from PIL import Image  # matplotlib's dependency: 64 colours keep the PNG small for the docs

    with Image.open(args.png) as shot:
        small = shot.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    small.save(args.png, optimize=True)
    print(f"screenshot: {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
