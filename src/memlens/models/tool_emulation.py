"""Tool calls for backends without native tool calling (embedded, vLLM offline, transformers).

Decoding is constrained to the tool's parameter schema (one tool) or to
``{"name": <tool>, "arguments": <its parameters>}`` over all tools (several), and the output is
turned back into ``ToolCall`` objects. Output that does not parse is kept, never raised.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from memlens.errors import MemlensError
from memlens.models.base import ChatResponse, GenerationParams, Message, ToolCall


def emulates_tools(params: GenerationParams) -> bool:
    """True when ``params`` ask for tools (and ``tool_choice`` is not ``"none"``).

    >>> emulates_tools(GenerationParams(tools=({"function": {"name": "f"}},)))
    True
    >>> emulates_tools(GenerationParams(tools=({"function": {"name": "f"}},), tool_choice="none"))
    False
    """
    return bool(params.tools) and params.tool_choice != "none"


def chosen_tools(params: GenerationParams) -> tuple:
    """The tools a call may use: only the one ``tool_choice`` names, else all of them.

    >>> tools = ({"function": {"name": "a"}}, {"function": {"name": "b"}})
    >>> chosen_tools(GenerationParams(tools=tools, tool_choice="b"))
    ({'function': {'name': 'b'}},)
    >>> len(chosen_tools(GenerationParams(tools=tools, tool_choice="required")))
    2
    """
    tools = tuple(params.tools or ())
    named = tuple(t for t in tools if t.get("function", t).get("name") == params.tool_choice)
    return named or tools


def tool_schema(tools: tuple | list) -> tuple[dict, str | None]:
    """The JSON schema that emulates a tool call, and the tool name when there is only one.

    >>> tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    >>> tool_schema([tool])
    ({'type': 'object'}, 'f')
    >>> schema, name = tool_schema([tool, tool])
    >>> name is None, schema["anyOf"][0]["properties"]["name"]
    (True, {'const': 'f'})
    """
    functions = [tool.get("function", tool) for tool in tools]
    for function in functions:
        if not function.get("name"):
            raise MemlensError(f"tool definition without a name: {json.dumps(function)[:120]}")
    if len(functions) == 1:
        return functions[0].get("parameters") or {"type": "object"}, functions[0]["name"]
    options = [{"type": "object",
                "properties": {"name": {"const": f["name"]},
                               "arguments": f.get("parameters") or {"type": "object"}},
                "required": ["name", "arguments"]} for f in functions]
    return {"anyOf": options}, None


def tool_instruction(tools: tuple | list) -> str:
    """A system message naming the tools (the schema itself is enforced by decoding)."""
    lines = ["Answer by calling a tool. Reply only with the JSON of the call. Tools:"]
    for tool in tools:
        function = tool.get("function", tool)
        lines.append(f"- {function['name']}: {function.get('description', '')}".rstrip(": "))
    return "\n".join(lines)


def emulated_calls(text: str, tools: tuple | list) -> list[ToolCall]:
    """Tool calls from schema-constrained output (see ``tool_schema``).

    With one tool the text is its arguments, kept verbatim even when invalid (recorded as such);
    with several it must be ``{"name", "arguments"}``, else there is no call.

    >>> tools = [{"function": {"name": "a"}}, {"function": {"name": "b"}}]
    >>> emulated_calls('{"name": "b", "arguments": {"x": 1}}', tools)
    [ToolCall(name='b', arguments_json='{"x": 1}')]
    >>> emulated_calls("garbage", tools)
    []
    """
    _, single_name = tool_schema(tools)
    if single_name is not None:
        return [ToolCall(name=single_name, arguments_json=text)]  # invalid JSON kept as-is
    try:
        call = json.loads(text)
        return [ToolCall(name=str(call["name"]), arguments_json=json.dumps(call["arguments"]))]
    except (ValueError, KeyError, TypeError):
        return []  # no parseable call: recorded by the caller as "no call"


def constraint_schema(params: GenerationParams) -> dict | None:
    """The JSON schema decoding must follow: the tools' (emulated call) or ``json_schema``."""
    if emulates_tools(params):
        return tool_schema(chosen_tools(params))[0]
    return params.json_schema


def with_instruction(messages: Sequence[Message], instruction: str) -> list[Message]:
    """Copies of ``messages`` with ``instruction`` leading the first system message (one is
    added when there is none): some chat templates refuse a system message that is not first.

    >>> with_instruction([{"role": "system", "content": "Be brief."},
    ...                   {"role": "user", "content": "hi"}], "Call a tool.")[0]["content"]
    'Call a tool.\\n\\nBe brief.'
    >>> [m["role"] for m in with_instruction([{"role": "user", "content": "hi"}], "Call.")]
    ['system', 'user']
    """
    sent = [dict(m) for m in messages]
    if sent and sent[0].get("role") == "system" and isinstance(sent[0].get("content"), str):
        sent[0]["content"] = f"{instruction}\n\n{sent[0]['content']}"
    else:
        sent.insert(0, {"role": "system", "content": instruction})
    return sent


def prepare_messages(messages: Sequence[Message], params: GenerationParams) -> list[Message]:
    """Messages as sent: copies, with the tool instruction in the leading system message when
    tools are emulated (``with_instruction``)."""
    if emulates_tools(params):
        return with_instruction(messages, tool_instruction(chosen_tools(params)))
    return [dict(m) for m in messages]


def apply_emulated_calls(response: ChatResponse, params: GenerationParams) -> ChatResponse:
    """When tools are emulated, move ``response.text`` into its tool calls (in place).

    The constrained output is kept in ``raw["tool_output"]``, the text becomes empty, and a
    ``"stop"`` with at least one call becomes ``"tool_calls"``.

    >>> params = GenerationParams(tools=({"function": {"name": "f"}},))
    >>> reply = apply_emulated_calls(ChatResponse(text='{"x": 1}'), params)
    >>> reply.text, reply.tool_calls, reply.finish_reason, reply.raw
    ('', [ToolCall(name='f', arguments_json='{"x": 1}')], 'tool_calls', {'tool_output': '{"x": 1}'})
    """
    if not emulates_tools(params):
        return response
    text = response.text
    response.tool_calls, response.text = emulated_calls(text, chosen_tools(params)), ""
    response.raw = {**(response.raw or {}), "tool_output": text}
    if response.tool_calls and response.finish_reason == "stop":
        response.finish_reason = "tool_calls"
    return response
