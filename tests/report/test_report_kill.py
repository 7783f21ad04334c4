"""A SIGKILL at any moment of ``memlens report`` leaves the previous complete report.html (and
complete tables), never a 0-byte or truncated file: every output is written atomically."""

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pyarrow.parquet as pq
import pytest

from memlens.cli.main import main

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")

# The builder imports memlens once, then forks one report builder per round that rebuilds the
# report in a loop until the test kills it. A 30 MB comment (a big trajectory viewer, in effect)
# makes the report.html write window wide enough for random kills to land in it.
BUILDER = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    import memlens.report.build as build

    page, pad = build.page, "<!--" + "x" * 30_000_000 + "-->"
    build.page = lambda *args: page(*args).replace("</body>", pad + "</body>")
    run_dir = Path(sys.argv[1])
    build.build_report(run_dir)
    print("ready", flush=True)
    for _ in sys.stdin:
        pid = os.fork()
        if pid == 0:
            while True:
                build.build_report(run_dir)
        print(pid, flush=True)
        os.waitpid(pid, 0)
""")


def _assert_complete(run_dir, expected_size):
    report = run_dir / "report.html"
    assert report.stat().st_size == expected_size
    with open(report, "rb") as handle:
        handle.seek(-len(b"</body></html>"), os.SEEK_END)
        assert handle.read() == b"</body></html>"
    for table in (run_dir / "tables").iterdir():
        if table.name.startswith("."):
            continue  # a temporary file of the killed write, never the real name
        assert table.stat().st_size > 0, table
        if table.suffix == ".parquet":
            pq.read_metadata(table)  # raises on a truncated file


def test_sigkill_during_report_never_leaves_a_broken_file(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["audit", "--model", "fake", "--labeler", "fake", "--n-questions", "1",
                 "--bootstrap", "100", "--no-progress", "--out", str(run_dir)]) == 0
    script = tmp_path / "builder.py"
    script.write_text(BUILDER)
    child = subprocess.Popen([sys.executable, str(script), str(run_dir)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        expected_size = (run_dir / "report.html").stat().st_size
        assert expected_size > 30_000_000
        rng = random.Random(7)
        for _ in range(8):
            child.stdin.write("\n")
            child.stdin.flush()
            builder = int(child.stdout.readline())
            time.sleep(rng.uniform(0.05, 0.6))
            os.kill(builder, signal.SIGKILL)
            time.sleep(0.02)  # the child reaps it
            _assert_complete(run_dir, expected_size)
    finally:
        child.kill()
        child.wait()
