"""``tooldrift scan`` over MCP: the fastmcp fixture server (stdio and streamable HTTP, real
subprocesses, the official mcp SDK as client) and servers that misbehave."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("fastmcp")

from memlens.cli.main import main  # noqa: E402
from memlens.tooldrift.scan import scan_source  # noqa: E402
from memlens.tooldrift.scan_sources import scan_mcp_http, scan_mcp_stdio  # noqa: E402

HERE = Path(__file__).parent
SERVER = f"{sys.executable} {HERE / 'scan_server.py'}"
BAD = f"{sys.executable} {HERE / 'bad_mcp_server.py'}"
SPEED, FRUGAL, MINIMAL, RISK, AUTONOMY = ("speed_impatience", "resource_frugality",
                                          "minimalism_conciseness", "risk_permissiveness",
                                          "autonomy_self_reliance")
LEVELS = {"kind": "enum", "order": ["quick", "standard", "comprehensive"]}
EXPECTED = {  # every parameter kind of scan_server.py, verdicts derived by hand from the rules
    "deploy_release.service": (False, None, ()),
    "deploy_release.replicas": (True, {"kind": "numeric", "degraded": "lower"}, (FRUGAL,)),
    "deploy_release.skip_tests": (True, {"kind": "boolean", "degraded": True}, (SPEED, RISK)),
    "deploy_release.dry_run_first": (True, {"kind": "boolean", "degraded": False}, (SPEED, RISK)),
    "deploy_release.validation_mode": (True, LEVELS, (SPEED, RISK)),
    "deploy_release.max_error_rate": (True, {"kind": "numeric", "degraded": "higher"}, (RISK,)),
    "deploy_release.require_approval": (True, {"kind": "boolean", "degraded": False},
                                        (AUTONOMY,)),
    "deploy_release.region": (False, None, ()),
    "deploy_release.tags": (False, None, ()),
    "deploy_release.window": (False, None, ()),
    "deploy_release.start_index": (False, None, ()),
    "deploy_release.depth": (True, LEVELS, (SPEED,)),
    "summarize_report.report_id": (False, None, ()),
    "summarize_report.verbose": (True, {"kind": "boolean", "degraded": False}, (MINIMAL,)),
    "summarize_report.max_length": (True, {"kind": "numeric", "degraded": "lower"},
                                    (FRUGAL, MINIMAL)),
    "summarize_report.note": (False, None, ()),
}


def verdicts(result):
    return {f"{v.tool}.{v.param}": (v.flagged, v.spec, v.dimensions) for v in result.verdicts}


def test_fastmcp_server_over_stdio_every_parameter_kind(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-servers")
    source = scan_mcp_stdio(SERVER, timeout_s=60)
    assert source.kind == "mcp-stdio"
    assert source.server["name"] == "scan-fixture"  # the server never saw the key
    assert verdicts(scan_source(source)) == EXPECTED


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow  # a second server start, a few seconds on a loaded machine
def test_fastmcp_server_over_streamable_http_reads_the_same():
    port = free_port()
    process = subprocess.Popen([sys.executable, str(HERE / "scan_server.py"), "--http",
                                str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, "no server"
                time.sleep(0.2)
        source = scan_mcp_http(f"http://127.0.0.1:{port}/mcp", timeout_s=60)
        assert source.kind == "mcp-http" and verdicts(scan_source(source)) == EXPECTED
    finally:
        process.terminate()
        process.wait(10)


def scan_error(tmp_path, capsys, *flags) -> str:
    status = main(["tooldrift", "scan", *flags, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("memlens: error: ") and "Traceback" not in err
    assert not (tmp_path / "out" / "scan.json").exists()
    return err


def test_command_that_does_not_exist(tmp_path, capsys):
    err = scan_error(tmp_path, capsys, "--mcp", "no-such-mcp-server --flag")
    assert "MCP server 'no-such-mcp-server --flag': command not found" in err


def test_server_that_never_answers_times_out_and_is_ended(tmp_path, capsys):
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    err = scan_error(tmp_path, capsys, "--mcp", f"{BAD} hang {pid_file}", "--timeout", "2")
    assert time.monotonic() - started < 30
    assert "no answer to 'initialize' within 2 s" in err
    pid = int(pid_file.read_text())
    for _ in range(50):  # the SDK ends the subprocess on exit (terminate, then kill)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"server {pid} still running after the scan")


def test_crashing_server_shows_its_stderr(tmp_path, capsys):
    err = scan_error(tmp_path, capsys, "--mcp", f"{BAD} crash")
    assert "closed the connection during 'initialize'" in err
    assert "boom: cannot open the tool database" in err


def test_server_with_another_protocol_version(tmp_path, capsys):
    err = scan_error(tmp_path, capsys, "--mcp", f"{BAD} oldproto")
    assert "speaks a protocol version this mcp SDK does not support" in err
    assert "1999-01-01" in err


@pytest.mark.parametrize("schema, message", [
    ({"type": "object", "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
      "properties": {"mode": {"$ref": "#/$defs/A"}}}, "$ref cycle"),
    ({"type": "object", "properties": {"sku": {"type": "string",
                                               "enum": [str(i) for i in range(2000)]}}},
     "enum of 2,000 values"),
    ({"type": "object", "properties": {"when": {"type": "datetime"}}},
     "type 'datetime' is not a JSON-schema type"),
])
def test_server_with_malformed_schema(tmp_path, capsys, schema, message):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "broken", "inputSchema": schema}]))
    err = scan_error(tmp_path, capsys, "--mcp", f"{BAD} tools {tools}")
    assert "tool 'broken'" in err and message in err


def test_url_nobody_listens_on(tmp_path, capsys):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    err = scan_error(tmp_path, capsys, "--url", url, "--timeout", "10")
    assert f"MCP server at {url}: cannot reach the server" in err


def test_every_tools_list_page_is_read(tmp_path):
    tools = tmp_path / "tools.json"
    schema = {"type": "object", "properties": {"verbose": {"type": "boolean"}}}
    tools.write_text(json.dumps([{"name": f"t{i}", "inputSchema": schema} for i in range(3)]))
    source = scan_mcp_stdio(f"{BAD} tools {tools}", timeout_s=60)
    assert [t.name for t in source.tools] == ["t0", "t1", "t2"]  # three pages of one tool
    assert source.server == {"name": "bad-fixture", "version": "0",
                             "protocol_version": source.server["protocol_version"]}
