"""Credentials written into a base URL (user:KEY@host, ?api_key=) are used to talk to the server
but never recorded or shown: not in the manifest, the store, the report, stdout or stderr."""

import base64
import sys
from pathlib import Path

from memlens.cli.main import main
from memlens.models.loopback import LoopbackServer

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

SECRET = "SECRETKEY9f3a"


def test_url_credentials_reach_the_server_and_nothing_else(tmp_path, capsys):
    questions, stimuli = scripted.write_inputs(tmp_path)
    run = tmp_path / "run"
    seen = []

    def output() -> str:
        captured = capsys.readouterr()
        seen.append(captured.out + captured.err)
        return captured.out
    with LoopbackServer(responder=scripted.make_responder(3),
                        faults=scripted.faults_for(3)) as server:
        port = server.base_url.rsplit(":", 1)[1].split("/")[0]
        model = f"openai:scripted@http://user:{SECRET}@127.0.0.1:{port}/v1"
        labeler = f"openai:labeler@http://localhost:{port}/v1/?api_key={SECRET}"
        args = ["audit", "--model", model, "--labeler", labeler, "--questions", questions,
                "--stimuli", stimuli, "--seed", "3", "--bootstrap", "200", "--max-tokens", "64",
                "--baselines", "1", "--no-progress", "--out", str(run)]
        assert main([*args, "--dry-run"]) == 0
        assert main(args) == 3  # finished; the one scripted HTTP 400 call failed (exit 3)
        output()
        assert main([*args, "--dry-run"]) == 0
        plan = output().splitlines()[1]
        assert plan.startswith("1 calls to make, 31 cached")  # the failed HTTP 400 call
        # the same server spelled differently is the same model id (same cache keys) and the
        # audit resumes instead of refusing "different settings (model)"
        for spelling in (f"HTTP://LOCALHOST:{port}/v1/", f"http://[::1]:{port}/v1"):
            respelled = [*args[:2], f"openai:scripted@{spelling}", *args[3:]]
            assert main([*respelled, "--dry-run"]) == 0
            assert output().splitlines()[1] == plan
            assert main(respelled) == 3  # resumed, not refused; the 400 call fails again
            output()
        auth = {k.lower(): v for k, v in server.requests[0].headers.items()}["authorization"]
        labeler_paths = [r.path for r in server.requests if "api_key" in r.path]
    assert auth == "Basic " + base64.b64encode(f"user:{SECRET}".encode()).decode()
    assert labeler_paths  # the query parameter was sent too
    assert main(["report", str(run)]) == 0
    output()
    assert SECRET not in "".join(seen)
    assert f"audit of openai:scripted@http://127.0.0.1:{port}/v1:" in seen[0]  # the dry-run
    stored = b"".join(p.read_bytes() for p in run.rglob("*") if p.is_file())
    assert SECRET.encode() not in stored
    html = (run / "report.html").read_text()
    assert f"openai:labeler@http://127.0.0.1:{port}/v1?api_key=&lt;redacted&gt;" in html
