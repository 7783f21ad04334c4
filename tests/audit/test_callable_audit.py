"""Audit a plain Python function (no HTTP): SIGKILL mid-run, resume, no call paid twice."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memlens.audit import build_config, run_audit
from memlens.errors import MemlensError
from memlens.store import RunStore

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

# The audited "assistant": appends one line per call (a hash of its prompt), sleeps a little,
# replies with tagged steps.
RUNNER = """
import hashlib, json, sys, time
from memlens.audit import build_config, run_audit

calls = sys.argv[3]

def assistant(messages):
    prompt = json.dumps(messages, sort_keys=True)
    time.sleep(0.05)
    with open(calls, "a", encoding="utf-8") as log:
        log.write(hashlib.sha256(prompt.encode()).hexdigest() + "\\n")
    words = ["fairness", "cost", "plan", "safety"]
    if "72 years" in prompt:
        words = ["safety", "feelings", "cost"]
    steps = "".join(f"<step_{k}>We should weigh {w}.</step_{k}>" for k, w in enumerate(words, 1))
    return f"<think>{steps}</think><answer>It depends.</answer>"

run_audit(build_config(json.loads(sys.argv[1])), sys.argv[2], progress=False,
          model=assistant, model_name="my-assistant")
"""


def start(config: dict, run_dir: Path, calls: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", RUNNER, json.dumps(config), str(run_dir),
                             str(calls)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_callable_audit_killed_then_resumed_pays_no_call_twice(tmp_path):
    questions, stimuli = scripted.write_inputs(tmp_path)
    # 4 questions x (5 baselines + 6 stimuli) = 44 generation cells; labeler: scripted fake
    config = {"model": "embedded", "labeler": "fake", "questions": questions,
              "stimuli": stimuli, "seed": 3, "n_bootstrap": 200, "baselines": 5}
    run_dir, calls = tmp_path / "run", tmp_path / "calls.txt"
    process = start(config, run_dir, calls)
    deadline = time.monotonic() + 60
    while len(lines(calls)) < 12 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    before = len(lines(calls))
    assert 12 <= before < 44, "the kill must land mid-generation"
    resumed = start(config, run_dir, calls)
    assert resumed.wait(timeout=120) == 0, resumed.stderr.read().decode()[-2000:]
    paid = lines(calls)
    # 44 calls in all (the 5 no-memory samples of a question share a prompt but differ in
    # sample index and seed, so they are 5 calls), plus at most the one call in flight at the
    # kill (a sync function runs one call at a time)
    assert 44 <= len(paid) <= 45
    with RunStore(run_dir) as store:
        manifest = store.read_manifest()["audit"]
        assert manifest["config"]["model"] == "callable:my-assistant"
        assert manifest["model"] == "callable:my-assistant"
        steps = store.rows("audit_steps")
        assert len(steps) == 44 and all(row["status"] == "ok" for row in steps)
    again = start(config, run_dir, calls)  # finished: nothing is called again
    assert again.wait(timeout=120) == 0, again.stderr.read().decode()[-2000:]
    assert len(lines(calls)) == len(paid)


def test_async_function_and_chat_model_object(tmp_path):
    questions, stimuli = scripted.write_inputs(tmp_path)
    config = build_config({"model": "embedded", "labeler": "fake", "questions": questions,
                           "stimuli": stimuli, "seed": 1, "n_bootstrap": 200, "baselines": 2,
                           "n_questions": 2})
    seen = []

    async def assistant(messages):
        seen.append(messages[-1]["content"])
        return "<think><step_1>We should weigh cost.</step_1></think><answer>ok</answer>"

    result = run_audit(config, tmp_path / "a", progress=False, model=assistant,
                       model_name="async-assistant")
    assert result.calls["pending"] == len(seen) == 2 * (2 + 6)
    again = run_audit(config, tmp_path / "a", progress=False, model=assistant,
                      model_name="async-assistant")
    assert again.calls["pending"] == 0 and len(seen) == 16
    # another name is another model: the run directory refuses it
    with pytest.raises(MemlensError, match="different settings \\(model\\)"):
        run_audit(config, tmp_path / "a", progress=False, model=assistant, model_name="other")
    # a ChatModel object is keyed by its own model id
    from memlens.models import FakeModel

    fake = FakeModel(["<think><step_1>plan</step_1></think>"], model_id="fake")
    run_audit(config, tmp_path / "b", progress=False, model=fake)
    assert len(fake.calls) == 16
    with RunStore(tmp_path / "b") as store:
        assert store.read_manifest()["audit"]["model"] == "fake"


def test_callable_model_string_without_function_is_refused(tmp_path):
    config = build_config({"model": "embedded"}).model_copy(update={"model": "callable:x"})
    with pytest.raises(MemlensError, match="is a Python function"):
        run_audit(config, tmp_path / "r", progress=False)
