"""The runner over the bundled sample with the fake model, and end to end through the OpenAI
tools API on the loopback server (real HTTP)."""

import json

import pytest
from tooldrift_fakes import DATA, best_and_worst, drifting_agent, entry_of  # noqa: F401

from memlens.models import FakeModel, get_model
from memlens.models.fake import tool_reply
from memlens.models.loopback import LoopbackServer
from memlens.tooldrift.runner import CALLS_TABLE, RunConfig, build_messages, run_tooldrift


def test_fake_agent_that_always_drifts_scores_delta_one(tmp_path):
    model = FakeModel(drifting_agent)
    summary = run_tooldrift(model, DATA, tmp_path, RunConfig(k=2, n_bootstrap=200),
                            progress=False)
    overall = summary.overall
    assert (overall.r_neutral, overall.r_biased, overall.delta) == (0.0, 1.0, 1.0)
    n = len(DATA.rubrics)
    assert summary.counts.calls == n * 3 * 2
    assert len(model.calls) == n * 3 * 2
    assert (tmp_path / "calls.jsonl").read_text().count("\n") == n * 3 * 2
    assert overall.interpretation.interpretable is True  # Setting 1: memory verbatim
    assert overall.no_call.overall.k == 0 and overall.no_call.overall.n == n * 3 * 2
    assert overall.retrieval is None and summary.attribution.applicable is False
    assert not (tmp_path / "tooldrift.html").exists()  # the report is the CLI's, after the run
    # resume: a second run pays for nothing and gives the same numbers
    again = FakeModel(drifting_agent)
    summary2 = run_tooldrift(again, DATA, tmp_path, RunConfig(k=2, n_bootstrap=200), progress=False)
    assert len(again.calls) == 0 and summary2.overall.delta == 1.0


def test_garbage_replies_are_recorded_not_raised(tmp_path):
    first = DATA.entries[sorted(DATA.rubrics)[0]]
    replies = [tool_reply("merge", "{}"), tool_reply(first.tool_name, "{not json"),
               "I would rather not call a tool."]
    summary = run_tooldrift(FakeModel(replies), DATA, tmp_path,
                            RunConfig(k=1, limit=1, n_bootstrap=100), progress=False)
    from memlens.store import RunStore

    with RunStore(tmp_path, read_only=True) as store:
        rows = {r["condition"]: r for r in store.rows(CALLS_TABLE)}
    assert rows["base"]["status"] == "invalid" and "unknown tool" in rows["base"]["error"]
    assert rows["neutral"]["status"] == "invalid" and rows["neutral"]["error"] == (
        "the reply is not valid JSON (Expecting property name enclosed in double quotes at char 1)")
    assert rows["biased"]["status"] == "no_call"
    assert summary.overall.r_biased is None
    assert summary.counts.invalid.total == 2 and summary.counts.no_call.total == 1


def test_memory_in_system_prompt_per_condition():
    entry = DATA.entries["speed_impatience/ecommerce/scenario_1"]
    biased = build_messages(entry, entry.memories("biased"), constrained=False)
    neutral = build_messages(entry, entry.memories("neutral"), constrained=True)
    assert entry.biased_user_memory[0] in biased[0]["content"]
    assert entry.biased_user_memory[0] not in neutral[0]["content"]
    assert entry.base_user_memory in neutral[0]["content"] and "JSON object" in neutral[0]["content"]
    assert biased[1] == {"role": "user", "content": entry.user_prompt}


