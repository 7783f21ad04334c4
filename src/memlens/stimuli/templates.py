"""Memory templates: render memory exactly as a product does, from a YAML (or JSON) file.

A template is data, never code: a validated mapping whose strings may hold a fixed set of
``{field}`` placeholders (``str.format`` syntax, ``{{`` / ``}}`` for literal braces). Anything
else — an unknown field, attribute or index access (``{memory.x}``, ``{memory[0]}``), a format
spec or conversion (``{memory:>10}``, ``{memory!r}``) — is refused when the file is read. The
text is assembled from the parsed pieces, so no ``format`` machinery ever runs on user input.

Parts of a template (all optional but ``name``)::

    name: saved-memories
    description: ChatGPT-style "saved memories" block in the system prompt
    system: "Saved memories:\\n{memory_list}"   # system message ('' = none)
    turns:                                    # earlier turns, before the question
      - {role: user, content: "..."}
      - {role: assistant, content: "..."}
      - {role: tool, tool_name: lookup_profile, content: "{memory_json}"}   # a tool result
    user: "{question}"                        # the final user turn (must hold {question})
    item: "- {fact}"                          # one line of {memory_list}

Fields: ``question`` (the question prompt), ``memory`` (the memory facts, one per line),
``memory_prefix`` (``memory`` plus a newline, or nothing without memory: the paper's prefix),
``memory_list`` (each fact rendered by ``item``, one per line; without memory one empty item, so
the block keeps its shape), ``memory_json`` (the facts as a JSON array of strings). ``item``
takes only ``{fact}``. Every template must use at least one memory field.

**Matched scaffolding.** Every condition, the no-memory control included, is rendered by the
same template; only the facts differ (none for the control). ``config.system_prompt`` comes
first in the system message, separated from the template's system text by a blank line.

A ``tool`` turn becomes the OpenAI pair: an assistant message calling ``tool_name`` (id
``call_memory_<n>``, arguments ``{}``) and the ``tool`` message answering it.

Bundled templates (``memlens/data/templates/``): ``prefix``, ``system``, ``history`` (the three
injection modes, rendering exactly as :func:`memlens.stimuli.inject`), ``saved-memories`` (a
bulleted "saved memories" block) and ``json-profile`` (a JSON user-profile object).
"""

from __future__ import annotations

import hashlib
import json
import string
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memlens.errors import MemlensError
from memlens.jsonl import parse_document, read_text

MEMORY_FIELDS = ("memory", "memory_prefix", "memory_list", "memory_json")
FIELDS = ("question", *MEMORY_FIELDS)
ITEM_FIELDS = ("fact",)
BUNDLED = ("prefix", "system", "history", "saved-memories", "json-profile")
"""Names of the bundled templates."""


class Turn(BaseModel):
    """One earlier turn of a template."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["user", "assistant", "tool"]
    content: str = Field(max_length=20_000)
    tool_name: str | None = Field(default=None, min_length=1, max_length=64,
                                  pattern=r"^[A-Za-z0-9_-]+$")


class TemplateSpec(BaseModel):
    """The validated content of a template file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=100)
    description: str = Field(default="", max_length=2000)
    system: str = Field(default="", max_length=20_000)
    turns: tuple[Turn, ...] = Field(default=(), max_length=50)
    user: str = Field(default="{question}", max_length=20_000)
    item: str = Field(default="- {fact}", max_length=2000)


Piece = tuple[str, str | None]  # (literal text, field name or None)


def parse_placeholders(text: str, allowed: tuple[str, ...], where: str) -> tuple[Piece, ...]:
    """Split ``text`` into (literal, field) pieces; MemlensError for anything but a bare
    allowed field.

    >>> parse_placeholders("Hi {question}!", FIELDS, "t")
    (('Hi ', 'question'), ('!', None))
    >>> parse_placeholders("{memory.__class__}", FIELDS, "t.yaml: user")
    Traceback (most recent call last):
    ...
    memlens.errors.MemlensError: t.yaml: user: placeholder '{memory.__class__}' is not allowed (fields: {question}, {memory}, {memory_prefix}, {memory_list}, {memory_json}; write {{ and }} for literal braces)
    """
    pieces: list[Piece] = []
    fields = ", ".join("{" + name + "}" for name in allowed)
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as error:
        raise MemlensError(f"{where}: malformed placeholder ({error}; write {{{{ and }}}} for "
                           "literal braces)") from None
    for literal, name, spec, conversion in parsed:
        if name is None:
            pieces.append((literal, None))
            continue
        if name not in allowed or spec or conversion:
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (
                f":{spec}" if spec else "") + "}"
            raise MemlensError(f"{where}: placeholder {shown!r} is not allowed (fields: {fields}; "
                               "write {{ and }} for literal braces)")
        pieces.append((literal, name))
    return tuple(pieces)


def _fill(pieces: tuple[Piece, ...], values: dict[str, str]) -> str:
    return "".join(literal + (values[name] if name else "") for literal, name in pieces)


