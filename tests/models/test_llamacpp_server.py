"""memlens against a third-party OpenAI-compatible server: llama.cpp's own HTTP server
(``xllamacpp``, the packaged SmolLM2) on 127.0.0.1 — ``memlens chat``, JSON-schema output, tool
choice, a tiny audit and a tiny tool-drift run through the ``openai:`` backend.

What llama.cpp does here (xllamacpp 2026.10.11549, SmolLM2's chat template has no tool support,
``/props`` says ``supports_tools: false``): ``tools`` and every ``tool_choice`` are accepted with
HTTP 200 and ignored (prose, no call); a bare tool name as ``tool_choice`` is HTTP 400
"Invalid tool_choice"; ``response_format`` JSON schemas are enforced.
"""

import json
import os
import subprocess
import sys

import pytest

from memlens.models import GenerationParams
from memlens.models.openai_compat import OpenAIModel
from memlens.models.retry import RetryPolicy

pytestmark = pytest.mark.embedded

TOOL = {"type": "function", "function": {
    "name": "book_flight", "description": "Book a flight for the user",
    "parameters": {"type": "object", "additionalProperties": False,
                   "properties": {"city": {"type": "string", "maxLength": 20},
                                  "cabin": {"type": "string", "enum": ["economy", "business"]}},
                   "required": ["city", "cabin"]}}}
ASK = [{"role": "user", "content": "Book me a flight to Paris."}]
N_PER_CHOICE = 2


def model_for(server, **options) -> OpenAIModel:
    return OpenAIModel("smollm2", server.base_url, retry=RetryPolicy(max_attempts=2),
                       timeout_s=120, **options)


def tool_call_rate(server, choice: str, forced_tools: str) -> tuple[int, int]:
    """(calls with a valid ``book_flight`` call, calls made) over N_PER_CHOICE seeds."""
    model = model_for(server, forced_tools=forced_tools)
    try:
        replies = [model.complete(ASK, GenerationParams(tools=(TOOL,), tool_choice=choice,
                                                        max_tokens=32, seed=seed))
                   for seed in range(N_PER_CHOICE)]
    finally:
        model.close()
    made = sum(1 for reply in replies
               if [c.name for c in reply.tool_calls] == ["book_flight"]
               and isinstance(reply.tool_calls[0].arguments(), dict))
    return made, len(replies)