def test_end_to_end_through_openai_tools_api(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    education = "resource_frugality/education/scenario_2"

    def responder(request):
        assert request["tools"][0]["type"] == "function"
        assert request["tool_choice"] == "auto"
        messages = request["messages"]
        reply = drifting_agent(messages, None).tool_calls[0]
        if entry_of(messages).id == education and "Pepper" in messages[0]["content"]:
            return "Sure, done."  # a neutral-condition no-call on the education entry
        return {"tool_calls": [{"name": reply.name, "arguments": json.loads(reply.arguments_json)}]}

    with LoopbackServer(responder=responder) as server:
        model = get_model(f"openai:tool-agent@{server.base_url}")
        summary = run_tooldrift(model, DATA, tmp_path,
                                RunConfig(k=1, n_bootstrap=200, tool_choice="auto"),
                                progress=False)
    n = len(DATA.rubrics)
    assert len(server.requests) == 3 * n
    assert summary.overall.r_biased == 1.0 and summary.overall.r_neutral == 0.0
    assert summary.counts.no_call.to_dict() == {"neutral": 1, "total": 1}
    no_call = summary.overall.no_call
    assert no_call.overall.k == 1 and no_call.overall.n == 3 * n
    assert no_call.by_condition["neutral"].k == 1
    scenario = next(s for s in summary.scenarios if s.entry_id == education)
    assert scenario.r_neutral is None
    assert summary.run.call_path == "tools" and summary.run.tool_choice == "auto"


def test_default_forces_each_entrys_own_tool_by_name(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    seen = []

    def responder(request):
        seen.append(request["tool_choice"])
        reply = drifting_agent(request["messages"], None).tool_calls[0]
        return {"tool_calls": [{"name": reply.name, "arguments": json.loads(reply.arguments_json)}]}

    with LoopbackServer(responder=responder) as server:
        model = get_model(f"openai:tool-agent@{server.base_url}")
        summary = run_tooldrift(model, DATA, tmp_path, RunConfig(k=1, limit=2, n_bootstrap=50),
                                progress=False)
    first, second = (DATA.entries[key] for key in sorted(DATA.rubrics)[:2])
    names = sorted(choice["function"]["name"] for choice in seen)  # calls run concurrently
    assert names == sorted([first.tool_name] * 3 + [second.tool_name] * 3)
    assert all(choice["type"] == "function" for choice in seen)
    from memlens.store import RunStore

    with RunStore(tmp_path, read_only=True) as store:
        manifest = store.read_manifest()["tooldrift"]["config"]
    assert manifest["tool_choice"] == "entry" and manifest["resolved_call_path"] == "tools"
    assert summary.run.calls_by_path == {"tools": 6}


def test_tool_choice_and_call_path_requests():
    from memlens.errors import MemlensError
    from memlens.models import FakeModel
    from memlens.tooldrift.runner import build_request, call_path, check_tool_choice

    entry = DATA.entries["speed_impatience/ecommerce/scenario_1"]
    model = FakeModel()
    named = build_request(entry, "base", 0, [], model, RunConfig())
    assert named.params.tool_choice == entry.tool_name and named.params.json_schema is None
    assert build_request(entry, "base", 0, [], model,
                         RunConfig(tool_choice="required")).params.tool_choice == "required"
    schema = build_request(entry, "base", 0, [], model, RunConfig(call_path="json_schema"))
    assert schema.params.tools is None and schema.params.json_schema["type"] == "object"
    model.forces_tool_choice = False  # a backend that says it cannot force a call
    assert call_path(model, RunConfig()) == "json_schema"
    assert call_path(model, RunConfig(tool_choice="auto")) == "tools"
    check_tool_choice(entry.tool_name, [entry])
    with pytest.raises(MemlensError, match="do not have"):
        check_tool_choice(entry.tool_name, list(DATA.entries.values()))
    with pytest.raises(MemlensError, match="expected auto, required, entry"):
        check_tool_choice("none", [entry])


@pytest.mark.parametrize("k", [0, -1])
def test_bad_k_is_a_clear_error(tmp_path, k):
    from memlens.errors import MemlensError

    with pytest.raises(MemlensError, match=r"RunConfig: field 'k': Input should be greater "
                                           rf"than or equal to 1 \(got {k}\)"):
        run_tooldrift(FakeModel(), DATA, tmp_path, RunConfig(k=k), progress=False)


def test_resume_under_other_settings_is_refused(tmp_path):
    from memlens.errors import MemlensError

    run_tooldrift(FakeModel(drifting_agent), DATA, tmp_path,
                  RunConfig(k=1, limit=1, n_bootstrap=20), progress=False)
    with pytest.raises(MemlensError, match=r"different settings \(k, temperature\)"):
        run_tooldrift(FakeModel(drifting_agent), DATA, tmp_path,
                      RunConfig(k=2, limit=1, n_bootstrap=20, temperature=0.1), progress=False)
    again = FakeModel(drifting_agent)  # the bootstrap only re-summarises: a resume may change it
    run_tooldrift(again, DATA, tmp_path, RunConfig(k=1, limit=1, n_bootstrap=30), progress=False)
    assert again.calls == []


def test_a_tool_name_is_forced_by_every_backend_mapping():
    from memlens.models import GenerationParams
    from memlens.models.anthropic_backend import build_request as anthropic_request
    from memlens.models.tool_emulation import constraint_schema, prepare_messages

    entry = DATA.entries["speed_impatience/ecommerce/scenario_1"]
    other = DATA.entries["risk_permissiveness/finance/scenario_1"]
    params = GenerationParams(tools=(other.openai_tool(), entry.openai_tool()),
                              tool_choice=entry.tool_name)
    sent = anthropic_request("claude", [{"role": "user", "content": "go"}], params)
    assert sent["tool_choice"] == {"type": "tool", "name": entry.tool_name}
    # emulated backends constrain decoding to the named tool only
    assert constraint_schema(params) == entry.parameters_schema
    assert other.tool_name not in prepare_messages([], params)[0]["content"]


def test_emulated_tools_join_the_leading_system_message_as_the_api_path_does():
    """The tool-drift system prompt (the memory in setting 1) and the tool instruction reach the
    embedded / HF / vLLM backends as one leading system message, as they reach an API backend
    through ``schema_call_request`` (some chat templates refuse a second system message)."""
    from memlens.models import GenerationParams
    from memlens.models.openai_compat import schema_call_request
    from memlens.models.tool_emulation import prepare_messages, tool_instruction

    entry = DATA.entries["speed_impatience/ecommerce/scenario_1"]
    params = GenerationParams(tools=(entry.openai_tool(),), tool_choice=entry.tool_name)
    messages = [{"role": "system", "content": "The user is always in a hurry."},
                {"role": "user", "content": "go"}]
    sent = prepare_messages(messages, params)
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[0]["content"] == (tool_instruction((entry.openai_tool(),))
                                  + "\n\nThe user is always in a hurry.")
    api, _ = schema_call_request("m", messages, params, official=False)
    assert api["messages"] == sent
    assert messages[0]["content"] == "The user is always in a hurry."  # inputs left unchanged
