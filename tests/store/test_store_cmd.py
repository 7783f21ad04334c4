import json

from memlens.cli.main import main
from memlens.models import ChatRequest, ChatResponse
from memlens.store import RunStore

ASK = ChatRequest(({"role": "user", "content": "hi"},), tag="g/q1/0")


def _run(tmp_path):
    with RunStore(tmp_path / "run") as store:
        store.write_manifest({"seed": 0})
        store.put_response("k1", ASK, ChatResponse("hello", 1, 1), model_id="fake")
        store.put_failure("k2", ASK, "HTTP 500: boom", 2, model_id="fake")
        store.put_rows("drift", [{"id": "a", "dtw": 0.5}])
    return tmp_path / "run"


def test_export_cli(tmp_path, capsys):
    run_dir = _run(tmp_path)
    assert main(["store", "export", str(run_dir), "drift", str(tmp_path / "d.jsonl")]) == 0
    assert capsys.readouterr().out.strip() == f"wrote 1 rows of 'drift' to {tmp_path / 'd.jsonl'}"
    assert json.loads((tmp_path / "d.jsonl").read_text()) == {"id": "a", "dtw": 0.5}


def test_info_cli(tmp_path, capsys):
    assert main(["store", "info", str(_run(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "  seed: 0" in out and "responses: 1 (1 prompt / 1 completion tokens)" in out
    assert "failures: 1" in out and "g/q1/0: HTTP 500: boom (2 attempts)" in out
    assert "table drift: 1 rows" in out


def test_cli_errors_exit_2(tmp_path, capsys):
    run_dir = _run(tmp_path)
    assert main(["store", "export", str(run_dir), "nope", str(tmp_path / "x.csv")]) == 2
    assert "memlens: error: no table 'nope'" in capsys.readouterr().err
    assert main(["store", "export", str(run_dir), "drift", str(tmp_path / "x.txt")]) == 2
    assert "extension must be one of" in capsys.readouterr().err
    assert main(["store", "info", str(tmp_path / "empty")]) == 2
    assert "no run store in" in capsys.readouterr().err
