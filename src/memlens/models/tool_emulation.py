"""Tool calls for backends without native tool calling (embedded, vLLM offline, transformers).

Decoding is constrained to the tool's parameter schema (one tool) or to
``{"name": <tool>, "arguments": <its parameters>}`` over all tools (several), and the output is
turned back into ``ToolCall`` objects. Output that does not parse is kept, never raised.
"""

from __future__ import annotations

import json

from memlens.errors import MemlensError
from memlens.models.base import ToolCall


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
