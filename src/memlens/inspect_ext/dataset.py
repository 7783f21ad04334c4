"""memlens's audit design as inspect samples: one ``Sample`` per generation cell.

The cells and their chat requests come from memlens's own design code
(``memlens.audit.pipeline.plan_cells``: questions × memory conditions × K no-memory baselines ×
samples, the control set and memory sets when configured; ``memlens.audit.generate.build_request``:
the injection mode or memory template, the derived per-cell seed and the sampling parameters), so
an inspect run sends exactly the messages and parameters ``memlens audit`` sends.
"""

from __future__ import annotations

from memlens.audit.config import AuditConfig
from memlens.audit.generate import build_request
from memlens.audit.pipeline import plan_cells

SAMPLE_KEYS = ("question_id", "stimulus_id", "condition_class", "category", "sample")
"""Cell fields copied into every sample's metadata (besides ``cell_id`` and ``generation``)."""


def chat_messages(messages):
    """memlens chat messages (``{"role", "content"}`` dicts) as inspect ``ChatMessage`` objects."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser,
             "assistant": ChatMessageAssistant}
    return [kinds[message["role"]](content=message["content"]) for message in messages]


def generation_metadata(request) -> dict:
    """The sampling settings of one memlens ``ChatRequest`` (what the solver sends)."""
    params = request.params
    return {"seed": params.seed, "temperature": params.temperature, "top_p": params.top_p,
            "top_k": params.top_k, "max_tokens": params.max_tokens}


def audit_samples(config: AuditConfig) -> tuple[list, dict]:
    """Every cell of the audit as an inspect ``Sample`` (id = the cell id), and the inputs entry
    of memlens's manifest (counts and content hashes of questions, stimuli and ontology)."""
    from inspect_ai.dataset import Sample

    cells, inputs = plan_cells(config)
    samples = []
    for cell in cells:
        request = build_request(cell, config)
        samples.append(Sample(
            id=cell.id, input=chat_messages(request.messages),
            metadata={"cell_id": cell.id, "question_id": cell.question.id,
                      "stimulus_id": cell.stimulus.id,
                      "condition_class": cell.stimulus.stimulus_class,
                      "category": cell.stimulus.category, "sample": cell.sample,
                      "generation": generation_metadata(request)}))
    return samples, inputs
