"""The compiled kernels: cached on disk, compiled without a cache where nothing is writable,
warmed up on a background thread with the argument types an audit's calls use.

Each test runs a fresh interpreter, so what it sees was compiled or loaded there.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import memlens.metrics

METRICS_DIR = Path(memlens.metrics.__file__).parent

FIRST_BAD_ROW = """
import numpy as np
from memlens.metrics._kernels import first_bad_row
print(first_bad_row(np.array([[0, 1], [2, -1]], np.int32), np.array([2, 2]), 2))
"""

WARM_UP = """
import json
from memlens.metrics import _kernels, _path_kernels
from memlens.metrics.batch import drift_batch
from memlens.metrics.encoding import encode, encode_pairs
from memlens.metrics.path import dtw_path_batch
from memlens.metrics.warmup import warm_up_kernels

def signatures():
    return {name: len(item.signatures) for module in (_kernels, _path_kernels)
            for name, item in vars(module).items() if hasattr(item, "signatures")}

warm_up_kernels().join()
warmed = signatures()
labels_a = [["care", "fairness", "care"], ["loyalty"], []] * 50
labels_b = [["fairness"], ["loyalty", "care", "authority", "care"], ["care"]] * 50
drift_batch(labels_a, labels_b, alpha=0.5)                      # audit drift stage
dtw_path_batch(*encode_pairs(labels_a, labels_b))               # how-drift substitutions
encoded = encode(labels_a + labels_b)                           # how-drift contrasts
rows = [0, 3, 5]
drift_batch((encoded.codes[rows], encoded.lengths[rows]), (encoded.codes[rows], encoded.lengths[rows]))
print(json.dumps({"warmed": warmed, "after": signatures()}))
"""


def _run(code: str, env: dict | None = None, prefix: list[str] | None = None) -> str:
    result = subprocess.run([*(prefix or []), sys.executable, "-c", code], capture_output=True,
                            text=True, env={**os.environ, **(env or {})}, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_kernels_are_cached_in_numba_cache_dir(tmp_path):
    assert _run(FIRST_BAD_ROW, {"NUMBA_CACHE_DIR": str(tmp_path)}).strip() == "1"
    cached = {path.name.split("-")[0] for path in tmp_path.rglob("*.nbi")}
    assert cached == {"_kernels.first_bad_row"}


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="needs root and unshare for a private read-only mount")
def test_read_only_install_without_a_cache_dir_still_runs(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    mounts = " && ".join(f"mount --bind {path} {path} && mount -o remount,ro,bind {path}"
                         for path in (METRICS_DIR, home))
    script = tmp_path / "first_bad_row.py"
    script.write_text(FIRST_BAD_ROW)
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    env |= {"HOME": str(home), "XDG_CACHE_HOME": str(home)}
    result = subprocess.run(["unshare", "-m", "sh", "-c", f"{mounts} && {sys.executable} {script}"],
                            capture_output=True, text=True, env=env, timeout=300)
    if "mount" in result.stderr and result.returncode != 0:
        pytest.skip(f"no private mounts here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"
    assert not list(home.rglob("*.nbi"))


def test_warm_up_compiles_every_signature_the_audit_calls():
    report = json.loads(_run(WARM_UP))
    assert report["warmed"]["sri_batch"] == 1 and report["warmed"]["fill_paths"] == 1
    assert report["warmed"]["dtw01_batch"] == 1 and report["warmed"]["first_bad_row"] == 1
    assert report["after"] == report["warmed"]  # the real calls compiled nothing new
