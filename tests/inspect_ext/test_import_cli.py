"""``memlens import-inspect`` on bad input (one ``memlens: error:`` line, exit 2) and the whole
``inspect eval memlens/reasoning_drift`` -> import -> report -> gate path through the CLIs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from memlens.cli.main import main  # noqa: E402


def mock_eval(task, log_dir: Path, **options):
    """Run ``task`` on inspect's mockllm; returns the log's path."""
    import inspect_ai

    [log] = inspect_ai.eval(task, model="mockllm/model", log_dir=str(log_dir), display="none",
                            **options)
    return log.location


def test_a_missing_log_is_one_error_line(tmp_path, capsys):
    assert main(["import-inspect", str(tmp_path / "nope.eval"), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memlens: error: inspect log ") and "does not exist" in err
    assert "Traceback" not in err and not (tmp_path / "r").exists()


def test_a_log_of_another_task_is_refused(tmp_path, capsys):
    from inspect_ai import Task
    from inspect_ai.dataset import Sample

    log = mock_eval(Task(dataset=[Sample(input="hi")]), tmp_path / "logs")
    assert main(["import-inspect", log, "--out", str(tmp_path / "r")]) == 2
    assert "is not a log of memlens/reasoning_drift" in capsys.readouterr().err


def test_a_log_missing_cells_is_refused_before_anything_is_written(tmp_path, capsys):
    from memlens.inspect_ext.tasks import reasoning_drift

    log = mock_eval(reasoning_drift(n_questions=1, labeler="keyword"), tmp_path / "logs",
                    limit=3)
    assert main(["import-inspect", log, "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "holds 3 of the design's 16 cells" in err
    assert not (tmp_path / "r" / "memlens.sqlite").exists()


def test_a_task_parameter_memlens_cannot_take_is_refused():
    from memlens.errors import MemlensError
    from memlens.inspect_ext.tasks import reasoning_drift

    with pytest.raises(MemlensError, match="unknown preset 'fast'"):
        reasoning_drift(preset="fast")


@pytest.mark.slow
@pytest.mark.embedded
def test_inspect_cli_then_import_report_and_gate(tmp_path):
    """The README's commands: the task found through the entry point, on mockllm; mockllm's one
    fixed reply makes every response the same, so every drift is 0 and the gate must refuse to
    call a run whose instrument cannot separate anything a pass."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    bin_dir = Path(sys.executable).parent
    subprocess.run([str(bin_dir / "inspect"), "eval", "memlens/reasoning_drift", "--model",
                    "mockllm/model", "-T", "n_questions=2", "--log-dir", str(tmp_path / "logs"),
                    "--display", "none"], check=True, env=env, cwd=tmp_path)
    [log] = (tmp_path / "logs").glob("*.eval")
    imported = subprocess.run([str(bin_dir / "memlens"), "import-inspect", str(log), "--out",
                               str(tmp_path / "run"), "--no-progress"],
                              env=env, cwd=tmp_path, capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    assert (tmp_path / "run" / "report.html").is_file()
    from memlens.audit.results import load_audit_run
    from memlens.store import RunStore

    with RunStore(tmp_path / "run", read_only=True) as store:
        assert store.read_manifest()["inspect"]["task"] == "memlens/reasoning_drift"

    run = load_audit_run(tmp_path / "run")
    assert run.manifest["model"] == "inspect:mockllm/model"
    assert len(run.steps) == 32 and set(run.frame["dtw"]) == {0.0}
    gate = subprocess.run([str(bin_dir / "memlens"), "gate", str(tmp_path / "run")],
                          env=env, cwd=tmp_path, capture_output=True, text=True)
    assert gate.returncode == 5, gate.stdout + gate.stderr  # cannot decide: validity not pass


def test_changed_question_files_are_refused(tmp_path, capsys):
    """The import rebuilds the design from the task's settings: if a questions file changed
    since the eval, its content hash no longer matches the one in the log."""
    from memlens.inspect_ext.tasks import reasoning_drift

    sys.path.insert(0, str(Path(__file__).parents[1] / "audit"))
    import scripted

    questions, stimuli = scripted.write_inputs(tmp_path)
    log = mock_eval(reasoning_drift(preset="none", labeler="keyword", questions=questions,
                                    stimuli=stimuli, baselines=2), tmp_path / "logs")
    Path(questions).write_text(Path(questions).read_text().replace("case 1", "case one"))
    assert main(["import-inspect", log, "--out", str(tmp_path / "r")]) == 2
    assert "the inputs differ from those the eval used (questions_sha256)" in \
        capsys.readouterr().err
