"""The error contract of the whole CLI, fuzzed (issue 23): seeded hostile flag values, mutated
input files and damaged run directories over every sub-command the parser declares. Each case
runs as its own process: exit status in the documented set, a refusal is one
``memlens: error: …`` line, no traceback, peak RSS bounded.

CI runs a seeded sample in-process (``MEMLENS_FUZZ_CASES``, default 60; ``MEMLENS_FUZZ_SEED``)
and, marked slow, a few cases as fresh processes with their peak memory; the full run, every case
its own process, is ``python scripts/fuzz_cli.py`` (docs/robustness.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "audit"))
import fuzzcases  # noqa: E402
import scripted  # noqa: E402

SEED = int(os.environ.get("MEMLENS_FUZZ_SEED", "23"))
CASES = int(os.environ.get("MEMLENS_FUZZ_CASES", "60"))
PROCESS_CASES = int(os.environ.get("MEMLENS_FUZZ_PROCESS_CASES", "3"))


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    scripted.run_scripted_audit(folder, folder / "run")
    return folder


def test_the_fuzz_sample_keeps_the_error_contract(fuzz_dir, monkeypatch):
    """The seeded CI sample, in-process (a fresh interpreter per case costs seconds)."""
    monkeypatch.chdir(fuzz_dir)
    for key in [key for key in os.environ if key.endswith(("_API_KEY", "_TOKEN"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("OPENAI_API_KEY", "fuzz-not-a-key")
    cases = fuzzcases.generate_cases(SEED, CASES, fuzz_dir / "cases", fuzz_dir / "run")
    outcomes = [fuzzcases.run_case_in_process(case) for case in cases]
    broken = [f"{o.case.what}: {o.problems} (exit {o.status}) {o.stderr[-300:]!r}"
              for o in outcomes if o.problems]
    assert broken == []
    summary = fuzzcases.summarize(outcomes)
    assert summary["cases"] == CASES and summary["clean_refusals"] > CASES // 4


@pytest.mark.slow
def test_fuzz_cases_in_fresh_processes_keep_memory_bounded(fuzz_dir):
    """A few cases as real processes: exit status, stderr and peak RSS of each."""
    cases = fuzzcases.generate_cases(SEED + 1, PROCESS_CASES, fuzz_dir / "proc", fuzz_dir / "run")
    env = fuzzcases.clean_env(fuzz_dir)
    outcomes = [fuzzcases.run_case(case, fuzz_dir, env) for case in cases]
    assert [(o.case.what, o.problems) for o in outcomes if o.problems] == []
    assert all(0 < o.peak_rss_mb < fuzzcases.MAX_RSS_MB for o in outcomes)


def test_the_generator_covers_every_subcommand_and_is_seeded(tmp_path):
    from memlens.cli.main import build_parser

    leaves = [path for path, _ in fuzzcases.subcommands(build_parser())
              if path and path not in fuzzcases.SKIP_COMMANDS]
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    first = fuzzcases.generate_cases(7, len(leaves), tmp_path / "a", run_dir)
    again = fuzzcases.generate_cases(7, len(leaves), tmp_path / "b", run_dir)
    assert [c.what for c in first] == [c.what for c in again]
    assert {tuple(c.argv[:len(p)]) for c, p in zip(first, leaves, strict=True)} == set(leaves)


def test_the_checker_catches_each_kind_of_breach():
    case = fuzzcases.Case(["x"], "x", expect_refusal=True)
    outcome = fuzzcases.Outcome(case, 0, "", 10.0, 1.0)
    assert fuzzcases.check(outcome) == ["wrong accept"]
    outcome = fuzzcases.Outcome(case, 1, "Traceback (most recent call last):\n  boom\n", 2e3, 1.0)
    assert fuzzcases.check(outcome) == ["traceback", "peak RSS 2000 MB"]
    outcome = fuzzcases.Outcome(fuzzcases.Case(["x"], "x"), 2, "oops\n", 10.0, 1.0)
    assert fuzzcases.check(outcome) == ["no 'memlens: error:' line"]
    outcome = fuzzcases.Outcome(fuzzcases.Case(["x"], "x"), 2, "memlens: error: bad\n", 10, 1.0)
    assert fuzzcases.check(outcome) == []
