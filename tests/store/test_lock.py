import os
import signal
import subprocess
import sys
import textwrap

import pytest

from memlens.errors import MemlensError
from memlens.store import RunStore

HOLD = textwrap.dedent("""
    import sys, time
    from memlens.store import RunStore
    store = RunStore(sys.argv[1])
    print("locked", flush=True)
    time.sleep(60)
""")


def _hold(run_dir):
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir)], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout.readline().strip() == "locked"
    return child


def test_second_live_process_is_refused_then_stale_lock_taken_over(tmp_path):
    child = _hold(tmp_path)
    try:
        with pytest.raises(MemlensError, match=f"run directory {tmp_path} is in use by pid {child.pid}"):
            RunStore(tmp_path)
        RunStore(tmp_path, read_only=True).close()  # readers are always allowed
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert (tmp_path / "memlens.lock").read_text().strip() == str(child.pid)  # stale file left
    with RunStore(tmp_path) as store:  # ...and taken over
        store.put_rows("t", [{"id": 1}])
    assert (tmp_path / "memlens.lock").read_text().strip() == str(os.getpid())


def test_same_process_may_nest_stores(tmp_path):
    with RunStore(tmp_path) as outer:
        with RunStore(tmp_path) as inner:
            inner.put_rows("t", [{"id": 1}])
        outer.put_rows("t", [{"id": 2}])  # the inner close did not drop the outer lock
        child = subprocess.run([sys.executable, "-c", "import sys; from memlens.store import "
                                "RunStore; RunStore(sys.argv[1])", str(tmp_path)],
                               capture_output=True, text=True)
        assert "is in use by pid" in child.stderr
        assert outer.row_keys("t") == {"1", "2"}
