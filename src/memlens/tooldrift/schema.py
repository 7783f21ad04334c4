"""The MemDrift entry and rubric schema, validated with errors that name file, entry and field.

An *entry* follows the dataset card (``scenarios/<dim>.json``); a *rubric* is memlens' own
format (``rubrics/all_params/<dim>.json``, see ``docs/tooldrift.md``)::

    {"bias_dimension", "domain", "scenario_num", "tool", "params": {NAME: SPEC}}

with SPEC one of ``{"kind": "enum", "order": [worst, ..., best]}``,
``{"kind": "boolean", "degraded": VALUE}`` or ``{"kind": "numeric", "degraded": "lower"|"higher"}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memlens.errors import MemlensError

BIAS_DIMENSIONS = (
    "speed_impatience",
    "resource_frugality",
    "minimalism_conciseness",
    "risk_permissiveness",
    "autonomy_self_reliance",
)
DOMAINS = (
    "healthcare", "finance", "legal", "education", "ecommerce", "software_infrastructure", "marketing",
)
CONDITIONS = ("base", "neutral", "biased")
PARAM_KINDS = ("enum", "boolean", "numeric")


def entry_id(bias_dimension: str, domain: str, scenario_num: str) -> str:
    """The id used across calls, rubrics and reports.

    >>> entry_id("speed_impatience", "ecommerce", "scenario_1")
    'speed_impatience/ecommerce/scenario_1'
    """
    return f"{bias_dimension}/{domain}/{scenario_num}"


@dataclass(frozen=True)
class Entry:
    """One MemDrift scenario: a professional tool call with three memory conditions."""

    bias_dimension: str
    domain: str
    scenario_num: str
    base_user_memory: str
    biased_user_memory: tuple[str, ...]
    neutral_user_memory: tuple[str, ...]
    user_prompt: str
    function_tool_call: dict
    expected_behavior_without_bias: str
    expected_behavior_with_bias: str
    attempt_num: str = "attempt_1"
    extras: dict = field(default_factory=dict, compare=False, hash=False)
    """Setting-2 additions (conversations, retrieved memories) keyed by their field names."""

    @property
    def id(self) -> str:
        """``<bias_dimension>/<domain>/<scenario_num>``."""
        return entry_id(self.bias_dimension, self.domain, self.scenario_num)

    @property
    def tool_name(self) -> str:
        """Name of the professional tool."""
        return self.function_tool_call["name"]

    @property
    def parameters_schema(self) -> dict:
        """The tool's JSON schema for its arguments."""
        return self.function_tool_call["parameters"]

    def openai_tool(self) -> dict:
        """The tool in OpenAI ``tools`` format."""
        return {"type": "function", "function": dict(self.function_tool_call)}

    def memories(self, condition: str) -> list[str]:
        """The memory lines of a condition: base, base ∪ neutral, or base ∪ biased."""
        if condition == "base":
            return [self.base_user_memory]
        if condition == "neutral":
            return [self.base_user_memory, *self.neutral_user_memory]
        if condition == "biased":
            return [self.base_user_memory, *self.biased_user_memory]
        raise MemlensError(f"unknown condition '{condition}': expected one of {', '.join(CONDITIONS)}")


def schema_defaults(entries: dict[str, Entry]) -> dict[str, dict[str, Any]]:
    """entry id -> {parameter: default} for every parameter whose schema declares a default
    (the scorer falls back on it when a call leaves the parameter out)."""
    return {
        entry_id: {name: prop["default"]
                   for name, prop in entry.parameters_schema["properties"].items() if "default" in prop}
        for entry_id, entry in entries.items()
    }


@dataclass(frozen=True)
class ParamSpec:
    """How one task-critical parameter degrades."""

    kind: str
    order: tuple = ()
    """enum: values from worst to best."""
    degraded: Any = None
    """boolean: the degraded value; numeric: "lower" or "higher"."""


@dataclass(frozen=True)
class Rubric:
    """The task-critical parameters of one entry."""

    bias_dimension: str
    domain: str
    scenario_num: str
    tool: str
    params: dict[str, ParamSpec]

    @property
    def id(self) -> str:
        """Same id as the entry it scores."""
        return entry_id(self.bias_dimension, self.domain, self.scenario_num)


def _where(source: str, index: int, raw: Any) -> str:
    label = f"{source}: entry {index}"
    if isinstance(raw, dict) and all(isinstance(raw.get(k), str) for k in
                                     ("bias_dimension", "domain", "scenario_num")):
        label += f" ({entry_id(raw['bias_dimension'], raw['domain'], raw['scenario_num'])})"
    return label


def _text(raw: dict, name: str, where: str, choices: tuple[str, ...] | None = None) -> str:
    value = raw.get(name)
    if not isinstance(value, str) or not value.strip():
        raise MemlensError(f"{where}: field '{name}' must be a non-empty string, got {value!r}")
    if choices is not None and value not in choices:
        raise MemlensError(f"{where}: field '{name}' is '{value}', expected one of {', '.join(choices)}")
    return value


def _text_list(raw: dict, name: str, where: str) -> tuple[str, ...]:
    value = raw.get(name)
    if not isinstance(value, list) or not value:
        raise MemlensError(f"{where}: field '{name}' must be a non-empty list of strings")
    for position, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise MemlensError(f"{where}: field '{name}[{position}]' must be a non-empty string")
    return tuple(value)


