"""``memlens/tool_drift``: the same MemDrift calls through ``memlens tooldrift run``'s runner and
through inspect's tool calling + ``memlens import-inspect`` give the same call rows and Δ.

One loopback server on 127.0.0.1 answers both with a tool call whose arguments are a function of
the request's seed and system prompt (the memory), so the biased condition moves them."""

import json

import pytest

pytest.importorskip("inspect_ai")
pytestmark = pytest.mark.slow  # two runs of 2 entries x 3 conditions x k = 2, ~20 s loaded

from memlens.models.loopback import LoopbackServer  # noqa: E402


def tool_reply(request: dict):
    """Arguments chosen by (seed + length of the system prompt) for every schema property."""
    function = request["tools"][0]["function"]
    pick = int(request["seed"]) + len(request["messages"][0]["content"])
    arguments = {}
    for name, spec in function["parameters"]["properties"].items():
        if "enum" in spec:
            arguments[name] = spec["enum"][pick % len(spec["enum"])]
        elif spec.get("type") == "boolean":
            arguments[name] = pick % 2 == 0
        elif spec.get("type") in ("integer", "number"):
            arguments[name] = pick % 10
        else:
            arguments[name] = "x"
    return {"content": "", "tool_calls": [{"name": function["name"],
                                            "arguments": json.dumps(arguments)}]}


def test_tool_drift_through_inspect_matches_memlens(tmp_path, monkeypatch):
    import inspect_ai

    from memlens.inspect_ext.importer import import_tooldrift_log
    from memlens.inspect_ext.logread import read_audit_log
    from memlens.inspect_ext.tasks import tool_drift
    from memlens.models import get_model
    from memlens.tooldrift.calls import read_calls
    from memlens.tooldrift.loader import load_dataset
    from memlens.tooldrift.runner import RunConfig, run_tooldrift

    monkeypatch.setenv("LOOP_API_KEY", "not-a-secret")
    with LoopbackServer(responder=tool_reply) as server:
        ours = run_tooldrift(get_model(f"openai:m@{server.base_url}"), load_dataset(),
                             tmp_path / "memlens", RunConfig(k=2, limit=2, n_bootstrap=200),
                             progress=False)
        calls_ours = len(server.requests)
        [log] = inspect_ai.eval(tool_drift(k=2, limit=2, n_bootstrap=200),
                                model="openai-api/loop/m", model_base_url=server.base_url,
                                log_dir=str(tmp_path / "logs"), display="none")
        seeds = sorted(r.body["seed"] for r in server.requests[:calls_ours])
        assert seeds == sorted(r.body["seed"] for r in server.requests[calls_ours:])
        assert {json.dumps(r.body["tool_choice"], sort_keys=True)
                for r in server.requests} == {json.dumps(
                    {"type": "function", "function": {"name": name}}, sort_keys=True)
                    for name in {r.body["tools"][0]["function"]["name"]
                                 for r in server.requests}}
    assert log.status == "success" and calls_ours == 12
    theirs = import_tooldrift_log(read_audit_log(log.location), tmp_path / "inspect",
                                  progress=False)
    key = ("id", "entry_id", "condition", "k", "status", "arguments")
    rows_ours = sorted(tuple(row.get(k) and json.dumps(row.get(k), sort_keys=True) for k in key)
                       for row in read_calls(tmp_path / "memlens" / "calls.jsonl"))
    rows_theirs = sorted(tuple(row.get(k) and json.dumps(row.get(k), sort_keys=True) for k in key)
                         for row in read_calls(tmp_path / "inspect" / "calls.jsonl"))
    assert rows_ours == rows_theirs and len(rows_ours) == 12
    assert all(row[4] == '"ok"' for row in rows_ours)
    ours, theirs = ours.to_dict(), theirs.to_dict()  # as both tooldrift.json files hold them
    for key in ("r_neutral", "r_biased", "delta", "ci", "paired_test", "by_dimension",
                "scenarios", "counts"):
        assert ours[key] == theirs[key], key
    assert ours["delta"] is not None  # the biased memory moved the arguments: a real Δ
