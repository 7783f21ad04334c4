"""Ctrl-C in the first moments of ``memlens``: how often a traceback is printed.

Runs the console script as pip generates it for ``memlens.cli.entry:run`` and, as the baseline in
the same run, the same script for the former entry ``memlens.cli.main:main``; each is sent SIGINT
at evenly spread delays after start (interleaved, so both see the same machine load). Counts per
entry: exit 130 with the one line, killed by SIGINT before Python's handler existed (quiet; a
shell shows 130), and a Python traceback — printed while memlens's code ran, or before (the
interpreter's start-up, ``site``, the script's ``import re``, finding the package).

    python benchmarks/bench_ctrl_c.py [--runs 60] [--max-delay 0.15] [-- memlens args]
"""

from __future__ import annotations

import argparse
import collections
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEMPLATE = """# -*- coding: utf-8 -*-
import re
import sys
from {module} import {name}
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit({name}())
"""
"""pip's console-script template (``distlib.scripts.SCRIPT_TEMPLATE``)."""

MEMLENS_CODE = str(Path(__file__).resolve().parents[1] / "src" / "memlens")
"""A traceback with a frame in here was printed while memlens's own code ran."""

ENTRIES = {"before (memlens.cli.main:main)": ("memlens.cli.main", "main"),
           "after (memlens.cli.entry:run)": ("memlens.cli.entry", "run")}


def outcome(script: Path, args: list[str], delay: float) -> str:
    process = subprocess.Popen([sys.executable, str(script), *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, cwd=script.parent)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    err = process.communicate(timeout=120)[1]
    if "Traceback" in err or "KeyboardInterrupt" in err or "Fatal Python error" in err:
        in_memlens = any(line.startswith("  File") and MEMLENS_CODE in line
                         for line in err.splitlines())
        return "traceback in memlens code" if in_memlens else "traceback before memlens code"
    if process.returncode == 130:
        return "130, one line"
    if process.returncode == -signal.SIGINT:
        return "killed by SIGINT, quiet"
    return f"exit {process.returncode} (finished first)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--max-delay", type=float, default=0.15)
    parser.add_argument("args", nargs="*", default=["--help"])
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        scripts = {}
        for label, (module, name) in ENTRIES.items():
            scripts[label] = Path(folder) / f"memlens_{name}"
            scripts[label].write_text(TEMPLATE.format(module=module, name=name))
        counts = {label: collections.Counter() for label in ENTRIES}
        for run in range(options.runs):
            delay = options.max_delay * run / max(1, options.runs - 1)
            for label, script in scripts.items():
                counts[label][outcome(script, options.args, delay)] += 1
    print(f"SIGINT at {options.runs} delays evenly spread over 0-{options.max_delay:g} s, "
          f"`memlens {' '.join(options.args)}`")
    for label, counter in counts.items():
        print(f"  {label}: " + ", ".join(f"{key} {value}" for key, value in sorted(counter.items())))
    for kind in ("traceback in memlens code", "traceback before memlens code"):
        before, after = (counts[label][kind] for label in ENTRIES)
        print(f"{kind}, after / before: {after} / {before}"
              + (f" = {after / before:.2f}" if before else ""))


if __name__ == "__main__":
    main()
