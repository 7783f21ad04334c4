"""Issue 23, "hostile inputs, round three": one regression test per root cause a fresh seeded set
of malformed inputs found (each failed before its fix). The generated suite is test_fuzz.py."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from memlens.cli.main import main
from memlens.models.loopback import LoopbackServer

sys.path.insert(0, str(Path(__file__).parents[1] / "audit"))
import scripted  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from clirun import run  # noqa: E402

MEMLENS = [sys.executable, "-m", "memlens.cli.main"]




def one_error(status, err: str, *expected: str) -> None:
    assert "Traceback" not in err, err
    assert status == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 or ": error: argument" in lines[-1], err
    assert lines[-1].startswith("memlens") and ": error:" in lines[-1], err
    for text in expected:
        assert text in err, err


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A small finished audit (the scripted loopback audit: 4 questions, 7 stimuli)."""
    folder = tmp_path_factory.mktemp("hostile")
    scripted.run_scripted_audit(folder, folder / "run")
    return folder / "run"


def damaged_copy(run_dir: Path, tmp_path: Path, sql: str) -> Path:
    copy = tmp_path / "damaged"
    shutil.copytree(run_dir, copy, ignore=shutil.ignore_patterns("memlens.lock"))
    with sqlite3.connect(copy / "memlens.sqlite") as conn:
        conn.execute(sql)
    return copy


# -- 2. --attempts had no upper bound: OverflowError in every call above ~1,024 ----------------

def test_attempts_are_bounded_by_the_parser(capsys):
    one_error(*run(["chat", "hi", "--model", "fake", "--attempts", "2000"], capsys),
              "argument --attempts: must be an integer from 1 to 100")
    one_error(*run(["chat", "hi", "--model", "fake", "--timeout", "1e300"], capsys),
              "argument --timeout")


def test_a_huge_attempt_count_no_longer_overflows_the_backoff():
    from memlens.models.retry import RetryPolicy

    assert RetryPolicy(max_attempts=5000).backoff_budget_s() == pytest.approx(
        0.5 + 1 + 2 + 4 + 8 + 16 + 30 * (4999 - 6))


# -- 3. torn / wrong-typed store rows: tracebacks in report, compare, plan --pilot, export -----

@pytest.mark.parametrize("sql, expected", [
    ("UPDATE stage_audit_drift SET row = substr(row, 1, 20) WHERE rowid = 1", "not valid JSON"),
    ("UPDATE stage_audit_drift SET row = '[1, 2]' WHERE rowid = 1",
     "expected a JSON object, got an array"),
    ("UPDATE stage_audit_drift SET row = json_set(row, '$.sample', 'x') WHERE rowid = 1",
     "field 'sample' should be an integer, got a string"),
    ("UPDATE stage_audit_drift_pairs SET row = json_set(row, '$.dtw', 'abc') WHERE rowid = 1",
     "field 'dtw' should be a number, got a string"),
    ("UPDATE stage_audit_labels SET row = json_set(row, '$.labels', 7) WHERE rowid = 1",
     "field 'labels' should be an array of strings, got a number"),
    ("UPDATE manifest SET value = substr(value, 1, 30) WHERE name = 'audit'",
     "'audit'"),
])
@pytest.mark.parametrize("command", ["report", "compare", "plan", "export"])
def test_a_damaged_store_is_one_error_in_every_reader(command, sql, expected, finished_run,
                                                      tmp_path, capsys):
    run_dir = damaged_copy(finished_run, tmp_path, sql)
    argv = {"report": ["report", str(run_dir)],
            "compare": ["compare", str(finished_run), str(run_dir), "--out", str(tmp_path / "c")],
            "plan": ["plan", "--pilot", str(run_dir)],
            "export": ["store", "export", str(run_dir), "all", str(tmp_path / "e"),
                       "--format", "jsonl"]}[command]
    status, err = run(argv, capsys)
    if command == "plan" and "audit_drift_pairs" not in sql and "manifest" not in sql:
        assert "Traceback" not in err and status == 2, err  # plan reads only the pairs
        return
    one_error(status, err, f"run store {run_dir / 'memlens.sqlite'} is damaged", expected)
    if "manifest" in sql:
        assert "not valid JSON" in err


