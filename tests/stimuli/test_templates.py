"""Memory templates: exact rendered messages per condition under every bundled template."""

import json

import pytest

from memlens.errors import MemlensError
from memlens.stimuli import inject, load_stimuli
from memlens.stimuli.templates import BUNDLED, load_template, stimulus_facts

Q = "Should I rent or buy?"
CONDITIONS = {  # condition -> memory text (the control has none)
    "control": "",
    "noise": "Um, so, well...",
    "persona": "I use a wheelchair.",
    "life_event": "My mother died suddenly last spring.",
}
SAVED = ("You are a helpful assistant. You have a memory of past conversations with this user.\n"
         "Use a saved memory only when it is relevant to the request.\n\nSaved memories:\n")
PROFILE = "You are a helpful assistant. The memory service returned this user profile (JSON):\n"


def expected(template: str, memory: str) -> list[dict]:
    """The messages written out by hand for each bundled template."""
    user = {"role": "user", "content": Q}
    if template == "prefix":
        return [{"role": "user", "content": f"{memory}\n{Q}" if memory else Q}]
    if template == "system":
        return [{"role": "system", "content": "Memory about the user (saved from earlier "
                 f"conversations):\n- {memory}"}, user]
    if template == "history":
        return [{"role": "user", "content": f"Please remember this about me: {memory}"},
                {"role": "assistant", "content": "Thanks for telling me. I'll keep that in mind."},
                user]
    if template == "saved-memories":
        return [{"role": "system", "content": f"{SAVED}- {memory}"}, user]
    facts = json.dumps([memory] if memory else [])
    return [{"role": "system", "content": PROFILE + '{"user_profile": {"facts": ' + facts + "}}"},
            user]


@pytest.mark.parametrize("name", BUNDLED)
@pytest.mark.parametrize("condition", CONDITIONS)
def test_bundled_templates_render_exactly(name, condition):
    memory = CONDITIONS[condition]
    assert load_template(name).render(Q, stimulus_facts(memory)) == expected(name, memory)


def test_literal_strings_of_the_two_product_formats():
    saved = load_template("saved-memories")
    assert saved.render(Q, [])[0]["content"].endswith("Saved memories:\n- ")
    assert saved.render(Q, ["I am 72.", "I like tea."])[0]["content"].endswith(
        "Saved memories:\n- I am 72.\n- I like tea.")
    profile = load_template("json-profile")
    assert profile.render(Q, [])[0]["content"] == PROFILE + '{"user_profile": {"facts": []}}'
    assert profile.render(Q, ['I said "hi"', "Ünïcode"])[0]["content"] == (
        PROFILE + '{"user_profile": {"facts": ["I said \\"hi\\"", "Ünïcode"]}}')


@pytest.mark.parametrize("mode", ["prefix", "system", "history"])
@pytest.mark.parametrize("system_prompt", [None, "You are terse."])
def test_mode_templates_equal_inject_on_the_whole_catalogue(mode, system_prompt):
    template = load_template(mode)
    for stimulus in load_stimuli():  # whitespace noise included, verbatim
        assert template.render(Q, stimulus_facts(stimulus), system_prompt) == inject(
            Q, stimulus, mode=mode, system_prompt=system_prompt), stimulus.id


def test_tool_result_turn_and_system_prompt(tmp_path):
    path = tmp_path / "tool.yaml"
    path.write_text('name: tool\nsystem: "Be brief."\nturns:\n'
                    "  - {role: tool, tool_name: get_profile, content: '{memory_json}'}\n"
                    'user: "Q: {question}"\n')
    messages = load_template(path).render(Q, ["I am 72."], system_prompt="Sys.")
    assert messages == [
        {"role": "system", "content": "Sys.\n\nBe brief."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_memory_0", "type": "function",
             "function": {"name": "get_profile", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_memory_0", "content": '["I am 72."]'},
        {"role": "user", "content": f"Q: {Q}"}]


@pytest.mark.parametrize(("body", "message"), [
    ('name: x\nuser: "{memory.__class__} {question}"', "placeholder '{memory.__class__}'"),
    ('name: x\nuser: "{memory[0]} {question}"', "placeholder '{memory[0]}'"),
    ('name: x\nuser: "{memory!r} {question}"', "placeholder '{memory!r}'"),
    ('name: x\nuser: "{memory:>99} {question}"', "placeholder '{memory:>99}'"),
    ('name: x\nuser: "{secret} {question}"', "placeholder '{secret}'"),
    ('name: x\nuser: "{memory} {question"', "malformed placeholder"),
    ('name: x\nitem: "- {memory}"\nsystem: "{memory_list}"', "item: placeholder '{memory}'"),
    ('name: x\nsystem: "{memory}"\nuser: "no question"', "exactly once"),
    ('name: x\nuser: "{question}"', "must place the memory"),
    ('name: x\nsystem: "{memory} {question}"', "belongs in 'user' only"),
    ('name: x\ncolour: red\nuser: "{memory}{question}"', "unknown key 'colour'"),
    ("user: '{memory}{question}'", "field 'name'"),
    ("name: x\nturns: [{role: tool, content: '{memory}'}]", "tool_name"),
    ("name: x\nturns: [{role: system, content: '{memory}'}]", "field 'turns.0.role'"),
    ("!!python/object/apply:os.system ['echo owned']", "malformed memory template"),
    ("- a\n- b", "must be a mapping"),
])
def test_bad_templates_are_refused_with_the_file_named(tmp_path, body, message):
    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(MemlensError, match="bad.yaml") as caught:
        load_template(path)
    assert message in str(caught.value)


def test_json_template_file_and_unknown_name(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"name": "j", "user": "[{memory}] {question}"}))
    assert load_template(path).render(Q, ["a", "b"])[-1]["content"] == f"[a\nb] {Q}"
    with pytest.raises(MemlensError, match="neither a bundled template"):
        load_template("no-such-template")
