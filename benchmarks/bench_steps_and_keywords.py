"""Throughput of split_steps and the keyword rules, as ratios against trivial baselines measured
in the same run (str.split on blank lines; one substring test per cue). Run by hand:
``python benchmarks/bench_steps_and_keywords.py``."""

from __future__ import annotations

import json
import time
from pathlib import Path

from memlens.questions import load_questions
from memlens.questions.filtering import DROP_LISTS, KEEP_SIGNALS, KeywordRules
from memlens.steps import split_steps

FIXTURE = Path(__file__).parents[1] / "tests" / "steps" / "fixtures" / "embedded_replies.json"


def per_second(function, items, repeat: int = 20) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        for item in items:
            function(item)
    return repeat * len(items) / (time.perf_counter() - start)


def main() -> None:
    replies = [r["text"] for r in json.loads(FIXTURE.read_text())["replies"]] * 40
    parsed = per_second(split_steps, replies)
    naive = per_second(lambda text: [p for p in text.split("\n\n") if p.strip()], replies)
    print(f"split_steps: {parsed:,.0f} replies/s; str.split baseline {naive:,.0f}/s; "
          f"ratio {naive / parsed:.1f}x slower than the baseline")
    texts = [q.text for q in load_questions()]
    rules = KeywordRules()
    cues = [c for group in (*KEEP_SIGNALS.values(), *DROP_LISTS.values()) for c in group]
    regex = per_second(rules.decide, texts, repeat=5)
    substring = per_second(lambda t: [c for c in cues if c in t.lower()], texts, repeat=5)
    print(f"keyword rules: {regex:,.0f} questions/s; substring baseline {substring:,.0f}/s; "
          f"ratio {substring / regex:.1f}x")


if __name__ == "__main__":
    main()
