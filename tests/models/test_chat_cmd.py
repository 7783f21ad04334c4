"""``memlens chat`` end to end: loopback server, fake, embedded, and every failure path."""

import json
import socket

import pytest

from memlens.cli.main import main
from memlens.models.loopback import LoopbackServer


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_chat_against_loopback(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object"}')
    with LoopbackServer() as server:
        status = main(["chat", "--model", f"openai:m@{server.base_url}", "--system", "S",
                       "--temperature", "0", "--max-tokens", "9", "--seed", "3",
                       "--json-schema", str(schema), "--usage", "hello world"])
    out, err = capsys.readouterr()
    assert status == 0 and out == "echo: hello world\n"
    assert "prompt_tokens=3 completion_tokens=3" in err
    body = server.requests[0].body
    assert body["messages"][0] == {"role": "system", "content": "S"}
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0, 9, 3)
    assert body["response_format"]["json_schema"]["schema"] == {"type": "object"}


def test_unreachable_server_is_one_clear_error(capsys):
    port = free_port()
    status = main(["chat", "--model", f"openai:m@http://127.0.0.1:{port}/v1", "--attempts", "2",
                   "hi"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("memlens: error: openai:m@http://127.0.0.1:")
    assert "/v1: gave up after 2 attempts: connection error" in err
    assert err.count("\n") == 1


def test_timeout_is_one_clear_error(capsys):
    with LoopbackServer(faults=["timeout"] * 2, hang_s=2) as server:
        status = main(["chat", "--model", f"openai:m@{server.base_url}", "--timeout", "0.2",
                       "--attempts", "1", "hi"])
    assert status == 2
    assert capsys.readouterr().err.endswith("/v1: gave up after 1 attempt: timeout after 0.2s\n")


def test_api_key_never_printed(capsys, monkeypatch):
    secret = "sk-never-print-me-42"
    monkeypatch.setenv("CUSTOM_KEY", secret)
    with LoopbackServer(faults=["401"]) as server:
        status = main(["chat", "--model", f"openai:m@{server.base_url}", "--api-key-env",
                       "CUSTOM_KEY", "--usage", "hi"])
    captured = capsys.readouterr()
    assert status == 2 and "/v1: call failed: HTTP 401" in captured.err
    assert secret not in captured.out + captured.err


@pytest.mark.parametrize(("content", "expected"), [
    ('{"type": ', "line 1 column 10: Expecting value"),
    ("[1, 2]", "must hold a JSON object"),
])
def test_bad_schema_file(capsys, tmp_path, content, expected):
    path = tmp_path / "s.json"
    path.write_text(content)
    assert main(["chat", "--model", "fake", "--json-schema", str(path), "hi"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and expected in err


def test_unreadable_schema_file_is_a_clear_error(capsys, tmp_path):
    path = tmp_path / "s.json"
    path.write_bytes(b"\xff\xfe{}")
    assert main(["chat", "--model", "fake", "--json-schema", str(path), "hi"]) == 2
    assert f"--json-schema: {path}:1: JSON schema file is not UTF-8" in capsys.readouterr().err
    assert main(["chat", "--model", "fake", "--json-schema", str(tmp_path / "no.json"), "hi"]) == 2
    assert "JSON schema file not found" in capsys.readouterr().err


def test_bad_flags(capsys):
    assert main(["chat", "--model", "nonsense:x", "hi"]) == 2
    assert "unknown or unavailable model 'nonsense:x'" in capsys.readouterr().err
    assert main(["chat", "--model", "fake", "--api-key-env", "X", "hi"]) == 2
    assert "--api-key-env applies only to" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:  # argparse refuses it (memlens.cli.argtypes)
        main(["chat", "--model", "fake", "--max-tokens", "0", "hi"])
    assert exit_info.value.code == 2 and "--max-tokens" in capsys.readouterr().err


def test_fake_reply(capsys):
    assert main(["chat", "--model", "fake", "hi"]) == 0
    assert capsys.readouterr().out.startswith("echo ")


@pytest.mark.embedded
def test_embedded_chat_offline(capsys):
    assert main(["chat", "--model", "embedded", "--max-tokens", "8", "--seed", "1",
                 "--json-schema", "/dev/null", "Say hi"]) == 2  # empty file: clear error
    assert "line 1 column 1" in capsys.readouterr().err
    assert main(["chat", "--model", "embedded", "--max-tokens", "8", "--seed", "1", "Say hi"]) == 0
    assert capsys.readouterr().out.strip()


def test_schema_file_is_json_loadable(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"type": "object"}))
    from memlens.cli.chat_cmd import load_schema

    assert load_schema(path) == {"type": "object"}
