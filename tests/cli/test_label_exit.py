"""``memlens label`` does not exit 0 when its model calls failed (issue 25: every call of an
LLM labeler failed on a context overflow and the command still said 0). Real HTTP on
127.0.0.1: the loopback server answers HTTP 400 as llama.cpp does for a prompt too long."""

import json

import pytest

from memlens.cli.main import main
from memlens.models.loopback import LoopbackServer

pytest.importorskip("openai")


def steps_file(tmp_path):
    path = tmp_path / "steps.jsonl"
    rows = [{"id": f"r{r}-s{s}", "response_id": f"r{r}", "text": f"Step {s} of answer {r}."}
            for r in range(3) for s in range(2)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_label_exits_3_when_every_call_failed(tmp_path, capsys):
    with LoopbackServer(faults=lambda index, body: "400") as server:
        status = main(["label", "--labeler", f"openai:m@{server.base_url}", "--in",
                       str(steps_file(tmp_path)), "--out", str(tmp_path / "labels.jsonl")])
    assert status == 3
    err = capsys.readouterr().err
    assert "3 of 3 labeler calls failed" in err
    rows = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
    assert {row["label"] for row in rows} == {"unlabeled"} and len(rows) == 6


def test_label_exits_0_when_the_calls_succeed(tmp_path):
    def responder(request):
        steps = request["messages"][-1]["content"].count("\nStep ")
        return json.dumps({"labels": [{"step": n, "label": "practical.resources_cost"}
                                      for n in range(1, steps + 1)]})

    with LoopbackServer(responder=responder) as server:
        status = main(["label", "--labeler", f"openai:m@{server.base_url}", "--in",
                       str(steps_file(tmp_path)), "--out", str(tmp_path / "labels.jsonl")])
    assert status == 0
