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
    assert (summary["r_neutral"], summary["r_biased"], summary["delta"]) == (0.0, 1.0, 1.0)
    assert summary["counts"]["calls"] == 10 * 3 * 2
    assert len(model.calls) == 60
    assert (tmp_path / "calls.jsonl").read_text().count("\n") == 60
    # resume: a second run pays for nothing and gives the same numbers
    again = FakeModel(drifting_agent)
    summary2 = run_tooldrift(again, DATA, tmp_path, RunConfig(k=2, n_bootstrap=200), progress=False)
    assert len(again.calls) == 0 and summary2["delta"] == 1.0


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
    assert summary["r_biased"] is None
    assert summary["counts"]["invalid"]["total"] == 2 and summary["counts"]["no_call"]["total"] == 1


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

    def responder(request):
        assert request["tools"][0]["type"] == "function"
        messages = request["messages"]
        reply = drifting_agent(messages, None).tool_calls[0]
        if "scenario_2" in entry_of(messages).id and "Pepper" in messages[0]["content"]:
            return "Sure, done."  # a neutral-condition no-call on the education entry
        return {"tool_calls": [{"name": reply.name, "arguments": json.loads(reply.arguments_json)}]}

    with LoopbackServer(responder=responder) as server:
        model = get_model(f"openai:tool-agent@{server.base_url}")
        summary = run_tooldrift(model, DATA, tmp_path, RunConfig(k=1, n_bootstrap=200),
                                progress=False)
    assert len(server.requests) == 30
    assert summary["r_biased"] == 1.0 and summary["r_neutral"] == 0.0
    assert summary["counts"]["no_call"] == {"neutral": 1, "total": 1}
    assert summary["by_domain"]["education"]["r_neutral"] is None


@pytest.mark.parametrize("k", [0, -1])
def test_bad_k_is_a_clear_error(tmp_path, k):
    from memlens.errors import MemlensError

    with pytest.raises(MemlensError, match="--k"):
        run_tooldrift(FakeModel(), DATA, tmp_path, RunConfig(k=k), progress=False)


def test_model_text_is_escaped_in_the_html_report(tmp_path):
    attack = "<script>alert('x')</script>"
    run_tooldrift(FakeModel([attack]), DATA, tmp_path, RunConfig(k=1, limit=1, n_bootstrap=20),
                  progress=False)
    page = (tmp_path / "tooldrift.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page


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