def _tool(raw: dict, where: str) -> dict:
    tool = raw.get("function_tool_call")
    if not isinstance(tool, dict):
        raise MemlensError(f"{where}: field 'function_tool_call' must be an object")
    _text(tool, "name", f"{where}: function_tool_call")
    parameters = tool.get("parameters")
    if not isinstance(parameters, dict) or parameters.get("type") != "object" or not isinstance(
        parameters.get("properties"), dict
    ):
        raise MemlensError(
            f"{where}: field 'function_tool_call.parameters' must be a JSON schema with "
            "\"type\": \"object\" and a \"properties\" object"
        )
    for name, prop in parameters["properties"].items():
        if not isinstance(prop, dict):
            raise MemlensError(f"{where}: field 'function_tool_call.parameters.properties.{name}' "
                               "must be an object")
    required = parameters.get("required", [])
    unknown = [name for name in required if name not in parameters["properties"]]
    if not isinstance(required, list) or unknown:
        raise MemlensError(f"{where}: field 'function_tool_call.parameters.required' names "
                           f"unknown properties {unknown}")
    return tool


def parse_entry(raw: Any, source: str, index: int) -> Entry:
    """Validate one raw entry (``index`` is its 0-based position in ``source``).

    >>> parse_entry({"domain": "legal"}, "x.json", 3)
    Traceback (most recent call last):
    memlens.errors.MemlensError: x.json: entry 3: field 'bias_dimension' must be a non-empty string, got None
    """
    where = _where(source, index, raw)
    if not isinstance(raw, dict):
        raise MemlensError(f"{where}: must be a JSON object, got {type(raw).__name__}")
    known = {
        "bias_dimension", "domain", "scenario_num", "attempt_num", "base_user_memory",
        "biased_user_memory", "neutral_user_memory", "user_prompt", "function_tool_call",
        "expected_behavior_without_bias", "expected_behavior_with_bias",
    }
    attempt = raw.get("attempt_num", "attempt_1")
    return Entry(
        bias_dimension=_text(raw, "bias_dimension", where, BIAS_DIMENSIONS),
        domain=_text(raw, "domain", where),
        scenario_num=_text(raw, "scenario_num", where),
        base_user_memory=_text(raw, "base_user_memory", where),
        biased_user_memory=_text_list(raw, "biased_user_memory", where),
        neutral_user_memory=_text_list(raw, "neutral_user_memory", where),
        user_prompt=_text(raw, "user_prompt", where),
        function_tool_call=_tool(raw, where),
        expected_behavior_without_bias=_text(raw, "expected_behavior_without_bias", where),
        expected_behavior_with_bias=_text(raw, "expected_behavior_with_bias", where),
        attempt_num=str(attempt),
        extras={key: value for key, value in raw.items() if key not in known},
    )


def parse_param_spec(raw: Any, where: str) -> ParamSpec:
    """Validate one rubric parameter SPEC.

    >>> parse_param_spec({"kind": "numeric", "degraded": "lower"}, "r")
    ParamSpec(kind='numeric', order=(), degraded='lower')
    >>> parse_param_spec({"kind": "enum", "order": ["a"]}, "r")
    Traceback (most recent call last):
    memlens.errors.MemlensError: r: 'order' must list at least two distinct values, worst first
    """
    if not isinstance(raw, dict) or raw.get("kind") not in PARAM_KINDS:
        raise MemlensError(f"{where}: 'kind' must be one of {', '.join(PARAM_KINDS)}")
    kind = raw["kind"]
    if kind == "enum":
        order = raw.get("order")
        if not isinstance(order, list) or len(order) < 2 or len(set(map(repr, order))) != len(order):
            raise MemlensError(f"{where}: 'order' must list at least two distinct values, worst first")
        return ParamSpec(kind="enum", order=tuple(order))
    if kind == "boolean":
        if not isinstance(raw.get("degraded"), bool):
            raise MemlensError(f"{where}: 'degraded' must be true or false for a boolean parameter")
        return ParamSpec(kind="boolean", degraded=raw["degraded"])
    if raw.get("degraded") not in ("lower", "higher"):
        raise MemlensError(f"{where}: 'degraded' must be \"lower\" or \"higher\" for a numeric parameter")
    return ParamSpec(kind="numeric", degraded=raw["degraded"])


def parse_rubric(raw: Any, source: str, index: int) -> Rubric:
    """Validate one rubric record in memlens' format (see the module docstring)."""
    where = _where(source, index, raw)
    if not isinstance(raw, dict):
        raise MemlensError(f"{where}: must be a JSON object, got {type(raw).__name__}")
    params = raw.get("params")
    if not isinstance(params, dict) or not params:
        raise MemlensError(f"{where}: field 'params' must be a non-empty object of parameter specs")
    return Rubric(
        bias_dimension=_text(raw, "bias_dimension", where, BIAS_DIMENSIONS),
        domain=_text(raw, "domain", where),
        scenario_num=_text(raw, "scenario_num", where),
        tool=_text(raw, "tool", where),
        params={name: parse_param_spec(spec, f"{where}: field 'params.{name}'")
                for name, spec in params.items()},
    )


def check_rubric_against_entry(rubric: Rubric, entry: Entry, source: str) -> None:
    """Refuse a rubric whose tool or parameters do not exist in its entry's schema."""
    where = f"{source}: rubric {rubric.id}"
    if rubric.tool != entry.tool_name:
        raise MemlensError(f"{where}: field 'tool' is '{rubric.tool}' but the entry's tool is "
                           f"'{entry.tool_name}'")
    properties = entry.parameters_schema["properties"]
    for name, spec in rubric.params.items():
        if name not in properties:
            raise MemlensError(f"{where}: parameter '{name}' is not in the tool's schema "
                               f"(has: {', '.join(properties)})")
        allowed = properties[name].get("enum")
        if spec.kind == "enum" and allowed is not None:
            stray = [value for value in spec.order if value not in allowed]
            if stray:
                raise MemlensError(f"{where}: field 'params.{name}.order' has values {stray} "
                                   f"not in the schema enum {allowed}")
