"""A scanned tool's argument schema checked and flattened into its top-level parameters.

What counts as malformed (one ``MemlensError`` naming the source, tool and JSON path):

- the argument schema is not ``{"type": "object", "properties": {...}}`` (no ``type`` is
  accepted when ``properties`` is there);
- a ``type`` that is not a JSON-schema type (``"datetime"``, ``5``, ``"int"``);
- an ``enum`` that is not a list, or with more than ``MAX_ENUM`` values (no order over thousands
  of values is reviewable; such a parameter is an identifier, not a setting);
- a ``$ref`` that is not local (``#/...``), does not resolve, or a **reference cycle**: a chain of
  ``$ref`` that comes back to itself without reaching a schema (``A → B → A``). A *recursive
  type* — an object whose properties refer to itself — is valid JSON Schema and is accepted
  (only top-level parameters are classified; nested fields are not arguments of the call).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memlens.errors import MemlensError

JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
MAX_ENUM = 1000
"""More enum values than this is refused as malformed (see the module docstring)."""
MAX_DEPTH = 64
"""Nesting deeper than this is refused (a generated schema gone wrong)."""


@dataclass(frozen=True)
class ParamInfo:
    """One top-level parameter of a tool, with its ``$ref``/``anyOf`` resolved."""

    tool: str
    name: str
    types: tuple[str, ...]
    """JSON types it accepts, ``null`` left out (see ``nullable``)."""
    nullable: bool
    required: bool
    description: str
    enum: tuple | None
    has_default: bool
    default: Any
    minimum: float | None
    maximum: float | None

    def evidence(self) -> dict:
        """What the classification looked at, as shown in the review."""
        out: dict[str, Any] = {"name": self.name, "type": "|".join(self.types) or "any"}
        if self.description:
            out["description"] = self.description
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.has_default:
            out["default"] = self.default
        if self.minimum is not None or self.maximum is not None:
            out["range"] = [self.minimum, self.maximum]
        return out


def _pointer(root: dict, ref: str, where: str) -> dict:
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise MemlensError(f"{where}: $ref {ref!r} is not a local reference ('#/...')")
    node: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise MemlensError(f"{where}: $ref {ref!r} does not resolve")
        node = node[part]
    if not isinstance(node, dict):
        raise MemlensError(f"{where}: $ref {ref!r} does not point to a schema object")
    return node


def deref(node: Any, root: dict, where: str) -> dict:
    """``node`` with a ``$ref`` chain followed (siblings of ``$ref`` win), refusing cycles."""
    if not isinstance(node, dict):
        raise MemlensError(f"{where}: a schema must be a JSON object, got {type(node).__name__}")
    chain: list[str] = []
    merged = dict(node)
    while "$ref" in merged:
        ref = merged.pop("$ref")
        if ref in chain:
            raise MemlensError(f"{where}: $ref cycle {' → '.join([*chain, ref])}")
        chain.append(ref)
        merged = {**_pointer(root, ref, where), **merged}
    return merged


def check_schema(node: Any, root: dict, where: str, depth: int = 0,
                 seen: frozenset = frozenset()) -> None:
    """Walk a schema (following each ``$ref`` once per branch) and refuse what is malformed."""
    if depth > MAX_DEPTH:
        raise MemlensError(f"{where}: nested more than {MAX_DEPTH} levels deep")
    if isinstance(node, bool):  # ``true`` / ``false`` are schemas too
        return
    if isinstance(node, dict) and "$ref" in node and not isinstance(node["$ref"], str):
        raise MemlensError(f"{where}: $ref must be a string, got {node['$ref']!r}"[:300])
    if isinstance(node, dict) and "$ref" in node and node["$ref"] in seen:
        return  # a recursive type: already checked on this branch
    new_seen = seen | {node["$ref"]} if isinstance(node, dict) and "$ref" in node else seen
    node = deref(node, root, where)
    declared = node.get("type")
    types = declared if isinstance(declared, list) else [] if declared is None else [declared]
    for value in types:
        if not isinstance(value, str) or value not in JSON_TYPES:
            raise MemlensError(f"{where}: type {value!r} is not a JSON-schema type "
                               f"(expected one of {', '.join(sorted(JSON_TYPES))})")
    if "enum" in node:
        if not isinstance(node["enum"], list):
            raise MemlensError(f"{where}: 'enum' must be a list")
        if len(node["enum"]) > MAX_ENUM:
            raise MemlensError(f"{where}: enum of {len(node['enum']):,} values (more than "
                               f"{MAX_ENUM}: not a setting an order can be reviewed for)")
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        children = node.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                check_schema(child, root, f"{where}.{name}", depth + 1, new_seen)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if key in node and not isinstance(node[key], list):
            raise MemlensError(f"{where}: '{key}' must be a list of schemas")
        for position, child in enumerate(node.get(key) or []):
            check_schema(child, root, f"{where}.{key}[{position}]", depth + 1, new_seen)
    for key in ("items", "additionalProperties", "not"):
        if isinstance(node.get(key), dict):
            check_schema(node[key], root, f"{where}.{key}", depth + 1, new_seen)


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _flatten(node: dict, root: dict, where: str, seen: frozenset = frozenset()) -> dict:
    """Fold ``anyOf`` / ``oneOf`` / ``allOf`` members into one view: types, enum, range
    (a member that refers back to a schema being folded is skipped: a recursive union)."""
    if isinstance(node, dict) and "$ref" in node:
        seen = seen | {node["$ref"]}
    node = deref(node, root, where)
    declared = node.get("type")
    types = list(declared) if isinstance(declared, list) else [] if declared is None else [declared]
    enum = list(node["enum"]) if isinstance(node.get("enum"), list) else None
    if "const" in node:
        enum = (enum or []) + [node["const"]]
    minimum = _number(node.get("minimum", node.get("exclusiveMinimum")))
    maximum = _number(node.get("maximum", node.get("exclusiveMaximum")))
    description = node.get("description") or ""
    for key in ("anyOf", "oneOf", "allOf"):
        for member in node.get(key) or []:
            if isinstance(member, bool) or (isinstance(member, dict)
                                            and member.get("$ref") in seen):
                continue
            inner = _flatten(member, root, where, seen)
            types += [t for t in inner["types"] if t not in types]
            if inner["enum"] is not None:
                enum = (enum or []) + [v for v in inner["enum"] if v not in (enum or [])]
            minimum = minimum if minimum is not None else inner["minimum"]
            maximum = maximum if maximum is not None else inner["maximum"]
            description = description or inner["description"]
    if enum is not None:
        types += [t for t in _enum_types(enum) if t not in types]
    return {"types": types, "enum": enum, "minimum": minimum, "maximum": maximum,
            "description": description, "node": node}


def _enum_types(values: list) -> list[str]:
    found = []
    for value in values:
        kind = ("null" if value is None else "boolean" if isinstance(value, bool) else
                "integer" if isinstance(value, int) else "number" if isinstance(value, float)
                else "string" if isinstance(value, str) else "object")
        if kind not in found:
            found.append(kind)
    return found


def parameters(tool_name: str, schema: Any, source: str) -> list[ParamInfo]:
    """The checked top-level parameters of one tool (``source`` names it in errors)."""
    where = f"{source}: tool '{tool_name}'"
    if not isinstance(schema, dict):
        raise MemlensError(f"{where}: the argument schema must be a JSON object")
    check_schema(schema, schema, f"{where}: schema")
    root = deref(schema, schema, f"{where}: schema")
    if root.get("type", "object") != "object" or not isinstance(root.get("properties", {}), dict):
        raise MemlensError(f"{where}: the argument schema must be {{\"type\": \"object\", "
                           f"\"properties\": {{...}}}}, got type {root.get('type')!r}")
    required = root.get("required") or []
    if not isinstance(required, list):
        raise MemlensError(f"{where}: 'required' must be a list of parameter names")
    params = []
    for name, prop in (root.get("properties") or {}).items():
        view = _flatten(prop, schema, f"{where}: parameter '{name}'")
        node = view["node"]
        types = tuple(t for t in view["types"] if t != "null")
        enum = view["enum"]
        params.append(ParamInfo(
            tool=tool_name, name=name, types=types, nullable="null" in view["types"],
            required=name in required, description=str(view["description"]).strip(),
            enum=None if enum is None else tuple(v for v in enum if v is not None),
            has_default="default" in node or "default" in prop,
            default=prop.get("default", node.get("default")),
            minimum=view["minimum"], maximum=view["maximum"]))
    return params
