"""A run killed with SIGKILL (and SIGINT) at random moments and resumed ends with every request
stored exactly once, and each kill re-pays at most the calls that were in flight."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from memlens.store import RunStore

CHILD = str(Path(__file__).with_name("kill_child.py"))
COUNT, LATENCY, CONCURRENCY = 300, 0.02, 8


def _restore_sigint():
    # A shell without job control starts background jobs with SIGINT ignored, and children
    # inherit that (Python then keeps it ignored): give the child the default back.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(run_dir, log, mode):
    return subprocess.Popen([sys.executable, CHILD, str(run_dir), str(log), str(COUNT),
                             str(LATENCY), str(CONCURRENCY), mode],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_restore_sigint)


def _lines(log):
    return log.read_text().split() if log.exists() else []


def _wait_for_calls(child, log, target, timeout_s=20.0):
    deadline = time.monotonic() + timeout_s
    while len(_lines(log)) < target and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)


def _stored_prompts(run_dir):
    with RunStore(run_dir, read_only=True) as store:
        assert store._query("PRAGMA integrity_check") == [("ok",)]
        records = store.records("responses")
    prompts = [json.loads(record["messages"])[-1]["content"] for record in records]
    assert len(prompts) == len(set(prompts))  # primary key: never twice
    return set(prompts)


@pytest.mark.parametrize("mode", ["async", "threads"])
def test_sigkill_at_random_moments_then_resume(tmp_path, mode):
    rng = random.Random(20240611)
    run_dir = tmp_path / "run"
    lost_per_kill, logs = [], []
    for kill in range(4):
        log = tmp_path / f"calls{kill}.log"
        logs.append(log)
        child = _start(run_dir, log, mode)
        _wait_for_calls(child, log, target=rng.randint(5, 50))
        time.sleep(rng.uniform(0, LATENCY))  # kill mid-call, not just after a start
        child.send_signal(signal.SIGKILL)
        child.wait()
        started = _lines(log)
        assert len(started) == len(set(started))  # duplicates within a run are merged
        lost = set(started) - _stored_prompts(run_dir)
        assert len(lost) <= 2 * CONCURRENCY, f"kill {kill} lost {len(lost)} paid calls"
        lost_per_kill.append(len(lost))
    log = tmp_path / "final.log"
    logs.append(log)
    child = _start(run_dir, log, mode)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.strip() == str(2 * COUNT)  # every request answered, duplicates included
    assert _stored_prompts(run_dir) == {f"q{i}" for i in range(COUNT)}
    paid = Counter(prompt for path in logs for prompt in _lines(path))
    # exactly: every prompt once, plus once more for each kill that caught it in flight
    assert sum(paid.values()) == COUNT + sum(lost_per_kill)
    assert max(paid.values()) <= 1 + len(lost_per_kill)


@pytest.mark.parametrize("mode", ["async", "threads"])
def test_sigint_stores_every_call_that_finished(tmp_path, mode):
    run_dir, log = tmp_path / "run", tmp_path / "calls.log"
    child = _start(run_dir, log, mode)
    _wait_for_calls(child, log, target=40)
    child.send_signal(signal.SIGINT)
    child.communicate(timeout=30)
    assert child.returncode == 130
    started = set(_lines(log))
    stored = _stored_prompts(run_dir)
    assert stored <= started and len(started - stored) <= CONCURRENCY  # only those in flight
    with RunStore(run_dir) as store:  # the lock was released: a resume can open it
        assert store.usage()["responses"] == len(stored)
    assert not os.path.exists(run_dir / "memlens.sqlite-journal")
