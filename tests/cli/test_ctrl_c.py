"""Ctrl-C at any moment of the console script, from its first memlens module on — also while the
command's modules import, before ``memlens.cli.main.main`` runs — is exit 130 with one line and
no traceback (``memlens.cli.entry``). Before that module, the time is the interpreter's (start-up,
``site``, the generated script's ``import re``): see docs/robustness.md."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memlens.cli.interrupt import INTERRUPTED

SCRIPT = shutil.which("memlens", path=str(Path(sys.executable).parent))


def interrupted_after_entry(args: list[str], delay: float, cwd: Path) -> tuple[int, str]:
    """Start the console script, wait until ``memlens.cli.entry`` is imported (its line in
    ``PYTHONPROFILEIMPORTTIME`` output), send SIGINT ``delay`` seconds later; (status, stderr
    without the import-time lines)."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    process = subprocess.Popen([sys.executable, SCRIPT, *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
    seen = []
    for line in process.stderr:
        seen.append(line)
        if line.rstrip().endswith("memlens.cli.entry"):
            break
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    rest = process.communicate(timeout=120)[1]
    err = "".join(seen) + rest
    return process.returncode, "\n".join(line for line in err.splitlines()
                                         if not line.startswith("import time:"))


@pytest.mark.skipif(SCRIPT is None, reason="the memlens console script is not installed")
@pytest.mark.parametrize("delay", [0.0, 0.02, 0.05, 0.1, 0.3])
def test_ctrl_c_once_memlens_runs_is_exit_130_with_one_line(delay, tmp_path):
    status, err = interrupted_after_entry(
        ["audit", "--preset", "quick", "--out", str(tmp_path / "run"), "--dry-run"], delay, tmp_path)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert status == 130, err
    assert err.strip().splitlines() == [INTERRUPTED], err


def test_ctrl_c_while_the_command_modules_import_is_caught(tmp_path):
    # deterministic: the import of memlens.cli.main itself is interrupted (the console script
    # used to import it outside any handler and printed Python's traceback)
    probe = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def interrupting(name, *args, **kwargs):\n"
        "    if name == 'memlens.cli.main':\n"
        "        raise KeyboardInterrupt\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = interrupting\n"
        "from memlens.cli.entry import run\n"
        "sys.argv = ['memlens', '--help']\n"
        "sys.exit(run())\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert (done.returncode, done.stdout, done.stderr.splitlines()) == (130, "", [INTERRUPTED])


def test_the_console_script_runs_the_entry():
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["memlens"] == "memlens.cli.entry:run"
