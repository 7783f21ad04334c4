"""Embedded labeler: speed (steps/s, cold and warm cache) and accuracy on the labeled steps.

Run by hand: ``HF_HUB_OFFLINE=1 python benchmarks/bench_labeler.py``. The baseline, measured in
the same run, labels the steps one call at a time (no batching) with an empty cache; ratios are
printed against it. Accuracy is on ``tests/ontology/fixtures/labeled_steps.jsonl`` (110 steps,
none of them an ontology example).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memlens.ontology import load_ontology  # noqa: E402
from memlens.ontology.embedded_labeler import EmbeddedLabeler  # noqa: E402
from memlens.ontology.embedding import CachedEncoder  # noqa: E402

FIXTURE = Path(__file__).parents[1] / "tests" / "ontology" / "fixtures" / "labeled_steps.jsonl"
OPENERS = ["", "Also, ", "On reflection, ", "In short, ", "Importantly, ", "Second, ",
           "Finally, ", "Note that ", "Besides, "]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: torch's own choice); 1 is much faster "
                             "on a machine shared with other heavy processes")
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    ontology = load_ontology()
    steps = [opener + row["text"] for opener in OPENERS for row in rows]  # ~1000 distinct steps
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          "(speed numbers are only comparable at similar load)")
    start = time.perf_counter()
    labeler = EmbeddedLabeler(ontology, encoder=CachedEncoder(batch_size=64))
    labeler.prototypes()
    print(f"model load + prototypes: {time.perf_counter() - start:.2f} s")

    baseline_steps = steps[:150]
    labeler.encoder.clear()
    labeler.prototypes()
    start = time.perf_counter()
    for step in baseline_steps:
        labeler.label([[step]])
    baseline = len(baseline_steps) / (time.perf_counter() - start)

    labeler.encoder.clear()
    labeler.prototypes()
    start = time.perf_counter()
    labeler.label([steps[i:i + 5] for i in range(0, len(steps), 5)])
    cold = len(steps) / (time.perf_counter() - start)
    start = time.perf_counter()
    labeler.label([steps[i:i + 5] for i in range(0, len(steps), 5)])
    warm = len(steps) / (time.perf_counter() - start)
    print(f"baseline, one step per call, cold: {baseline:9.0f} steps/s")
    print(f"batched, cold cache ({len(steps)} steps): {cold:9.0f} steps/s "
          f"({cold / baseline:.1f}x baseline)")
    print(f"batched, warm cache:                 {warm:9.0f} steps/s "
          f"({warm / baseline:.1f}x baseline)")

    predicted = [labels[0] for labels in labeler.label([[row["text"]] for row in rows])]
    sub = sum(p == r["label"] for p, r in zip(predicted, rows, strict=True)) / len(rows)
    root = sum(ontology.root_of(p) == r["root"]
               for p, r in zip(predicted, rows, strict=True)) / len(rows)
    print(f"accuracy on {len(rows)} labeled steps: subcategory {100 * sub:.1f} %, "
          f"root {100 * root:.1f} %")
    confusions: dict[tuple[str, str], int] = {}
    for p, r in zip(predicted, rows, strict=True):
        if p != r["label"]:
            confusions[(r["label"], p)] = confusions.get((r["label"], p), 0) + 1
    for (truth, guess), count in sorted(confusions.items(), key=lambda kv: -kv[1])[:5]:
        print(f"  {count} x {truth} -> {guess}")


if __name__ == "__main__":
    main()
