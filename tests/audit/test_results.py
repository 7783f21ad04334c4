"""``load_audit_run``: a run as one frozen object, read without writing; the audit never
imports the report."""

import ast
import dataclasses
import sys
import warnings
from pathlib import Path

import pytest

import memlens.audit
from memlens.audit import build_config, run_audit
from memlens.audit.pipeline import STATS_TABLE
from memlens.audit.results import load_audit_run
from memlens.store import RunStore

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    directory = tmp_path_factory.mktemp("results")
    _, result = scripted.run_scripted_audit(directory, directory / "run")
    return directory / "run", result


def test_audit_modules_import_nothing_from_report():
    offenders = []
    for path in sorted(Path(memlens.audit.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.name}:{node.lineno} {name}" for name in names
                          if name == "memlens.report" or name.startswith("memlens.report.")]
    assert offenders == []


def test_run_audit_no_longer_builds_the_report(finished, tmp_path):
    from memlens.errors import MemlensError

    run_dir, _ = finished
    assert not (run_dir / "report.html").exists()
    with warnings.catch_warnings(record=True) as caught, \
            pytest.raises(MemlensError, match="build_report"):
        warnings.simplefilter("always")
        run_audit(build_config({}), tmp_path / "other", progress=False, report=True)
    assert not (tmp_path / "other").exists()  # refused before any work
    deprecations = [w for w in caught if w.category is DeprecationWarning]
    assert len(deprecations) == 1 and deprecations[0].filename == __file__  # the caller's line
    assert "run_audit(report=...) is deprecated" in str(deprecations[0].message)
    assert "memlens.report.build_report(run_dir)" in str(deprecations[0].message)


def test_stored_statistics_are_reused(finished):
    run_dir, result = finished
    run = load_audit_run(run_dir)
    assert run.stats_stored and run.stats == result.stats and run.stats_error is None
    assert len(run.drift) == result.quality["drift_rows"] == len(run.frame)
    assert run.quality == result.quality and run.failures == 1  # the scripted HTTP 400
    assert run.orthogonality is None and run.config.seed == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.stats = None


def test_missing_statistics_are_computed_in_memory_and_not_stored(finished, tmp_path):
    import shutil

    run_dir, result = finished
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    with RunStore(copy) as store:
        store.delete_table(STATS_TABLE)
    run = load_audit_run(copy)
    assert not run.stats_stored
    assert run.stats == result.stats  # same drift table, seed and B: the same numbers
    with RunStore(copy, read_only=True) as store:
        assert STATS_TABLE not in store.tables()
