"""Ship a finished audit's measured variance model with memlens, so audits with the same
settings say before they start what they can detect (memlens.audit.pilots).

    python scripts/ship_pilot.py NAME RUN_DIR [RUN_DIR ...] --note "quick audits of embedded, 2026-12-02"

writes src/memlens/data/pilots/NAME.json from the runs' drift pairs together (runs of the same
settings, e.g. a 16- and a 24-question audit; review it and commit it with the docs that quote it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memlens.audit.pilots import pilot_record

OUT = Path(__file__).resolve().parents[1] / "src" / "memlens" / "data" / "pilots"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="file name without .json, e.g. embedded-quick")
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    parser.add_argument("--note", required=True, help="where and when it was measured")
    args = parser.parse_args()
    record = pilot_record(args.run_dirs, args.note)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{args.name}.json"
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    variance = record["variance"]
    print(f"wrote {path}: floor {variance['floor_mean']:.4g}, sigma_a^2 {variance['sigma_a2']:.4g}, "
          f"sigma_e^2 {variance['sigma_e2']:.4g}, tau^2 {variance['tau2']:.4g}, "
          f"{record['details']['questions_with_life_events']} questions")


if __name__ == "__main__":
    main()
