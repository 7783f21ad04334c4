"""memlens's tool-drift design (MemDrift, Setting 1) as inspect samples: one ``Sample`` per
(entry, memory condition, call k), built with memlens's own tool-drift code
(``memlens.tooldrift.runner``: ``select_entries``, ``build_messages``; seeds ``seed + k``).

Each sample's metadata carries the entry's tool (OpenAI function format) and the sampling
settings, so the solver offers exactly that tool and forces it as ``memlens tooldrift run``
does (``--tool-choice entry``).
"""

from __future__ import annotations

from memlens.inspect_ext.dataset import chat_messages
from memlens.rowkeys import join_key
from memlens.tooldrift.schema import CONDITIONS


def tooldrift_samples(config, dataset) -> list:
    """Every call of a Setting-1 tool-drift run as an inspect ``Sample`` (id
    ``entry|condition|k``); ``config`` is a ``memlens.tooldrift.runner.RunConfig``."""
    from inspect_ai.dataset import Sample

    from memlens.tooldrift.runner import (  # lazy: pulls scipy
        ENTRY_TOOL,
        build_messages,
        check_tool_choice,
        select_entries,
    )

    entries = select_entries(dataset, config.limit)
    check_tool_choice(config.tool_choice, entries)
    samples = []
    for entry in entries:
        for condition in CONDITIONS:
            messages = build_messages(entry, entry.memories(condition), constrained=False)
            choice = entry.tool_name if config.tool_choice == ENTRY_TOOL else config.tool_choice
            for k in range(config.k):
                samples.append(Sample(
                    id=join_key(entry.id, condition, k), input=chat_messages(messages),
                    metadata={"entry_id": entry.id, "condition": condition, "k": k,
                              "tool": dict(entry.function_tool_call), "tool_choice": choice,
                              "generation": {"seed": config.seed + k,
                                             "temperature": config.temperature,
                                             "max_tokens": config.max_tokens}}))
    return samples
