"""The CLI starts at once: building the parser and every sub-command's --help imports neither
pandas, scipy, torch, numba nor matplotlib (they cost seconds and a Ctrl-C window on every
command)."""

import json
import subprocess
import sys

PROBE = r"""
import argparse, contextlib, io, json, sys
from memlens.cli.main import build_parser
parser = build_parser()
helps = 0
def walk(p, prefix):
    global helps
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                with contextlib.redirect_stdout(io.StringIO()):
                    try:
                        parser.parse_args([*prefix, name, "--help"])
                    except SystemExit:
                        pass
                helps += 1
                walk(sub, [*prefix, name])
walk(parser, [])
heavy = sorted(m for m in ("pandas", "scipy", "torch", "numba", "matplotlib", "sklearn")
               if m in sys.modules)
print(json.dumps({"helps": helps, "heavy": heavy}))
"""


def test_help_of_every_command_imports_no_heavy_library():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True, timeout=120)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["helps"] >= 20  # every sub-command and nested sub-command
    assert result["heavy"] == []
