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


def labels_for(request):
    steps = request["messages"][-1]["content"].count("\nStep ")
    return json.dumps({"labels": [{"step": n, "label": "practical.resources_cost"}
                                  for n in range(1, steps + 1)]})


def test_prompts_are_sized_to_the_server_context(tmp_path):
    # issue 25: a long response's prompt overflowed a 4,096-token llama.cpp context (HTTP 400).
    # The server reports n_ctx on /props (as llama.cpp does) and refuses longer prompts (here
    # at 4 characters a token); the labeler splits that response's steps across calls.
    n_ctx = 4096

    def too_long(index, body):
        chars = sum(len(m.get("content") or "") for m in body.get("messages", []))
        return "400" if chars / 4 + 200 > n_ctx else "ok"

    steps = tmp_path / "long.jsonl"
    rows = [{"id": f"s{s}", "response_id": "r0", "text": f"Step {s}: " + "weigh the cost. " * 25}
            for s in range(12)] + [{"id": "t0", "response_id": "r1", "text": "A short step."}]
    steps.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with LoopbackServer(responder=labels_for, faults=too_long, n_ctx=n_ctx) as server:
        status = main(["label", "--labeler", f"openai:m@{server.base_url}", "--in", str(steps),
                       "--out", str(tmp_path / "labels.jsonl")])
        faults = [r.fault for r in server.requests if r.path.endswith("/chat/completions")]
    assert status == 0 and set(faults) == {"ok"} and len(faults) >= 3  # r0 split, r1 whole
    labels = [json.loads(line)["label"] for line in (tmp_path / "labels.jsonl").open()]
    assert labels == ["practical.resources_cost"] * 13


def test_context_flag_overrides_and_is_checked(tmp_path, capsys):
    assert main(["label", "--labeler", "embedded", "--context-tokens", "4096", "--in",
                 str(steps_file(tmp_path)), "--out", str(tmp_path / "l.jsonl")]) == 2
    assert "--context-tokens applies only to an LLM labeler" in capsys.readouterr().err
    with LoopbackServer(responder=labels_for) as server:  # no /props: the flag decides
        status = main(["label", "--labeler", f"openai:m@{server.base_url}", "--context-tokens",
                       "3500", "--in", str(steps_file(tmp_path)), "--out",
                       str(tmp_path / "labels.jsonl")])
        assert status == 0 and len(server.requests) == 3  # three short responses: one call each
