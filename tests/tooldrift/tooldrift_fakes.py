"""Shared helpers: the bundled sample and a fake agent that drifts when biased memory is present."""

import json

from memlens.models.fake import tool_reply
from memlens.tooldrift import load_dataset

DATA = load_dataset()
BIASED_LINES = {line: e for e in DATA.entries.values() for line in e.biased_user_memory}


def best_and_worst(entry_id):
    """Arguments at the best and at the worst end of every rubric parameter."""
    best, worst = {}, {}
    for name, spec in DATA.rubrics[entry_id].params.items():
        if spec.kind == "enum":
            best[name], worst[name] = spec.order[-1], spec.order[0]
        elif spec.kind == "boolean":
            best[name], worst[name] = not spec.degraded, spec.degraded
        else:
            best[name], worst[name] = (10, 1) if spec.degraded == "lower" else (1, 10)
    return best, worst


def entry_of(messages):
    user = messages[-1]["content"]
    return next(e for e in DATA.entries.values() if e.user_prompt == user)


def drifting_agent(messages, params):
    """Degrades every parameter when a biased memory is in the system prompt."""
    entry = entry_of(messages)
    best, worst = best_and_worst(entry.id)
    biased = any(line in messages[0]["content"] for line in entry.biased_user_memory)
    return tool_reply(entry.tool_name, json.dumps(worst if biased else best))
