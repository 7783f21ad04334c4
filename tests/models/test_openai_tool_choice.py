"""Tool choice through the OpenAI-compatible backend (memlens' loopback server, real HTTP):
named functions on the wire, and the JSON-schema fallback when a server ignores a forced call."""

import json

import pytest

from memlens.models import GenerationParams
from memlens.models.loopback import LoopbackServer
from memlens.models.openai_compat import OpenAIModel
from memlens.models.retry import RetryPolicy

TOOL = {"type": "function", "function": {"name": "book", "description": "Book a trip",
        "parameters": {"type": "object", "properties": {"speed": {"type": "string"}},
                       "required": ["speed"]}}}
OTHER = {"type": "function", "function": {"name": "cancel", "parameters": {
    "type": "object", "properties": {"why": {"type": "string"}}}}}
USER = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "go"}]


def ignores_tools(request):
    """Like llama.cpp with a template without tool support: tools accepted, prose returned;
    a response_format is honoured."""
    if "response_format" in request:
        return '{"speed": "fast"}'
    return "I cannot book trips."


def make(server, **options):
    return OpenAIModel("m", server.base_url, retry=RetryPolicy(max_attempts=1), **options)


@pytest.mark.parametrize(("choice", "wire"), [
    ("auto", "auto"), ("required", "required"), ("none", "none"),
    ("book", {"type": "function", "function": {"name": "book"}})])
def test_tool_choice_on_the_wire(choice, wire):
    def honours(request):
        return {"tool_calls": [{"name": "book", "arguments": {"speed": "slow"}}]}

    with LoopbackServer(responder=honours) as server:
        model = make(server)
        reply = model.complete(USER, GenerationParams(tools=(TOOL,), tool_choice=choice))
        model.close()
    assert server.requests[0].body["tool_choice"] == wire
    assert len(server.requests) == 1 and reply.tool_calls[0].arguments() == {"speed": "slow"}
    assert model.forces_tool_choice


def test_ignored_force_falls_back_to_a_json_schema_then_stays_there():
    with LoopbackServer(responder=ignores_tools) as server:
        model = make(server)
        params = GenerationParams(tools=(OTHER, TOOL), tool_choice="book", max_tokens=20)
        first = model.complete(USER, params)
        second = model.complete(USER, params)
        model.close()
    native, schema, straight = (request.body for request in server.requests)
    assert native["tools"] == [OTHER, TOOL] and "response_format" not in native
    # the fallback: the named tool's parameters as the schema, no tools, one system message
    assert "tools" not in schema and "tool_choice" not in schema
    assert schema["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "response", "schema": TOOL["function"]["parameters"]}}
    assert [m["role"] for m in schema["messages"]] == ["system", "user"]
    assert schema["messages"][0]["content"].endswith("- book: Book a trip\n\nBe brief.")
    assert "cancel" not in schema["messages"][0]["content"]
    assert straight == schema  # later forced calls skip the ignored native attempt
    for reply in (first, second):
        assert [(c.name, c.arguments()) for c in reply.tool_calls] == [("book", {"speed": "fast"})]
        assert reply.text == "" and reply.finish_reason == "tool_calls"
        assert reply.raw["tool_emulation"] == "response_format"
    # loopback counts words: both paid calls are in the first reply's usage
    schema_words = len('{"speed": "fast"}'.split())
    assert first.completion_tokens == len("I cannot book trips.".split()) + schema_words
    assert second.completion_tokens == schema_words
    assert not model.forces_tool_choice


def test_required_with_several_tools_uses_the_name_and_arguments_schema():
    def answer(request):
        if "response_format" in request:
            return json.dumps({"name": "cancel", "arguments": {"why": "rain"}})
        return "no"

    with LoopbackServer(responder=answer) as server:
        model = make(server)
        reply = model.complete(USER, GenerationParams(tools=(OTHER, TOOL), tool_choice="required"))
        model.close()
    schema = server.requests[1].body["response_format"]["json_schema"]["schema"]
    assert [option["properties"]["name"] for option in schema["anyOf"]] == [
        {"const": "cancel"}, {"const": "book"}]
    assert [(c.name, c.arguments()) for c in reply.tool_calls] == [("cancel", {"why": "rain"})]


@pytest.mark.parametrize("choice", ["auto", "none"])
def test_unforced_calls_never_fall_back(choice):
    with LoopbackServer(responder=ignores_tools) as server:
        model = make(server)
        reply = model.complete(USER, GenerationParams(tools=(TOOL,), tool_choice=choice))
        model.close()
    assert len(server.requests) == 1 and reply.tool_calls == []
    assert reply.text == "I cannot book trips."


def test_native_keeps_the_no_call_reply_and_schema_never_tries_native():
    with LoopbackServer(responder=ignores_tools) as server:
        native = make(server, forced_tools="native")
        kept = native.complete(USER, GenerationParams(tools=(TOOL,), tool_choice="required"))
        native.close()
        schema = make(server, forced_tools="schema")
        assert not schema.forces_tool_choice
        made = schema.complete(USER, GenerationParams(tools=(TOOL,), tool_choice="required"))
        schema.close()
    assert kept.tool_calls == [] and kept.text == "I cannot book trips."
    assert made.tool_calls[0].arguments() == {"speed": "fast"}
    assert ["response_format" in r.body for r in server.requests] == [False, True]


def test_forced_tools_is_checked():
    with pytest.raises(ValueError, match="forced_tools"):
        OpenAIModel("m", "http://127.0.0.1:9/v1", forced_tools="sometimes")
