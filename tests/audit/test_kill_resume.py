"""SIGKILL an audit mid-generation, resume it, and get exactly the tables of an uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memlens.models.loopback import LoopbackServer
from memlens.store import RunStore

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

RUNNER = """
import json, sys
from memlens.audit import build_config, run_audit
run_audit(build_config(json.loads(sys.argv[1])), sys.argv[2], progress=False)
"""


def start(config: dict, run_dir: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", RUNNER, json.dumps(config), str(run_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def drift_table(run_dir: Path) -> dict:
    with RunStore(run_dir) as store:
        return {row["id"]: (row["dtw"], row["sri"], row["baseline_id"])
                for row in store.rows("audit_drift")}


def generation_requests(server) -> int:
    return sum(1 for r in server.requests if r.body and r.body.get("model") == "scripted")


def test_sigkill_then_resume_equals_uninterrupted(tmp_path):
    questions, stimuli = scripted.write_inputs(tmp_path)
    with LoopbackServer(responder=scripted.make_responder(3), faults=scripted.faults_for(3),
                        latency_s=0.15) as server:
        config = {"model": f"openai:scripted@{server.base_url}",
                  "labeler": f"openai:labeler@{server.base_url}", "questions": questions,
                  "stimuli": stimuli, "seed": 3, "n_bootstrap": 200, "concurrency": 2,
                  "baselines": 1}
        killed = tmp_path / "killed"
        process = start(config, killed)
        deadline = time.monotonic() + 60
        while generation_requests(server) < 10 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        assert process.returncode == -signal.SIGKILL
        before = generation_requests(server)
        assert 10 <= before < 32, "the kill must land mid-generation"
        with RunStore(killed) as store:
            assert "audit_drift" not in store.tables() or not store.rows("audit_drift")
        resumed = start(config, killed)
        assert resumed.wait(timeout=120) == 0, resumed.stderr.read().decode()[-2000:]
        paid = generation_requests(server)
        # nothing paid twice: at most the 2 calls in flight at the kill are repeated, plus
        # the one scripted failure that a run always retries
        assert paid <= 32 + 2 + 1
        clean = tmp_path / "clean"
        fresh = start(config, clean)
        assert fresh.wait(timeout=120) == 0, fresh.stderr.read().decode()[-2000:]
    resumed_table, clean_table = drift_table(killed), drift_table(clean)
    assert len(clean_table) == 25
    assert resumed_table == clean_table  # exact, structure and values
