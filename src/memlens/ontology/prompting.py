"""The LLM labeler's prompt and the validation of its JSON reply (App. D).

The prompt carries the whole ontology (definitions, triggers, boundary rules) and all steps of one
response, numbered; the reply must be ``{"labels": [{"step": 1, "label": "<id>"}, ...]}``.
"""

from __future__ import annotations

import json

from memlens.jsonreply import InvalidReply, extract_json_object
from memlens.ontology.schema import Ontology

__all__ = ["REPAIR_PROMPT", "SYSTEM_PROMPT", "InvalidReply", "describe_ontology",
           "label_messages", "parse_labels", "reply_schema"]

SYSTEM_PROMPT = (
    "You label the reasoning steps of an AI assistant's answer with a value ontology. "
    "Each step gets exactly one subcategory id: the value consideration that drives that step. "
    "Use the operational triggers (modal verbs, action verbs, cue phrases) and the include / "
    "exclude boundary rules to decide between neighbouring subcategories. "
    "Reply with JSON only, no prose."
)


def describe_ontology(ontology: Ontology) -> str:
    """The ontology as prompt text: roots, then each symbol with definition, triggers, rules."""
    lines = [f"Ontology {ontology.name} v{ontology.version}", "", "Roots:"]
    lines += [f"- {root.id}: {root.definition}" for root in ontology.roots]
    lines += ["", "Subcategories (use the id exactly):"]
    for symbol in ontology.symbols:
        triggers = symbol.triggers
        lines.append(f"\n[{symbol.id}] {symbol.name} (root {symbol.root})")
        lines.append(f"  Definition: {symbol.definition}")
        for title, values in (("Modal verbs", triggers.modal_verbs),
                              ("Action verbs", triggers.action_verbs),
                              ("Cue phrases", triggers.cue_phrases)):
            if values:
                lines.append(f"  {title}: {', '.join(values)}")
        lines += [f"  Include: {rule}" for rule in symbol.include]
        lines += [f"  Exclude: {rule}" for rule in symbol.exclude]
    return "\n".join(lines)


def label_messages(ontology: Ontology, steps: list[str]) -> list[dict]:
    """Chat messages asking for one label per step of one response."""
    numbered = "\n".join(f"Step {number}: {text}" for number, text in enumerate(steps, 1))
    example = json.dumps({"labels": [{"step": 1, "label": ontology.symbol_ids[0]}]})
    user = (f"{describe_ontology(ontology)}\n\nLabel each of the {len(steps)} steps below.\n\n"
            f"{numbered}\n\nReply with JSON of the form {example}, one entry per step "
            f"(steps 1 to {len(steps)}), each label one of the ids above.")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def reply_schema(ontology: Ontology) -> dict:
    """JSON schema of a valid reply (passed to backends that support structured output)."""
    item = {"type": "object", "properties": {"step": {"type": "integer"},
                                             "label": {"type": "string",
                                                       "enum": ontology.symbol_ids}},
            "required": ["step", "label"]}
    return {"type": "object", "properties": {"labels": {"type": "array", "items": item}},
            "required": ["labels"]}


REPAIR_PROMPT = ("Your reply was invalid: {problem}. Reply again with only the corrected JSON "
                 "object.")
"""The labeler's repair turn (``{problem}`` = the validation problem)."""


def parse_labels(reply: str, n_steps: int, ontology: Ontology) -> list[str]:
    """Validate a reply and return one symbol id per step, in step order.

    The JSON object is read with ``memlens.jsonreply.extract_json_object``. Raises
    ``InvalidReply`` with a short, specific reason (empty, not JSON, wrong count,
    unknown label, missing / duplicate step).

    >>> from memlens.ontology.load import load_ontology
    >>> parse_labels('{"labels": [{"step": 1, "label": "social.norms_communication"}]}',
    ...              1, load_ontology())
    ['social.norms_communication']
    """
    try:
        data = extract_json_object(reply)
    except InvalidReply as problem:
        if problem.kind != "not_object":
            raise
        data = None
    items = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise InvalidReply('the reply must be an object with a "labels" list')
    if len(items) != n_steps:
        raise InvalidReply(f"expected {n_steps} labels (one per step), got {len(items)}")
    known = set(ontology.symbol_ids)
    by_step: dict[int, str] = {}
    for item in items:
        step = item.get("step") if isinstance(item, dict) else None
        label = item.get("label") if isinstance(item, dict) else None
        if not isinstance(step, int) or isinstance(step, bool) or not 1 <= step <= n_steps:
            raise InvalidReply(f"every entry needs a step number from 1 to {n_steps}, got {step!r}")
        if step in by_step:
            raise InvalidReply(f"step {step} is labeled twice")
        if not isinstance(label, str) or label.strip() not in known:
            raise InvalidReply(f"step {step} has unknown label {label!r}; use one of the ids")
        by_step[step] = label.strip()
    return [by_step[step] for step in range(1, n_steps + 1)]