def test_a_torn_response_is_one_error_on_export(finished_run, tmp_path, capsys):
    run_dir = damaged_copy(finished_run, tmp_path,
                           "UPDATE responses SET response = substr(response, 1, 10) "
                           "WHERE rowid = 1")
    one_error(*run(["store", "export", str(run_dir), "responses", str(tmp_path / "r.jsonl")],
                   capsys), "table 'responses'", "not valid JSON")


# -- 4. a folder that cannot be written: OSError tracebacks --------------------------------

def unwritable_folder(tmp_path: Path) -> tuple[str, str]:
    """An output folder that cannot be created (a file is in the way) and, where the system
    has one, a read-only one (sysfs refuses new entries even to root)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    return str(blocker / "out"), "Not a directory"


@pytest.mark.parametrize("command", ["compare", "export"])
def test_an_unwritable_output_folder_is_one_error(command, finished_run, tmp_path, capsys):
    out, reason = unwritable_folder(tmp_path)
    argv = (["compare", str(finished_run), str(finished_run), "--out", out]
            if command == "compare" else ["store", "export", str(finished_run), "all", out])
    one_error(*run(argv, capsys), "cannot write to the", out, reason)


@pytest.mark.skipif(not Path("/sys/fs").is_dir(), reason="needs a read-only sysfs")
def test_a_read_only_file_system_is_one_error(finished_run, capsys):
    one_error(*run(["store", "export", str(finished_run), "all", "/sys/fs/memlens-out"], capsys),
              "cannot write to the export folder /sys/fs/memlens-out")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder_is_one_error(finished_run, tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    one_error(*run(["compare", str(finished_run), str(finished_run), "--out", str(locked)],
                   capsys), "cannot write to the --out folder", "Permission denied")


# -- 5. Ctrl-C in the first seconds: a KeyboardInterrupt traceback, no exit 130 ----------------

@pytest.mark.parametrize("delay", [0.4, 0.8, 1.5])
def test_ctrl_c_while_commands_are_imported_is_exit_130_without_traceback(delay, tmp_path):
    # an audit of the fake model runs for seconds: every delay lands in its imports or its work
    process = subprocess.Popen([*MEMLENS, "audit", "--model", "fake", "--labeler", "fake",
                                "--preset", "quick", "--n-questions", "2", "--no-progress",
                                "--out", "run"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    time.sleep(delay)  # past the interpreter's own start-up
    process.send_signal(signal.SIGINT)
    err = process.communicate(timeout=60)[1]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert process.returncode == 130, err
    said = [line for line in err.splitlines() if line.startswith("memlens")]
    # before its first call the audit says what it will cost ("memlens: this audit: …")
    assert said[-1:] == [
        "memlens: interrupted; everything finished so far is stored — re-run to resume."]
    assert all(line.startswith("memlens: this audit: ") for line in said[:-1]), said


def test_keyboard_interrupt_while_building_the_parser_is_caught(monkeypatch, capsys):
    import memlens.cli.main as cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["questions", "list"]) == 130
    assert "interrupted" in capsys.readouterr().err


# -- 6. classifier width; zip-bomb .npz; /dev/zero --------------------------------------------

def save_classifier(path: Path, width: int) -> Path:
    from memlens.ontology import load_ontology
    from memlens.ontology.embedded_labeler import LinearClassifier

    ontology = load_ontology()
    ids = ontology.symbol_ids
    LinearClassifier(np.zeros((len(ids), width)), np.zeros(len(ids)), ids).save(
        path, ontology.content_hash())
    return path


def zip_bomb(path: Path, megabytes: int = 1024) -> Path:
    """A valid-looking classifier whose ``coef`` unpacks to ``megabytes`` MB of zeros (a few MB
    on disk)."""
    from memlens.ontology import load_ontology

    ontology = load_ontology()
    meta = json.dumps({"format": "memlens-linear-classifier/1", "embedding_model":
                       "all-MiniLM-L6-v2", "ontology_sha256": ontology.content_hash(),
                       "classes": ontology.symbol_ids}).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                      "shape": (megabytes * 2**17,)})
        with archive.open("coef.npy", "w", force_zip64=True) as member:
            member.write(header.getvalue())
            for _ in range(megabytes):
                member.write(bytes(1 << 20))
        for name, array in (("intercept", np.zeros(11)), ("meta", np.frombuffer(meta, np.uint8))):
            buffer = io.BytesIO()
            np.save(buffer, array)
            archive.writestr(f"{name}.npy", buffer.getvalue())
    return path


def peak_rss_mb(argv: list[str], cwd: Path) -> tuple[int, str, float]:
    """Exit status, stderr and peak RSS (MB) of ``memlens argv`` in a fresh process."""
    code = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], "
            "capture_output=True, text=True); sys.stderr.write(p.stderr); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(p.returncode)")
    done = subprocess.run([sys.executable, "-c", code, *MEMLENS, *argv], capture_output=True,
                          text=True, cwd=cwd, timeout=300)
    return done.returncode, done.stderr, int(done.stdout.strip()) / 1024


def test_a_classifier_of_another_width_is_refused(tmp_path, capsys):
    path = save_classifier(tmp_path / "w16.npz", 16)
    steps = tmp_path / "steps.jsonl"
    steps.write_text('{"id": "a", "text": "We weigh the cost."}\n')
    for argv in (["label", "--labeler", "embedded", "--classifier", str(path), "--in", str(steps),
                  "--out", str(tmp_path / "l.jsonl")],
                 ["ontology", "score", "--classifier", str(path)]):
        one_error(*run(argv, capsys), "trained on 16-dimensional embeddings, not the 384")


def test_a_zip_bomb_classifier_is_refused_before_it_is_unpacked(tmp_path):
    bomb = zip_bomb(tmp_path / "bomb.npz")
    assert bomb.stat().st_size < 8 << 20
    status, err, peak = peak_rss_mb(["ontology", "score", "--classifier", str(bomb)], tmp_path)
    assert status == 2 and "Traceback" not in err, err
    assert "unpack to 1,073,742," in err
    assert peak < 600  # the bomb unpacks to 1 GB; before the fix RSS grew with it


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("argv", [["questions", "list", "--file", "/dev/zero"],
                                  ["ontology", "show", "--ontology", "/dev/zero"],
                                  ["audit", "--config", "/dev/zero", "--dry-run", "--out", "r"]])
def test_dev_zero_is_refused_before_it_is_read(argv, tmp_path):
    status, err, peak = peak_rss_mb(argv, tmp_path)
    assert status == 2 and "Traceback" not in err, err
    assert "/dev/zero" in err and "is a device that gives more than 16,777,216 bytes" in err
    assert peak < 600  # before: 1.2 GB (questions), 10-15 GB (ontology, config)


# -- 7. mitigate --set values ----------------------------------------------------------------

@pytest.mark.parametrize("pair, expected", [
    ("learning_rate=nan", "--set learning_rate: setting 'learning_rate' must be a finite number"),
    ("num_train_epochs=-3", "--set num_train_epochs: setting 'num_train_epochs' must be a finite"),
    ("output_dir=/etc", "'output_dir' is set by memlens"),
    ("weight_decay=nan", "--set weight_decay: setting 'weight_decay' must be a finite number"),
])
@pytest.mark.parametrize("kind", ["grpo", "dpo"])
def test_mitigate_set_values_are_validated(kind, pair, expected, tmp_path, capsys):
    argv = ["mitigate", kind, "--model", str(tmp_path), "--data", str(tmp_path), "--output",
            str(tmp_path / "m"), "--dry-run", "--set", pair]
    one_error(*run(argv, capsys), expected)


def test_mitigate_set_of_a_plain_trl_field_still_passes_through(tmp_path, capsys):
    argv = ["mitigate", "dpo", "--model", str(tmp_path), "--data", str(tmp_path), "--output",
            str(tmp_path / "m"), "--dry-run", "--set", "weight_decay=0.01"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["trl"]["weight_decay"] == 0.01
    assert printed["trl"]["output_dir"] == str(tmp_path / "m")


# -- 8. eval exit status, sympref --mix checked first, label text must be text ---------------

def test_sympref_bad_mix_is_refused_before_any_model_call(tmp_path, capsys):
    mix = tmp_path / "mix.jsonl"
    mix.write_text('{"prompt": "p", "chosen": 5, "rejected": "r"}\n')
    with LoopbackServer() as server:
        status, err = run(["mitigate", "sympref", "--model", f"openai:m@{server.base_url}",
                           "--judge", f"openai:j@{server.base_url}", "--limit", "1",
                           "--personas-per-question", "1", "--samples", "1", "--mix", str(mix),
                           "--no-progress", "--out", str(tmp_path / "out")], capsys)
        calls = len(server.requests)
    one_error(status, err, f"{mix}:1: field 'chosen' must be a string")
    assert calls == 0


def test_mitigate_eval_exits_3_when_every_call_failed(tmp_path, capsys):
    data = tmp_path / "held.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"Rent or buy, case {k}?", "reference":
                                        "<think><step_1>Cost.</step_1></think>"}) + "\n"
                            for k in range(2)))
    with LoopbackServer(faults=lambda index, body: "400") as server:
        status = main(["mitigate", "eval", "--models", f"openai:m@{server.base_url}",
                       "--data", str(data), "--labeler", "keyword", "--no-progress",
                       "--out", str(tmp_path / "eval"), "--attempts", "1"])
    err = capsys.readouterr().err
    assert status == 3, err
    failed = re.search(r"finished, but (\d+) of (\d+) generation calls failed", err)
    assert failed and failed[1] == failed[2] != "0", err


def test_label_refuses_a_step_whose_text_is_a_number(tmp_path, capsys):
    steps = tmp_path / "steps.jsonl"
    steps.write_text('{"id": 1, "text": "We weigh cost."}\n{"id": 2, "text": 42}\n')
    one_error(*run(["label", "--labeler", "fake", "--in", str(steps), "--out",
                    str(tmp_path / "l.jsonl")], capsys), f"{steps}:2: field 'text' must be a string")


# -- 10. a base URL with a query string built a broken path --------------------------------

def test_a_base_url_query_is_sent_as_a_query_and_never_shown(tmp_path, capsys):
    secret = "sk-query-secret-23"
    with LoopbackServer() as server:
        status = main(["chat", "hi", "--model",
                       f"openai:m@{server.base_url}/?api_key={secret}&tier=a"])
        paths = [request.path for request in server.requests]
    out = capsys.readouterr()
    assert status == 0, out.err
    assert paths == [f"/v1/chat/completions?api_key={secret}&tier=a"]
    assert secret not in out.out + out.err


# -- 11. stale temporary files of killed writes; a closed output pipe ------------------------

def test_temporaries_of_a_killed_write_are_removed_by_the_next_write(tmp_path):
    from memlens.fileio import atomic_write_text

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    try:
        torn = tmp_path / f".forest.svg.{dead}-0123abcd.tmp.svg"        # its writer is gone
        live = tmp_path / f".table.csv.{child.pid}-89abcdef.tmp.csv"   # still being written
        torn.write_text("<svg")
        live.write_text("a,b")
        atomic_write_text(tmp_path / "report.html", "<html></html>")
        names = sorted(path.name for path in tmp_path.iterdir())
    finally:
        child.kill()
        child.wait()
    assert names == [live.name, "report.html"]


def test_a_closed_output_pipe_is_quiet(tmp_path):
    done = subprocess.run(f"{sys.executable} -m memlens.cli.main questions list --format jsonl | head -1",
                          shell=True, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


# -- found by the fuzz suite ---------------------------------------------------------------

@pytest.mark.parametrize("command", [["report", "LONG"], ["store", "info", "LONG"],
                                     ["plan", "--pilot", "LONG"],
                                     ["compare", "LONG", "LONG", "--out", "OUT"]])
def test_a_run_directory_name_too_long_for_the_file_system_is_one_error(command, tmp_path,
                                                                         capsys):
    argv = [{"LONG": "x" * 5000, "OUT": str(tmp_path / "c")}.get(part, part) for part in command]
    one_error(*run(argv, capsys), "File name too long")


def test_the_store_itself_refuses_a_name_too_long():
    from memlens.errors import MemlensError
    from memlens.store import RunStore

    with pytest.raises(MemlensError, match="cannot open the run store in x+…x+: File name too"):
        RunStore("x" * 5000, read_only=True)