def test_memlens_chat_cli(llamacpp_server, tmp_path):
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("OPENAI_API_KEY", None)  # a loopback server needs no key
    done = subprocess.run(
        [sys.executable, "-m", "memlens.cli.main", "chat", "--model",
         f"openai:smollm2@{llamacpp_server.base_url}", "--max-tokens", "8", "--seed", "1",
         "--temperature", "0", "--usage", "Say hello."],
        capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    usage = done.stderr.strip().splitlines()[-1]
    assert "completion_tokens=" in usage
    assert 1 <= int(usage.split("completion_tokens=")[1].split()[0]) <= 8


def test_json_schema_output_is_enforced(llamacpp_server):
    model = model_for(llamacpp_server)
    try:
        reply = model.complete(ASK, GenerationParams(json_schema=TOOL["function"]["parameters"],
                                                     max_tokens=48, seed=2))
    finally:
        model.close()
    value = json.loads(reply.text)
    assert set(value) == {"city", "cabin"} and value["cabin"] in ("economy", "business")
    assert len(value["city"]) <= 20


def test_server_ignores_forced_tool_choice_and_refuses_a_bare_name(llamacpp_server):
    caps = llamacpp_server.get_json("/props")["chat_template_caps"]
    assert "'supports_tools': False" in str(caps)  # why the force is ignored
    status, body = llamacpp_server.post_json("/v1/chat/completions", {
        "messages": ASK, "tools": [TOOL], "tool_choice": "book_flight", "max_tokens": 4})
    assert status == 400 and "Invalid tool_choice" in body["error"]["message"]
    status, body = llamacpp_server.post_json("/v1/chat/completions", {
        "messages": ASK, "tools": [TOOL], "max_tokens": 8,
        "tool_choice": {"type": "function", "function": {"name": "book_flight"}}})
    assert status == 200 and not body["choices"][0]["message"].get("tool_calls")


@pytest.mark.slow
def test_tool_call_rate_per_tool_choice(llamacpp_server):
    """Native: what llama.cpp does with each tool_choice; memlens' default (``auto``): forced
    choices fall back to a JSON schema and always call."""
    rates = {(choice, path): tool_call_rate(llamacpp_server, choice, path)
             for path in ("native", "auto")
             for choice in ("auto", "required", "book_flight")}
    print("tool-call rate (valid calls / calls):",
          {f"{choice}/{path}": f"{made}/{n}" for (choice, path), (made, n) in rates.items()})
    for choice in ("auto", "required", "book_flight"):
        assert rates[(choice, "native")] == (0, N_PER_CHOICE)  # llama.cpp ignores the force
    assert rates[("auto", "auto")] == (0, N_PER_CHOICE)  # auto is never forced by memlens
    assert rates[("required", "auto")] == (N_PER_CHOICE, N_PER_CHOICE)
    assert rates[("book_flight", "auto")] == (N_PER_CHOICE, N_PER_CHOICE)


@pytest.mark.slow
def test_tiny_audit(llamacpp_server, tmp_path, capsys):
    from memlens.cli.main import main

    questions = [{"id": f"q{k}", "text": text, "category": "money", "subcategory": "housing",
                  "source": "test", "license": "CC0"}
                 for k, text in enumerate(["Is it better to rent or to buy a flat?",
                                           "Should I pay off my loan early or invest?"])]
    stimuli = [{"id": "control/no_perturbation", "class": "control",
                "category": "no_perturbation", "text": ""},
               {"id": "noise/filler/1", "class": "noise", "category": "filler",
                "text": "Um, so, well..."},
               {"id": "life_event/bereavement/1", "class": "life_event",
                "category": "bereavement", "text": "My father died last spring."}]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(s) + "\n" for s in stimuli))
    status = main(["audit", "--model", f"openai:smollm2@{llamacpp_server.base_url}",
                   "--questions", str(tmp_path / "q.jsonl"), "--stimuli",
                   str(tmp_path / "s.jsonl"), "--samples", "1", "--baselines", "1",
                   "--max-tokens", "32", "--bootstrap", "100", "--seed", "1", "--no-progress",
                   "--out", str(tmp_path / "run")])
    out = capsys.readouterr().out
    assert status == 0, out
    quality = json.loads((tmp_path / "run" / "stats.json").read_text())
    assert "8 of 8 responses processed in this run" in out and "0 failed" in out
    assert (tmp_path / "run" / "report.html").is_file()
    assert quality["metrics"]["dtw"]["categories"]["no_perturbation"]["n"] == 2


@pytest.mark.slow
@pytest.mark.parametrize(("tool_choice", "no_calls"), [("entry", 0), ("auto", 3)])
def test_tiny_tooldrift_run(llamacpp_server, tmp_path, capsys, tool_choice, no_calls):
    """``entry`` (the default) forces the entry's tool by name: llama.cpp ignores the force and
    the JSON-schema fallback makes the call; ``auto`` lets SmolLM2 decide: it never calls."""
    from memlens.cli.main import main

    status = main(["tooldrift", "run", "--model", f"openai:smollm2@{llamacpp_server.base_url}",
                   "--out", str(tmp_path / "td"), "--limit", "1", "--k", "1",
                   "--max-tokens", "48", "--bootstrap", "100", "--seed", "1",
                   "--tool-choice", tool_choice])
    capsys.readouterr()
    assert status == 0
    summary = json.loads((tmp_path / "td" / "tooldrift.json").read_text())
    counts = summary["counts"]
    assert counts["calls"] == 3 and counts["failed_calls"] == 0
    assert counts["no_call"]["total"] == no_calls
