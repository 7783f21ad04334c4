"""Generation and step stages: cells -> chat requests -> responses -> steps (stage ``audit_steps``).

A cell whose steps row exists (and whose call did not fail) is done. Failed calls are stored as
``failed_call`` rows and retried by the next run (the engine never caches a failure).
"""

from __future__ import annotations

from typing import TypedDict

from memlens.audit.config import AuditConfig
from memlens.audit.design import Cell, sample_seed
from memlens.engine import run_requests
from memlens.models import ChatRequest, GenerationParams, ModelCallError
from memlens.steps import INSTRUCTIONS, split_steps
from memlens.stimuli import MemoryTemplate, inject
from memlens.stimuli.templates import load_template, stimulus_facts
from memlens.store.rowtypes import declare_row_type

STEPS_TABLE = "audit_steps"


class _StepsRequired(TypedDict):

    id: str
    """The cell id (``memlens.audit.design.Cell.id``): question | stimulus | sample."""
    question_id: str
    stimulus_id: str
    condition_class: str
    """``control``, ``noise``, ``persona`` or ``life_event``."""
    category: str
    sample: int
    question_text: str
    stimulus_text: str
    status: str
    """``ok`` (has steps), ``no_steps`` or ``failed_call`` (retried by the next run)."""
    reason: str
    """Why the call failed (``failed_call`` rows), else empty."""
    method: str
    """How the steps were found (``memlens.steps.split_steps``), ``none`` for a failed call."""
    steps: list[str]
    text_chars: int
    completion_tokens: int


class StepsRow(_StepsRequired, total=False):
    """One ``audit_steps`` row: a cell's response split into steps (or its failed call).
    (Optional keys in a ``total=False`` subclass: ``NotRequired`` is lost under postponed
    annotations on Python 3.11.)"""

    finish_reason: str | None
    """Rows of answered calls only."""


# checked on every read (memlens.store.rowtypes); keys added over releases are checked if present
declare_row_type(STEPS_TABLE, StepsRow, required=frozenset({"id", "status"}))


def question_prompt(question_text: str, config: AuditConfig) -> str:
    """The user-visible question, with the instruction of ``config.reasoning_format`` appended
    when asked for."""
    if not config.reasoning_instruction:
        return question_text

    return f"{question_text}\n\n{INSTRUCTIONS[config.reasoning_format]}"


def build_request(cell: Cell, config: AuditConfig):
    """The ``ChatRequest`` of one cell: injected memory, sampling params, derived seed."""

    template = MemoryTemplate(header=config.memory_header, history_prefix=config.history_prefix,
                              acknowledgement=config.acknowledgement)
    if config.memory_template:  # a product's own memory format (memlens.stimuli.templates)
        messages = load_template(config.memory_template).render(
            question_prompt(cell.question.text, config), stimulus_facts(cell.stimulus),
            config.system_prompt)
    else:
        messages = inject(question_prompt(cell.question.text, config), cell.stimulus,
                          mode=config.mode, system_prompt=config.system_prompt, template=template)
    params = GenerationParams(
        temperature=config.temperature, top_p=config.top_p, top_k=config.top_k,
        max_tokens=config.max_tokens,
        seed=sample_seed(config.seed, cell.question.id, cell.stimulus.id, cell.sample),
    )
    return ChatRequest(messages=tuple(messages), params=params, sample_index=cell.sample,
                       tag=f"audit/{cell.id}")


def pending_cells(cells: list[Cell], store,
                  steps: dict[str, StepsRow] | None = None) -> list[Cell]:
    """Cells without a stored steps row, or whose stored call failed (retried).

    ``steps`` (rows by id, e.g. ``memlens.audit.chunks.StageRows.steps``) is looked up instead
    of reading the whole table: a chunk's lookup costs its own cells only.
    """
    if steps is not None:
        return [cell for cell in cells
                if steps.get(cell.id, {}).get("status", "failed_call") == "failed_call"]
    done = {row["id"] for row in store.rows(STEPS_TABLE) if row.get("status") != "failed_call"}
    return [cell for cell in cells if cell.id not in done]


def steps_row(cell: Cell, result) -> StepsRow:
    """One ``audit_steps`` row from a response or a ``ModelCallError``."""

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
                   progress: bool = True, chunk: int = 256, state=None) -> dict[str, int]:
    """Generate every pending cell and store its steps; returns call / failure counts.

    ``make_model()`` returns the backend; it is called only when some cell is pending, so a
    finished audit loads no model.

    Requests go through ``memlens.engine.run_requests`` in chunks, so each response is cached
    the moment it arrives and each finished chunk's steps are stored before the next starts.
    With ``state`` (a ``memlens.audit.chunks.StageRows``) pending cells are looked up there and
    the new rows recorded in it, so no call reads the whole steps table.
    """

    todo = pending_cells(cells, store, None if state is None else state.steps)
    counts = {"cells": len(cells), "pending": len(todo), "failed": 0}
    model = make_model() if todo else None
    for start in range(0, len(todo), chunk):
        part = todo[start:start + chunk]
        requests = [build_request(cell, config) for cell in part]
        results = run_requests(model, requests, store, concurrency=config.concurrency,
                               progress=progress, desc="generate")
        rows = store_steps(part, results, store, state)
        counts["failed"] += sum(row["status"] == "failed_call" for row in rows)
    return counts


def store_steps(cells: list[Cell], outcomes: list, store, state=None) -> list[StepsRow]:
    """Split each cell's outcome into its steps row, store the rows (and record them in
    ``state``, a ``memlens.audit.chunks.StageRows``); returns the rows."""
    rows = [steps_row(cell, outcome) for cell, outcome in zip(cells, outcomes, strict=True)]
    if rows:
        store.put_rows(STEPS_TABLE, rows)
        if state is not None:
            state.add_steps(rows)
    return rows
