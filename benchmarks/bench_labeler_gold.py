"""Embedded labeler on the held-out gold steps from real SmolLM2 responses (and the dev split).

    python benchmarks/bench_labeler_gold.py [--split gold|dev|both]

Prints coverage, root / subcategory accuracy (all steps and labelled steps), Cohen's kappa over
roots and the root confusion matrix with 95 % intervals, for the default labeler and the
abstaining variants (docs/ontology.md, "Gold steps from real responses").
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

VARIANTS = {
    "default (nearest prototype, never abstains)": {},
    "margin 0.02": {"min_margin": 0.02},
    "abstain (no-value prototype)": {"abstain": True},
    "abstain + extra examples (chosen on dev)": {"abstain": True, "extra_examples": True},
}


def main() -> int:
    """Score every variant on the chosen split(s) and print the reports."""
    from memlens.ontology import get_labeler, load_ontology
    from memlens.ontology.gold import (
        DEV_FILE,
        GOLD_FILE,
        bundled_path,
        format_score,
        load_gold,
        score_labeler,
    )

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("gold", "dev", "both"), default="gold")
    args = parser.parse_args()
    ontology = load_ontology()
    files = {"gold": GOLD_FILE, "dev": DEV_FILE}
    splits = ("dev", "gold") if args.split == "both" else (args.split,)
    for split in splits:
        rows = load_gold(bundled_path(files[split]), ontology)
        for name, options in VARIANTS.items():
            report = score_labeler(get_labeler("embedded", ontology=ontology, **options), rows,
                                   ontology)
            print(f"=== {split}: {name}")
            print(format_score(report))
            print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