@dataclass(frozen=True)
class MessageTemplate:
    """A parsed, validated memory template; :meth:`render` gives the chat messages."""

    spec: TemplateSpec
    source: str
    """Where it came from (``bundled:NAME`` or the file path)."""
    sha256: str
    """Hash of the validated content (recorded in the run manifest)."""
    _system: tuple[Piece, ...]
    _turns: tuple[tuple[Turn, tuple[Piece, ...]], ...]
    _user: tuple[Piece, ...]
    _item: tuple[Piece, ...]

    @property
    def name(self) -> str:
        """The template's ``name``."""
        return self.spec.name

    def render(self, question: str, facts: list[str] | tuple[str, ...],
               system_prompt: str | None = None) -> list[dict]:
        """Chat messages asking ``question`` with ``facts`` in memory (none: the control).

        >>> t = load_template("saved-memories")
        >>> t.render("Tea?", ["I am 72."])[0]["content"].splitlines()[-1]
        '- I am 72.'
        """
        values = memory_values(question, facts, self._item)
        system = _fill(self._system, values)
        system = "\n\n".join(part for part in (system_prompt or "", system) if part)
        messages: list[dict] = [{"role": "system", "content": system}] if system else []
        for index, (turn, pieces) in enumerate(self._turns):
            content = _fill(pieces, values)
            if turn.role != "tool":
                messages.append({"role": turn.role, "content": content})
                continue
            call_id = f"call_memory_{index}"
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": turn.tool_name, "arguments": "{}"}}]})
            messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
        messages.append({"role": "user", "content": _fill(self._user, values)})
        return messages


def memory_values(question: str, facts, item: tuple[Piece, ...]) -> dict[str, str]:
    """The field values for one rendering (see the module docstring)."""
    facts = [str(fact) for fact in facts]
    memory = "\n".join(facts)
    return {
        "question": question,
        "memory": memory,
        "memory_prefix": f"{memory}\n" if facts else "",
        "memory_list": "\n".join(_fill(item, {"fact": fact}) for fact in (facts or [""])),
        "memory_json": json.dumps(facts, ensure_ascii=False),
    }


def build_template(data: object, source: str) -> MessageTemplate:
    """Validate a parsed template document; MemlensError naming ``source`` and the field."""
    if not isinstance(data, dict):
        raise MemlensError(f"{source}: a memory template must be a mapping, got "
                           f"{type(data).__name__}")
    try:
        spec = TemplateSpec(**{str(key): value for key, value in data.items()})
    except ValidationError as error:
        problems = []
        for item in error.errors():
            where = ".".join(str(p) for p in item["loc"]) or "(top level)"
            if item["type"] == "extra_forbidden":
                problems.append(f"unknown key {where!r} (valid keys: "
                                f"{', '.join(TemplateSpec.model_fields)})")
            else:
                problems.append(f"field {where!r}: {' '.join(str(item['msg']).split())}")
        raise MemlensError(f"{source}: " + "; ".join(problems)) from None
    system = parse_placeholders(spec.system, FIELDS, f"{source}: system")
    user = parse_placeholders(spec.user, FIELDS, f"{source}: user")
    item = parse_placeholders(spec.item, ITEM_FIELDS, f"{source}: item")
    turns = []
    for index, turn in enumerate(spec.turns):
        where = f"{source}: turns.{index}"
        if (turn.role == "tool") != (turn.tool_name is not None):
            raise MemlensError(f"{where}: 'tool_name' is required for role tool and only for it")
        turns.append((turn, parse_placeholders(turn.content, FIELDS, f"{where}.content")))
    elsewhere = {name for pieces in (system, *(p for _, p in turns)) for _, name in pieces}
    used = elsewhere | {name for _, name in user}
    if [name for _, name in user].count("question") != 1:
        raise MemlensError(f"{source}: user: must hold {{question}} exactly once")
    if "question" in elsewhere or not used & set(MEMORY_FIELDS):
        raise MemlensError(f"{source}: {{question}} belongs in 'user' only, and the template "
                           f"must place the memory with one of "
                           f"{', '.join('{' + f + '}' for f in MEMORY_FIELDS)}")
    digest = hashlib.sha256(spec.model_dump_json().encode()).hexdigest()
    return MessageTemplate(spec, source, digest, system, tuple(turns), user, item)


def load_template(name_or_path: str | Path) -> MessageTemplate:
    """A bundled template by name (:data:`BUNDLED`) or a template file (``.yaml`` / ``.yml`` /
    ``.json``), validated.

    >>> load_template("json-profile").name
    'json-profile'
    >>> load_template("nope")
    Traceback (most recent call last):
    ...
    memlens.errors.MemlensError: memory template 'nope': neither a bundled template (prefix, system, history, saved-memories, json-profile) nor an existing file
    """
    spec = str(name_or_path)
    if spec in BUNDLED:
        text = resources.files("memlens").joinpath(f"data/templates/{spec}.yaml").read_text(
            encoding="utf-8")
        return _parsed(text, f"bundled:{spec}", True)
    path = Path(spec)
    if not path.is_file():
        raise MemlensError(f"memory template {spec!r}: neither a bundled template "
                           f"({', '.join(BUNDLED)}) nor an existing file")

    text = read_text(path, "memory template")
    return _parsed(text, str(path), path.suffix.lower() in (".yaml", ".yml"))


@lru_cache(maxsize=32)
def _parsed(text: str, source: str, yaml_syntax: bool) -> MessageTemplate:
    data = parse_document(text, source, yaml_syntax, problem="malformed memory template")
    return build_template(data, source)


def stimulus_facts(stimulus) -> list[str]:
    """The memory facts of a stimulus: a memory set's ``facts``, else its text as one fact
    (none for the empty no-memory control; whitespace noise stays a fact, verbatim).

    >>> from memlens.stimuli import Stimulus
    >>> stimulus_facts(Stimulus("c", "control", "no_perturbation", "")), stimulus_facts("I'm 72.")
    ([], ["I'm 72."])
    """
    facts = getattr(stimulus, "facts", None)
    if facts is not None:
        return [str(fact) for fact in facts]
    text = getattr(stimulus, "text", stimulus)
    return [text] if text else []
