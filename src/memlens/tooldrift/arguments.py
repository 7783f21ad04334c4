"""Turn one model reply into a CALLS row: ok / no_call / invalid, plus schema violations.

Model output is untrusted: nothing here raises on garbage, everything is recorded.
"""

from __future__ import annotations

from typing import Any

from memlens.jsonreply import InvalidReply, extract_json_object
from memlens.models.base import ChatResponse, ModelCallError
from memlens.rowkeys import join_key
from memlens.tooldrift.schema import Entry

_TYPES = {"string": str, "boolean": bool, "object": dict, "array": list}


def _type_ok(value: Any, expected: str) -> bool:
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if expected == "null":
        return value is None
    return isinstance(value, _TYPES.get(expected, object))


def schema_violations(arguments: dict, schema: dict) -> list[str]:
    """Violations of the tool's parameter schema (required, type, enum, minimum, maximum,
    unknown names) — a small subset of JSON Schema, enough for flat tool signatures.

    >>> schema = {"type": "object", "required": ["mode"], "properties": {
    ...     "mode": {"type": "string", "enum": ["a", "b"]}, "n": {"type": "integer", "minimum": 0}}}
    >>> schema_violations({"n": -1, "extra": 1}, schema)
    ["missing required 'mode'", "'n': -1 is below minimum 0", "unknown parameter 'extra'"]
    """
    problems = [f"missing required '{name}'" for name in schema.get("required", [])
                if name not in arguments]
    properties = schema.get("properties", {})
    for name, value in arguments.items():
        prop = properties.get(name)
        if prop is None:
            problems.append(f"unknown parameter '{name}'")
            continue
        expected = prop.get("type")
        types = expected if isinstance(expected, list) else [expected] if expected else []
        if types and not any(_type_ok(value, t) for t in types):
            problems.append(f"'{name}': {value!r} is not of type {expected}")
            continue
        if "enum" in prop and value not in prop["enum"]:
            problems.append(f"'{name}': {value!r} is not one of {prop['enum']}")
        if "minimum" in prop and _type_ok(value, "number") and value < prop["minimum"]:
            problems.append(f"'{name}': {value!r} is below minimum {prop['minimum']}")
        if "maximum" in prop and _type_ok(value, "number") and value > prop["maximum"]:
            problems.append(f"'{name}': {value!r} is above maximum {prop['maximum']}")
    return problems


def parse_json_arguments(text: str) -> tuple[dict | None, str | None]:
    """Arguments from JSON text (``memlens.jsonreply.extract_json_object``: code fences and
    prose around the object tolerated); (None, reason) when unusable.

    >>> parse_json_arguments('```json\\n{"a": 1}\\n```')
    ({'a': 1}, None)
    >>> parse_json_arguments('{"a": ')
    (None, 'the reply is not valid JSON (Expecting value at char 6)')
    """
    try:
        return extract_json_object(text), None
    except InvalidReply as problem:
        return None, str(problem)


def call_row(entry: Entry, condition: str, k: int, reply: ChatResponse | ModelCallError,
             constrained: bool) -> dict:
    """The CALLS row for one reply. ``constrained`` = the arguments came as JSON text (backend
    without native tools) rather than as a tool call."""
    row: dict[str, Any] = {"id": join_key(entry.id, condition, k), "entry_id": entry.id,
                           "condition": condition, "k": k, "arguments": None}
    if isinstance(reply, ModelCallError):
        return {**row, "status": "failed", "error": reply.reason}
    row["text"] = reply.text
    emulation = (reply.raw or {}).get("tool_emulation") if isinstance(reply.raw, dict) else None
    row["call_path"] = "json_schema" if constrained else (
        f"tools+{emulation}" if emulation else "tools")
    if reply.tool_calls:
        call = reply.tool_calls[0]
        if call.name != entry.tool_name:
            return {**row, "status": "invalid", "error": f"called unknown tool '{call.name}'",
                    "raw_arguments": call.arguments_json}
        arguments, reason = parse_json_arguments(call.arguments_json)
        if arguments is None:
            return {**row, "status": "invalid", "error": reason,
                    "raw_arguments": call.arguments_json}
    elif constrained and reply.text.strip():
        arguments, reason = parse_json_arguments(reply.text)
        if arguments is None:
            return {**row, "status": "invalid", "error": reason}
    else:
        return {**row, "status": "no_call"}
    return {**row, "status": "ok", "arguments": arguments,
            "violations": schema_violations(arguments, entry.parameters_schema)}
