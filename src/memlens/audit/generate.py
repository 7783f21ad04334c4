"""Generation and step stages: cells -> chat requests -> responses -> steps (stage ``audit_steps``).

A cell whose steps row exists (and whose call did not fail) is done. Failed calls are stored as
``failed_call`` rows and retried by the next run (the engine never caches a failure).
"""

from __future__ import annotations

from memlens.audit.config import AuditConfig
from memlens.audit.design import Cell, sample_seed

STEPS_TABLE = "audit_steps"


def question_prompt(question_text: str, config: AuditConfig) -> str:
    """The user-visible question, with the tagged-steps instruction appended when asked for."""
    if not config.reasoning_instruction:
        return question_text
    from memlens.steps import REASONING_INSTRUCTION

    return f"{question_text}\n\n{REASONING_INSTRUCTION}"


def build_request(cell: Cell, config: AuditConfig):
    """The ``ChatRequest`` of one cell: injected memory, sampling params, derived seed."""
    from memlens.models import ChatRequest, GenerationParams
    from memlens.stimuli import MemoryTemplate, inject

    template = MemoryTemplate(header=config.memory_header, history_prefix=config.history_prefix,
                              acknowledgement=config.acknowledgement)
    messages = inject(question_prompt(cell.question.text, config), cell.stimulus,
                      mode=config.mode, system_prompt=config.system_prompt, template=template)
    params = GenerationParams(
        temperature=config.temperature, top_p=config.top_p, top_k=config.top_k,
        max_tokens=config.max_tokens,
        seed=sample_seed(config.seed, cell.question.id, cell.stimulus.id, cell.sample),
    )
    return ChatRequest(messages=tuple(messages), params=params, sample_index=cell.sample,
                       tag=f"audit/{cell.id}")


def pending_cells(cells: list[Cell], store) -> list[Cell]:
    """Cells without a stored steps row, or whose stored call failed (retried)."""
    done = {row["id"] for row in store.rows(STEPS_TABLE) if row.get("status") != "failed_call"}
    return [cell for cell in cells if cell.id not in done]


def steps_row(cell: Cell, result) -> dict:
    """One ``audit_steps`` row from a response or a ``ModelCallError``."""
    from memlens.models import ModelCallError
    from memlens.steps import split_steps

    row = {
        "id": cell.id, "question_id": cell.question.id, "stimulus_id": cell.stimulus.id,
        "condition_class": cell.stimulus.stimulus_class, "category": cell.stimulus.category,
        "sample": cell.sample, "question_text": cell.question.text,
        "stimulus_text": cell.stimulus.text,
    }
    if isinstance(result, ModelCallError):
        return {**row, "status": "failed_call", "reason": str(result.reason), "method": "none",
                "steps": [], "text_chars": 0, "completion_tokens": 0}
    split = split_steps(result.text or "")
    steps = [step.text for step in split.steps]
    return {
        **row, "status": "ok" if steps else "no_steps", "reason": "", "method": split.method,
        # the full text stays in the request cache only (a 10 MB reply was stored 4 times)
        "steps": steps, "text_chars": len(result.text or ""),
        "completion_tokens": result.completion_tokens,
        "finish_reason": result.finish_reason,
    }


def run_generation(cells: list[Cell], config: AuditConfig, store, make_model, *,
                   progress: bool = True, chunk: int = 256) -> dict[str, int]:
    """Generate every pending cell and store its steps; returns call / failure counts.

    ``make_model()`` returns the backend; it is called only when some cell is pending, so a
    finished audit loads no model.

    Requests go through ``memlens.engine.run_requests`` in chunks, so each response is cached
    the moment it arrives and each finished chunk's steps are stored before the next starts.
    """
    from memlens.engine import run_requests

    todo = pending_cells(cells, store)
    counts = {"cells": len(cells), "pending": len(todo), "failed": 0}
    model = make_model() if todo else None
    for start in range(0, len(todo), chunk):
        part = todo[start:start + chunk]
        requests = [build_request(cell, config) for cell in part]
        results = run_requests(model, requests, store, concurrency=config.concurrency,
                               progress=progress, desc="generate")
        rows = [steps_row(cell, result) for cell, result in zip(part, results, strict=True)]
        counts["failed"] += sum(row["status"] == "failed_call" for row in rows)
        store.put_rows(STEPS_TABLE, rows)
    return counts
